"""The installed package has every file arrayx reads at run time: a C
header or source the package compiles is package data, declared in
pyproject.toml, or `pip install .` ships a package that fails at import
outside the repository (the tests, run from the repository root, would not
notice)."""

import fnmatch
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "arrayx"


def declared_package_data():
    """{package name: [glob, ...]} from [tool.setuptools.package-data]."""
    text = (ROOT / "pyproject.toml").read_text()
    section = re.search(r"^\[tool\.setuptools\.package-data\]\n(.*?)(?=^\[)", text, re.S | re.M).group(1)
    declared = {}
    for package, globs in re.findall(r'^"([\w.]+)"\s*=\s*\[(.*?)\]', section, re.M):
        declared[package] = re.findall(r'"([^"]+)"', globs)
    return declared


def test_every_non_python_file_of_the_package_is_declared_package_data():
    declared = declared_package_data()
    missing = []
    for path in PACKAGE.rglob("*"):
        if not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
            continue
        package = ".".join(path.parent.relative_to(ROOT).parts)
        if not any(fnmatch.fnmatch(path.name, glob) for glob in declared.get(package, ())):
            missing.append(str(path.relative_to(ROOT)))
    assert not missing, f"not in [tool.setuptools.package-data]: {missing}"
