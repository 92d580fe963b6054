"""`import ngraph.transformers as ngt`: arrayx.transformers whose computations
return NumPy values, as ngraph's did."""

import numpy as np

from arrayx import transformers as _t


class _NumpyComputation:
    def __init__(self, computation):
        self.computation = computation

    def __call__(self, *args):
        out = self.computation(*args)
        if isinstance(out, tuple):
            return tuple(np.array(o) for o in out)
        return np.array(out)


class Transformer(_t.Transformer):
    """A transformer whose computations return NumPy arrays."""

    def computation(self, results, *inputs):
        return _NumpyComputation(super().computation(results, *inputs))


_KINDS = {"cpu": Transformer}
_factory = None


def transformer_choices():
    """The names of the transformers available here (the GPU one once arrayx has it)."""
    return [name for name in _t.transformer_choices() if name in _KINDS]


def make_transformer_factory(name):
    if name not in transformer_choices():
        raise ValueError(f"make_transformer_factory: no transformer {name!r} here; "
                         f"available: {transformer_choices()}")
    return _KINDS[name]


def set_transformer_factory(factory):
    global _factory
    if factory not in _KINDS.values():
        raise TypeError("set_transformer_factory: expected a factory from make_transformer_factory")
    _factory = factory


def make_transformer():
    """A transformer from the current factory (cpu unless set)."""
    return (_factory or Transformer)()
