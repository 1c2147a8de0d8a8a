"""Compile every numba kernel into the on-disk cache once: ``hb warmup`` (``make install`` runs it).

Each registered policy (the rising ``POLICIES``, the commitment ``COMMIT_POLICIES`` and the portfolio
``PORTFOLIO_POLICIES``) runs once, with its default hyperparameters, on a tiny instance of its model, by
the same path the grids take. The kernels it calls are compiled and written to the cache
(``horizonbandits._numba_cache``), or loaded from it when an earlier run (in any checkout of the same
source) compiled them. The numbers of these runs are thrown away.

Compiles are counted with numba's event API (``numba:compile`` fires only for a real compile, never for a
kernel loaded from the cache), so :func:`warm_up` reports how many kernels each model had to compile.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

MODELS = ("rising", "commitment", "portfolio")


@dataclass
class WarmupReport:
    model: str
    policies: int
    compiled: int
    seconds: float

    def line(self) -> str:
        done = "all loaded from the cache" if self.compiled == 0 else f"{self.compiled} kernel(s) compiled"
        return f"{self.model}: {self.policies} policies, {done}, {self.seconds:.1f} s"


class _CompileCounter:
    count = 0


@contextmanager
def count_compiles():
    """``with count_compiles() as c: ...`` then ``c.count``: kernels numba compiled (not cache loads) inside."""
    from .._numba_cache import watch_compiles
    counter = _CompileCounter()

    def seen():
        counter.count += 1

    with watch_compiles(seen):
        yield counter


def _rising(names=None) -> int:
    from ..experiments.rising_grid import plan_runs, run_task
    from ..rising.instances import ltf
    from ..rising.policies import POLICIES
    from ..rising.simulate import simulate
    names = sorted(POLICIES) if names is None else list(names)
    insts = [ltf([0.02, 0.01], [0.6, 0.8], T_max=200), ltf([0.02, 0.01], [0.6, 0.8], T_max=200, noise="bernoulli")]
    for name in names:
        policy = POLICIES[name]()
        for inst in insts:
            simulate(inst, policy, T=100, n_seeds=1, seed=0)
            runs = plan_runs({name: policy}, [50, 100])
            run_task(inst, {name: policy}, runs, 0, 0, 1)  # the grid's path (checkpoints, the warm-up call)
    return len(names)


def _commitment(names=None) -> int:
    from ..commit.policies import COMMIT_POLICIES
    from ..commit.problem import CommitProblem
    from ..commit.simulate import simulate
    names = sorted(COMMIT_POLICIES) if names is None else list(names)
    problem = CommitProblem.bernoulli([0.6, 0.5, 0.4], [0.3, 0.5, 0.7], N=60, T=200)
    for name in names:
        policy = COMMIT_POLICIES[name]()
        for draws in ("batch", "table"):
            simulate(problem, policy, n_seeds=2, seed=0, draws=draws)
    return len(names)


def _portfolio(names=None) -> int:
    from ..commit import PORTFOLIO_POLICIES
    from ..commit.portfolio_instances import section73
    from ..commit.portfolio_model import simulate
    names = sorted(PORTFOLIO_POLICIES) if names is None else list(names)
    problem = section73(40)
    for name in names:
        simulate(problem, PORTFOLIO_POLICIES[name](), n_seeds=1, seed=0)
    return len(names)


_WARMERS = {"rising": _rising, "commitment": _commitment, "portfolio": _portfolio}


def warm_up(models=MODELS, echo=print) -> list[WarmupReport]:
    """Run every policy of ``models`` once on a tiny instance; one report (and ``echo`` line) per model."""
    reports = []
    with np.errstate(all="ignore"):
        for model in models:
            start = time.perf_counter()
            with count_compiles() as compiles:
                n = _WARMERS[model]()
            report = WarmupReport(model, n, compiles.count, time.perf_counter() - start)
            reports.append(report)
            if echo is not None:
                echo(report.line())
    return reports
