"""Run a list of cached tasks on a backend: what the commitment and portfolio grids share with the rising one.

A task is a function, its arguments, the cache key of its result and an estimated cost. Its result
is a dict of numpy arrays (what the cache stores). :func:`run_cached` loads what the cache has,
runs the rest (longest first) on loky, dask or in process, saves each result as it arrives (an
interrupted grid resumes where it stopped), and returns the results in the order of the tasks.

:func:`fingerprint` turns a problem or a policy into a stable text for cache keys: the class and
the public attributes, arrays by their bytes; attributes that are computed on demand
(``functools.cached_property``) or private are left out, so the same object hashes the same
before and after its benchmarks were computed.
"""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from ..errors import check_int
from .cache import ResultCache, default_cache_dir
from ..timing import charged
from .executor import resolve_backend, run_tasks, workers_for


@dataclass
class Task:
    key: str             # cache key of the result
    fn: object           # a module-level function (it is pickled to the workers)
    args: tuple
    cost: float = 1.0
    check: object = None  # check(arrays) -> reason the cached arrays cannot be right, or None


def _call(fn, args):
    return fn(*args)


@charged("compute")
def run_cached(tasks: list[Task], *, backend: str = "sequential", n_jobs: int = 1, address: str | None = None,
               cache: bool = True, cache_dir=None, progress: bool = False, what: str = "grid") -> list[dict]:
    """Results of ``tasks`` (dicts of arrays) in their order, from the cache or computed."""
    backend, address = resolve_backend(backend, address)
    n_jobs = check_int("n_jobs", n_jobs)
    if n_jobs == 0:
        raise ValueError("n_jobs=0 is not allowed: expected a positive number of workers or -1 for all cores")
    store = ResultCache((Path(cache_dir) if cache_dir else default_cache_dir()) if cache else None, what)
    results: list = [None] * len(tasks)
    todo = []
    for i, task in enumerate(tasks):
        hit = store.load(task.key, task.check)
        if hit is None:
            todo.append(i)
        else:
            results[i] = hit
    cached = {}  # verifying (HB_CACHE_VERIFY): hits recomputed, and what the cache said for them
    if store.verifier is not None:
        chosen = store.verifier.pick(tasks[i].key for i in range(len(tasks)) if results[i] is not None)
        cached = {i: results[i] for i in range(len(tasks)) if results[i] is not None and tasks[i].key in chosen}
        todo += sorted(cached)
    todo.sort(key=lambda i: -tasks[i].cost)  # longest first: better balance at the end

    def absorb(j: int, out: dict) -> None:
        i = todo[j]
        if i in cached:
            store.verifier.compare(store.path(tasks[i].key), cached[i], out)
        store.save(tasks[i].key, out)
        results[i] = out

    try:
        run_tasks(backend, _call, [(tasks[i].fn, tasks[i].args) for i in todo], [tasks[i].cost for i in todo],
                  workers_for(n_jobs), address, absorb, progress, what)
    finally:
        store.report()
    return results


def fingerprint(obj, _depth: int = 0) -> str:
    """A stable text that identifies ``obj``'s content (for cache keys; see the module docstring)."""
    if isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        return f"array({a.dtype.str},{a.shape},{hashlib.blake2b(a.tobytes(), digest_size=16).hexdigest()})"
    if isinstance(obj, (str, bytes, bool, int, float, complex, type(None), np.generic)):
        return repr(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj).__name__ + "(" + ",".join(fingerprint(x, _depth + 1) for x in obj) + ")"
    if isinstance(obj, dict):
        return "dict(" + ",".join(f"{fingerprint(k, _depth + 1)}:{fingerprint(v, _depth + 1)}"
                                  for k, v in sorted(obj.items(), key=lambda kv: repr(kv[0]))) + ")"
    cls = type(obj)
    name = f"{cls.__module__}.{cls.__qualname__}"
    if _depth > 6:
        return f"{name}:{obj!r}"
    if dataclasses.is_dataclass(obj):
        fields = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    elif hasattr(obj, "__dict__"):
        fields = {k: v for k, v in vars(obj).items()
                  if not k.startswith("_") and not isinstance(getattr(cls, k, None), cached_property)}
    else:
        return f"{name}:{obj!r}"
    return name + "(" + ",".join(f"{k}={fingerprint(v, _depth + 1)}" for k, v in sorted(fields.items())) + ")"
