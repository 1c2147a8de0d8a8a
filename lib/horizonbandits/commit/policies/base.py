"""What every experiment-then-commit policy provides, and the registries ``COMMIT_POLICIES`` and
``PORTFOLIO_POLICIES``.

A policy is a frozen dataclass of hyperparameters with a display ``name`` and three ways to run:

- ``run_batch(problem, env_seeds, pol_seeds)``: the fast compiled path, one run per seed index, outcomes
  drawn from each seed's own stream (elimination epochs as block sums). Returns the pull counts
  (n_seeds x K) and the committed arms (n_seeds,).
- ``run_table(problem, F, G, pol_seed)``: the same compiled path reading outcome tables (``F[i, n]`` and
  ``G[i, n]`` are f and g of the n-th pull of arm i). Returns (counts (K,), committed arm).
- ``reference(problem, F, G, stream_seed, trace=False)``: a plain per-round Python loop that follows the
  paper's description line by line. Returns (arms (N,), committed arm); with ``trace`` also a list of
  per-epoch records where the policy has epochs.

On the same tables and stream seed ``run_table`` and ``reference`` agree exactly (same counts, same
commitment); ``run_batch`` agrees with them in distribution. Tests check both.

The portfolio policies of section 6.2 (ROSCOC, UCB-Portfolio) derive from ``PortfolioPolicy``: another
interface (``run(problem, tables, stream_seed, trace)`` on a ``portfolio_model.PortfolioProblem``) and their
own registry, ``PORTFOLIO_POLICIES``, filled when their modules are imported (they need cvxpy, so
``horizonbandits.commit.PORTFOLIO_POLICIES`` imports them on first use). ``register_portfolio_policy``
files a portfolio policy written without that base.

Both bases derive from ``horizonbandits.policy_base.Policy`` (registration, ``label``, ``_check``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...policy_base import Policy, make, register

COMMIT_POLICIES: dict[str, type] = {}
PORTFOLIO_POLICIES: dict[str, type] = {}


@dataclass(frozen=True)
class CommitPolicy(Policy, registry=COMMIT_POLICIES, kind="commitment policy"):
    def run_batch(self, problem, env_seeds: np.ndarray, pol_seeds: np.ndarray):
        raise NotImplementedError

    def run_table(self, problem, F: np.ndarray, G: np.ndarray, pol_seed: int):
        raise NotImplementedError

    def reference(self, problem, F: np.ndarray, G: np.ndarray, stream_seed: int = 0, trace: bool = False):
        raise NotImplementedError


@dataclass(frozen=True)
class PortfolioPolicy(Policy, registry=PORTFOLIO_POLICIES, kind="portfolio policy"):
    def run(self, problem, tables, stream_seed: int = 0, trace: bool = False):
        """One seed: a ``portfolio_model.PolicyRun`` (experiment pulls per arm, committed portfolio, details)."""
        raise NotImplementedError


def make_commit_policy(name: str, **params) -> CommitPolicy:
    """``COMMIT_POLICIES[name](**params)`` with a one-line error for an unknown name."""
    return make(COMMIT_POLICIES, name, **params)


def register_portfolio_policy(cls):
    """Class decorator: file a portfolio policy under its display ``name`` in ``PORTFOLIO_POLICIES``."""
    return register(PORTFOLIO_POLICIES, cls, "portfolio policy")


def problem_arrays(problem):
    """The arrays a kernel needs to draw outcomes of ``problem``."""
    return (problem.kind, problem.mu_f, problem.mu_g, problem.probs, problem.f_values, problem.g_values)
