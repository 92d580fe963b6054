"""ngraph-style transformers and computations over arrayx (seed 004).

    import arrayx as xp
    from arrayx import transformers as ngt

    a = ngt.constant(4.0)
    b, c = ngt.placeholder(()), ngt.placeholder(())
    e = a * b + c
    t = ngt.make_transformer()
    f = t.computation(e, b, c)
    f(2, 7)                       # 15.0, compiled once when f was made

Placeholders, variables (persistent state per transformer) and assignments
are in `graph.py`; transformers and their compiled computations in
`transformer.py`.
"""

from .. import executors
from ..device import CPU
from .graph import assign, constant, placeholder, variable
from .transformer import Computation, Transformer


def _gpu_device():
    """The first CUDA device arrayx has, or None."""
    return next((d for d in executors.devices() if d.name.startswith("cuda:")), None)


def transformer_choices():
    """The names of the transformers available here: 'cpu', and 'gpu' when
    arrayx has a CUDA device (PyCUDA and an NVIDIA GPU)."""
    return ["cpu"] + (["gpu"] if _gpu_device() is not None else [])


class TransformerFactory:
    """Makes transformers of one kind ('cpu' or 'gpu') as `transformer_class`."""

    def __init__(self, name, transformer_class=Transformer):
        self.name = name
        self.transformer_class = transformer_class

    def __call__(self):
        device = CPU if self.name == "cpu" else _gpu_device()
        if device is None:
            raise ValueError(f"make_transformer: no {self.name!r} transformer here any more; "
                             f"available: {transformer_choices()}")
        return self.transformer_class(device)

    def __repr__(self):
        return f"<transformer factory {self.name!r}>"


def make_transformer_factory(name, *, transformer_class=Transformer):
    """A factory for transformers of kind `name` (one of transformer_choices()),
    instances of `transformer_class` (a Transformer subclass)."""
    if name not in transformer_choices():
        raise ValueError(f"make_transformer_factory: no transformer {name!r} here; "
                         f"available: {transformer_choices()}")
    return TransformerFactory(name, transformer_class)


_factory = TransformerFactory("cpu")


def set_transformer_factory(factory):
    """Make `factory` the one make_transformer uses."""
    global _factory
    if not isinstance(factory, TransformerFactory):
        raise TypeError(f"set_transformer_factory: expected a factory from make_transformer_factory, "
                        f"got {type(factory).__name__}")
    _factory = factory


def make_transformer():
    """A new transformer from the current factory (cpu unless set)."""
    return _factory()


__all__ = ["Computation", "Transformer", "assign", "constant", "make_transformer", "make_transformer_factory",
           "placeholder", "set_transformer_factory", "transformer_choices", "TransformerFactory", "variable"]
