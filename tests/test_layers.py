"""The layering of docs/design.md, as import-linter contracts (pyproject.toml),
and no import circles inside arrayx."""

import pathlib
import subprocess
import sys

import grimp

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_import_linter_contracts_are_kept():
    # A fresh interpreter in the repository root: import-linter reads
    # pyproject.toml there and analyses this checkout's arrayx.
    result = subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
                               "sys.exit(lint_imports(no_cache=True, no_logo=True))"],
        cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_module_of_arrayx_imports_itself_through_others():
    # Circles through a package's own __init__ (a submodule importing
    # `arrayx`) are outside what acyclic_siblings looks at.
    graph = grimp.build_graph("arrayx")
    circles = {module: sorted(graph.find_upstream_modules(module) & graph.find_downstream_modules(module))
               for module in graph.modules}
    assert {m: c for m, c in circles.items() if c} == {}
