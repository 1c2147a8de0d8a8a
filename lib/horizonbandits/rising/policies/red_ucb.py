"""R-ed-UCB: rested rising-bandit UCB (Metelli, Trovò, Pirola, Restelli, ICML 2022), as restated in
the remark of section 4.1 of the CURE-UCB paper (Song et al. 2026)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ...errors import check_real
from .base import RisingPolicy, round_robin_arm
from ._common import (RunningSums, check_eps, check_init_pulls, check_sigma, empty_trace, log_table,
                      py_window_size)


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
    lagged window) with running sums, so that every arm's index costs O(1) per round; the
    reference does the same so that both round identically. Conventions as in :class:`CureUCB`
    (round-robin initialisation of ``init_pulls`` per arm, X_i(0) := mu_i(0), lowest-index ties).
    """

    eps: float = 0.25
    sigma: float = 0.01
    delta_exponent: float = 4.0
    init_pulls: int = 2

    name = "R-ed-UCB"
    uses_horizon = False

    def __post_init__(self):
        object.__setattr__(self, "eps", check_eps(self.eps))
        object.__setattr__(self, "sigma", check_sigma(self.sigma))
        object.__setattr__(self, "delta_exponent", check_real("delta_exponent", self.delta_exponent, 0.0, lo_open=True))
        object.__setattr__(self, "init_pulls", check_init_pulls(self.init_pulls))

    def run_kernel(self, obs, T, checkpoints, arms_out, stream_seed=0):
        return _red_kernel(obs.C, obs.W, T, self.eps, self.sigma, self.delta_exponent, self.init_pulls,
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
                    recent_average = recent_sum / h
                    extrapolation = (weighted_recent - weighted_lagged) / (h * h)
                    bonus = self.sigma * (t - n + h - 1) * math.sqrt(10 * log_inv_delta / h ** 3)
                    b = recent_average + extrapolation + bonus
                    if trace:
                        index_trace[t - 1, i] = b
                    if b > best:
                        arm, best = i, b
            N[arm] += 1
            sums[arm].add(N[arm], X[arm, N[arm]])
            arms[t - 1] = arm
        return (arms, index_trace) if trace else arms


@njit(cache=True)
def _red_kernel(C, W, T, eps, sigma, delta_exponent, init_pulls, log_t, checkpoints, arms_out):
    K = C.shape[0]
    counts = np.zeros(K, dtype=np.int64)
    out = np.zeros((checkpoints.size, K), dtype=np.int64)
    recent_sum = np.zeros(K)
    lagged_sum = np.zeros(K)
    recent_w = np.zeros(K)   # sum l X(l) over the window
    lagged_w = np.zeros(K)   # sum l X(l) over the lagged window
    hf = np.ones(K)
    h3 = np.ones(K)          # h^3, exact in floating point
    slack = np.zeros(K)      # h - 1 - N, so that t - N + h - 1 = t + slack (exact integers)
    index = np.empty(K)
    n_init = K * init_pulls
    ci = 0
    n_check = checkpoints.size
    record_arms = arms_out.size > 0
    for t in range(1, T + 1):
        if t <= n_init:
            arm = (t - 1) % K
        else:
            tf = float(t)
            log_inv_delta = delta_exponent * log_t[t]
            ten_log = 10.0 * log_inv_delta
            for i in range(K):  # no carried dependency: vectorised
                h = hf[i]
                weighted_recent = tf * recent_sum[i] - recent_w[i]
                weighted_lagged = (tf - h) * lagged_sum[i] - lagged_w[i]
                extrapolation = (weighted_recent - weighted_lagged) / (h * h)
                bonus = sigma * (tf + slack[i]) * math.sqrt(ten_log / h3[i])
                index[i] = recent_sum[i] / h + extrapolation + bonus
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
        recent_sum[arm] = C[arm, n + 1] - C[arm, n - h + 1]
        lagged_sum[arm] = C[arm, n - h + 1] - C[arm, n - 2 * h + 1]
        recent_w[arm] = W[arm, n + 1] - W[arm, n - h + 1]
        lagged_w[arm] = W[arm, n - h + 1] - W[arm, n - 2 * h + 1]
        hf[arm] = h
        h3[arm] = float(h) * float(h) * float(h)
        slack[arm] = float(h - 1 - n)
        # Bookkeeping written out here: calling a helper with array arguments costs reference-count
        # updates every round, more than the whole index computation.
        if record_arms:
            arms_out[t - 1] = arm
        if ci < n_check and t == checkpoints[ci]:
            for i in range(K):
                out[ci, i] = counts[i]
            ci += 1
    return out
