"""Successive Rejects on the commitment reward g (Audibert, Bubeck and Munos 2010, "Best arm identification in
multi-armed bandits", COLT, section 3): a fixed-budget best-arm identification baseline.

Paper B's section 2.1 notes that with f identically 0 the experiment-then-commit problem is fixed-budget best-arm
identification with budget N (the regret is (T - N) times the simple regret of the committed arm). This policy is
the classical answer to that problem, so a notebook can set RAEC beside it there. It is not in paper B.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ...errors import check_int
from ...rng import PyStream, nb_uniform
from ..sampling import nb_block_sums, prefix_sums
from .base import CommitPolicy, problem_arrays


def log_bar(K: int) -> float:
    """logbar(K) = 1/2 + sum_{i=2}^K 1/i (Audibert, Bubeck and Munos 2010, section 3)."""
    K = check_int("K", K, 2)
    return 0.5 + sum(1.0 / i for i in range(2, K + 1))


def phase_lengths(N: int, K: int) -> np.ndarray:
    """n_k = ceil((N - K) / (logbar(K) (K + 1 - k))) for the phases k = 1..K-1 (n_0 = 0): after phase k every arm
    still in play has been pulled n_k times. Needs N > K, so that n_1 >= 1 and every arm is pulled."""
    K = check_int("K", K, 2)
    N = check_int("N", N, K + 1)
    lb = log_bar(K)
    return np.array([math.ceil((N - K) / (lb * (K + 1 - k))) for k in range(1, K)], dtype=np.int64)


def error_bound(mu_g, N: int) -> float:
    """Theorem 2 of Audibert, Bubeck and Munos (2010): P(the recommended arm is not the g-best) <=
    K (K - 1) / 2 exp(-(N - K) / (logbar(K) H_2)), H_2 = max_i i / Delta_(i)^2 over the gaps sorted increasingly
    (Delta_(1) = Delta_(2), the smallest gap, stands for the best arm). Infinite H_2 (a tie for the best) gives
    the trivial bound K (K - 1) / 2."""
    mu = np.sort(np.asarray(mu_g, dtype=float))[::-1]
    K = mu.size
    gaps = mu[0] - mu
    gaps[0] = gaps[1]
    if gaps[1] <= 0:
        return K * (K - 1) / 2
    H2 = max((i + 1) / gaps[i] ** 2 for i in range(K))
    return K * (K - 1) / 2 * math.exp(-(check_int("N", N, K + 1) - K) / (log_bar(K) * H2))


@dataclass(frozen=True)
class SuccessiveRejects(CommitPolicy):
    """SuccessiveRejects: fixed-budget best-arm identification on g, then commit to the arm left.

    K - 1 phases. In phase k every arm still in play is pulled until it has n_k pulls (``phase_lengths``,
    round-robin in index order inside the phase); then the arm with the lowest empirical g-mean is rejected
    (exact ties broken uniformly at random with the policy's own stream). The last arm is the commitment.
    The phases use at most N rounds and at least N - K (the ceilings leave at most K rounds over); those rounds go to the
    committed arm after the decision, so every run has exactly N experiment pulls (our choice: the 2010
    paper has no second reward and simply stops). The policy never looks at f. Needs N > K.
    """

    name = "SuccessiveRejects"

    def run_batch(self, problem, env_seeds, pol_seeds):
        n = env_seeds.size
        counts = np.zeros((n, problem.K), dtype=np.int64)
        committed = np.zeros(n, dtype=np.int64)
        _sr_batch(problem.N, phase_lengths(problem.N, problem.K), env_seeds, pol_seeds, *problem_arrays(problem),
                  counts, committed)
        return counts, committed

    def run_table(self, problem, F, G, pol_seed):
        counts = np.zeros(problem.K, dtype=np.int64)
        committed = _sr_table(problem.N, phase_lengths(problem.N, problem.K), prefix_sums(G), np.uint64(pol_seed),
                              counts)
        return counts, int(committed)

    def reference(self, problem, F, G, stream_seed=0, trace=False):
        """Audibert, Bubeck and Munos's Successive Rejects line by line, one round at a time, on tables F, G."""
        K, N = problem.K, problem.N
        targets = [int(x) for x in phase_lengths(N, K)]
        stream = PyStream(stream_seed)
        counts = [0] * K
        sg = [0.0] * K
        arms: list[int] = []
        phases: list[dict] = []

        def pull(i):
            counts[i] += 1
            sg[i] += G[i, counts[i]]
            arms.append(i)

        active = list(range(K))
        for k, target in enumerate(targets, start=1):
            while True:  # round-robin cycles over the arms in play still below n_k
                due = [i for i in active if counts[i] < target]
                if not due:
                    break
                for i in due:
                    pull(i)
            means = {i: sg[i] / counts[i] for i in active}
            worst = min(means.values())
            tied = [i for i in active if means[i] == worst]
            gone = tied[0] if len(tied) == 1 else tied[min(int(stream.uniform() * len(tied)), len(tied) - 1)]
            active.remove(gone)
            if trace:
                phases.append(dict(phase=k, target=target, means=means, rejected=gone, last_round=len(arms)))
        (committed,) = active
        while len(arms) < N:
            pull(committed)
        arms_arr = np.asarray(arms, dtype=np.int64)
        return (arms_arr, committed, phases) if trace else (arms_arr, committed)


@njit(cache=True)
def _reject(active, sums, counts, pol):
    """Index of the arm in play with the lowest sums / counts, uniform among exact ties (one policy draw then)."""
    worst = np.inf
    n_tied = 0
    for i in range(active.size):
        if active[i]:
            mean = sums[i] / counts[i]
            if mean < worst:
                worst = mean
                n_tied = 1
            elif mean == worst:
                n_tied += 1
    pick = 0
    if n_tied > 1:
        pick = int(nb_uniform(pol) * n_tied)
        if pick >= n_tied:
            pick = n_tied - 1
    for i in range(active.size):
        if active[i] and sums[i] / counts[i] == worst:
            if pick == 0:
                return i
            pick -= 1
    return -1


@njit(cache=True)
def _survivor(active):
    for i in range(active.size):
        if active[i]:
            return i
    return -1


@njit(cache=True)
def _sr_table(N, targets, CG, pol_seed, counts):
    K = CG.shape[0]
    pol = np.empty(1, dtype=np.uint64)
    pol[0] = pol_seed
    active = np.ones(K, dtype=np.bool_)
    sums = np.zeros(K)
    counts[:] = 0
    for k in range(targets.size):
        for i in range(K):
            if active[i]:
                counts[i] = targets[k]
                sums[i] = CG[i, targets[k]]
        active[_reject(active, sums, counts, pol)] = False
    arm = _survivor(active)
    counts[arm] += N - counts.sum()
    return arm


@njit(cache=True)
def _sr_batch(N, targets, env_seeds, pol_seeds, kind, mu_f, mu_g, probs, fv, gv, counts_out, committed_out):
    K = mu_f.size
    env = np.empty(1, dtype=np.uint64)
    pol = np.empty(1, dtype=np.uint64)
    active = np.ones(K, dtype=np.bool_)
    sums = np.zeros(K)
    counts = np.zeros(K, dtype=np.int64)
    for s in range(env_seeds.size):
        env[0] = env_seeds[s]
        pol[0] = pol_seeds[s]
        active[:] = True
        sums[:] = 0.0
        counts[:] = 0
        for k in range(targets.size):
            for i in range(K):  # the phase's new pulls of each arm in play, as one block
                if active[i]:
                    _, sg = nb_block_sums(env, kind, i, targets[k] - counts[i], mu_f, mu_g, probs, fv, gv)
                    sums[i] += sg
                    counts[i] = targets[k]
            active[_reject(active, sums, counts, pol)] = False
        arm = _survivor(active)
        counts[arm] += N - counts.sum()
        committed_out[s] = arm
        counts_out[s, :] = counts
