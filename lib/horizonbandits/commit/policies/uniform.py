"""Uniform exploration then commitment: a sanity reference that is not in the paper."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ...rng import PyStream
from ..commitment import nb_commit_empirical, py_commit_empirical
from ..sampling import nb_block_sums, prefix_sums
from .base import CommitPolicy, problem_arrays


def round_robin_counts(N: int, K: int) -> np.ndarray:
    """Pulls of each arm after N rounds of round-robin in index order."""
    return np.array([N // K + (1 if i < N % K else 0) for i in range(K)], dtype=np.int64)


@dataclass(frozen=True)
class UniformCommit(CommitPolicy):
    """UniformCommit: round-robin over all arms for N rounds, then commit to the empirical g-best arm.

    Not in the paper. Every figure shows it so that a reader sees when RAEC's reserved exploration does
    more than uniform exploration would (it pays N (mean f-gap) in the experiment and learns g as well as
    N/K pulls per arm allow). Ties of the empirical g-means are broken uniformly at random.
    """

    name = "UniformCommit"

    def run_batch(self, problem, env_seeds, pol_seeds):
        n = env_seeds.size
        counts = np.zeros((n, problem.K), dtype=np.int64)
        committed = np.zeros(n, dtype=np.int64)
        _uniform_batch(round_robin_counts(problem.N, problem.K), env_seeds, pol_seeds, *problem_arrays(problem),
                       counts, committed)
        return counts, committed

    def run_table(self, problem, F, G, pol_seed):
        counts = round_robin_counts(problem.N, problem.K)
        CG = prefix_sums(G)
        sums = np.array([CG[i, counts[i]] for i in range(problem.K)])
        committed = _commit_all(sums, counts, np.uint64(pol_seed))
        return counts, int(committed)

    def reference(self, problem, F, G, stream_seed=0, trace=False):
        K, N = problem.K, problem.N
        stream = PyStream(stream_seed)
        counts = [0] * K
        sg = [0.0] * K
        arms = np.empty(N, dtype=np.int64)
        for t in range(1, N + 1):
            arm = (t - 1) % K
            counts[arm] += 1
            sg[arm] += G[arm, counts[arm]]
            arms[t - 1] = arm
        committed = py_commit_empirical(list(range(K)), sg, counts, stream)
        return (arms, committed, []) if trace else (arms, committed)


@njit(cache=True)
def _commit_all(sums, counts, pol_seed):
    pol = np.empty(1, dtype=np.uint64)
    pol[0] = pol_seed
    return nb_commit_empirical(np.ones(sums.size, dtype=np.bool_), sums, counts, pol)


@njit(cache=True)
def _uniform_batch(rr_counts, env_seeds, pol_seeds, kind, mu_f, mu_g, probs, fv, gv, counts_out, committed_out):
    K = rr_counts.size
    env = np.empty(1, dtype=np.uint64)
    pol = np.empty(1, dtype=np.uint64)
    sums = np.zeros(K)
    everyone = np.ones(K, dtype=np.bool_)
    for s in range(env_seeds.size):
        env[0] = env_seeds[s]
        pol[0] = pol_seeds[s]
        for i in range(K):
            _, sg = nb_block_sums(env, kind, i, rr_counts[i], mu_f, mu_g, probs, fv, gv)
            sums[i] = sg
        committed_out[s] = nb_commit_empirical(everyone, sums, rr_counts, pol)
        counts_out[s, :] = rr_counts
