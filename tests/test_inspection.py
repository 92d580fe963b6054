"""The inspection API, the namespace protocol and the constants."""

import math
import os

import array_api_strict as strict
import pytest

import arrayx as xp
from oracle import DTYPE_NAMES

KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric"]

info = xp.__array_namespace_info__()


def test_capabilities_report_the_standard_keys():
    capabilities = info.capabilities()
    assert capabilities["boolean indexing"] is True
    assert xp.arange(4)[xp.arange(4) > 1].shape == (2,)  # and it really works
    assert capabilities["data-dependent shapes"] is True
    assert xp.nonzero(xp.asarray([0, 2, 0, 3]))[0].shape == (2,)  # and they really work
    most = capabilities["max dimensions"]
    assert type(most) is int
    assert float(xp.sum(xp.ones((1,) * most))) == 1.0  # that many dimensions really work


def test_default_device_is_where_arrays_are_created():
    # The CPU, unless ARRAYX_DEVICE names another for the whole run.
    assert info.default_device() == xp.Device(os.environ.get("ARRAYX_DEVICE", "cpu")) == xp.ones(1).device


def test_devices_is_a_tuple_holding_the_default_device():
    devices = info.devices()
    assert type(devices) is tuple
    assert info.default_device() in devices


@pytest.mark.parametrize("device", [None, xp.Device("cpu"), "cpu"])
def test_default_dtypes_match_creation_defaults(device):
    defaults = info.default_dtypes(device=device)
    assert defaults == {"real floating": xp.float64, "complex floating": xp.complex128,
                        "integral": xp.int64, "indexing": xp.int64}
    assert xp.asarray(1.0).dtype == defaults["real floating"]
    assert xp.asarray(1j).dtype == defaults["complex floating"]
    assert xp.asarray(1).dtype == defaults["integral"]


def test_dtypes_lists_every_dtype_by_name():
    assert info.dtypes() == {name: getattr(xp, name) for name in DTYPE_NAMES}
    assert info.dtypes(device=xp.Device("cpu")) == info.dtypes() == info.dtypes(device="cpu")


@pytest.mark.parametrize("kind", KINDS + [("bool", "complex floating"), ("integral", "real floating")])
def test_dtypes_of_a_kind_match_strict(kind):
    expected = strict.__array_namespace_info__().dtypes(kind=kind)
    assert info.dtypes(kind=kind) == {name: getattr(xp, name) for name in expected}


def test_dtypes_returns_a_dict_of_the_callers_own_each_time():
    first = info.dtypes(kind="real floating")
    first.clear()
    first["float64"] = xp.int8
    assert info.dtypes(kind="real floating") == {"float32": xp.float32, "float64": xp.float64}


@pytest.mark.parametrize("call, error, name", [
    (lambda: info.dtypes(kind="floating"), ValueError, "dtypes"),
    (lambda: info.dtypes(kind=["real floating"]), TypeError, "dtypes"),
    (lambda: info.dtypes(device="gpu"), ValueError, "dtypes"),
    (lambda: info.default_dtypes(device="gpu"), ValueError, "default_dtypes"),
])
def test_inspection_errors_name_the_function(call, error, name):
    with pytest.raises(error, match=name):
        call()


# the namespace protocol


@pytest.mark.parametrize("api_version", [None, "2023.12", "2024.12", "2025.12"])
def test_array_namespace_is_arrayx(api_version):
    assert xp.ones(1).__array_namespace__(api_version=api_version) is xp


@pytest.mark.parametrize("api_version", ["2030.12", "2025", 2025.12])
def test_array_namespace_rejects_unknown_api_versions(api_version):
    with pytest.raises(ValueError, match="__array_namespace__"):
        xp.ones(1).__array_namespace__(api_version=api_version)


def test_array_api_version_is_2025_12():
    assert xp.__array_api_version__ == "2025.12"


# constants


@pytest.mark.parametrize("name, value", [("e", math.e), ("pi", math.pi), ("inf", math.inf)])
def test_constants_are_python_floats(name, value):
    constant = getattr(xp, name)
    assert type(constant) is float and constant == value


def test_nan_is_a_python_float_nan():
    assert type(xp.nan) is float and math.isnan(xp.nan)


def test_newaxis_is_none_and_inserts_an_axis():
    assert xp.newaxis is None
    assert xp.ones((2, 3))[:, xp.newaxis].shape == (2, 1, 3)
