"""R-ed-AE: arm elimination for rested rising bandits with linear drift (Amichay and Mansour,
"Rising rested MAB with linear drift", arXiv 2501.04403, 2025)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ...errors import check_choice, check_real
from ..rewards import fill_cw, kernel_args, start_cw
from .base import RisingPolicy
from ._common import RunningSums, check_sigma, empty_trace
from .ti_ucb import line_fit, py_line_fit

TARGETS = ("remaining", "horizon")


def default_delta(T: int) -> float:
    """delta = 1/T: the run fails its confidence intervals with probability at most 1/T."""
    return 1.0 / T


@dataclass(frozen=True)
class RedAE(RisingPolicy):
    """R-ed-AE (Amichay and Mansour 2025): successive elimination on linear-drift estimates.

    The model is mu_i(n) = b_i + L_i n (L_i >= 0). With a known horizon the best policy commits to
    one arm, so the algorithm keeps a set A of candidate arms and works in sweeps: a sweep pulls
    every arm of A once, in increasing index order, so that all candidates share the same pull
    count m. After each sweep (m >= 2) every candidate gets the least-squares line through its m
    rewards (estimates of b_i and L_i) and the value it would yield if the algorithm committed to it
    now, per remaining round:

        v_i = b_i + L_i x*,   x* = m + (R + 1) / 2,   R = T - t rounds left          (target)

    (the mean of b_i + L_i n over the pulls n = m+1 .. m+R it would receive). The least-squares
    prediction at x* is sum_l w_l X_i(l) with sum_l w_l^2 = 1/m + (x* - centre)^2 / S_xx, so with
    sigma-sub-Gaussian noise and a union bound over K arms and T tests

        r = sigma sqrt( 2 (1/m + (x* - centre)^2 / S_xx) log(2 K T / delta) )        (radius)

    and arm k leaves A when v_leader - v_k > 2 r, i.e. its upper bound falls below the leader's
    lower bound (the leader, the largest v with ties to the lowest index, always stays). When a
    single arm is left the algorithm pulls it until T.

    Reconstruction notes. Only the abstract and a summary of the paper were available to us
    (stored copies of arXiv 2501.04403): a horizon-aware arm elimination on linear-drift estimates
    of the arms' growth and future value. The exact estimator, confidence constants and schedule
    could not be read, so these choices are ours and are parameters:

    - ``target``: "remaining" (default, the value of committing for the R rounds left, above) or
      "horizon" (x* = (T + 1)/2, the per-round value of committing for the whole horizon);
    - ``sigma``: sub-Gaussian scale of the rewards, default 1/2. Amichay and Mansour state R-ed-AE for
      rewards bounded in [0, 1] with no noise parameter, and a reward in [0, 1] is 1/2-sub-Gaussian
      (Hoeffding), so 1/2 is what the algorithm may assume. ``takes_noise_scale`` is False:
      ``experiments.make_policies`` does not hand it the environment's sigma (the CURE-UCB paper
      names only CURE-UCB and R-ed-UCB as using sigma). Telling it an oracle sigma of 0.01 shrinks
      its radius fifty-fold; we measured that this alone decided "R-ed-AE beats CURE-UCB" on our
      concave instances, so it is available only as an explicit, labelled parameter;
    - ``delta``: confidence, default 1/T (``None``);
    - the least-squares estimator over all of an arm's rewards, one elimination test per sweep.

    ``uses_horizon`` is True: x*, the union bound and the default delta all read T.
    """

    sigma: float = 0.5
    delta: float | None = None
    target: str = "remaining"

    name = "R-ed-AE"
    uses_horizon = True

    def __post_init__(self):
        object.__setattr__(self, "sigma", check_sigma(self.sigma))
        if self.delta is not None:
            object.__setattr__(self, "delta", check_real("delta", self.delta, 0.0, 1.0, lo_open=True, hi_open=True))
        check_choice("target", self.target, TARGETS)

    def log_term(self, T: int, K: int) -> float:
        """log(2 K T / delta) of the radius."""
        delta = default_delta(T) if self.delta is None else self.delta
        return math.log(2.0 * K * T / delta)

    def run_kernel(self, obs, T, checkpoints, arms_out, stream_seed=0):
        return _red_ae_kernel(*kernel_args(obs, T), T, self.sigma, self.log_term(T, obs.K), self.target == "horizon",
                              checkpoints, arms_out)

    def reference(self, X, T, stream_seed=0, trace=False):
        """Plain loop over rounds. ``trace`` gives, at the round that ends each sweep (m >= 2), the
        estimated value v_i of every candidate (NaN elsewhere and for eliminated arms)."""
        arms, index_trace, _ = self._run(X, T, trace)
        return (arms, index_trace) if trace else arms

    def elimination_rounds(self, X, T) -> np.ndarray:
        """Round t at whose end each arm was eliminated in a run of T rounds (-1: never)."""
        return self._run(X, T, False)[2]

    def _run(self, X, T, trace):
        K = X.shape[0]
        log_term = self.log_term(T, K)
        sums = [RunningSums(X[i, 0]) for i in range(K)]
        N = [0] * K
        active = list(range(K))
        eliminated_at = np.full(K, -1, dtype=np.int64)
        arms = np.empty(T, dtype=np.int64)
        index_trace = empty_trace(T, K) if trace else None
        t = 0
        while t < T:
            for arm in list(active):  # one sweep: every candidate once, in index order
                if t == T:
                    break
                N[arm] += 1
                sums[arm].add(N[arm], X[arm, N[arm]])
                arms[t] = arm
                t += 1
            else:
                m = N[active[0]]  # every candidate has been pulled in every sweep: equal counts
                if len(active) == 1 or m < 2:
                    continue
                x_star = (T + 1) / 2 if self.target == "horizon" else m + (T - t + 1) / 2
                value = {}
                for k in active:
                    mean, slope, centre = py_line_fit(sums[k].total(1, m), sums[k].weighted(1, m), 1, m)
                    value[k] = mean + slope * (x_star - centre)
                    if trace:
                        index_trace[t - 1, k] = value[k]
                centre = (1 + m) / 2
                sxx = float(m * (m * m - 1)) / 12.0
                d = x_star - centre
                radius = self.sigma * math.sqrt(2.0 * (1.0 / m + d * d / sxx) * log_term)
                leader = active[0]
                for k in active:
                    if value[k] > value[leader]:
                        leader = k
                for k in active:
                    if k != leader and value[leader] - value[k] > 2.0 * radius:
                        eliminated_at[k] = t
                active = [k for k in active if eliminated_at[k] < 0]
        return arms, index_trace, eliminated_at


@njit(cache=True)
def _red_ae_kernel(mode, table, sigma_x, keys, work, T, sigma, log_term, whole_horizon, checkpoints, arms_out):
    K = table.shape[0]
    C, W, filled = start_cw(work, table)  # own running sums, filled a block of pulls at a time; last pull filled
    counts = np.zeros(K, dtype=np.int64)
    out = np.zeros((checkpoints.size, K), dtype=np.int64)
    active = np.arange(K)   # candidates in increasing index order: the first n_active entries
    n_active = K
    value = np.empty(K)
    pos = 0                 # position inside the current sweep
    keep_arms = arms_out.size > 0
    ci = 0
    for t in range(1, T + 1):
        arm = active[pos]
        pos += 1
        counts[arm] += 1
        if counts[arm] > filled[arm]:
            filled[arm] = fill_cw(C, W, mode, table, sigma_x, keys, arm, filled[arm] + 1, T)
        # Bookkeeping written out inline: a helper call would cost more than a round here.
        if keep_arms:
            arms_out[t - 1] = arm
        if ci < checkpoints.size and t == checkpoints[ci]:
            out[ci, :] = counts
            ci += 1
        if pos < n_active:
            continue
        pos = 0  # end of a sweep
        m = counts[arm]
        if n_active == 1 or m < 2:
            continue
        if whole_horizon:
            x_star = (T + 1) / 2.0
        else:
            x_star = m + (T - t + 1) / 2.0
        leader = active[0]
        for j in range(n_active):
            k = active[j]
            mean, slope, centre = line_fit(C[k, m + 1] - C[k, 1], W[k, m + 1] - W[k, 1], 1, m)
            value[k] = mean + slope * (x_star - centre)
            if value[k] > value[leader]:
                leader = k
        centre = (1 + m) / 2.0
        sxx = float(m * (m * m - 1)) / 12.0
        d = x_star - centre
        radius = sigma * math.sqrt(2.0 * (1.0 / m + d * d / sxx) * log_term)
        kept = 0
        for j in range(n_active):
            k = active[j]
            if k == leader or not (value[leader] - value[k] > 2.0 * radius):
                active[kept] = k
                kept += 1
        n_active = kept
        if n_active == 1:
            # One candidate left: it gets every round to T and no reward is read again, so the rounds
            # left are counted instead of played (the same pulls; their rewards were never used). At
            # the default sigma = 1/2 about a fifth of the rounds of a T = 100,000 run on the Figure 2
            # instances come after it (19.8 -> 14.0 ns per round on LTF, 35.0 -> 31.2 on concave).
            arm = active[0]
            if keep_arms:
                arms_out[t:T] = arm
            while ci < checkpoints.size:
                out[ci, :] = counts
                out[ci, arm] += checkpoints[ci] - t
                ci += 1
            break
    return out
