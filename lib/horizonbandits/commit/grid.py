"""The commitment model's grid and its summaries.

``_commitment_grid`` (called through ``experiments.run_grid``, the one public grid) runs one task per
(case, policy), each a call of :func:`~.simulate.simulate` with all the seeds, through the task runner
of ``horizonbandits.compute``: the same backends as the rising grid (sequential, loky, dask;
``$HB_DASK_ADDRESS`` sends it to a cluster) and the same resumable on-disk cache (the key covers the
problem, the policy, the seeds, ``draws`` and the package's numerical code). ``summary_table`` turns
its runs into one row per (case, policy), each the ``summarise`` of that case's runs.
"""
from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from ..errors import check_choice, check_int
from ..stats import normal_interval
from .policies.base import CommitPolicy
from .problem import CommitProblem
from .simulate import CommitResult, simulate


def summarise(runs: pd.DataFrame, level: float = 0.95) -> dict:
    """The runs of one (case, policy) of the commitment grid (rows of ``experiments.run_grid``) in one row.

    policy, N, T, n_seeds; the mean regret with its normal-approximation interval at ``level`` (ci_low, ci_high)
    and its standard error (se = sd / sqrt(n), 0 for one run); the mean of each part (experiment_regret,
    commitment_regret); p_commit_best, the share of runs committing to the g-best arm; commit_arm1..K, the share
    committing to each arm; pulls_arm1..K, the mean pulls per arm; label, the policy's ``label``. It reads the
    columns policy, label, N, T, regret, experiment, commitment, committed, best_g and pulls_1..pulls_K.
    """
    columns = _RunColumns(runs)
    return columns.summarise(np.arange(len(runs)), level)


class _RunColumns:
    """The columns :func:`summarise` reads, taken out of a run table once, so that a row set is summarised with
    numpy alone (``summary_table`` over thousands of (case, policy) pairs spent most of its time building a
    DataFrame per pair)."""

    def __init__(self, runs: pd.DataFrame):
        self.K = sum(1 for c in runs.columns if c.startswith("pulls_"))
        self.regret, self.committed = runs.regret.to_numpy(), runs.committed.to_numpy()
        self.pulls = runs[[f"pulls_{i + 1}" for i in range(self.K)]].to_numpy()
        self.experiment, self.commitment = runs.experiment.to_numpy(), runs.commitment.to_numpy()
        self.first = {c: runs[c].to_numpy() for c in ("policy", "N", "T", "best_g", "label")}

    def summarise(self, rows: np.ndarray, level: float) -> dict:
        """:func:`summarise` of the runs at positions ``rows`` (in that order)."""
        at = rows[0]
        regret, committed, K = self.regret[rows], self.committed[rows], self.K
        n = regret.size
        mean, half = normal_interval(regret, level=level)
        out = dict(policy=self.first["policy"][at], N=int(self.first["N"][at]), T=int(self.first["T"][at]),
                   n_seeds=n, mean_regret=mean, ci_low=mean - half, ci_high=mean + half,
                   se=regret.std(ddof=1) / np.sqrt(n) if n > 1 else 0.0,
                   experiment_regret=self.experiment[rows].mean(), commitment_regret=self.commitment[rows].mean(),
                   p_commit_best=float(np.mean(committed == int(self.first["best_g"][at]))))
        for i, share in enumerate(np.bincount(committed, minlength=K) / n):
            out[f"commit_arm{i + 1}"] = share
        for i, mean_pulls in enumerate(self.pulls[rows].mean(axis=0)):
            out[f"pulls_arm{i + 1}"] = mean_pulls
        out["label"] = self.first["label"][at]
        return out


def summary_table(runs: pd.DataFrame, labels=None, level: float = 0.95) -> pd.DataFrame:
    """One row per (case, policy) of a commitment table of ``experiments.run_grid``: the case's labels, then
    :func:`summarise` of its runs (mean regret with a normal interval and its standard error, the parts' means,
    the commitment shares, the mean pulls per arm, the policy's ``label``); rows in the order of the table.

    ``labels``: the case's label columns, in the order the summary shows them (default:
    ``runs.attrs["case_labels"]``, which ``run_grid`` sets; pass them after an operation that drops ``attrs``).
    A case is the set of rows with the same ``case`` (its position in the grid's list) and policy.
    """
    if "model" in runs and set(runs.model) != {"commitment"}:
        raise ValueError(f"runs holds the models {sorted(set(runs.model))}: summary_table is for the commitment model")
    labels = [c for c in (runs.attrs.get("case_labels", []) if labels is None else labels) if c != "policy"]
    # each (case, policy)'s rows in the table's order, the pairs in the order they first appear (groupby's sort=False)
    group = runs.groupby(["case", "policy"], sort=False, observed=True, dropna=False).ngroup().to_numpy()
    order = np.argsort(group, kind="stable")
    bounds = np.flatnonzero(np.diff(group[order])) + 1
    columns = _RunColumns(runs)
    label_values = {c: runs[c].to_numpy() for c in labels}
    rows = []
    for members in np.split(order, bounds) if len(order) else []:
        rows.append({**{c: values[members[0]] for c, values in label_values.items()},
                     **columns.summarise(members, level)})
    return pd.DataFrame(rows)


def _commitment_grid(cases, policies, n_seeds: int, seed: int = 0, draws: str = "batch", *,
                     backend: str = "sequential", n_jobs: int = 1, address: str | None = None, cache: bool = True,
                     cache_dir=None, progress: bool = True) -> pd.DataFrame:
    """The commitment model's grid (called through ``experiments.run_grid``): one row per (case, policy, run).

    ``cases``: dicts with a ``problem`` (CommitProblem) and any labels (schedule, T, c...); ``policies``: a
    dict label -> policy, or a callable ``case -> dict`` when the policy depends on the case (e.g. section
    7.1's Stage I scale). One task per (case, policy), each a call of :func:`~.simulate.simulate` with all
    the seeds; the regret is computed from the returned pulls and committed arms exactly as ``simulate``
    does, so a cached or remote result gives the same numbers.

    Columns: the case's labels, case (its position in ``cases``), policy (the dict key), seed_index, regret,
    N, T, experiment, commitment, committed, best_g, label (the policy's ``label``), pulls_1..pulls_K;
    ``attrs["case_labels"]`` names the label columns. ``backend``, ``cache`` and ``progress`` as in ``experiments.run_grid``.
    """
    from ..compute.cache import code_digest, digest
    from ..compute.tasks import Task, fingerprint, run_cached
    n_seeds = check_int("n_seeds", n_seeds, 1)
    seed = check_int("seed", seed, 0)
    check_choice("draws", draws, ("batch", "table"))
    plan = []
    for i, case in enumerate(cases):
        if not isinstance(case.get("problem"), CommitProblem):
            raise ValueError(f"cases[{i}]['problem']={case.get('problem')!r} is not allowed: expected a CommitProblem")
        labels = {k: v for k, v in case.items() if k != "problem"}
        chosen = policies(case) if callable(policies) else policies
        for name, policy in chosen.items():
            if not isinstance(policy, CommitPolicy):
                raise ValueError(f"policies[{name!r}]={policy!r} is not allowed: expected a CommitPolicy such as RAEC()")
            plan.append((i, labels, case["problem"], name, policy))
    code = code_digest("commit")
    tasks = [Task(key=digest("commit_grid/1", code, fingerprint(problem), fingerprint(policy), n_seeds, seed, draws),
                  fn=_simulate_task, args=(problem, policy, n_seeds, seed, draws),
                  cost=float(n_seeds) * problem.N * problem.K,
                  check=partial(_check_entry, n_seeds=n_seeds, K=problem.K, N=problem.N))
             for _, _, problem, _, policy in plan]
    outs = run_cached(tasks, backend=backend, n_jobs=n_jobs, address=address, cache=cache, cache_dir=cache_dir,
                      progress=progress, what="commit run_grid")
    done, label_names = [], []
    for (case, labels, problem, name, policy), out in zip(plan, outs):
        done.append((case, labels, name, commit_result(problem, policy, out["pulls"], out["committed"])))
        label_names += [k for k in labels if k not in label_names]
    table = _runs_table(done)
    table.attrs["case_labels"] = label_names
    return table


# A label's Python type and the column dtype pandas gives it on each task's frame, and so on their concatenation
_LABEL_DTYPES = {int: np.int64, float: np.float64, str: object, bool: bool}  # str: pandas infers its string dtype


def _runs_table(done) -> pd.DataFrame:
    """The grid's rows, one per (task, run), from ``done``: (case index, labels, policy name, CommitResult) per task.

    The table is the concatenation of one DataFrame per task (labels and scalars broadcast over its runs). When
    every task has the same label names, each label of one plain type (int, float, str, bool), the same K and
    the same array dtypes, the columns are built with numpy directly, with the dtypes that concatenation gives
    (lower_bound_construction's paper grid, 5,250 tasks and 7.9 M rows: 9.5 -> 5.5 CPU-s, 2026-12-08);
    otherwise, frame by frame. tests/commit/test_grid_table.py holds both ways equal.
    """
    if not done:
        return pd.concat([], ignore_index=True)  # pandas' own error for an empty grid, as before
    fast = _runs_table_columns(done)
    return fast if fast is not None else _runs_table_frames(done)


def _runs_table_frames(done) -> pd.DataFrame:
    frames = []
    for case, labels, name, res in done:
        frame = pd.DataFrame({**labels, "case": case, "policy": name, "seed_index": np.arange(res.n_seeds),
                              "regret": res.regret, "N": res.N, "T": res.T, "experiment": res.experiment_regret,
                              "commitment": res.commitment_regret, "committed": res.committed, "best_g": res.best_g,
                              "label": res.policy})
        for i in range(res.pulls.shape[1]):
            frame[f"pulls_{i + 1}"] = res.pulls[:, i]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _runs_table_columns(done) -> pd.DataFrame | None:
    """:func:`_runs_table_frames`' table built column by column, or None where the two might differ in a dtype."""
    keys = tuple(done[0][1])
    K = done[0][3].pulls.shape[1]
    arrays = ("regret", "experiment_regret", "commitment_regret", "committed", "pulls")
    dtypes = {a: getattr(done[0][3], a).dtype for a in arrays}
    for _, labels, name, res in done:
        if (tuple(labels) != keys or res.pulls.shape[1] != K or type(name) is not str or type(res.policy) is not str
                or any(getattr(res, a).dtype != dtypes[a] for a in arrays)
                or any(type(getattr(res, a)) not in (int, np.int64) for a in ("N", "T", "best_g"))):
            return None
    label_dtype = {}
    for key in keys:
        kinds = {type(labels[key]) for _, labels, _, _ in done}
        if len(kinds) != 1 or next(iter(kinds)) not in _LABEL_DTYPES:
            return None
        label_dtype[key] = _LABEL_DTYPES[kinds.pop()]
    counts = np.array([res.n_seeds for *_, res in done])

    def each_run(values, dtype):
        return np.repeat(np.array(values, dtype=dtype), counts)

    def joined(field, column=None):
        return np.concatenate([getattr(res, field) if column is None else getattr(res, field)[:, column]
                               for *_, res in done])

    columns = {key: each_run([labels[key] for _, labels, _, _ in done], label_dtype[key]) for key in keys}
    columns |= {"case": each_run([case for case, *_ in done], np.int64),
                "policy": each_run([name for _, _, name, _ in done], object),
                "seed_index": np.concatenate([np.arange(n) for n in counts]), "regret": joined("regret"),
                "N": each_run([res.N for *_, res in done], np.int64), "T": each_run([res.T for *_, res in done], np.int64),
                "experiment": joined("experiment_regret"), "commitment": joined("commitment_regret"),
                "committed": joined("committed"), "best_g": each_run([res.best_g for *_, res in done], np.int64),
                "label": each_run([res.policy for *_, res in done], object)}
    columns |= {f"pulls_{i + 1}": joined("pulls", i) for i in range(K)}
    return pd.DataFrame(columns)


def _simulate_task(problem: CommitProblem, policy: CommitPolicy, n_seeds: int, seed: int, draws: str) -> dict:
    res = simulate(problem, policy, n_seeds=n_seeds, seed=seed, draws=draws)
    return {"pulls": res.pulls, "committed": res.committed}


def commit_result(problem: CommitProblem, policy: CommitPolicy, pulls, committed) -> CommitResult:
    """The CommitResult of ``simulate`` rebuilt from its pulls and committed arms (same arithmetic)."""
    experiment, commitment = problem.regret_parts(pulls, committed)
    return CommitResult(policy=policy.label, N=problem.N, T=problem.T, regret=experiment + commitment,
                        experiment_regret=experiment, commitment_regret=commitment, committed=committed,
                        pulls=pulls, best_f=problem.best_f, best_g=problem.best_g)


def _check_entry(arrays: dict, n_seeds: int, K: int, N: int) -> str | None:
    """Why a cached (pulls, committed) cannot be a run of this problem, or None."""
    if set(arrays) != {"pulls", "committed"}:
        return f"arrays {sorted(arrays)} instead of ['committed', 'pulls']"
    pulls, committed = arrays["pulls"], arrays["committed"]
    if pulls.shape != (n_seeds, K) or pulls.dtype.kind not in "iu" or committed.shape != (n_seeds,) \
            or committed.dtype.kind not in "iu":
        return (f"pulls {pulls.shape} {pulls.dtype} / committed {committed.shape} {committed.dtype}, "
                f"expected ({n_seeds}, {K}) / ({n_seeds},) integers")
    if pulls.min(initial=0) < 0 or not np.all(pulls.sum(axis=1) == N) or committed.min(initial=0) < 0 \
            or committed.max(initial=0) >= K:
        return "pulls or committed arms out of range"
    return None
