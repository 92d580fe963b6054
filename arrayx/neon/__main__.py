"""`python -m arrayx.neon script.py [args]` or `python -m arrayx.neon -m module [args]`:
run a legacy neon script unmodified, with `import neon...` resolving to arrayx's
shim (see `arrayx.legacy`)."""

import sys

from arrayx.legacy import main

if __name__ == "__main__":
    sys.exit(main("neon", "arrayx.neon"))
