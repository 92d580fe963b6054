"""Running legacy scripts on arrayx's shims: `python -m arrayx.neon` and
`python -m arrayx.ngraph`.

A meta-path finder resolves a legacy package (`neon`, `ngraph`) and its
submodules to the shim (`arrayx.neon`, `arrayx.ngraph`) and theirs. The
aliased name and the shim's name are the same module object in
`sys.modules`, so `neon.NervanaObject.be` and `arrayx.neon.NervanaObject.be` are
one attribute, and `isinstance` checks agree whichever name a script imported.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import runpy
import sys


class _ExistingModuleLoader(importlib.abc.Loader):
    """Loads an alias by handing back the (already imported) shim module."""

    def __init__(self, module):
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        # The import system set __spec__ to the alias's spec: the module keeps its own.
        module.__spec__ = self.spec


class AliasFinder(importlib.abc.MetaPathFinder):
    """Finds `alias[.x.y]` as `target[.x.y]`; names the shim lacks are not found."""

    def __init__(self, alias, target):
        self.alias = alias
        self.target = target

    def find_spec(self, fullname, path=None, target=None):
        alias = self.alias
        if fullname != alias and not fullname.startswith(alias + "."):
            return None
        real = self.target + fullname[len(alias):]
        try:
            if importlib.util.find_spec(real) is None:
                return None
        except ModuleNotFoundError:
            return None
        module = importlib.import_module(real)
        spec = importlib.machinery.ModuleSpec(fullname, _ExistingModuleLoader(module),
                                              is_package=hasattr(module, "__path__"))
        return spec


def install(alias, target):
    """Make `import alias...` resolve to the shim `target` (idempotent); returns the finder."""
    for finder in sys.meta_path:
        if isinstance(finder, AliasFinder) and finder.alias == alias:
            return finder
    # A package imported before the alias existed would shadow the shim: drop it.
    for name in [n for n in sys.modules if n == alias or n.startswith(alias + ".")]:
        del sys.modules[name]
    finder = AliasFinder(alias, target)
    sys.meta_path.insert(0, finder)
    return finder


def main(alias, target, argv=None):
    """`python -m <target> script.py [args]` or `python -m <target> -m module [args]`:
    run a legacy script unmodified, `import alias...` resolving to the shim.
    The script sees `sys.argv` as if it had been run directly."""
    usage = (f"usage: python -m {target} script.py [args ...]\n"
             f"       python -m {target} -m module [args ...]")
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    install(alias, target)
    if argv[0] == "-m":
        if len(argv) < 2:
            print(usage, file=sys.stderr)
            return 2
        module = argv[1]
        sys.argv = [module] + argv[2:]
        # As `python -m module`: the current directory comes first on the path.
        sys.path[0] = os.getcwd()
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        script = argv[0]
        if not os.path.exists(script):
            print(f"python -m {target}: can't open file {script!r}: no such file", file=sys.stderr)
            return 2
        sys.argv = [script] + argv[1:]
        # As `python script.py`: the script's directory comes first on the path.
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        runpy.run_path(script, run_name="__main__")
    return 0
