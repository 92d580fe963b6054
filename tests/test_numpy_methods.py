"""NumPy's habits on arrayx arrays: the array methods NumPy and JAX users call
(x.sum(), x.reshape(2, 3), x.tolist(), ...) against the same NumPy methods,
NumPy's functions that call those methods (np.sum(x)), and the errors that say
what to write where NumPy's ufuncs and NumPy arrays are refused."""

import re

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import arrayx as xp
from arrayx import debug
from oracle import assert_same

A = np.arange(1.0, 25.0).reshape(2, 3, 4) / 7.0
B = np.arange(-6, 6).reshape(3, 4)

# (method, array, args, kwargs): NumPy's method called the same way is the oracle.
CALLS = [
    ("sum", A, (), {}), ("sum", A, (0,), {}), ("sum", A, (), {"axis": (0, 2), "keepdims": True}),
    ("sum", B, (1, np.float32), {}),
    ("prod", B, (), {"axis": 0}), ("prod", A, (-1,), {"keepdims": True}),
    ("mean", A, (), {}), ("mean", B, (1,), {}), ("mean", B, (), {"dtype": np.float32}),
    ("std", A, (), {"axis": 1}), ("std", B, (), {"ddof": 1}), ("var", A, (0,), {"keepdims": True}),
    ("var", B, (), {"axis": 0, "ddof": 1.5}),
    ("max", A, (), {}), ("max", B, (0,), {}), ("min", A, (), {"axis": -1, "keepdims": True}),
    ("any", B, (), {}), ("any", B > 2, (1,), {}), ("all", B, (), {"axis": 0, "keepdims": True}),
    ("argmax", A, (), {}), ("argmax", B, (1,), {}), ("argmin", B, (), {"axis": 0, "keepdims": True}),
    ("cumsum", A, (), {}), ("cumsum", B, (1,), {}), ("cumsum", B > 0, (0,), {}),
    ("reshape", A, (4, 6), {}), ("reshape", A, ((6, -1),), {}), ("reshape", A, (24,), {}),
    ("reshape", A, ([3, 8],), {}),
    ("astype", A, (np.float32,), {}), ("astype", B, (xp.int8,), {}), ("astype", B, ("float16",), {}),
    ("copy", A, (), {}), ("flatten", A, (), {}),
    ("transpose", A, (), {}), ("transpose", A, (None,), {}), ("transpose", A, (2, 0, 1), {}),
    ("transpose", A, ((1, 2, 0),), {}), ("transpose", B, ([1, 0],), {}),
    ("squeeze", A[:1, :, None], (), {}), ("squeeze", A[:1, :, None], (0,), {}), ("squeeze", A[:1], ((0,),), {}),
    ("clip", A, (0.5, 2.0), {}), ("clip", B, (), {"min": -2}), ("clip", B, (None, 3), {}),
    ("round", A, (), {}), ("round", A, (2,), {}), ("round", A * 1000, (-2,), {}), ("round", B, (), {}),
    ("dot", A[0], (A[0].T,), {}), ("dot", A[0, 0], (A[0, 0],), {}), ("dot", A, (A[0].T,), {}),
    ("dot", A, (np.arange(4.0),), {}), ("dot", B, (B[0],), {}), ("dot", A[0, 0, :2], (A[:, :2, :],), {}),
    ("dot", np.array(A[0, 0, 0]), (B,), {}),
]


def numpy_to_arrayx(value):
    return xp.asarray(value) if isinstance(value, np.ndarray) else value


@pytest.mark.parametrize("name, a, args, kwargs", [pytest.param(*c, id=f"{c[0]}-{i}") for i, c in enumerate(CALLS)])
def test_method_matches_numpys_method(name, a, args, kwargs):
    """Each method: NumPy's signature, NumPy's values, shape and dtype
    (NumPy dtypes are accepted where a method takes a dtype)."""
    expected = getattr(a, name)(*args, **kwargs)
    got = getattr(xp.asarray(a), name)(*(numpy_to_arrayx(v) for v in args), **kwargs)
    assert isinstance(got, xp.Array)
    expected = np.asarray(expected)
    if expected.dtype.kind == "f" and name in ("mean", "std", "var", "round", "dot"):
        # The summation order, and the library product (dot), may differ from NumPy's by rounding.
        assert got.dtype == xp.asarray(expected).dtype and got.shape == expected.shape
        np.testing.assert_allclose(np.asarray(got), expected, rtol=4 * np.finfo(expected.dtype).eps)
    else:
        assert_same(got, expected)


@pytest.mark.parametrize("name, standard", [
    ("sum", xp.sum), ("prod", xp.prod), ("mean", xp.mean), ("std", xp.std), ("var", xp.var), ("max", xp.max),
    ("min", xp.min), ("any", xp.any), ("all", xp.all), ("argmax", xp.argmax), ("argmin", xp.argmin),
])
def test_reduction_methods_are_the_standard_functions(name, standard):
    """x.sum(axis=1, keepdims=True) records what xp.sum(x, axis=1, keepdims=True) does."""
    x = xp.asarray(A)
    method, function = getattr(x, name)(axis=1, keepdims=True), standard(x, axis=1, keepdims=True)
    assert xp.graph(method, lowered=True) == xp.graph(function, lowered=True)
    assert_same(method, np.asarray(function))


@given(a=hnp.arrays(st.sampled_from([np.bool_, np.int8, np.uint32, np.float32, np.float64, np.complex128]),
                    hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)))
def test_tolist_and_item_give_numpys_python_objects(a):
    x = xp.asarray(a)
    got, expected = x.tolist(), a.tolist()
    assert got == expected or np.array_equal(np.asarray(got), np.asarray(expected), equal_nan=True)
    assert type(got) is type(expected)
    if a.size:
        assert type(x.item(0)) is type(a.item(0))
        assert np.array_equal(x.item(a.size - 1), a.item(a.size - 1), equal_nan=True)
    if a.size == 1:
        assert type(x.item()) is type(a.item())


def test_var_and_std_take_the_standards_correction_as_jax_does():
    x = xp.asarray(A)
    assert_same(x.var(correction=1), np.asarray(xp.var(x, correction=1)))
    assert_same(x.std(axis=0, correction=2), np.asarray(xp.std(x, axis=0, correction=2)))


def test_tolist_and_item_are_force_points():
    debug.reset()
    y = xp.asarray([[1.0, 2.0]]) * 3.0
    assert y.tolist() == [[3.0, 6.0]]
    assert debug.counters["realizations"] == 1
    assert xp.sum(y).item() == 9.0
    assert y.item(1) == 6.0 and y.item(0, 0) == 3.0


def test_item_of_several_elements_or_out_of_bounds_raises_naming_it():
    x = xp.ones((2, 2))
    with pytest.raises(ValueError, match=r"Array\.item: .*shape \(2, 2\)"):
        x.item()
    with pytest.raises(IndexError, match=r"Array\.item"):
        x.item(4)


def test_copy_is_a_new_array_that_later_writes_do_not_change():
    x = xp.zeros(3)
    y = x.copy()
    x[0] = 1.0
    y[1] = 2.0
    assert x.tolist() == [1.0, 0.0, 0.0] and y.tolist() == [0.0, 2.0, 0.0]


@pytest.mark.parametrize("call, error, message", [
    (lambda x: x.sum(out=np.zeros(())), TypeError, r"Array\.sum: out= is not supported"),
    (lambda x: x.mean(axis=0, out=xp.zeros(3)), TypeError, r"Array\.mean: out="),
    (lambda x: x.var(ddof=1, correction=1), ValueError, r"Array\.var: give ddof or correction"),
    (lambda x: x.reshape(3, 2, order="F"), ValueError, r"Array\.reshape: order='F'"),
    (lambda x: x.reshape("6"), TypeError, r"Array\.reshape: shape"),
    (lambda x: x.reshape(4, 2), ValueError, r"reshape: cannot reshape an array of size 6"),
    (lambda x: x.squeeze(0), ValueError, r"squeeze: axis 0 has size 2"),
    (lambda x: x.astype(np.int64).round(1), TypeError, r"Array\.round: decimals=1 applies to floating"),
    (lambda x: x.dot(np.ones(3)), TypeError, r"Array\.dot: b must be an arrayx array.*xp\.asarray"),
    (lambda x: x.transpose(0), ValueError, r"permute_dims"),
])
def test_method_errors_name_the_method_or_the_function_it_calls(call, error, message):
    with pytest.raises(error, match=message):
        call(xp.ones((2, 3)))


@pytest.mark.parametrize("function", [
    lambda m, a: m.sum(a), lambda m, a: m.sum(a, axis=0, keepdims=True), lambda m, a: m.prod(a, axis=1),
    lambda m, a: m.mean(a), lambda m, a: m.std(a, axis=0), lambda m, a: m.var(a, ddof=1),
    lambda m, a: m.max(a, axis=1), lambda m, a: m.min(a), lambda m, a: m.any(a), lambda m, a: m.all(a, axis=0),
    lambda m, a: m.argmax(a), lambda m, a: m.argmin(a, axis=1), lambda m, a: m.cumsum(a),
    lambda m, a: m.reshape(a, (3, 2)), lambda m, a: m.transpose(a), lambda m, a: m.squeeze(a[None]),
    lambda m, a: m.clip(a, 0.2, 0.5), lambda m, a: m.round(a, 1),
])
def test_numpy_functions_that_call_the_method_return_arrayx_arrays(function):
    """np.sum(x), np.mean(x), np.reshape(x, ...): NumPy calls the argument's
    method, so they record arrayx nodes, with NumPy's values."""
    a = np.arange(6.0).reshape(2, 3) / 7.0
    got = function(np, xp.asarray(a))
    assert isinstance(got, xp.Array)
    np.testing.assert_allclose(np.asarray(got), function(np, a), rtol=4 * np.finfo(np.float64).eps)


@pytest.mark.parametrize("ufunc, instead", [
    (np.sin, "xp.sin"), (np.arcsin, "xp.asin"), (np.absolute, "xp.abs"), (np.power, "xp.pow"),
    (np.isnan, "xp.isnan"), (np.exp, "xp.exp"), (np.add, "xp.add"), (np.arctan2, "xp.atan2"),
])
def test_numpy_ufuncs_refuse_arrayx_arrays_naming_the_arrayx_function(ufunc, instead):
    x = xp.ones(3)
    for args in [(x,) * ufunc.nin, (x, 2.0)[:ufunc.nin]]:
        with pytest.raises(TypeError, match=re.escape(f"np.{ufunc.__name__}: NumPy's ufuncs do not take arrayx "
                                                      f"arrays; write {instead}(...), or convert the array with "
                                                      f"np.asarray(x)")):
            ufunc(*args)


@pytest.mark.parametrize("op", [
    lambda a, x: a + x, lambda a, x: x * a, lambda a, x: a < x, lambda a, x: x == a,
    lambda a, x: np.add(a, x), lambda a, x: a.__iadd__(x),
])
def test_numpy_arrays_in_arithmetic_raise_saying_to_convert(op):
    with pytest.raises(TypeError, match=r"cannot combine an arrayx array with a numpy\.ndarray; convert it with "
                                        r"xp\.asarray\(\.\.\.\) first"):
        op(np.ones(3), xp.ones(3))


@pytest.mark.parametrize("scalar", [np.float64(2.5), np.float32(2.5), np.int64(2), np.array(2.5), np.array(2)])
def test_numpy_scalars_and_0d_arrays_act_as_python_scalars_on_either_side(scalar):
    a = np.array([1.0, 2.5, 4.0], np.float32)
    x = xp.asarray(a)
    s = scalar.item()
    for op in (lambda u, v: u * v, lambda u, v: u - v, lambda u, v: u < v, lambda u, v: u == v,
               lambda u, v: u ** v):
        assert_same(op(scalar, x), np.asarray(op(s, x)))
        assert_same(op(x, scalar), np.asarray(op(x, s)))


@pytest.mark.parametrize("call", [
    lambda: xp.sum(np.ones(3)), lambda: xp.sin([1.0, 2.0]), lambda: xp.add(xp.ones(2), np.ones(2)),
    lambda: xp.reshape((1, 2), (2,)), lambda: xp.where(np.array([True]), 1.0, xp.ones(1)),
])
def test_functions_given_numpy_arrays_or_lists_say_to_convert_them(call):
    with pytest.raises(TypeError, match=r"must be an arrayx array.*; convert it with xp\.asarray\(\.\.\.\)"):
        call()


def test_setitem_of_a_numpy_value_says_to_convert_it():
    x = xp.zeros(3)
    with pytest.raises(TypeError, match=r"__setitem__: value .*; convert it with xp\.asarray\(\.\.\.\)"):
        x[0:2] = np.ones(2)
