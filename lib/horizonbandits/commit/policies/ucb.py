"""UCB on the experiment reward, then commit to the empirical g-best arm (section 7.2's baseline)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ...rng import PyStream
from ..commitment import nb_commit_empirical, py_commit_empirical
from ..sampling import nb_pull
from .base import CommitPolicy


@dataclass(frozen=True)
class UCBCommit(CommitPolicy):
    """UCBCommit: for t = 1..N pull argmax_i mu_hat_f,i + sqrt(2 log t / n_i) (section 7.2), then commit.

    Each arm is pulled once first (rounds 1..K, index order); afterwards t is the current round and
    n_i, mu_hat_f,i count the pulls before it; index ties go to the lowest arm. The commitment is the
    arm with the largest empirical g-mean over all experiment pulls, ties broken uniformly at random.
    """

    name = "UCBCommit"

    def run_batch(self, problem, env_seeds, pol_seeds):
        n = env_seeds.size
        counts = np.zeros((n, problem.K), dtype=np.int64)
        committed = np.zeros(n, dtype=np.int64)
        _ucb_batch(problem.N, env_seeds, pol_seeds, problem.kind, problem.mu_f, problem.mu_g, problem.cdf,
                   problem.f_values, problem.g_values, counts, committed)
        return counts, committed

    def run_table(self, problem, F, G, pol_seed):
        counts = np.zeros(problem.K, dtype=np.int64)
        committed = _ucb_table(problem.N, F, G, np.uint64(pol_seed), counts)
        return counts, int(committed)

    def reference(self, problem, F, G, stream_seed=0, trace=False):
        K, N = problem.K, problem.N
        stream = PyStream(stream_seed)
        counts = [0] * K
        sf = [0.0] * K
        sg = [0.0] * K
        arms = np.empty(N, dtype=np.int64)
        for t in range(1, N + 1):
            if t <= K:
                arm = t - 1
            else:
                ucb = [sf[i] / counts[i] + math.sqrt(2.0 * math.log(t) / counts[i]) for i in range(K)]
                arm = max(range(K), key=lambda i: (ucb[i], -i))  # largest index, lowest arm on ties
            counts[arm] += 1
            sf[arm] += F[arm, counts[arm]]
            sg[arm] += G[arm, counts[arm]]
            arms[t - 1] = arm
        committed = py_commit_empirical(list(range(K)), sg, counts, stream)
        return (arms, committed, []) if trace else (arms, committed)


@njit(cache=True)
def nb_ucb_arm(t, sumf, counts):
    """UCB1's arm in round t (section 7.2): arm t-1 while t <= K, then argmax_i sumf_i / n_i + sqrt(2 log t / n_i)
    with n_i the pulls before round t, lowest index on ties. Shared with UCB-Portfolio's experiment phase."""
    K = counts.size
    if t <= K:
        return t - 1
    log_t = math.log(t)
    arm = 0
    best = -np.inf
    for i in range(K):
        index = sumf[i] / counts[i] + math.sqrt(2.0 * log_t / counts[i])
        if index > best:
            best = index
            arm = i
    return arm


@njit(cache=True)
def _ucb_run(N, use_table, F, G, env, pol, kind, mu_f, mu_g, cdf, fv, gv, counts, sumf, sumg):
    K = counts.size
    counts[:] = 0
    sumf[:] = 0.0
    sumg[:] = 0.0
    for t in range(1, N + 1):
        arm = nb_ucb_arm(t, sumf, counts)
        counts[arm] += 1
        if use_table:
            x = F[arm, counts[arm]]
            y = G[arm, counts[arm]]
        else:
            x, y = nb_pull(env, kind, arm, mu_f, mu_g, cdf, fv, gv)
        sumf[arm] += x
        sumg[arm] += y
    everyone = np.ones(K, dtype=np.bool_)
    return nb_commit_empirical(everyone, sumg, counts, pol)


@njit(cache=True)
def _ucb_batch(N, env_seeds, pol_seeds, kind, mu_f, mu_g, cdf, fv, gv, counts_out, committed_out):
    K = mu_f.size
    dummy = np.zeros((1, 1))
    env = np.empty(1, dtype=np.uint64)
    pol = np.empty(1, dtype=np.uint64)
    counts = np.zeros(K, dtype=np.int64)
    sumf = np.zeros(K)
    sumg = np.zeros(K)
    for s in range(env_seeds.size):
        env[0] = env_seeds[s]
        pol[0] = pol_seeds[s]
        committed_out[s] = _ucb_run(N, False, dummy, dummy, env, pol, kind, mu_f, mu_g, cdf, fv, gv,
                                    counts, sumf, sumg)
        counts_out[s, :] = counts


@njit(cache=True)
def _ucb_table(N, F, G, pol_seed, counts):
    K = F.shape[0]
    env = np.zeros(1, dtype=np.uint64)
    pol = np.empty(1, dtype=np.uint64)
    pol[0] = pol_seed
    e1 = np.zeros(K)
    e2 = np.zeros((K, 1))
    return _ucb_run(N, True, F, G, env, pol, 0, e1, e1, e2, e1, e1, counts, np.zeros(K), np.zeros(K))
