"""CURE-UCB: cumulative reward estimation UCB (Song et al. 2026, arXiv 2602.10727, section 4.1)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..rewards import fill_c, kernel_args, start_c
from .base import RisingPolicy, round_robin_arm
from ._common import (RunningSums, check_eps, check_init_pulls, check_sigma, empty_trace, log_table,
                      py_window_size, window_size)


@dataclass(frozen=True)
class CureUCB(RisingPolicy):
    """CURE-UCB, the horizon-aware index of section 4.1 (Algorithm 1).

    At round t, with N = N_{i,t-1} pulls of arm i and window h_i = max(floor(eps N), 1), the index is

        B_i(t) = (1/h) sum_{l=N-h+1}^{N} X_i(l)                                     (i) recent average
               + (T-t+2)/2 * (1/h) sum_{l=N-h+1}^{N} (X_i(l) - X_i(l-h)) / h        (ii) future cumulative gain
               + sigma * sqrt( 2 [3 (T-t+2)^2 + 8 h^2] log(t^3) / (4 h^3) )          (iii) exploration bonus

    and the arm with the largest index is pulled. Kernel and reference evaluate (iii) in the
    algebraically identical form sigma * sqrt( 3 log t * ((T-t+2)^2 * 3/(2 h^3) + 4/h) ): the two
    per-arm factors 3/(2h^3) and 4/h change only when the arm is pulled, which keeps a division off
    the kernel's per-round critical path. Both sides use the same operations in the same order, so
    they choose the same arms bit for bit.

    Conventions (not fixed by the paper; parameters where they can matter):

    - initialisation pulls the arms round-robin in index order until each has ``init_pulls`` pulls;
    - with ``init_pulls=1`` (the deterministic setting of the proofs, eps = 0) the reward before the
      first pull is X_i(0) := mu_i(0), needed by the lagged window when N = h = 1;
    - ties go to the lowest arm index;
    - ``eps`` must lie in [0, 1/2] (appendix K.1) so that the lagged window stays inside the data.
    """

    eps: float = 0.25
    sigma: float = 0.01
    init_pulls: int = 2

    name = "CURE-UCB"
    uses_horizon = True
    takes_noise_scale = True  # sigma enters the exploration bonus (section 4.1)

    def __post_init__(self):
        object.__setattr__(self, "eps", check_eps(self.eps))
        object.__setattr__(self, "sigma", check_sigma(self.sigma))
        object.__setattr__(self, "init_pulls", check_init_pulls(self.init_pulls))

    def run_kernel(self, obs, T, checkpoints, arms_out, stream_seed=0):
        return _cure_kernel(*kernel_args(obs, T), T, self.eps, self.sigma, self.init_pulls, log_table(T), checkpoints, arms_out)

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
                remaining = float(T - t + 2)
                for i in range(K):
                    h = py_window_size(self.eps, N[i])
                    recent_sum = sums[i].total(N[i] - h + 1, N[i])
                    lagged_sum = sums[i].total(N[i] - 2 * h + 1, N[i] - h)
                    recent_average = recent_sum / h
                    growth = (recent_sum - lagged_sum) / (h * h)  # (1/h) sum (X(l) - X(l-h)) / h
                    future_gain = remaining / 2.0 * growth
                    bonus = self.sigma * math.sqrt((3.0 * math.log(t))
                                                    * ((remaining * remaining) * (1.5 / (h * h * h)) + 4.0 / h))
                    b = (recent_average + future_gain) + bonus
                    if trace:
                        index_trace[t - 1, i] = b
                    if b > best:
                        arm, best = i, b
            N[arm] += 1
            sums[arm].add(N[arm], X[arm, N[arm]])
            arms[t - 1] = arm
        return (arms, index_trace) if trace else arms


# Columns of the per-arm statistics kept by the kernel (one row per arm).
_RECENT, _GROWTH, _U, _V = 0, 1, 2, 3


@njit(cache=True, inline="always")
def _window_stats(C, arm, n, eps, out):
    """Row ``arm`` of ``out``: the arm's statistics after n pulls (recent average, growth, u = 3/(2h^3), v = 4/h).

    The whole table and the row number are passed, not a row view, which would be a new array object
    every call."""
    h = window_size(eps, n)
    recent_sum = C[arm, n + 1] - C[arm, n - h + 1]
    lagged_sum = C[arm, n - h + 1] - C[arm, n - 2 * h + 1]
    hf = float(h)
    out[arm, _RECENT] = recent_sum / hf
    out[arm, _GROWTH] = (recent_sum - lagged_sum) / (hf * hf)
    out[arm, _U] = 1.5 / (hf * hf * hf)
    out[arm, _V] = 4.0 / hf


@njit(cache=True, inline="always")
def _index(s, i, half_remaining, remaining_sq, log_t3, sigma):
    """B_i(t) from row i of the statistics: (recent + (T-t+2)/2 growth) + bonus, bonus as in the docstring."""
    return (s[i, _RECENT] + half_remaining * s[i, _GROWTH]) \
        + sigma * math.sqrt(log_t3 * (remaining_sq * s[i, _U] + s[i, _V]))


@njit(cache=True, error_model="numpy")  # h >= 1: no division can fail, so skip numba's checks
def _cure_kernel(mode, table, sigma_x, keys, work, T, eps, sigma, init_pulls, log_t, checkpoints, arms_out):
    # Why it is laid out this way (CPU time per round is a dependency chain, not arithmetic):
    # - only the arm pulled last round (``prev``) has new statistics; the best of the other arms
    #   depends on nothing computed in the previous round, so the processor works it out while
    #   ``prev``'s index is still being computed, and one comparison then settles the round;
    # - the statistics an arm will have after one more pull are computed ahead (``ahead``), so
    #   a pull only copies a row instead of putting table reads and divisions on the chain;
    # - rows are per arm (K x 4) and the index loop is scalar: a vector load right after a
    #   scalar store to the same line stalls on store forwarding, which cost more than SIMD saved.
    # Rewards come from the source (``rising.rewards``) into the kernel's own running sums C, a block
    # of pulls of one arm at a time (``filled``: the last pull in C); the statistics ahead need the
    # reward of the arm's next pull, which is why a block is drawn before it is reached (the rewards
    # are functions of (arm, pull number): drawn early, they are the same numbers).
    K = table.shape[0]
    max_count = T
    C = work[0]  # written up to the last pull drawn (at most a block ahead of the pulls made)
    start_c(C, table)
    filled = np.zeros(K, dtype=np.int64)
    counts = np.zeros(K, dtype=np.int64)
    out = np.zeros((checkpoints.size, K), dtype=np.int64)
    stats = np.zeros((K, 4))
    ahead = np.zeros((K, 4))
    for i in range(K):
        filled[i] = fill_c(C, mode, table, sigma_x, keys, i, 1, max_count)
        _window_stats(C, i, 1, eps, ahead)
    n_init = K * init_pulls
    ci = 0
    n_check = checkpoints.size
    record_arms = arms_out.size > 0
    prev = 0
    for t in range(1, T + 1):
        if t <= n_init:
            arm = (t - 1) % K
        else:
            remaining = float(T - t + 2)
            half_remaining = remaining / 2.0
            remaining_sq = remaining * remaining
            log_t3 = 3.0 * log_t[t]  # log(t^3), written as 3 log t on both sides
            best = -math.inf
            other = 1 if prev == 0 else 0  # a valid arm even if no other index beats -inf
            for i in range(K):
                b = _index(stats, i, half_remaining, remaining_sq, log_t3, sigma)
                b = -math.inf if i == prev else b  # computed and dropped: skipping it measured no faster
                better = b > best
                best = b if better else best
                other = i if better else other
            b = _index(stats, prev, half_remaining, remaining_sq, log_t3, sigma)
            # first maximum: prev wins a tie only against a higher index
            arm = prev if (b > best or (b == best and prev < other)) else other
        for k in range(4):
            stats[arm, k] = ahead[arm, k]
        counts[arm] += 1
        if counts[arm] < max_count:
            if counts[arm] + 1 > filled[arm]:
                filled[arm] = fill_c(C, mode, table, sigma_x, keys, arm, filled[arm] + 1, max_count)
            _window_stats(C, arm, counts[arm] + 1, eps, ahead)
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
