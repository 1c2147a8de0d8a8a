"""Where a grid's tasks run: joblib's loky processes, a dask.distributed cluster, or in process.

``execute(backend, fn, args, workers, address)`` yields ``(task index, fn(*args[i]))`` as tasks
finish, in any order; the grids store results by index, so the numbers never depend on the
backend, the order of completion or the number of workers.

``HB_DASK_ADDRESS`` (set by ``hb run --cluster ADDRESS``, or by hand): when it is set and not
empty, every grid runs on the dask.distributed scheduler at that address, whatever backend the
caller asked for (:func:`resolve_backend`). A dask grid left with no worker fails after
``$HB_DASK_NO_WORKER_TIMEOUT`` seconds (120 by default) instead of waiting forever.

Loky workers end with their parent: each worker runs :func:`_watch_parent` when it starts, a
daemon thread that exits the worker once its parent process is gone (a SIGKILL of the notebook's
kernel otherwise leaves the workers running until loky's idle timeout, minutes later). The
thread needs the GIL, so a worker inside one long compiled kernel call notices when that call
returns.
"""
from __future__ import annotations

import atexit
import os
import threading
import time

from ..errors import check_choice

BACKENDS = ("loky", "dask", "sequential")
CLUSTER_ENV = "HB_DASK_ADDRESS"


def cluster_address() -> str | None:
    """The scheduler address in ``$HB_DASK_ADDRESS``, or None when it is unset or empty."""
    return os.environ.get(CLUSTER_ENV, "").strip() or None


def resolve_backend(backend: str, address: str | None) -> tuple[str, str | None]:
    """(backend, address) after ``$HB_DASK_ADDRESS``: a cluster named there wins over the arguments."""
    check_choice("backend", backend, BACKENDS)
    env = cluster_address()
    return ("dask", env) if env else (backend, address or None)


def workers_for(n_jobs: int) -> int:
    return (os.cpu_count() or 1) if n_jobs < 0 else n_jobs


def execute(backend: str, fn, args: list, workers: int, address: str | None = None):
    """Yield (task index, fn(*args[i])) as tasks finish."""
    if backend == "sequential" or (backend == "loky" and (workers == 1 or len(args) == 1)):
        for i, a in enumerate(args):
            yield i, fn(*a)
    elif backend == "loky":
        from joblib import Parallel, delayed
        parallel = Parallel(n_jobs=min(workers, len(args)), backend="loky", return_as="generator_unordered",
                            initializer=_watch_parent, initargs=(os.getpid(),))
        yield from parallel(delayed(_indexed)(fn, i, a) for i, a in enumerate(args))
    else:
        yield from _execute_dask(fn, args, workers, address)


def _indexed(fn, i, a):
    return i, fn(*a)


def _watch_parent(parent: int, interval: float = 0.2) -> None:
    """Loky worker initializer: exit this worker as soon as its parent ``parent`` is gone.

    Loky workers are children of the process that submits the grid (``parent``), so a different
    parent pid means that one died and the worker was re-parented (to init or a subreaper). A pid
    check (kill 0) would not do: a killed parent that nobody has reaped yet still has its pid.
    """
    if os.getppid() != parent:
        os._exit(1)  # the parent died while this worker was starting

    def watch():
        while True:
            time.sleep(interval)
            if os.getppid() != parent:
                os._exit(1)
    threading.Thread(target=watch, name="hb-parent-watchdog", daemon=True).start()


# --------------------------------------------------------------------------------------------
# dask.distributed
# --------------------------------------------------------------------------------------------

_DASK_CLIENTS: dict = {}


def dask_client(workers: int, address: str | None):
    """One client per scheduler address (or per local worker count), kept for the session and closed at exit,
    so that a notebook calling a grid several times starts its LocalCluster once."""
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
    """Close the dask clients (and local clusters) that the grids opened in this session."""
    for key in list(_DASK_CLIENTS):
        _close_dask(key)


class ClusterError(RuntimeError):
    """The dask cluster can no longer run the grid (no worker left for ``no_worker_timeout()`` seconds)."""


NO_WORKER_ENV = "HB_DASK_NO_WORKER_TIMEOUT"
NO_WORKER_TIMEOUT_S = 120.0  # a worker restarting (or a new one joining) takes seconds
_POLL_S = 0.05  # how often finished tasks are collected
_WORKERS_EVERY_S = 2.0  # how often the scheduler is asked how many workers it has


def no_worker_timeout() -> float:
    """Seconds a dask grid waits with no worker before it fails: ``$HB_DASK_NO_WORKER_TIMEOUT``, else 120."""
    text = os.environ.get(NO_WORKER_ENV, "").strip()
    if not text:
        return NO_WORKER_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{NO_WORKER_ENV}={text!r} is not allowed: expected a number of seconds > 0")
    return value


def _worker_count(client) -> int:
    """Workers the scheduler knows now; 0 when it does not answer within a few seconds."""
    try:
        return len(client.sync(client.scheduler.ncores, callback_timeout=5))
    except Exception:  # noqa: BLE001 - a scheduler that does not answer has no worker for us
        return 0


def _execute_dask(fn, args: list, workers: int, address: str | None):
    """Yield results as the cluster's tasks finish. With every worker gone (killed, or the scheduler
    lost), dask waits for one to join, forever: after ``no_worker_timeout()`` seconds without a worker
    the grid stops with a one-line ``ClusterError``."""
    from distributed import as_completed
    limit = no_worker_timeout()
    client = dask_client(workers, address)
    futures = [client.submit(_indexed, fn, i, a, pure=False) for i, a in enumerate(args)]
    done = as_completed(futures)
    last_worker = time.monotonic()
    next_look = last_worker + _WORKERS_EVERY_S
    try:
        while not done.is_empty():
            if done.has_ready():
                for fut in done.next_batch(block=False):
                    yield fut.result()
                    fut.release()
                continue
            now = time.monotonic()
            if now >= next_look:
                if _worker_count(client):
                    last_worker = now
                elif now - last_worker > limit:
                    where = address or "the local dask cluster"
                    raise ClusterError(f"no dask worker at {where} for {limit:g} s, with {done.count()} of "
                                       f"{len(futures)} tasks left; start workers (dask worker ADDRESS) and run it "
                                       f"again (finished tasks are cached), or set {NO_WORKER_ENV} to wait longer")
                next_look = time.monotonic() + _WORKERS_EVERY_S
            time.sleep(_POLL_S)
    finally:
        client.cancel(futures)


# --------------------------------------------------------------------------------------------
# Progress
# --------------------------------------------------------------------------------------------

COMPILING = "compiling kernels (first run only)"


def progress_bar(total_cost: float, show: bool, what: str = "run_grid", n_tasks: int = 0):
    """Progress weighted by each task's estimated cost, so that the time left is meaningful. Its label is
    ``"<what>: <done>/<n_tasks> tasks"`` (set with :func:`set_label`, which adds no colon of its own)."""
    from ..progress import tqdm  # widget bar in JupyterLab, text bar under papermill and in terminals
    return tqdm(total=total_cost, disable=not show, desc=f"{what}: 0/{n_tasks} tasks", smoothing=0.05,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]")


def set_label(bar, text: str, refresh: bool = False) -> None:
    """The bar's description, as given (tqdm's ``set_description`` would add a second ': ')."""
    bar.set_description_str(text, refresh=refresh)


def run_tasks(backend: str, fn, args: list, costs: list, workers: int, address: str | None, absorb,
              show: bool, what: str = "run_grid", prepare=None) -> None:
    """Run ``fn(*args[i])`` for every i on the backend, calling ``absorb(i, result)`` as each finishes.

    ``prepare()`` (optional) runs here first, before any task: the grids load or compile their kernels
    with it, so that workers then read them from the disk cache. While numba compiles in this process
    (in ``prepare`` or in a task run here), the bar says "compiling kernels (first run only)" instead of
    sitting at 0 %; the next finished task puts the count back.
    """
    if not args:
        return
    from .._numba_cache import watch_compiles
    bar = progress_bar(sum(costs), show, what, len(args))
    state = {"done": 0, "compiling": False}

    def counted(refresh: bool) -> None:
        set_label(bar, f"{what}: {state['done']}/{len(args)} tasks", refresh=refresh)

    def compiling() -> None:
        if not state["compiling"]:
            state["compiling"] = True
            done = f"{state['done']}/{len(args)} tasks, " if state["done"] else ""
            set_label(bar, f"{what}: {done}{COMPILING}", refresh=True)

    try:
        with watch_compiles(compiling):
            if prepare is not None:
                prepare()
                if state["compiling"]:
                    state["compiling"] = False
                    counted(refresh=True)
            for done, (i, out) in enumerate(execute(backend, fn, args, workers, address), start=1):
                absorb(i, out)
                state["done"], state["compiling"] = done, False
                counted(refresh=False)
                bar.update(costs[i])
    finally:
        bar.close()
