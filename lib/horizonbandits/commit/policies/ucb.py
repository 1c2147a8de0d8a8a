"""UCB on the experiment reward, then commit to the empirical g-best arm (section 7.2's baseline)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ...rng import PyStream
from ..commitment import nb_commit_empirical, py_commit_empirical
from ..sampling import nb_pull_step, py_pull
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
        arms, committed = _reference_rounds(problem, lambda arm, n: (F[arm, n], G[arm, n]), PyStream(stream_seed))
        return (arms, committed, []) if trace else (arms, committed)

    def reference_batch(self, problem, env_seed: int, pol_seed: int):
        """The per-round reference on ``run_batch``'s inputs: round t's outcome is the next draw of the stream
        ``env_seed`` (``sampling.py_pull``), whichever arm is pulled. Returns (arms (N,), committed arm)."""
        env = PyStream(env_seed)
        return _reference_rounds(problem, lambda arm, n: py_pull(env, problem, arm), PyStream(pol_seed))


def _reference_rounds(problem, outcome, stream):
    """Section 7.2's UCBCommit line by line; ``outcome(arm, n)`` gives (f, g) of the n-th pull of ``arm``."""
    K, N = problem.K, problem.N
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
        x, y = outcome(arm, counts[arm])
        sf[arm] += x
        sg[arm] += y
        arms[t - 1] = arm
    return arms, py_commit_empirical(list(range(K)), sg, counts, stream)


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
def _ucb_table_run(N, F, G, pol, counts, sumf, sumg):
    K = counts.size
    counts[:] = 0
    sumf[:] = 0.0
    sumg[:] = 0.0
    for t in range(1, N + 1):
        arm = nb_ucb_arm(t, sumf, counts)
        counts[arm] += 1
        sumf[arm] += F[arm, counts[arm]]
        sumg[arm] += G[arm, counts[arm]]
    everyone = np.ones(K, dtype=np.bool_)
    return nb_commit_empirical(everyone, sumg, counts, pol)


@njit(cache=True)
def _ucb_table(N, F, G, pol_seed, counts):
    K = F.shape[0]
    pol = np.empty(1, dtype=np.uint64)
    pol[0] = pol_seed
    return _ucb_table_run(N, F, G, pol, counts, np.zeros(K), np.zeros(K))


# ---------------------------------------------------------------------------------------- batch path
# One seed's rounds are a chain: round t's arm needs round t-1's counts and means, through a divide, a square
# root and the argmax (about 30 ns per round at K = 4, most of it waiting on that chain). Seeds are independent,
# so the batch kernel runs LANES seeds side by side, round by round, and the processor overlaps their chains.
# Each seed still makes exactly the arithmetic of nb_ucb_arm and nb_pull, in the same order: same arms, same
# draws. Measured at K = 4, N = 5000, 2026-12-01 (old and new interleaved in one process, CPU time, minimum of 7,
# load average 4.4): 9.2 -> 4.1 ns per round and arm when the arms alternate, 9.3 -> 4.6 when one arm leads;
# 8.5 (1 lane), 6.0 (2), 5.7 (4) in an earlier trial at the same load. The per-round work of one seed is also
# lighter than nb_ucb_arm's: the state of the outcome stream in a register, 2 log t from a table, the means kept.
# Tried and slower (same day): 16 seeds as SIMD lanes (error_model="numpy" lets LLVM vectorise the divides;
# 5.8 ns when the arms alternate), and skipping the other arms' indices while a bound shows the last arm still
# wins (exact, but its branches cost more than the divides it saves: 4.8 to 8.3 ns).
LANES = 4


@njit(cache=True)
def _two_log_table(N):
    """2 log t for t = 1..N (entry 0 unused): nb_ucb_arm's 2.0 * log_t, computed once per batch, not per seed."""
    out = np.zeros(N + 1)
    for t in range(1, N + 1):
        out[t] = 2.0 * math.log(t)
    return out


@njit(cache=True)
def _ucb_lanes(N, two_log, env, n_lanes, kind, mu_f, mu_g, cdf, fv, gv, counts, sumf, sumg, means):
    """UCBCommit's experiment for the seeds of lanes 0..n_lanes-1 (outcome stream state env[l]), round by round.

    Per lane, the arm of round t is nb_ucb_arm's: arm t-1 while t <= K, then the first argmax of
    means_i + sqrt(2 log t / n_i); means[l, i] = sumf[l, i] / counts[l, i] is kept up to date for the pulled arm
    only (the others' sums have not changed), so it is the same double nb_ucb_arm computes."""
    K = mu_f.size
    for l in range(n_lanes):
        counts[l, :] = 0
        sumf[l, :] = 0.0
        sumg[l, :] = 0.0
    for t in range(1, N + 1):
        c = two_log[t]
        for l in range(n_lanes):
            if t <= K:
                arm = t - 1
            else:
                arm = 0
                best = -np.inf
                for i in range(K):
                    index = means[l, i] + math.sqrt(c / counts[l, i])
                    if index > best:
                        best = index
                        arm = i
            x, y, state = nb_pull_step(env[l], kind, arm, mu_f, mu_g, cdf, fv, gv)
            env[l] = state
            counts[l, arm] += 1
            sumf[l, arm] += x
            sumg[l, arm] += y
            means[l, arm] = sumf[l, arm] / counts[l, arm]


@njit(cache=True)
def _ucb_batch(N, env_seeds, pol_seeds, kind, mu_f, mu_g, cdf, fv, gv, counts_out, committed_out):
    K = mu_f.size
    two_log = _two_log_table(N)
    env = np.zeros(LANES, dtype=np.uint64)
    pol = np.empty(1, dtype=np.uint64)
    counts = np.zeros((LANES, K), dtype=np.int64)
    sumf = np.zeros((LANES, K))
    sumg = np.zeros((LANES, K))
    means = np.zeros((LANES, K))
    everyone = np.ones(K, dtype=np.bool_)
    n = env_seeds.size
    for start in range(0, n, LANES):
        n_lanes = min(LANES, n - start)
        for l in range(n_lanes):
            env[l] = env_seeds[start + l]
        _ucb_lanes(N, two_log, env, n_lanes, kind, mu_f, mu_g, cdf, fv, gv, counts, sumf, sumg, means)
        for l in range(n_lanes):
            pol[0] = pol_seeds[start + l]
            committed_out[start + l] = nb_commit_empirical(everyone, sumg[l], counts[l], pol)
            counts_out[start + l, :] = counts[l]
