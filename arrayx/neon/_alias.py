"""`import neon...` as the shim: a meta-path finder that resolves `neon` and
`neon.<sub>` to `arrayx.neon` and `arrayx.neon.<sub>`.

The aliased name and the shim's name are the same module object in
`sys.modules`, so `neon.NervanaObject.be` and `arrayx.neon.NervanaObject.be` are
one attribute, and `isinstance` checks agree whichever name a script imported.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys

ALIAS = "neon"
TARGET = "arrayx.neon"


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


class NeonAliasFinder(importlib.abc.MetaPathFinder):
    """Finds `neon[.x.y]` as `arrayx.neon[.x.y]`; names the shim lacks are not found."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
            return None
        real = TARGET + fullname[len(ALIAS):]
        try:
            if importlib.util.find_spec(real) is None:
                return None
        except ModuleNotFoundError:
            return None
        module = importlib.import_module(real)
        spec = importlib.machinery.ModuleSpec(fullname, _ExistingModuleLoader(module),
                                              is_package=hasattr(module, "__path__"))
        return spec


def install():
    """Make `import neon...` resolve to the shim (idempotent); returns the finder."""
    for finder in sys.meta_path:
        if isinstance(finder, NeonAliasFinder):
            return finder
    # A neon imported before the alias existed would shadow the shim: drop it.
    for name in [n for n in sys.modules if n == ALIAS or n.startswith(ALIAS + ".")]:
        del sys.modules[name]
    finder = NeonAliasFinder()
    sys.meta_path.insert(0, finder)
    return finder
