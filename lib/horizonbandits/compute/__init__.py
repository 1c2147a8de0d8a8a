"""The compute layer: tasks, the resumable checked result cache and the executors (loky, dask, in process).

It sits below the models: it imports neither ``rising`` nor ``commit`` (``tests/test_import_graph.py``
checks it), and the rising, commitment and portfolio grids, the dominance probes and the learning
curves all run through it.

- :mod:`.tasks`: a :class:`~.tasks.Task` (function, arguments, cache key, cost) and
  :func:`~.tasks.run_cached`, which loads what the cache holds, runs the rest longest first and
  saves each result as it arrives; :func:`~.tasks.fingerprint` for cache keys.
- :mod:`.cache`: the on-disk cache (:class:`~.cache.ResultCache`), :func:`~.cache.code_digest` of
  the code that determines the numbers, :class:`~.cache.Verifier`.
- :mod:`.executor`: where tasks run (:func:`~.executor.execute`, ``$HB_DASK_ADDRESS``).
"""
from __future__ import annotations

from .cache import CacheWarning, ResultCache, code_digest, default_cache_dir, digest
from .executor import (BACKENDS, ClusterError, close_dask_clients, cluster_address, execute, resolve_backend,
                       run_tasks, workers_for)
from .tasks import Task, fingerprint, run_cached

__all__ = ["CacheWarning", "ResultCache", "code_digest", "default_cache_dir", "digest", "BACKENDS", "ClusterError",
           "close_dask_clients", "cluster_address", "execute", "resolve_backend", "run_tasks", "workers_for", "Task",
           "fingerprint", "run_cached"]
