"""The one public grid: ``run_grid`` runs any of the three models and returns one table shape.

``run_grid(problems, policies, horizons, n_seeds, seed, ...)`` runs every policy on every problem for
seed indices 0..n_seeds-1 (at every horizon, for the rising model) through the model's own grid (the
rising grid of ``experiments.rising_grid``, the commitment grid of ``commit.grid``, the portfolio grid
of ``commit.portfolio_model``), with the same backends, the same on-disk cache and ``$HB_DASK_ADDRESS``,
and returns one row per (problem, policy, T, seed index) with the columns

    model, problem, policy, T, seed_index, regret, root_seed, <the model's own columns>

``root_seed`` is the root whose seed index ``seed_index`` the row ran, so the model's ``simulate``
with ``seed=root_seed`` reproduces it: each rising instance's own root (``seeds.grid_instance_seed``),
``seed`` itself for commitment and portfolio problems.

The model's own columns:

- rising: optimal_pulls, optimal_arm, K, wall_time;
- commitment: the case's labels, case (its position), N, experiment, commitment, committed, best_g, label (the policy's
  ``label``), pulls_1..pulls_K; ``commit.grid.summary_table`` turns the runs into one row per (case,
  policy) with means and intervals;
- portfolio: N, experiment, commitment, sampling, loss_per_round, stage1_rounds, x_1..x_K, n_1..n_K, seconds.

``problems``:

- a dict label -> problem (a ``RisingInstance``, a ``CommitProblem`` or a ``PortfolioProblem``; one model
  per grid), or a sequence of rising instances (labelled 0, 1, ...);
- for the commitment and portfolio models, a callable ``T -> problem`` with ``horizons`` (the problem
  changes with the horizon, e.g. N = T / 4), labelled ``problem_label``;
- for the commitment model, a list of cases, dicts ``{"problem": CommitProblem, **labels}``: each label
  becomes a column and ``policies`` may be a callable ``case -> dict`` (a policy that depends on the case,
  e.g. section 7.1's Stage-I scale). The ``problem`` column then joins the labels other than T and N.

A commitment or portfolio problem carries its horizon: with a dict or a list of cases, ``horizons`` must
be None. ``backend`` and ``n_jobs`` default to the model's own choice: loky on every core for the rising
model (its tasks are long), in process for the commitment and portfolio models (theirs are short).
"""
from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ..rising.instances import RisingInstance
from ..timing import charged

TIDY_COLUMNS = ["model", "problem", "policy", "T", "seed_index", "regret"]  # the columns every table starts with
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


def _is_case_list(problems) -> bool:
    return isinstance(problems, (list, tuple)) and bool(problems) and all(isinstance(c, Mapping) for c in problems)


def case_name(labels: Mapping, default: str = "problem") -> str:
    """The ``problem`` label of a case: its labels other than T and N joined, e.g. "schedule=sqrt, c=2"."""
    parts = [f"{k}={v}" for k, v in labels.items() if k not in ("T", "N")]
    return ", ".join(parts) or default


@charged("compute")
def run_grid(problems, policies, horizons=None, n_seeds: int = 1, seed: int = 0, *, backend: str | None = None,
             n_jobs: int | None = None, cache: bool = True, cache_dir=None, address: str | None = None,
             progress: bool = True, problem_label: str = "problem", **options) -> pd.DataFrame:
    """Run ``policies`` on ``problems`` (any one model) and return the tidy table of the module docstring.

    ``policies``: a dict label -> policy, a sequence of policies (labelled by their ``label``), or for a list
    of commitment cases a callable ``case -> dict``. ``options`` go to the model's grid: ``chunk_size``
    (seeds per task; rising and portfolio) or ``draws`` ("batch" or "table"; commitment). The numbers do not
    depend on ``backend``, ``n_jobs``, ``chunk_size``, ``cache`` or ``progress``.
    """
    run = dict(cache=cache, cache_dir=cache_dir, address=address, progress=progress)
    if _is_case_list(problems):
        if horizons is not None:
            raise ValueError("horizons is not allowed with a list of commitment cases: each case's problem carries its T")
        return _commitment(list(problems), policies, n_seeds, seed, backend, n_jobs, run, options)
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
        if isinstance(problems, Mapping):
            problems = dict(problems)
        else:
            problems = list(problems)
            if problems and all(isinstance(p, RisingInstance) for p in problems):
                problems = dict(enumerate(problems))
            elif problems:
                raise ValueError("problems as a sequence is allowed for rising instances and commitment cases only: "
                                 "pass a dict label -> problem")
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

    if model == "rising":
        from .rising_grid import _rising_grid
        if horizons is None:
            raise ValueError("horizons=None is not allowed for rising instances: expected a horizon or a list of them")
        run.update(backend="loky" if backend is None else backend, n_jobs=-1 if n_jobs is None else n_jobs)
        return _rising_grid(dict(labelled), policies, horizons, n_seeds, seed, **run, **options)
    if model == "commitment":
        cases = [{"problem": p, "problem_label": label} for label, p in labelled]
        return _commitment(cases, policies, n_seeds, seed, backend, n_jobs, run, options)
    return _portfolio(labelled, policies, n_seeds, seed, backend, n_jobs, run, options)


def _commitment(cases, policies, n_seeds, seed, backend, n_jobs, run, options) -> pd.DataFrame:
    from ..commit.grid import _commitment_grid
    run.update(backend="sequential" if backend is None else backend, n_jobs=1 if n_jobs is None else n_jobs)
    out = _commitment_grid(cases, policies, n_seeds, seed, **run, **options)
    labels = [c for c in out.columns if c in out.attrs.get("case_labels", ())]
    named = [c for c in labels if c != "problem_label"]
    if "problem_label" in labels:
        out = out.rename(columns={"problem_label": "problem"})
    elif named:
        # a case's labels are the same on each of its rows: one name per case, read from its first row
        firsts = out.drop_duplicates("case")
        names = {case: case_name(dict(zip(named, row)))
                 for case, row in zip(firsts["case"], firsts[named].itertuples(index=False))}
        out.insert(0, "problem", out["case"].map(names).to_numpy())
    else:
        out.insert(0, "problem", "problem")
    out["model"] = "commitment"
    out["root_seed"] = seed  # these grids run seed indices 0..n_seeds-1 of ``seed`` itself
    own = [c for c in named if c not in TIDY_COLUMNS]
    rest = [c for c in out.columns if c not in TIDY_COLUMNS + ["root_seed"] + own]
    table = out[TIDY_COLUMNS + ["root_seed"] + own + rest].reset_index(drop=True)
    table.attrs["case_labels"] = named  # in the cases' order, T and N included: summary_table's columns
    return table


def _portfolio(labelled, policies, n_seeds, seed, backend, n_jobs, run, options) -> pd.DataFrame:
    from ..commit.portfolio_model import _portfolio_grid
    names = dict(policies) if isinstance(policies, Mapping) else None
    chosen = list(names.values()) if names is not None else list(policies)
    n_jobs = 1 if n_jobs is None else n_jobs
    out = _portfolio_grid([p for _, p in labelled], chosen, n_seeds, seed, n_jobs=n_jobs, backend=backend, **run,
                          **options)
    out.insert(0, "problem", [label for label, _ in labelled for _ in range(len(chosen) * n_seeds)])
    out = out.rename(columns={"s": "seed_index"})
    if names is not None:
        out["policy"] = out["policy"].map({getattr(pol, "label", type(pol).__name__): key for key, pol in names.items()})
    out["model"] = "portfolio"
    out["root_seed"] = seed
    rest = [c for c in out.columns if c not in TIDY_COLUMNS + ["root_seed"]]
    return out[TIDY_COLUMNS + ["root_seed"] + rest].reset_index(drop=True)
