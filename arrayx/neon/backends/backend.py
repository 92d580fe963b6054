"""neon's Backend, over arrayx.

Backend: the methods every neon backend has (seed 002). The arrayx namespace is
device-agnostic, so the base class implements them all over `self.device`; the
CPU, MKL and GPU classes choose the device and the Tensor class. Tensor and
OpTreeNode are in `tensor`, the layer kernels in `layer_kernels`.
"""

import logging
import time

import numpy as np

import arrayx as xp

from .. import layers
from . import _evaluate
from .layer_kernels import LayerKernels
# Block, OpCollection, OpTreeNode and Tensor are also neon's names in neon.backends.backend.
from .optree import OpCollection, OpTreeNode  # noqa: F401
from .tensor import (_DEFAULT_DTYPES, _DTYPES, Block, Tensor,  # noqa: F401
                     _default_device, _normalize_shape, _to_array, np_dtype)

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------------
# Backend

class LegacyGenerator(np.random.Generator):
    """A NumPy Generator that also answers the np.random.RandomState names neon
    code calls on `be.rng` (randint, random_sample, rand, randn); uniform,
    normal, permutation, shuffle and choice are the Generator's own."""

    def randint(self, low, high=None, size=None, dtype=int):
        """Integers in [low, high), or [0, low) when high is None (RandomState.randint)."""
        return self.integers(low, high, size=size, dtype=dtype)

    def random_sample(self, size=None):
        """Floats in [0, 1) (RandomState.random_sample)."""
        return self.random(size)

    def rand(self, *shape):
        """Floats in [0, 1) of the given dimensions (RandomState.rand)."""
        return self.random(shape or None)

    def randn(self, *shape):
        """Standard normal values of the given dimensions (RandomState.randn)."""
        return self.standard_normal(shape or None)


class Backend(LayerKernels):
    """The neon backend interface, implemented over arrayx.

    Element-wise functions, reductions and the like build op-trees: with
    `out=None` they return the op-tree, with `out=t` they execute it into `t`
    (and return `t`). Reductions keep their reduced axes. Allocation methods
    return tensors of `self.tensor_cls` on `self.device`.

    Random numbers: arrayx has no random primitive, so the backend draws them
    on the host from a NumPy Generator (`self.rng`, seeded with `rng_seed`) and
    uploads them with `xp.asarray`.

    Arguments:
        rng_seed (int, optional): seed of the random number generator.
        default_dtype (numpy dtype, optional): element type of new tensors (float16, float32 or float64).
        compat_mode (str, optional): 'caffe' or None.
        deterministic (bool, optional): deprecated; ignored with a warning.
    """

    backends = {}
    """Registered backend classes by name (the shim's modules register 'cpu', 'mkl', 'gpu')."""

    backend_name = None
    tensor_cls = Tensor
    device = None

    @staticmethod
    def backend_choices():
        """The names of the registered backends."""
        return sorted(Backend.backends.keys())

    @staticmethod
    def allocate_backend(name, **kargs):
        """An instance of the backend registered as `name`."""
        try:
            cls = Backend.backends[name]
        except KeyError:
            names = ", ".join("'%s'" % (n,) for n in Backend.backend_choices())
            raise ValueError("backend must be one of (%s)" % (names,)) from None
        return cls(**kargs)

    def __init__(self, rng_seed=None, default_dtype=np.float32, compat_mode=None, deterministic=None):
        try:
            d = np.dtype(default_dtype)
        except TypeError:
            raise ValueError(f"{type(self).__name__}: {default_dtype!r} is not a data type") from None
        if d not in _DEFAULT_DTYPES:
            raise ValueError(f"{type(self).__name__}: default data type must be float16, float32 or float64, "
                             f"got {d}")
        self.default_dtype = default_dtype
        if self.device is None:
            self.device = _default_device()
        self.rng_seed = rng_seed
        self.rng = self.gen_rng(rng_seed)
        self.bsz = None
        self._min_dims = 2
        if compat_mode is not None:
            if compat_mode == "caffe":
                self.set_caffe_compat()
            else:
                raise ValueError("%s mode not supported currently" % compat_mode)
        else:
            self.compat_mode = None
        if deterministic is not None:
            logger.warning("deterministic arg is deprecated in favor of specifying random seed")
        self.deterministic = self.rng_seed is not None

    def cleanup_backend(self):
        """Release any resources acquired by this backend (none: arrayx owns the buffers)."""

    # -- random numbers

    def gen_rng(self, seed=None):
        """Set up the host random number generator (a NumPy Generator seeded with
        `seed`, as `np.random.default_rng(seed)`, that also answers the
        RandomState names legacy code calls), remember its state for
        `rng_reset`, and return it."""
        self.rng = LegacyGenerator(np.random.PCG64(seed))
        self.init_rng_state = self.rng_get_state()
        return self.rng

    def rng_get_state(self):
        """The current state of the random number generator (a dict; a copy)."""
        import copy
        return copy.deepcopy(self.rng.bit_generator.state)

    def rng_set_state(self, state):
        """Restore a state returned by `rng_get_state`."""
        self.rng.bit_generator.state = state

    def rng_reset(self):
        """Reset the generator to its state when the backend was created (or gen_rng last ran)."""
        self.rng_set_state(self.init_rng_state)

    def _host_random(self, values, dtype):
        return xp.asarray(np.asarray(values, dtype=dtype), device=self.device)

    def make_binary_mask(self, out, keepthresh=0.5):
        """Fill `out` with a dropout mask: 1 with probability `keepthresh`, else 0."""
        mask = self.rng.uniform(size=out.shape) < keepthresh
        out._write(self._host_random(mask, out.dtype))
        out._force()
        return out

    def fill_normal(self, ary, mean=0, stdv=1):
        """Fill `ary` with normally distributed values (mean, standard deviation stdv)."""
        values = self.rng.standard_normal(size=ary.shape) * stdv + mean
        ary._write(self._host_random(values, np.float64))
        ary._force()
        return ary

    # -- compatibility and shapes

    def output_dim(self, X, S, padding, strides, pooling=False, dilation=1):
        """The output size along one dimension of a convolution or pooling of input
        size X, filter size S, padding (each side), strides and dilation."""
        return layers.output_dim(X, S, padding, strides, pooling, dilation, self.check_caffe_compat())

    def set_caffe_compat(self):
        """Match caffe's conv/pool output sizes and dropout."""
        self.compat_mode = "caffe"

    def check_caffe_compat(self):
        """Whether compat_mode is 'caffe'."""
        return self.compat_mode == "caffe"

    def iobuf(self, dim0, x=None, dtype=None, name=None, persist_values=True, shared=None, parallelism=None):
        """A zeroed input/output buffer of a layer: (dim0, batch size), where a tuple
        dim0 of two dimensions gives (dim0[0], dim0[1] * bsz) and a longer one
        (prod(dim0), bsz). Returns `x` when given; reuses `shared` memory when given."""
        if x is not None:
            return x
        if self.bsz is None:
            raise ValueError("iobuf: the backend has no batch size (pass batch_size to gen_backend or set be.bsz)")
        if isinstance(dim0, tuple):
            if len(dim0) == 2:
                bufshape = (dim0[0], dim0[1] * self.bsz)
            else:
                bufshape = (int(np.prod(dim0)), self.bsz)
        else:
            bufshape = (dim0, self.bsz)
        if shared is not None:
            out_tsr = shared if shared.shape == bufshape else shared.share(bufshape)
        else:
            out_tsr = self.empty(bufshape, dtype=dtype, name=name, persist_values=persist_values)
        out_tsr[:] = 0
        return out_tsr

    def shared_iobuf_size(self, shape, parallelism):
        """The number of elements of an iobuf of `shape` shared between layers."""
        num_dev = 1 if parallelism in ("Data", "Model") else getattr(self, "num_dev", 1)
        return num_dev * int(np.prod(shape))

    def distribute_data(self, tensor, layer_parallelism):
        """Multi-device backends distribute or gather here; single-device backends return None."""
        return None

    def revert_tensor(self, tensor):
        """Undo `distribute_data` (nothing to do on a single device)."""

    def convert_data(self, tensor, layer_mkl):
        """MKL layout conversion in neon; nothing to do here."""
        return None

    def clean_data(self, tensor, layer_mkl):
        """MKL buffer cleanup in neon; nothing to do here."""
        return None

    def allocate_new_deltas(self, delta, in_shape, parallelism):
        return delta

    def is_mkl(self):
        """False: no backend of the shim uses MKL's private data layouts."""
        return False

    def allocate_new_outputs(self, layer, share_output):
        layer.allocate(shared_outputs=share_output)

    # -- execution

    def execute(self, optree):
        """Execute an op-tree with 'assign' at its top: translate the value into one
        arrayx graph, write it into the target tensor and evaluate once.
        Returns the target tensor."""
        return _evaluate.execute(self, optree)

    def begin(self, block, identifier):
        """Signal the start of a block of repeated computation (no effect on results)."""

    def end(self, block, identifier):
        """Signal the end of a block of repeated computation (no effect on results)."""

    # -- timing marks (neon's benchmarks and callbacks time work between two marks)

    def init_mark(self):
        """A new timing mark, for `record_mark`."""
        return {"time": 0.0}

    def record_mark(self, marker):
        """Stamp `marker` with the current time."""
        marker["time"] = time.perf_counter()

    def synchronize_mark(self, marker):
        """Wait for the work recorded before `marker`: none is pending, since an
        op-tree assignment runs when it is made (lazy writes of scalars and host
        data run when the tensor is read, and are timed there)."""

    def get_time(self, start, end):
        """Milliseconds between the recorded marks `start` and `end`."""
        return (end["time"] - start["time"]) * 1000.0

    # -- allocation

    def _dtype(self, dtype, where):
        return np_dtype(self.default_dtype if dtype is None else dtype, where)

    def _new(self, array, npdt, name, persist_values):
        return self.tensor_cls._wrap(self, array, npdt, name, persist_values)

    def empty(self, shape, dtype=None, name=None, persist_values=True, parallel=False, distributed=False):
        """A new tensor of `shape` (its elements are zeros: arrayx has no uninitialized memory)."""
        return self.zeros(shape, dtype=dtype, name=name, persist_values=persist_values)

    def zeros(self, shape, dtype=None, name=None, persist_values=True, parallel=False, distributed=False):
        """A new tensor of `shape` filled with 0."""
        npdt = self._dtype(dtype, "zeros")
        shape = _normalize_shape(shape, "zeros")
        return self._new(xp.zeros(shape, dtype=_DTYPES[npdt], device=self.device), npdt, name, persist_values)

    def ones(self, shape, dtype=None, name=None, persist_values=True, parallel=False, distributed=False):
        """A new tensor of `shape` filled with 1."""
        npdt = self._dtype(dtype, "ones")
        shape = _normalize_shape(shape, "ones")
        return self._new(xp.ones(shape, dtype=_DTYPES[npdt], device=self.device), npdt, name, persist_values)

    def array(self, ary, dtype=None, name=None, persist_values=True, parallel=False, distributed=False):
        """A new tensor holding a copy of `ary` (NumPy array, nested lists, scalar),
        with at least two dimensions ((n,) becomes (n, 1))."""
        npdt = self._dtype(dtype, "array")
        array = _to_array(ary, npdt, self.device, "array")
        while array.ndim < self._min_dims:
            array = xp.reshape(array, array.shape + (1,))
        return self._new(array, npdt, name, persist_values)

    def empty_like(self, other_ary, dtype=None, name=None, persist_values=True):
        """A new tensor with the shape of `other_ary` (a Tensor, NumPy array or op-tree)."""
        return self.zeros(other_ary.shape, dtype=dtype, name=name, persist_values=persist_values)

    def zeros_like(self, other_ary, dtype=None, name=None, persist_values=True):
        """A new tensor of zeros with the shape of `other_ary`."""
        return self.zeros(other_ary.shape, dtype=dtype, name=name, persist_values=persist_values)

    def ones_like(self, other_ary, dtype=None, name=None, persist_values=True):
        """A new tensor of ones with the shape of `other_ary`."""
        return self.ones(other_ary.shape, dtype=dtype, name=name, persist_values=persist_values)

    # -- products

    def compound_dot(self, A, B, C, alpha=1.0, beta=0.0, relu=False, bsum=None):
        """C = alpha * A . B + beta * C (A or B may be transposed views).

        relu: applied to alpha * A . B before beta * C is added. bsum: if given,
        receives the row sums of C. Executes at once; returns C.
        """
        if not (A.dtype == B.dtype == C.dtype):
            raise TypeError(f"compound_dot: dtypes differ (A {A.dtype}, B {B.dtype}, C {C.dtype})")
        if not (len(A.shape) == len(B.shape) == len(C.shape) == 2 and A.shape[0] == C.shape[0]
                and B.shape[1] == C.shape[1] and A.shape[1] == B.shape[0]):
            raise ValueError(f"compound_dot: shapes do not match: A {A.shape}, B {B.shape}, C {C.shape}")
        product = xp.matmul(A._read(), B._read())
        _evaluate.commit(C, _dot_epilogue(product, alpha, relu, beta, C), (A, B, C))
        if bsum is not None:
            self.sum(C, axis=1, out=bsum)
        return C

    def batched_dot(self, A, B, C, alpha=1.0, beta=0.0, relu=False):
        """Batched products (one of A, B has a leading batch axis):

        fprop: A (K, C), B (X, C, N) -> C (X, K, N)
        bprop: A.T (C, K), B (X, K, N) -> C (X, C, N)
        update: A (X, K, N), B.T (X, N, C) -> C (K, C), summed over the batch.

        C = relu(alpha * product) + beta * C. Executes at once; returns C.
        """
        if not (A.dtype == B.dtype == C.dtype):
            raise TypeError(f"batched_dot: dtypes differ (A {A.dtype}, B {B.dtype}, C {C.dtype})")
        dima, dimb, dimc = len(A.shape) == 3, len(B.shape) == 3, len(C.shape) == 3
        if not (dima or dimb):
            raise ValueError("batched_dot: Tensor A or B must have 3 dims")
        ia, ib, ic = int(dima), int(dimb), int(dimc)
        if not (A.shape[ia] == C.shape[ic] and B.shape[1 + ib] == C.shape[1 + ic] and A.shape[1 + ia] == B.shape[ib]):
            raise ValueError(f"batched_dot: shapes do not match: A {A.shape}, B {B.shape}, C {C.shape}")
        if dima and dimb and A.shape[0] != B.shape[0]:
            raise ValueError(f"batched_dot: batch sizes differ: A {A.shape}, B {B.shape}")
        product = xp.matmul(A._read(), B._read())
        if dima and not dimc:
            product = xp.sum(product, axis=0)
        elif dimc and not (dima or dimb):
            raise ValueError("batched_dot: a 3-D C needs a 3-D operand")
        _evaluate.commit(C, _dot_epilogue(product, alpha, relu, beta, C), (A, B, C))
        return C

    def xnor_compound_dot(self, A, B, C, beta=0.0, bsum=None):
        """C = A . B (neon's CPU backend computes the XNOR GEMM as an ordinary product)."""
        self.compound_dot(A, B, C, bsum=bsum)
        return C

    def copy_transpose(self, a, out, axes=None, repeat=1):
        """out = a with its axes permuted (reversed when axes is None)."""
        array = a._read()
        axes = tuple(reversed(range(array.ndim))) if axes is None else tuple(axes)
        _evaluate.commit(out, xp.permute_dims(array, axes), (a, out))
        return out

    # -- element-wise (op-trees)

    def reciprocal(self, a, out=None):
        """1 / a"""
        return OpTreeNode.build("div", 1., a, out=out)

    def binarize(self, a, stochastic=True, out=None):
        """+1 / -1: deterministic: sign (a >= 0 gives +1); stochastic: +1 with
        probability clip((a + 1) / 2, 0, 1), drawn from the backend's generator."""
        return OpTreeNode.build("binarize", a, None, stochastic=stochastic, out=out)

    def shift(self, a, b, value=True, out=None):
        """a shifted by b: value=True multiplies by sign(b) * 2 ** rint(log2|b|)
        (b rounded to a power of two), value=False by 2 ** b."""
        return OpTreeNode.build("shift", a, b, value=value, out=out)

    def clip(self, a, a_min, a_max, out=None):
        """a clipped into [a_min, a_max]"""
        return self.minimum(self.maximum(a, a_min), a_max, out=out)

    # -- reductions (op-trees; reduced axes are kept with size 1)

    def sum(self, a, axis=None, out=None, keepdims=True):
        """Sum along `axis` (all axes when None)."""
        if axis is None:
            return OpTreeNode.build("sum", OpTreeNode.build("sum", a, None, axis=0), None, axis=1, out=out)
        return OpTreeNode.build("sum", a, None, axis=axis, out=out)

    def max(self, a, axis=None, out=None, keepdims=True):
        """Maximum along `axis` (all axes when None)."""
        if axis is None:
            return OpTreeNode.build("max", OpTreeNode.build("max", a, None, axis=0), None, axis=1, out=out)
        return OpTreeNode.build("max", a, None, axis=axis, out=out)

    def min(self, a, axis=None, out=None, keepdims=True):
        """Minimum along `axis` (all axes when None)."""
        if axis is None:
            return OpTreeNode.build("min", OpTreeNode.build("min", a, None, axis=0), None, axis=1, out=out)
        return OpTreeNode.build("min", a, None, axis=axis, out=out)

    def argmax(self, a, axis=1, out=None, keepdims=True):
        """Index of the first maximum along `axis` (of the flattened operand when None)."""
        return OpTreeNode.build("argmax", a, None, axis=axis, out=out)

    def argmin(self, a, axis=1, out=None, keepdims=True):
        """Index of the first minimum along `axis` (of the flattened operand when None)."""
        return OpTreeNode.build("argmin", a, None, axis=axis, out=out)

    def mean(self, a, axis=None, partial=None, out=None, keepdims=True):
        """Arithmetic mean along `axis` (all axes when None)."""
        shape = a.shape
        if axis is None:
            return self.multiply(self.sum(a), 1.0 / (shape[0] * shape[1]), out=out)
        return self.multiply(self.sum(a, axis=axis), 1.0 / shape[axis], out=out)

    def var(self, a, axis=None, partial=None, out=None, keepdims=True, binary=False):
        """Variance along `axis` (all axes when None); binary=True squares by `shift`."""
        if binary:
            def op(x):
                return self.shift(x, x)
        else:
            op = self.square
        if axis is None:
            return self.mean(op(a - self.mean(a)), out=out)
        return self.mean(op(a - self.mean(a, axis=axis)), axis=axis, out=out)

    def std(self, a, axis=None, partial=None, out=None, keepdims=True):
        """Standard deviation along `axis` (all axes when None)."""
        return self.sqrt(self.var(a, axis=axis, partial=partial), out=out)

    # -- selection

    def take(self, a, indices, axis, out=None):
        """The elements of `a` at `indices` along `axis` (a new tensor, or written to out)."""
        return a.take(indices, axis, out)

    def onehot(self, indices, axis, out=None):
        """One-hot op-tree of integer `indices` (int32 or uint32): with axis=0 the
        result has one column per index (out[indices[i], i] = 1), with axis=1
        one row per index (out[i, indices[i]] = 1). The result's other extent is
        the target's, so the op-tree takes its shape on assignment."""
        if axis not in (0, 1):
            raise ValueError("bad axis for onehot")
        if indices.dtype not in (np.dtype(np.int32), np.dtype(np.uint32)):
            raise TypeError("onehot indices should be int32 or uint32, got " + str(indices.dtype))
        return OpTreeNode.build("onehot", None, None, idx=indices, axis=axis, out=out)

    # -- fully connected layers

    def update_fc_bias(self, err, out):
        """out = the row sums of err (the bias gradient of a fully connected layer)."""
        self.sum(err, axis=1, out=out)

    def add_fc_bias(self, inputs, bias):
        """inputs += bias (broadcast along the batch)."""
        self.add(inputs, bias, out=inputs)

def _dot_epilogue(product, alpha, relu, beta, C):
    """neon's compounding of a product into C: relu(alpha * product) + beta * C."""
    if alpha != 1.0:
        product = product * float(alpha)
    if relu:
        product = xp.maximum(product, 0.0)
    if beta != 0:
        product = product + C._read() * float(beta)
    return product



# Backend methods that are one neon op each: name -> (op, docstring). Each
# returns the op-tree, or executes it into `out` when given.
BINARY_OPS = {
    "dot": ("dot", "Matrix product of two 2-D operands (op-tree)."),
    "add": ("add", "a + b"),
    "subtract": ("sub", "a - b"),
    "multiply": ("mul", "a * b"),
    "divide": ("div", "a / b"),
    "true_divide": ("div", "a / b (alias of divide)"),
    "power": ("pow", "a ** b"),
    "equal": ("eq", "a == b (1 or 0)"),
    "not_equal": ("ne", "a != b (1 or 0)"),
    "less": ("lt", "a < b (1 or 0)"),
    "less_equal": ("le", "a <= b (1 or 0)"),
    "greater": ("gt", "a > b (1 or 0)"),
    "greater_equal": ("ge", "a >= b (1 or 0)"),
    "maximum": ("maximum", "element-wise maximum"),
    "minimum": ("minimum", "element-wise minimum"),
}
UNARY_OPS = {
    "negative": ("neg", "-a"),
    "sgn": ("sgn", "sign of a (-1, 0, 1)"),
    "absolute": ("abs", "|a|"),
    "fabs": ("abs", "|a| (alias of absolute)"),
    "sqrt": ("sqrt", "square root of a"),
    "square": ("sqr", "a squared"),
    "exp": ("exp", "e ** a"),
    "exp2": ("exp2", "2 ** a"),
    "safelog": ("safelog", "log(max(a, exp(-50))): a natural logarithm safe from underflow"),
    "log": ("log", "natural logarithm of a"),
    "log2": ("log2", "base-2 logarithm of a"),
    "sig": ("sig", "logistic sigmoid 1 / (1 + exp(-a))"),
    "sig2": ("sig2", "base-2 sigmoid 1 / (1 + 2 ** -a)"),
    "tanh": ("tanh", "hyperbolic tangent of a"),
    "tanh2": ("tanh2", "base-2 hyperbolic tangent (2 ** 2a - 1) / (2 ** 2a + 1)"),
    "finite": ("finite", "1 where a is finite (not inf, not nan), else 0"),
    "rint": ("rint", "a rounded to the nearest integer (halves to even)"),
}


def _op_method(name, op, doc, binary):
    if binary:
        def method(self, a, b, out=None):
            return OpTreeNode.build(op, a, b, out=out)
    else:
        def method(self, a, out=None):
            return OpTreeNode.build(op, a, None, out=out)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = doc
    return method


for _name, (_op, _doc) in BINARY_OPS.items():
    setattr(Backend, _name, _op_method(_name, _op, _doc, True))
for _name, (_op, _doc) in UNARY_OPS.items():
    setattr(Backend, _name, _op_method(_name, _op, _doc, False))
