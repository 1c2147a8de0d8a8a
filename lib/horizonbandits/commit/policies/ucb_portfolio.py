"""UCB-Portfolio, the baseline of section 7.3 of the RAEC paper: UCB1 on f, then the plug-in portfolio.

It takes a :class:`~horizonbandits.commit.portfolio_model.PortfolioProblem` and one seed's
:class:`~horizonbandits.commit.portfolio_model.PortfolioTables` and returns a
:class:`~horizonbandits.commit.portfolio_model.PolicyRun`; :func:`~horizonbandits.commit.portfolio_model.simulate`
turns these into regret. Registered in ``PORTFOLIO_POLICIES`` under its display name.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numba import njit

from ..portfolio_model import PolicyRun, PortfolioProblem, PortfolioTables
from ..portfolio import solver_for
from .base import PortfolioPolicy
from .ucb import nb_ucb_arm


# ----------------------------------------------------------------------------------------------
# UCB on f (the experiment phase of UCB-Portfolio): compiled kernel and its plain reference.

@njit(cache=True)
def _ucb_kernel(F, N, arms_out):
    """UCB1 on the f-rewards for N rounds; F[i, n] is the f-reward of arm i's (n+1)-th pull.

    Round t <= K pulls arm t-1; afterwards the arm with the largest mean + sqrt(2 log t / n)
    (lowest index on ties). Returns pull counts; fills arms_out when it has length N.
    """
    K = F.shape[0]
    n = np.zeros(K, dtype=np.int64)
    s = np.zeros(K)
    record = arms_out.shape[0] == N
    for t in range(1, N + 1):
        arm = nb_ucb_arm(t, s, n)  # the same UCB1 step as UCBCommit
        s[arm] += F[arm, n[arm]]
        n[arm] += 1
        if record:
            arms_out[t - 1] = arm
    return n


def ucb_f_reference(F, N):
    """Per-round Python UCB1 on f, line by line (section 7.2: UCB_i = mean_i + sqrt(2 log t / n_i)).

    Returns the arm sequence; the tests check that the kernel picks the same arms.
    """
    K = F.shape[0]
    n, total = [0] * K, [0.0] * K
    arms = np.empty(N, dtype=np.int64)
    for t in range(1, N + 1):
        if t <= K:
            arm = t - 1
        else:
            arm, best = 0, -math.inf
            for i in range(K):
                b = total[i] / n[i] + math.sqrt(2.0 * math.log(t) / n[i])
                if b > best:
                    arm, best = i, b
        total[arm] += F[arm, n[arm]]
        n[arm] += 1
        arms[t - 1] = arm
    return arms


def ucb_f_counts(F, N, record_arms: bool = False):
    arms = np.empty(N if record_arms else 0, dtype=np.int64)
    counts = _ucb_kernel(np.ascontiguousarray(F, dtype=np.float64), int(N), arms)
    return (counts, arms) if record_arms else counts


# ----------------------------------------------------------------------------------------------
# The policy.

@dataclass(frozen=True)
class UCBPortfolio(PortfolioPolicy):
    """UCB-Portfolio (section 7.3): UCB1 on f for the N experiment rounds, then the plug-in portfolio.

    The commitment is argmax_{x in simplex} g(O_hat x), with O_hat the empirical outcome means of
    all experiment-phase pulls of each arm, solved with cvxpy (``PortfolioSolver``).
    """

    name: ClassVar[str] = "UCB-Portfolio"

    def run(self, problem: PortfolioProblem, tables: PortfolioTables, stream_seed: int = 0, trace: bool = False):
        counts = ucb_f_counts(tables.F, problem.N)
        O_hat = tables.outcome_means(counts)
        x, value = solver_for(problem.reward, problem.K).solve(O_hat)
        return PolicyRun(counts, x, dict(estimated_value=value, solves=1))
