"""Tidy tables of many simulations, for the notebooks: one row per (case, policy) or per run.

``run_grid`` runs one task per (case, policy), each a call of :func:`~.simulate.simulate` with all
the seeds, through the grid runner of ``horizonbandits.experiments``: the same backends as the
rising grid (sequential, loky, dask; ``$HB_DASK_ADDRESS`` sends it to a cluster) and the same
resumable on-disk cache (the key covers the problem, the policy, the seeds, ``draws`` and the
package's numerical code). A task returns the pulls and the committed arms; the regret is computed
from them here exactly as ``simulate`` does, so a cached or remote result gives the same numbers.
"""
from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from ..errors import check_choice, check_int
from ..stats import half_slopes, normal_interval, slope  # noqa: F401 (slope, half_slopes: imported from here by notebooks)
from .policies.base import CommitPolicy
from .problem import CommitProblem
from .simulate import CommitResult, simulate


def summarise(result: CommitResult, level: float = 0.95) -> dict:
    """Mean regret with a normal-approximation interval, the mean of each part, the commitment shares."""
    n = result.n_seeds
    mean, half = normal_interval(result.regret, level=level)
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


def run_grid(cases, policies, n_seeds: int, seed: int = 0, draws: str = "batch", keep_runs: bool = False, *,
             backend: str = "sequential", n_jobs: int = 1, address: str | None = None, cache: bool = True,
             cache_dir=None, progress: bool = True):
    """Simulate every policy on every case.

    ``cases``: iterable of dicts with a ``problem`` (CommitProblem) and any labels (schedule, T, c...);
    ``policies``: a dict label -> policy, or a callable ``case -> dict`` when the policy depends on the case
    (e.g. section 7.1's Stage I scale). Returns a DataFrame of summaries (``summarise``) with the labels and a
    ``policy`` column holding the dict key; with ``keep_runs`` also one of runs (regret and parts per run).

    ``backend`` ("sequential", "loky" with ``n_jobs`` processes, or "dask": the scheduler at ``address``
    or a local cluster), ``cache`` (read and write ``cache_dir``, else ``$HB_CACHE_DIR``, else
    ``outputs/cache``) and ``progress`` (a bar over the tasks left to compute, on by default: the text bar in a
    terminal or under papermill, the widget bar in JupyterLab) as in ``experiments.run_grid``. Results do not
    depend on them.
    """
    from ..compute.cache import code_digest, digest
    from ..compute.tasks import Task, fingerprint, run_cached
    n_seeds = check_int("n_seeds", n_seeds, 1)
    seed = check_int("seed", seed, 0)
    check_choice("draws", draws, ("batch", "table"))
    plan = []
    for case in cases:
        if not isinstance(case.get("problem"), CommitProblem):
            raise ValueError(f"cases[{len(plan)}]['problem']={case.get('problem')!r} is not allowed: expected a CommitProblem")
        labels = {k: v for k, v in case.items() if k != "problem"}
        chosen = policies(case) if callable(policies) else policies
        for name, policy in chosen.items():
            if not isinstance(policy, CommitPolicy):
                raise ValueError(f"policies[{name!r}]={policy!r} is not allowed: expected a CommitPolicy such as RAEC()")
            plan.append((labels, case["problem"], name, policy))
    code = code_digest("commit")
    tasks = [Task(key=digest("commit_grid/1", code, fingerprint(problem), fingerprint(policy), n_seeds, seed, draws),
                  fn=_simulate_task, args=(problem, policy, n_seeds, seed, draws),
                  cost=float(n_seeds) * problem.N * problem.K,
                  check=partial(_check_entry, n_seeds=n_seeds, K=problem.K, N=problem.N))
             for _, problem, _, policy in plan]
    outs = run_cached(tasks, backend=backend, n_jobs=n_jobs, address=address, cache=cache, cache_dir=cache_dir,
                      progress=progress, what="commit run_grid")
    rows, runs = [], []
    for (labels, problem, name, policy), out in zip(plan, outs):
        res = commit_result(problem, policy, out["pulls"], out["committed"])
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
