"""Devices, and the executor that owns each one's buffers."""


class Device:
    """An array API device: where an array's buffer lives.

    Devices are interned (`Device("cpu") is Device("cpu")`), so equality is
    identity and hashing is cheap on the graph-build path.
    """

    __slots__ = ("name",)
    _interned = {}

    def __new__(cls, name):
        device = cls._interned.get(name)
        if device is None:
            device = object.__new__(cls)
            device.name = name
            cls._interned[name] = device
        return device

    def __reduce__(self):
        return Device, (self.name,)

    def __repr__(self):
        return f"Device({self.name!r})"


CPU = Device("cpu")
