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


def kl_upper_bound(p, delta, max_steps):
    """max{q in [p, 1] : kl(p, q) <= delta} for the Bernoulli divergence
    kl(p, q) = p log(p/q) + (1 - p) log((1 - p)/(1 - q)), with p in [0, 1] and delta >= 0.

    The root of g(q) = kl(p, q) - delta, which is convex and increasing on [p, 1), by Householder's
    third-order iteration (quartic convergence: its derivatives g', g'' and g''' are rational, so a
    step costs the two logarithms of g and a few divisions, like a Newton step, and about two steps
    do what takes Newton four). It starts right of the root, at the smaller of two upper bounds:

    - Pinsker, kl(p, q) >= 2 (q - p)^2, gives q <= p + sqrt(delta / 2);
    - dropping p log(1/q) >= 0 gives q <= 1 - (1 - p) exp(-(delta - p log p) / (1 - p)) < 1;

    and keeps the root bracketed by the signs of g (an iterate that would leave the bracket is
    replaced by the bracket's midpoint, so the pole at q = 1 is never met). At most ``max_steps``
    steps, stopping after a step below 1e-5 (q - p): the error left is then of the order of that
    step to the fourth power, below rounding. kl is evaluated with log1p while q - p < 1e-3
    (accurate for q close to p) and with plain logarithms, twice as cheap, above (their rounding
    then moves the root by at most about 1e-16 q (1 - q) / (q - p) < 3e-14). The same source is
    compiled for the kernels (``nb_kl_upper_bound``) and run as plain Python by the references, so
    both return the same double.
    """
    if p >= 1.0:
        return 1.0
    if delta <= 0.0:
        return p
    hi = p + math.sqrt(delta / 2.0)
    # The second bound costs a log and an exp; skip it when Pinsker's is already below a cheap lower
    # bound of it (-p log p >= p (1 - p) and exp(-y) <= 1 / (1 + y)), so that it could not be smaller.
    if hi > 1.0 - (1.0 - p) * (1.0 - p) / (1.0 - p + delta + p * (1.0 - p)):
        plogp = p * math.log(p) if p > 0.0 else 0.0
        hi = min(hi, 1.0 - (1.0 - p) * math.exp(-(delta - plogp) / (1.0 - p)))
    if hi >= 1.0:  # the root is within rounding of 1
        return 1.0
    lo = p
    q = hi
    for _ in range(max_steps):
        if q <= p:
            return p
        inv_q = 1.0 / q
        inv_1q = 1.0 / (1.0 - q)
        if q - p >= 1e-3:
            kl = (1.0 - p) * math.log((1.0 - p) * inv_1q)
            if p > 0.0:
                kl += p * math.log(p * inv_q)
        else:  # log1p keeps kl accurate when q is close to p (small delta)
            kl = (1.0 - p) * math.log1p((q - p) * inv_1q)
            if p > 0.0:
                kl += p * (math.log1p((p - q) * inv_q) if q < 2.0 * p else math.log(p * inv_q))
        g = kl - delta
        if g > 0.0:
            hi = q
        else:
            lo = q
        # Householder step q - h (1 - h a2 / 2) / (1 - h a2 + h^2 a3 / 6), with h = g / g' and
        # a2, a3 = g'' / g', g''' / g' at q; 1 / g' = q (1 - q) / (q - p).
        w = q * (1.0 - q) / (q - p)
        h = g * w
        a2 = (p * inv_q * inv_q + (1.0 - p) * inv_1q * inv_1q) * w
        a3 = 2.0 * ((1.0 - p) * inv_1q * inv_1q * inv_1q - p * inv_q * inv_q * inv_q) * w
        step = h * (1.0 - 0.5 * h * a2) / (1.0 - h * a2 + h * h * a3 / 6.0)
        nxt = q - step
        if nxt == q:  # converged to rounding
            break
        if lo < nxt < hi:
            q = nxt
            if abs(step) <= 1e-5 * (q - p):  # quartic convergence: what is left is below rounding
                break
        else:
            q = 0.5 * (lo + hi)  # safeguard: a step leaving the bracket becomes a bisection
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
    - the upper bound is solved by at most ``kl_steps`` Householder steps (third order; see
      :func:`kl_upper_bound`), accurate to a few 1e-14 with the default 16; two steps are typical.

    Implementation: window counts O(1) per round with a ring buffer of arms (the leaving round's
    count goes back to the arm pulled then); window sums are differences of each arm's running sums
    of clipped rewards (its N_i latest pulls are exactly its pulls in the window), computed the same
    way in the reference; the kernel keeps only each arm's last tau + 1 running sums, in a ring. An
    index is recomputed only when its arm's window changed (the arm pulled last round and the arm
    whose pull left the window) or, while s = min(t - 1, tau) still grows, every round. The index is
    a function of (p_i, level / N_i) only, so an unchanged window keeps its index exactly.
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


@njit(cache=True)
def _sw_kl_ucb_kernel(X, T, tau, c, kl_steps, checkpoints, arms_out):
    # Everything below is written out in this one function: a helper call that takes arrays pays
    # reference-count updates every time, more than the bookkeeping itself.
    K = X.shape[0]
    size = min(tau, T)
    counts = np.zeros(K, dtype=np.int64)
    m = np.zeros(K, dtype=np.int64)  # pulls of each arm in the window
    # Running sums of each arm's clipped rewards, kept modulo L = size + 1: R[i, (n + 1) % L] is the
    # sum over its pulls 1..n. A window sum needs only the last m <= size + 1 of them.
    L = size + 1
    R = np.zeros((K, L))
    head = np.ones(K, dtype=np.int64)  # (counts[i] + 1) % L, kept without a division
    index = np.full(K, np.inf)
    ring = np.zeros(size, dtype=np.int64)  # arm of each round in the window
    out = np.zeros((checkpoints.size, K), dtype=np.int64)
    pos = 0
    pulled = -1
    left = -1
    level = 0.0
    keep_arms = arms_out.size > 0
    next_cp = checkpoints[0] if checkpoints.size > 0 else -1
    ci = 0
    for t in range(1, T + 1):
        if t <= K:
            arm = t - 1
        else:
            grow = t <= tau + 1 or t == K + 1  # s = min(t - 1, tau) still grows: every index is stale
            if grow:
                level = nb_exploration_level(min(t - 1, tau), c)
            # otherwise only the arm pulled last round and the arm that left the window changed
            for j in range(K if grow else 2):
                i = j if grow else (pulled if j == 0 else left)
                if i < 0 or (j == 1 and not grow and left == pulled):
                    continue
                mi = m[i]
                if mi == 0:
                    index[i] = np.inf
                else:
                    hd = head[i]
                    first = hd - mi if hd >= mi else hd - mi + L  # (counts[i] + 1 - m_i) % L
                    p = min(max((R[i, hd] - R[i, first]) / mi, 0.0), 1.0)
                    index[i] = nb_kl_upper_bound(p, level / mi, kl_steps)
            arm = 0
            best = index[0]
            for i in range(1, K):
                v = index[i]
                better = v > best  # branch-free select: the leader changes unpredictably
                best = v if better else best
                arm = i if better else arm
        counts[arm] += 1
        n = counts[arm]
        hd = head[arm]
        nxt = hd + 1 if hd + 1 < L else 0
        R[arm, nxt] = R[arm, hd] + min(max(X[arm, n], 0.0), 1.0)
        head[arm] = nxt
        # Slide the window past round t: round t - tau leaves, and its count goes back to the arm
        # pulled then (not the one pulled now).
        left = -1
        if t > tau:
            left = ring[pos]
            m[left] -= 1
        ring[pos] = arm
        m[arm] += 1
        pos += 1
        if pos == size:
            pos = 0
        pulled = arm
        if keep_arms:
            arms_out[t - 1] = arm
        if t == next_cp:
            for k in range(K):
                out[ci, k] = counts[k]
            ci += 1
            next_cp = checkpoints[ci] if ci < checkpoints.size else -1
    return out
