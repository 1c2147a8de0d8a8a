"""What the results of every ``simulate`` share, and the loop over seed indices they are made by.

- :class:`Result`: a policy's label and its regret per seed index, with ``mean_regret``, ``n_seeds`` and
  one ``repr`` format, ``Name(policy, <the model's summary>)``. Rising bandits' ``RunResult`` derives
  from it.
- :class:`CommitmentResult`: the fields of both commitment models, in this order: ``policy, N, T, regret,
  experiment_regret, commitment_regret`` (regret = experiment + commitment [+ the portfolio's sampling
  cost]); ``commit.simulate.CommitResult`` and ``commit.portfolio_model.PortfolioRunResult`` add their own
  fields after these, so positional construction is unchanged.
- :func:`run_seeds`: ``[run(s) for s in seed indices]`` behind the progress bar.

A module of its own rather than a part of ``policy_base``: results are what the simulators return, read
by notebooks and the grid runner, and do not depend on how policies are registered.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from .progress import tqdm


class Result:
    """Mixin of every simulate result: ``policy`` (label) and ``regret`` (one entry per seed index)."""

    policy: str
    regret: np.ndarray

    @property
    def mean_regret(self) -> float:
        return float(np.mean(self.regret))

    @property
    def n_seeds(self) -> int:
        return int(np.size(self.regret))

    def _summary(self) -> list[str]:
        """The parts of the repr after the policy label (a model's result extends or replaces them)."""
        return [f"seeds={self.n_seeds}", f"mean regret={self.mean_regret:.4g}"]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.policy}, {', '.join(self._summary())})"


@dataclass(repr=False)
class CommitmentResult(Result):
    """The fields an experiment-then-commit result (single arm or portfolio) starts with."""

    policy: str
    N: int
    T: int
    regret: np.ndarray
    experiment_regret: np.ndarray
    commitment_regret: np.ndarray

    def _summary(self) -> list[str]:
        return [f"N={self.N}", f"T={self.T}", *super()._summary()]


def run_seeds(run: Callable[[int], object], seeds: Iterable[int], desc: str = "", progress: bool = False) -> list:
    """``[run(s) for s in seeds]``, with a progress bar when ``progress`` (text under papermill and in terminals)."""
    return [run(s) for s in tqdm(seeds, desc=desc, disable=not progress, leave=False)]
