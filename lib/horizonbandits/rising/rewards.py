"""Where a kernel gets the reward of pull n of arm i: a reward source, drawn only for the pulls made.

A source is four values handed to every rising kernel (``source.args``):

- ``mode``: TABLE (``table`` holds the rewards themselves: a user's ``Observations(X)``, or the
  means when the rewards are deterministic), GAUSSIAN (reward = mu_i(n) + sigma z) or BERNOULLI
  (reward = 1 if u < mu_i(n) else 0);
- ``table``: K x (T + 1) floats, the rewards (TABLE) or the means mu_i(n) (GAUSSIAN, BERNOULLI);
  column 0 is X_i(0) := mu_i(0) in every mode;
- ``sigma``: the Gaussian standard deviation (unused otherwise);
- ``keys``: (K,) uint64, arm i's key for the counter-based draws (``horizonbandits.counter_rng``).

``observe(mode, table, sigma, keys, i, n)`` is the reward of pull n >= 1 of arm i. In the random modes
it is drawn from (keys[i], n) alone, so a kernel draws only the rewards of the pulls it makes (up to
a block's rounding) instead of a K x T table, and any two kernels (and ``draw_observations``, which
fills a whole table with the same function) see the same number for pull n of arm i.

Kernels keep their own running sums (or reward rows) and append an arm's rewards a block of pulls
at a time (``fill_c``, ``fill_cw``, ``fill_x``; the sums round as ``Observations.C`` and ``.W``
do), ahead of the pull that first reads them.
"""
from __future__ import annotations

import threading

import numpy as np
from numba import njit

from ..counter_rng import nb_pull_normal, nb_pull_uniform

TABLE, GAUSSIAN, BERNOULLI = 0, 1, 2


class RewardSource:
    """Lazy rewards of one replication: the means, the noise model and one key per arm."""

    def __init__(self, mode: int, table: np.ndarray, sigma: float, keys: np.ndarray):
        self.mode = int(mode)
        self.table = np.ascontiguousarray(table, dtype=np.float64)
        self.sigma = float(sigma)
        self.keys = np.ascontiguousarray(keys, dtype=np.uint64)
        if self.keys.shape != (self.table.shape[0],):
            raise ValueError(f"keys has shape {self.keys.shape}: expected one key per arm ({self.table.shape[0]},)")

    @property
    def K(self) -> int:
        return self.table.shape[0]

    @property
    def T(self) -> int:
        """Largest pull number the source can serve."""
        return self.table.shape[1] - 1

    @property
    def args(self) -> tuple:
        return self.mode, self.table, self.sigma, self.keys

    def table_of(self, T: int) -> np.ndarray:
        """The rewards of pulls 0..T of every arm as a K x (T + 1) table (what the kernels read)."""
        X = np.empty((self.K, T + 1))
        _fill(self.mode, self.table, self.sigma, self.keys, X)
        return X


def kernel_args(obs, T: int) -> tuple:
    """``obs.args`` and a work array, after checking that ``obs`` (an ``Observations`` or a
    ``RewardSource``) covers T pulls: (mode, table, sigma, keys, work), what every kernel takes first.

    ``work`` is a 2 x K x (at least T + 2) float array for the kernel's running sums or reward rows
    (``work[0]``, ``work[1]``), with stale contents: a kernel writes every entry before it reads it.
    It is reused from run to run within a thread, because fresh memory costs a page fault per 4 KB
    touched: measured 1.5 to 2 ns per round and arm at K = 5, T = 100,000 for the kernels that keep
    two K x (T + 2) tables (2026-12-01), more than the reward draw itself.
    """
    if T > obs.T:
        raise ValueError(f"T={T} is not allowed: the rewards cover at most {obs.T} pulls per arm")
    return (*obs.args, _work(obs.K, T))


_WORK = threading.local()
_WORK_KEEP_BYTES = 256 * 2**20  # larger work arrays are not kept between runs


def _work(K: int, T: int) -> np.ndarray:
    work = getattr(_WORK, "array", None)
    if work is None or work.shape[1] != K or work.shape[2] < T + 2:
        work = np.empty((2, K, T + 2))
        if work.nbytes <= _WORK_KEEP_BYTES:
            _WORK.array = work
    return work


@njit(cache=True, inline="always")
def observe(mode, table, sigma, keys, i, n):
    """Reward of pull n >= 1 of arm i (see the module docstring)."""
    if mode == GAUSSIAN:
        return table[i, n] + sigma * nb_pull_normal(keys[i], n)
    if mode == BERNOULLI:
        return 1.0 if nb_pull_uniform(keys[i], n) < table[i, n] else 0.0
    return table[i, n]


@njit(cache=True, inline="always")
def start_c(C, table):
    """C[i, 0] = -X_i(0), C[i, 1] = 0 (the layout of ``Observations.C``)."""
    for i in range(C.shape[0]):
        C[i, 0] = -table[i, 0]
        C[i, 1] = 0.0


@njit(cache=True, inline="always")
def start_w(W):
    """W[i, 0] = W[i, 1] = 0 (``Observations.W``: the l = 0 term is 0 X_i(0))."""
    for i in range(W.shape[0]):
        W[i, 0] = 0.0
        W[i, 1] = 0.0


@njit(cache=True, inline="always")
def start_cw(work, table):
    """The running sums C (``work[0]``) and W (``work[1]``) of a kernel that keeps both, started as
    ``start_c`` and ``start_w`` do, and the last pull filled per arm (0: none yet)."""
    C = work[0]
    W = work[1]
    start_c(C, table)
    start_w(W)
    return C, W, np.zeros(table.shape[0], dtype=np.int64)


# Rewards are drawn into the kernels' running sums in blocks of BLOCK pulls of one arm, by a function
# that is not inlined: the draw's rare branches (the ziggurat's tail and wedge, which call log and
# exp) inlined into a kernel's loop made LLVM keep the loop's values in memory, and cost 30 to 45 ns
# per round in CURE-UCB's kernel (2026-12-01), while a call every BLOCK pulls costs under 1 ns a pull.
# Pulls n of a block that the run never makes are drawn for nothing (at most BLOCK - 1 per arm).
# The floor of a kernel (bench/bench_floor.py: round-robin with the kernels' bookkeeping and these fill
# helpers, on the notebooks' instances, T = 100,000, 2026-12-01 06:07, load 8 on 2 cores, fast state):
# 9-10 ns per round with fill_c or fill_x, 10-11.5 with fill_cw, whatever K (4-13): the loop and pull
# counts 2, the running sums on the means without a draw 4.5, so the Gaussian draw about 5 ns a pull.
# BLOCK = 256 or 1024 measured the same, and a two-pass fill (the ziggurat's one-word path vectorised,
# then the rare rejections) 6.0 -> 5.7 ns per pull alone and nothing inside that loop: not adopted.
BLOCK = 64


@njit(cache=True)
def fill_c(C, mode, table, sigma, keys, i, n0, n_max):
    """Append pulls n0 .. min(n0 + BLOCK - 1, n_max) of arm i to C (C[i, n + 1] = C[i, n] + X_i(n),
    in order: the roundings of ``Observations.C``); returns the last pull appended."""
    n1 = min(n0 + BLOCK - 1, n_max)
    acc = C[i, n0]
    for n in range(n0, n1 + 1):
        acc += observe(mode, table, sigma, keys, i, n)
        C[i, n + 1] = acc
    return n1


@njit(cache=True)
def fill_cw(C, W, mode, table, sigma, keys, i, n0, n_max):
    """``fill_c`` for C and W together (W[i, n + 1] = W[i, n] + n X_i(n))."""
    n1 = min(n0 + BLOCK - 1, n_max)
    acc = C[i, n0]
    wacc = W[i, n0]
    for n in range(n0, n1 + 1):
        x = observe(mode, table, sigma, keys, i, n)
        acc += x
        wacc += x * float(n)
        C[i, n + 1] = acc
        W[i, n + 1] = wacc
    return n1


@njit(cache=True)
def fill_x(X, mode, table, sigma, keys, i, n0, n_max):
    """Rewards X[i, n] of pulls n0 .. min(n0 + BLOCK - 1, n_max) of arm i; returns the last pull filled."""
    n1 = min(n0 + BLOCK - 1, n_max)
    for n in range(n0, n1 + 1):
        X[i, n] = observe(mode, table, sigma, keys, i, n)
    return n1


@njit(cache=True)
def _fill(mode, table, sigma, keys, X):
    for i in range(X.shape[0]):
        X[i, 0] = table[i, 0]
        for n in range(1, X.shape[1]):
            X[i, n] = observe(mode, table, sigma, keys, i, n)
