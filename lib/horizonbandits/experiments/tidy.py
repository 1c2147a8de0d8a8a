"""One entry point for the three models, one table shape.

``tidy_grid(problems, policies, horizons, n_seeds, seed, ...)`` runs any of the three models
through its grid (``experiments.run_grid`` for rising instances, ``commit.grid.run_grid`` for
commitment problems, ``commit.portfolio_model.portfolio_grid`` for portfolio problems) with the same
backends, cache and ``$HB_DASK_ADDRESS``, and returns one row per (problem, policy, T, seed index)
with the columns

    model, problem, policy, T, seed_index, regret, root_seed, <the model's own parts>

root_seed is the root whose seed index ``seed_index`` the row ran, so that the model's ``simulate``
with ``seed=root_seed`` reproduces it: for rising instances each instance's own root (see
``experiments.run_grid``), for commitment and portfolio problems ``seed`` itself.

model is "rising", "commitment" or "portfolio". The model's parts: rising: optimal_pulls,
optimal_arm, K, wall_time; commitment: N, experiment, commitment, committed; portfolio: N,
experiment, commitment, sampling, loss_per_round, stage1_rounds, x_1..x_K, n_1..n_K, seconds.
The numbers are those of the model's own grid (the same call underneath), so a notebook may use
either.

``problems``: a dict label -> problem, or for the commitment and portfolio models a callable
``T -> problem`` (the problem changes with the horizon, e.g. N = T / 4), labelled by
``problem_label``. A commitment or portfolio problem carries its horizon: with a dict,
``horizons`` must be None.
"""
from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ..rising.instances import RisingInstance

LEADING = ["model", "problem", "policy", "T", "seed_index", "regret"]
MODELS = ("rising", "commitment", "portfolio")


def model_of(problem) -> str:
    """"rising", "commitment" or "portfolio" for a problem object (ValueError otherwise)."""
    if isinstance(problem, RisingInstance):
        return "rising"
    from ..commit.problem import CommitProblem
    if isinstance(problem, CommitProblem):
        return "commitment"
    from ..commit.portfolio_model import PortfolioProblem
    if isinstance(problem, PortfolioProblem):
        return "portfolio"
    raise ValueError(f"problem={problem!r} is not allowed: expected a RisingInstance, a CommitProblem or a PortfolioProblem")


def tidy_grid(problems, policies, horizons=None, n_seeds: int = 1, seed: int = 0, *, backend: str = "sequential",
              n_jobs: int = 1, cache: bool = True, cache_dir=None, address: str | None = None,
              progress: bool = False, problem_label: str = "problem", **options) -> pd.DataFrame:
    """Run ``policies`` on ``problems`` (any one model) and return the tidy table described in the module docstring.

    ``policies``: a dict label -> policy (rising, commitment) or a list of portfolio policies.
    ``options`` go to the model's grid (``chunk_size`` for rising and portfolio, ``draws`` for
    commitment).
    """
    if callable(problems) and not isinstance(problems, Mapping):
        if horizons is None:
            raise ValueError("horizons=None is not allowed with problems given as a function of T: expected horizons")
        made = {int(T): problems(int(T)) for T in horizons}
        model = model_of(next(iter(made.values())))
        if model == "rising":
            raise ValueError("problems given as a function of T are for the commitment and portfolio models; "
                             "pass rising instances as a dict label -> RisingInstance")
        labelled = [(problem_label, p) for p in made.values()]
    else:
        problems = dict(problems)
        if not problems:
            raise ValueError("problems is empty: at least one is needed")
        models = {model_of(p) for p in problems.values()}
        if len(models) > 1:
            raise ValueError(f"problems mixes the models {sorted(models)}: run one model per grid")
        model = models.pop()
        if model != "rising" and horizons is not None:
            raise ValueError("horizons is not allowed with a dict of commitment or portfolio problems: each carries its "
                             "T; pass a function T -> problem to sweep the horizon")
        labelled = list(problems.items())
    run = dict(backend=backend, n_jobs=n_jobs, cache=cache, cache_dir=cache_dir, address=address, progress=progress)

    if model == "rising":
        from . import run_grid
        df = run_grid(dict(labelled), policies, horizons, n_seeds, seed, **run, **options)
        out = df.rename(columns={"instance": "problem", "seed": "seed_index"})  # root_seed comes with it
    elif model == "commitment":
        from ..commit.grid import run_grid as commit_grid
        cases = [{"problem_label": label, "T": p.T, "N": p.N, "problem": p} for label, p in labelled]
        _, runs = commit_grid(cases, policies, n_seeds, seed, keep_runs=True, **run, **options)
        out = runs.rename(columns={"problem_label": "problem", "run": "seed_index", "experiment_regret": "experiment",
                                   "commitment_regret": "commitment"})
        out = out[["problem", "policy", "T", "seed_index", "regret", "N", "experiment", "commitment", "committed"]]
    else:
        from ..commit.portfolio_model import portfolio_grid
        names = dict(policies) if isinstance(policies, Mapping) else None
        chosen = list(names.values()) if names is not None else list(policies)
        frames = []
        for label, p in labelled:
            df = portfolio_grid(lambda T, p=p: p, [p.T], chosen, n_seeds, seed, **run, **options)
            frames.append(df.assign(problem=label))
        out = pd.concat(frames, ignore_index=True).rename(columns={"s": "seed_index"})
        if names is not None:
            out["policy"] = out["policy"].map({getattr(pol, "label", type(pol).__name__): key for key, pol in names.items()})
    out = out.assign(model=model)
    if model != "rising":
        out["root_seed"] = seed  # these grids run seed indices 0..n_seeds-1 of ``seed`` itself
    rest = [c for c in out.columns if c not in LEADING + ["root_seed"]]
    return out[LEADING + ["root_seed"] + rest].reset_index(drop=True)
