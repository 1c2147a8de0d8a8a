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

The portfolio policies of section 6.2 (ROSCOC, UCB-Portfolio) have another interface (``run(problem,
tables, stream_seed, trace)`` on a ``portfolio_model.PortfolioProblem``) and their own registry,
``PORTFOLIO_POLICIES``, filled by ``register_portfolio_policy`` when their modules are imported (they
need cvxpy, so ``horizonbandits.commit.PORTFOLIO_POLICIES`` imports them on first use).
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np

COMMIT_POLICIES: dict[str, type] = {}
PORTFOLIO_POLICIES: dict[str, type] = {}


@dataclass(frozen=True)
class CommitPolicy:
    name: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("name"):
            if cls.name in COMMIT_POLICIES and COMMIT_POLICIES[cls.name].__qualname__ != cls.__qualname__:
                raise RuntimeError(f"two commitment policies are named {cls.name!r}")
            COMMIT_POLICIES[cls.name] = cls

    def run_batch(self, problem, env_seeds: np.ndarray, pol_seeds: np.ndarray):
        raise NotImplementedError

    def run_table(self, problem, F: np.ndarray, G: np.ndarray, pol_seed: int):
        raise NotImplementedError

    def reference(self, problem, F: np.ndarray, G: np.ndarray, stream_seed: int = 0, trace: bool = False):
        raise NotImplementedError

    @property
    def label(self) -> str:
        """Display name with the hyperparameters that differ from their defaults, e.g. 'RAEC(commit='empirical')'."""
        changed = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)
                   if getattr(self, f.name) != f.default]
        return self.name + (f"({', '.join(changed)})" if changed else "")


def make_commit_policy(name: str, **params) -> CommitPolicy:
    """``COMMIT_POLICIES[name](**params)`` with a one-line error for an unknown name."""
    if name not in COMMIT_POLICIES:
        raise ValueError(f"policy={name!r} is not allowed: expected one of {', '.join(sorted(COMMIT_POLICIES))}")
    return COMMIT_POLICIES[name](**params)


def register_portfolio_policy(cls):
    """Class decorator: file a portfolio policy under its display ``name`` in ``PORTFOLIO_POLICIES``."""
    if not cls.name:
        raise RuntimeError(f"portfolio policy {cls.__qualname__} has no display name")
    if cls.name in PORTFOLIO_POLICIES and PORTFOLIO_POLICIES[cls.name].__qualname__ != cls.__qualname__:
        raise RuntimeError(f"two portfolio policies are named {cls.name!r}")
    PORTFOLIO_POLICIES[cls.name] = cls
    return cls


def problem_arrays(problem):
    """The arrays a kernel needs to draw outcomes of ``problem``."""
    return (problem.kind, problem.mu_f, problem.mu_g, problem.probs, problem.f_values, problem.g_values)
