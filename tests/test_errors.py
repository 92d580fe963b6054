"""Errors that depend on values name the line that recorded them.

A primitive whose kernels can raise on values (a singular matrix, an index
out of bounds, a factorization that does not converge) is marked `may_fail`
in the primitive table; its nodes keep the user's call site, and the error
raised at the force point that computes one names that site. Which
primitives are marked is checked against the CPU kernels themselves: every
kernel the device table (tests/test_devices.py) runs is run again on values
meant to break it, and only marked primitives may raise.
"""

import os
import warnings

import numpy as np
import pytest

import arrayx as xp
from arrayx._cpu.kernels import IMPLS
from arrayx.autodiff import gradients
from arrayx.graph.primitives import DYNAMIC, PRIMITIVES, SELECT
from arrayx.graph.sites import where
from arrayx.namespace.build import make, wrap
from test_devices import CASES, _leaves

P = PRIMITIVES
HERE = os.path.basename(__file__)
MARKED = sorted(name for name, prim in P.items() if prim.may_fail)

# --- which primitives may fail: a fact of the kernels ------------------------


def _fills(shape, dtype):
    """Values meant to make a kernel raise, each an input of `shape` and
    `dtype`: zeros (a singular matrix), -1 (a matrix that is not positive
    definite), NaN and infinities (factorizations that do not converge),
    and integers far out of any array's bounds, both signs."""
    np_dtype = dtype.dtype
    if dtype.kind in "fc":
        values = (0.0, -1.0, np.nan, np.inf, -np.inf, np.finfo(np_dtype).max)
    elif dtype.kind in "iu":
        info = np.iinfo(np_dtype)
        values = (0, info.max, info.min, -1 if dtype.kind == "i" else 1)
    else:
        values = (False, True)
    for value in values:
        yield np.full(shape, value, dtype=np_dtype)


def _steps_of_the_device_table():
    """(primitive name, attrs, input types, result shape and dtype) of each
    step the device table runs on the CPU, every primitive its own step."""
    found = {}
    with xp.debug.unfused(), xp.debug.profile() as profile:
        for case in CASES.values():
            xp.eval(*_leaves(case.on_arrayx(xp.Device("cpu"))))
    for run in profile.steps:
        if run.name == "fused":
            continue   # a jitted function keeps the plan it was traced with, fused groups included
        prim = P[run.name]
        if prim.kind in (SELECT, DYNAMIC):
            continue   # select takes its node's tuple of outputs; data-dependent ones run at their call
        types = run.out_types
        shape, dtype = types[0] if len(types) == 1 else (tuple(s for s, _ in types), tuple(d for _, d in types))
        found.setdefault((run.name, run.attrs, run.in_types), (shape, dtype))
    return found


def test_only_primitives_marked_may_fail_have_kernels_that_raise_on_values():
    raised = {}
    for (name, attrs, in_types), (shape, dtype) in _steps_of_the_device_table().items():
        kernel = IMPLS[name](P[name], attrs, shape, dtype)
        columns = [list(_fills(s, d)) for s, d in in_types]
        for k in range(max((len(c) for c in columns), default=0)):   # leaves read no values
            inputs = [c[min(k, len(c) - 1)] for c in columns]
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                try:
                    kernel(*inputs)
                except Exception as error:   # whatever it is, only a marked primitive may raise it
                    raised.setdefault(name, error)
    unmarked = {name: repr(error) for name, error in raised.items() if not P[name].may_fail}
    assert not unmarked, f"kernels raise on values for primitives not marked may_fail: {unmarked}"
    for name in raised:
        assert isinstance(raised[name], (ValueError, IndexError)), (name, raised[name])
    stale = {name for name, prim in P.items() if prim.may_fail} - set(raised)
    assert not stale, f"primitives marked may_fail whose kernels raised on none of the values: {sorted(stale)}"


# --- each marked primitive names its site ------------------------------------

def _nan(n=3):
    return xp.full((n, n), float("nan"))


def _scatter():
    # x[i] = v checks i's values at the call; a scatter node built below the
    # namespace (autodiff's rules build them) meets its kernel's check.
    x, value, indices = xp.ones(3), xp.asarray(1.0), xp.asarray([0, 9])
    return wrap(make(P["scatter"], (x._node, value._node, indices._node), ((("array", 0),),)))


def _scatter_add():
    x = xp.ones(3)
    y = xp.sum(x[xp.asarray([0, 9])])
    return gradients(y, [x])[0]   # the gradient scatters into zeros; it needs no value of y


FAILING = {   # a call recording each marked primitive on values its kernel refuses
    "take": lambda: xp.take(xp.arange(3.0), xp.asarray([5])),
    "take_along_axis": lambda: xp.take_along_axis(xp.ones((2, 2)), xp.asarray([[0], [7]]), axis=1),
    "gather": lambda: xp.ones(3)[xp.asarray([0, 9])],
    "scatter": _scatter,
    "scatter_add": _scatter_add,
    "cholesky": lambda: xp.linalg.cholesky(-xp.eye(2)),
    "inv": lambda: xp.linalg.inv(xp.zeros((2, 2))),
    "solve": lambda: xp.linalg.solve(xp.zeros((2, 2)), xp.ones(2)),
    "pinv": lambda: xp.linalg.pinv(_nan()),
    "svdvals": lambda: xp.linalg.svdvals(_nan()),
    "svd": lambda: xp.linalg.svd(_nan()).S,
    "eigvalsh": lambda: xp.linalg.eigvalsh(_nan()),
    "eigh": lambda: xp.linalg.eigh(_nan()).eigenvalues,
    "eigvals": lambda: xp.linalg.eigvals(_nan()),
    "eig": lambda: xp.linalg.eig(_nan()).eigenvalues,
}
# The line of each call that records the primitive.
LINES = {"scatter": _scatter.__code__.co_firstlineno + 4, "scatter_add": _scatter_add.__code__.co_firstlineno + 3}


def test_every_marked_primitive_has_a_failing_case_here():
    assert sorted(FAILING) == MARKED


@pytest.mark.parametrize("name", MARKED)
def test_a_value_error_names_the_line_that_recorded_it(name):
    call = FAILING[name]
    result = call()   # recorded: nothing raises yet
    line = LINES.get(name, call.__code__.co_firstlineno)
    function = call.__name__
    with pytest.raises((ValueError, IndexError)) as caught:
        xp.eval(result)
    message = str(caught.value)
    assert message.endswith(f" (recorded at {HERE}:{line}, in {function})"), message
    # The note shows the recording line as a traceback shows a frame.
    assert caught.value.__notes__[0].startswith(f'The call that recorded it:\n  File "{__file__}", line {line}, '
                                                f'in {function}\n')


def step(w, m):
    return w - 0.1 * (xp.linalg.inv(m) @ w)


STEP_LINE = step.__code__.co_firstlineno + 1


def test_a_loop_reading_a_failed_value_raises_the_same_error_without_running_it_again():
    m = xp.asarray([[1.0, 2.0], [2.0, 4.0]])
    w = xp.ones(2)
    messages = []
    xp.debug.reset()
    for _ in range(3):
        w = step(w, m)
        with pytest.raises(np.linalg.LinAlgError) as caught:
            print(w)
        messages.append((str(caught.value), caught.value.__notes__))
    expected = f"linalg.inv: Singular matrix (recorded at {HERE}:{STEP_LINE}, in step)"
    assert [message for message, _ in messages] == [expected] * 3
    assert len(messages[0][1]) == 1
    # Later reads say that nothing ran again, and nothing did: one plan ran, once.
    assert all(notes[-1].startswith("Its computation failed at an earlier force point") for _, notes in messages[1:])
    assert xp.debug.counters["realizations"] == 0 and xp.debug.counters["steps_run"] == 0
    # The matrix itself, and what does not need the failed inverse, still compute.
    np.testing.assert_array_equal(np.asarray(m * 2.0), [[2.0, 4.0], [4.0, 8.0]])


def test_out_of_bounds_take_names_its_line_in_the_message():
    x = xp.arange(5.0)
    y = xp.take(x, xp.asarray([1, 7]))
    line = test_out_of_bounds_take_names_its_line_in_the_message.__code__.co_firstlineno + 2
    with pytest.raises(IndexError, match=rf"^take: index 7 is out of bounds for axis 0 with size 5 "
                                         rf"\(recorded at {HERE}:{line}, in test_out_of_bounds_take_names_its_line"):
        float(xp.sum(y))


def test_a_jitted_function_names_the_line_in_it_that_recorded_the_failure():
    @xp.jit
    def solve_for(m, v):
        return xp.linalg.solve(m, v)
    line = solve_for.__wrapped__.__code__.co_firstlineno + 2
    np.testing.assert_array_equal(np.asarray(solve_for(xp.eye(2), xp.ones(2))), [1.0, 1.0])
    with pytest.raises(np.linalg.LinAlgError, match=rf"^linalg.solve: Singular matrix \(recorded at {HERE}:{line}, "
                                                    rf"in solve_for\)\n"):
        solve_for(xp.zeros((2, 2)), xp.ones(2))
    # A computation's inputs change from call to call: the next call runs.
    np.testing.assert_array_equal(np.asarray(solve_for(2.0 * xp.eye(2), xp.ones(2))), [0.5, 0.5])


def test_the_emulated_gpu_names_the_line_through_its_cpu_fallback(gpu):
    m = xp.zeros((2, 2), device=gpu)
    inverse = xp.linalg.inv(m) + 1.0
    line = test_the_emulated_gpu_names_the_line_through_its_cpu_fallback.__code__.co_firstlineno + 2
    with pytest.raises(np.linalg.LinAlgError, match=rf"\(recorded at {HERE}:{line}, in test_the_emulated_gpu"):
        np.asarray(inverse)
    indices = xp.asarray([0, 5], device=gpu)
    taken = xp.take(xp.ones(3, device=gpu), indices) * 2.0
    with pytest.raises(IndexError, match=rf"^take: index 5 .*\(recorded at {HERE}:{line + 5}, "):
        np.asarray(taken)


def test_on_dask_an_index_error_names_its_line_and_linalg_errors_come_at_the_read():
    pytest.importorskip("dask.array")
    dask = xp.Device("dask")
    taken = xp.take(xp.ones(3, device=dask), xp.asarray([0, 5], device=dask))
    line = test_on_dask_an_index_error_names_its_line_and_linalg_errors_come_at_the_read.__code__.co_firstlineno + 3
    with pytest.raises(IndexError, match=rf"^take: index 5 .*\(recorded at {HERE}:{line}, "):
        np.asarray(taken)   # take runs on the CPU executor, at the force point
    # dask's own linear algebra runs when dask computes the graph: the read raises, without a site.
    inverse = xp.linalg.inv(xp.zeros((4, 4), device=dask))
    with pytest.raises(np.linalg.LinAlgError):
        np.asarray(inverse)


def test_primitives_that_cannot_fail_keep_no_site():
    x = xp.ones((2, 2))
    assert not hasattr((x + 1.0)._node, "site")
    assert not hasattr(xp.sum(x, axis=0)._node, "site")
    assert not hasattr((x @ x)._node, "site")
    assert where(xp.linalg.inv(x)._node.site)[0] == __file__


def test_the_site_is_the_first_frame_outside_arrayx():
    def inner():
        return xp.linalg.vector_norm(xp.linalg.inv(xp.eye(2)))   # a composite calling inv inside arrayx
    node = inner()._node
    sites = {where(n.site) for n in _history(node) if hasattr(n, "site")}
    assert sites == {(__file__, inner.__code__.co_firstlineno + 1, "inner")}


def _history(node):
    seen, stack = [], [node]
    while stack:
        n = stack.pop()
        seen.append(n)
        stack.extend(n.inputs)
    return seen



def test_a_failed_node_holds_its_error_without_the_force_points_frames():
    y = xp.linalg.inv(xp.zeros((2, 2)))
    with pytest.raises(np.linalg.LinAlgError):
        xp.eval(y)
    node = y._node
    assert node.op.name == "failed" and node.inputs == ()   # its input's memory is free
    held = node.attrs[0]
    # No traceback: the frames of the force point, and the buffers they held, are not kept alive.
    assert held.__traceback__ is None and held.__context__ is None
    assert str(held).startswith("linalg.inv: Singular matrix (recorded at")
