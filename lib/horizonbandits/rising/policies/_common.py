"""Validation and bookkeeping shared by the policies (kept tiny on purpose)."""
from __future__ import annotations

import math
import numpy as np
from numba import njit

from ...errors import check_int, check_real


def check_eps(eps) -> float:
    """Window fraction of CURE-UCB and R-ed-UCB: h = max(floor(eps N), 1), eps in [0, 1/2] (appendix K.1)."""
    return check_real("eps", eps, 0.0, 0.5)


def check_sigma(sigma) -> float:
    return check_real("sigma", sigma, 0.0)


def check_init_pulls(init_pulls) -> int:
    return check_int("init_pulls", init_pulls, 1)


@njit(cache=True, inline="always")
def window_size(eps, n):
    """h = max(floor(eps n), 1)."""
    h = int(math.floor(eps * n))
    return h if h > 1 else 1


def py_window_size(eps: float, n: int) -> int:
    return max(int(math.floor(eps * n)), 1)


@njit(cache=True, inline="always")
def argmax_first(values):
    """Index of the largest value, the lowest index on ties; branch-free selects, since the winner
    changes unpredictably from round to round and mispredicted branches cost more than the compares."""
    arm = 0
    best = values[0]
    for i in range(1, values.size):
        v = values[i]
        better = v > best
        best = v if better else best
        arm = i if better else arm
    return arm


class RunningSums:
    """Plain running sums of one arm's rewards, for the reference implementations.

    ``c[n + 1] = X(1) + ... + X(n)`` with ``c[0] = -X(0)``, and ``w[n + 1] = 0 X(0) + ... + n X(n)``,
    accumulated one reward at a time like the kernels' tables (``Observations.C`` and ``.W``, where
    the layout is explained), so that window sums round the same way on both sides.
    """

    def __init__(self, x0: float):
        self.c = [-float(x0), 0.0]
        self.w = [0.0, 0.0 * float(x0)]

    def add(self, n: int, x: float) -> None:
        self.c.append(self.c[-1] + x)
        self.w.append(self.w[-1] + x * n)

    def total(self, a: int, b: int) -> float:
        """sum_{l=a}^{b} X(l)."""
        return self.c[b + 1] - self.c[a]

    def weighted(self, a: int, b: int) -> float:
        """sum_{l=a}^{b} l X(l)."""
        return self.w[b + 1] - self.w[a]


@njit(cache=True)
def _log_table(T):
    out = np.zeros(T + 1)
    for t in range(1, T + 1):
        out[t] = math.log(t)
    return out


_LOG_TABLE = np.zeros(1)  # log(t) for t = 0..len - 1, the longest table asked for so far (read-only)
_LOG_TABLE.setflags(write=False)


def log_table(T: int) -> np.ndarray:
    """log(t) for t = 0..T (entry 0 unused), computed with the same ``math.log`` as the references.

    Kernels read log t from this table instead of calling log every round: the table is shared by
    all seeds and policies, which takes the call off the kernels' critical path. log t does not depend
    on the horizon, so one table (the longest asked for, grown when a longer one is needed) serves
    every T as a read-only view of its first T + 1 entries. A cache per T (it was ``lru_cache(8)``)
    missed on every call of a grid that cycles through more horizons than it kept: Figure 2's ten
    horizons per seed cost 0.1 to 0.75 ms a call to rebuild, about 4 ms per (instance, seed) for
    CURE-UCB, against 14 to 30 ms of its kernels (measured 2026-12-01).
    """
    global _LOG_TABLE
    table = _LOG_TABLE
    if table.size < T + 1:
        table = _log_table(T)
        table.setflags(write=False)
        _LOG_TABLE = table
    return table[:T + 1]


def empty_trace(T: int, K: int) -> np.ndarray:
    return np.full((T, K), np.nan)
