"""Rising rested bandit instances: K mean curves mu_i(n), n = 0..T_max, and an observation model.

Every instance family is a plain function returning a :class:`RisingInstance`; the simulator only
ever sees the mean table. A new family is one function (see the README).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import as_float_array, check_int, check_real, check_table_memory
from .loaders import callables_table, csv_table, npy_table

NOISE_MODELS = ("gaussian sigma >= 0", "bernoulli")


class RisingInstance:
    """K arms described by their mean curves.

    Parameters
    ----------
    means : array (K, T_max + 1)
        ``means[i, n]`` is mu_i(n). The n-th pull of arm i (n >= 1) has mean mu_i(n); mu_i(0) is the
        value before any pull, used only by the deterministic conventions of the proofs (a policy
        with ``init_pulls=1`` reads X_i(0) := mu_i(0)). Every entry may be any finite real,
        negative too: the model of paper A (section 3) bounds neither the means nor the rewards
        (it asks only for nondecreasing increments, which ``diagnose`` reports rather than
        enforces), and Gaussian rewards are defined around any mean. Only ``noise="bernoulli"``
        needs every mean in [0, 1], and that is checked. The baselines written for rewards in
        [0, 1] (SW-KL-UCB, SW-TS and Rexp3 clip each reward to [0, 1]) then see clipped rewards,
        so a shift of every mean changes their choices while CURE-UCB's stay the same.
    names : optional sequence of K distinct strings.
    noise : float >= 0 or "bernoulli"
        Default observation model: Gaussian noise with this standard deviation (0 gives
        deterministic rewards), or Bernoulli rewards equal to 1 with probability mu (means must
        then lie in [0, 1]).
    """

    def __init__(self, means, names: Sequence[str] | None = None, noise: float | str = 0.01):
        m = as_float_array("means", means, "a 2-D array of numbers (K arms x T_max+1 pull counts)")
        if m.ndim != 2:
            raise ValueError(f"means must be a 2-D array (K arms x T_max+1 pull counts), got shape {m.shape}")
        K, width = m.shape
        if K < 2:
            raise ValueError(f"means has K={K} arms: at least 2 are needed")
        if width < 2:
            raise ValueError(f"means has T_max={width - 1}: at least one pull (columns n = 0..T_max) is needed")
        if not np.all(np.isfinite(m)):
            i, n = np.argwhere(~np.isfinite(m))[0]
            raise ValueError(f"means[{i}, {n}]={m[i, n]!r} is not finite: every mean must be a finite number")
        if names is None:
            names = tuple(f"arm {i}" for i in range(K))
        names = tuple(str(x) for x in names)
        if len(names) != K or len(set(names)) != K:
            raise ValueError(f"names={list(names)!r} is not allowed: expected {K} distinct names")
        self.noise = check_noise(noise, m)
        m.setflags(write=False)
        self.means = m
        self.names = names
        # prefix[i, n] = sum_{l=1}^{n} mu_i(l): the value of pulling arm i n times (np.empty and one
        # zero column: zeros_like filled the whole table first, 4.0 -> 3.5 ms at K = 10, T_max = 100K).
        prefix = np.empty_like(m)
        prefix[:, 0] = 0.0
        np.cumsum(m[:, 1:], axis=1, out=prefix[:, 1:])
        prefix.setflags(write=False)
        self.prefix = prefix
        self._digest = None  # hash of means and names, made on first use (``experiments.instance_digest``)

    @property
    def K(self) -> int:
        return self.means.shape[0]

    @property
    def T_max(self) -> int:
        return self.means.shape[1] - 1

    def check_horizon(self, T, name: str = "T") -> int:
        return check_int(name, T, 1, self.T_max)

    def cumulative(self, T: int) -> np.ndarray:
        """sum_{n=1}^{T} mu_i(n) for every arm (the criterion of Proposition 3.2)."""
        return self.prefix[:, self.check_horizon(T)].copy()

    def with_noise(self, noise) -> RisingInstance:
        """The same mean curves under another observation model. The copy shares the read-only
        ``means`` and ``prefix`` arrays (and their digest) instead of rebuilding them: the noise
        ablation asks for every instance at four noise levels."""
        twin = object.__new__(RisingInstance)
        twin.__dict__.update(self.__dict__)
        twin.noise = check_noise(noise, self.means)
        return twin

    def diagnose(self, T: int | None = None):
        """Per-arm shape checks and the theorems whose hypotheses hold (see ``rising.diagnostics``)."""
        from .diagnostics import diagnose
        return diagnose(self, T)

    @staticmethod
    def from_callables(funcs, T_max: int, names=None, noise=0.01) -> RisingInstance:
        """mu_i(n) = funcs[i](n) for n = 0..T_max (see ``rising.loaders.callables_table``)."""
        means, names = callables_table(funcs, T_max, names=names)
        return RisingInstance(means, names=names, noise=noise)

    @staticmethod
    def from_csv(path, noise=0.01, names=None) -> RisingInstance:
        """Curves from a CSV file: columns arm, n, mean; or one column per arm (``rising.loaders.csv_table``)."""
        means, names = csv_table(path, names=names)
        return RisingInstance(means, names=names, noise=noise)

    @staticmethod
    def from_npy(paths, names=None, noise=0.01, prepend_first: bool = False) -> RisingInstance:
        """Curves from one 2-D .npy file or several 1-D ones (``rising.loaders.npy_table``)."""
        means, names = npy_table(paths, names=names, prepend_first=prepend_first)
        return RisingInstance(means, names=names, noise=noise)

    def __repr__(self) -> str:
        return f"RisingInstance(K={self.K}, T_max={self.T_max}, noise={self.noise!r}, names={list(self.names)})"


def check_noise(noise, means: np.ndarray | None = None):
    """Validate an observation model: a standard deviation >= 0 or the string "bernoulli"."""
    if isinstance(noise, str):
        if noise != "bernoulli":
            raise ValueError(f"noise={noise!r} is not allowed: expected a standard deviation >= 0 or 'bernoulli'")
        if means is not None and (means.min() < 0 or means.max() > 1):
            raise ValueError("noise='bernoulli' is not allowed for these means: Bernoulli rewards need every mean in [0, 1]")
        return noise
    return check_real("noise", noise, 0.0)


# --------------------------------------------------------------------------------------------
# Families
# --------------------------------------------------------------------------------------------

def ltf(a, b, T_max: int = 100_000, noise: float | str = 0.01, names=None) -> RisingInstance:
    """Linear-then-flat curves mu_i(n) = min(b_i, a_i n) (Definition 5.1), n = 0..T_max."""
    a = as_float_array("a", a, "a vector of slopes")
    b = as_float_array("b", b, "a vector of plateaus")
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"a and b must be 1-D of equal length, got shapes {a.shape} and {b.shape}")
    if np.any(a < 0) or np.any(~np.isfinite(a)):
        raise ValueError(f"a={a.tolist()!r} is not allowed: slopes must be finite and >= 0")
    T_max = check_int("T_max", T_max, 1)
    check_table_memory("a", a, a.size, T_max)  # names the slopes: their number K may be the size at fault
    n = np.arange(T_max + 1, dtype=float)
    means = np.minimum(b[:, None], a[:, None] * n[None, :])
    return RisingInstance(means, names, noise)


def ltf_saturating(b, c, T_max: int = 100_000, noise: float | str = 0.01, names=None) -> RisingInstance:
    """LTF curves that saturate exactly at the integer pull count c_i: mu_i(n) = b_i n / c_i for n < c_i, b_i after.

    The slope is a_i = b_i / c_i; the plateau is written as b_i itself (not a_i c_i, which can
    differ from b_i by a rounding) so that the curve is exactly flat from c_i on.
    """
    b = as_float_array("b", b, "a vector of plateaus")
    c = as_float_array("c", c, "a vector of integer saturation counts", dtype=np.int64)
    if b.shape != c.shape or b.ndim != 1:
        raise ValueError(f"b and c must be 1-D of equal length, got shapes {b.shape} and {c.shape}")
    if np.any(c < 1):
        raise ValueError(f"c={c.tolist()!r} is not allowed: saturation counts must be integers >= 1")
    T_max = check_int("T_max", T_max, 1)
    check_table_memory("b", b, b.size, T_max)
    n = np.arange(T_max + 1, dtype=float)
    a = b / c
    # The rising part a_i n for every n, then the plateau written over n >= c_i: the entries of
    # np.where(n >= c, b, a n), without its broadcast (measured 3.5 -> 0.3 ms at K = 4, T_max = 100,000,
    # 2026-12-01; uniform_dominance_ltf builds 5,000 such tables at paper scale).
    means = np.multiply.outer(a, n)
    for i in range(len(b)):
        means[i, c[i]:] = b[i]
    return RisingInstance(means, names, noise)


def ltf_random(rng: np.random.Generator, K: int | None = None, T_ref: int = 100_000,
               integer_saturation: bool = True, T_max: int | None = None,
               noise: float | str = 0.01) -> RisingInstance:
    """A random LTF instance following appendix B.1.1 of the CURE-UCB paper.

    K is drawn uniformly from {2, ..., 5} when None; each plateau b_i ~ U[0.1, 1.0]; each saturation
    time t_sat ~ U[0.05 T_ref, T_ref] and the slope a_i = b_i / t_sat.

    Deviation (documented, a parameter): with ``integer_saturation=True`` (default) t_sat is rounded
    to an integer pull count c_i >= 1 and a_i = b_i / c_i, so that the saturation point falls on a
    pull (Definition 5.1's curves are piecewise linear in the pull count). With real-valued saturation
    points the last rising pull has a partial increment; Theorem 5.2's dominance still held there in
    every case we ran (claim ``A-thm5.2-real-saturation`` of ``uniform_dominance_ltf``: 0 violations in
    1,400 (instance, T) pairs, 200 instances, T from 40 to 20,000), so the rounding is a reading of the
    definition, not a condition of the theorem.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng={rng!r} is not allowed: expected a numpy.random.Generator")
    if K is None:
        K = int(rng.integers(2, 6))
    K = check_int("K", K, 2)
    T_ref = check_int("T_ref", T_ref, 20)
    T_max = T_ref if T_max is None else check_int("T_max", T_max, 1)
    check_table_memory("K", K, K, T_max)
    b = rng.uniform(0.1, 1.0, size=K)
    t_sat = rng.uniform(0.05 * T_ref, T_ref, size=K)
    names = [f"ltf{i}" for i in range(K)]
    if integer_saturation:
        c = np.maximum(np.rint(t_sat).astype(np.int64), 1)
        return ltf_saturating(b, c, T_max=T_max, noise=noise, names=names)
    return ltf(b / t_sat, b, T_max=T_max, noise=noise, names=names)


def prop53(T: int, alpha: float, K: int = 2, noise: float | str = 0.0) -> RisingInstance:
    """The construction of Proposition 5.3 (appendix E), on pull counts n = 0..T.

    mu_1(n) = 1/2 for every n (also n = 0); mu_2(n) = min(1, a_2 n) with a_2 = 1 / floor(alpha T),
    written as n / c_2 for n < c_2 = floor(alpha T) and 1 after; for K > 2, dummy arms constant at
    1/4 (also at n = 0). Deterministic by default (noise = 0), as in the proof.
    """
    T = check_int("T", T, 2)
    alpha = check_real("alpha", alpha, 0.0, 0.5, lo_open=True, hi_open=True)
    K = check_int("K", K, 2)
    c2 = int(np.floor(alpha * T))
    if c2 < 1:
        raise ValueError(f"alpha={alpha!r} is not allowed with T={T}: floor(alpha T) must be >= 1")
    check_table_memory("T", T, K, T)
    n = np.arange(T + 1, dtype=float)
    means = np.empty((K, T + 1))
    means[0] = 0.5
    means[1] = np.where(n >= c2, 1.0, n / c2)
    means[2:] = 0.25
    names = ["constant 1/2", "linear to 1"] + [f"dummy {j}" for j in range(K - 2)]
    return RisingInstance(means, names, noise)


def figure1(T_max: int = 50_000, noise: float | str = 0.01) -> RisingInstance:
    """An early peaker and a late bloomer whose optimal arm differs between T = 10,000 and 30,000.

    Our own pair of concave exponential curves in the spirit of Figure 1 (the paper does not give
    its curves): early peaker mu(n) = 0.3 + 0.3 (1 - exp(-n / 1500)), late bloomer
    mu(n) = 0.1 + 0.85 (1 - exp(-n / 8000)). The early peaker has the larger cumulative reward for
    T <= 15,257 and the late bloomer from T = 15,258 on (``switch_horizons`` finds it).
    """
    T_max = check_int("T_max", T_max, 2)
    check_table_memory("T_max", T_max, 2, T_max, copies=5)  # early, late, their stack, the copy, the prefix sums
    n = np.arange(T_max + 1, dtype=float)
    early = 0.3 + 0.3 * (1.0 - np.exp(-n / 1500.0))
    late = 0.1 + 0.85 * (1.0 - np.exp(-n / 8000.0))
    return RisingInstance(np.vstack([early, late]), ["early peaker", "late bloomer"], noise)
