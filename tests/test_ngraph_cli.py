"""`python -m arrayx.ngraph`: seed 004's code examples run verbatim, with
`import ngraph` resolving to arrayx's shim, and print the seed's values;
ngraph-python's walk-through notebooks (examples/ngraph_walk_through) run
unmodified and train."""

import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from arrayx.transformers import transformer_choices

REPO = Path(__file__).resolve().parents[1]
WALK_THROUGH = REPO / "examples" / "ngraph_walk_through"

# Seed 004's examples, in the order the seed gives them.
SEED_EXAMPLES = textwrap.dedent("""
    from ngraph.transformers import make_transformer
    transformer = make_transformer()

    import ngraph.transformers as ngt
    available_transformers = ngt.transformer_choices()
    if 'gpu' in available_transformers:
        factory = ngt.make_transformer_factory('gpu')
        ngt.set_transformer_factory(factory)

    transformer = ngt.make_transformer()

    import ngraph as ng

    a = ng.constant(4)
    b = ng.placeholder(())
    c = ng.placeholder(())
    d = ng.multiply(a, b)
    e = ng.add(d, c)

    example_comp = transformer.computation(e, b, c)

    result_e = example_comp(2, 7)
    print(result_e)

    example_comp2 = transformer.computation([d, e], b, c)
    result_d, result_e = example_comp2(2, 7)
    print(result_d, result_e)
    print(available_transformers)
""")

# Variables, deriv and assign through the shim: a train and a test computation share state.
TRAINING = textwrap.dedent("""
    import numpy as np
    import ngraph as ng
    import ngraph.transformers as ngt

    F = ng.make_axis(length=2, name='F')
    N = ng.make_axis(length=8, name='N')
    x = ng.placeholder([F, N])
    y = ng.placeholder([N])
    w = ng.variable([F], initial_value=0.0)
    cost = ng.mean(ng.square(ng.dot(w, x) - y), out_axes=())
    t = ngt.make_transformer()
    train = t.computation([cost, ng.assign(w, w - 0.1 * ng.deriv(cost, w))], x, y)
    test = t.computation(cost, x, y)
    xs = np.random.default_rng(0).standard_normal((2, 8))
    ys = np.array([1.5, -2.0]) @ xs
    first = float(test(xs, ys))
    for _ in range(300):
        train(xs, ys)
    print(type(test(xs, ys)).__name__, first > 1.0, float(test(xs, ys)) < 1e-6)
""")


# The data module the walk-through notebooks import: the interface and the
# distribution of ngraph-python's examples/walk_through/gendata.py (this code
# is the test's own). Each class k draws x = A_k z + b_k, with A_k and b_k
# uniform in [-1, 1] and z normal with standard deviation 0.3 per feature.
GENDATA = textwrap.dedent("""
    import math

    import numpy as np


    class MixtureGenerator:
        def __init__(self, pvals, shape, seed=0):
            self.shape = (shape,) if isinstance(shape, int) else tuple(shape)
            size = math.prod(self.shape)
            self.rng = np.random.default_rng(seed)
            self.transforms = self.rng.uniform(-1, 1, (len(pvals), size, size))
            self.offsets = self.rng.uniform(-1, 1, (len(pvals), size))
            # The last class takes the probability the others leave, as gendata's does.
            self.pvals = np.append(pvals[:-1], 1 - sum(pvals[:-1]))

        def gen_data(self, batch_size, n_batches):
            XS, YS = [], []
            for _ in range(n_batches):
                ys = self.rng.choice(len(self.pvals), size=batch_size, p=self.pvals)
                z = self.rng.normal(0, 0.3, (batch_size, self.offsets.shape[1]))
                xs = np.einsum("nij,nj->ni", self.transforms[ys], z) + self.offsets[ys]
                # Features first, samples along the last axis: shape + (batch_size,).
                XS.append(xs.T.reshape(self.shape + (batch_size,)))
                YS.append(ys)
            return XS, YS
""")


def run_script(script, *path):
    """`python -m arrayx.ngraph script`, with `path` after this checkout on PYTHONPATH."""
    entries = [str(REPO), *map(str, path), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(entries))
    return subprocess.run([sys.executable, "-m", "arrayx.ngraph", str(script)], capture_output=True, text=True,
                          env=env, timeout=120)


def run(tmp_path, source):
    script = tmp_path / "script.py"
    script.write_text(source)
    return run_script(script)


def run_walk_through(tmp_path, name):
    """A committed walk-through script as it is, with the test's gendata importable."""
    (tmp_path / "gendata.py").write_text(GENDATA)
    proc = run_script(WALK_THROUGH / f"{name}.py", tmp_path)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_seed_examples_print_the_seeds_values(tmp_path):
    proc = run(tmp_path, SEED_EXAMPLES)
    assert proc.returncode == 0, proc.stderr
    # The script runs in this environment: "gpu" is a choice where a CUDA device is registered.
    assert proc.stdout.splitlines() == ["15.0", "8.0 15.0", str(transformer_choices())]


def test_variables_and_assign_through_the_shim(tmp_path):
    proc = run(tmp_path, TRAINING)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ndarray", "True", "True"]


def test_walk_through_graph_introduction_prints_x_plus_one(tmp_path):
    # The notebook runs its x + 1 loop twice: the complete program, then step by step.
    assert run_walk_through(tmp_path, "Graph_Introduction").splitlines() == [str(float(i + 1)) for i in range(5)] * 2


def test_walk_through_logistic_regression_part_1_trains(tmp_path):
    out = run_walk_through(tmp_path, "Logistic_Regression_Part_1")
    losses = [float(v) for v in re.findall(r"loss (\S+)", out)]
    assert len(losses) == 10 * 10   # 10 epochs of 10 batches
    # W starts at 0: every prediction is 1/2, a loss of log 2 per sample (float32 rounding).
    assert math.isclose(losses[0], math.log(2), rel_tol=1e-6)
    assert sum(losses[-10:]) / 10 < math.log(2) / 2


def test_walk_through_logistic_regression_part_2_trains(tmp_path):
    out = run_walk_through(tmp_path, "Logistic_Regression_Part_2")
    lines = out.splitlines()
    assert lines[0] == "['W', 'b']"
    start = float(re.search(r"Starting avg loss: (\S+)", out).group(1))
    epochs = [float(v) for v in re.findall(r"avg loss (\S+)", out)]
    # 4 evaluation batches of summed losses over 128 samples, each log 2 at W = 0, b = 0.
    assert math.isclose(start, 4 * math.log(2), rel_tol=1e-6)
    assert len(epochs) == 10 and max(epochs) < start and epochs[-1] < start / 2
