"""`python -m arrayx.ngraph script.py [args]`: run an ngraph script with
`import ngraph` resolving to arrayx's shim (see `arrayx.legacy`)."""

import sys

from arrayx.legacy import main

if __name__ == "__main__":
    sys.exit(main("ngraph", "arrayx.ngraph"))
