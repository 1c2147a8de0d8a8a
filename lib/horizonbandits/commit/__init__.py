"""Experimentation then commitment under a reward shift (Jiang, Tang and Zhang 2026, arXiv 2607.23432).

    import horizonbandits as hb
    problem = hb.commit.CommitProblem.bernoulli(mu_f, mu_g, N, T)
    result = hb.commit.simulate(problem, hb.commit.RAEC(), n_seeds=1000, seed=0)
    result.regret, result.experiment_regret, result.commitment_regret, result.committed

Modules: ``problem`` (CommitProblem), ``policies`` (RAEC, UCBCommit, UniformCommit, NoShiftElimination,
SuccessiveRejects, AdaptiveRAEC; and, imported on first use, the portfolio policies ROSCOC and UCB-Portfolio),
``elimination`` (the epoch engine shared by the elimination policies), ``commitment`` (the commit step),
``sampling`` (seeds, block sums, outcome tables), ``simulate``, ``grid`` (the commitment grid behind
``experiments.run_grid``, and ``summary_table``),
``theory`` and ``instances``; ``portfolio_model`` (the portfolio problem of section 6.2, its simulate and grid)
with ``portfolio`` (rewards, solvers) and ``portfolio_instances``.
"""
from . import instances, theory
from .grid import summarise, summary_table
from .policies import (COMMIT_POLICIES, RAEC, AdaptiveRAEC, CommitPolicy, NoShiftElimination, PortfolioPolicy,
                       SuccessiveRejects, UCBCommit, UniformCommit, make_commit_policy)
from .problem import CommitProblem
from .simulate import CommitResult, reference_runs, simulate, stage1_survivors

__all__ = ["CommitProblem", "CommitPolicy", "PortfolioPolicy", "CommitResult", "RAEC", "UCBCommit", "UniformCommit",
           "NoShiftElimination", "SuccessiveRejects", "AdaptiveRAEC", "COMMIT_POLICIES", "make_commit_policy", "simulate",
           "reference_runs", "stage1_survivors", "summary_table", "summarise", "theory", "instances"]

# Portfolio extension (section 6.2 / 7.3): loaded on first use, because cvxpy takes seconds to import.
_PORTFOLIO_EXPORTS = {
    "portfolio_solve": ".portfolio", "portfolio_solve_exact": ".portfolio", "QuadraticReward": ".portfolio",
    "ROSCOC": ".policies.roscoc", "UCBPortfolio": ".policies.ucb_portfolio", "PORTFOLIO_POLICIES": None,
    "PortfolioProblem": ".portfolio_model", "simulate_portfolio": ".portfolio_model",
}
__all__ += list(_PORTFOLIO_EXPORTS)


def __getattr__(name):
    if name in _PORTFOLIO_EXPORTS:
        import importlib
        if name == "PORTFOLIO_POLICIES":  # the registry is full once both policy modules are imported
            for module in (".policies.roscoc", ".policies.ucb_portfolio"):
                importlib.import_module(module, __name__)
            from .policies.base import PORTFOLIO_POLICIES
            return PORTFOLIO_POLICIES
        module = importlib.import_module(_PORTFOLIO_EXPORTS[name], __name__)
        return getattr(module, "simulate" if name == "simulate_portfolio" else name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
