"""R-ed-UCB: rested rising-bandit UCB (Metelli, Trovò, Pirola, Restelli, ICML 2022), as restated in
the remark of section 4.1 of the CURE-UCB paper (Song et al. 2026)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ...errors import check_real
from ..rewards import fill_cw, kernel_args, start_cw
from .base import RisingPolicy, round_robin_arm
from ._common import (RunningSums, check_eps, check_init_pulls, check_sigma, empty_trace, log_table,
                      py_window_size, window_size)


@dataclass(frozen=True)
class RedUCB(RisingPolicy):
    """R-ed-UCB, the horizon-agnostic index (remark of section 4.1; Metelli et al. 2022, eq. for B^R-ed).

    At round t, with N = N_{i,t-1} and h = max(floor(eps N), 1):

        B_i(t) = (1/h) sum_{l=N-h+1}^{N} X_i(l)                                       recent average
               + (1/h) sum_{l=N-h+1}^{N} (t - l) (X_i(l) - X_i(l-h)) / h              extrapolation to round t
               + sigma (t - N + h - 1) sqrt( 10 log(1/delta_t) / h^3 )                exploration bonus

    with delta_t = t^(-delta_exponent) (Metelli et al. 2022 use delta_t = t^-4), so
    log(1/delta_t) = delta_exponent * log t.

    The weighted sum is evaluated as t * sum X(l) - sum l X(l) over the window (and likewise for the
    lagged window) with running sums, so that every arm's index costs O(1) per round. Divisions by h,
    h^2 and sqrt(h^3) are written as products with 1/h, 1/h^2 and 1/sqrt(h^3), and the bonus's root
    as sqrt(10 log(1/delta_t)) * (1/sqrt(h^3)) (algebraically identical): the per-arm factors change
    only when the arm is pulled, so the kernel does no division or square root per arm and round.
    The reference does the same operations in the same order, so both round identically.
    Conventions as in :class:`CureUCB` (round-robin initialisation of ``init_pulls`` per arm,
    X_i(0) := mu_i(0), lowest-index ties: window sums start from an exact 0, see
    :class:`~horizonbandits.rising.observations.Observations`, so mathematically equal indices of
    arms with the same statistics are equal in floating point too).

    ``bonus_cap``: None (default) follows the paper, with no cap. A number c replaces the
    exploration bonus by min(bonus, c), as the official code does on IMDB (c = 1); the recent
    average and the extrapolation are left as they are.

    Against the official code (Metelli et al. 2022, github.com/albertometelli/stochastic-rising-bandits,
    commit 2b49e82, ``src/algorithms/R_ed_UCB.py``). We follow the formula of the paper; the code
    departs from it in six ways:

    1. window h = floor(n/4) (floor(n/32) on IMDB) with no floor at 1: while h = 0 every arm's
       index is set to 1, and equal maxima are broken uniformly at random (ours: h >= 1, lowest
       index);
    2. delta = (t - 1)^-4 (its round counter, read one round early) where the paper has t^-4;
    3. an arm's recent average and extrapolation term are recomputed only when that arm is pulled,
       with the round of that pull, so the projection of an arm left alone stays frozen while its
       bonus keeps growing (ours: recomputed for every arm every round);
    4. the (t - l) weights of the estimator come out mirrored within the window: on a linear
       sequence X(l) = l the code's index projects X(t + 1) where the formula gives X(t);
    5. on IMDB the bonus is capped at 1 (here ``bonus_cap=1.0``);
    6. sigma = 0.1 everywhere, IMDB included (ours: given by the caller, see ``make_policies``).

    Outcome (measured by a reviewer who ran the official class on our reward tables): with the six
    conventions aligned, the official R-ed-UCB and this one choose the same arm in every round.
    Without them they can look very different: on IMDB at T = 5,000 the official code pulls one arm
    4,730 times. To repeat the comparison: fetch the repository at that commit, feed its
    ``R_ed_UCB`` the rewards of a table from ``draw_observations``, pull for pull, and run ours
    with eps = 1/4 (1/32 on IMDB), sigma = 0.1, ``bonus_cap`` = 1 on IMDB, and the official code
    patched to the paper on points 1 to 4 (or ours patched to the code).
    """

    eps: float = 0.25
    sigma: float = 0.01
    delta_exponent: float = 4.0
    init_pulls: int = 2
    bonus_cap: float | None = None

    name = "R-ed-UCB"
    uses_horizon = False
    takes_noise_scale = True  # sigma enters the exploration bonus (section 4.1)

    def __post_init__(self):
        object.__setattr__(self, "eps", check_eps(self.eps))
        object.__setattr__(self, "sigma", check_sigma(self.sigma))
        object.__setattr__(self, "delta_exponent", check_real("delta_exponent", self.delta_exponent, 0.0, lo_open=True))
        object.__setattr__(self, "init_pulls", check_init_pulls(self.init_pulls))
        if self.bonus_cap is not None:
            object.__setattr__(self, "bonus_cap", check_real("bonus_cap", self.bonus_cap, 0.0, lo_open=True))

    @property
    def _cap(self) -> float:
        """The cap as a number: +inf when there is none (min(bonus, inf) is bonus, bit for bit)."""
        return math.inf if self.bonus_cap is None else self.bonus_cap

    def run_kernel(self, obs, T, checkpoints, arms_out, stream_seed=0):
        return _red_kernel(*kernel_args(obs, T), T, self.eps, self.sigma, self.delta_exponent, self.init_pulls, self._cap,
                           log_table(T), checkpoints, arms_out)

    def reference(self, X, T, stream_seed=0, trace=False):
        K = X.shape[0]
        sums = [RunningSums(X[i, 0]) for i in range(K)]
        N = [0] * K
        arms = np.empty(T, dtype=np.int64)
        index_trace = empty_trace(T, K) if trace else None
        for t in range(1, T + 1):
            if t <= K * self.init_pulls:
                arm = round_robin_arm(t, K)
            else:
                arm, best = 0, -math.inf
                log_inv_delta = self.delta_exponent * math.log(t)
                for i in range(K):
                    n = N[i]
                    h = py_window_size(self.eps, n)
                    recent_sum = sums[i].total(n - h + 1, n)
                    lagged_sum = sums[i].total(n - 2 * h + 1, n - h)
                    # sum_{l} (t - l) X(l) and sum_{l} (t - l) X(l - h) over the window l = n-h+1..n
                    weighted_recent = t * recent_sum - sums[i].weighted(n - h + 1, n)
                    weighted_lagged = (t - h) * lagged_sum - sums[i].weighted(n - 2 * h + 1, n - h)
                    recent_average = recent_sum * (1.0 / h)
                    extrapolation = (weighted_recent - weighted_lagged) * (1.0 / (h * h))
                    # sqrt(10 log(1/delta_t) / h^3) written as sqrt(10 log(1/delta_t)) * (1 / sqrt(h^3))
                    bonus = self.sigma * (t - n + h - 1) * (math.sqrt(10 * log_inv_delta) * (1.0 / math.sqrt(h ** 3)))
                    bonus = min(bonus, self._cap)
                    b = recent_average + extrapolation + bonus
                    if trace:
                        index_trace[t - 1, i] = b
                    if b > best:
                        arm, best = i, b
            N[arm] += 1
            sums[arm].add(N[arm], X[arm, N[arm]])
            arms[t - 1] = arm
        return (arms, index_trace) if trace else arms


# Columns of the per-arm statistics kept by the kernel (one row per arm).
_RSUM, _LSUM, _RW, _LW, _H, _INV_H, _INV_H2, _INV_ROOT_H3, _SLACK = 0, 1, 2, 3, 4, 5, 6, 7, 8
_NSTAT = 9


@njit(cache=True, inline="always")
def _window_stats(C, W, arm, n, eps, out):
    """Row ``arm`` of ``out``: the window sums of ``arm`` after n pulls (table and row number are
    passed, not a row view, which would be a new array object every call)."""
    h = window_size(eps, n)
    out[arm, _RSUM] = C[arm, n + 1] - C[arm, n - h + 1]
    out[arm, _LSUM] = C[arm, n - h + 1] - C[arm, n - 2 * h + 1]
    out[arm, _RW] = W[arm, n + 1] - W[arm, n - h + 1]     # sum l X(l) over the window
    out[arm, _LW] = W[arm, n - h + 1] - W[arm, n - 2 * h + 1]
    hf = float(h)
    out[arm, _H] = hf
    out[arm, _INV_H] = 1.0 / hf
    out[arm, _INV_H2] = 1.0 / (hf * hf)
    out[arm, _INV_ROOT_H3] = 1.0 / math.sqrt(hf * hf * hf)  # h^3 is exact in floating point
    out[arm, _SLACK] = float(h - 1 - n)                   # t - N + h - 1 = t + slack (exact integers)


@njit(cache=True, inline="always")
def _index(s, i, tf, root_ten_log, sigma, cap):
    weighted_recent = tf * s[i, _RSUM] - s[i, _RW]
    weighted_lagged = (tf - s[i, _H]) * s[i, _LSUM] - s[i, _LW]
    extrapolation = (weighted_recent - weighted_lagged) * s[i, _INV_H2]
    bonus = min(sigma * (tf + s[i, _SLACK]) * (root_ten_log * s[i, _INV_ROOT_H3]), cap)
    return s[i, _RSUM] * s[i, _INV_H] + extrapolation + bonus


@njit(cache=True, error_model="numpy")  # h >= 1: no division can fail, so skip numba's checks
def _red_kernel(mode, table, sigma_x, keys, work, T, eps, sigma, delta_exponent, init_pulls, cap, log_t, checkpoints, arms_out):
    # Same layout as the CURE-UCB kernel, for the same reasons: the best of the arms not pulled last
    # round is found off the critical path and compared once with the last-pulled arm; statistics
    # after one more pull are computed a round ahead; per-arm rows and a scalar index loop.
    # Rewards come from the source into the kernel's own C and W, in blocks and ahead of the pull that
    # needs them (as in the CURE-UCB kernel).
    K = table.shape[0]
    max_count = T
    C, W, filled = start_cw(work, table)  # own running sums, filled a block of pulls at a time; last pull filled
    counts = np.zeros(K, dtype=np.int64)
    out = np.zeros((checkpoints.size, K), dtype=np.int64)
    stats = np.zeros((K, _NSTAT))
    ahead = np.zeros((K, _NSTAT))
    for i in range(K):
        filled[i] = fill_cw(C, W, mode, table, sigma_x, keys, i, 1, max_count)
        _window_stats(C, W, i, 1, eps, ahead)
    n_init = K * init_pulls
    ci = 0
    n_check = checkpoints.size
    record_arms = arms_out.size > 0
    prev = 0
    for t in range(1, T + 1):
        if t <= n_init:
            arm = (t - 1) % K
        else:
            tf = float(t)
            root_ten_log = math.sqrt(10.0 * (delta_exponent * log_t[t]))  # sqrt(10 log(1/delta_t))
            best = -math.inf
            other = 1 if prev == 0 else 0  # a valid arm even if no other index beats -inf
            for i in range(K):
                b = _index(stats, i, tf, root_ten_log, sigma, cap)
                b = -math.inf if i == prev else b  # computed and dropped, as in the CURE-UCB kernel
                better = b > best
                best = b if better else best
                other = i if better else other
            b = _index(stats, prev, tf, root_ten_log, sigma, cap)
            # first maximum: prev wins a tie only against a higher index
            arm = prev if (b > best or (b == best and prev < other)) else other
        for k in range(_NSTAT):
            stats[arm, k] = ahead[arm, k]
        counts[arm] += 1
        if counts[arm] < max_count:
            if counts[arm] + 1 > filled[arm]:
                filled[arm] = fill_cw(C, W, mode, table, sigma_x, keys, arm, filled[arm] + 1, max_count)
            _window_stats(C, W, arm, counts[arm] + 1, eps, ahead)
        prev = arm
        # Bookkeeping written out, as in every kernel: a shared inline helper taking counts, checkpoints,
        # out and arms_out and returning (ci, next_cp) measured +60 ns per round (2026-11-30), while
        # _index and _window_stats above, which only read or write one table, measured free.
        if record_arms:
            arms_out[t - 1] = arm
        if ci < n_check and t == checkpoints[ci]:
            for i in range(K):
                out[ci, i] = counts[i]
            ci += 1
    return out
