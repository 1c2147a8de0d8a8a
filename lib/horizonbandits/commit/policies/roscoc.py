"""ROSCOC for the concave-commitment model (section 6.2 of the RAEC paper); its baseline UCB-Portfolio is in ``ucb_portfolio``.

ROSCOC takes a :class:`~horizonbandits.commit.portfolio_model.PortfolioProblem` and one seed's
:class:`~horizonbandits.commit.portfolio_model.PortfolioTables` and return a
:class:`~horizonbandits.commit.portfolio_model.PolicyRun` (pulls over the N experiment rounds and the
committed portfolio); :func:`~horizonbandits.commit.portfolio_model.simulate` turns these into regret.

Our copy of the paper describes ROSCOC in words only (section 6.2; the pseudo-code is in an
appendix we do not have). Every detail below that the text does not fix is a documented parameter.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numba import njit

from ...errors import check_choice, check_real
from ...rng import PyStream
from ..portfolio_model import PolicyRun, PortfolioProblem, PortfolioTables, theorem63_stage1_budget
from ..elimination import COMMIT_F_SET, allocate_round_robin, stage2_schedule, stage2_table
from ..portfolio import QuadraticReward, solver_for
from .base import PortfolioPolicy
from .raec import reference_elimination


# ----------------------------------------------------------------------------------------------
# Stage I of ROSCOC, Frank-Wolfe form, for a quadratic g: compiled kernel (the reference is the
# per-round loop of ``ROSCOC.run``; the tests check that both pick the same arms).

@njit(cache=True)
def _frank_wolfe_kernel(Y, A, c, n1, radius_scale, gamma, doubling, path):
    """Stage I for g(y) = -(y - c)^T A (y - c): arm t-1 in round t <= K, then argmax_j theta . v_j + |theta| . rad_j
    with theta = -2 A (ybar - c) at the average outcome ybar of the rounds so far and (v, rad) refreshed every
    round or after K, 2K, 4K, ... pulls (``doubling``). Fills ``path``; returns (counts, refreshes)."""
    K, d = Y.shape[0], Y.shape[2]
    counts = np.zeros(K, dtype=np.int64)
    sums = np.zeros((d, K))
    total = np.zeros(d)
    means = np.zeros((d, K))
    rad = np.zeros((d, K))
    next_solve, solves = K, 0
    for t in range(1, n1 + 1):
        if t <= K:
            arm = t - 1
        else:
            if t - 1 >= next_solve:
                for j in range(K):
                    for k in range(d):
                        means[k, j] = sums[k, j] / counts[j]
                        rad[k, j] = radius_scale * (math.sqrt(gamma * means[k, j] / counts[j]) + gamma / counts[j])
                solves += 1
                next_solve = 2 * (t - 1) if doubling else t
            theta = np.zeros(d)
            for k in range(d):
                for m in range(d):
                    theta[k] -= 2.0 * A[k, m] * (total[m] / (t - 1) - c[m])
            arm, best = 0, -np.inf
            for j in range(K):
                score = 0.0
                for k in range(d):
                    score += theta[k] * means[k, j] + abs(theta[k]) * rad[k, j]
                if score > best:
                    arm, best = j, score
        for k in range(d):
            y = Y[arm, counts[arm], k]
            sums[k, arm] += y
            total[k] += y
        counts[arm] += 1
        path[t - 1] = arm
    return counts, solves


# ----------------------------------------------------------------------------------------------
# Stage II: arm elimination on f, counting earlier pulls: RAEC's Stage II (section 3.1), its code.

def round_robin_fill(need, budget: int) -> np.ndarray:
    """Pulls given to each arm when arms with need[i] > 0 are pulled in turn (index order) until
    each has its need or the budget runs out: the allocation of a round-robin epoch, the same one
    RAEC's epochs use (``elimination.allocate_round_robin``)."""
    return allocate_round_robin(np.asarray(need, dtype=np.int64), max(int(budget), 0))


def eliminate_on_f(CF, counts, rounds: int, N: int, scale: float):
    """Run Stage II for ``rounds`` rounds ending at round N, starting from ``counts`` (pulls so far); return
    (counts, epochs started).

    This is RAEC's Stage II (section 3.1; ``elimination.stage2_table``, the compiled code RAEC runs): epoch
    l = 1, 2, ... has threshold 2^-l and target m_f,l = ceil(scale * 4 log N / (2^-l)^2) (the 1/10 scale of
    section 7.3 passed in ``scale``); each active arm is pulled round-robin until it has m_f,l pulls in total
    (Stage-I pulls count), then an arm is eliminated when the best empirical f-mean of the active arms exceeds
    its own by more than 2^-l (the paper's test: "the gap ... exceeds a threshold"). A lone survivor takes
    all remaining rounds; when the rounds end inside an epoch they are shared round-robin among the arms
    still below target (no elimination happens then).
    """
    counts = np.array(counts, dtype=np.int64)
    rounds = int(rounds)
    if rounds <= 0:
        return counts, 0
    epochs = stage2_table(int(N), rounds, stage2_schedule(N, scale), np.ascontiguousarray(CF, dtype=np.float64),
                          counts)
    return counts, int(epochs)


def eliminate_on_f_reference(F, counts, rounds: int, N: int, scale: float):
    """Stage II one round at a time: RAEC's per-round reference (``raec.reference_elimination`` with no Stage I,
    started from the pulls ``counts``). The tests check that :func:`eliminate_on_f` gives the same counts.
    ``F[i, n]`` is the f-reward of arm i's (n+1)-th pull (no leading column)."""
    counts = np.array(counts, dtype=np.int64)
    rounds = int(rounds)
    if rounds <= 0:
        return counts, 0
    padded = np.concatenate([np.zeros((F.shape[0], 1)), np.asarray(F, dtype=np.float64)], axis=1)
    arms, _, trace = reference_elimination(padded, padded, int(counts.sum()) + rounds, [],
                                           [int(x) for x in stage2_schedule(N, scale)], COMMIT_F_SET,
                                           trace=True, prior_counts=counts)
    epochs = sum(1 for e in trace if e["stage"] == "II (f)" and not math.isnan(e["threshold"]))
    return counts + np.bincount(arms, minlength=counts.size), epochs


# ----------------------------------------------------------------------------------------------
# The policy.

@dataclass(frozen=True)
class ROSCOC(PortfolioPolicy):
    """Reserved online stochastic convex optimisation for commitment (ROSCOC), section 6.2.

    Our reading of section 6.2 and of Agrawal and Devanur (2014), "Bandits with concave rewards and
    convex knapsacks" (AD14), whose UCB algorithm is the "well-established online stochastic convex
    optimisation algorithm" run in the reserved rounds:

    Stage I (rounds 1..n1, reserved). n1 = min(N, max(K, round(stage1_scale * tau))) with
      tau = min{N, (L_g^2 K d)^(1/3) (T - N)^(2/3)} (``theorem63_stage1_budget``: the budget that
      balances the terms of Theorem 6.3, which our copy does not print; section 7.3 uses 0.3 tau).
      The first K rounds pull each arm once. With n_j pulls of arm j and empirical outcome means
      v_j, AD14's confidence radius per coordinate is
          rad_j = radius_scale * (sqrt(gamma v_j / n_j) + gamma / n_j),  gamma = log(K d n1) by default
      (their Bernstein-type radius for [0, 1]-valued outcomes, gamma = Theta(log(K d T / delta));
      ``radius_scale`` = 0 makes every step greedy). Two versions of the step (``stage1``):

      * ``"frank_wolfe"`` (default): AD14's algorithm for concave rewards in its Frank-Wolfe form.
        With ybar the average outcome of the t - 1 pulls so far and theta = grad g(ybar), round t
        pulls the arm of largest optimistic linearised reward
            argmax_j  theta . v_j + |theta| . rad_j      (ties: lowest index)
        i.e. the maximum over arm j's box of theta . v. The path's empirical distribution is then
        the averaged Frank-Wolfe iterate (step 1/t) of max_x g(V x), so it concentrates on the
        optimal portfolio (the convex-solve version below does not).
      * ``"convex_solve"``: the optimistic convex step
            x_t = argmax_{x in simplex, v'_j in box_j} g(sum_j x_j v'_j)
        (``OptimisticPortfolioSolver``, cvxpy) and an arm drawn from x_t with the policy's own
        stream (``horizonbandits.rng.PyStream``). When c is reachable inside the boxes the optimal
        set of this step is wide and the interior-point solver returns its middle, so the path is
        close to uniform (mean x about (0.18, 0.21, 0.22, 0.19, 0.20) on section 7.3 with Gaussian
        outcomes and A = I): the reason it is no longer the default.

      ``solve_every="round"`` recomputes the estimates v_j, rad_j (and, for ``convex_solve``, x_t)
      every round as in AD14; ``"doubling"`` only when the number of Stage-I pulls has doubled
      since the last time (after K, 2K, 4K, ... pulls); the Frank-Wolfe gradient is taken at the
      current average outcome every round either way. ``info["solves"]`` counts the recomputations.
    Stage II (rounds n1+1..N). RAEC's Stage II, run by RAEC's code: arm elimination on f with targets
      stage2_scale * m_f,l (``eliminate_on_f``; 1/10 as in section 7.3), Stage-I pulls counting, an arm
      eliminated when the best empirical f-mean exceeds its own by more than 2^-l.
    Commitment. ``commit="path"`` (the paper): the empirical distribution of the Stage-I
      execution path, x_j = (Stage-I pulls of arm j) / n1, executed by sampling uniformly from the
      path. ``commit="plugin"`` (our ablation, not in the paper): argmax g(O_hat x) with the
      Stage-I empirical outcome means.

    ``lipschitz=None`` uses the reward's l2 Lipschitz constant on [0, 1]^d.
    """

    stage1_scale: float = 0.3
    stage2_scale: float = 0.1
    solve_every: str = "round"
    radius_scale: float = 1.0
    gamma: float | None = None
    commit: str = "path"
    lipschitz: float | None = None
    stage1: str = "frank_wolfe"

    name: ClassVar[str] = "ROSCOC"

    def __post_init__(self):
        self._check("stage1_scale", check_real, 0.0, lo_open=True)
        self._check("stage2_scale", check_real, 0.0, lo_open=True)
        self._check("solve_every", check_choice, ("round", "doubling"))
        self._check("radius_scale", check_real, 0.0)
        self._check("gamma", check_real, 0.0, lo_open=True, optional=True)
        self._check("commit", check_choice, ("path", "plugin"))
        self._check("lipschitz", check_real, 0.0, lo_open=True, optional=True)
        self._check("stage1", check_choice, STAGE1_STEPS)

    def stage1_rounds(self, problem: PortfolioProblem) -> int:
        L = problem.reward.lipschitz() if self.lipschitz is None else self.lipschitz
        tau = theorem63_stage1_budget(problem.K, problem.d, problem.N, problem.T, L)
        return int(min(problem.N, max(problem.K, round(self.stage1_scale * tau))))

    def run(self, problem: PortfolioProblem, tables: PortfolioTables, stream_seed: int = 0, trace: bool = False):
        K, d = problem.K, problem.d
        n1 = self.stage1_rounds(problem)
        gamma = math.log(K * d * n1) if self.gamma is None else self.gamma
        if self.stage1 == "frank_wolfe" and isinstance(problem.reward, QuadraticReward) and not trace:
            path = np.empty(n1, dtype=np.int64)
            counts, solves = _frank_wolfe_kernel(tables.Y, np.ascontiguousarray(problem.reward.A, dtype=np.float64),
                                                 np.asarray(problem.reward.c, dtype=np.float64), n1,
                                                 float(self.radius_scale), float(gamma),
                                                 self.solve_every == "doubling", path)
            return self._finish(problem, tables, counts, n1, solves)
        return self.reference_run(problem, tables, n1, gamma, stream_seed, trace)

    def reference_run(self, problem, tables, n1, gamma, stream_seed=0, trace=False):
        """Stage I one round at a time in Python (every ``stage1``, every reward), then Stage II and the commitment."""
        K, d = problem.K, problem.d
        solver = solver_for(problem.reward, K, optimistic=True) if self.stage1 == "convex_solve" else None
        stream = PyStream(stream_seed)
        counts = np.zeros(K, dtype=np.int64)
        sums = np.zeros((d, K))
        x = np.full(K, 1.0 / K)
        means = rad = None
        next_solve, solves = K, 0
        total = np.zeros(d)  # sum of all outcomes so far (the Frank-Wolfe step's ybar = total / (t - 1))
        path = np.empty(n1, dtype=np.int64)
        xs = [] if trace else None
        for t in range(1, n1 + 1):
            if t <= K:
                arm = t - 1
            else:
                if t - 1 >= next_solve:
                    means, rad = self._estimates(sums, counts, gamma)
                    if solver is not None:
                        x, _ = solver.solve(np.clip(means - rad, 0.0, 1.0), np.clip(means + rad, 0.0, 1.0))
                    solves += 1
                    next_solve = t if self.solve_every == "round" else 2 * (t - 1)
                if solver is not None:
                    arm = _draw(x, stream.uniform())
                else:
                    arm = frank_wolfe_arm(problem.reward, total / (t - 1), means, rad)
                    x = np.zeros(K)
                    x[arm] = 1.0
            if trace and t > K:
                xs.append(x)
            sums[:, arm] += tables.Y[arm, counts[arm]]
            total += tables.Y[arm, counts[arm]]
            counts[arm] += 1
            path[t - 1] = arm
        extra = dict(path=path, stage1_portfolios=np.array(xs).reshape(-1, K), stage1_means=sums / counts) if trace else {}
        return self._finish(problem, tables, counts, n1, solves, extra)

    def _finish(self, problem, tables, counts, n1, solves, extra=None):
        """Commitment from the Stage-I path (or the plug-in ablation), then Stage II on f."""
        if self.commit == "path":
            portfolio = counts / n1
        else:  # Stage-I means: the first counts[j] outcomes of arm j
            portfolio, _ = solver_for(problem.reward, problem.K).solve(tables.outcome_means(counts))
            solves += 1
        pulls, epochs = eliminate_on_f(tables.CF, counts, problem.N - n1, problem.N, self.stage2_scale)
        info = dict(stage1_rounds=n1, solves=solves, stage2_epochs=epochs, **(extra or {}))
        return PolicyRun(pulls, portfolio, info)

    def _estimates(self, sums, counts, gamma):
        """Empirical outcome means v (d x K) and AD14's radii radius_scale (sqrt(gamma v / n) + gamma / n)."""
        means = sums / counts
        return means, self.radius_scale * (np.sqrt(gamma * means / counts) + gamma / counts)


STAGE1_STEPS = ("frank_wolfe", "convex_solve")


def reward_gradient(reward, y) -> np.ndarray:
    """grad g(y): exact for ``QuadraticReward`` (-2 A (y - c), summed in the kernel's order), central differences
    (step 1e-6) otherwise (at a kink, the average of the one-sided slopes: enough for a Frank-Wolfe step)."""
    y = np.asarray(y, dtype=float)
    if isinstance(reward, QuadraticReward):
        A, c, d = reward.A, reward.c, y.size
        theta = np.zeros(d)
        for k in range(d):
            for m in range(d):
                theta[k] -= 2.0 * A[k, m] * (y[m] - c[m])
        return theta
    eye = np.eye(y.size) * 1e-6
    return (reward.value(y + eye) - reward.value(y - eye)) / 2e-6


def frank_wolfe_arm(reward, ybar, means, rad) -> int:
    """The Frank-Wolfe step of ROSCOC's Stage I: argmax_j theta . v_j + |theta| . rad_j, theta = grad g(ybar).

    ``means`` and ``rad`` are d x K (one column per arm): theta . v is maximised over arm j's confidence box
    by putting each coordinate at the end theta points to. Lowest index on ties; each score is summed in the
    kernel's order, so that exact ties (two arms with the same draws) are ties in both.
    """
    theta = reward_gradient(reward, ybar)
    arm, best = 0, -math.inf
    for j in range(means.shape[1]):
        score = 0.0
        for k in range(means.shape[0]):
            score += theta[k] * means[k, j] + abs(theta[k]) * rad[k, j]
        if score > best:
            arm, best = j, score
    return arm


def _draw(x, u: float) -> int:
    """Inverse-CDF draw of an arm from the distribution x with the uniform u (last positive arm on round-off)."""
    cum = 0.0
    for j in range(x.size):
        cum += x[j]
        if u < cum:
            return j
    return int(np.flatnonzero(x > 0)[-1])
