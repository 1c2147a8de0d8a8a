"""The optimal policy for a known horizon (Proposition 3.2) and pseudo-regret.

With nondecreasing curves the optimal policy commits to one arm for the whole horizon:
i*(T) = argmax_i sum_{n=1}^{T} mu_i(n). The pseudo-regret of a run is the optimal value minus
the sum of the means of the pulled arms at their pull counts, which in a rested bandit depends
only on the final pull counts: sum_i sum_{n=1}^{N_i(T)} mu_i(n).
"""
from __future__ import annotations

import numpy as np

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
    """
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
