# The data module the walk-through scripts beside it import (`import gendata`):
# the interface and the distribution of ngraph-python's
# examples/walk_through/gendata.py, written for arrayx (this code is arrayx's
# own, under the repository's license). Each class k draws x = A_k z + b_k,
# with A_k and b_k uniform in [-1, 1] and z normal with standard deviation 0.3
# per feature.

import math

import numpy as np


class MixtureGenerator:
    """Samples of a mixture of len(pvals) classes over features of `shape`."""

    def __init__(self, pvals, shape, seed=0):
        self.shape = (shape,) if isinstance(shape, int) else tuple(shape)
        size = math.prod(self.shape)
        self.rng = np.random.default_rng(seed)
        self.transforms = self.rng.uniform(-1, 1, (len(pvals), size, size))
        self.offsets = self.rng.uniform(-1, 1, (len(pvals), size))
        # The last class takes the probability the others leave, as gendata's does.
        self.pvals = np.append(pvals[:-1], 1 - sum(pvals[:-1]))

    def gen_data(self, batch_size, n_batches):
        """(XS, YS): n_batches batches of features, each of shape + (batch_size,)
        (samples along the last axis), and their classes, each of (batch_size,)."""
        XS, YS = [], []
        for _ in range(n_batches):
            ys = self.rng.choice(len(self.pvals), size=batch_size, p=self.pvals)
            z = self.rng.normal(0, 0.3, (batch_size, self.offsets.shape[1]))
            xs = np.einsum("nij,nj->ni", self.transforms[ys], z) + self.offsets[ys]
            XS.append(xs.T.reshape(self.shape + (batch_size,)))
            YS.append(ys)
        return XS, YS
