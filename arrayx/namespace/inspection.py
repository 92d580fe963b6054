"""The inspection API: `__array_namespace_info__()`."""

from .. import dtypes as dt, executors
from .build import check_device
from .hints import DType, Device, DeviceLike

# dtypes(kind=...) by kind: scikit-learn asks it several times per call, and
# testing thirteen dtypes against a kind costs microseconds each time. Kinds
# are a few names and dtypes; a bound keeps an odd caller from growing it.
_dtypes_of_kind = {}
_KINDS_REMEMBERED = 64


class Info:
    """What this namespace supports, as the standard's inspection API reports it."""

    __module__ = "arrayx"

    def capabilities(self) -> dict[str, bool | int]:
        """Returns a dictionary of array library capabilities.

        Returns
        -------
        out : dict
            "boolean indexing" and "data-dependent shapes" (both True: the values
            are computed at such a call) and "max dimensions" (64).
        """
        return {
            "boolean indexing": True,
            "data-dependent shapes": True,
            "max dimensions": 64,
        }

    def default_device(self) -> Device:
        """Returns the default device.

        Returns
        -------
        out : Device
            The device arrays are created on when none is given (see set_default_device).
        """
        return executors.default_device()

    def default_dtypes(self, *, device: DeviceLike | None = None) -> dict[str, DType]:
        """Returns a dictionary containing default data types.

        Parameters
        ----------
        device : Device | str | None
            Device for which to return the default data types; None: the default
            device. arrayx has the same defaults on every device.

        Returns
        -------
        out : dict
            The default dtypes of the kinds "real floating", "complex floating",
            "integral" and "indexing".

        Raises
        ------
        ValueError
            An unknown device.
        """
        check_device(device, "default_dtypes")
        return {
            "real floating": dt.DEFAULT_FLOAT,
            "complex floating": dt.DEFAULT_COMPLEX,
            "integral": dt.DEFAULT_INT,
            "indexing": dt.DEFAULT_INDEX,
        }

    def dtypes(self, *, device: DeviceLike | None = None,
               kind: str | DType | tuple[str | DType, ...] | None = None) -> dict[str, DType]:
        """Returns a dictionary of supported Array API data types.

        Parameters
        ----------
        device : Device | str | None
            Device for which to return the supported data types; None: the default
            device.
        kind : str | DType | tuple of them | None
            Data type kind, as for isdtype; None: all data types.

        Returns
        -------
        out : dict
            The supported dtypes of that kind by their canonical names. The
            extension float16 is left out: the standard allows only its own dtypes.

        Raises
        ------
        ValueError
            An unknown device or kind name.
        """
        check_device(device, "dtypes")
        try:
            found = _dtypes_of_kind.get(kind)
        except TypeError:   # unhashable: is_kind names it
            found = None
        if found is None:
            from .data_types import is_kind
            found = {str(d): d for d in dt.STANDARD if kind is None or is_kind(d, kind, "dtypes")}
            if len(_dtypes_of_kind) < _KINDS_REMEMBERED:
                _dtypes_of_kind[kind] = found
        return dict(found)   # the caller's own dict

    def devices(self) -> tuple[Device, ...]:
        """Returns a list of supported devices which are available at runtime.

        Returns
        -------
        out : tuple of Device
            The devices arrays can be placed on.
        """
        return tuple(executors.devices())


def __array_namespace_info__() -> Info:
    """Returns a namespace with Array API namespace inspection utilities.

    Returns
    -------
    out : Info
        An object with the methods capabilities(), default_device(),
        default_dtypes(), devices() and dtypes() that report what arrayx
        supports.
    """
    return Info()
