"""The debugging tools: profile, ARRAYX_LOG, explain and the graph views."""

import os
import re
import shutil
import subprocess
import sys
import weakref

import numpy as np
import pytest

import arrayx as xp
from arrayx import debug
from arrayx.autodiff import gradients
from arrayx.scheduler import observe, schedule

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def fresh():
    """An empty plan cache and zeroed counters (tests count plans built)."""
    schedule.clear_plan_cache()
    debug.reset()


def test_profile_records_match_the_counters_and_the_plans_steps(fresh):
    x = xp.asarray(np.linspace(0.0, 1.0, 1 << 17))
    with debug.profile() as p:
        for scale in (2.0, 3.0):
            float(xp.sum(xp.exp(x) * scale + 1.0))
        xp.unique_values(xp.asarray([3, 1, 3]))
        float(x[5])   # a view of realized data: no force point
    counts = p.counts()
    for key in ("plans_built", "plan_cache_hits", "realizations", "steps_run"):
        assert counts[key] == debug.counters[key], key
    assert [f.plan for f in p.force_points] == ["built", "cached", "none"]
    assert [f.kind for f in p.force_points] == ["force", "force", "dynamic"]
    assert p.steps == [s for f in p.force_points for s in f.steps]
    fused = [s for s in p.steps if s.name == "fused"]
    assert [s.members for s in fused] == [("exp", "multiply", "add", "sum")] * 2
    assert {s.force_point.plan for s in fused} == {"built", "cached"}


def test_profile_steps_are_the_plans_steps_with_their_bytes(fresh):
    a = np.arange(1 << 17, dtype=np.float64)
    x = xp.asarray(a, device="cpu")   # the CPU executor's step and the bytes it moves
    y = xp.sum(xp.sin(x) + x)
    plan = schedule.plan_for([y._node])
    (group,) = debug.fused_groups(y)
    with debug.profile() as p:
        float(y)
    (step,) = p.steps
    assert step.members == tuple(i.op.name for i in group.body)
    assert len(p.steps) == plan.steps
    assert step.device == x.device and step.executor == "cpu"
    assert step.in_types == ((a.shape, xp.float64),) and step.out_types == (((), xp.float64),)
    # One float64 input read, one float64 scalar written.
    assert step.bytes_read == a.nbytes and step.bytes_written == 8
    assert step.seconds > 0 and p.force_points[0].seconds >= step.seconds


def test_profile_table_lists_each_step_kind_and_the_totals(fresh):
    x = xp.asarray(np.ones(1 << 17))
    with debug.profile() as p:
        for _ in range(3):
            float(xp.max(xp.exp(x) + x))
    table = str(p)
    row = next(line for line in table.splitlines() if line.startswith("exp+add+max"))
    assert row.split()[5] == "3"   # calls (after step, device, executor, path, result)
    assert "3 force points (1 plans built, 2 cached, 0 computation calls): 3 steps" in table


def test_profile_records_computation_calls_and_counts_their_steps(fresh):
    f = xp.jit(lambda a: xp.exp(a) * 2.0 - a)
    a = np.linspace(0.0, 1.0, 1 << 17)
    f(a)   # traced and compiled here, outside the profile
    before = debug.counters["steps_run"]
    with debug.profile() as p:
        out = f(a)
    np.testing.assert_allclose(np.asarray(out), np.exp(a) * 2.0 - a, rtol=1e-15)
    (call,) = p.force_points
    assert (call.kind, call.plan) == ("computation", "compiled")
    assert p.counts()["computation_calls"] == 1
    assert debug.counters["steps_run"] - before == p.counts()["steps_run"] == len(call.steps) >= 1


def test_profile_on_the_emulated_gpu_records_transfers(fresh, gpu):
    a = np.linspace(1.0, 2.0, 1 << 16)
    x = xp.asarray(a, device=gpu)
    y = xp.fft.fft(xp.astype(xp.exp(x), xp.complex128))   # fft runs on the host, with transfers
    with debug.profile() as p:
        got = np.asarray(y)
    np.testing.assert_allclose(got, np.fft.fft(np.exp(a)), rtol=1e-12, atol=1e-9)
    transfers = [s for s in p.steps if s.name == "transfer"]
    assert {s.executor for s in transfers} == {"cuda->cpu", "cpu->cuda"}
    assert all(s.bytes_read == s.bytes_written == a.size * 16 for s in transfers)
    assert any(s.executor == "cuda" for s in p.steps if s.name != "transfer")
    assert p.counts()["steps_run"] == debug.counters["steps_run"]


def test_a_profile_records_nothing_once_its_scope_ends(fresh):
    x = xp.asarray([1.0, 2.0])
    with debug.profile() as p:
        float(xp.sum(x))
    assert observe.observers == ()
    float(xp.sum(x * 2.0))
    assert len(p.force_points) == 1


def test_log_level_one_prints_a_line_per_force_point(fresh, monkeypatch, capsys):
    monkeypatch.setattr(observe, "observers", (debug.log.Log(1),))
    x = xp.asarray([1.0, 2.0])
    float(xp.sum(x * 2.0))
    float(xp.sum(x * 3.0))
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2
    assert re.fullmatch(r"arrayx: force, plan built: 1 steps, [0-9.]+ ms", lines[0])
    assert re.fullmatch(r"arrayx: force, plan cached: 1 steps, [0-9.]+ ms", lines[1])


def test_log_level_two_prints_each_step_too(fresh, monkeypatch, capsys):
    monkeypatch.setattr(observe, "observers", (debug.log.Log(2),))
    float(xp.sum(xp.exp(xp.asarray(np.ones(1 << 17), device="cpu"))))
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("arrayx:   exp+sum(float64[131072]) -> float64[] on cpu by cpu (numpy): ")
    assert "1.0 MB read, 8 B written" in lines[0]
    assert lines[1].startswith("arrayx: force, plan built: 1 steps")


def test_set_log_level_installs_one_logger_and_refuses_other_levels():
    try:
        debug.set_log_level(2)
        debug.set_log_level(1)
        assert [o.level for o in observe.observers] == [1]
    finally:
        debug.set_log_level(0)
    assert observe.observers == ()
    with pytest.raises(ValueError, match="^set_log_level: level must be 0, 1 or 2, got 3$"):
        debug.set_log_level(3)


def _run_with_log(value):
    script = "import arrayx as xp; print(float(xp.sum(xp.asarray([1.0, 2.0]) * 2.0)))"
    env = dict(os.environ, ARRAYX_LOG=value, PYTHONPATH=REPO)
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)


def test_arrayx_log_environment_variable_sets_the_level():
    done = _run_with_log("1")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "6.0\n"
    assert re.fullmatch(r"arrayx: force, plan built: 1 steps, [0-9.]+ ms\n", done.stderr)
    refused = _run_with_log("verbose")
    assert refused.returncode != 0 and "ARRAYX_LOG='verbose': expected 0, 1 or 2" in refused.stderr


def test_explain_shows_steps_groups_transfers_and_in_place_writes(fresh, gpu):
    x = xp.asarray(np.ones(1 << 16), device=gpu)
    y = xp.fft.fft(xp.astype(xp.exp(x) + 1.0, xp.complex128))
    text = debug.explain(y)
    assert text.startswith("plan: ")
    assert "fused(exp+add+astype)(float64[65536], float64[]) -> complex128[65536] on cuda:0" in text
    assert "from the cuda executor to the cpu executor" in text
    assert "from the cpu executor to the cuda executor" in text
    assert "fftn(axes=(0,), sizes=(65536,), norm='backward')" in text
    assert debug.counters["steps_run"] == 0   # explaining runs nothing
    with debug.unfused():   # one step per node: the CPU's temporaries, reused
        b = xp.sin(xp.asarray(np.ones(100), device="cpu"))
        text = debug.explain(xp.exp(b + 1.0))
    assert "add(float64[100], float64[]) -> float64[100] on cpu: slots [2, 0] -> 3, frees 0, 2, " \
           "in place: writes into slot 2, which dies here" in text


def test_the_text_view_shows_attributes_as_written_and_scalars_inline():
    text = xp.graph(xp.linspace(0, 1, num=7), lowered=True)
    assert "iota(axis=0) : float64[7]" in text
    assert "multiply(%0, 0.16666666666666666)" in text
    assert "full(" not in text and "((7,), float64" not in text
    text = xp.graph(xp.sum(xp.asarray(np.ones((2, 3))), axis=1, keepdims=True))
    assert "sum(%0, axis=(1,), keepdims=True) : float64[2,1]" in text
    assert "slice[1:3]" in xp.graph(xp.exp(xp.arange(5.0))[1:3])


def test_the_text_view_shows_a_composite_call_as_one_node_as_written():
    assert xp.graph(xp.linspace(0, 1, num=7)) == "%0 = linspace(0, 1, num=7) : float64[7]"
    x = xp.asarray(np.ones((3, 4)))
    assert xp.graph(xp.exp(xp.mean(x, axis=0))).splitlines() == [
        "%0 = buffer : float64[3,4]", "%1 = mean(%0, axis=0) : float64[4]", "%2 = exp(%1) : float64[4]"]
    assert xp.graph(xp.linalg.vector_norm(x, ord=1)).splitlines() == [
        "%0 = buffer : float64[3,4]", "%1 = linalg.vector_norm(%0, ord=1) : float64[]"]
    q, r = xp.linalg.qr(x.mT)   # one output of a tuple shows its field
    lines = xp.graph(q @ r).splitlines()
    assert "%1 = permute(%0, axes=(1, 0)) : float64[4,3]" in lines
    assert {"linalg.qr(%1).Q : float64[4,3]", "linalg.qr(%1).R : float64[3,3]"} == {
        line.split(" = ")[1] for line in lines if "qr" in line}


def test_a_call_that_returns_its_argument_leaves_the_arguments_label():
    mean = xp.mean(xp.asarray(np.ones((3, 4))), axis=0)
    assert xp.graph(xp.clip(mean)) == xp.graph(mean)   # clip without bounds: mean's node itself
    assert xp.graph(mean).endswith("%1 = mean(%0, axis=0) : float64[4]")


def test_a_call_keeps_no_argument_alive():
    scaled = xp.asarray(np.eye(3)) * 2.0
    identity = xp.linalg.matrix_power(scaled, 0)   # reads nothing of `scaled`
    gone = weakref.ref(scaled._node)
    del scaled
    assert gone() is None
    assert xp.graph(identity) == "%0 = linalg.matrix_power(<freed>, 0) : float64[3,3]"


def test_the_lowered_view_shows_the_primitives_of_a_call():
    x = xp.asarray(np.ones((3, 4)))
    text = xp.graph(xp.mean(x, axis=0), lowered=True)
    assert text.splitlines() == ["%0 = buffer : float64[3,4]", "%1 = sum(%0, axis=(0,)) : float64[4]",
                                 "%2 = divide(%1, 3.0) : float64[4]"]
    text = xp.graph(xp.linalg.vector_norm(x, ord=1), lowered=True)
    assert "abs(%0) : float64[3,4]" in text and "sum(%1, axis=(0, 1)) : float64[]" in text


def test_a_node_of_a_call_that_something_else_reads_stays_visible():
    x = xp.asarray(np.arange(1.0, 5.0))
    norm = xp.linalg.vector_norm(x, ord=3)   # pow(sum(|x|**3), 1/3)
    (grad,) = gradients(norm, [x])            # reads |x|, |x|**3 and their sum
    lines = xp.graph(grad * norm).splitlines()
    lowered = xp.graph(grad * norm, lowered=True).splitlines()
    result = re.compile(r"%\d+ = pow\(%\d+, 0\.3333333333333333\) : float64\[\]")   # the call's own node
    assert len([line for line in lowered if result.fullmatch(line)]) == 1
    assert not any(result.fullmatch(line) for line in lines)
    assert "%1 = linalg.vector_norm(%0, ord=3) : float64[]" in lines
    # Every other node is read by the gradient: all stay.
    assert len(lines) == len(lowered)
    assert any(re.fullmatch(r"%\d+ = sum\(%\d+, axis=\(0,\)\) : float64\[\]", line) for line in lines)
    assert "abs(%0) : float64[4]" in "\n".join(lines)


def test_a_realized_node_drops_the_call_it_came_from():
    x = xp.asarray(np.ones((3, 4)))
    scaled = x * 2.0
    mean = xp.mean(scaled, axis=0)
    assert mean._node.origin is not None
    scaled_node = weakref.ref(scaled._node)
    del scaled
    xp.eval(mean)
    assert scaled_node() is None   # the realized result does not keep the call's argument alive
    assert mean._node.origin is None
    assert xp.graph(mean) == "%0 = buffer : float64[4]"


def _check_dot_structure(text, clusters):
    """Balanced braces, every edge endpoint declared, one cluster per group
    holding `clusters` (node ids' labels' first lines, per cluster)."""
    assert text.startswith("digraph arrayx {") and text.endswith("}")
    assert text.count("{") == text.count("}")
    declared = dict(re.findall(r'^\s*(\w+) \[label="([^"\\]*)', text, re.M))
    for a, b in re.findall(r"^\s*(\w+) -> (\w+);", text, re.M):
        assert a in declared and b in declared
    found = re.findall(r"subgraph cluster_\d+ \{\n.*?\n((?:    \w+;\n)+)  \}", text, re.S)
    got = [[declared[m] for m in re.findall(r"(\w+);", block)] for block in found]
    assert got == clusters


def test_dot_view_draws_fused_groups_as_clusters():
    x = xp.asarray(np.ones((300, 300)), device="cpu")   # labels name devices other than the CPU
    y = xp.sum(xp.exp(x) * 2.0 + x, axis=1)
    text = xp.graph(y, format="dot")
    (group,) = debug.fused_groups(y)
    labels = {"sum": "sum(axis=(1,))"}
    expected = [[labels.get(i.op.name, i.op.name) for i in group.body]]
    _check_dot_structure(text, expected)
    assert 'label="buffer\\nfloat64[300,300]", style=filled' in text   # the realized leaf
    assert 'label="2.0", shape=plaintext' in text                       # the scalar, inline
    if shutil.which("dot"):
        done = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "<svg" in done.stdout, done.stderr


def test_dot_view_puts_a_call_in_the_cluster_of_its_result():
    x = xp.asarray(np.ones((300, 300)))
    y = xp.exp(xp.mean(x, axis=0)) * 2.0
    # mean lowers to a sum, a group of its own, and a divide that fuses with exp and multiply.
    assert [[i.op.name for i in g.body] for g in debug.fused_groups(y)] == [["sum"], ["divide", "exp", "multiply"]]
    _check_dot_structure(xp.graph(y, format="dot"), [["mean(axis=0)", "exp", "multiply"]])
    _check_dot_structure(xp.graph(y, format="dot", lowered=True), [["sum(axis=(0,))"], ["divide", "exp", "multiply"]])


def test_dot_view_marks_devices(gpu):
    x = xp.asarray(np.ones(4), device=gpu)
    text = xp.graph(xp.exp(x), format="dot")
    _check_dot_structure(text, [])
    assert "float64[4]\\ncuda:0" in text


def test_svg_view_renders_or_names_what_to_install():
    y = xp.exp(xp.asarray([1.0]))
    try:
        import graphviz  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match=r'pip install "arrayx\[viz\]"'):
            xp.graph(y, format="svg")
        return
    if shutil.which("dot") is None:
        with pytest.raises(RuntimeError, match="dot program on PATH"):
            xp.graph(y, format="svg")
        return
    assert "<svg" in xp.graph(y, format="svg")


def test_graph_refuses_an_unknown_format():
    with pytest.raises(ValueError, match="^graph: format must be one of 'text', 'dot', 'svg', got 'png'$"):
        xp.graph(xp.asarray([1.0]), format="png")
