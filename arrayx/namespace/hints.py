"""The type aliases the namespace's signatures share (the standard's type
names: array, device, dtype, shapes and axes, scalar operands)."""

from types import EllipsisType
from typing import Union

from ..device import Device
from ..dtypes import DType
from .array_object import Array

# A device or its name ("cpu", "cuda:0").
DeviceLike = Union[Device, str]
Shape = Union[int, tuple[int, ...]]
Axes = Union[int, tuple[int, ...], None]
# What a binary function takes for each operand (not a Python scalar for both).
Operand = Union[Array, bool, int, float, complex]
Scalar = Union[bool, int, float, complex]
# An index of x[key] (a tuple of them indexes several axes).
Index = Union[int, slice, EllipsisType, None, Array]
Key = Union[Index, tuple[Index, ...]]

__all__ = ["Array", "Axes", "DType", "Device", "DeviceLike", "Index", "Key", "Operand", "Scalar", "Shape"]
