"""The neon compatibility layer of arrayx: Nervana neon 2.x's backend API
(`gen_backend`, the backends and their Tensor, op-trees) over arrayx's lazy
graphs.

Legacy scripts run unmodified with `python -m arrayx.neon script.py`, which
makes `import neon...` resolve to the modules of this package. Code that knows
about arrayx imports `arrayx.neon` and `arrayx.neon.backends` directly.
"""

import logging

logger = logging.getLogger(__name__)

# neon adds a DISPLAY level between ERROR and CRITICAL for user-facing messages.
DISPLAY_LEVEL_NUM = 41
logging.addLevelName(DISPLAY_LEVEL_NUM, "DISPLAY")


def _display(message, *args, **kwargs):
    if logger.isEnabledFor(DISPLAY_LEVEL_NUM):
        logger._log(DISPLAY_LEVEL_NUM, message, args, **kwargs)


logger.display = _display


class NervanaObject:
    """Base (global) object of neon: `NervanaObject.be` is the backend in use.

    `gen_backend` sets `be`; every neon object reaches the backend through it.
    """

    be = None
    __counter = 0

    def __init__(self, name=None):
        if name is None:
            name = "{}_{}".format(self.classnm, type(self).__counter)
        self.name = name
        self._desc = None
        type(self).__counter += 1

    @property
    def classnm(self):
        """The class name."""
        return self.__class__.__name__

    @property
    def modulenm(self):
        """The full module path of the class."""
        return self.__class__.__module__ + "." + self.__class__.__name__


__all__ = ["NervanaObject", "logger", "DISPLAY_LEVEL_NUM"]
