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


def transformer_choices():
    """The names of the transformers available here: 'cpu', and 'gpu' when
    arrayx has a CUDA device."""
    return _t.transformer_choices()


def make_transformer_factory(name):
    return _t.make_transformer_factory(name, transformer_class=Transformer)


_factory = make_transformer_factory("cpu")


def set_transformer_factory(factory):
    global _factory
    if not isinstance(factory, _t.TransformerFactory) or factory.transformer_class is not Transformer:
        raise TypeError("set_transformer_factory: expected a factory from make_transformer_factory")
    _factory = factory


def make_transformer():
    """A transformer from the current factory (cpu unless set)."""
    return _factory()
