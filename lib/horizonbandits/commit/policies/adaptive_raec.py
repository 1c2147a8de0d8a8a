"""AdaptiveRAEC: RAEC with a reserve sized from the data (our comparator for the abstract's "adapting does not help").

The paper fixes RAEC's reserve in advance: Stage I runs L = ceil(log2(1/eps)) epochs, eps chosen from K, N and T
only (Theorem 3.1, section 3.2), and the abstract and section 8 say that choosing this amount as the data come
"does not improve the rate". The paper defines no adaptive policy; this one is ours. It runs RAEC's Stage I epoch
by epoch (the same targets m_g,l, thresholds 2^-l and elimination test) and, after each finished epoch l, decides
from its own data whether to run epoch l + 1 or to stop reserving; Stage II and the commitment are RAEC's.
It knows what RAEC knows (K, N, T, the observed f and g of its own pulls), never the true gaps.

Two readings of "re-choose the reserve from the data" (``rule``):

- ``"plugin"``: after epoch l it sets eps to the plug-in minimiser of Proposition 4.1's bound (constants dropped, as
  ``theory.proposition41_terms`` prints it), evaluated at its empirical means: eps = 2^-L* with
  L* = argmin_{L' >= l} B(2^-L'; mu_f hat, mu_g hat) (the smallest L' on ties; L' <= 62), and runs epoch l + 1
  only when L* > l. The reserve may end sooner or later than RAEC's.
- ``"resolved"``: RAEC's own L (Theorem 3.1's eps, at least one epoch) is the most it reserves, and it stops
  earlier once the data already separate the surviving g-arms: after epoch l, if the empirical g-leader of A_g
  leads every other survivor by more than the next threshold 2^-(l+1) (the precision epoch l + 1 would test at),
  the others leave A_g and Stage I ends.

Conventions (ours): epoch 1 always runs (there are no data to decide on before it); the decision is made after the
epoch's elimination and only when two or more g-arms survive; ``stage1_scale`` scales the Stage I targets as in
``RAEC`` but the plug-in bound stays Proposition 4.1's (it is the bound of the unscaled Algorithm 1). The Stage I
engine is ``commit.elimination``'s (epochs, round-robin inside an epoch, the strict elimination test); ``reference``
plays it round by round and hands Stage II to RAEC's per-round reference.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ...errors import check_choice, check_real
from ...rng import PyStream
from .. import theory
from ..commitment import nb_commit_empirical, nb_commit_uniform, py_commit_empirical, py_commit_uniform
from ..elimination import (COMMIT_EMPIRICAL, COMMIT_F_SET, COMMIT_UNIFORM, MAX_EPOCHS, nb_eliminate, nb_epoch, nb_n_active,
                           nb_stage2, epoch_targets, stage2_schedule)
from ..sampling import environment_stream_seeds, policy_stream_seeds
from .base import CommitPolicy, problem_arrays
from .raec import RAEC, reference_elimination, table_sets

RULES = ("plugin", "resolved")
RULE_PLUGIN = 0
RULE_RESOLVED = 1


def plugin_epochs(mean_f, mean_g, N: int, T: int, done: int, cap: int = MAX_EPOCHS) -> int:
    """The plug-in reserve after ``done`` epochs: argmin over L' = done..cap of Proposition 4.1's bound at
    eps = 2^-L' with the arms' empirical means (``theory.proposition41_terms``), the smallest L' on ties."""
    best_L, best = done, math.inf
    for L in range(done, cap + 1):
        value = theory.proposition41_terms(mean_f, mean_g, N, T, math.ldexp(1.0, -L))["total"]
        if value < best:
            best_L, best = L, value
    return best_L


def resolved_leader(mean_g: dict, threshold: float) -> int | None:
    """The survivor whose empirical g-mean leads every other survivor's by more than ``threshold``, or None.
    ``mean_g`` maps each surviving arm to its empirical g-mean."""
    leader = max(sorted(mean_g), key=lambda i: mean_g[i])  # the first of the highest means, as the kernel
    others = [i for i in mean_g if i != leader]
    return leader if others and all(mean_g[leader] - mean_g[i] > threshold for i in others) else None


@dataclass(frozen=True)
class AdaptiveRAEC(CommitPolicy):
    """RAEC whose number of reserved epochs is chosen from the data after each epoch (module docstring: not in the
    paper; ``rule="plugin"`` re-chooses eps as the plug-in minimiser of Proposition 4.1's bound, ``rule="resolved"``
    stops RAEC's Stage I early once the surviving g-arms are separated by more than the next threshold).

    ``stage1_scale``, ``stage2_scale`` and ``commit`` mean what they mean for ``RAEC`` (Algorithm 1: 1, 1, uniform).
    """

    rule: str = "plugin"
    stage1_scale: float = 1.0
    stage2_scale: float = 1.0
    commit: str = "uniform"

    name = "AdaptiveRAEC"

    def __post_init__(self):
        self._check("rule", check_choice, RULES)
        self._check("stage1_scale", check_real, 0.0, lo_open=True)
        self._check("stage2_scale", check_real, 0.0, lo_open=True)
        self._check("commit", check_choice, ("uniform", "empirical"))

    @property
    def _commit_mode(self) -> int:
        return COMMIT_UNIFORM if self.commit == "uniform" else COMMIT_EMPIRICAL

    @property
    def _rule_code(self) -> int:
        return RULE_PLUGIN if self.rule == "plugin" else RULE_RESOLVED

    def cap(self, problem) -> int:
        """The most Stage I epochs the rule may run: 62 (``plugin``) or RAEC's L at Theorem 3.1's eps (``resolved``)."""
        if self.rule == "plugin":
            return MAX_EPOCHS
        return RAEC(stage1_scale=self.stage1_scale).stage1_epochs(problem)

    def schedule(self, problem) -> tuple[np.ndarray, np.ndarray]:
        """(Stage I targets for l = 1..cap, Stage II targets), RAEC's formulas."""
        tg = epoch_targets(self.stage1_scale, math.log(problem.T - problem.N), self.cap(problem), problem.N)
        return tg, stage2_schedule(problem.N, self.stage2_scale)

    # ------------------------------------------------------------------------------ compiled paths
    def run_batch(self, problem, env_seeds, pol_seeds):
        return self.run_batch_sets(problem, env_seeds, pol_seeds)[:2]

    def run_batch_sets(self, problem, env_seeds, pol_seeds):
        """(counts (n, K), committed (n,), A_g when Stage I ends (n, K)), like ``RAEC.run_batch_sets``."""
        return self.run_batch_epochs(problem, env_seeds, pol_seeds)[:3]

    def run_batch_epochs(self, problem, env_seeds, pol_seeds):
        """``run_batch_sets`` and the number of Stage I epochs each run finished (n,): how much it reserved."""
        tg, tf = self.schedule(problem)
        n = env_seeds.size
        counts = np.zeros((n, problem.K), dtype=np.int64)
        committed = np.zeros(n, dtype=np.int64)
        active_g = np.zeros((n, problem.K), dtype=np.bool_)
        epochs = np.zeros(n, dtype=np.int64)
        _adaptive_batch(problem.N, problem.T, self._rule_code, tg, tf, self._commit_mode, env_seeds, pol_seeds,
                        *problem_arrays(problem), counts, committed, active_g, epochs)
        return counts, committed, active_g, epochs

    def reserved_epochs(self, problem, n_seeds: int, seed: int = 0) -> np.ndarray:
        """Stage I epochs of each of the runs ``simulate(problem, self, n_seeds, seed)`` makes."""
        return self.run_batch_epochs(problem, environment_stream_seeds(seed, n_seeds),
                                     policy_stream_seeds(seed, n_seeds))[3]

    def run_table(self, problem, F, G, pol_seed):
        return self.run_table_sets(problem, F, G, pol_seed)[:2]

    def run_table_sets(self, problem, F, G, pol_seed):
        """``run_table`` that also returns A_g when Stage I ends (K booleans)."""
        tg, tf = self.schedule(problem)
        return table_sets(_adaptive_table, (problem.N, problem.T, self._rule_code, tg, tf, self._commit_mode), problem.K,
                          F, G, pol_seed)

    # ------------------------------------------------------------------------------ reference
    def reference(self, problem, F, G, stream_seed=0, trace=False):
        """Round by round: Stage I epochs with the decision after each, then RAEC's per-round Stage II."""
        K, N, T = problem.K, problem.N, problem.T
        tg, tf = self.schedule(problem)
        cap = len(tg)
        counts, sf, sg = [0] * K, [0.0] * K, [0.0] * K
        arms: list[int] = []
        records: list[dict] = []

        def pull(i):
            counts[i] += 1
            sf[i] += F[i, counts[i]]
            sg[i] += G[i, counts[i]]
            arms.append(i)

        def run_epoch(target):  # cycles of round-robin over the arms below target, until all reach it or round N
            while True:
                due = [i for i in sorted(active) if counts[i] < target]
                if not due:
                    return True
                for i in due:
                    if len(arms) == N:
                        return False
                    pull(i)

        active = set(range(K))
        done = 0
        while len(arms) < N and len(active) > 1 and done < cap:
            before = tuple(sorted(active))
            if not run_epoch(int(tg[done])):
                break
            done += 1
            means = {i: sg[i] / counts[i] for i in sorted(active)}
            best = max(means.values())
            gone = [i for i in sorted(active) if best - means[i] > math.ldexp(1.0, -done)]
            active -= set(gone)
            decision, keep = "one arm left", False
            if len(active) > 1:
                if self.rule == "plugin":
                    chosen = plugin_epochs([sf[i] / counts[i] for i in range(K)], [sg[i] / counts[i] for i in range(K)],
                                           N, T, done, cap)
                    keep, decision = chosen > done, f"plug-in L = {chosen}"
                else:
                    leader = resolved_leader({i: means[i] for i in sorted(active)}, math.ldexp(1.0, -(done + 1)))
                    if leader is not None:
                        active, decision = {leader}, f"resolved: arm {leader} leads by > 2^-{done + 1}"
                    else:
                        keep, decision = done < cap, "not resolved"
            records.append(dict(stage="I (g)", epoch=done, threshold=math.ldexp(1.0, -done), target=int(tg[done - 1]),
                                active=before, eliminated=tuple(gone), survivors=tuple(sorted(active)),
                                decision=decision, last_round=len(arms)))
            if not keep:
                break

        stage2 = reference_elimination(F, G, N, [], [int(x) for x in tf], COMMIT_F_SET, stream_seed, trace=trace,
                                       prior_counts=counts)
        played = [int(i) for i in stage2[0]]
        final = np.bincount(np.asarray(arms + played, dtype=np.int64), minlength=K)
        g_sums = [float(sum(G[i, 1:final[i] + 1])) for i in range(K)]
        members = sorted(active)
        stream = PyStream(stream_seed)  # Stage II's reference drew nothing but its own commitment, discarded here
        if self._commit_mode == COMMIT_UNIFORM:
            committed = py_commit_uniform(members, stream)
        else:
            committed = py_commit_empirical(members, g_sums, final, stream)
        arms_arr = np.asarray(arms + played, dtype=np.int64)
        if trace:
            records += [e for e in stage2[2] if e["stage"] != "commit"]
            records.append(dict(stage="commit", epoch=0, active=tuple(members), committed=committed))
            return arms_arr, committed, records
        return arms_arr, committed


# ---------------------------------------------------------------------------------------- compiled path
@njit(cache=True)
def nb_plugin_bound(L, mean_f, mean_g, N, T):
    """``theory.proposition41_terms(mean_f, mean_g, N, T, 2^-L)["total"]``, compiled (the same operations)."""
    K = mean_f.size
    eps = math.ldexp(1.0, -L)
    c = T - N
    top_f = mean_f.max()
    top_g = mean_g.max()
    star = np.argmax(mean_g)
    runner = np.inf
    for j in range(K):
        if j != star and top_g - mean_g[j] < runner:
            runner = top_g - mean_g[j]
    experiment = 0.0
    for i in range(K):
        df = top_f - mean_f[i]
        if df > 0:
            gam = runner if i == star else top_g - mean_g[i]
            experiment += df * max(math.log(c) / max(gam, eps) ** 2, math.log(N) / df ** 2)
    worst = 0.0
    for i in range(K):
        dg = top_g - mean_g[i]
        if dg <= 2 * eps and dg > worst:
            worst = dg
    commitment = c * worst
    Lb = max(L, 1)
    m_gL = 4 * math.log(c) * 4.0 ** min(Lb, 60)
    B = min(N, K * m_gL)
    failure = K * Lb / c + K * B * Lb / c ** 2
    return experiment + commitment + failure


@njit(cache=True)
def _keep_reserving(rule, done, cap, N, T, counts, sumf, sumg, active_g):
    """After epoch ``done`` (>= 2 survivors): run another epoch? ``resolved`` may shrink ``active_g`` to its leader."""
    K = counts.size
    if rule == RULE_PLUGIN:
        mean_f = sumf / counts
        mean_g = sumg / counts
        best_L = done
        best = np.inf
        for L in range(done, cap + 1):
            value = nb_plugin_bound(L, mean_f, mean_g, N, T)
            if value < best:
                best_L = L
                best = value
        return best_L > done
    leader = -1
    top = -np.inf
    for i in range(K):
        if active_g[i] and sumg[i] / counts[i] > top:
            top = sumg[i] / counts[i]
            leader = i
    threshold = math.ldexp(1.0, -(done + 1))
    for i in range(K):
        if active_g[i] and i != leader and not (top - sumg[i] / counts[i] > threshold):
            return done < cap
    for i in range(K):
        active_g[i] = i == leader
    return False


@njit(cache=True)
def adaptive_run(N, T, rule, targets_g, targets_f, commit_mode, use_table, CF, CG, env, pol,
                 kind, mu_f, mu_g, probs, fv, gv, counts, sumf, sumg, active_g, active_f):
    """One run: Stage I epoch by epoch with the rule's decision after each, RAEC's Stage II, the commitment.
    Returns (committed arm, Stage I epochs finished)."""
    counts[:] = 0
    sumf[:] = 0.0
    sumg[:] = 0.0
    active_g[:] = True
    active_f[:] = True
    cap = targets_g.size
    t = 0
    done = 0
    while t < N and nb_n_active(active_g) > 1 and done < cap:
        complete, t = nb_epoch(active_g, targets_g[done], t, N, counts, sumf, sumg, use_table, CF, CG, env,
                             kind, mu_f, mu_g, probs, fv, gv)
        if not complete:
            break
        done += 1
        nb_eliminate(active_g, sumg, counts, math.ldexp(1.0, -done))
        if nb_n_active(active_g) <= 1 or not _keep_reserving(rule, done, cap, N, T, counts, sumf, sumg, active_g):
            break
    nb_stage2(t, N, targets_f, active_f, counts, sumf, sumg, use_table, CF, CG, env, kind, mu_f, mu_g, probs, fv, gv)
    if commit_mode == COMMIT_UNIFORM:
        return nb_commit_uniform(active_g, pol), done
    return nb_commit_empirical(active_g, sumg, counts, pol), done


@njit(cache=True)
def _adaptive_batch(N, T, rule, targets_g, targets_f, commit_mode, env_seeds, pol_seeds, kind, mu_f, mu_g, probs,
                    fv, gv, counts_out, committed_out, active_g_out, epochs_out):
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
        committed_out[s], epochs_out[s] = adaptive_run(N, T, rule, targets_g, targets_f, commit_mode, False, dummy,
                                                       dummy, env, pol, kind, mu_f, mu_g, probs, fv, gv, counts,
                                                       sumf, sumg, active_g, active_f)
        counts_out[s, :] = counts
        active_g_out[s, :] = active_g


@njit(cache=True)
def _adaptive_table(N, T, rule, targets_g, targets_f, commit_mode, CF, CG, pol_seed, counts_out, active_g_out):
    K = CF.shape[0]
    env = np.zeros(1, dtype=np.uint64)
    pol = np.empty(1, dtype=np.uint64)
    pol[0] = pol_seed
    e1 = np.zeros(K)
    e2 = np.zeros((K, 1))
    sumf = np.zeros(K)
    sumg = np.zeros(K)
    active_f = np.ones(K, dtype=np.bool_)
    committed, _ = adaptive_run(N, T, rule, targets_g, targets_f, commit_mode, True, CF, CG, env, pol,
                                0, e1, e1, e2, e1, e1, counts_out, sumf, sumg, active_g_out, active_f)
    return committed
