"""`python -m arrayx.ngraph`: seed 004's code examples run verbatim, with
`import ngraph` resolving to arrayx's shim, and print the seed's values;
ngraph-python's walk-through notebooks (examples/ngraph_walk_through) run
unmodified and train."""

import importlib.util
import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

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


def walk_through_command(name):
    return f"python -m arrayx.ngraph examples/ngraph_walk_through/{name}.py"


def run_walk_through(name):
    """A committed walk-through script as it is, run by its command as a reader
    of a fresh clone runs it: from the repository's root, with only arrayx on
    the path (the script imports gendata.py from beside it)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, *walk_through_command(name).split()[1:]], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def load_gendata():
    """The walk-through's gendata.py, the one copy the scripts import."""
    spec = importlib.util.spec_from_file_location("gendata", WALK_THROUGH / "gendata.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_seed_examples_print_the_seeds_values(tmp_path):
    proc = run(tmp_path, SEED_EXAMPLES)
    assert proc.returncode == 0, proc.stderr
    # The script runs in this environment: "gpu" is a choice where a CUDA device is registered.
    assert proc.stdout.splitlines() == ["15.0", "8.0 15.0", str(transformer_choices())]


def test_variables_and_assign_through_the_shim(tmp_path):
    proc = run(tmp_path, TRAINING)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ndarray", "True", "True"]


def test_walk_through_graph_introduction_prints_x_plus_one():
    # The notebook runs its x + 1 loop twice: the complete program, then step by step.
    assert run_walk_through("Graph_Introduction").splitlines() == [str(float(i + 1)) for i in range(5)] * 2


def test_walk_through_logistic_regression_part_1_trains():
    out = run_walk_through("Logistic_Regression_Part_1")
    losses = [float(v) for v in re.findall(r"loss (\S+)", out)]
    assert len(losses) == 10 * 10   # 10 epochs of 10 batches
    # W starts at 0: every prediction is 1/2, a loss of log 2 per sample (float32 rounding).
    assert math.isclose(losses[0], math.log(2), rel_tol=1e-6)
    assert sum(losses[-10:]) / 10 < math.log(2) / 2


def test_walk_through_logistic_regression_part_2_trains():
    out = run_walk_through("Logistic_Regression_Part_2")
    lines = out.splitlines()
    assert lines[0] == "['W', 'b']"
    start = float(re.search(r"Starting avg loss: (\S+)", out).group(1))
    epochs = [float(v) for v in re.findall(r"avg loss (\S+)", out)]
    # 4 evaluation batches of summed losses over 128 samples, each log 2 at W = 0, b = 0.
    assert math.isclose(start, 4 * math.log(2), rel_tol=1e-6)
    assert len(epochs) == 10 and max(epochs) < start and epochs[-1] < start / 2


def test_gendata_draws_each_class_with_its_probability_features_first():
    """The walk-through's data: batches of features of the given shape plus a
    trailing batch axis, classes drawn with pvals (the last takes the rest),
    the features of each class an affine image of N(0, 0.3^2) noise."""
    g = load_gendata().MixtureGenerator([0.25, 0.75], (2, 3), seed=1)
    XS, YS = g.gen_data(4000, 2)
    assert [x.shape for x in XS] == [(2, 3, 4000)] * 2 and [y.shape for y in YS] == [(4000,)] * 2
    ys = np.concatenate(YS)
    # 8000 Bernoulli(0.25) draws: the frequency's standard deviation is 0.0048; 5 of them.
    assert abs(np.mean(ys == 0) - 0.25) < 0.025
    xs = np.concatenate([x.reshape(6, -1) for x in XS], axis=1)
    for k in (0, 1):
        # The class mean is its offset b_k: the noise's mean over n samples is within 5 sd of 0.
        samples = xs[:, ys == k]
        bound = 5 * 0.3 * np.sqrt(6) / np.sqrt(samples.shape[1])
        np.testing.assert_allclose(samples.mean(axis=1), g.offsets[k], atol=bound)


def test_the_documented_walk_through_commands_are_the_ones_run_above():
    """README.md gives a walk-through command, and every one README.md and
    docs/ngraph.md give is one the tests above run."""
    pattern = r"^(python -m arrayx\.ngraph examples/ngraph_walk_through/\S+)$"
    readme = re.findall(pattern, (REPO / "README.md").read_text(), re.M)
    commands = readme + re.findall(pattern, (REPO / "docs" / "ngraph.md").read_text(), re.M)
    run_above = ("Graph_Introduction", "Logistic_Regression_Part_1", "Logistic_Regression_Part_2")
    assert readme and set(commands) <= {walk_through_command(name) for name in run_above}
