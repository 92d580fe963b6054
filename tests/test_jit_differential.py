"""jit against eager on random programs.

Each seed writes a small program: elementwise work, reductions, Python
scalar arithmetic, loops, and writes into its arguments (`v[i] = x`,
`v[a:b] = w[a:b]`, `v[:] = x`, `v[mask] = x`, `v[index_array] = x`,
`v += w`), over arrays passed positionally and by keyword, a Python float,
and a global array `G` that changes between calls. The program runs eagerly and under `xp.jit` (twice, with new values,
on one trace) and, for its gradient, under `grad` and `jit(grad)`. The
oracle is the eager run: the same results and dtypes, the same values of
the arguments afterwards, the same exception where eager raises.
"""

import random

import numpy as np
import pytest

import arrayx as xp
from arrayx.autodiff import grad

N = 6
UNARY = ["xp.sin", "xp.tanh", "xp.abs", "xp.negative", "xp.square", "xp.exp"]
BINARY = ["+", "-", "*"]


class Program:
    """A random program `prog(a, b, s, *, c)` as source text."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.lines = []
        self.arrays = ["a", "b", "c"]   # names holding arrays of shape (N,)
        self.temps = 0
        for _ in range(self.rng.randint(3, 10)):
            self.statement()
        returned = self.rng.sample(self.arrays, k=self.rng.randint(1, 2))
        if self.rng.random() < 0.3:
            returned.append("s * 2.0 - 1.0")   # a traced scalar returned: a Python float
        self.lines.append(f"return ({', '.join(returned)},)")
        self.source = "def prog(a, b, s, *, c):\n" + "".join(f"    {line}\n" for line in self.lines)

    def pick(self):
        return self.rng.choice(self.arrays)

    def new(self, expression):
        name = f"t{self.temps}"
        self.temps += 1
        self.lines.append(f"{name} = {expression}")
        self.arrays.append(name)
        return name

    def statement(self):
        r = self.rng
        x, y, v = self.pick(), self.pick(), self.pick()
        i, j = sorted(r.sample(range(N + 1), 2))
        choice = r.randrange(15)
        if choice == 0:
            self.new(f"{r.choice(UNARY)}({x} * 0.1)")
        elif choice == 1:
            self.new(f"{x} {r.choice(BINARY)} {y}")
        elif choice == 2:
            self.new(f"{x} * s + {r.choice([1.5, -2.0, 0.25])}")
        elif choice == 3:
            self.new(f"(s * 0.5 - 1.0) * {x}")
        elif choice == 4:
            self.new(f"xp.where({x} > {y}, {x}, s)")
        elif choice == 5:
            self.new(f"{x} - xp.mean({x})" if r.random() < 0.5 else f"xp.cumulative_sum({x}) * 0.1")
        elif choice == 6:
            self.lines.append(f"{v}[{min(i, N - 1)}] = {r.choice(['s', '3.0', '-1.5'])}")
        elif choice == 7:
            if i < j:
                self.lines.append(f"{v}[{i}:{j}] = {x}[{i}:{j}]")
        elif choice == 8:
            self.lines.append(f"{v}[:] = {r.choice(['0.0', 's', x])}")
        elif choice == 9:
            self.lines.append(f"{v}[{x} > 0.0] = {r.choice(['0.0', 's'])}")
        elif choice == 10:
            self.lines.append(f"{v} {r.choice(['+=', '-=', '*='])} {r.choice([x, 's', '1.0'])}")
        elif choice == 11:
            self.lines.append(f"{v}[xp.asarray([{i % N}, {j % N}])] = {r.choice(['2.0', 's'])}")
        elif choice == 12:
            t = self.new(f"{x} * 1.0")
            steps = r.choice([2, 5, 30])
            self.lines.append(f"for _ in range({steps}):")
            self.lines.append(f"    {t} = {t} * 0.5 + {y} * 0.25")
        elif choice == 13:
            self.new(f"{x} * xp.sum({y} * {y})")
        else:
            self.new(f"{x} * G")


def _arguments(seed, dtype):
    rng = np.random.default_rng(seed)
    a, b, c = (xp.asarray(rng.standard_normal(N).astype(dtype)) for _ in range(3))
    return (a, b, float(rng.uniform(-2, 2))), {"c": c}


def _run(fn, args, kwargs):
    """(results as NumPy values, the arguments' values after the call), or the exception's type."""
    try:
        out = fn(*args, **kwargs)
    except Exception as e:   # the oracle's failures must be jit's too
        return type(e)
    values = [np.asarray(o) if isinstance(o, xp.Array) else o for o in (out if isinstance(out, tuple) else (out,))]
    after = [np.asarray(a) for a in args[:2]] + [np.asarray(kwargs["c"])]
    return values, after


def _assert_same(got, want, dtype, source):
    if isinstance(want, type):
        assert got is want, source
        return
    # Fused reductions may add in another order than the eager plan: a few ulps.
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    for g, w in zip(got[0] + got[1], want[0] + want[1]):
        assert type(g) is type(w), source
        if isinstance(w, np.ndarray):
            assert g.dtype == w.dtype, source
            np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, err_msg=source)
        else:
            assert g == pytest.approx(w, rel=rtol), source


@pytest.mark.parametrize("seed", range(60))
def test_jit_matches_eager_on_a_random_program(seed):
    program = Program(seed)
    namespace = {"xp": xp}
    exec(program.source, namespace)
    prog = namespace["prog"]
    dtype = np.float32 if seed % 3 == 0 else np.float64
    fast = xp.jit(prog)
    for call in range(2):   # the second call runs the first one's trace on new values (a new G: a new trace)
        namespace["G"] = xp.asarray(np.linspace(-1.0, 1.0, N).astype(dtype) * (call + 1))
        args, kwargs = _arguments(1000 * seed + call, dtype)
        want = _run(prog, *_arguments(1000 * seed + call, dtype))
        _assert_same(_run(fast, args, kwargs), want, dtype, program.source)


# A program that overwrites an argument cuts its gradient: grad warns, eagerly and under jit alike.
@pytest.mark.filterwarnings("ignore:gradients. a differentiated array got no gradient")
@pytest.mark.parametrize("seed", range(0, 60, 4))
def test_jit_of_grad_matches_grad_on_a_random_program(seed):
    program = Program(seed)
    namespace = {"xp": xp, "G": xp.asarray(np.linspace(-1.0, 1.0, N))}
    exec(program.source, namespace)
    prog = namespace["prog"]

    def loss(a, b, s, c):
        return xp.sum(prog(a, b, s, c=c)[0] ** 2)

    def gradients(fn):
        args, kwargs = _arguments(seed, np.float64)
        try:
            return [np.asarray(g) for g in fn(*args, kwargs["c"])]
        except Exception as e:   # the oracle's failures must be jit's too
            return type(e)

    want = gradients(grad(loss, argnums=(0, 1)))
    got = gradients(xp.jit(grad(loss, argnums=(0, 1))))
    if isinstance(want, type):
        assert got is want, program.source
        return
    for g, w in zip(got, want):
        # Reordered sums in fused gradient kernels: a few ulps.
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, err_msg=program.source)


def test_a_deep_loop_in_a_random_program_compiles():
    # A chain past the automatic realization depth (2000 nodes), with writes into the argument.
    source = ("def prog(a, b, s, *, c):\n    t = a * 1.0\n    for _ in range(2100):\n        t = t * 0.999 + b * s\n"
              "    a[0] = 1.0\n    a += t\n    return (xp.sum(t),)\n")
    namespace = {"xp": xp}
    exec(source, namespace)
    args, kwargs = _arguments(7, np.float64)
    want = _run(namespace["prog"], *_arguments(7, np.float64))
    _assert_same(_run(xp.jit(namespace["prog"]), args, kwargs), want, np.float64, source)
