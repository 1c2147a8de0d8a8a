"""The experiment-then-commit problem (Jiang, Tang and Zhang 2026, arXiv 2607.23432, section 2).

K arms; a pull of arm i yields an outcome o ~ nu_i. During the experiment phase (rounds 1..N) the
reward of a pull is f(o); after it, the learner commits to one arm J for the rounds N+1..T and
collects g(o) each round. f and g are known maps into [0, 1]; the outcome laws are not.

Outcome laws are finite (a shared support of m outcome points and a K x m probability table), which
covers the paper's Bernoulli coordinate class of Theorem 5.3 exactly and any discrete law, and lets
the simulator draw the f- and g-sums of a block of pulls in one go (binomial splitting of the
multinomial counts, see ``sampling``). A continuous law can be used through a discretisation.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import as_float_array, check_int

BERNOULLI = 0  # independent Bernoulli coordinates (x, y), f = x, g = y
DISCRETE = 1   # general finite outcome law with f, g evaluated on the support

_BERNOULLI_SUPPORT = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])


def _check_means(name: str, values, K: int | None = None) -> np.ndarray:
    arr = as_float_array(name, values, f"a vector of {K} means in [0, 1]" if K is not None else "a vector of means in [0, 1]")
    if arr.ndim != 1 or (K is not None and arr.size != K):
        want = f"a vector of {K} means" if K is not None else "a vector of means"
        raise ValueError(f"{name}={values!r} is not allowed: expected {want}")
    if arr.size < 2:
        raise ValueError(f"{name}={values!r} is not allowed: expected K >= 2 arms")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 1):
        raise ValueError(f"{name}={values!r} is not allowed: expected means in [0, 1]")
    return arr


def check_horizons(N, T) -> tuple[int, int]:
    """Validate 1 <= N < T (the commitment phase has at least one round)."""
    T = check_int("T", T, 2)
    N = check_int("N", N, 1, T - 1)
    return N, T


@dataclass(frozen=True, eq=False)
class CommitProblem:
    """K arms, experiment length N, horizon T; outcome law per arm and the rewards f, g.

    Attributes
    ----------
    support : (m, d) outcome points shared by the arms.
    probs : (K, m) probability of each outcome point for each arm (rows sum to 1).
    f_values, g_values : (m,) f and g evaluated on the support, in [0, 1].
    N, T : experiment length and horizon, 1 <= N < T.
    kind : BERNOULLI (the class of Theorem 5.3, simulated with two binomials per block) or DISCRETE.
    mu_f, mu_g : (K,) mean rewards; regret is measured with them (equation 2 of the paper).
    """

    support: np.ndarray
    probs: np.ndarray
    f_values: np.ndarray
    g_values: np.ndarray
    N: int
    T: int
    kind: int
    mu_f: np.ndarray
    mu_g: np.ndarray
    names: tuple = field(default=())

    # ----------------------------------------------------------------- constructors
    @classmethod
    def bernoulli(cls, mu_f, mu_g, N, T, names=None) -> CommitProblem:
        """Outcome (x, y) with independent x ~ Bernoulli(mu_f,i), y ~ Bernoulli(mu_g,i); f = x, g = y.

        This is the subclass E_coord of Theorem 5.3 (the lower-bound class).
        """
        mu_f = _check_means("mu_f", mu_f)
        mu_g = _check_means("mu_g", mu_g, mu_f.size)
        N, T = check_horizons(N, T)
        # P(x, y) over the support (0,0), (0,1), (1,0), (1,1)
        probs = np.stack([(1 - mu_f) * (1 - mu_g), (1 - mu_f) * mu_g, mu_f * (1 - mu_g), mu_f * mu_g], axis=1)
        return cls(_BERNOULLI_SUPPORT.copy(), probs, np.array([0.0, 0.0, 1.0, 1.0]),
                   np.array([0.0, 1.0, 0.0, 1.0]), N, T, BERNOULLI, mu_f.copy(), mu_g.copy(),
                   _names(names, mu_f.size))

    @classmethod
    def discrete(cls, support, probs, f, g, N, T, names=None) -> CommitProblem:
        """General finite outcome law: ``probs[i, j]`` = P(o = support[j]) for arm i.

        ``f`` and ``g`` are called on each support point (a 1-d array) and must return numbers in [0, 1].
        """
        support = as_float_array("support", support, "m outcome points, an (m, d) array of numbers")
        if support.ndim == 1:
            support = support[:, None]
        if support.ndim != 2 or support.shape[0] < 1:
            raise ValueError(f"support of shape {support.shape} is not allowed: expected m outcome points (m, d)")
        probs = as_float_array("probs", probs, "a (K, m) array of probabilities")
        m = support.shape[0]
        if probs.ndim != 2 or probs.shape[1] != m or probs.shape[0] < 2:
            raise ValueError(f"probs of shape {probs.shape} is not allowed: expected (K, {m}) with K >= 2")
        if not np.all(np.isfinite(probs)) or np.any(probs < 0) or not np.allclose(probs.sum(axis=1), 1.0, atol=1e-9):
            raise ValueError("probs is not allowed: expected nonnegative rows that sum to 1")
        probs = probs / probs.sum(axis=1, keepdims=True)
        fv = np.array([float(f(o)) for o in support])
        gv = np.array([float(g(o)) for o in support])
        for name, v in (("f", fv), ("g", gv)):
            if not np.all(np.isfinite(v)) or np.any(v < 0) or np.any(v > 1):
                raise ValueError(f"{name} is not allowed: its values on the support must lie in [0, 1], got {v.tolist()}")
        N, T = check_horizons(N, T)
        return cls(support, probs, fv, gv, N, T, DISCRETE, probs @ fv, probs @ gv, _names(names, probs.shape[0]))

    def with_horizon(self, N, T) -> CommitProblem:
        """The same arms with another experiment length and horizon."""
        N, T = check_horizons(N, T)
        return replace(self, N=N, T=T)

    # ----------------------------------------------------------------- derived quantities
    @property
    def K(self) -> int:
        return int(self.mu_f.size)

    @property
    def m(self) -> int:
        return int(self.support.shape[0])

    @property
    def best_f(self) -> int:
        return int(np.argmax(self.mu_f))

    @property
    def best_g(self) -> int:
        return int(np.argmax(self.mu_g))

    @property
    def gaps_f(self) -> np.ndarray:
        return self.mu_f.max() - self.mu_f

    @property
    def gaps_g(self) -> np.ndarray:
        return self.mu_g.max() - self.mu_g

    @property
    def cdf(self) -> np.ndarray:
        """(K, m) cumulative outcome probabilities (per-pull draws by inversion)."""
        c = np.cumsum(self.probs, axis=1)
        c[:, -1] = 1.0
        return c

    def regret_parts(self, pulls, committed) -> tuple[np.ndarray, np.ndarray]:
        """Equation (2): sum_t (mu_f* - mu_f(I_t)) and (T - N)(mu_g* - mu_g(J)), per run."""
        pulls = np.asarray(pulls)
        committed = np.asarray(committed)
        experiment = pulls @ self.gaps_f
        commitment = (self.T - self.N) * self.gaps_g[committed]
        return experiment, commitment

    def __repr__(self) -> str:
        kind = "bernoulli" if self.kind == BERNOULLI else f"discrete(m={self.m})"
        return (f"CommitProblem({kind}, K={self.K}, N={self.N}, T={self.T}, "
                f"mu_f={np.round(self.mu_f, 4).tolist()}, mu_g={np.round(self.mu_g, 4).tolist()})")


def _names(names, K: int) -> tuple:
    if names is None:
        return tuple(f"arm {i + 1}" for i in range(K))
    names = tuple(str(n) for n in names)
    if len(names) != K:
        raise ValueError(f"names={names!r} is not allowed: expected {K} names")
    return names
