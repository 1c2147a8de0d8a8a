"""Tidy tables of many simulations, for the notebooks: one row per (case, policy) or per run."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.stats import norm

from .simulate import CommitResult, simulate


def summarise(result: CommitResult, level: float = 0.95) -> dict:
    """Mean regret with a normal-approximation interval, the mean of each part, the commitment shares."""
    n = result.n_seeds
    z = norm.ppf(0.5 + level / 2)
    mean = result.regret.mean()
    half = z * result.regret.std(ddof=1) / math.sqrt(n) if n > 1 else 0.0
    out = dict(policy=result.policy, N=result.N, T=result.T, n_seeds=n, mean_regret=mean,
               ci_low=mean - half, ci_high=mean + half,
               experiment_regret=result.experiment_regret.mean(),
               commitment_regret=result.commitment_regret.mean(),
               p_commit_best=float(np.mean(result.committed == result.best_g)))
    for i, share in enumerate(result.commit_rate()):
        out[f"commit_arm{i + 1}"] = share
    for i, pulls in enumerate(result.pulls.mean(axis=0)):
        out[f"pulls_arm{i + 1}"] = pulls
    return out


def run_grid(cases, policies, n_seeds: int, seed: int = 0, draws: str = "batch", keep_runs: bool = False):
    """Simulate every policy on every case.

    ``cases``: iterable of dicts with a ``problem`` (CommitProblem) and any labels (schedule, T, c...);
    ``policies``: a dict label -> policy, or a callable ``case -> dict`` when the policy depends on the case
    (e.g. section 7.1's Stage I scale). Returns a DataFrame of summaries (``summarise``) with the labels and a
    ``policy`` column holding the dict key; with ``keep_runs`` also one of runs (regret and parts per run).
    """
    rows, runs = [], []
    for case in cases:
        labels = {k: v for k, v in case.items() if k != "problem"}
        chosen = policies(case) if callable(policies) else policies
        for name, policy in chosen.items():
            res = simulate(case["problem"], policy, n_seeds=n_seeds, seed=seed, draws=draws)
            row = {**labels, **summarise(res)}
            row["policy"] = name
            row["label"] = res.policy
            rows.append(row)
            if keep_runs:
                runs.append(pd.DataFrame({**labels, "policy": name, "run": np.arange(res.n_seeds),
                                          "regret": res.regret, "experiment_regret": res.experiment_regret,
                                          "commitment_regret": res.commitment_regret, "committed": res.committed}))
    table = pd.DataFrame(rows)
    if keep_runs:
        return table, pd.concat(runs, ignore_index=True)
    return table


def slope(x, y) -> float:
    """Least-squares slope of log y on log x (the empirical scaling exponent)."""
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    return float(np.polyfit(lx, ly, 1)[0])


def half_slopes(x, y) -> tuple[float, float]:
    """Slopes over the lower and the upper half of the grid (the middle point belongs to both when odd)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    n = x.size
    mid = n // 2
    low = slice(0, mid + 1) if n % 2 else slice(0, mid)
    high = slice(mid, n)
    return slope(x[low], y[low]), slope(x[high], y[high])
