"""neon's `Autodiff` over arrayx: gradients of an op-tree w.r.t. its tensors.

    from arrayx.neon.backends import gen_backend, Autodiff
    be = gen_backend('cpu')
    x0 = be.array(np.ones((3, 3)), name='x0')
    x1 = be.array(np.ones((3, 3)) * 2., name='x1')
    ad = Autodiff(op_tree=x0 * x0 + x0 * x1, be=be, next_error=None)
    ad.get_grad_asnumpyarray([x0, x1])        # [2 * x0 + x1, x0]

neon built gradient op-trees by hand, op by op. Here the op-tree is translated
to ONE arrayx graph (the translation `_evaluate` uses to execute op-trees),
inside `retain_history()`, and `arrayx.autodiff.gradients` differentiates it.

Every op-tree of any rank works, with every differentiable op the backends
evaluate. Tensors are differentiated through their storage: each base buffer
read by the op-tree gets one identity node, the tensors are read as their view
chains over it, so views of one base share one gradient (the base's) and the
gradient w.r.t. a view is that view of the base's gradient, as in neon. A
tensor the op-tree does not depend on gets zeros.

Gradients are computed from the tensors' values at the time of each call, so a
memoized Autodiff (same op-tree key, backend and next_error) stays correct
after the tensors are written. `next_error=None` is ones of the op-tree's shape
(neon's default); a Tensor (or op-tree, or number) is the cotangent.
"""

import collections
import numbers

import numpy as np

import arrayx as xp
from arrayx.autodiff import gradients, identity, retain_history

from . import _evaluate
from . import _storage as st
from .optree import OpTreeNode
from .tensor import Tensor

__all__ = ["Autodiff"]

_CACHE_SIZE = 256


def _token(x):
    """A hashable token for one op-tree element: tensors (and other objects) by
    identity, op dicts by their operation and arguments, numbers by value."""
    if isinstance(x, dict):
        return ("op", tuple(sorted((k, _token(v)) for k, v in x.items() if k != "shape")))
    if isinstance(x, (bool, numbers.Number, str, type(None))):
        return (type(x).__name__, x)
    if isinstance(x, tuple) and not isinstance(x, OpTreeNode):
        return tuple(_token(v) for v in x)
    return ("id", id(x))


def _tree_key(op_tree):
    """The op-tree's key (neon's `OpTreeNode.key`: its post-order stack), with
    tensors compared by identity (Tensor `==` builds an op-tree, it cannot
    compare keys) and every op argument included."""
    if isinstance(op_tree, OpTreeNode):
        return tuple(_token(s) for s in op_tree.traverse(list()))
    return (_token(op_tree),)


class _GradContext(_evaluate._Context):
    """The translation context of Autodiff: tensors are read through their view
    chains from one differentiable node per storage."""

    def __init__(self, backend, shape):
        super().__init__(backend, shape)
        self.bases = {}          # id(storage) -> the identity node over the storage's array

    def base(self, storage):
        node = self.bases.get(id(storage))
        if node is None:
            node = self.bases[id(storage)] = identity(storage.array)
            self.storages[id(storage)] = storage
        return node

    def tensor(self, t):
        value = self.reads.get(id(t))
        if value is None:
            value = self.base(t._storage)
            for op in t._chain:
                value = st.apply(value, op)
            self.reads[id(t)] = value
        return value


def _translate(ctx, root):
    """The lazy arrayx value of `root` (op-tree, tensor or number) in `ctx`."""
    result = _evaluate.tree_value(ctx, root)
    if not isinstance(result, xp.Array):
        result = ctx.array(result)
    return result


def _shape_of(x):
    if isinstance(x, (OpTreeNode, Tensor)):
        return tuple(x.shape)
    return (1, 1)


class Autodiff:
    """Automatic differentiation of an op-tree (neon's `Autodiff`).

    Arguments:
        op_tree (OpTreeNode or Tensor): the function to differentiate.
        be (Backend): the backend the tensors belong to.
        next_error (Tensor, optional): the cotangent (the next layer's back-prop
            error); None means ones of the op-tree's shape.

    Instances are memoized per op-tree key, backend and next_error: calling
    Autodiff again on the same op-tree returns the same object, until its
    `cleanup()`.
    """

    _cache = collections.OrderedDict()

    def __new__(cls, op_tree, be, next_error=None):
        if not isinstance(op_tree, (OpTreeNode, Tensor)):
            raise TypeError(f"Autodiff: op_tree must be an OpTreeNode or a Tensor, got {type(op_tree).__name__}")
        if next_error is not None and not isinstance(next_error, (OpTreeNode, Tensor, numbers.Real)):
            raise TypeError(f"Autodiff: next_error must be a Tensor, an op-tree, a number or None, "
                            f"got {type(next_error).__name__}")
        # The cached object holds the op-tree, the backend and next_error, so the
        # identities in the key cannot be reused while the entry lives.
        key = (cls, _tree_key(op_tree), id(be), None if next_error is None else _tree_key(next_error))
        cache = cls._cache
        self = cache.get(key)
        if self is not None:
            cache.move_to_end(key)
            return self
        self = super().__new__(cls)
        self._key = key
        self.op_tree = op_tree
        self.be = be
        self.next_error = next_error
        self.shape = _shape_of(op_tree)
        cache[key] = self
        while len(cache) > _CACHE_SIZE:
            cache.popitem(last=False)
        return self

    def __repr__(self):
        return f"Autodiff(op_tree={self.op_tree!r}, next_error={self.next_error!r})"

    def cleanup(self):
        """Release the op-tree, backend and next_error, and forget this object:
        Autodiff on the same op-tree then builds a new one. neon's tests call
        it after each case; the memo would otherwise keep the tensors alive."""
        if self._cache.get(self._key) is self:
            del self._cache[self._key]
        self.op_tree = self.be = self.next_error = None

    def _backend(self):
        """The backend, or a ValueError once `cleanup` has released it."""
        if self.be is None:
            raise ValueError("Autodiff: this object was cleaned up; create a new Autodiff")
        return self.be

    # -- the gradients, as lazy arrayx arrays

    def _grad_arrays(self, tensors):
        """(gradient arrays, one per tensor, and the storages the graph read)."""
        backend = self._backend()
        tensors = list(tensors)
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"Autodiff: tensors[{i}] must be a Tensor, got {type(t).__name__}")
        ctx = _GradContext(backend, self.shape)
        with retain_history():
            # The storages differentiated by get their nodes first, so the op-tree reads the same ones.
            bases = []
            for i, t in enumerate(tensors):
                if t.dtype.kind != "f":
                    raise TypeError(f"Autodiff: tensors[{i}] has dtype {t.dtype}; differentiation needs "
                                    f"float16, float32 or float64")
                bases.append(ctx.base(t._storage))
            output = _translate(ctx, self.op_tree)
            output = ctx.floating(output)
            if output.shape != self.shape:
                output = xp.broadcast_to(output, self.shape)
            cotangent = self._cotangent(ctx, output)
            unique, where = [], {}
            for b in bases:
                if id(b) not in where:
                    where[id(b)] = len(unique)
                    unique.append(b)
            found = gradients(output, unique, cotangent) if unique else []
            grads = []
            for t, b in zip(tensors, bases):
                g = found[where[id(b)]]
                for op in t._chain:
                    g = st.apply(g, op)
                grads.append(g)
        return grads, list(ctx.storages.values())

    def _cotangent(self, ctx, output):
        if self.next_error is None:
            return None
        ne = self.next_error
        if isinstance(ne, numbers.Real) and not isinstance(ne, (OpTreeNode, Tensor)):
            return xp.full(output.shape, float(ne), dtype=output.dtype, device=ctx.device)
        # next_error is not differentiated: read it from its own (non-differentiable) storage.
        if isinstance(ne, Tensor):
            ct = ne._read()
            ctx.storages[id(ne._storage)] = ne._storage
        else:
            ct = _evaluate.translate(self.be, ne, _shape_of(ne))[0]
        if ct.dtype != output.dtype:
            ct = xp.astype(ct, output.dtype)
        if ct.shape != output.shape:
            try:
                ct = xp.broadcast_to(ct, output.shape)
            except (ValueError, TypeError):
                raise ValueError(f"Autodiff: next_error of shape {tuple(ct.shape)} does not fit the op-tree's "
                                 f"shape {tuple(output.shape)}") from None
        return ct

    # -- neon's interface

    def back_prop_grad(self, tensors, gradients):
        """Write the gradient w.r.t. each of `tensors` into the matching tensor of
        `gradients` (pre-allocated buffers, cast to their dtype); one plan."""
        tensors, gradients = list(tensors), list(gradients)
        if len(tensors) != len(gradients):
            raise ValueError(f"back_prop_grad: {len(tensors)} tensors but {len(gradients)} gradient buffers")
        for i, g in enumerate(gradients):
            if not isinstance(g, Tensor):
                raise TypeError(f"back_prop_grad: gradients[{i}] must be a Tensor, got {type(g).__name__}")
            if tuple(g.shape) != tuple(tensors[i].shape):
                raise ValueError(f"back_prop_grad: gradients[{i}] has shape {tuple(g.shape)}, the tensor "
                                 f"{tuple(tensors[i].shape)}")
        grads, storages = self._grad_arrays(tensors)
        for buf, g in zip(gradients, grads):
            buf._write(g)
        targets = {id(b._storage): b._storage for b in gradients}
        arrays = [s.array for s in targets.values()]
        arrays += [s.array for k, s in ((id(s), s) for s in storages) if k not in targets]
        xp.eval(*arrays)

    def get_grad_op_tree(self, tensors):
        """The gradients w.r.t. `tensors`, as tensors (op-tree leaves) holding the
        lazy gradient graphs: assign them into buffers or use them in op-trees."""
        grads, _ = self._grad_arrays(tensors)
        return [self.be._new(g, np.dtype(t.dtype), _grad_name(t), True) for t, g in zip(tensors, grads)]

    def get_grad_tensor(self, tensors):
        """The gradients w.r.t. `tensors`, as new tensors (evaluated; allocates)."""
        tensors = list(tensors)
        out = [self._backend().empty(t.shape, dtype=t.dtype, name=_grad_name(t)) for t in tensors]
        self.back_prop_grad(tensors, out)
        return out

    def get_grad_asnumpyarray(self, tensors):
        """The gradients w.r.t. `tensors`, as NumPy arrays (allocates host memory)."""
        return [g.get() for g in self.get_grad_tensor(tensors)]


def _grad_name(t):
    return (t.name + "_grad") if t.name else None
