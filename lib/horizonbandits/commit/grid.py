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
    first = runs.iloc[0]
    K = sum(1 for c in runs.columns if c.startswith("pulls_"))
    regret, committed = runs.regret.to_numpy(), runs.committed.to_numpy()
    pulls = runs[[f"pulls_{i + 1}" for i in range(K)]].to_numpy()
    n = regret.size
    mean, half = normal_interval(regret, level=level)
    out = dict(policy=first["policy"], N=int(first["N"]), T=int(first["T"]), n_seeds=n, mean_regret=mean,
               ci_low=mean - half, ci_high=mean + half, se=regret.std(ddof=1) / np.sqrt(n) if n > 1 else 0.0,
               experiment_regret=runs.experiment.to_numpy().mean(),
               commitment_regret=runs.commitment.to_numpy().mean(),
               p_commit_best=float(np.mean(committed == int(first["best_g"]))))
    for i, share in enumerate(np.bincount(committed, minlength=K) / n):
        out[f"commit_arm{i + 1}"] = share
    for i, mean_pulls in enumerate(pulls.mean(axis=0)):
        out[f"pulls_arm{i + 1}"] = mean_pulls
    out["label"] = first["label"]
    return out


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
    frames, label_names = [], []
    for (case, labels, problem, name, policy), out in zip(plan, outs):
        res = commit_result(problem, policy, out["pulls"], out["committed"])
        label_names += [k for k in labels if k not in label_names]
        frame = pd.DataFrame({**labels, "case": case, "policy": name, "seed_index": np.arange(res.n_seeds), "regret": res.regret,
                              "N": res.N, "T": res.T, "experiment": res.experiment_regret,
                              "commitment": res.commitment_regret, "committed": res.committed, "best_g": res.best_g,
                              "label": res.policy})
        for i in range(problem.K):
            frame[f"pulls_{i + 1}"] = res.pulls[:, i]
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    table.attrs["case_labels"] = label_names
    return table


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
    labels = list(runs.attrs.get("case_labels", []) if labels is None else labels)
    rows = []
    for _, g in runs.groupby(["case", "policy"], sort=False, observed=True, dropna=False):
        first = g.iloc[0]
        rows.append({**{c: first[c] for c in labels if c != "policy"}, **summarise(g, level)})
    return pd.DataFrame(rows)


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
