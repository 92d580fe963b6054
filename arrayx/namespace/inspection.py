"""The inspection API: `__array_namespace_info__()`."""

from .. import dtypes as dt, executors
from .build import check_device


class Info:
    """What this namespace supports, as the standard's inspection API reports it."""

    __module__ = "arrayx"

    def capabilities(self):
        """Optional features of the namespace."""
        return {
            "boolean indexing": True,
            "data-dependent shapes": True,
            "max dimensions": 64,
        }

    def default_device(self):
        """The device arrays are created on when none is given."""
        return executors.default_device()

    def default_dtypes(self, *, device=None):
        """Default dtypes for each kind, on `device`."""
        check_device(device, "default_dtypes")
        return {
            "real floating": dt.DEFAULT_FLOAT,
            "complex floating": dt.DEFAULT_COMPLEX,
            "integral": dt.DEFAULT_INT,
            "indexing": dt.DEFAULT_INDEX,
        }

    def dtypes(self, *, device=None, kind=None):
        """The standard's dtypes supported on `device`, optionally only those of `kind`.

        The extension float16 is left out: the standard allows only its own dtypes here.
        """
        check_device(device, "dtypes")
        from .data_types import is_kind
        return {str(d): d for d in dt.STANDARD if kind is None or is_kind(d, kind, "dtypes")}

    def devices(self):
        """The devices arrays can be placed on."""
        return tuple(executors.devices())


def __array_namespace_info__():
    """Returns a namespace with Array API namespace inspection utilities."""
    return Info()
