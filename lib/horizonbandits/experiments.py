"""Grid runner: instances x policies x horizons x seeds -> one tidy table, cached on disk.

``run_grid`` runs every policy on every instance for ``n_seeds`` seeds and returns one row per
(instance, policy, T, seed) with the pseudo-regret, the pulls of the horizon-T optimal arm and the
wall time of the run that produced the row.

How the work is organised (and why it is fast):

- one task per (instance, chunk of seeds); a task draws each seed's reward table once, to the
  largest horizon, and every policy and horizon of the grid reads that same table (common random
  numbers; the table of a smaller T is a prefix of the larger one);
- a horizon-aware policy (``uses_horizon``) runs once per T; a horizon-agnostic one runs once to
  the largest T and its pull counts are read off at every horizon of the grid;
- tasks run on joblib's loky processes or on a dask.distributed cluster; each seed's numbers
  depend only on (seed, instance, seed index), never on the chunking or the number of workers.

Each instance gets its own noise seed, derived from ``seed`` and a digest of its mean table
(``instance_seed``), so two instances never share noise streams and an instance keeps its seed
whatever else is in the grid.

Cache: one ``.npz`` per (instance, policy, run, chunk) under ``outputs/cache/`` whose name is a
hash of everything that determines the numbers: the mean table, names and noise model of the
instance, the policy's class and hyperparameters, the horizon(s) of the run, the seed and seed
indices, and the source code of the whole ``horizonbandits`` package (a code change invalidates
everything). Files are written atomically as results arrive, so an interrupted run resumes where
it stopped and a rerun is instant.
"""
from __future__ import annotations

import hashlib
import io
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from ._numba_cache import source_digest
from .errors import check_choice, check_int, check_real
from .outputs import REPO_ROOT, atomic_write
from .rising.instances import RisingInstance
from .rising.observations import draw_observations, policy_stream_seed
from .rising.oracle import optimal_arm
from .rising.policies.base import POLICIES, RisingPolicy, make_policy

PACKAGE_DIR = Path(__file__).resolve().parent
BACKENDS = ("loky", "dask", "sequential")
COLUMNS = ["instance", "policy", "T", "seed", "regret", "optimal_pulls", "optimal_arm", "K", "wall_time"]


# --------------------------------------------------------------------------------------------
# Policies by name
# --------------------------------------------------------------------------------------------

def make_policies(names, params: Mapping | None = None, sigma: float | None = None) -> dict[str, RisingPolicy]:
    """``{name: POLICIES[name](**params[name])}`` in the given order.

    ``sigma`` (when given) is passed to every policy that has a ``sigma`` hyperparameter, for
    experiments where the policies are told the environment's noise level (Table 2).
    """
    names = [names] if isinstance(names, str) else list(names)
    params = dict(params or {})
    unknown = sorted(set(params) - set(names))
    if unknown:
        raise ValueError(f"policy_params has keys {unknown!r} that are not in policies={names!r}")
    out = {}
    for name in names:
        if name not in POLICIES:
            raise ValueError(f"policy={name!r} is not allowed: expected one of {', '.join(sorted(POLICIES))}")
        kwargs = dict(params.get(name, {}))
        if sigma is not None and "sigma" in POLICIES[name].__dataclass_fields__:
            kwargs["sigma"] = check_real("sigma", sigma, 0.0)
        out[name] = make_policy(name, **kwargs)
    return out


INSTANCE_FAMILIES = ("ltf", "concave")


def instance_set(family: str, n_instances: int, seed: int = 0, H: int = 100_000,
                 noise: float | str = 0.01, **options) -> dict[str, RisingInstance]:
    """The random instances of appendix B.1 (``"ltf"``: B.1.1 via ``ltf_random``; ``"concave"``: B.1.2 via
    ``concave_random``), labelled "ltf 000", "ltf 001", ...

    Instance j is drawn from its own generator ``default_rng(SeedSequence(seed, spawn_key=(j,)))``,
    so the first n instances are the same whatever ``n_instances`` is (a smoke run looks at the
    first instances of the paper run) and every notebook that asks for the same set gets the same
    instances (and shares their cached runs). H is the reference horizon: the LTF saturation times
    are drawn in [0.05 H, H], the concave curves reach L at H, and the mean tables stop at H.
    ``options`` go to the generator (``ltf_random`` or ``concave_random``), e.g. ``challenger_blend``.
    """
    from .rising.generators import concave_random
    from .rising.instances import ltf_random
    check_choice("family", family, INSTANCE_FAMILIES)
    n_instances = check_int("n_instances", n_instances, 1)
    seed = check_int("seed", seed, 0)
    H = check_int("H", H, 100)
    out = {}
    for j in range(n_instances):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(j,)))
        if family == "ltf":
            out[f"ltf {j:03d}"] = ltf_random(rng, T_ref=H, noise=noise, **options)
        else:
            out[f"concave {j:03d}"] = concave_random(rng, H=H, noise=noise, **options)
    return out


# --------------------------------------------------------------------------------------------
# Hashing
# --------------------------------------------------------------------------------------------

def _digest(*parts) -> str:
    h = hashlib.blake2b(digest_size=20)
    for part in parts:
        data = part if isinstance(part, bytes) else repr(part).encode()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def code_digest() -> str:
    """Hash of every .py file of the installed ``horizonbandits`` package (paths and contents)."""
    return _code_digest(tuple(sorted((str(p.relative_to(PACKAGE_DIR)), p.stat().st_mtime_ns, p.stat().st_size)
                                     for p in PACKAGE_DIR.rglob("*.py"))))


@lru_cache(maxsize=8)
def _code_digest(listing) -> str:
    # Keyed on (path, mtime, size) so that repeated calls are free and an edited file is re-read;
    # the hash itself is the one that also names the numba cache folder.
    return source_digest(PACKAGE_DIR)


def instance_digest(inst: RisingInstance) -> str:
    """Hash of the mean table and the names (not the noise model)."""
    return _digest(inst.means.shape, inst.means.tobytes(), inst.names)


def instance_seed(seed: int, inst: RisingInstance, digest: str | None = None) -> int:
    """The noise seed of an instance: SeedSequence(seed, spawn_key=<two 32-bit words of its digest>)."""
    digest = instance_digest(inst) if digest is None else digest
    words = (int(digest[0:8], 16), int(digest[8:16], 16))
    return int(np.random.SeedSequence(seed, spawn_key=words).generate_state(1, np.uint64)[0] >> np.uint64(1))


def policy_identity(policy: RisingPolicy) -> str:
    return f"{type(policy).__module__}.{type(policy).__qualname__}:{policy!r}"


# --------------------------------------------------------------------------------------------
# Runs and tasks
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Run:
    """One kernel call per seed: ``policy`` to round ``T_run``, pull counts read at ``checkpoints``."""

    policy: str          # label in the grid
    T_run: int
    checkpoints: tuple


def plan_runs(policies: Mapping[str, RisingPolicy], horizons) -> list[Run]:
    """Horizon-aware policies: one run per T. Horizon-agnostic: one run to max T read off at every T."""
    runs = []
    for label, policy in policies.items():
        if policy.uses_horizon:
            runs += [Run(label, T, (T,)) for T in horizons]
        else:
            runs.append(Run(label, max(horizons), tuple(horizons)))
    return runs


def run_task(inst: RisingInstance, policies: dict, runs: list[Run], seed: int, s0: int, s1: int):
    """Run every ``run`` for seed indices s0..s1-1 on one instance, one reward table per seed.

    Returns {run: (pulls (n_checkpoints, n_seeds, K) int64, wall (n_seeds,) seconds)}.
    """
    T_table = max(r.T_run for r in runs)
    out = {r: (np.zeros((len(r.checkpoints), s1 - s0, inst.K), dtype=np.int64), np.zeros(s1 - s0)) for r in runs}
    empty = np.empty(0, dtype=np.int64)
    for j, s in enumerate(range(s0, s1)):
        obs = draw_observations(inst, T_table, seed, s)
        stream = policy_stream_seed(seed, s)
        for r in runs:
            _warm_up(policies[r.policy], obs, r.T_run, stream)
            start = time.perf_counter()
            counts = policies[r.policy].run_kernel(obs, r.T_run, np.array(r.checkpoints, dtype=np.int64), empty, stream)
            out[r][1][j] = time.perf_counter() - start
            out[r][0][:, j, :] = counts
    return out


_WARM: set = set()


def _warm_up(policy: RisingPolicy, obs, T: int, stream: int) -> None:
    """Load (or compile) a policy's kernel once per process, so that the first timed run is not charged for it."""
    if type(policy) not in _WARM:
        T_small = min(T, 1000)
        policy.run_kernel(obs, T_small, np.array([T_small], dtype=np.int64), np.empty(0, dtype=np.int64), stream)
        _WARM.add(type(policy))


@dataclass
class _Task:
    key: object          # instance key
    chunk: tuple         # (s0, s1)
    runs: list           # missing runs
    cost: float


class _Cache:
    def __init__(self, folder: Path | None):
        self.folder = folder

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.npz"

    def load(self, key: str):
        if self.folder is None:
            return None
        path = self.path(key)
        if not path.exists():
            return None
        try:
            with np.load(path) as data:
                return data["pulls"], data["wall"]
        except (OSError, ValueError, KeyError, EOFError):
            return None  # unreadable file: recompute it

    def save(self, key: str, pulls: np.ndarray, wall: np.ndarray) -> None:
        if self.folder is None:
            return
        buf = io.BytesIO()
        np.savez(buf, pulls=pulls, wall=wall)

        def write(tmp):
            with open(tmp, "wb") as fh:
                fh.write(buf.getvalue())
        atomic_write(self.path(key), write)


def default_cache_dir() -> Path:
    """``$HB_CACHE_DIR`` if set, else ``<repo>/outputs/cache``."""
    env = os.environ.get("HB_CACHE_DIR")
    return Path(env) if env else REPO_ROOT / "outputs" / "cache"


def _as_mapping(items, what: str, label) -> dict:
    if isinstance(items, Mapping):
        out = dict(items)
    else:
        items = list(items)
        out = {label(i, x): x for i, x in enumerate(items)}
        if len(out) != len(items):
            raise ValueError(f"{what} have duplicate labels {[label(i, x) for i, x in enumerate(items)]!r}: pass a dict label -> object")
    if not out:
        raise ValueError(f"{what} is empty: at least one is needed")
    return out


def run_grid(instances, policies, horizons, n_seeds: int, seed: int = 0, backend: str = "loky",
             cache: bool = True, *, n_jobs: int = -1, chunk_size: int = 10, address: str | None = None,
             cache_dir=None, progress: bool = True) -> pd.DataFrame:
    """Run ``policies`` on ``instances`` at every horizon for ``n_seeds`` seeds; one row per (instance, policy, T, seed).

    Parameters
    ----------
    instances : dict label -> RisingInstance, or a sequence (labelled 0, 1, ...). Each instance
        uses its own observation model (``inst.noise``).
    policies : dict label -> RisingPolicy, or a sequence (labelled by ``policy.label``).
    horizons : int or sequence of ints, each <= every instance's T_max.
    n_seeds, seed : seed indices 0..n_seeds-1 of the root seed ``seed``.
    backend : "loky" (joblib processes), "dask" (dask.distributed: the scheduler at ``address``,
        or a LocalCluster with ``n_jobs`` single-threaded workers), or "sequential" (in process).
    cache : read and write ``cache_dir`` (default ``outputs/cache``, or ``$HB_CACHE_DIR``).
    chunk_size : seeds per task. Results do not depend on it nor on ``n_jobs``.

    Columns: instance, policy, T, seed (seed index), regret (pseudo-regret at T against the
    optimal arm for T), optimal_pulls (pulls of that arm), optimal_arm, K, wall_time (seconds of
    the kernel call that produced the row; rows read off one horizon-agnostic run share it).
    """
    instances = _as_mapping(instances, "instances", lambda i, x: i)
    policies = _as_mapping(policies, "policies", lambda i, p: p.label if isinstance(p, RisingPolicy) else i)
    for key, inst in instances.items():
        if not isinstance(inst, RisingInstance):
            raise ValueError(f"instances[{key!r}]={inst!r} is not allowed: expected a RisingInstance")
    for label, pol in policies.items():
        if not isinstance(pol, RisingPolicy):
            raise ValueError(f"policies[{label!r}]={pol!r} is not allowed: expected a RisingPolicy such as CureUCB()")
    horizons = [horizons] if np.isscalar(horizons) else list(horizons)
    if not horizons:
        raise ValueError("horizons=[] is not allowed: expected at least one horizon")
    T_cap = min(inst.T_max for inst in instances.values())
    horizons = sorted({check_int("horizons", T, 1, T_cap) for T in horizons})
    n_seeds = check_int("n_seeds", n_seeds, 1)
    seed = check_int("seed", seed, 0)
    check_choice("backend", backend, BACKENDS)
    chunk_size = check_int("chunk_size", chunk_size, 1)
    n_jobs = check_int("n_jobs", n_jobs)
    if n_jobs == 0:
        raise ValueError("n_jobs=0 is not allowed: expected a positive number of workers or -1 for all cores")
    workers = (os.cpu_count() or 1) if n_jobs < 0 else n_jobs

    store = _Cache(Path(cache_dir) if cache_dir else default_cache_dir()) if cache else _Cache(None)
    code = code_digest()
    runs = plan_runs(policies, horizons)
    chunks = [(s0, min(s0 + chunk_size, n_seeds)) for s0 in range(0, n_seeds, chunk_size)]
    inst_ids = {}
    for key, inst in instances.items():
        digest = instance_digest(inst)
        inst_ids[key] = (_digest(digest, inst.noise), instance_seed(seed, inst, digest))

    def cache_key(key, run: Run, chunk) -> str:
        return _digest("run_grid/1", code, inst_ids[key], policy_identity(policies[run.policy]),
                       run.T_run, run.checkpoints, seed, chunk)

    results: dict = {}
    tasks: list[_Task] = []
    for key, inst in instances.items():
        for chunk in chunks:
            missing = []
            for run in runs:
                hit = store.load(cache_key(key, run, chunk))
                if hit is not None and hit[0].shape == (len(run.checkpoints), chunk[1] - chunk[0], inst.K):
                    results[(key, run, chunk)] = hit
                else:
                    missing.append(run)
            if missing:
                cost = (chunk[1] - chunk[0]) * sum(r.T_run for r in missing) * (inst.K + 10)
                tasks.append(_Task(key, chunk, missing, cost))
    tasks.sort(key=lambda t: -t.cost)  # longest first: better balance at the end of the run

    def absorb(task: _Task, out: dict) -> None:
        for run, (pulls, wall) in out.items():
            store.save(cache_key(task.key, run, task.chunk), pulls, wall)
            results[(task.key, run, task.chunk)] = (pulls, wall)

    if tasks:
        args = [(instances[t.key], {r.policy: policies[r.policy] for r in t.runs}, t.runs,
                 inst_ids[t.key][1], t.chunk[0], t.chunk[1]) for t in tasks]
        bar = _progress_bar(sum(t.cost for t in tasks), progress)
        try:
            for done, (i, out) in enumerate(_execute(backend, args, workers, address), start=1):
                absorb(tasks[i], out)
                bar.set_description(f"run_grid: {done}/{len(tasks)} tasks", refresh=False)
                bar.update(tasks[i].cost)
        finally:
            bar.close()

    return _assemble(instances, policies, horizons, runs, chunks, results)


def _progress_bar(total_cost: float, show: bool):
    """Progress weighted by each task's estimated cost (seeds x rounds x arms), so that the time left is meaningful."""
    from .progress import tqdm  # widget bar in JupyterLab, text bar under papermill and in terminals
    return tqdm(total=total_cost, disable=not show, desc="run_grid: 0 tasks", smoothing=0.05,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]")


def _execute(backend: str, args: list, workers: int, address: str | None):
    """Yield (task index, result) as tasks finish."""
    if backend == "sequential" or (backend == "loky" and workers == 1):
        for i, a in enumerate(args):
            yield i, run_task(*a)
    elif backend == "loky":
        from joblib import Parallel, delayed
        parallel = Parallel(n_jobs=workers, backend="loky", return_as="generator_unordered")
        yield from parallel(delayed(_indexed_task)(i, a) for i, a in enumerate(args))
    else:
        yield from _execute_dask(args, workers, address)


def _indexed_task(i, a):
    return i, run_task(*a)


_DASK_CLIENTS: dict = {}


def _dask_client(workers: int, address: str | None):
    """One client per scheduler address (or per local worker count), kept for the session and closed at exit,
    so that a notebook calling run_grid several times starts its LocalCluster once."""
    import atexit

    from distributed import Client, LocalCluster
    key = address or ("local", workers)
    client = _DASK_CLIENTS.get(key)
    if client is not None and client.status == "running":
        return client
    if address:
        client = Client(address)
    else:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=40)
        client = Client(cluster)
    _DASK_CLIENTS[key] = client
    atexit.register(_close_dask, key)
    return client


def _close_dask(key) -> None:
    client = _DASK_CLIENTS.pop(key, None)
    if client is not None:
        cluster = client.cluster
        client.close()
        if cluster is not None:
            cluster.close()


def close_dask_clients() -> None:
    """Close the dask clients (and local clusters) that run_grid opened in this session."""
    for key in list(_DASK_CLIENTS):
        _close_dask(key)


def _execute_dask(args: list, workers: int, address: str | None):
    from distributed import as_completed
    client = _dask_client(workers, address)
    futures = [client.submit(_indexed_task, i, a, pure=False) for i, a in enumerate(args)]
    try:
        for fut in as_completed(futures):
            yield fut.result()
            fut.release()
    finally:
        client.cancel(futures)


def _assemble(instances, policies, horizons, runs, chunks, results) -> pd.DataFrame:
    frames = []
    for key, inst in instances.items():
        best = {T: optimal_arm(inst, T) for T in horizons}
        best_value = {T: float(inst.prefix[best[T], T]) for T in horizons}
        arms = np.arange(inst.K)
        for run in runs:
            pulls = np.concatenate([results[(key, run, c)][0] for c in chunks], axis=1)
            wall = np.concatenate([results[(key, run, c)][1] for c in chunks])
            for j, T in enumerate(run.checkpoints):
                p = pulls[j]
                collected = inst.prefix[arms, p].sum(axis=1)
                frames.append(pd.DataFrame({
                    "instance": [key] * p.shape[0], "policy": run.policy, "T": T,
                    "seed": np.arange(p.shape[0]), "regret": best_value[T] - collected,
                    "optimal_pulls": p[:, best[T]], "optimal_arm": best[T], "K": inst.K, "wall_time": wall}))
    # Built in (instance, policy, T, seed) order: runs are planned policy by policy, T ascending.
    df = pd.concat(frames, ignore_index=True)[COLUMNS]
    df["policy"] = pd.Categorical(df["policy"], categories=list(policies), ordered=True)
    return df


# --------------------------------------------------------------------------------------------
# Summaries: mean regret, win rates, paired differences
# --------------------------------------------------------------------------------------------

def _bootstrap_index(n: int, n_boot: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


def _per_instance_means(df: pd.DataFrame, T=None) -> pd.DataFrame:
    sub = df if T is None else df[df["T"] == T]
    if sub.empty:
        raise ValueError(f"T={T!r} is not allowed: the table has horizons {sorted(df['T'].unique().tolist())}")
    return sub.groupby(["instance", "policy"], observed=True)["regret"].mean().unstack("policy")


def regret_summary(df: pd.DataFrame, n_boot: int = 2000, level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Mean regret per (policy, T) over instances and seeds, with a bootstrap interval over instances."""
    level = check_real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    rows = []
    for T, sub in df.groupby("T"):
        means = _per_instance_means(sub)
        idx = _bootstrap_index(len(means), n_boot, seed)
        for policy in means.columns:
            m = means[policy].to_numpy()
            boot = m[idx].mean(axis=1)
            rows.append({"policy": policy, "T": T, "mean_regret": m.mean(),
                         "ci_low": np.quantile(boot, (1 - level) / 2), "ci_high": np.quantile(boot, (1 + level) / 2),
                         "n_instances": m.size})
    return pd.DataFrame(rows)


def win_rates(df: pd.DataFrame, T: int, n_boot: int = 2000, level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Pairwise win rates at horizon T as in Figure 2 (b, c, e, f).

    Per instance, each policy's mean regret over seeds; the win rate of ``row`` over ``col`` is the
    share of instances on which row's mean regret is lower (a tie counts one half). The interval
    is a percentile bootstrap over instances. Returns one row per ordered pair (row != col).
    """
    level = check_real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    means = _per_instance_means(df, T)
    names = list(means.columns)
    m = means.to_numpy()
    idx = _bootstrap_index(m.shape[0], n_boot, seed)
    rows = []
    for a, row in enumerate(names):
        for b, col in enumerate(names):
            if a == b:
                continue
            score = (m[:, a] < m[:, b]) + 0.5 * (m[:, a] == m[:, b])
            boot = score[idx].mean(axis=1)
            rows.append({"row": row, "col": col, "T": T, "win_rate": score.mean(),
                         "ci_low": np.quantile(boot, (1 - level) / 2), "ci_high": np.quantile(boot, (1 + level) / 2),
                         "n_instances": m.shape[0]})
    return pd.DataFrame(rows)


def win_rate_matrix(rates: pd.DataFrame, value: str = "win_rate") -> pd.DataFrame:
    """Square matrix (row beats column) from :func:`win_rates`, in the row order given there; NaN on the diagonal."""
    order = list(dict.fromkeys(rates["row"]))
    return rates.pivot(index="row", columns="col", values=value).reindex(index=order, columns=order)


def paired_differences(df: pd.DataFrame, baseline: str, by_instance: bool = False, n_boot: int = 2000,
                       level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Regret of each policy minus ``baseline``'s, paired by (instance, T, seed).

    Common random numbers make the per-seed differences far less noisy than either regret. With
    ``by_instance=False``: per (policy, T), the mean difference over instances with a bootstrap
    interval over instances, and the share of instances where the policy is worse than the
    baseline. With ``by_instance=True``: per (policy, T, instance), the mean difference over seeds
    with a normal-approximation interval over seeds.
    """
    from scipy.stats import norm
    level = check_real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    if baseline not in set(df["policy"]):
        raise ValueError(f"baseline={baseline!r} is not allowed: expected one of {sorted(set(df['policy']))}")
    wide = df.pivot_table(index=["T", "instance", "seed"], columns="policy", values="regret", observed=True)
    diffs = wide.drop(columns=baseline).sub(wide[baseline], axis=0)
    rows = []
    z = norm.ppf(0.5 + level / 2)
    for T, sub in diffs.groupby(level="T"):
        per_inst = sub.groupby(level="instance")
        means = per_inst.mean()
        if by_instance:
            sd = per_inst.std(ddof=1)
            count = per_inst.count()
            for policy in means.columns:
                for inst in means.index:
                    half = z * sd.loc[inst, policy] / np.sqrt(count.loc[inst, policy]) if count.loc[inst, policy] > 1 else np.nan
                    rows.append({"policy": policy, "baseline": baseline, "T": T, "instance": inst,
                                 "mean_difference": means.loc[inst, policy],
                                 "ci_low": means.loc[inst, policy] - half, "ci_high": means.loc[inst, policy] + half})
            continue
        idx = _bootstrap_index(len(means), n_boot, seed)
        for policy in means.columns:
            m = means[policy].to_numpy()
            boot = m[idx].mean(axis=1)
            rows.append({"policy": policy, "baseline": baseline, "T": T, "mean_difference": m.mean(),
                         "ci_low": np.quantile(boot, (1 - level) / 2), "ci_high": np.quantile(boot, (1 + level) / 2),
                         "share_worse": float(np.mean(m > 0)), "n_instances": m.size})
    return pd.DataFrame(rows)
