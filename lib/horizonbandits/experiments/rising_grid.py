"""The rising model's grid: instances x policies x horizons x seeds, cached on disk.

Called through :func:`horizonbandits.experiments.run_grid` (the one public grid of the three models);
this module also holds the rising helpers the notebooks use (``make_policies``, ``policy_settings``,
``instance_set``) and the hashing that names an instance's noise seed and cache entries.

How the work is organised (and why it is fast):

- one task per (instance, chunk of seeds); every policy and horizon of the grid reads the same
  reward source per seed (common random numbers; a smaller T reads a prefix of the same stream);
- a horizon-aware policy (``uses_horizon``) runs once per T; a horizon-agnostic one runs once to
  the largest T and its pull counts are read off at every horizon of the grid;
- tasks run on joblib's loky processes, on a dask.distributed cluster or in process; each seed's
  numbers depend only on (seed, instance, seed index), never on the chunking or the number of workers.

Each instance gets its own noise seed, derived from ``seed`` and a digest of its mean table
(``instance_seed``), so two instances never share noise streams and an instance keeps its seed
whatever else is in the grid.

Cache (``compute.cache``): one entry per (instance, policy, run, chunk) whose name hashes everything
that determines the numbers (mean table, names and noise model of the instance, the policy's class and
hyperparameters, the run's horizons, the seed and seed indices, and ``cache.code_digest("rising")``).
Entries hold pull counts, not tables, so a new column keeps them; an interrupted run resumes.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import check_choice, check_int, check_real
from ..rising.instances import RisingInstance
from ..rising.observations import policy_stream_seed, reward_source
from ..rising.oracle import optimal_arm
from ..rising.policies.base import POLICIES, RisingPolicy, make_policy
from ..seeds import grid_instance_seed, instance_generator
from ..compute.cache import ResultCache, code_digest, default_cache_dir, digest
from ..compute.executor import resolve_backend, run_tasks, workers_for

# The rising table, in the order of the tidy table of ``experiments.run_grid``.
COLUMNS = ["model", "problem", "policy", "T", "seed_index", "regret", "root_seed", "optimal_pulls", "optimal_arm", "K",
           "wall_time"]


# --------------------------------------------------------------------------------------------
# Policies by name
# --------------------------------------------------------------------------------------------

def make_policies(names, params: Mapping | None = None, sigma: float | None = None) -> dict[str, RisingPolicy]:
    """``{name: POLICIES[name](**params[name])}`` in the given order.

    ``sigma`` (when given) is the environment's noise level. It is passed only to the policies whose
    own index takes a noise scale (class attribute ``takes_noise_scale``: CURE-UCB and R-ed-UCB, the
    two the CURE-UCB paper's appendix K.2 names); every other policy keeps the default its own paper
    gives for rewards in [0, 1] (R-ed-AE's sigma = 1/2, for instance) or what ``params`` sets.
    """
    names = [names] if isinstance(names, str) else list(names)
    params = dict(params or {})
    unknown = sorted(set(params) - set(names))
    if unknown:
        raise ValueError(f"policy_params has keys {unknown!r} that are not in policies={names!r}")
    out = {}
    for name in names:
        check_choice("policies", name, sorted(POLICIES))
        kwargs = dict(params.get(name, {}))
        if sigma is not None and POLICIES[name].takes_noise_scale:
            kwargs["sigma"] = check_real("sigma", sigma, 0.0)
        out[name] = make_policy(name, **kwargs)
    return out


def policy_settings(policies: Mapping[str, RisingPolicy]) -> dict[str, str]:
    """What a verdict on these policies rests on, for a claim's ``settings``: each policy's label
    (its hyperparameters that differ from the defaults) and which policies were told a noise scale."""
    told = [name for name, pol in policies.items() if type(pol).takes_noise_scale]
    return {"policies": ", ".join(pol.label for pol in policies.values()),
            "told the noise level": ", ".join(told) or "none"}


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

    The mean tables do not depend on ``noise``: the instances of the last call are kept, and a call
    that differs only in ``noise`` or asks for no more instances returns ``with_noise`` copies that
    share their tables (the noise ablation asks for each set at four noise levels; a concave table
    costs ~25 ms to build and ~15 ms to hash, 2026-12-01).
    """
    from ..rising.generators import concave_random
    from ..rising.instances import ltf_random
    check_choice("family", family, INSTANCE_FAMILIES)
    n_instances = check_int("n_instances", n_instances, 1)
    seed = check_int("seed", seed, 0)
    H = check_int("H", H, 100)
    # repr abbreviates large arrays, so options holding one are never matched with an earlier call
    key = None if any(isinstance(v, np.ndarray) for v in options.values()) else \
        (family, seed, H, repr(sorted(options.items())))
    drawn = _LAST_SET["instances"] if key is not None and _LAST_SET["key"] == key else []
    for j in range(len(drawn), n_instances):
        rng = instance_generator(seed, j)
        if family == "ltf":
            drawn.append(ltf_random(rng, T_ref=H, noise=noise, **options))
        else:
            drawn.append(concave_random(rng, H=H, noise=noise, **options))
    _LAST_SET.update(key=key, instances=drawn)
    return {f"{family} {j:03d}": inst if inst.noise == noise else inst.with_noise(noise)
            for j, inst in enumerate(drawn[:n_instances])}


# The instances of the last instance_set call (one set only, so that memory stays bounded).
_LAST_SET: dict = {"key": None, "instances": []}


# --------------------------------------------------------------------------------------------
# Hashing
# --------------------------------------------------------------------------------------------

_digest = digest


def instance_digest(inst: RisingInstance) -> str:
    """Hash of the mean table and the names (not the noise model); made once per table and kept on
    the instance and its ``with_noise`` copies (the arrays are read-only, so it cannot go stale;
    hashing a 10 x 100K table costs ~11 ms)."""
    made = getattr(inst, "_digest", None)  # (an instance unpickled from an older version has none)
    if made is None:
        made = inst._digest = _hash_means(inst)
    return made


def _hash_means(inst: RisingInstance) -> str:
    # The table's bytes in C order, read in place (``tobytes`` would copy them first).
    return _digest(inst.means.shape, memoryview(np.ascontiguousarray(inst.means)), inst.names)


def instance_seed(seed: int, inst: RisingInstance, digest: str | None = None) -> int:
    """The noise seed of an instance: SeedSequence(seed, spawn_key=<two 32-bit words of its digest>)."""
    return grid_instance_seed(seed, instance_digest(inst) if digest is None else digest)


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
    """Run every ``run`` for seed indices s0..s1-1 on one instance, one reward source per seed (each
    kernel draws the rewards of its own pulls; common random numbers across runs and horizons).

    Returns {run: (pulls (n_checkpoints, n_seeds, K) int64, wall (n_seeds,) seconds)}.
    """
    out = {r: (np.zeros((len(r.checkpoints), s1 - s0, inst.K), dtype=np.int64), np.zeros(s1 - s0)) for r in runs}
    empty = np.empty(0, dtype=np.int64)
    for j, s in enumerate(range(s0, s1)):
        obs = reward_source(inst, seed, s)
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


def _as_mapping(items, what: str, label) -> dict:
    if isinstance(items, Mapping):
        out = dict(items)
    else:
        items = list(items)
        out = {label(i, x): x for i, x in enumerate(items)}
        if len(out) != len(items):
            labels = [label(i, x) for i, x in enumerate(items)]
            raise ValueError(f"{what} have duplicate labels {labels!r}: pass a dict label -> object")
    if not out:
        raise ValueError(f"{what} is empty: at least one is needed")
    return out


def _rising_grid(instances, policies, horizons, n_seeds: int, seed: int = 0, backend: str = "loky",
                 cache: bool = True, *, n_jobs: int = -1, chunk_size: int = 10, address: str | None = None,
                 cache_dir=None, progress: bool = True) -> pd.DataFrame:
    """Run ``policies`` on ``instances`` at every horizon for ``n_seeds`` seeds; one row per (instance, policy, T, seed).

    Parameters
    ----------
    instances : dict label -> RisingInstance, or a sequence (labelled 0, 1, ...). Each instance
        uses its own observation model (``inst.noise``).
    policies : dict label -> RisingPolicy, or a sequence (labelled by ``policy.label``).
    horizons : int or sequence of ints, each <= every instance's T_max.
    n_seeds, seed : seed indices 0..n_seeds-1 of each instance's own root, which ``seed`` and the
        instance's digest determine (``seeds.grid_instance_seed``); the table's ``root_seed`` names it.
    backend : "loky" (joblib processes), "dask" (dask.distributed: the scheduler at ``address``,
        or a LocalCluster with ``n_jobs`` single-threaded workers), or "sequential" (in process).
    cache : read and write ``cache_dir`` (default ``outputs/cache``, or ``$HB_CACHE_DIR``).
    chunk_size : seeds per task. Results do not depend on it nor on ``n_jobs``.

    Columns: model ("rising"), problem (the instance's label), policy, T, seed_index, regret (pseudo-regret at T
    against the optimal arm for T), root_seed (the instance's root: ``simulate(inst, policy, T, n_seeds,
    seed=root_seed)`` gives the row's seed index the same regret), optimal_pulls (pulls of that arm),
    optimal_arm, K, wall_time (seconds of the kernel call that produced the row; rows read off one
    horizon-agnostic run share it).
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
    backend, address = resolve_backend(backend, address)
    chunk_size = check_int("chunk_size", chunk_size, 1)
    n_jobs = check_int("n_jobs", n_jobs)
    if n_jobs == 0:
        raise ValueError("n_jobs=0 is not allowed: expected a positive number of workers or -1 for all cores")

    store = ResultCache((Path(cache_dir) if cache_dir else default_cache_dir()) if cache else None, "run_grid")
    code = code_digest("rising")
    runs = plan_runs(policies, horizons)
    chunks = [(s0, min(s0 + chunk_size, n_seeds)) for s0 in range(0, n_seeds, chunk_size)]
    inst_ids = {}
    for key, inst in instances.items():
        inst_digest = instance_digest(inst)
        inst_ids[key] = (_digest(inst_digest, inst.noise), instance_seed(seed, inst, inst_digest))

    def cache_key(key, run: Run, chunk) -> str:
        return _digest("run_grid/1", code, inst_ids[key], policy_identity(policies[run.policy]),
                       run.T_run, run.checkpoints, seed, chunk)

    results: dict = {}
    hits: dict = {}
    for key, inst in instances.items():
        for chunk in chunks:
            for run in runs:
                hit = store.load(cache_key(key, run, chunk),
                                 lambda arrays, run=run, chunk=chunk, K=inst.K: _check_entry(arrays, run, chunk, K))
                if hit is not None:
                    hits[(key, run, chunk)] = hit
                    results[(key, run, chunk)] = (hit["pulls"], hit["wall"])
    cached = {}  # verifying (HB_CACHE_VERIFY): hits recomputed, and what the cache said for them
    if store.verifier is not None:
        chosen = store.verifier.pick(cache_key(*where) for where in hits)
        cached = {where: hit for where, hit in hits.items() if cache_key(*where) in chosen}
    tasks: list[_Task] = []
    for key, inst in instances.items():
        for chunk in chunks:
            missing = [run for run in runs if (key, run, chunk) not in results or (key, run, chunk) in cached]
            if missing:
                cost = (chunk[1] - chunk[0]) * sum(r.T_run for r in missing) * (inst.K + 10)
                tasks.append(_Task(key, chunk, missing, cost))
    tasks.sort(key=lambda t: -t.cost)  # longest first: better balance at the end of the run

    def absorb(i: int, out: dict) -> None:
        task = tasks[i]
        for run, (pulls, wall) in out.items():
            where = (task.key, run, task.chunk)
            if where in cached:
                store.verifier.compare(store.path(cache_key(*where)), cached[where], {"pulls": pulls, "wall": wall})
            store.save(cache_key(*where), {"pulls": pulls, "wall": wall})
            results[where] = (pulls, wall)

    args = [(instances[t.key], {r.policy: policies[r.policy] for r in t.runs}, t.runs,
             inst_ids[t.key][1], t.chunk[0], t.chunk[1]) for t in tasks]
    def prepare() -> None:
        # Each policy's kernel loaded (or, cache cold, compiled, the bar saying so) here before any task, so
        # that loky or local dask workers read it from the disk cache instead of each compiling it. A remote
        # cluster compiles on its own machines. The numbers do not change: this run is thrown away.
        for t in tasks:
            root = inst_ids[t.key][1]
            for r in t.runs:
                if type(policies[r.policy]) not in _WARM:
                    _warm_up(policies[r.policy], reward_source(instances[t.key], root, t.chunk[0]), r.T_run,
                             policy_stream_seed(root, t.chunk[0]))

    try:
        run_tasks(backend, run_task, args, [t.cost for t in tasks], workers_for(n_jobs), address, absorb, progress,
                  prepare=None if backend == "dask" and address else prepare)
    finally:
        store.report()
    roots = {key: ids[1] for key, ids in inst_ids.items()}
    return _assemble(instances, policies, horizons, runs, chunks, results, roots)


def _check_entry(arrays: dict, run: Run, chunk, K: int) -> str | None:
    """Why a cached entry of ``run`` on seeds ``chunk`` cannot be right (None when it can): wrong
    arrays, shape or type, or pull counts that are not a split of each checkpoint's rounds."""
    if set(arrays) != {"pulls", "wall"}:
        return f"arrays {sorted(arrays)} instead of ['pulls', 'wall']"
    pulls, wall = arrays["pulls"], arrays["wall"]
    n = chunk[1] - chunk[0]
    if pulls.shape != (len(run.checkpoints), n, K) or pulls.dtype.kind not in "iu":
        return f"pulls of shape {pulls.shape} and type {pulls.dtype}, expected {(len(run.checkpoints), n, K)} integers"
    if pulls.min(initial=0) < 0 or not np.array_equal(pulls.sum(axis=2),
                                                       np.broadcast_to(np.array(run.checkpoints)[:, None], pulls.shape[:2])):
        return "pull counts out of range"
    if wall.shape != (n,) or wall.dtype.kind != "f" or not np.all(np.isfinite(wall)):
        return "wall times damaged"
    return None


def _assemble(instances, policies, horizons, runs, chunks, results, roots) -> pd.DataFrame:
    """The table, built from the cached or fresh pull counts (the cache holds no table, so adding a column
    keeps its entries).

    Rows come in (instance, policy, T, seed index) order: runs are planned policy by policy, T ascending.
    The columns are gathered as numpy arrays and the frame is made once (one small frame per run and
    horizon cost ~20 CPU-s per Figure 2 notebook at paper scale, 2026-12-01).
    """
    cols = {name: [] for name in COLUMNS}
    for key, inst in instances.items():
        best = {T: optimal_arm(inst, T) for T in horizons}
        best_value = {T: float(inst.prefix[best[T], T]) for T in horizons}
        arms = np.arange(inst.K)
        for run in runs:
            pulls = np.concatenate([results[(key, run, c)][0] for c in chunks], axis=1)
            wall = np.concatenate([results[(key, run, c)][1] for c in chunks])
            n = pulls.shape[1]
            for j, T in enumerate(run.checkpoints):
                p = pulls[j]
                cols["model"].append(np.full(n, "rising", dtype=object))
                cols["problem"].append(np.full(n, key, dtype=object))
                cols["policy"].append(np.full(n, run.policy, dtype=object))
                cols["T"].append(np.full(n, T, dtype=np.int64))
                cols["seed_index"].append(np.arange(n))
                cols["root_seed"].append(np.full(n, roots[key], dtype=np.int64))
                cols["regret"].append(best_value[T] - inst.prefix[arms, p].sum(axis=1))
                cols["optimal_pulls"].append(p[:, best[T]])
                cols["optimal_arm"].append(np.full(n, best[T], dtype=np.int64))
                cols["K"].append(np.full(n, inst.K, dtype=np.int64))
                cols["wall_time"].append(wall)
    df = pd.DataFrame({name: np.concatenate(parts) for name, parts in cols.items()})
    df["problem"] = df["problem"].astype(pd.Series(list(instances)).dtype)  # as a column of the keys would be
    df["policy"] = pd.Categorical(df["policy"], categories=list(policies), ordered=True)
    return df


