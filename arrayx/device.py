"""Devices, and the executor that owns each one's buffers."""


class Device:
    """An array API device: where an array's buffer lives."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, Device) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f"Device({self.name!r})"


CPU = Device("cpu")
