"""The public surface: every public module says what it exports (`__all__`),
every public function and Array method has a docstring and a signature
without internal parameters, and the package ships its type hints."""

import importlib
import inspect
import pathlib
import pydoc
import re
import types

import array_api_strict
import pytest

import arrayx as xp

PUBLIC_MODULES = ["arrayx", "arrayx.linalg", "arrayx.fft", "arrayx.autodiff", "arrayx.debug", "arrayx.dask",
                  "arrayx.transformers", "arrayx.pytree", "arrayx.neon", "arrayx.neon.backends",
                  "arrayx.neon.layers"]
# Modules whose functions are documented in the standard's wording, with their signatures.
DOCUMENTED_MODULES = ["arrayx", "arrayx.linalg", "arrayx.fft", "arrayx.autodiff", "arrayx.debug", "arrayx.dask",
                      "arrayx.pytree"]
# arrayx's own names beside the standard's in `from arrayx import *`.
ARRAYX_NAMES = {"Array", "float16", "eval", "graph", "jit", "set_default_device", "set_num_threads",
                "get_num_threads", "set_lazy_repr", "set_eager", "debug", "dask"}


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_star_import_gives_exactly_the_names_in_all(name):
    module = importlib.import_module(name)
    assert len(set(module.__all__)) == len(module.__all__), "a name listed twice"
    assert [n for n in module.__all__ if not hasattr(module, n)] == []
    namespace = {}
    exec(f"from {name} import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(module.__all__)


def test_arrayx_exports_the_standard_namespace_and_its_own_names():
    standard = {n for n in array_api_strict.__all__ if "strict" not in n.lower()}
    assert set(xp.__all__) == standard | ARRAYX_NAMES
    # every public function arrayx/__init__.py defines itself is exported
    own = {n for n, v in vars(xp).items() if inspect.isfunction(v) and v.__module__ == "arrayx" and n[0] != "_"}
    assert own <= set(xp.__all__)


def public_callables():
    for name in DOCUMENTED_MODULES:
        module = importlib.import_module(name)
        for attr in module.__all__:
            value = getattr(module, attr)
            if callable(value) and not isinstance(value, types.ModuleType):
                yield f"{name}.{attr}", value


def array_methods():
    for attr, value in vars(xp.Array).items():
        if attr in ("__init__", "__new__") or (attr.startswith("_") and not attr.endswith("__")):
            continue
        if callable(value) or isinstance(value, property):
            yield f"Array.{attr}", value.fget if isinstance(value, property) else value


def internal_parameters(fn):
    """Parameters a user should not see: underscored names, and defaults that
    are functions (a loop variable bound as a default argument)."""
    return [p.name for p in inspect.signature(fn).parameters.values()
            if p.name.startswith("_") or (p.default is not p.empty and callable(p.default))]


@pytest.mark.parametrize("name, fn", list(public_callables()) + list(array_methods()),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_public_callables_have_a_docstring_and_no_internal_parameters(name, fn):
    assert (inspect.getdoc(fn) or "").strip(), f"{name} has no docstring"
    assert internal_parameters(fn) == [], name


def standard_functions():
    """The standard's functions in arrayx (those array_api_strict exports), arrayx.linalg and
    arrayx.fft, and the methods of the inspection namespace."""
    names = [("arrayx", xp, [n for n in array_api_strict.__all__ if "strict" not in n.lower()]),
             ("arrayx.linalg", xp.linalg, xp.linalg.__all__), ("arrayx.fft", xp.fft, xp.fft.__all__)]
    for module_name, module, attrs in names:
        for attr in attrs:
            value = getattr(module, attr)
            if inspect.isfunction(value):
                yield f"{module_name}.{attr}", value
    info = xp.__array_namespace_info__()
    for attr in ("capabilities", "default_device", "default_dtypes", "devices", "dtypes"):
        yield f"Info.{attr}", getattr(info, attr)


def documented_parameters(doc):
    """The names listed in the docstring's Parameters section (which ends at a blank line)."""
    section = re.search(r"^Parameters\n-+\n(.*?)(?:\n\n|\Z)", doc, re.S | re.M)
    return [] if section is None else re.findall(r"^\*{0,2}(\w+) : ", section.group(1), re.M)


def test_standard_functions_are_all_found():
    found = dict(standard_functions())
    for module_name, module in (("arrayx", array_api_strict), ("arrayx.linalg", array_api_strict.linalg),
                                ("arrayx.fft", array_api_strict.fft)):
        functions = {f"{module_name}.{n}" for n in module.__all__
                     if inspect.isfunction(getattr(module, n)) and "strict" not in n.lower()}
        assert functions - set(found) == set()


@pytest.mark.parametrize("name, fn", list(standard_functions()), ids=lambda v: v if isinstance(v, str) else "")
def test_standard_functions_document_their_parameters_and_return_value(name, fn):
    doc = inspect.getdoc(fn)
    assert doc.splitlines()[0].strip(), f"{name}: no summary line"
    parameters = [p.name for p in inspect.signature(fn).parameters.values()]
    assert documented_parameters(doc) == parameters, f"{name}: Parameters section and signature differ"
    assert re.search(r"^Returns\n-------\nout : \S", doc, re.M), f"{name}: no Returns section"


def test_documented_parameters_reads_the_parameters_section():
    doc = "Summary.\n\nParameters\n----------\nx : Array\n    Input.\n*arrays : Array\n    More.\n\nReturns\n-------\n"
    assert documented_parameters(doc) == ["x", "arrays"]
    assert documented_parameters("Summary.\n\nReturns\n-------\nout : Array\n") == []


def test_help_of_an_operator_shows_the_standards_signature():
    assert str(inspect.signature(xp.Array.__add__)).startswith("(self, other:")
    assert list(inspect.signature(xp.Array.__add__).parameters) == ["self", "other"]
    assert list(inspect.signature(xp.Array.__neg__).parameters) == ["self"]
    text = pydoc.render_doc(xp.Array.__radd__, renderer=pydoc.plaintext)
    assert "fn=" not in text and "`add(other, self)`" in text and "Calculates the sum" in text


def test_the_package_ships_its_type_hints():
    package = pathlib.Path(xp.__file__).parent
    assert (package / "py.typed").is_file()
    assert inspect.signature(xp.Array.__add__).return_annotation is xp.Array
    assert inspect.signature(xp.set_lazy_repr).parameters["lazy"].annotation is bool


@pytest.mark.parametrize("name", ["eval", "graph", "jit", "set_default_device", "set_num_threads",
                                  "get_num_threads", "set_lazy_repr", "set_eager"])
def test_arrayx_own_functions_document_their_parameters(name):
    fn = getattr(xp, name)
    doc = inspect.getdoc(fn)
    assert documented_parameters(doc) == list(inspect.signature(fn).parameters), name
