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
from ..rewards import fill_x, kernel_args
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


# Screening (kernel only): the kernel needs the argmax of the indices, not their values. An arm whose
# window changed gets a cheap upper bound of its index first (``kl_root_upper``); its exact bound is
# computed only when no cheaper comparison settles whether it wins (``kl_root_versus``). SCREEN_GAP is
# the distance in q below which a comparison is left to the exact bound: far above the exact bound's
# error (below 1e-13 with kl_steps >= SCREEN_MIN_STEPS, tests/rising/test_baseline_sw_kl_ucb.py), so
# a screened decision is the decision the exact values would give.
SCREEN_GAP = 1e-9
SCREEN_MIN_STEPS = 16


def kl_root_upper(p, delta):
    """An upper bound of max{q : kl(p, q) <= delta}, from one square root.

    kl(p, q) is the integral over x in [p, q] of (x - p) / (x (1 - x)), and 1 / (x (1 - x)) is
    convex, so by Jensen's inequality (weights x - p, whose mean point is p + 2 (q - p) / 3)
    kl(p, q) >= (q - p)^2 / (2 g(p + 2 (q - p) / 3)) with g(x) = x (1 - x). With u = q - p, the right
    side exceeds delta exactly when (1 + 8 delta / 9) u^2 - (4 delta / 3) (1 - 2 p) u - 2 delta g(p) > 0,
    i.e. for u beyond the positive root of this quadratic; there kl > delta, so the root of kl is not
    beyond it. Returns min(p + u, 1) + SCREEN_GAP (the gap covers rounding)."""
    a = 1.0 + delta * (8.0 / 9.0)
    b = delta * (4.0 / 3.0) * (1.0 - 2.0 * p)
    u = (b + math.sqrt(b * b + 8.0 * delta * p * (1.0 - p) * a)) / (2.0 * a)
    return min(p + u, 1.0) + SCREEN_GAP


def kl_root_versus(p, delta, B):
    """Compare the root q* = max{q : kl(p, q) <= delta} with B, without solving for q*.

    Returns (verdict, bound): verdict +1 when q* > B + SCREEN_GAP, -1 when q* < B - SCREEN_GAP, 0 when
    too close to tell (the caller then computes the exact bound); bound an upper bound of q* (inf
    when nothing new is known), which after a loss is at most B - SCREEN_GAP / 2.

    First without logarithms: with f(x) = 1 / (x (1 - x)) convex, kl(p, q), the integral over
    [p, q] of (x - p) f(x), is at most (q - p)^2 (f(p) / 6 + f(q) / 3) (f below its chord); below
    delta at B + SCREEN_GAP, q* is above. (Jensen's lower bound of kl, the other way, cannot show a
    loss here: the kernel compares an arm only with a B at most its val, itself at most the root of
    that bound, ``kl_root_upper``.) Otherwise from k = kl(p, B) (two logarithms): kl(p, .) is increasing
    and convex on [p, 1) with kl'(p, q) = (q - p) / (q (1 - q)), so kl(p, B + e) <= k + e kl'(p, B + e)
    and kl(p, B - e) >= k - e kl'(p, B), and its tangent at B gives q* <= B + (delta - k) / kl'(p, B)
    (a Newton step from B, which never falls below the root of a convex increasing function). A
    relative slack of 1e-9 on delta covers kl's rounding."""
    e = SCREEN_GAP
    if B < p:
        return 1, math.inf  # q* >= p > B
    if B - p <= 2.0 * e or B + e >= 1.0:
        return 0, math.inf
    slack = 1e-9 * delta
    up = B + e
    if p > 0.0:
        u = up - p
        if u * u * (1.0 / (6.0 * p * (1.0 - p)) + 1.0 / (3.0 * up * (1.0 - up))) + slack < delta:
            return 1, math.inf
    inv_q = 1.0 / B
    inv_1q = 1.0 / (1.0 - B)
    if B - p >= 1e-3:
        kl = (1.0 - p) * math.log((1.0 - p) * inv_1q)
        if p > 0.0:
            kl += p * math.log(p * inv_q)
    else:  # log1p keeps kl accurate when B is close to p
        kl = (1.0 - p) * math.log1p((B - p) * inv_1q)
        if p > 0.0:
            kl += p * (math.log1p((p - B) * inv_q) if B < 2.0 * p else math.log(p * inv_q))
    if kl + e * (up - p) / (up * (1.0 - up)) + slack < delta:
        return 1, math.inf
    slope = (B - p) * inv_q * inv_1q
    if kl - e * slope - slack > delta:
        bound = B - 0.5 * e
        if B - p >= 1e-3:  # the Newton step, where kl' is not so small that rounding could matter
            bound = min(bound, B + (delta - kl) / slope + e)
        return -1, bound
    return 0, math.inf


nb_kl_root_upper = njit(cache=True, inline="always")(kl_root_upper)
nb_kl_root_versus = njit(cache=True, inline="always")(kl_root_versus)


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
    a function of (p_i, level / N_i) only, so an unchanged window keeps its index exactly. With
    ``kl_steps`` >= 16 the kernel also screens: a changed arm gets an upper bound of its index from one
    square root (:func:`kl_root_upper`) and is compared with the best of the others through one
    evaluation of kl (:func:`kl_root_versus`), so that its exact bound is computed only when the two
    are within 1e-9 (about 1 round in 1,000 at K = 5). The arm chosen is the reference's in every
    round (the argument is in the kernel's comments; the screening tests check it on ties too); the
    reference computes every index.
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
        return _sw_kl_ucb_kernel(*kernel_args(obs, T), T, self.tau, self.c, self.kl_steps, checkpoints, arms_out)

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
def _sw_kl_ucb_kernel(mode, table, sigma_x, keys, work, T, tau, c, kl_steps, checkpoints, arms_out):
    # Everything below is written out in this one function: a helper call that takes arrays pays
    # reference-count updates every time, more than the bookkeeping itself.
    K = table.shape[0]
    X = work[0]  # rewards X[i, n], filled from the reward source a block of pulls at a time
    filled = np.zeros(K, dtype=np.int64)  # last pull of each arm in X
    size = min(tau, T)
    counts = np.zeros(K, dtype=np.int64)
    m = np.zeros(K, dtype=np.int64)  # pulls of each arm in the window
    # Running sums of each arm's clipped rewards, kept modulo L = size + 1: R[i, (n + 1) % L] is the
    # sum over its pulls 1..n. A window sum needs only the last m <= size + 1 of them.
    L = size + 1
    R = np.zeros((K, L))
    head = np.ones(K, dtype=np.int64)  # (counts[i] + 1) % L, kept without a division
    # val[i] is arm i's exact index when exact[i], else an upper bound of it (screening, see
    # kl_root_upper); P, D hold the (p, level / m) its exact index would be computed from.
    val = np.full(K, np.inf)
    exact = np.ones(K, dtype=np.bool_)
    P = np.zeros(K)
    D = np.zeros(K)
    screen = kl_steps >= SCREEN_MIN_STEPS  # a truncated solver may be far from the root: no screening
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
                    val[i] = np.inf
                    exact[i] = True
                else:
                    hd = head[i]
                    first = hd - mi if hd >= mi else hd - mi + L  # (counts[i] + 1 - m_i) % L
                    p = min(max((R[i, hd] - R[i, first]) / mi, 0.0), 1.0)
                    delta = level / mi
                    if screen and p < 1.0 and delta > 0.0:
                        P[i] = p
                        D[i] = delta
                        val[i] = nb_kl_root_upper(p, delta)
                        exact[i] = False
                    else:
                        val[i] = nb_kl_upper_bound(p, delta, kl_steps)
                        exact[i] = True
            # The first arm with the largest val wins once its val is exact: every other arm's index
            # is at most its val, so below (lower arms) or at most (higher arms) the winner's. A
            # candidate whose val is only a bound is compared with the best other val B
            # (kl_root_versus): surely above B, it wins (above every other val, so every other index);
            # surely below, its val drops to the bound the comparison returns (below B); too close to
            # tell, its exact index is computed. Two bounded arms could keep lowering each other, so
            # after 2K comparisons in a round every further candidate gets its exact index: at most
            # 3K + 1 passes. The winner is the reference's (the first largest exact index).
            passes = 0
            while True:
                arm = 0
                best = val[0]
                B = -np.inf  # the largest val of the other arms
                for i in range(1, K):
                    v = val[i]
                    if v > best:
                        arm = i
                        B = best
                        best = v
                    elif v > B:
                        B = v
                if exact[arm]:
                    break
                passes += 1
                verdict, bound = nb_kl_root_versus(P[arm], D[arm], B) if B > -np.inf else (1, np.inf)
                if verdict > 0:
                    break
                if verdict < 0 and passes <= 2 * K:
                    val[arm] = min(val[arm], bound)
                else:
                    val[arm] = nb_kl_upper_bound(P[arm], D[arm], kl_steps)
                    exact[arm] = True
        counts[arm] += 1
        n = counts[arm]
        hd = head[arm]
        nxt = hd + 1 if hd + 1 < L else 0
        if n > filled[arm]:
            filled[arm] = fill_x(X, mode, table, sigma_x, keys, arm, filled[arm] + 1, T)
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
