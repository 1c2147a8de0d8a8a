"""The commitment decision shared by every policy: uniform over a set, or its empirical g-best.

Ties of the empirical g-means (frequent with Bernoulli rewards and few pulls) are broken uniformly
at random with the policy's own stream, not by arm index: an index rule would favour whichever arm
comes first, which in the section 7.2 instance happens to be the g-best arm. Arms of the set that
were never pulled have no estimate and are skipped, unless no arm of the set was pulled at all
(then the choice is uniform over the set). Kernels (``nb_*``) and references (``py_*``) make the same
comparisons and consume the same draws.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..rng import nb_uniform


@njit(cache=True)
def nb_commit_uniform(mask, pol):
    """Uniform draw from the arms i with mask[i] (one uniform from the policy stream)."""
    size = 0
    for i in range(mask.size):
        if mask[i]:
            size += 1
    pick = int(nb_uniform(pol) * size)
    if pick >= size:
        pick = size - 1
    for i in range(mask.size):
        if mask[i]:
            if pick == 0:
                return i
            pick -= 1
    return -1


@njit(cache=True)
def nb_commit_empirical(mask, sums, counts, pol):
    """argmax of sums / counts over the pulled arms of the mask, uniform among exact ties."""
    best = -1.0
    n_tied = 0
    for i in range(mask.size):
        if mask[i] and counts[i] > 0:
            mean = sums[i] / counts[i]
            if mean > best:
                best = mean
                n_tied = 1
            elif mean == best:
                n_tied += 1
    if n_tied == 0:
        return nb_commit_uniform(mask, pol)
    if n_tied == 1:
        pick = 0
    else:
        pick = int(nb_uniform(pol) * n_tied)
        if pick >= n_tied:
            pick = n_tied - 1
    for i in range(mask.size):
        if mask[i] and counts[i] > 0 and sums[i] / counts[i] == best:
            if pick == 0:
                return i
            pick -= 1
    return -1


def py_commit_uniform(members: list, stream) -> int:
    """Reference twin of ``nb_commit_uniform``; ``members`` in increasing arm order."""
    pick = min(int(stream.uniform() * len(members)), len(members) - 1)
    return members[pick]


def py_commit_empirical(members: list, sums, counts, stream) -> int:
    """Reference twin of ``nb_commit_empirical``."""
    pulled = [i for i in members if counts[i] > 0]
    if not pulled:
        return py_commit_uniform(members, stream)
    best = max(sums[i] / counts[i] for i in pulled)
    tied = [i for i in pulled if sums[i] / counts[i] == best]
    if len(tied) == 1:
        return tied[0]
    return tied[min(int(stream.uniform() * len(tied)), len(tied) - 1)]


def mask_of(members, K: int) -> np.ndarray:
    m = np.zeros(K, dtype=np.bool_)
    m[list(members)] = True
    return m
