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

from .graph import assign, constant, placeholder, variable
from .transformer import Computation, Transformer


class _Factory:
    """Makes transformers of one kind."""

    def __init__(self, name, cls):
        self.name = name
        self.cls = cls

    def __call__(self):
        return self.cls()

    def __repr__(self):
        return f"<transformer factory {self.name!r}>"


# The transformers this installation can make: the GPU one joins when arrayx
# has a GPU executor and a device.
_KINDS = {"cpu": Transformer}
_factory = _Factory("cpu", Transformer)


def transformer_choices():
    """The names of the transformers available here."""
    return list(_KINDS)


def make_transformer_factory(name):
    """A factory for transformers of kind `name` (one of transformer_choices())."""
    if name not in _KINDS:
        raise ValueError(f"make_transformer_factory: no transformer {name!r} here; "
                         f"available: {transformer_choices()}")
    return _Factory(name, _KINDS[name])


def set_transformer_factory(factory):
    """Make `factory` the one make_transformer uses."""
    global _factory
    if not isinstance(factory, _Factory):
        raise TypeError(f"set_transformer_factory: expected a factory from make_transformer_factory, "
                        f"got {type(factory).__name__}")
    _factory = factory


def make_transformer():
    """A new transformer from the current factory (cpu unless set)."""
    return _factory()


__all__ = ["Computation", "Transformer", "assign", "constant", "make_transformer", "make_transformer_factory",
           "placeholder", "set_transformer_factory", "transformer_choices", "variable"]
