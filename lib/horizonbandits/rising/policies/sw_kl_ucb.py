"""SW-KL-UCB: the KL-UCB index of Garivier and Cappe ("The KL-UCB algorithm for bounded stochastic
bandits and beyond", COLT 2011, arXiv 1102.2490) computed over a sliding window of rounds, with the
defaults Metelli et al. (ICML 2022) used as a rising-bandit baseline."""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np
from numba import njit

from ...errors import check_int, check_real
from .base import RisingPolicy, round_robin_arm
from ._common import RunningSums, empty_trace
from .sw_ucb import slide_window


def kl_upper_bound(p, delta, max_steps):
    """max{q in [p, 1] : kl(p, q) <= delta} for the Bernoulli divergence
    kl(p, q) = p log(p/q) + (1 - p) log((1 - p)/(1 - q)), with p in [0, 1] and delta >= 0.

    Newton's method on g(q) = kl(p, q) - delta, which is convex and increasing on [p, 1). It starts
    right of the root, at the smaller of two upper bounds on it:

    - Pinsker, kl(p, q) >= 2 (q - p)^2, gives q <= p + sqrt(delta / 2);
    - dropping p log(1/q) >= 0 gives q <= 1 - (1 - p) exp(-(delta - p log p) / (1 - p)) < 1;

    so the iterates decrease monotonically to the root (convexity) and never meet the pole at
    q = 1. At most ``max_steps`` steps, stopping earlier after a step smaller than 1e-9 (q - p)
    (Newton converges quadratically, so the next one would be lost in rounding) or one that no
    longer lowers the iterate (a floating-point fixed point). The same source is compiled for the kernels (``nb_kl_upper_bound``)
    and run as plain Python by the references, so both return the same double.
    """
    if p >= 1.0:
        return 1.0
    if delta <= 0.0:
        return p
    plogp = p * math.log(p) if p > 0.0 else 0.0
    q = min(p + math.sqrt(delta / 2.0), 1.0 - (1.0 - p) * math.exp(-(delta - plogp) / (1.0 - p)))
    if q >= 1.0:  # the root is within rounding of 1
        return 1.0
    for _ in range(max_steps):
        if q <= p:
            return p
        # kl(p, q) written with log1p, accurate when q is close to p (small delta)
        kl = (1.0 - p) * math.log1p((q - p) / (1.0 - q))
        if p > 0.0:
            kl += p * math.log1p((p - q) / q)
        step = (kl - delta) * (q * (1.0 - q)) / (q - p)  # g(q) / g'(q), g'(q) = (q - p) / (q (1 - q))
        nxt = q - step
        if not nxt < q:
            break
        q = nxt
        if step <= 1e-9 * (q - p):  # quadratic convergence: the next step would be below rounding
            break
    return q


nb_kl_upper_bound = njit(cache=True)(kl_upper_bound)


def exploration_level(s, c):
    """f(s) = log s + c log log s, the KL-UCB threshold after s observations (Garivier and Cappe's
    log t + c log log t with t -> s). The log log term is dropped while it is negative (s < e), so
    that the level is never negative and defined at s = 1, 2."""
    level = math.log(s)
    if level > 1.0:
        level = level + c * math.log(level)
    return level


nb_exploration_level = njit(cache=True)(exploration_level)


def clip01(x):
    return min(max(x, 0.0), 1.0)


nb_clip01 = njit(cache=True, inline="always")(clip01)


@dataclass(frozen=True)
class SWKLUCB(RisingPolicy):
    """SW-KL-UCB: KL-UCB (Garivier and Cappe 2011, Algorithm 1 with the Bernoulli divergence)
    restricted to a sliding window of the last ``tau`` rounds.

    Rounds t = 1..K pull each arm once in index order. At a later round t the window holds the
    s = min(t - 1, tau) rounds t - tau .. t - 1; with N_i the pulls of arm i among them and p_i the
    average of their rewards clipped to [0, 1], the index is

        U_i(t) = max{ q in [0, 1] : N_i kl(p_i, q) <= log s + c log log s }

    (KL-UCB's log t + c log log t, where t, the number of observations so far, becomes s, the
    number of observations in the window). The arm with the largest index is pulled, lowest index
    on ties. An arm with no pull in the window gets an infinite index, so that, as in KL-UCB's
    initialisation, an arm without data is pulled before any index is compared.

    Readings (parameters where they matter):

    - ``c`` = 3 (the value of Garivier and Cappe's theorem; Metelli et al. 2022 used it) and
      ``tau`` = 252 (Metelli et al. 2022: ceil(sigma^(-4/5)) with sigma = 0.001). Neither reads T,
      so ``uses_horizon`` is False;
    - rewards outside [0, 1] (Gaussian noise) are clipped to [0, 1] one by one before averaging,
      since the Bernoulli divergence is defined on [0, 1] only;
    - log log s is dropped while negative (s = 1, 2; see :func:`exploration_level`);
    - the upper bound is solved by at most ``kl_steps`` Newton steps (see :func:`kl_upper_bound`),
      accurate to about 1e-13 with the default 16.

    Implementation: window counts O(1) per round with a ring buffer of arms (the leaving round's
    count goes back to the arm pulled then); window sums are differences of each arm's running sums
    of clipped rewards (its N_i latest pulls are exactly its pulls in the window), computed the same
    way in the reference. An index is recomputed only when its arm's window changed or, while
    s = min(t - 1, tau) still grows, every round.
    """

    c: float = 3.0
    tau: int = 252
    kl_steps: int = 16

    name = "SW-KL-UCB"
    uses_horizon = False

    def __post_init__(self):
        object.__setattr__(self, "c", check_real("c", self.c, 0.0))
        object.__setattr__(self, "tau", check_int("tau", self.tau, 1))
        object.__setattr__(self, "kl_steps", check_int("kl_steps", self.kl_steps, 1))

    def run_kernel(self, obs, T, checkpoints, arms_out, stream_seed=0):
        return _sw_kl_ucb_kernel(obs.X, T, self.tau, self.c, self.kl_steps, checkpoints, arms_out)

    def reference(self, X, T, stream_seed=0, trace=False):
        """Plain loop; ``trace`` holds each index (inf for an arm absent from the window, NaN while
        initialising)."""
        K = X.shape[0]
        tau = self.tau
        sums = [RunningSums(0.0) for _ in range(K)]  # running sums of the clipped rewards
        N = [0] * K
        recent = deque(maxlen=tau)  # arms of the last tau rounds: t - tau .. t - 1
        arms = np.empty(T, dtype=np.int64)
        index_trace = empty_trace(T, K) if trace else None
        for t in range(1, T + 1):
            if t <= K:
                arm = round_robin_arm(t, K)
            else:
                level = exploration_level(min(t - 1, tau), self.c)
                arm, best = 0, -math.inf
                for i in range(K):
                    m = recent.count(i)
                    if m == 0:
                        u = math.inf
                    else:
                        p = clip01(sums[i].total(N[i] - m + 1, N[i]) / m)  # the arm's m latest pulls
                        u = kl_upper_bound(p, level / m, self.kl_steps)
                    if trace:
                        index_trace[t - 1, i] = u
                    if u > best:
                        arm, best = i, u
            N[arm] += 1
            sums[arm].add(N[arm], clip01(X[arm, N[arm]]))
            recent.append(arm)
            arms[t - 1] = arm
        return (arms, index_trace) if trace else arms


@njit(cache=True, inline="always")
def _kl_index(P, i, n, m, level, kl_steps):
    if m == 0:
        return np.inf
    p = nb_clip01((P[i, n + 1] - P[i, n - m + 1]) / m)
    return nb_kl_upper_bound(p, level / m, kl_steps)


@njit(cache=True)
def _sw_kl_ucb_kernel(X, T, tau, c, kl_steps, checkpoints, arms_out):
    K = X.shape[0]
    counts = np.zeros(K, dtype=np.int64)
    m = np.zeros(K, dtype=np.int64)
    P = np.zeros((K, T + 2))  # P[i, n + 1] = sum of the clipped rewards of arm i's pulls 1..n
    index = np.full(K, np.inf)
    ring = np.zeros(min(tau, T), dtype=np.int64)
    out = np.zeros((checkpoints.size, K), dtype=np.int64)
    pos = 0
    pulled = -1
    left = -1
    level = 0.0
    # Bookkeeping written out rather than through _common.record, whose call costs tens of ns a round.
    keep_arms = arms_out.size > 0
    next_cp = checkpoints[0] if checkpoints.size > 0 else -1
    ci = 0
    for t in range(1, T + 1):
        if t <= K:
            arm = t - 1
        else:
            if t <= tau + 1 or t == K + 1:
                # s = min(t - 1, tau) still grows (or first index round): every index is stale.
                level = nb_exploration_level(min(t - 1, tau), c)
                for i in range(K):
                    index[i] = _kl_index(P, i, counts[i], m[i], level, kl_steps)
            else:
                # Only the arm pulled last round and the arm that left the window changed.
                index[pulled] = _kl_index(P, pulled, counts[pulled], m[pulled], level, kl_steps)
                if left >= 0 and left != pulled:
                    index[left] = _kl_index(P, left, counts[left], m[left], level, kl_steps)
            arm = 0
            best = index[0]
            for i in range(1, K):
                if index[i] > best:
                    best = index[i]
                    arm = i
        counts[arm] += 1
        n = counts[arm]
        P[arm, n + 1] = P[arm, n] + nb_clip01(X[arm, n])
        pos, left = slide_window(ring, pos, m, arm, t, tau)
        pulled = arm
        if keep_arms:
            arms_out[t - 1] = arm
        if t == next_cp:
            for k in range(K):
                out[ci, k] = counts[k]
            ci += 1
            next_cp = checkpoints[ci] if ci < checkpoints.size else -1
    return out
