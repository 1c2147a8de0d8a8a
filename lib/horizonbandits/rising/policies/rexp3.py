"""Rexp3: Exp3 restarted in batches (Besbes, Gur and Zeevi, "Stochastic multi-armed-bandit problem with
non-stationary rewards", NeurIPS 2014), with the variation budget Metelli et al. (ICML 2022) used as a
rising-bandit baseline."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ...errors import check_int, check_real
from ...rng import PyStream, nb_uniform_step, new_state
from ..rewards import fill_x, kernel_args
from .base import RisingPolicy
from ._common import empty_trace

# Weights grow by at most a factor e per round; past this they are all divided by the same power of
# two, which leaves every ratio w_k / sum(w) (hence every probability) unchanged bit for bit.
_RESCALE_ABOVE = 2.0 ** 500
_RESCALE_BY = 2.0 ** -500


@dataclass(frozen=True)
class Rexp3(RisingPolicy):
    """Rexp3 (Besbes, Gur and Zeevi 2014, Algorithm Rexp3 and Theorem 2).

    The rounds are cut into batches of Delta rounds (the last one possibly shorter). Each batch
    runs Exp3 from scratch: weights w_k = 1 at the batch's first round, then at every round

        p_t(k) = (1 - gamma) w_t(k) / sum_j w_t(j) + gamma / K          (all K weights in the sum)
        draw the arm k' from p_t, observe the reward x in [0, 1]
        w_{t+1}(k') = w_t(k') exp(gamma (x / p_t(k')) / K),  other weights unchanged

    Theorem 2's tuning: Delta = ceil((K log K)^(1/3) (T / V_T)^(2/3)) and
    gamma = min(1, sqrt(K log K / ((e - 1) Delta))).

    Readings (parameters):

    - ``variation_rate`` = 0.001: the variation budget is V_T = variation_rate * T (Metelli et al.
      2022). Then T / V_T = 1 / variation_rate, so Delta and gamma do not depend on T and the
      policy never reads the horizon: ``uses_horizon`` is False (T / V_T is computed as
      1 / variation_rate, so this holds exactly);
    - ``batch`` and ``gamma`` override Delta and gamma when given;
    - rewards are clipped to [0, 1] before the update (Exp3's rewards lie in [0, 1]);
    - the arm is drawn by inversion with one uniform from the policy's stream per round: the first
      k with u < p(0) + ... + p(k) (the last arm if rounding leaves the total below u).

    The trace of the reference holds p_t(k).
    """

    variation_rate: float = 0.001
    batch: int | None = None
    gamma: float | None = None

    name = "Rexp3"
    uses_horizon = False
    randomised = True

    def __post_init__(self):
        object.__setattr__(self, "variation_rate", check_real("variation_rate", self.variation_rate, 0.0, 1.0,
                                                              lo_open=True))
        if self.batch is not None:
            object.__setattr__(self, "batch", check_int("batch", self.batch, 1))
        if self.gamma is not None:
            object.__setattr__(self, "gamma", check_real("gamma", self.gamma, 0.0, 1.0, lo_open=True))

    def batch_size(self, K: int) -> int:
        """Delta = ceil((K log K)^(1/3) (T / V_T)^(2/3)) with T / V_T = 1 / variation_rate."""
        if self.batch is not None:
            return self.batch
        return max(math.ceil((K * math.log(K)) ** (1.0 / 3.0) * (1.0 / self.variation_rate) ** (2.0 / 3.0)), 1)

    def exploration(self, K: int) -> float:
        """gamma = min(1, sqrt(K log K / ((e - 1) Delta)))."""
        if self.gamma is not None:
            return self.gamma
        return min(1.0, math.sqrt(K * math.log(K) / ((math.e - 1.0) * self.batch_size(K))))

    def run_kernel(self, obs, T, checkpoints, arms_out, stream_seed=0):
        K = obs.K
        return _rexp3_kernel(*kernel_args(obs, T), T, self.batch_size(K), self.exploration(K), checkpoints, arms_out,
                             new_state(stream_seed))

    def reference(self, X, T, stream_seed=0, trace=False):
        """Plain loop; ``trace`` holds the probabilities p_t(k)."""
        K = X.shape[0]
        batch = self.batch_size(K)
        gamma = self.exploration(K)
        stream = PyStream(stream_seed)
        N = [0] * K
        arms = np.empty(T, dtype=np.int64)
        index_trace = empty_trace(T, K) if trace else None
        w = [1.0] * K
        for t in range(1, T + 1):
            if (t - 1) % batch == 0:  # first round of a batch: restart Exp3
                w = [1.0] * K
            total = 0.0
            for k in range(K):
                total += w[k]
            p = [(1.0 - gamma) * w[k] / total + gamma / K for k in range(K)]
            if trace:
                index_trace[t - 1] = p
            u = stream.uniform()
            arm, cumulative = K - 1, 0.0
            for k in range(K):
                cumulative += p[k]
                if u < cumulative:
                    arm = k
                    break
            N[arm] += 1
            x = min(max(X[arm, N[arm]], 0.0), 1.0)
            x_hat = x / p[arm]  # importance-weighted reward; the other arms' estimates are 0
            w[arm] = w[arm] * math.exp(gamma * x_hat / K)
            if w[arm] > _RESCALE_ABOVE:
                w = [wk * _RESCALE_BY for wk in w]
            arms[t - 1] = arm
        return (arms, index_trace) if trace else arms


@njit(cache=True)
def _rexp3_kernel(mode, table, sigma_x, keys, work, T, batch, gamma, checkpoints, arms_out, state):
    K = table.shape[0]
    X = work[0]  # rewards X[i, n], filled from the reward source a block of pulls at a time
    filled = np.zeros(K, dtype=np.int64)  # last pull of each arm in X
    counts = np.zeros(K, dtype=np.int64)
    out = np.zeros((checkpoints.size, K), dtype=np.int64)
    w = np.ones(K)
    p = np.empty(K)
    one_minus_gamma = 1.0 - gamma
    gamma_over_K = gamma / K
    left_in_batch = 0
    # The policy's stream as a plain uint64 (``rng.nb_uniform_step``: the same numbers as ``nb_uniform``
    # on the state array, without a call that takes an array every round).
    s = state[0]
    # Bookkeeping written out inline: a helper call would cost tens of ns a round.
    keep_arms = arms_out.size > 0
    next_cp = checkpoints[0] if checkpoints.size > 0 else -1
    ci = 0
    for t in range(1, T + 1):
        if left_in_batch == 0:
            w[:] = 1.0
            left_in_batch = batch
        left_in_batch -= 1
        total = 0.0
        for k in range(K):
            total += w[k]
        u, s = nb_uniform_step(s)
        # p[k] is needed only up to the arm drawn: the others' divisions are skipped (with the scalar
        # stream, measured 67-84 -> 61-79 ns per round at K = 4-14, 2026-12-01)
        arm = K - 1
        cumulative = 0.0
        for k in range(K):
            p[k] = one_minus_gamma * w[k] / total + gamma_over_K
            cumulative += p[k]
            if u < cumulative:
                arm = k
                break
        counts[arm] += 1
        if counts[arm] > filled[arm]:
            filled[arm] = fill_x(X, mode, table, sigma_x, keys, arm, filled[arm] + 1, T)
        x = min(max(X[arm, counts[arm]], 0.0), 1.0)
        x_hat = x / p[arm]
        w[arm] = w[arm] * math.exp(gamma * x_hat / K)
        if w[arm] > _RESCALE_ABOVE:
            for k in range(K):
                w[k] = w[k] * _RESCALE_BY
        if keep_arms:
            arms_out[t - 1] = arm
        if t == next_cp:
            for k in range(K):
                out[ci, k] = counts[k]
            ci += 1
            next_cp = checkpoints[ci] if ci < checkpoints.size else -1
    state[0] = s
    return out
