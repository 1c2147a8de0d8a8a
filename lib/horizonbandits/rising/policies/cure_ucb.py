"""CURE-UCB: cumulative reward estimation UCB (Song et al. 2026, arXiv 2602.10727, section 4.1)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from .base import RisingPolicy, round_robin_arm
from ._common import (RunningSums, check_eps, check_init_pulls, check_sigma, empty_trace, log_table,
                      py_window_size)


@dataclass(frozen=True)
class CureUCB(RisingPolicy):
    """CURE-UCB, the horizon-aware index of section 4.1 (Algorithm 1).

    At round t, with N = N_{i,t-1} pulls of arm i and window h_i = max(floor(eps N), 1), the index is

        B_i(t) = (1/h) sum_{l=N-h+1}^{N} X_i(l)                                     (i) recent average
               + (T-t+2)/2 * (1/h) sum_{l=N-h+1}^{N} (X_i(l) - X_i(l-h)) / h        (ii) future cumulative gain
               + sigma * sqrt( 2 [3 (T-t+2)^2 + 8 h^2] log(t^3) / (4 h^3) )          (iii) exploration bonus

    (log(t^3) is computed as 3 log t, kernel and reference alike.)

    and the arm with the largest index is pulled.

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

    def __post_init__(self):
        object.__setattr__(self, "eps", check_eps(self.eps))
        object.__setattr__(self, "sigma", check_sigma(self.sigma))
        object.__setattr__(self, "init_pulls", check_init_pulls(self.init_pulls))

    def run_kernel(self, obs, T, checkpoints, arms_out, stream_seed=0):
        return _cure_kernel(obs.C, T, self.eps, self.sigma, self.init_pulls, log_table(T), checkpoints, arms_out)

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
                for i in range(K):
                    h = py_window_size(self.eps, N[i])
                    recent_sum = sums[i].total(N[i] - h + 1, N[i])
                    lagged_sum = sums[i].total(N[i] - 2 * h + 1, N[i] - h)
                    recent_average = recent_sum / h
                    growth = (recent_sum - lagged_sum) / (h * h)  # (1/h) sum (X(l) - X(l-h)) / h
                    future_gain = (T - t + 2) / 2 * growth
                    bonus = self.sigma * math.sqrt(2 * (3 * (T - t + 2) ** 2 + 8 * h ** 2) * (3 * math.log(t)) / (4 * h ** 3))
                    b = recent_average + future_gain + bonus
                    if trace:
                        index_trace[t - 1, i] = b
                    if b > best:
                        arm, best = i, b
            N[arm] += 1
            sums[arm].add(N[arm], X[arm, N[arm]])
            arms[t - 1] = arm
        return (arms, index_trace) if trace else arms


@njit(cache=True)
def _cure_kernel(C, T, eps, sigma, init_pulls, log_t, checkpoints, arms_out):
    K = C.shape[0]
    counts = np.zeros(K, dtype=np.int64)
    out = np.zeros((checkpoints.size, K), dtype=np.int64)
    # Per-arm statistics, recomputed only for the pulled arm. 8 h^2 and 4 h^3 are exact integers in
    # floating point, so precomputing them changes no rounding with respect to the reference.
    recent = np.zeros(K)
    growth = np.zeros(K)
    eight_h2 = np.full(K, 8.0)
    four_h3 = np.full(K, 4.0)
    index = np.empty(K)
    n_init = K * init_pulls
    ci = 0
    n_check = checkpoints.size
    record_arms = arms_out.size > 0
    for t in range(1, T + 1):
        if t <= n_init:
            arm = (t - 1) % K
        else:
            rem = float(T - t + 2)
            half_rem = rem / 2.0
            three_rem_sq = 3.0 * (rem * rem)
            log_t3 = 3.0 * log_t[t]  # log(t^3), written as 3 log t on both sides
            # Element-wise loop without a carried dependency: LLVM vectorises the sqrt and division.
            for i in range(K):
                bonus = sigma * math.sqrt(2.0 * (three_rem_sq + eight_h2[i]) * log_t3 / four_h3[i])
                index[i] = recent[i] + half_rem * growth[i] + bonus
            # Argmax, lowest index on ties, written with selects (the winner changes unpredictably).
            arm = 0
            best = index[0]
            for i in range(1, K):
                v = index[i]
                better = v > best
                best = v if better else best
                arm = i if better else arm
        counts[arm] += 1
        n = counts[arm]
        h = int(math.floor(eps * n))  # h = max(floor(eps n), 1)
        if h < 1:
            h = 1
        recent_sum = C[arm, n + 1] - C[arm, n - h + 1]
        lagged_sum = C[arm, n - h + 1] - C[arm, n - 2 * h + 1]
        hf = float(h)
        recent[arm] = recent_sum / hf
        growth[arm] = (recent_sum - lagged_sum) / (hf * hf)
        eight_h2[arm] = 8.0 * (hf * hf)
        four_h3[arm] = 4.0 * (hf * hf * hf)
        # Bookkeeping written out here: calling a helper with array arguments costs reference-count
        # updates every round, more than the whole index computation.
        if record_arms:
            arms_out[t - 1] = arm
        if ci < n_check and t == checkpoints[ci]:
            for i in range(K):
                out[ci, i] = counts[i]
            ci += 1
    return out
