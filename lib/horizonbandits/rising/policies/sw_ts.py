"""SW-TS: sliding-window Thompson sampling with Beta posteriors (Trovo, Paladino, Restelli and Gatti,
"Sliding-window Thompson sampling for non-stationary settings", JAIR 68, 2020), with the window
Metelli et al. (ICML 2022) used as a rising-bandit baseline."""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np
from numba import njit

from ...errors import check_int
from ...rng import PyStream, nb_beta_int_step, nb_gamma_constants, nb_uniform_step, new_state
from ..rewards import fill_x, kernel_args
from .base import RisingPolicy
from ._common import empty_trace
from .sw_ucb import REFERENCE_HORIZON, check_window, check_window_rule, rule_horizon


@dataclass(frozen=True)
class SWTS(RisingPolicy):
    """SW-TS (Trovo et al. 2020, Algorithm 1): Beta(1, 1) priors updated with the last tau rounds only.

    At round t, with S_i and F_i the numbers of successes and failures of arm i in the window of
    rounds t - tau .. t - 1 (s >= 1), draw theta_i ~ Beta(S_i + 1, F_i + 1) for every arm and pull
    the arm with the largest theta_i (lowest index on ties). There is no separate initialisation: an
    arm with no pull in the window samples from the uniform prior.

    Bernoulli trick (Agrawal and Goyal 2012) for non-binary rewards: the observed reward x is
    clipped to [0, 1] and the posterior is updated with y = 1{u < clip(x)}, u uniform, a Bernoulli
    draw whose mean is the clipped reward. With Bernoulli rewards y = x. The window then slides over
    these binary outcomes.

    Randomness, all from the policy's stream (``horizonbandits.rng``), in this order each round:
    theta_0 .. theta_{K-1}, then u for the Bernoulli trick (``uniform``; drawn even when the reward
    is already 0 or 1, so the stream's use does not depend on the rewards' type). Each theta_i is an
    exact Beta(a, b) draw (a = S_i + 1, b = F_i + 1) as X / (X + Y), X ~ Gamma(a) drawn before
    Y ~ Gamma(b) (``rng.nb_beta_int_step`` / ``PyStream.beta_int``): a gamma of integer shape 1 or 2
    is a sum of ziggurat exponentials, a larger one comes from Marsaglia and Tsang's method (2000)
    on ziggurat normals; the kernel tabulates that method's constants for shapes 1 .. tau + 1.

    ``tau`` = None means ceil(sqrt(n)) (Metelli et al. 2022: T^(1 - beta) with beta = 1/2) with n
    given by ``window_rule`` (a reading, as for SW-UCB: see ``sw_ucb.WINDOW_RULES``): ``"fixed"``
    (default) takes n = ``reference_horizon`` = 100,000, a window of 317 rounds whatever the horizon,
    as the CURE-UCB paper describes SW-TS (a fixed-size window, decisions that do not read T);
    ``"horizon"`` takes n = T, the rule of Trovo et al. for a known horizon. ``uses_horizon`` is True
    only under ``"horizon"`` without an explicit ``tau``.

    Implementation: a ring buffer of (arm, outcome) over the last tau rounds keeps S_i and F_i in
    O(1) per round; the leaving outcome is subtracted from the arm pulled in that round. Counts are
    integers, so kernel and reference (which recounts the window every round) agree exactly.
    """

    tau: int | None = None
    window_rule: str = "fixed"
    reference_horizon: int = REFERENCE_HORIZON

    name = "SW-TS"
    randomised = True

    def __post_init__(self):
        object.__setattr__(self, "tau", check_window("tau", self.tau))
        object.__setattr__(self, "window_rule", check_window_rule(self.window_rule))
        object.__setattr__(self, "reference_horizon", check_int("reference_horizon", self.reference_horizon, 2))

    @property
    def uses_horizon(self) -> bool:
        return self.tau is None and self.window_rule == "horizon"

    def window(self, T: int) -> int:
        """tau used for horizon T: the given one, else ceil(sqrt(n)) with n the reference horizon
        (``window_rule="fixed"``) or T (``"horizon"``)."""
        if self.tau is not None:
            return self.tau
        return math.isqrt(rule_horizon(self, T) - 1) + 1  # ceil(sqrt(n)), exact

    def run_kernel(self, obs, T, checkpoints, arms_out, stream_seed=0):
        return _sw_ts_kernel(*kernel_args(obs, T), T, self.window(T), checkpoints, arms_out, new_state(stream_seed))

    def reference(self, X, T, stream_seed=0, trace=False):
        """Plain loop; ``trace`` holds each arm's posterior draw theta_i."""
        K = X.shape[0]
        tau = self.window(T)
        stream = PyStream(stream_seed)
        N = [0] * K
        recent = deque(maxlen=tau)  # (arm, outcome) of the last tau rounds: t - tau .. t - 1
        arms = np.empty(T, dtype=np.int64)
        index_trace = empty_trace(T, K) if trace else None
        for t in range(1, T + 1):
            arm, best = 0, -math.inf
            for i in range(K):
                successes = sum(y for a, y in recent if a == i)
                failures = sum(1 - y for a, y in recent if a == i)
                theta = stream.beta_int(successes + 1, failures + 1)
                if trace:
                    index_trace[t - 1, i] = theta
                if theta > best:
                    arm, best = i, theta
            N[arm] += 1
            reward = min(max(X[arm, N[arm]], 0.0), 1.0)
            outcome = 1 if stream.uniform() < reward else 0  # Bernoulli trick
            recent.append((arm, outcome))
            arms[t - 1] = arm
        return (arms, index_trace) if trace else arms


@njit(cache=True)
def _sw_ts_kernel(mode, table, sigma_x, keys, work, T, tau, checkpoints, arms_out, state):
    K = table.shape[0]
    X = work[0]  # rewards X[i, n], filled from the reward source a block of pulls at a time
    filled = np.zeros(K, dtype=np.int64)  # last pull of each arm in X
    counts = np.zeros(K, dtype=np.int64)
    S = np.zeros(K, dtype=np.int64)  # successes in the window
    F = np.zeros(K, dtype=np.int64)  # failures in the window
    size = min(tau, T)
    ring_arm = np.zeros(size, dtype=np.int64)
    ring_y = np.zeros(size, dtype=np.int64)
    out = np.zeros((checkpoints.size, K), dtype=np.int64)
    # Marsaglia-Tsang constants (d, c) of Gamma(n + 1), n = 0 .. size: S_i + 1 and F_i + 1 never exceed
    # size + 1. One row per shape, so that a draw's two constants share a cache line (0.5 ns per round
    # and arm less than two separate arrays).
    g = np.empty((size + 1, 2))
    for n in range(size + 1):
        g[n, 0], g[n, 1] = nb_gamma_constants(float(n + 1))
    s = state[0]  # the stream's state as a local scalar: no array traffic per draw
    pos = 0
    # Bookkeeping written out inline: a helper call would cost tens of ns a round.
    keep_arms = arms_out.size > 0
    next_cp = checkpoints[0] if checkpoints.size > 0 else -1
    ci = 0
    for t in range(1, T + 1):
        arm = 0
        best = -np.inf
        for i in range(K):
            a = S[i]
            b = F[i]
            # Rows of g by unsigned indices (a, b >= 0): numba then omits its negative-index
            # wraparound, 0.5 to 1.5 ns per round and arm less (2026-12-01).
            ra = np.uint64(a)
            rb = np.uint64(b)
            theta, s = nb_beta_int_step(s, a + 1, b + 1, g[ra, 0], g[ra, 1], g[rb, 0], g[rb, 1])
            better = theta > best  # branch-free select: the winner changes unpredictably
            best = theta if better else best
            arm = i if better else arm
        counts[arm] += 1
        if counts[arm] > filled[arm]:
            filled[arm] = fill_x(X, mode, table, sigma_x, keys, arm, filled[arm] + 1, T)
        reward = min(max(X[arm, counts[arm]], 0.0), 1.0)
        u, s = nb_uniform_step(s)
        y = 1 if u < reward else 0
        if t > tau:  # round t - tau leaves: its outcome goes back to the arm pulled then
            old = ring_arm[pos]
            S[old] -= ring_y[pos]
            F[old] -= 1 - ring_y[pos]
        ring_arm[pos] = arm
        ring_y[pos] = y
        S[arm] += y
        F[arm] += 1 - y
        pos += 1
        if pos == size:
            pos = 0
        if keep_arms:
            arms_out[t - 1] = arm
        if t == next_cp:
            for k in range(K):
                out[ci, k] = counts[k]
            ci += 1
            next_cp = checkpoints[ci] if ci < checkpoints.size else -1
    state[0] = s
    return out
