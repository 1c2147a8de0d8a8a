"""The rewards every policy sees in one replication, by arm and pull number.

Common random numbers: for seed index s, arm i has a 64-bit key ``seeds.arm_reward_key(seed, s, i)``
(the first word of ``SeedSequence(seed, spawn_key=(s, 0, i))``) and the reward of its n-th pull is a
pure function of (key, n) (``horizonbandits.counter_rng``). So every policy run on seed s sees the
same reward for the n-th pull of arm i, and the rewards for a horizon T' < T are a prefix of those
for T (horizon-agnostic runs can be read off at earlier horizons). ``reward_source`` hands the
kernels these rewards lazily (each kernel draws a pull's reward when it makes it, see
``rising.rewards``); ``draw_observations`` fills the same numbers into a table for the plain-Python
references and for anyone who wants to look at them. Before 2026-12-01 the table was drawn with
numpy's generator (K x T draws per seed); the rewards, and so every stored number, changed then.
The policy's own randomness comes from ``policy_stream_seed(seed, s)``, spawn key (s, 1).
"""
from __future__ import annotations

from functools import cached_property

import numpy as np
from numba import njit

from .. import seeds
from ..errors import check_int
from .instances import RisingInstance, check_noise
from .rewards import BERNOULLI, GAUSSIAN, TABLE, RewardSource


class Observations:
    """Rewards of one seed: ``X[i, n]`` is the reward of the n-th pull of arm i (n = 1..T).

    ``X[i, 0]`` holds mu_i(0), the deterministic convention X_i(0) := mu_i(0) of the proofs.
    ``C`` and ``W`` are running sums used by the kernels for O(1) window sums:
    ``C[i, n + 1] = sum_{l=1}^{n} X[i, l]`` with ``C[i, 0] = -X[i, 0]``, and
    ``W[i, n + 1] = sum_{l=0}^{n} l X[i, l]`` with ``W[i, 0] = 0``, so the sum of X over l = a..b is
    ``C[i, b + 1] - C[i, a]`` (for a = 0 the leading -X[i, 0] adds mu_i(0) back).

    Why mu_i(0) is kept out of the running sum: the sums of the observed rewards then start at an
    exact 0, so a window sum that does not reach back to pull 0 is the same floating-point number
    for two arms whose rewards in the window are the same (exactly so for 0/1 rewards), whatever
    their mu_i(0). Started at a non-integer mu_i(0), as before 2026-12-01, such sums differed in
    the last bit and "ties go to the lowest index" failed on exact ties (IMDB, T = 5,000: 8 rounds
    for R-ed-UCB, 224 for SW-UCB). They are plain sequential sums (numpy's cumsum), which the
    reference implementations reproduce with a running total (``RunningSums``), so kernel and
    reference round identically.
    """

    def __init__(self, X: np.ndarray):
        self.X = np.ascontiguousarray(X, dtype=np.float64)

    @property
    def K(self) -> int:
        return self.X.shape[0]

    @property
    def T(self) -> int:
        return self.X.shape[1] - 1

    @property
    def args(self) -> tuple:
        """The table as a kernel's reward source (``rising.rewards``, TABLE mode)."""
        return TABLE, self.X, 0.0, np.zeros(self.K, dtype=np.uint64)

    @cached_property
    def C(self) -> np.ndarray:
        out = np.zeros((self.K, self.T + 2))
        out[:, 0] = -self.X[:, 0]
        np.cumsum(self.X[:, 1:], axis=1, out=out[:, 2:])
        return out

    @cached_property
    def W(self) -> np.ndarray:
        out = np.zeros((self.K, self.T + 2))
        _weighted_running_sums(self.X, out)
        return out


@njit(cache=True)
def _weighted_running_sums(X, out):
    """out[i, n + 1] = sum_{l=0}^{n} l X[i, l], accumulated in order: the same roundings as numpy's
    cumsum of X * l (a product rounded, then added) in one pass instead of three (14 -> 2 ns per entry)."""
    for i in range(X.shape[0]):
        acc = 0.0
        for n in range(X.shape[1]):
            acc += X[i, n] * float(n)
            out[i, n + 1] = acc


def arm_seed_sequence(seed: int, s: int, i: int) -> np.random.SeedSequence:
    return seeds.arm_stream(seed, s, i)


def policy_stream_seed(seed: int, s: int) -> int:
    """64-bit seed of the policy's own random stream for seed index s (the layout is in ``seeds``)."""
    return seeds.policy_stream_seed(seed, s)


def reward_source(inst: RisingInstance, seed: int = 0, s: int = 0, noise=None) -> RewardSource:
    """The lazy rewards of seed index s under the instance's noise model (or ``noise`` if given),
    for every pull up to the instance's T_max: nothing is drawn until a kernel pulls."""
    seed = check_int("seed", seed, 0)
    s = check_int("s", s, 0)
    return checked_reward_source(inst, resolve_noise(inst, noise), seed, s)


def resolve_noise(inst: RisingInstance, noise=None):
    """The observation model a run uses: the instance's when ``noise`` is None, else ``noise`` checked."""
    return inst.noise if noise is None else check_noise(noise, inst.means)


def checked_reward_source(inst: RisingInstance, noise, seed: int, s: int) -> RewardSource:
    """``reward_source`` for arguments already checked (``noise`` from ``resolve_noise``): what
    ``simulate`` calls once per seed index."""
    keys = np.array([seeds.arm_reward_key(seed, s, i) for i in range(inst.K)], dtype=np.uint64)
    if isinstance(noise, str):  # bernoulli
        return RewardSource(BERNOULLI, inst.means, 0.0, keys)
    if noise == 0.0:  # deterministic: the means are the rewards
        return RewardSource(TABLE, inst.means, 0.0, keys)
    return RewardSource(GAUSSIAN, inst.means, noise, keys)


def draw_observations(inst: RisingInstance, T: int, seed: int = 0, s: int = 0, noise=None) -> Observations:
    """The reward table of seed index s under the instance's noise model (or ``noise`` if given):
    pulls 0..T of ``reward_source(inst, seed, s, noise)``, the numbers the kernels draw lazily."""
    T = inst.check_horizon(T)
    return Observations(reward_source(inst, seed, s, noise).table_of(T))
