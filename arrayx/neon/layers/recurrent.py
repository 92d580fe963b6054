"""The time unrolling of recurrent layers (neon's compound_rnn_unroll_*)
and the activations it applies."""

import numpy as np

import arrayx as xp

from .arguments import as_array


class Activation:
    """An activation over arrayx arrays, neon's Transform convention:
    ``f(x)`` forward, ``f.bprop(y)`` the derivative given the *output* y."""

    def __init__(self, name, fprop, bprop):
        self.name, self._fprop, self._bprop = name, fprop, bprop

    def __call__(self, x):
        return self._fprop(x)

    def bprop(self, y):
        return self._bprop(y)

    def __repr__(self):
        return "<activation %s>" % self.name


def _one(y):
    return xp.ones_like(y)


ACTIVATIONS = {
    "tanh": Activation("tanh", xp.tanh, lambda y: 1.0 - y * y),
    "logistic": Activation("logistic", lambda x: 1.0 / (1.0 + xp.exp(-x)), lambda y: y * (1.0 - y)),
    "rectlin": Activation("rectlin", lambda x: xp.maximum(x, 0.0),
                           lambda y: xp.astype(y > 0, y.dtype)),
    "identity": Activation("identity", lambda x: x, _one),
}


def _activation(activation, name):
    if isinstance(activation, str):
        try:
            return ACTIVATIONS[activation]
        except KeyError:
            raise ValueError("%s: unknown activation %r (known: %s)"
                             % (name, activation, ", ".join(sorted(ACTIVATIONS)))) from None
    if not callable(activation) or not callable(getattr(activation, "bprop", None)):
        raise TypeError("%s: activation must be callable and have a bprop method "
                        "(neon's Transform), or one of %s" % (name, sorted(ACTIVATIONS)))
    return activation


def _step_resolver(buffers, name, argname):
    """Maps an entry of a h_prev/delta_prev list to an index into `buffers`
    (the per-step list it aliases), or None when it is a buffer of its own.
    An int is an explicit index; an array aliases the step it *is* (identity),
    which must then be unique in `buffers`."""
    where = {}
    for i, b in enumerate(buffers):
        where.setdefault(id(b), []).append(i)

    def resolve(entry):
        if isinstance(entry, (int, np.integer)) and not isinstance(entry, bool):
            j = int(entry)
            if not -len(buffers) <= j < len(buffers):
                raise IndexError("%s: %s refers to step %d of %d" % (name, argname, j, len(buffers)))
            return j % len(buffers)
        hits = where.get(id(entry))
        if not hits:
            return None
        if len(hits) > 1:
            raise ValueError("%s: an entry of %s is the same object as steps %s; pass the step "
                             "index as an int to say which one it aliases" % (name, argname, hits))
        return hits[0]
    return resolve


def _used_steps(num_steps, num_used_steps, *lists):
    n = min(len(x) for x in lists)
    if num_used_steps is not None and num_used_steps < num_steps:
        n = min(n, num_used_steps)
    return n


def compound_rnn_unroll_fprop(W_recur, h_prev_s, h_ff_s, h_s, bias, nout, num_steps,
                              num_used_steps, activation, reverse=False):
    """The time unrolling of a recurrent layer's fprop, functional form.

    For each used step t (``num_used_steps`` of them, last to first when
    ``reverse``): ``h_s[t] = activation(W_recur @ h_prev_s[t] + h_ff_s[t] +
    bias)``; when ``h_ff_s[t] is h_s[t]`` the feed-forward input is already
    in h_s[t] (neon's ``beta=1`` accumulate).

    Lists hold (nout, N) arrays, bias is (nout, 1). neon passes views of one
    buffer, so ``h_prev_s[t]`` *is* ``h_s[t-1]`` (and ``h_prev_s[0]`` may be
    ``h_s[-1]``, the carried state): an entry of h_prev_s that is (``is``)
    an entry of h_s, or an int index into h_s, reads that step's value as
    the unrolling has left it (its new value once computed, else the value
    passed in). Any other entry is an independent initial state.

    ``activation`` is a Transform-like object (``act(x)``, ``act.bprop(y)``
    on arrayx arrays) or a name in ``ACTIVATIONS``. ``nout`` is unused
    (shapes come from the arrays). Returns the new list h_s (same length;
    steps not used keep their values)."""
    name = "compound_rnn_unroll_fprop"
    act = _activation(activation, name)
    W = as_array(W_recur, name, "W_recur")
    b = None if bias is None else as_array(bias, name, "bias")
    h = [as_array(x, name, "h_s") for x in h_s]
    resolve = _step_resolver(h_s, name, "h_prev_s")
    n = _used_steps(num_steps, num_used_steps, h_s, h_prev_s, h_ff_s)
    order = range(n - 1, -1, -1) if reverse else range(n)
    for t in order:
        j = resolve(h_prev_s[t])
        prev = h[j] if j is not None else as_array(h_prev_s[t], name, "h_prev_s")
        ff = h[t] if h_ff_s[t] is h_s[t] else as_array(h_ff_s[t], name, "h_ff_s")
        pre = xp.matmul(W, prev) + ff
        if b is not None:
            pre = pre + b
        h[t] = act(pre)
    return h


def compound_rnn_unroll_bprop(W_recur, delta_prev_s, delta_s, h_s, nout, num_steps,
                              num_used_steps, activation, reverse=True):
    """The time unrolling of a recurrent layer's bprop, functional form.

    For each used step t (last to first when ``reverse``, the default):
    ``delta_s[t] = activation.bprop(h_s[t]) * delta_s[t]``, then
    ``delta_prev_s[t] += W_recur @ delta_s[t]``. neon's callers pass the
    transposed recurrent weights as W_recur.

    Aliasing as in compound_rnn_unroll_fprop: an entry of delta_prev_s that
    is (``is``) an entry of delta_s, or an int index into it, is that step's
    buffer; any other entry is a buffer of its own (the same object in two
    places is one buffer). Returns ``(delta_s, delta_prev_s)``: the new
    values of every entry of both lists, consistent with the aliasing."""
    name = "compound_rnn_unroll_bprop"
    act = _activation(activation, name)
    W = as_array(W_recur, name, "W_recur")
    d = [as_array(x, name, "delta_s") for x in delta_s]
    extra = {}                                   # id(entry) -> value of a separate buffer
    resolve = _step_resolver(delta_s, name, "delta_prev_s")
    targets = [resolve(e) for e in delta_prev_s]
    n = _used_steps(num_steps, num_used_steps, h_s, delta_s, delta_prev_s)
    order = range(n - 1, -1, -1) if reverse else range(n)
    for t in order:
        d[t] = act.bprop(as_array(h_s[t], name, "h_s")) * d[t]
        back = xp.matmul(W, d[t])
        j = targets[t]
        if j is not None:
            d[j] = d[j] + back
        else:
            key = id(delta_prev_s[t])
            current = extra.get(key)
            if current is None:
                current = as_array(delta_prev_s[t], name, "delta_prev_s")
            extra[key] = current + back
    prev = []
    for e, j in zip(delta_prev_s, targets):
        if j is not None:
            prev.append(d[j])
        else:
            value = extra.get(id(e))
            prev.append(value if value is not None else as_array(e, name, "delta_prev_s"))
    return d, prev
