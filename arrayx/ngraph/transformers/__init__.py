"""`import ngraph.transformers as ngt`: transformers whose computations take
ngraph ops and return NumPy values, as ngraph's did.

    with closing(ngt.make_transformer()) as t:
        update = t.computation([loss, W, ng.assign(W, W - grad)], X, Y)
        loss_value, w_value, _ = update(xs, ys)

A computation returns one value per result: a NumPy array (a copy) for a
tensor op, None for an assignment or a `doall`, whose updates it carries out
(after the values are computed: a result that reads a variable gets the
value from before the call). Arguments are converted to their placeholder's
element type, as ngraph's copy into device memory did.
"""

import numpy as np

from ... import transformers as _t
from ..ops import Op, TensorOp


class Computation:
    """A compiled evaluation of ngraph ops from placeholders (see the module)."""

    def __init__(self, transformer, results, parameters):
        self.single = isinstance(results, Op)
        results = [results] if self.single else list(results)
        for i, r in enumerate(results):
            if not isinstance(r, Op):
                raise TypeError(f"computation: result {i} must be an ngraph op, got {type(r).__name__}")
        for i, p in enumerate(parameters):
            if not isinstance(p, TensorOp) or p.kind != "placeholder":
                raise ValueError(f"computation: parameter {i} must be a placeholder, got {p!r}")
        self.parameters = list(parameters)
        # Tensor results first, then the assignments of every result.
        values = [r.array for r in results if isinstance(r, TensorOp)]
        self.positions = []
        count = 0
        for r in results:
            self.positions.append(count if isinstance(r, TensorOp) else None)
            count += isinstance(r, TensorOp)
        assigns = list({id(a): a for r in results for a in r.assignments()}.values())
        targets = [a.variable for a in assigns]
        twice = sorted({t.name for t in targets if sum(t is u for u in targets) > 1})
        if twice:
            raise ValueError(f"computation: the variables {twice} are assigned more than once")
        self.computation = _t.Transformer.computation(transformer, values + [a.update for a in assigns],
                                                      *[p.array for p in self.parameters])

    def __call__(self, *args):
        if len(args) != len(self.parameters):
            raise TypeError(f"computation: takes {len(self.parameters)} argument(s) (one per placeholder), "
                            f"got {len(args)}")
        values = []
        for i, (p, a) in enumerate(zip(self.parameters, args)):
            try:
                value = np.asarray(a, dtype=p.dtype)
            except (TypeError, ValueError):
                raise TypeError(f"computation: argument {i} for placeholder {p.name} must be a number or an "
                                f"array convertible to {p.dtype}, got {type(a).__name__}") from None
            if value.shape != p.axes.lengths:
                raise ValueError(f"computation: argument {i} for placeholder {p.name} has shape {value.shape}, "
                                 f"expected {p.axes.lengths} (axes {p.axes})")
            values.append(value)
        outputs = self.computation(*values)
        # Copies: a later call may update a variable's buffer in place.
        results = tuple(None if k is None else np.array(outputs[k]) for k in self.positions)
        return results[0] if self.single else results


class Transformer(_t.Transformer):
    """A transformer whose computations take ngraph ops and return NumPy values."""

    def computation(self, results, *parameters):
        """A callable computing `results` (an op, or a list of ops: then a
        call returns a tuple) from `parameters`, placeholders passed
        positionally."""
        self._check_open("computation")
        return Computation(self, results, parameters)


def transformer_choices():
    """The names of the transformers available here: 'cpu', and 'gpu' when
    arrayx has a CUDA device."""
    return _t.transformer_choices()


def make_transformer_factory(name):
    """A factory for transformers of kind `name` (one of transformer_choices())."""
    return _t.make_transformer_factory(name, transformer_class=Transformer)


_factory = make_transformer_factory("cpu")


def set_transformer_factory(factory):
    """Make `factory` (from make_transformer_factory) the one make_transformer uses."""
    global _factory
    if not isinstance(factory, _t.TransformerFactory) or factory.transformer_class is not Transformer:
        raise TypeError("set_transformer_factory: expected a factory from make_transformer_factory")
    _factory = factory


def make_transformer():
    """A transformer from the current factory (cpu unless set)."""
    return _factory()
