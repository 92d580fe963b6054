"""The dask device: arrays whose buffers are dask arrays, plans that build
dask graphs, on dask's synchronous and threaded schedulers with tiny chunks
(so every computation crosses chunk boundaries), and on a LocalCluster of
worker processes."""

import os
import pathlib
import threading
import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="the dask device needs dask: pip install 'arrayx[dask]'")
import dask  # noqa: E402

import arrayx as xp  # noqa: E402
from arrayx.autodiff import grad  # noqa: E402
from arrayx.dask import from_dask, to_dask  # noqa: E402

# 128 float64 values a chunk: the arrays below span several chunks per axis.
CHUNK_SIZE = "1KiB"


@pytest.fixture(params=["synchronous", "threads"])
def scheduler(request):
    """Tiny chunks, on one of dask's local schedulers."""
    with dask.config.set({"array.chunk-size": CHUNK_SIZE, "scheduler": request.param}):
        yield request.param


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.random((40, 30)) + 0.5, rng.random(30) + 0.5


def on_dask(*arrays):
    return [xp.asarray(a, device="dask") for a in arrays]


def chain(m, x, y):
    """Ten elementwise operations, with a row broadcast against a matrix."""
    z = m.exp(x * 2.0 - y) + m.sin(y) * x
    z = m.sqrt(z) / (1.0 + m.abs(x - y))
    return m.log1p(m.square(z)) - m.tanh(y)


def test_buffers_are_dask_arrays_chunked_as_dask_says(scheduler, data):
    x, = on_dask(data[0])
    assert x.device == xp.Device("dask")
    buffer = to_dask(x)
    assert isinstance(buffer, da.Array)
    assert buffer.chunks == da.from_array(data[0], chunks="auto").chunks
    assert len(buffer.chunks[0]) > 1 and len(buffer.chunks[1]) > 1


def test_elementwise_chain_with_broadcasting(scheduler, data):
    x, y = on_dask(*data)
    result = chain(xp, x, y)
    assert result.device == x.device
    np.testing.assert_allclose(np.asarray(result), chain(np, *data), rtol=1e-12)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("axis", [0, 1, None, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_of_a_fused_chain(scheduler, data, name, axis, keepdims):
    x, y = on_dask(*data)
    result = getattr(xp, name)(xp.exp(x * 0.1) * y, axis=axis, keepdims=keepdims)
    expected = getattr(np, name)(np.exp(data[0] * 0.1) * data[1], axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-12)


@pytest.mark.parametrize("name", ["any", "all"])
def test_boolean_reductions(scheduler, data, name):
    x, = on_dask(data[0])
    for axis in (0, 1, None):
        result = getattr(xp, name)(x > 1.2, axis=axis)
        np.testing.assert_array_equal(np.asarray(result), getattr(np, name)(data[0] > 1.2, axis=axis))


def test_row_softmax(scheduler, data):
    x, = on_dask(data[0])
    e = xp.exp(x - xp.max(x, axis=1, keepdims=True))
    result = e / xp.sum(e, axis=1, keepdims=True)
    expected = np.exp(data[0] - data[0].max(axis=1, keepdims=True))
    np.testing.assert_allclose(np.asarray(result), expected / expected.sum(axis=1, keepdims=True), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axes", [((40, 30), (1,)), ((3, 5, 70), (2,)), ((4, 6, 7), (1, 2)), ((9, 1), (1,)),
                                        ((300,), (0,))])
def test_row_logsumexp_is_one_group_over_chunks_of_whole_rows(scheduler, dtype, shape, axes):
    def logsumexp(m, x):
        top = m.max(x, axis=axes, keepdims=True)
        return top + m.log(m.sum(m.exp(x - top), axis=axes, keepdims=True))
    a = np.random.default_rng(3).standard_normal(shape).astype(dtype) * 4
    rows = a.reshape(-1, np.prod([shape[d] for d in axes]))
    if len(rows) > 2:
        rows[0, -1], rows[1, 0], rows[2, :] = np.nan, np.inf, -np.inf   # NaN rows, as NumPy's formula gives
    x, = on_dask(a)
    result = logsumexp(xp, x)
    assert len(xp.debug.fused_groups(result)) == 1
    with np.errstate(all="ignore"):
        expected = logsumexp(np, a)
        # A chunk's rows are whole; its program may run natively once hot (sums in another order, glibc's
        # exp and log): a few units in the last place.
        np.testing.assert_allclose(np.asarray(result), expected, rtol={np.float32: 1e-5, np.float64: 1e-12}[dtype])
    assert np.asarray(result).dtype == dtype


def test_matmul(scheduler, data):
    x, y = on_dask(*data)
    np.testing.assert_allclose(np.asarray(x @ xp.matrix_transpose(x)), data[0] @ data[0].T, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(x @ y), data[0] @ data[1], rtol=1e-12)


@pytest.fixture
def host_transfers(monkeypatch):
    """The count of dask buffers copied to the host: a step the dask
    executor does not run moves its inputs there (the lower pass)."""
    from arrayx._dask.executor import DaskExecutor
    count = [0]
    to_host = DaskExecutor.to_host

    def counting(self, buffer):
        count[0] += 1
        return to_host(self, buffer)
    monkeypatch.setattr(DaskExecutor, "to_host", counting)
    return count


def test_a_primitive_dask_lacks_runs_on_the_host_and_the_rest_stays_on_dask(scheduler, host_transfers, data):
    x, = on_dask(data[0])
    indices = xp.asarray([3, 0, 29, 3], device="dask")
    result = xp.take(x * 2.0, indices, axis=1) + 1.0
    assert result.device == x.device
    assert isinstance(to_dask(result), da.Array)
    assert host_transfers[0] == 2   # take's two inputs
    np.testing.assert_array_equal(np.asarray(result), np.take(data[0] * 2.0, [3, 0, 29, 3], axis=1) + 1.0)


@pytest.mark.usefixtures("both_cpu_kernel_paths")   # a chunk is a view: the native kernel reads its strides
def test_views_are_dask_operations(scheduler, data):
    x, = on_dask(data[0])
    a = data[0]
    np.testing.assert_array_equal(np.asarray(x[3:31:2, ::-1]), a[3:31:2, ::-1])
    np.testing.assert_array_equal(np.asarray(xp.reshape(x, (60, 20))), a.reshape(60, 20))
    np.testing.assert_array_equal(np.asarray(xp.permute_dims(x, (1, 0)) + 0.0), a.T)
    np.testing.assert_array_equal(np.asarray(xp.flip(x, axis=0) * 1.0), a[::-1])
    np.testing.assert_array_equal(np.asarray(xp.broadcast_to(x[0], (5, 30))), np.broadcast_to(a[0], (5, 30)))


def test_creation_functions_build_chunked_arrays_lazily(scheduler):
    # 800 GB, never allocated (in dask's default chunks: tiny ones would make a graph of 10^9 tasks).
    with dask.config.set({"array.chunk-size": "128MiB"}):
        zeros = xp.zeros((10**6, 10**5), device="dask")
        assert zeros.device == xp.Device("dask")
        assert float(xp.sum(zeros[:3, :4] + 1.0)) == 12.0
    np.testing.assert_array_equal(np.asarray(xp.arange(300, device="dask") * 2), np.arange(300) * 2)
    np.testing.assert_array_equal(np.asarray(xp.full((20, 30), 7.0, device="dask") - xp.ones((30,), device="dask")),
                                  np.full((20, 30), 6.0))
    np.testing.assert_array_equal(np.asarray(xp.eye(50, device="dask")), np.eye(50))
    np.testing.assert_array_equal(np.asarray(xp.triu(xp.ones((2, 0, 3), device="dask"))), np.ones((2, 0, 3)))


@pytest.mark.parametrize("build", [lambda: xp.eye(30, 40, k=1, device="dask"),
                                   lambda: xp.tril(xp.ones((24, 50), device="dask"), k=-1)],
                         ids=["eye", "tril"])
def test_iotas_along_different_axes_are_chunked_alike(scheduler, build):
    # eye and tril compare an iota along axis 0 with one along axis 1: chunked
    # each along its own axis only, their blockwise made a grid of both (10x
    # the chunks, and dask's PerformanceWarning).
    with dask.config.set({"array.chunk-size": CHUNK_SIZE}):
        built = to_dask(build())
        assert built.chunks == da.ones(built.shape, chunks="auto", dtype=np.int64).chunks


def test_to_device_and_back(scheduler, data):
    x = xp.asarray(data[0])
    moved = x.to_device("dask")
    assert isinstance(to_dask(moved), da.Array)
    back = (moved * 3.0).to_device("cpu")
    assert back.device == xp.Device("cpu")
    np.testing.assert_array_equal(np.asarray(back), data[0] * 3.0)


calls = []


def counted(block):
    calls.append(block.shape)
    return block


def test_from_dask_and_to_dask_compute_nothing_until_asked(scheduler, data):
    calls.clear()
    source = da.from_array(data[0], chunks=(16, 16)).map_blocks(counted, meta=np.empty((0, 0)))
    x = from_dask(source)
    assert (x.shape, x.dtype) == ((40, 30), xp.float64)
    result = to_dask(xp.sum(xp.exp(x) * 2.0, axis=0))
    assert calls == [] and isinstance(result, da.Array)
    np.testing.assert_allclose(result.compute(), np.sum(np.exp(data[0]) * 2.0, axis=0), rtol=1e-12)
    assert calls
    assert to_dask(from_dask(source)) is source


def test_grad_on_dask_arrays_equals_the_cpus(scheduler, data):
    def loss(w, x):
        return xp.sum(xp.tanh(x @ w) ** 2) / 40.0

    w = np.linspace(-1.0, 1.0, 30)
    on_cpu = grad(loss)(xp.asarray(w), xp.asarray(data[0]))
    on_dask_device = grad(loss)(*on_dask(w, data[0]))
    assert on_dask_device.device == xp.Device("dask")
    np.testing.assert_allclose(np.asarray(on_dask_device), np.asarray(on_cpu), rtol=1e-10)


def test_a_fused_chain_makes_fewer_tasks_than_dask_array(scheduler, data):
    source = da.from_array(data[0], chunks="auto")
    row = da.from_array(data[1], chunks="auto")
    ours = to_dask(chain(xp, from_dask(source), from_dask(row)))
    theirs = chain(da, source, row)
    np.testing.assert_allclose(ours.compute(), theirs.compute(), rtol=1e-12)
    assert len(ours.__dask_graph__()) < len(theirs.__dask_graph__()) / 3


def test_tasks_pickle(data):
    # Worker processes receive each task pickled.
    import pickle
    with dask.config.set({"array.chunk-size": CHUNK_SIZE}):
        x, y = on_dask(*data)
        graph = to_dask(xp.sum(chain(xp, x, y), axis=1)).__dask_graph__()
    for task in dict(graph).values():
        pickle.loads(pickle.dumps(task))


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed", reason="the LocalCluster test needs distributed")
    # Nannies restart a worker process that dies (its closed connection tells the scheduler at once).
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, nanny=True,
                                     host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster, timeout=30) as client:
        yield client


def test_a_local_cluster_of_worker_processes(client, data):
    with dask.config.set({"array.chunk-size": CHUNK_SIZE}):
        x, y = on_dask(*data)
        np.testing.assert_allclose(np.asarray(chain(xp, x, y)), chain(np, *data), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(xp.sum(chain(xp, x, y), axis=0)), chain(np, *data).sum(axis=0),
                                   rtol=1e-12)


def test_import_arrayx_imports_no_dask():
    # dask.array takes most of a second to import: only the dask device's first graph imports it.
    import subprocess
    import sys
    code = "import sys, arrayx; assert 'dask' not in sys.modules and 'dask' in [d.name for d in arrayx.executors.devices()]"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=pathlib.Path(__file__).resolve().parent.parent)


def test_values_of_a_group_needed_outside_it_are_extra_outputs(scheduler, data):
    x, y = on_dask(*data)
    e = xp.exp(x * 0.5)
    doubled = e * y
    total = xp.sum(e * 3.0, axis=0)
    xp.eval(e, doubled, total)
    expected = np.exp(data[0] * 0.5)
    np.testing.assert_allclose(np.asarray(e), expected, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(doubled), expected * data[1], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(total), np.sum(expected * 3.0, axis=0), rtol=1e-12)


def test_profile_records_a_multi_output_group_with_the_bytes_of_each_output(scheduler, data):
    x, = on_dask(data[0])
    e = xp.exp(x * 0.5)
    total = xp.sum(e * 3.0, axis=0)
    with xp.debug.profile() as p:
        xp.eval(e, total)
    (step,) = [s for s in p.steps if s.name == "fused"]
    assert step.bytes_written == data[0].nbytes + data[0].shape[1] * 8   # e and its column sums
    np.testing.assert_allclose(np.asarray(total), np.sum(np.exp(data[0] * 0.5) * 3.0, axis=0), rtol=1e-12)


def test_transformer_computations_with_dask_as_the_default_device(scheduler, data):
    # Placeholders and variables are built on the default device, as constants are.
    from arrayx import transformers as ngt
    before = xp.__array_namespace_info__().default_device()
    xp.set_default_device("dask")
    try:
        x = ngt.placeholder(data[0].shape)
        w = ngt.variable(xp.asarray(data[1]))
        y = xp.sum(xp.exp(x) * w + 1.0, axis=1)
        assert y.device == xp.Device("dask")
        f = ngt.make_transformer().computation(y, x)
        np.testing.assert_allclose(np.asarray(f(data[0])), np.sum(np.exp(data[0]) * data[1] + 1.0, axis=1),
                                   rtol=1e-12)
    finally:
        xp.set_default_device(before)


def test_arrays_of_the_most_dimensions_run_on_dask(scheduler):
    # NumPy's broadcast_shapes stops at 32 dimensions; arrays have up to 64.
    most = xp.__array_namespace_info__().capabilities()["max dimensions"]
    a = np.arange(6.0).reshape((2,) + (1,) * (most - 2) + (3,))
    x, = on_dask(a)
    np.testing.assert_array_equal(np.asarray(xp.sum(x * 2.0 + 1.0, axis=0)), np.sum(a * 2.0 + 1.0, axis=0))


def test_float16_matmul_rounds_once_across_chunks(scheduler):
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.9, 1.1, (8, 300)).astype(np.float16), rng.uniform(0.9, 1.1, (300, 5)).astype(np.float16)
    x, y = on_dask(a, b)
    assert len(to_dask(x).chunks[1]) > 1   # the sum runs over several blocks
    product = x @ y
    assert product.dtype == xp.float16
    exact = a.astype(np.float64) @ b.astype(np.float64)
    # One float16 rounding (2**-11 relative) and float32's error over 300 terms (below 2e-5).
    np.testing.assert_allclose(np.asarray(product).astype(np.float64), exact, rtol=2.0**-11 + 2e-5)


def test_host_memory_is_never_shared(data):
    # dask.array.from_array copies what it is given.
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray(data[0], device="dask", copy=False)
    host = data[0].copy()
    x = xp.asarray(host, device="dask")
    host[0, 0] = 99.0
    assert float(x[0, 0]) == data[0][0, 0]


def test_asarray_of_a_python_list_builds_a_dask_array():
    # asarray lets an executor share a fresh host array it made from a list
    # (copy=None); dask copies it, which is what sharing allows.
    x = xp.asarray([[1.0, 2.0], [3.0, 4.0]], device="dask")
    assert x.device == xp.Device("dask")
    np.testing.assert_array_equal(np.asarray(x), [[1.0, 2.0], [3.0, 4.0]])


def test_a_chunk_runs_its_fused_blocks_on_its_task_thread(monkeypatch):
    # dask runs chunks in parallel already: a chunk's blocks stay on the
    # thread of its task, never on the CPU executor's pool (which the same
    # group uses when it runs on the CPU device).
    from arrayx._cpu import fused, workers
    monkeypatch.setattr(workers, "THREADS", 2)
    monkeypatch.setattr(fused, "BLOCK_BYTES", 8192)
    monkeypatch.setattr(fused, "BLOCKED_MIN_BYTES", 256)
    threads = []
    run = fused.FusedKernel._run

    def recording(self, *args):
        threads.append(threading.current_thread().name)
        return run(self, *args)

    monkeypatch.setattr(fused.FusedKernel, "_run", recording)
    asked = []   # how many threads each blocked call asks to run its pieces
    claimed = workers.claimed

    def recording_asked(pieces, compute, temporaries, n):
        asked.append(n)
        return claimed(pieces, compute, temporaries, n)

    monkeypatch.setattr(workers, "claimed", recording_asked)
    # Wake workers at every call: under load a worker may still start after
    # the caller claimed every piece, so the CPU half checks what is asked.
    monkeypatch.setattr(workers, "_start_latency", 0.0)
    a = np.linspace(-1.0, 1.0, 40_000)
    on_cpu = xp.asarray(a, device="cpu")
    np.testing.assert_allclose(np.asarray(xp.sin(on_cpu) * 2.0 + 1.0), np.sin(a) * 2.0 + 1.0, rtol=1e-15)
    assert max(asked) == 2
    threads.clear()
    asked.clear()
    with dask.config.set({"array.chunk-size": "64KiB", "scheduler": "threads"}):
        x, = on_dask(a)
        result = xp.sin(x) * 2.0 + 1.0
        assert len(to_dask(result).chunks[0]) > 1
        np.testing.assert_allclose(np.asarray(result), np.sin(a) * 2.0 + 1.0, rtol=1e-15)
    assert set(asked) == {1}
    assert threads and not any(name.startswith("arrayx-cpu") for name in threads)


def test_eval_persists_so_later_work_reuses_the_computed_chunks(scheduler, data):
    calls.clear()
    source = da.from_array(data[0], chunks=(16, 16)).map_blocks(counted, meta=np.empty((0, 0)))
    y = xp.exp(from_dask(source)) * 2.0
    assert xp.eval(y) is y
    n_chunks = source.npartitions
    assert len(calls) == n_chunks
    persisted = to_dask(y)
    assert len(persisted.__dask_graph__()) == n_chunks   # one task a chunk: its computed value
    expected = np.exp(data[0]) * 2.0
    np.testing.assert_allclose(float(xp.sum(y)), expected.sum(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(y[:, 3] + 1.0), expected[:, 3] + 1.0, rtol=1e-12)
    assert len(calls) == n_chunks


def test_element_reads_and_writes_of_an_evaluated_array_give_the_cpus_values(scheduler, data):
    # x[i, j] of evaluated arrays and element writes: the CPU reads and
    # writes its buffer at once, the dask device records slices and updates.
    expected = np.exp(data[0]) * 2.0
    x = xp.eval(xp.exp(xp.asarray(data[0], device="dask")) * 2.0)
    on_cpu = x.to_device("cpu")
    keys = [(3, 4), (-1, -2), (39, 0), (17, 29)]
    for key in keys:
        assert x[key].device == xp.Device("dask")
        assert float(x[key]) == float(on_cpu[key]) == expected[key]   # the same bits: no arithmetic
    read, row = x[3, 4], x[3]
    for k, key in enumerate(keys):
        x[key] = -float(k)
        on_cpu[key] = -float(k)
        expected[key] = -float(k)
    assert float(read) == float(row[4]) == np.exp(data[0][3, 4]) * 2.0   # reads taken before the writes keep their values
    assert x.device == xp.Device("dask")
    np.testing.assert_array_equal(np.asarray(x), expected)
    np.testing.assert_array_equal(np.asarray(on_cpu), expected)


def test_eval_with_distributed_imported_and_no_client_persists_locally():
    # In a process of its own: this module's LocalCluster fixture leaves a Client about.
    pytest.importorskip("distributed")
    import subprocess
    import sys
    code = ("import distributed, numpy as np, arrayx as xp\n"
            "a = np.linspace(0.0, 1.0, 1000)\n"
            "y = xp.eval(xp.exp(xp.asarray(a, device='dask')) * 2.0)\n"
            "np.testing.assert_allclose(np.asarray(y), np.exp(a) * 2.0, rtol=1e-15)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=pathlib.Path(__file__).resolve().parent.parent)
    assert done.returncode == 0, done.stderr


def test_eval_on_a_cluster_keeps_the_chunks_in_its_workers_memory(client, data):
    from distributed import futures_of
    with dask.config.set({"array.chunk-size": CHUNK_SIZE}):
        x, y = on_dask(*data)
        z = xp.eval(chain(xp, x, y))
        held = futures_of(to_dask(z))
        assert len(held) == to_dask(z).npartitions
        assert all(f.status == "finished" for f in held)
        np.testing.assert_allclose(np.asarray(xp.sum(z, axis=1)), chain(np, *data).sum(axis=1), rtol=1e-12)


def failing(block):
    raise ArithmeticError("a task failed")


def test_eval_on_a_cluster_raises_a_failing_tasks_error_at_the_call(client, data):
    source = da.from_array(data[0], chunks=(16, 16)).map_blocks(failing, meta=np.empty((0, 0)))
    with pytest.raises(ArithmeticError, match="a task failed"):
        xp.eval(from_dask(source) * 2.0)


@pytest.mark.parametrize("copy", [None, True, False])
def test_from_dlpack_of_a_dask_array_stays_on_the_dask_device_uncomputed(data, copy):
    calls.clear()
    x = from_dask(da.from_array(data[0], chunks=(16, 16)).map_blocks(counted, meta=np.empty((0, 0))))
    y = xp.from_dlpack(x, copy=copy)
    assert y.device == x.device and calls == []
    np.testing.assert_array_equal(np.asarray(y), data[0])
    moved = xp.from_dlpack(x, device="cpu", copy=None if copy is False else copy)
    assert moved.device == xp.Device("cpu")
    np.testing.assert_array_equal(np.asarray(moved), data[0])


@pytest.mark.parametrize("shape", [(40, 30), (), (0, 3)])
def test_dlpack_without_a_copy_shares_the_computed_value_the_array_keeps(scheduler, shape):
    # The computation makes a new host array; with copy=False the export is
    # that memory and the array holds it from then on, as a CPU array's
    # export shares its buffer.
    a = np.arange(float(np.prod(shape))).reshape(shape)
    x = xp.asarray(a, device="dask") * 2.0
    first = np.from_dlpack(x, copy=False)
    again = np.from_dlpack(x, copy=False)
    assert np.shares_memory(first, again) or a.size == 0
    assert not first.flags.writeable   # DLPack 1.0 carries the read-only flag, as on the CPU
    assert not np.shares_memory(np.from_dlpack(x, copy=True), first)
    np.testing.assert_array_equal(first, a * 2.0)
    # Later work on the array reads the held memory, still chunked as dask says.
    assert to_dask(x).chunks == da.from_array(first, chunks="auto").chunks
    np.testing.assert_array_equal(np.asarray(xp.sum(x + 1.0, axis=None)), np.sum(a * 2.0 + 1.0))
    np.testing.assert_array_equal(np.asarray(x), a * 2.0)


@pytest.mark.parametrize("shape", [(12, 0), (0, 3), (0,), (2, 0, 5)])
def test_zero_size_arrays_get_one_chunk_per_axis(scheduler, shape):
    # dask's "auto" chunks divide by the size of a block, zero here
    # (array-api-tests' test_eye, test_outer, broadcast_arrays, qr and svd
    # met it through full, asarray, iota and broadcast).
    for x in (xp.zeros(shape, device="dask"), xp.asarray(np.zeros(shape), device="dask"),
              xp.broadcast_to(xp.ones(shape[-1:], device="dask"), shape)):
        assert to_dask(x).chunks == tuple((n,) for n in shape)
        np.testing.assert_array_equal(np.asarray(x + 1.0), np.zeros(shape) + 1.0)
    np.testing.assert_array_equal(np.asarray(xp.eye(shape[0], shape[-1], device="dask") * 2.0),
                                  np.eye(shape[0], shape[-1]) * 2.0)
    np.testing.assert_array_equal(np.asarray(xp.arange(0, device="dask") + 1), np.arange(0) + 1)
    a, b = xp.broadcast_arrays(xp.ones((3, 1), device="dask"), xp.ones((0,), device="dask"))
    assert a.shape == b.shape == (3, 0) and np.asarray(a + b).shape == (3, 0)
    np.testing.assert_array_equal(np.asarray(xp.linalg.outer(xp.ones(0, device="dask"), xp.ones(4, device="dask"))),
                                  np.zeros((0, 4)))
    # A pad of nothing (cumulative_prod's include_initial) is all padding.
    np.testing.assert_array_equal(np.asarray(xp.cumulative_prod(xp.ones(shape, device="dask"), axis=0,
                                                                include_initial=True)),
                                  np.concatenate([np.ones((1,) + shape[1:]), np.cumprod(np.ones(shape), axis=0)]))


def test_unstack_logaddexp_and_nextafter_as_on_the_cpu(scheduler):
    # Three of array-api-tests' failures on this device (unstack, logaddexp, nextafter).
    a = np.arange(300.0).reshape(3, 100)
    x, = on_dask(a)
    for axis in (0, 1):
        parts = xp.unstack(x, axis=axis)
        assert len(parts) == a.shape[axis]
        for part, expected in zip(parts, np.moveaxis(a, axis, 0)):
            np.testing.assert_array_equal(np.asarray(part), expected)
    assert xp.unstack(xp.zeros((0, 4), device="dask"), axis=1)[0].shape == (0,)
    special = np.array([-np.inf, -1.0, -0.0, 0.0, 1e-300, 1.0, np.inf, np.nan])
    s1, s2 = np.meshgrid(special, special)
    d1, d2 = on_dask(s1, s2)
    cpu1, cpu2 = xp.asarray(s1), xp.asarray(s2)
    for name in ("logaddexp", "nextafter"):
        np.testing.assert_array_equal(np.asarray(getattr(xp, name)(d1, d2)), np.asarray(getattr(xp, name)(cpu1, cpu2)))


def layers(x):
    """The names of the layers of x's dask graph (their tokens dropped)."""
    return " ".join(to_dask(x).__dask_graph__().layers)


rng = np.random.default_rng(7)
A = rng.random((40, 30))
SPD = A.T @ A + np.eye(30)
STACK = rng.random((5, 6, 6)) + 2.0 * np.eye(6)

# name: (arrayx on the dask device, NumPy), over multi-chunk A (40x30), SPD (30x30), STACK (5x6x6).
MAPPED = {
    "concat": (lambda m, a, s, t: m.concat([a, a * 2.0], axis=1), lambda a, s, t: np.concatenate([a, a * 2.0], axis=1)),
    "stack": (lambda m, a, s, t: m.stack([a, a], axis=1), lambda a, s, t: np.stack([a, a], axis=1)),
    "pad": (lambda m, a, s, t: m.tril(a, k=2), lambda a, s, t: np.tril(a, 2)),
    "argmax": (lambda m, a, s, t: m.argmax(a, axis=0), lambda a, s, t: np.argmax(a, axis=0)),
    "argmin": (lambda m, a, s, t: m.argmin(a), lambda a, s, t: np.argmin(a)),
    "cumulative_sum": (lambda m, a, s, t: m.cumulative_sum(a, axis=0), lambda a, s, t: np.cumsum(a, axis=0)),
    "cumulative_prod": (lambda m, a, s, t: m.cumulative_prod(a + 0.5, axis=1),
                        lambda a, s, t: np.cumprod(a + 0.5, axis=1)),
    "sort": (lambda m, a, s, t: m.sort(a, axis=0, descending=True), lambda a, s, t: -np.sort(-a, axis=0)),
    "argsort": (lambda m, a, s, t: m.argsort(a, axis=1), lambda a, s, t: np.argsort(a, axis=1, kind="stable")),
    "tensordot": (lambda m, a, s, t: m.tensordot(a, a, axes=([0], [0])),
                  lambda a, s, t: np.tensordot(a, a, axes=([0], [0]))),
    "vecdot": (lambda m, a, s, t: m.vecdot(a, a), lambda a, s, t: np.sum(a * a, axis=-1)),
    "fft": (lambda m, a, s, t: m.fft.fft(m.astype(a, m.complex128), axis=0), lambda a, s, t: np.fft.fft(a, axis=0)),
    "rfftn": (lambda m, a, s, t: m.fft.rfftn(a), lambda a, s, t: np.fft.rfftn(a)),
    "cholesky": (lambda m, a, s, t: m.linalg.cholesky(s), lambda a, s, t: np.linalg.cholesky(s)),
    "inv": (lambda m, a, s, t: m.linalg.inv(s), lambda a, s, t: np.linalg.inv(s)),
    "solve": (lambda m, a, s, t: m.linalg.solve(s, a[0]), lambda a, s, t: np.linalg.solve(s, a[0])),
    "solve matrix": (lambda m, a, s, t: m.linalg.solve(s, m.matrix_transpose(a)), lambda a, s, t: np.linalg.solve(s, a.T)),
    "det of a stack": (lambda m, a, s, t: m.linalg.det(t), lambda a, s, t: np.linalg.det(t)),
    "solve a stack": (lambda m, a, s, t: m.linalg.solve(t, t[0, 0]), lambda a, s, t: np.linalg.solve(t, t[0, 0])),
    "svdvals": (lambda m, a, s, t: m.linalg.svdvals(a), lambda a, s, t: np.linalg.svdvals(a)),
    "eigvalsh": (lambda m, a, s, t: m.linalg.eigvalsh(s), lambda a, s, t: np.linalg.eigvalsh(s)),
}


@pytest.mark.parametrize("name", MAPPED)
def test_mapped_primitives_run_on_dask_without_a_host_transfer(scheduler, host_transfers, name):
    build, oracle = MAPPED[name]
    result = build(xp, *on_dask(A, SPD, STACK))
    graph = to_dask(result)
    assert host_transfers[0] == 0
    assert isinstance(graph, da.Array)
    # Decompositions and solves round differently in blocks than LAPACK does whole.
    np.testing.assert_allclose(np.asarray(result), oracle(A, SPD, STACK), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("matrix", ["tall", "fat", "stack"])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_and_svd_run_on_dask_without_a_host_transfer(scheduler, host_transfers, matrix, mode):
    a = {"tall": A, "fat": A.T, "stack": STACK}[matrix]
    x, = on_dask(a)
    q, r = xp.linalg.qr(x, mode=mode)
    u, s, vh = xp.linalg.svd(x, full_matrices=mode == "complete")
    for factor in (q, r, u, s, vh):
        to_dask(factor)
    assert host_transfers[0] == 0
    if matrix != "stack" and mode == "reduced":   # dask's own tsqr/sfqr and SVD
        assert "qr" in layers(q) and "svd" in layers(s)
    # Factors are unique up to signs: check what defines them, to LAPACK's rounding.
    q, r, u, s, vh = (np.asarray(f) for f in (q, r, u, s, vh))
    k = s.shape[-1]
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    gram = np.swapaxes(q, -1, -2) @ q
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(q.shape[-1]), gram.shape), atol=1e-12)
    np.testing.assert_allclose(np.triu(r), r)
    np.testing.assert_allclose(s, np.linalg.svd(a)[1], rtol=1e-12)
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, atol=1e-12)
    assert u.shape == np.linalg.svd(a, full_matrices=mode == "complete")[0].shape


def test_linalg_and_fft_use_dasks_own_where_it_has_them(scheduler):
    a, s = on_dask(A, SPD)
    assert "cholesky" in layers(xp.linalg.cholesky(s))
    assert "lu-" in layers(xp.linalg.inv(s)) and "lu-" in layers(xp.linalg.solve(s, a[0]))
    assert "fft" in layers(xp.fft.rfftn(a))
    assert "concatenate" in layers(xp.concat([a, a])) and "cumsum" in layers(xp.cumulative_sum(a, axis=0))


def test_without_scipy_dask_linalg_runs_per_matrix_on_dask(scheduler, host_transfers, monkeypatch):
    # dask.array.linalg's cholesky, inv and solve need SciPy, which the dask extra brings but a user may lack.
    from arrayx._dask import lowering
    monkeypatch.setattr(lowering, "scipy_available", lambda: False)
    a, s = on_dask(A, SPD)
    results = [xp.linalg.cholesky(s), xp.linalg.inv(s), xp.linalg.solve(s, a[0])]
    assert not any("cholesky" in layers(r) or "lu-" in layers(r) for r in results)
    assert host_transfers[0] == 0
    oracles = [np.linalg.cholesky(SPD), np.linalg.inv(SPD), np.linalg.solve(SPD, A[0])]
    for result, oracle in zip(results, oracles):
        # One LAPACK call per matrix, as the CPU makes it, only the chunking differs.
        np.testing.assert_allclose(np.asarray(result), oracle, rtol=1e-12, atol=1e-12)


def exiting_once(block, marker):
    """The block, a little later; the first task to run anywhere exits its
    worker process instead (creating `marker` is atomic: one task wins)."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        time.sleep(0.02)
        return block
    os._exit(1)


def test_a_worker_killed_mid_computation_still_gives_the_right_answer(client, data, tmp_path):
    # dask reruns the tasks the dead worker ran or held; its nanny starts a new one.
    a = np.tile(data[0], (4, 1))
    marker = str(tmp_path / "exited")
    source = da.from_array(a, chunks=(20, 10)).map_blocks(exiting_once, marker, meta=np.empty((0, 0)))
    before = set(client.scheduler_info()["workers"])
    result = np.asarray(xp.sum(xp.exp(from_dask(source)) * 2.0, axis=0))
    np.testing.assert_allclose(result, np.sum(np.exp(a) * 2.0, axis=0), rtol=1e-12)
    assert os.path.exists(marker)
    client.wait_for_workers(2, timeout=30)
    assert len(set(client.scheduler_info()["workers"]) - before) == 1
