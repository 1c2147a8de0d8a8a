"""The optimal policy for a known horizon (Proposition 3.2) and pseudo-regret.

With nondecreasing curves the optimal policy commits to one arm for the whole horizon:
i*(T) = argmax_i sum_{n=1}^{T} mu_i(n). The pseudo-regret of a run is the optimal value minus
the sum of the means of the pulled arms at their pull counts, which in a rested bandit depends
only on the final pull counts: sum_i sum_{n=1}^{N_i(T)} mu_i(n).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .instances import RisingInstance


def optimal_arm(inst: RisingInstance, T: int) -> int:
    """argmax_i sum_{n=1..T} mu_i(n); ties go to the lowest index."""
    return int(np.argmax(inst.cumulative(T)))


def optimal_value(inst: RisingInstance, T: int) -> float:
    return float(np.max(inst.cumulative(T)))


def collected_value(inst: RisingInstance, pulls) -> np.ndarray:
    """sum_i sum_{n=1}^{pulls_i} mu_i(n) for pull-count vectors of shape (..., K)."""
    pulls = np.asarray(pulls, dtype=np.int64)
    if pulls.shape[-1] != inst.K:
        raise ValueError(f"pulls has last dimension {pulls.shape[-1]}, expected K={inst.K}")
    arms = np.arange(inst.K)
    return inst.prefix[arms, pulls].sum(axis=-1)


def pseudo_regret(inst: RisingInstance, pulls, T: int) -> np.ndarray:
    """Optimal value at T minus the collected mean reward. Not clipped: on curves that are not
    nondecreasing (real data) a policy can beat the best fixed arm and the regret is negative."""
    pulls = np.asarray(pulls, dtype=np.int64)
    total = pulls.sum(axis=-1)
    if np.any(total != T):
        raise ValueError(f"pulls sum to {np.unique(total).tolist()}, expected T={T}")
    return optimal_value(inst, T) - collected_value(inst, pulls)


def regret_curve(inst: RisingInstance, arms, T: int | None = None) -> np.ndarray:
    """Cumulative pseudo-regret after each round t against the horizon-T optimal arm i*(T).

    ``arms`` is an arm sequence (length T) or a batch (seeds x T). At t = T the curve ends at the
    run's pseudo-regret.
    """
    arms = np.asarray(arms, dtype=np.int64)
    squeeze = arms.ndim == 1
    arms = np.atleast_2d(arms)
    T = arms.shape[1] if T is None else T
    best = optimal_arm(inst, T)
    t = np.arange(1, arms.shape[1] + 1)
    out = np.empty(arms.shape, dtype=float)
    for s, seq in enumerate(arms):
        onehot = np.zeros((seq.size, inst.K), dtype=np.int64)
        onehot[np.arange(seq.size), seq] = 1
        counts = np.cumsum(onehot, axis=0)[np.arange(seq.size), seq]
        gained = np.cumsum(inst.means[seq, counts])
        out[s] = inst.prefix[best, t] - gained
    return out[0] if squeeze else out


def allocations(T: int, K: int):
    """Every way to split T pulls among K arms (compositions of T into K nonnegative parts)."""
    if K == 1:
        yield (T,)
        return
    for first in range(T + 1):
        for rest in allocations(T - first, K - 1):
            yield (first,) + rest


def exhaustive_best_allocation(inst: RisingInstance, T: int, limit: int = 2_000_000):
    """The best pull allocation by brute force over all of them (small instances only).

    In a rested bandit the value of a policy depends only on how many times it pulled each arm, so
    the best of all policies is the best allocation (N_1, ..., N_K) with sum T. Returns
    (value, allocation). Proposition 3.2 says that on nondecreasing curves the best allocation
    puts all T pulls on one arm.

    Every allocation is visited (no pruning: the search must not assume the structure it checks),
    in the order of :func:`allocations`, by a compiled loop; each value is summed arm by arm and an
    allocation replaces the best so far only when it beats it by more than 1e-12, so the result is
    the one of :func:`exhaustive_best_allocation_reference` (the tests compare them).
    """
    from math import comb
    T = inst.check_horizon(T)
    count = comb(T + inst.K - 1, inst.K - 1)
    if count > limit:
        raise ValueError(f"T={T} is not allowed with K={inst.K}: {count:,} allocations exceed limit={limit:,}")
    if inst.K >= 8:  # numpy sums 8 or more terms pairwise: keep the reference's rounding
        return exhaustive_best_allocation_reference(inst, T, limit)
    alloc = np.zeros(inst.K, dtype=np.int64)
    value = _best_allocation_kernel(np.ascontiguousarray(inst.prefix, dtype=np.float64), T, alloc)
    return float(value), alloc


@njit(cache=True)
def _best_allocation_kernel(prefix, T, best):
    """Scan every composition of T into K = prefix.shape[0] parts in lexicographic order (the order of
    ``allocations``); write the best one into ``best`` and return its value."""
    K = prefix.shape[0]
    a = np.zeros(K, dtype=np.int64)
    a[K - 1] = T
    best_value = -np.inf
    while True:
        value = 0.0
        for k in range(K):
            value += prefix[k, a[k]]
        if value > best_value + 1e-12:
            best_value = value
            best[:] = a
        # next composition: bump the last part that can grow (the one before the last nonzero part), zero the rest
        if a[K - 1] > 0:
            i = K - 2
        else:
            i = K - 2
            while i >= 0 and a[i] == 0:
                i -= 1
            i -= 1
        if i < 0:
            return best_value
        a[i] += 1
        used = 0
        for k in range(i + 1):
            used += a[k]
        for k in range(i + 1, K - 1):
            a[k] = 0
        a[K - 1] = T - used


def exhaustive_best_allocation_reference(inst: RisingInstance, T: int, limit: int = 2_000_000):
    """:func:`exhaustive_best_allocation` in plain Python (one numpy sum per allocation; slow)."""
    from math import comb
    T = inst.check_horizon(T)
    count = comb(T + inst.K - 1, inst.K - 1)
    if count > limit:
        raise ValueError(f"T={T} is not allowed with K={inst.K}: {count:,} allocations exceed limit={limit:,}")
    best_value, best_alloc = -np.inf, None
    arms = np.arange(inst.K)
    for alloc in allocations(T, inst.K):
        value = float(inst.prefix[arms, list(alloc)].sum())
        if value > best_value + 1e-12:
            best_value, best_alloc = value, alloc
    return best_value, np.array(best_alloc)


def switch_horizons(inst: RisingInstance, T_max: int | None = None) -> list[tuple[int, int, int]]:
    """Horizons T at which the optimal arm i*(T) changes: (T, arm before, arm after)."""
    T_max = inst.T_max if T_max is None else inst.check_horizon(T_max, "T_max")
    best = np.argmax(inst.prefix[:, 1:T_max + 1], axis=0)
    change = np.flatnonzero(np.diff(best)) + 1
    return [(int(c) + 1, int(best[c - 1]), int(best[c])) for c in change]
