"""`python -m arrayx.neon`: legacy neon scripts run unmodified, with
`import neon...` resolving to arrayx's shim."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

LEGACY_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from neon.backends import gen_backend
    from neon.backends.backend import Tensor, OpTreeNode
    from neon.backends.nervanacpu import CPUTensor
    from neon import NervanaObject
    import neon

    be = gen_backend('cpu', rng_seed=0, batch_size=4)
    assert NervanaObject.be is be and neon.NervanaObject.be is be
    x0 = be.ones((2, 2), name='x0')
    x1 = be.ones((2, 2), name='x1')
    f = x0 + x1               # op-tree creation
    f_val = be.empty((2, 2))  # output buffer allocation
    f_val[:] = f              # execution
    print(f)
    print(f_val.get().tolist())
    assert isinstance(f_val, Tensor) and isinstance(f_val, CPUTensor) and isinstance(f, OpTreeNode)

    w = be.array(np.arange(6.0).reshape(2, 3), name='w')
    h = be.iobuf(3)
    be.compound_dot(w.T, f_val, h[:, 0:2])
    print(h.get().tolist())
    print("argv", sys.argv[1:], __name__)
""")


# A custom layer as neon users wrote them: conv + max-pool kernels from the
# backend, a cost's gradient from Autodiff, checked inside the script against
# NumPy (float32 sums of 9 products: 1e-5).
CUSTOM_LAYER_SCRIPT = textwrap.dedent("""
    import numpy as np
    from neon import NervanaObject
    from neon.backends import gen_backend, Autodiff

    class TinyConv(NervanaObject):
        def __init__(self, N, C, K, H, W):
            self.layer = self.be.conv_layer(np.float32, N, C, K, H=H, W=W, R=3, S=3, pad_h=1, pad_w=1)
            self.pool = self.be.pool_layer(np.float32, "max", N, K, H=H, W=W, R=2, S=2)
            self.W = self.be.array(np.random.RandomState(0).uniform(-1, 1, self.layer.dimF2))

        def fprop(self, x):
            out = self.be.iobuf(self.layer.dimO2[0])
            self.be.fprop_conv(self.layer, x, self.W, out)
            pooled = self.be.iobuf(self.pool.dimO2[0])
            self.be.fprop_pool(self.pool, out, pooled)
            return out, pooled

    be = gen_backend("cpu", batch_size=2)
    layer = TinyConv(2, 1, 2, 4, 4)
    x_np = np.random.RandomState(1).uniform(-1, 1, (16, 2)).astype(np.float32)
    out, pooled = layer.fprop(be.array(x_np))

    I = np.pad(x_np.reshape(4, 4, 2), ((1, 1), (1, 1), (0, 0)))
    F = layer.W.get().reshape(3, 3, 2)
    ref = np.einsum("rsk,pqrsn->kpqn", F, np.lib.stride_tricks.sliding_window_view(I, (3, 3), axis=(0, 1))
                    .transpose(0, 1, 3, 4, 2))
    pooled_ref = ref.reshape(2, 2, 2, 2, 2, 2).max(axis=(2, 4))
    print("conv", np.abs(out.get() - ref.reshape(32, 2)).max() < 1e-5)
    print("pool", np.abs(pooled.get() - pooled_ref.reshape(8, 2)).max() < 1e-5)

    cost = be.sum(out * out, axis=None)
    grad_W, = Autodiff(cost, be, next_error=None).get_grad_asnumpyarray([out])
    print("grad", np.allclose(grad_W, 2 * out.get()))
""")


def run(args, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "arrayx.neon", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


def test_legacy_script_runs_unmodified(tmp_path):
    script = tmp_path / "legacy_example.py"
    script.write_text(LEGACY_SCRIPT)
    result = run([str(script), "--epochs", "3"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "({'shape': (2, 2), 'op': 'add'}, x0, x1)"
    assert lines[1] == "[[2.0, 2.0], [2.0, 2.0]]"
    assert lines[2] == "[[6.0, 6.0, 0.0, 0.0], [10.0, 10.0, 0.0, 0.0], [14.0, 14.0, 0.0, 0.0]]"
    assert lines[3] == "argv ['--epochs', '3'] __main__"


def test_custom_layer_script_runs(tmp_path):
    script = tmp_path / "custom_layer.py"
    script.write_text(CUSTOM_LAYER_SCRIPT)
    result = run([str(script)], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["conv True", "pool True", "grad True"]


def test_legacy_module_runs_with_dash_m(tmp_path):
    (tmp_path / "legacy_module.py").write_text(LEGACY_SCRIPT)
    result = run(["-m", "legacy_module", "x"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "({'shape': (2, 2), 'op': 'add'}, x0, x1)"
    assert result.stdout.splitlines()[-1] == "argv ['x'] __main__"


def test_script_directory_is_on_the_path_and_errors_propagate(tmp_path):
    (tmp_path / "helper.py").write_text("VALUE = 41\n")
    script = tmp_path / "failing.py"
    script.write_text(textwrap.dedent("""
        import helper
        import neon.backends
        print(helper.VALUE + 1)
        try:
            neon.backends.gen_backend('tpu')
        except ValueError as e:
            print("tpu:", e)
        import neon.no_such_module
    """))
    result = run([str(script)], cwd=REPO)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0] == "42"
    assert result.stdout.splitlines()[1] == "tpu: backend must be one of ('cpu', 'gpu', 'mkl')"
    assert "No module named 'neon.no_such_module'" in result.stderr


def test_usage(tmp_path):
    result = run([], cwd=tmp_path)
    assert result.returncode == 2 and "usage" in result.stderr
    result = run([str(tmp_path / "missing.py")], cwd=tmp_path)
    assert result.returncode == 2 and "can't open file" in result.stderr
