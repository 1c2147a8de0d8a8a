"""RAEC: Reserved Arm Eliminations for Commitment (Jiang, Tang and Zhang 2026, Algorithm 1, section 3.1)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...errors import check_choice, check_int, check_real
from ...rng import PyStream
from .. import theory
from ..commitment import py_commit_empirical, py_commit_uniform
from ..elimination import (COMMIT_EMPIRICAL, COMMIT_F_SET, COMMIT_UNIFORM, MAX_EPOCHS, elimination_batch,
                           elimination_table, epoch_targets, stage2_schedule)
from ..sampling import prefix_sums
from .base import CommitPolicy, problem_arrays


def stage2_targets(problem, scale: float) -> np.ndarray:
    """Stage II targets ceil(scale 4 log(N) / (2^-l)^2), l = 1, 2, ..., up to the first one >= N."""
    return stage2_schedule(problem.N, scale)


def table_sets(kernel, leading: tuple, K: int, F, G, pol_seed) -> tuple:
    """One ``draws="table"`` run of an elimination kernel, ``kernel(*leading, prefix sums of F and G, seed, counts,
    A_g)``: (counts (K,), the committed arm, A_g when Stage I ends (K booleans)). RAEC, NoShiftElimination and
    AdaptiveRAEC share it; only the kernel and its leading arguments differ."""
    counts = np.zeros(K, dtype=np.int64)
    active_g = np.ones(K, dtype=np.bool_)
    committed = kernel(*leading, prefix_sums(F), prefix_sums(G), np.uint64(pol_seed), counts, active_g)
    return counts, int(committed), active_g


class _EliminationPolicy(CommitPolicy):
    """Shared plumbing of the policies built on ``elimination``: subclasses provide ``schedule``."""

    _commit_mode: int = COMMIT_UNIFORM

    def schedule(self, problem) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def run_batch(self, problem, env_seeds, pol_seeds):
        return self.run_batch_sets(problem, env_seeds, pol_seeds)[:2]

    def run_batch_sets(self, problem, env_seeds, pol_seeds):
        """``run_batch`` that also returns each run's g-set when Stage I ends: (counts (n, K), committed (n,),
        A_g (n, K) booleans). The commitment is drawn from A_g (RAEC), so ``committed`` is always in it."""
        tg, tf = self.schedule(problem)
        n = env_seeds.size
        counts = np.zeros((n, problem.K), dtype=np.int64)
        committed = np.zeros(n, dtype=np.int64)
        active_g = np.zeros((n, problem.K), dtype=np.bool_)
        elimination_batch(problem.N, tg, tf, self._commit_mode, env_seeds, pol_seeds, *problem_arrays(problem),
                          counts, committed, active_g)
        return counts, committed, active_g

    def run_table(self, problem, F, G, pol_seed):
        return self.run_table_sets(problem, F, G, pol_seed)[:2]

    def run_table_sets(self, problem, F, G, pol_seed):
        """``run_table`` that also returns A_g when Stage I ends (K booleans)."""
        tg, tf = self.schedule(problem)
        return table_sets(elimination_table, (problem.N, tg, tf, self._commit_mode), problem.K, F, G, pol_seed)

    def reference(self, problem, F, G, stream_seed=0, trace=False):
        tg, tf = self.schedule(problem)
        return reference_elimination(F, G, problem.N, [int(x) for x in tg], [int(x) for x in tf],
                                     self._commit_mode, stream_seed, trace)


@dataclass(frozen=True)
class RAEC(_EliminationPolicy):
    """Reserved Arm Eliminations for Commitment, Algorithm 1 of the paper (section 3.1).

    Thresholds Delta_l = 2^-l. Stage I (the reserved epochs l = 1..L, L = ceil(log2(1/eps))) eliminates on
    the commitment reward g with targets m_g,l = stage1_scale * 4 log(T-N) / Delta_l^2 and stops early when
    one arm is left; Stage II eliminates on the experiment reward f, from A_f = [K] and Delta_1 = 1/2
    again, with targets m_f,l = stage2_scale * 4 log(N) / Delta_l^2 that count the pulls of Stage I, until
    round N. The commitment is uniform over the surviving g-set A_g (``commit="uniform"``, Algorithm 1) or
    its empirical g-best (``commit="empirical"``, section 7), with g-means over every experiment pull.

    eps defaults to Theorem 3.1's choice (``theory.raec_epsilon``); ``eps="by_region"`` takes the region-wise statement
    of section 3.2 instead (``theory.epsilon_by_region``), a number fixes it. Theorem 3.1's eps is >= 1 for short experiments
    at the paper's horizons (then ceil(log2(1/eps)) <= 0 and Stage I would be empty) and is 0 when
    T - N = 1 (log 1 = 0, L infinite): L is clamped to [min_epochs, 62]. ``min_epochs=1`` (default)
    always reserves the first epoch (threshold 1/2); ``min_epochs=0`` follows the formula literally.
    ``binding(problem)`` says whether the clamp changed L.

    Details the paper leaves open, chosen here (see ``horizonbandits.commit.elimination``): targets are
    ceil(m), at least 1; arms inside an epoch are pulled round-robin in index order, so when round N
    falls inside an epoch the remaining rounds are shared round-robin and that epoch eliminates nothing;
    an arm is eliminated when the best empirical mean exceeds its own by more than Delta_l; ties of the
    empirical commitment are broken uniformly at random.

    Section 7's settings: 7.1 uses stage1_scale = 1/10 (1 for N = floor(sqrt T)), stage2_scale = 1;
    7.2 uses stage1_scale = 1/25, stage2_scale = 1/10; both commit="empirical"
    (``instances.section71_policy`` and ``instances.section72_policy``).
    """

    eps: float | None = None
    stage1_scale: float = 1.0
    stage2_scale: float = 1.0
    commit: str = "uniform"
    min_epochs: int = 1

    name = "RAEC"

    def __post_init__(self):
        if self.eps is not None and self.eps != "by_region":
            if isinstance(self.eps, str):
                raise ValueError(f"eps={self.eps!r} is not allowed: expected None, 'by_region' or a number >= 0")
            self._check("eps", check_real, 0.0)
        self._check("stage1_scale", check_real, 0.0, lo_open=True)
        self._check("stage2_scale", check_real, 0.0, lo_open=True)
        self._check("commit", check_choice, ("uniform", "empirical"))
        self._check("min_epochs", check_int, 0, MAX_EPOCHS)

    @property
    def _commit_mode(self) -> int:
        return COMMIT_UNIFORM if self.commit == "uniform" else COMMIT_EMPIRICAL

    def epsilon(self, problem) -> float:
        """The accuracy eps used on this problem (Theorem 3.1's unless given)."""
        if self.eps is None:
            return theory.raec_epsilon(problem.K, problem.N, problem.T)
        if self.eps == "by_region":
            return theory.epsilon_by_region(problem.K, problem.N, problem.T)
        return self.eps

    def theory_epochs(self, problem) -> float:
        """ceil(log2(1/eps)) before clamping (may be <= 0 or inf)."""
        return theory.epochs_for(self.epsilon(problem))

    def stage1_epochs(self, problem) -> int:
        """L after clamping to [min_epochs, 62]."""
        return int(max(self.min_epochs, min(self.theory_epochs(problem), MAX_EPOCHS)))

    def binding(self, problem) -> bool:
        """True when the clamp changed L: ceil(log2(1/eps)) < min_epochs (large eps) or eps = 0."""
        return self.stage1_epochs(problem) != self.theory_epochs(problem)

    def schedule(self, problem) -> tuple[np.ndarray, np.ndarray]:
        """(Stage I targets for l = 1..L, Stage II targets)."""
        tg = epoch_targets(self.stage1_scale, math.log(problem.T - problem.N), self.stage1_epochs(problem),
                           problem.N)
        return tg, stage2_targets(problem, self.stage2_scale)

    def is_uniform(self, problem) -> bool:
        """True when the first Stage I epoch alone takes the whole experiment (K m_g,1 >= N).

        RAEC then pulls the arms round-robin for all N rounds, exactly as ``UniformCommit`` does: with
        section 7.1's settings this happens for N = floor(sqrt T) at every T of the grid (at T = 20,000,
        m_g,1 = 159 pulls per arm against N/K = 35).
        """
        tg, _ = self.schedule(problem)
        return bool(tg.size) and problem.K * int(tg[0]) >= problem.N

    def reserved_rounds(self, problem) -> int:
        """Upper bound on the Stage I rounds: K times the last Stage I target, capped at N (B_eps of Prop. 4.1)."""
        tg, _ = self.schedule(problem)
        return int(min(problem.N, problem.K * tg[-1])) if tg.size else 0


@dataclass(frozen=True)
class NoShiftElimination(_EliminationPolicy):
    """Section 6.1, the no-shift case f = g: no reserved exploration, commit to the f-elimination's survivor.

    When the learner knows that f = g, the arm it must find for the commitment is the f-best arm, which
    the experiment's own regret minimisation already looks for: Stage I is dropped (L = 0) and the whole
    budget runs RAEC's Stage II (elimination on f, targets stage_scale * 4 log(N) / Delta_l^2); the
    commitment is the empirical g-best (= f-best) arm of the surviving f-set A_f. The paper states that
    the regret then improves to the standard rate (section 3.2, 6.1); our copy stops there.

    Our reading beyond the paper: the same policy is right whenever the shift is known to preserve the
    ranking of the arms (g-means ordered like the f-means), however large the shift; it commits to a wrong
    arm with constant probability when the shift reorders the arms. The notebook
    ``structural_knowledge`` shows both.
    """

    stage_scale: float = 1.0

    name = "NoShiftElimination"
    _commit_mode = COMMIT_F_SET

    def __post_init__(self):
        self._check("stage_scale", check_real, 0.0, lo_open=True)

    def schedule(self, problem):
        return np.zeros(0, dtype=np.int64), stage2_targets(problem, self.stage_scale)


# ---------------------------------------------------------------------------------------- reference
def reference_elimination(F, G, N: int, targets_g, targets_f, commit_mode: int, stream_seed: int = 0,
                          trace: bool = False, prior_counts=None):
    """Per-round reference of the two-stage elimination on outcome tables F, G (``F[i, n]`` = f of pull n).

    Returns (arms, committed) or, with ``trace``, (arms, committed, epochs) where ``epochs`` is a list of
    dicts, one per epoch: stage, epoch, threshold, target, active arms before, pulls made, first and last
    round, whether it finished, the empirical means it tested and the arms it eliminated.

    ``prior_counts`` (ROSCOC's Stage II, with ``targets_g`` empty): pulls of each arm made before, by
    another stage; they count towards the targets and the means, and their rounds towards N. ``arms``
    then lists the rounds played here only.
    """
    K = F.shape[0]
    stream = PyStream(stream_seed)
    counts = [0] * K if prior_counts is None else [int(c) for c in prior_counts]
    sf = [float(sum(F[i, 1:c + 1])) for i, c in enumerate(counts)]
    sg = [float(sum(G[i, 1:c + 1])) for i, c in enumerate(counts)]
    arms: list[int] = []
    epochs: list[dict] = []
    t0 = sum(counts)

    def played():
        return t0 + len(arms)

    def pull(i):
        counts[i] += 1
        sf[i] += F[i, counts[i]]
        sg[i] += G[i, counts[i]]
        arms.append(i)

    def run_epoch(active, target):
        # cycles of round-robin over the arms still below target, until all reach it or round N
        while True:
            due = [i for i in sorted(active) if counts[i] < target]
            if not due:
                return True
            for i in due:
                if played() == N:
                    return False
                pull(i)

    def eliminate(active, sums, threshold):
        means = {i: sums[i] / counts[i] for i in sorted(active)}
        best = max(means.values())
        gone = [i for i in sorted(active) if best - means[i] > threshold]
        for i in gone:
            active.discard(i)
        return means, gone

    def record(stage, l, threshold, target, before, start, start_counts, complete, means, gone):
        if trace:
            epochs.append(dict(stage=stage, epoch=l, threshold=threshold, target=int(target),
                               active=tuple(sorted(before)), first_round=start + 1, last_round=played(),
                               pulls=tuple(counts[i] - start_counts[i] for i in range(K)),
                               complete=complete, means=means, eliminated=tuple(gone)))

    active_g = set(range(K))
    for l in range(1, len(targets_g) + 1):
        if played() >= N or len(active_g) <= 1:
            break
        threshold = math.ldexp(1.0, -l)
        before, start, start_counts = set(active_g), played(), list(counts)
        complete = run_epoch(active_g, targets_g[l - 1])
        means, gone = eliminate(active_g, sg, threshold) if complete else ({}, [])
        record("I (g)", l, threshold, targets_g[l - 1], before, start, start_counts, complete, means, gone)
        if not complete:
            break

    active_f = set(range(K))
    l = 0
    while played() < N:
        if len(active_f) == 1:
            (i,) = active_f
            start, start_counts = played(), list(counts)
            while played() < N:
                pull(i)
            record("II (f)", l + 1, math.nan, N, {i}, start, start_counts, True, {}, [])
            break
        listed = l < len(targets_f)
        target = targets_f[l] if listed else N + 1
        threshold = math.ldexp(1.0, -(l + 1))
        before, start, start_counts = set(active_f), played(), list(counts)
        complete = run_epoch(active_f, target)
        means, gone = eliminate(active_f, sf, threshold) if (complete and listed) else ({}, [])
        record("II (f)", l + 1, threshold, target, before, start, start_counts, complete, means, gone)
        l += 1

    if commit_mode == COMMIT_UNIFORM:
        committed = py_commit_uniform(sorted(active_g), stream)
    elif commit_mode == COMMIT_EMPIRICAL:
        committed = py_commit_empirical(sorted(active_g), sg, counts, stream)
    else:
        committed = py_commit_empirical(sorted(active_f), sg, counts, stream)
    arms_arr = np.asarray(arms, dtype=np.int64)
    if trace:
        epochs.append(dict(stage="commit", epoch=0, threshold=math.nan, target=0,
                           active=tuple(sorted(active_g if commit_mode != COMMIT_F_SET else active_f)),
                           first_round=N + 1, last_round=N + 1, pulls=(0,) * K, complete=True,
                           means={i: (sg[i] / counts[i] if counts[i] else math.nan) for i in range(K)},
                           eliminated=(), committed=committed))
        return arms_arr, committed, epochs
    return arms_arr, committed
