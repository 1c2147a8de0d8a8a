"""Epoch-based arm elimination with reserved exploration: the engine behind RAEC (Algorithm 1).

The experiment runs two elimination stages on one budget of N rounds (section 3.1):

- Stage I eliminates on the commitment reward g over the reserved epochs l = 1..L with thresholds
  2^-l: in epoch l every arm of A_g is pulled until its total count reaches ``targets_g[l-1]``; then
  the arms whose empirical g-mean trails the best by more than 2^-l leave A_g. The stage stops early
  when one arm is left or the budget is spent.
- Stage II eliminates on the experiment reward f in the same way, starting again from A_f = [K]
  and threshold 1/2, with targets ``targets_f`` that count the pulls made in Stage I. It runs until
  round N; once one arm is left that arm takes the remaining rounds.
- The commitment is uniform over A_g (``COMMIT_UNIFORM``), the empirical g-best of A_g
  (``COMMIT_EMPIRICAL``) or the empirical g-best of A_f (``COMMIT_F_SET``, used by the structural
  policy of section 6.1). Empirical means use every pull of the experiment.

Conventions the paper leaves open (documented in ``RAEC``):

- inside an epoch the arms are pulled round-robin in index order, in cycles, so when the budget ends
  inside an epoch the remaining rounds are shared evenly (lower indices first in the last cycle);
  an unfinished epoch eliminates nothing;
- an arm is eliminated when (best empirical mean) - (its empirical mean) > threshold (strict);
- after the last listed Stage II target the active arms share the remaining rounds round-robin.

ROSCOC's Stage II (section 6.2) is this Stage II started from ROSCOC's Stage-I pulls (``stage2_table``).

Because the schedule of an epoch is fixed when it starts, the compiled path draws the f- and g-sums of
each arm's block of pulls at once (``draws="batch"``) or reads them from prefix sums of an outcome table
(``draws="table"``); the per-round loop the tests compare it with is ``policies.raec.reference_elimination``
(re-exported here under its old name).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .commitment import nb_commit_empirical, nb_commit_uniform
from .sampling import nb_block_sums

COMMIT_UNIFORM = 0     # uniform over the surviving g-set A_g (Algorithm 1)
COMMIT_EMPIRICAL = 1   # empirical g-best of A_g (section 7)
COMMIT_F_SET = 2       # empirical g-best of the surviving f-set A_f (section 6.1 policy)

MAX_EPOCHS = 62  # thresholds 2^-l stop at 2^-62: a numerical safeguard for eps = 0 or log(.) = 0


def epoch_targets(scale: float, log_length: float, n_epochs: int, cap: int) -> np.ndarray:
    """Target counts ceil(scale * 4 log(length) / (2^-l)^2) for l = 1..n_epochs, at least 1, at most cap.

    ``log_length`` is log(T - N) for Stage I and log(N) for Stage II (m_g and m_f of section 3.1).
    Every active arm is pulled at least once before a test (target >= 1) and no target exceeds
    ``cap`` (a count above N cannot be reached; the cap also keeps the integers small).
    """
    out = np.empty(n_epochs, dtype=np.int64)
    for l in range(1, n_epochs + 1):
        m = scale * 4.0 * log_length * 4.0 ** l
        out[l - 1] = min(max(math.ceil(m), 1), cap)
    return out


def stage2_epoch_count(targets_f_full: np.ndarray, N: int) -> int:
    """Number of Stage II targets worth listing: up to and including the first one >= N."""
    over = np.flatnonzero(targets_f_full >= N)
    return int(over[0]) + 1 if over.size else targets_f_full.size


def stage2_schedule(N: int, scale: float) -> np.ndarray:
    """Stage II targets m_f,l = ceil(scale 4 log(N) / (2^-l)^2), l = 1, 2, ..., up to the first one >= N
    (RAEC's and ROSCOC's)."""
    full = epoch_targets(scale, math.log(N), MAX_EPOCHS, N)
    return full[: stage2_epoch_count(full, N)]


# ---------------------------------------------------------------------------------------- compiled path
@njit(cache=True)
def allocate_round_robin(need, budget):
    """Pulls per arm when arms with ``need`` remaining pulls are served round-robin for ``budget`` rounds.

    Cycle c pulls, in index order, every arm with need >= c; the result is min(need, lam) plus one more
    for the first r arms with need > lam, lam the number of complete cycles.
    """
    total = 0
    top = 0
    for i in range(need.size):
        total += need[i]
        if need[i] > top:
            top = need[i]
    out = need.copy()
    if total <= budget:
        return out
    lo = 0
    hi = top
    while lo < hi:  # largest lam with sum_i min(need_i, lam) <= budget
        mid = (lo + hi + 1) // 2
        s = 0
        for i in range(need.size):
            s += min(need[i], mid)
        if s <= budget:
            lo = mid
        else:
            hi = mid - 1
    used = 0
    for i in range(need.size):
        out[i] = min(need[i], lo)
        used += out[i]
    r = budget - used
    for i in range(need.size):
        if r == 0:
            break
        if need[i] > lo:
            out[i] += 1
            r -= 1
    return out


@njit(cache=True)
def _pull_blocks(pulls, counts, sumf, sumg, use_table, CF, CG, env, kind, mu_f, mu_g, probs, fv, gv):
    for i in range(pulls.size):
        c = pulls[i]
        if c > 0:
            counts[i] += c
            if use_table:
                sumf[i] = CF[i, counts[i]]
                sumg[i] = CG[i, counts[i]]
            else:
                sf, sg = nb_block_sums(env, kind, i, c, mu_f, mu_g, probs, fv, gv)
                sumf[i] += sf
                sumg[i] += sg


@njit(cache=True)
def nb_epoch(active, target, t, N, counts, sumf, sumg, use_table, CF, CG, env, kind, mu_f, mu_g, probs, fv, gv):
    """Run one epoch from round t; returns (complete, new t)."""
    K = counts.size
    need = np.zeros(K, dtype=np.int64)
    total = 0
    for i in range(K):
        if active[i] and counts[i] < target:
            need[i] = target - counts[i]
            total += need[i]
    budget = N - t
    pulls = allocate_round_robin(need, budget)
    _pull_blocks(pulls, counts, sumf, sumg, use_table, CF, CG, env, kind, mu_f, mu_g, probs, fv, gv)
    if total <= budget:
        return True, t + total
    return False, N


@njit(cache=True)
def nb_eliminate(active, sums, counts, threshold):
    """Deactivate, in place, every active arm whose mean ``sums / counts`` is more than ``threshold`` below the
    best active mean (an epoch's elimination; shared with adaptive RAEC)."""
    best = -np.inf
    for i in range(active.size):
        if active[i]:
            mean = sums[i] / counts[i]
            if mean > best:
                best = mean
    for i in range(active.size):
        if active[i] and best - sums[i] / counts[i] > threshold:
            active[i] = False


@njit(cache=True)
def nb_n_active(active):
    """How many arms are still active."""
    n = 0
    for i in range(active.size):
        if active[i]:
            n += 1
    return n


@njit(cache=True)
def nb_stage2(t, N, targets_f, active_f, counts, sumf, sumg, use_table, CF, CG, env, kind, mu_f, mu_g, probs, fv, gv):
    """Stage II from round t (counts and sums so far count): epochs l = 1, 2, ... on f with thresholds 2^-l and
    targets ``targets_f`` (then N + 1: round-robin to the end, no test) until round N; a lone survivor of A_f
    takes the remaining rounds. Returns the number of epochs started (RAEC's and ROSCOC's Stage II)."""
    K = counts.size
    l = 0
    while t < N:
        if nb_n_active(active_f) == 1:
            single = np.zeros(K, dtype=np.int64)
            for i in range(K):
                if active_f[i]:
                    single[i] = N - t
            _pull_blocks(single, counts, sumf, sumg, use_table, CF, CG, env, kind, mu_f, mu_g, probs, fv, gv)
            t = N
            break
        target = targets_f[l] if l < targets_f.size else N + 1
        complete, t = nb_epoch(active_f, target, t, N, counts, sumf, sumg, use_table, CF, CG, env,
                             kind, mu_f, mu_g, probs, fv, gv)
        if complete and l < targets_f.size:
            nb_eliminate(active_f, sumf, counts, math.ldexp(1.0, -(l + 1)))
        l += 1
    return l


@njit(cache=True)
def stage2_table(N, rounds, targets_f, CF, counts):
    """Stage II alone on an f-table: ``rounds`` rounds that end at round N, from the pulls ``counts`` made before
    (updated in place; ``CF[i, n]`` = sum of arm i's first n f-rewards). Returns the number of epochs started.
    ROSCOC's Stage II: the same epochs, targets and elimination test as RAEC's."""
    K = counts.size
    sumf = np.empty(K)
    for i in range(K):
        sumf[i] = CF[i, counts[i]]
    sumg = np.zeros(K)  # no g in this stage: CF stands in for the g-table, its sums are not read
    active_f = np.ones(K, dtype=np.bool_)
    env = np.zeros(1, dtype=np.uint64)
    e1 = np.zeros(K)
    e2 = np.zeros((K, 1))
    return nb_stage2(N - rounds, N, targets_f, active_f, counts, sumf, sumg, True, CF, CF, env, 0, e1, e1, e2, e1, e1)


@njit(cache=True)
def elimination_run(N, targets_g, targets_f, commit_mode, use_table, CF, CG, env, pol,
                    kind, mu_f, mu_g, probs, fv, gv, counts, sumf, sumg, active_g, active_f):
    """One run of the two-stage elimination. Fills counts/sums/active sets; returns the committed arm."""
    counts[:] = 0
    sumf[:] = 0.0
    sumg[:] = 0.0
    active_g[:] = True
    active_f[:] = True
    t = 0
    # Stage I: reserved elimination on g
    for l in range(targets_g.size):
        if t >= N or nb_n_active(active_g) <= 1:
            break
        complete, t = nb_epoch(active_g, targets_g[l], t, N, counts, sumf, sumg, use_table, CF, CG, env,
                             kind, mu_f, mu_g, probs, fv, gv)
        if not complete:
            break
        nb_eliminate(active_g, sumg, counts, math.ldexp(1.0, -(l + 1)))
    # Stage II: elimination on f until round N
    nb_stage2(t, N, targets_f, active_f, counts, sumf, sumg, use_table, CF, CG, env, kind, mu_f, mu_g, probs, fv, gv)
    if commit_mode == COMMIT_UNIFORM:
        return nb_commit_uniform(active_g, pol)
    if commit_mode == COMMIT_EMPIRICAL:
        return nb_commit_empirical(active_g, sumg, counts, pol)
    return nb_commit_empirical(active_f, sumg, counts, pol)


@njit(cache=True)
def elimination_batch(N, targets_g, targets_f, commit_mode, env_seeds, pol_seeds, kind, mu_f, mu_g, probs,
                      fv, gv, counts_out, committed_out, active_g_out):
    """``draws="batch"``: one run per seed index, block sums drawn from each seed's own stream.
    ``active_g_out[s]`` receives run s's g-set A_g when Stage I ends (the set the commitment draws from)."""
    K = mu_f.size
    dummy = np.zeros((1, 1))
    env = np.empty(1, dtype=np.uint64)
    pol = np.empty(1, dtype=np.uint64)
    sumf = np.zeros(K)
    sumg = np.zeros(K)
    counts = np.zeros(K, dtype=np.int64)
    active_g = np.ones(K, dtype=np.bool_)
    active_f = np.ones(K, dtype=np.bool_)
    for s in range(env_seeds.size):
        env[0] = env_seeds[s]
        pol[0] = pol_seeds[s]
        committed_out[s] = elimination_run(N, targets_g, targets_f, commit_mode, False, dummy, dummy, env, pol,
                                           kind, mu_f, mu_g, probs, fv, gv, counts, sumf, sumg, active_g, active_f)
        counts_out[s, :] = counts
        active_g_out[s, :] = active_g


@njit(cache=True)
def elimination_table(N, targets_g, targets_f, commit_mode, CF, CG, pol_seed, counts_out, active_g_out):
    """``draws="table"``: one run reading prefix sums of a pre-drawn outcome table. Returns the committed arm;
    ``active_g_out`` (K booleans) receives A_g when Stage I ends."""
    K = CF.shape[0]
    env = np.zeros(1, dtype=np.uint64)
    pol = np.empty(1, dtype=np.uint64)
    pol[0] = pol_seed
    e1 = np.zeros(K)
    e2 = np.zeros((K, 1))
    sumf = np.zeros(K)
    sumg = np.zeros(K)
    active_f = np.ones(K, dtype=np.bool_)
    return elimination_run(N, targets_g, targets_f, commit_mode, True, CF, CG, env, pol,
                           0, e1, e1, e2, e1, e1, counts_out, sumf, sumg, active_g_out, active_f)
