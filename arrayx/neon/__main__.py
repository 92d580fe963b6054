"""`python -m arrayx.neon script.py [args]` or `python -m arrayx.neon -m module [args]`:
run a legacy neon script unmodified, with `import neon...` resolving to arrayx's
shim (see `_alias`). The script sees `sys.argv` as if it had been run directly.
"""

import os
import runpy
import sys

from arrayx.neon._alias import install

USAGE = "usage: python -m arrayx.neon script.py [args ...]\n       python -m arrayx.neon -m module [args ...]"


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        module = argv[1]
        sys.argv = [module] + argv[2:]
        # As `python -m module`: the current directory comes first on the path.
        sys.path[0] = os.getcwd()
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        script = argv[0]
        if not os.path.exists(script):
            print(f"python -m arrayx.neon: can't open file {script!r}: no such file", file=sys.stderr)
            return 2
        sys.argv = [script] + argv[1:]
        # As `python script.py`: the script's directory comes first on the path.
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
