"""`python -m arrayx.ngraph`: seed 004's code examples run verbatim, with
`import ngraph` resolving to arrayx's shim, and print the seed's values."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from arrayx.transformers import transformer_choices

REPO = Path(__file__).resolve().parents[1]

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


def run(tmp_path, source):
    script = tmp_path / "script.py"
    script.write_text(source)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "arrayx.ngraph", str(script)], capture_output=True, text=True,
                          env=env, timeout=120)


def test_seed_examples_print_the_seeds_values(tmp_path):
    proc = run(tmp_path, SEED_EXAMPLES)
    assert proc.returncode == 0, proc.stderr
    # The script runs in this environment: "gpu" is a choice where a CUDA device is registered.
    assert proc.stdout.splitlines() == ["15.0", "8.0 15.0", str(transformer_choices())]


def test_variables_and_assign_through_the_shim(tmp_path):
    proc = run(tmp_path, TRAINING)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ndarray", "True", "True"]
