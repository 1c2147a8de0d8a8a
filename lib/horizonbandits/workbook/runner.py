"""``hb run``: check, lock the profile folder, execute the notebooks in worker processes, report.

- Nothing runs unless every selected notebook's parameter file is valid and the outputs folder
  can be written (one line naming the folder otherwise).
- Each notebook runs in a worker process of its own session (``worker.py``): the terminal's Ctrl-C
  reaches this process only, which then stops every running worker (SIGTERM, SIGKILL after a
  grace period), starts nothing new, prints one line and returns 130.
- After each notebook: its page is rendered here (``execute.render_staged_page``: nbconvert's start is paid
  once per run, not once per notebook), its outputs are adopted (only a success replaces the previous ones) and
  ``manifest.json``, ``claims.csv`` and ``index.html`` are rewritten, so an interrupted run keeps
  what finished.
- With ``--jobs N`` > 1, in a profile that has ``params/<profile>/expected_seconds.json`` (the paper
  profile), the notebooks start longest first (``longest_first``: the larger of that file's wall times
  and this profile's last manifest's; a notebook known to neither
  starts first, since it may be long), so the long ones do not start last and leave a core idle; a
  notebook listed under ``"_after"`` there waits for the notebooks whose cached results it re-uses. The
  numbers a notebook computes do not depend on the order. Without that file the notebooks start in the
  order given.
- With two notebooks or more (on Linux, unless ``HB_KERNEL_POOL=0``), the kernels are forked from one process that
  has imported what the notebooks import (``kernel_pool``), so those imports are paid once per run.
- Kernels see ``HB_CACHE_DIR`` (the outputs folder's ``cache/`` unless the user set it) and, with
  ``--cluster``, ``HB_DASK_ADDRESS``, once a scheduler has answered there (``cluster.check_scheduler``).
"""
from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from contextlib import contextmanager
from pathlib import Path

from .. import timing
from . import kernel_pool
from .base import WorkbookError, disk_full_text, is_disk_full, mentions_disk_full, now, one_line
from .cluster import check_scheduler
from .execute import Result, Task, adopt_outputs, describe_failure, render_staged_page
from .worker import EXIT_DISK_FULL
from .locate import Workbook
from .pages import install_assets
from .params import Plan, plan_run
from .stacks import dump_on_signal
from .report import git_state, package_versions, read_manifest, recorded_outputs, write_reports

CACHE_ENV = "HB_CACHE_DIR"
CLUSTER_ENV = "HB_DASK_ADDRESS"
PATH_ENVS = (CACHE_ENV, "HB_DATA_DIR")  # folders the kernels read from the environment
# Folders of a profile directory hb run writes into; each must be writable before anything runs.
OUTPUT_FOLDERS = ("figures", "tables", "claims", "readings", "notebooks", "html", "failed")
STOP_GRACE_S = 3.0  # how long a worker may take to stop after SIGTERM before it is killed
EXIT_INTERRUPTED = 130


def check_writable(wb: Workbook, profile_dir: Path) -> None:
    """Create ``profile_dir`` and make sure it and its output folders take new files; otherwise a
    one-line ``WorkbookError`` naming the folder (nothing has run)."""
    def refuse(folder: Path, why: str):
        raise WorkbookError(f"cannot write to {wb.rel(folder)}: {why}; nothing was run (fix it, or write "
                            "elsewhere with --outputs DIR)")

    try:
        profile_dir.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        refuse(profile_dir, "it is a file, not a folder")
    except NotADirectoryError:
        refuse(profile_dir, "a file is in the way of that path")
    except OSError as exc:
        refuse(profile_dir, (exc.strerror or one_line(exc)).lower())
    for folder in (profile_dir, *(profile_dir / sub for sub in OUTPUT_FOLDERS)):
        if folder.exists() and not folder.is_dir():
            refuse(folder, "it is a file, not a folder")
        if not folder.is_dir():
            continue
        probe = None
        try:
            fd, probe = tempfile.mkstemp(prefix=".hb-probe.", dir=folder)
            with os.fdopen(fd, "wb") as fh:  # one byte: an empty file is created even on a full disk
                fh.write(b"x")
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            refuse(folder, (exc.strerror or one_line(exc)).lower())
        finally:
            if probe is not None:
                Path(probe).unlink(missing_ok=True)


@contextmanager
def exclusive_profile_dir(wb: Workbook, profile_dir: Path):
    """Hold an exclusive lock on ``profile_dir`` while a run writes into it.

    Two runs writing the same figures, tables and manifest would interleave their files; the second
    one stops with a one-line error instead. The lock is an advisory ``flock`` on a hidden file, so
    the operating system releases it when the process ends, even after a crash (no stale locks)."""
    try:
        import fcntl
    except ImportError:  # no flock on this platform: run unguarded
        yield
        return
    path = profile_dir / ".hb-run.lock"
    try:
        handle = open(path, "a+")
    except OSError as exc:  # a folder of that name, or no room for the file
        why = "it is a folder; remove it" if path.is_dir() else (exc.strerror or one_line(exc)).lower()
        raise WorkbookError(f"cannot lock {wb.rel(path)}: {why}; nothing was run") from None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise WorkbookError(f"another hb run (pid {holder}) is writing to {wb.rel(profile_dir)}; wait for it "
                                f"to finish or give this run its own folder with --outputs DIR") from None
        _write_holder(handle, str(os.getpid()))
        try:
            yield
        finally:
            _write_holder(handle, "")
            fcntl.flock(handle, fcntl.LOCK_UN)


def _write_holder(handle, text: str) -> None:
    """The lock file says which process holds it, when the disk has room for that (the lock itself,
    ``flock``, needs none)."""
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(text)
        handle.flush()
    except OSError:
        pass


EXPECTED_FILE = "expected_seconds.json"


def expected_seconds(wb: Workbook, profile: str) -> dict[str, float]:
    """Expected wall seconds per notebook: the larger of ``params/<profile>/expected_seconds.json`` (committed,
    measured from an empty cache) and the wall time of the last successful run in this profile's
    ``manifest.json`` (a run from a warm cache takes seconds, so it may only raise the estimate)."""
    expected: dict[str, float] = {}
    try:
        expected.update({str(k): float(v) for k, v in _expected_file(wb, profile).items() if not str(k).startswith("_")})
    except (ValueError, TypeError):
        pass
    try:
        manifest = json.loads((wb.profile_dir(profile) / "manifest.json").read_text(encoding="utf-8"))
        for name, entry in manifest.get("notebooks", {}).items():
            if entry.get("status") == "ok" and entry.get("wall_time_s") is not None:
                expected[name] = max(expected.get(name, 0.0), float(entry["wall_time_s"]))
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    return expected


def start_after(wb: Workbook, profile: str) -> dict[str, list[str]]:
    """``"_after"`` of ``params/<profile>/expected_seconds.json``: notebook -> the notebooks whose cached grid
    results it re-uses, so it starts only when those (when selected in the same run) have finished."""
    try:
        return {str(k): [str(x) for x in v] for k, v in dict(_expected_file(wb, profile).get("_after", {})).items()}
    except (ValueError, TypeError):
        return {}


def _expected_file(wb: Workbook, profile: str) -> dict:
    """``params/<profile>/expected_seconds.json`` as a dict; empty when it is missing or not a JSON object
    (the schedule is only an optimisation, so a bad file must not stop a run)."""
    try:
        data = json.loads((wb.params_dir / profile / EXPECTED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def next_startable(pending: list[str], running: set[str], after: dict[str, list[str]]) -> str | None:
    """The first of ``pending`` none of whose ``after`` notebooks is pending or running; when every pending
    notebook waits and nothing runs (a cycle), the first one."""
    waiting = set(pending) | set(running)
    for name in pending:
        if not any(dep in waiting and dep != name for dep in after.get(name, ())):
            return name
    return pending[0] if pending and not running else None


def longest_first(names: list[str], expected: dict[str, float]) -> list[str]:
    """``names`` in the order to start them on several workers: unknown cost first, then longest expected
    first (the greedy longest-processing-time schedule); ties keep the given order."""
    return sorted(names, key=lambda n: (n in expected, -expected.get(n, 0.0)))


def kernel_environment(wb: Workbook, cluster: str | None = None, base: dict | None = None) -> dict:
    """The environment of the worker processes and so of the notebooks' kernels."""
    env = dict(os.environ if base is None else base)
    if not env.get(CACHE_ENV):
        env[CACHE_ENV] = str(wb.cache_dir)
    for key in PATH_ENVS:  # the kernels run in notebooks/: a relative folder means one from where hb was called
        if env.get(key) and not Path(env[key]).is_absolute():  # "cache" or "~/cache"
            env[key] = str(Path(env[key]).expanduser().resolve())
    if cluster:
        env[CLUSTER_ENV] = cluster
    if wb.catalogue_file is not None:
        env["HB_CATALOGUE"] = str(wb.catalogue_file)
    # A kernel pool is a run's own: an hb run started from a kernel of another run does not use that run's pool.
    env.pop(kernel_pool.SOCKET_ENV, None)
    # Quieter kernels: no jupyter path-migration notice, no debugger frozen-modules warning.
    env.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    return env


def run(wb: Workbook, profile: str, only: list[str] | None = None, jobs: int = 1,
        argv: list[str] | None = None, out=None, cluster: str | None = None) -> int:
    """Validate, execute, and write the reports. Returns the exit status: 0 when every notebook
    succeeded, 1 when some failed, 130 when interrupted. Raises ``WorkbookError`` (nothing run) on
    user mistakes, an unwritable outputs folder, and when another run writes the same folder."""
    if jobs < 1:
        raise WorkbookError(f"--jobs={jobs} is not allowed: expected an integer >= 1")
    names = wb.select(only)
    plans = plan_run(wb, profile, names)
    if not plans:
        print(f"no notebooks in {wb.notebooks_dir}; nothing to run", file=out or sys.stdout)
        return 0
    if cluster:  # before any notebook starts: a wrong address hung, or asked dask for 3.07 EiB
        workers = check_scheduler(cluster)
        print(f"cluster {cluster}: a dask scheduler with {workers} worker(s)", file=out or sys.stdout)
    profile_dir = wb.profile_dir(profile)
    check_writable(wb, profile_dir)
    with exclusive_profile_dir(wb, profile_dir):
        return _Run(wb, profile, plans, jobs, argv, out or sys.stdout, cluster).go()


class _Run:
    """One locked run of ``plans``; see the module docstring."""

    def __init__(self, wb: Workbook, profile: str, plans: list[Plan], jobs: int, argv, out, cluster):
        self.wb, self.profile, self.plans, self.jobs, self.argv, self.out = wb, profile, plans, jobs, argv, out
        self.cluster = cluster
        self.profile_dir = wb.profile_dir(profile)
        self.running_dir = self.profile_dir / ".running"
        self.env = kernel_environment(wb, cluster)
        self.git, self.packages = git_state(wb.root), package_versions()
        self.results: list[Result] = []
        self.running: dict[str, tuple[subprocess.Popen, Task, Path, Path]] = {}
        self.stop_signal: int | None = None
        self.disk_full: str | None = None  # one line naming the full disk, once a write failed for space
        self.index_path: Path | None = None
        self.claim_problems: list[str] = []

    # ----------------------------------------------------------------- the loop

    def go(self) -> int:
        from ..progress import tqdm

        dump_on_signal()  # kill -USR1: where hb run is (workbook/stacks.py)
        shutil.rmtree(self.running_dir, ignore_errors=True)  # leftovers of a killed run
        remove_leftovers(self.profile_dir)
        try:
            install_assets(self.profile_dir)  # MathJax beside the pages, so they work offline
        except (ImportError, OSError) as exc:
            print(f"hb: warning: formulas will not render in the pages: MathJax not copied ({first_error(exc)})",
                  file=sys.stderr)
        runnable = [p for p in self.plans if p.problem is None]
        after: dict[str, list[str]] = {}
        if self.jobs > 1 and (self.wb.params_dir / self.profile / EXPECTED_FILE).is_file():
            order = longest_first([p.name for p in runnable], expected_seconds(self.wb, self.profile))
            runnable.sort(key=lambda p: order.index(p.name))  # the plans' names are unique
            after = start_after(self.wb, self.profile)
        pending = deque(runnable)
        t0 = time.perf_counter()
        previous = self._catch_signals()
        pool = None
        if kernel_pool.wanted(self.env, len(runnable)):  # the kernels' imports done once (kernel_pool)
            pool = kernel_pool.KernelPool(self.env, self.wb.notebooks_dir)
            self.env = {**self.env, kernel_pool.SOCKET_ENV: pool.socket}
        try:
            with tqdm(total=len(self.plans), desc=f"hb run {self.profile}", unit="notebook", file=sys.stderr) as bar:
                self.bar = bar
                for plan in self.plans:
                    if plan.problem is not None:  # unreadable: reported as failed, the others run
                        self._record(plan, Result(plan.name, "failed", 0.0, now(), error=plan.problem))
                try:
                    while (pending or self.running) and self.stop_signal is None and self.disk_full is None:
                        while pending and len(self.running) < self.jobs and self.stop_signal is None \
                                and self.disk_full is None:
                            name = next_startable([p.name for p in pending], set(self.running), after)
                            if name is None:
                                break
                            plan = next(p for p in pending if p.name == name)
                            pending.remove(plan)
                            bar.set_postfix_str(plan.name)
                            self._start(plan)
                        self._collect()
                        time.sleep(0.05)
                except OSError as exc:  # a write of hb run's own (task file, a move, a report) found no space
                    if not is_disk_full(exc):
                        raise
                    self.disk_full = f"{disk_full_text(self.profile_dir, self.wb.rel(self.profile_dir))}: {exc}"
                if self.stop_signal is not None:
                    return self._stop(len(pending))
                if self.disk_full is not None:
                    return self._stop(len(pending), why=self.disk_full)
        finally:
            self._restore_signals(previous)
            shutil.rmtree(self.running_dir, ignore_errors=True)
            problem = pool.close() if pool is not None else None
            if problem:
                print(f"hb: warning: {problem}; the kernels started without it", file=sys.stderr)
        failed = [r.name for r in self.results if r.status != "ok"]
        if self.index_path is None:
            self._write_reports()
        for problem in self.claim_problems:  # the ledger's: an id not catalogued, recorded twice, a damaged file
            print(f"hb: error: claims: {problem}", file=sys.stderr)
        print(f"{self.profile}: {len(self.results)} notebook(s), {len(self.results) - len(failed)} ok, "
              f"{len(failed)} failed{' (' + ', '.join(failed) + ')' if failed else ''} in "
              f"{time.perf_counter() - t0:.1f} s; see {self.index_path}", file=self.out)
        return 1 if failed or self.claim_problems else 0

    def _catch_signals(self):
        """Ctrl-C (and SIGTERM) set a flag the loop reads between steps, so a swap of outputs or a
        report being written is never cut in half."""
        if threading.current_thread() is not threading.main_thread():
            return None

        def stop(signum, _frame):
            if self.stop_signal is None:
                self.stop_signal = signum

        return {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}

    @staticmethod
    def _restore_signals(previous) -> None:
        for s, handler in (previous or {}).items():
            signal.signal(s, handler)

    # ----------------------------------------------------------------- one notebook

    def _start(self, plan: Plan) -> None:
        task = Task(plan.name, str(self.wb.notebook_path(plan.name)), str(self.wb.notebooks_dir),
                    str(self.profile_dir), self.profile, plan.overrides,
                    progress_bar=self.jobs == 1 and sys.stderr.isatty())
        self.running_dir.mkdir(parents=True, exist_ok=True)
        task_file = self.running_dir / f"{plan.name}.task"
        result_file = self.running_dir / f"{plan.name}.result"
        log_file = self.running_dir / f"{plan.name}.worker.log"
        with open(task_file, "wb") as fh:
            pickle.dump(task, fh)
        with open(log_file, "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "horizonbandits.workbook.worker", str(task_file), str(result_file),
                 str(os.getpid())],
                env=self.env, start_new_session=True, stdin=subprocess.DEVNULL, stdout=log,
                stderr=None if task.progress_bar else log)
        self.running[plan.name] = (proc, task, result_file, log_file)
        timing.switch("hb loop")

    def _collect(self) -> None:
        for name in list(self.running):
            proc, task, result_file, log_file = self.running[name]
            if proc.poll() is None:
                continue
            del self.running[name]
            try:
                with open(result_file, "rb") as fh:
                    result = pickle.load(fh)
            except (OSError, EOFError, pickle.UnpicklingError):
                tail = log_file.read_text(errors="replace").splitlines()[-8:] if log_file.exists() else []
                why = ("OSError: [Errno 28] No space left on device (the worker could not save its result)"
                       if proc.returncode == EXIT_DISK_FULL else
                       f"the worker process ended with status {proc.returncode} without a result")
                result = Result(name, "failed", 0.0, now(), traceback_tail=[f"worker: {ln}" for ln in tail], error=why)
            else:  # the worker finished the notebook; its page is rendered here, once per hb run's process
                with timing.part("page"):
                    result = render_staged_page(task, result)
            records = recorded_outputs(read_manifest(self.profile_dir / "manifest.json"))
            with timing.part("report"):
                result = adopt_outputs(task, result, records)
            plan = next(p for p in self.plans if p.name == name)
            self._record(plan, result)

    def _record(self, plan: Plan, result: Result) -> None:
        if result.status != "ok" and mentions_disk_full(result.error):  # the error raised, not the code shown
            where = disk_full_text(self.profile_dir, self.wb.rel(self.profile_dir))
            result.disk_full = True
            result.error = f"{where}: {result.error}"
            self.disk_full = self.disk_full or where
        if mentions_disk_full(result.html_error):
            where = disk_full_text(self.profile_dir, self.wb.rel(self.profile_dir))
            result.html_error = f"{where}: {result.html_error}"
            self.disk_full = self.disk_full or where
        self.results.append(result)
        if result.status == "ok":
            self.bar.write(f"ok      {result.name} ({result.wall_time_s:.1f} s)", file=self.out)
        else:
            self.bar.write("\n".join(describe_failure(result)), file=self.out)
        if result.html_error:
            self.bar.write(f"{result.name}: could not render HTML: {result.html_error}", file=self.out)
        self._write_reports()
        self.bar.update(1)

    def _write_reports(self) -> None:
        with timing.part("report"):
            self._write_reports_now()

    def _write_reports_now(self) -> None:
        _, self.index_path, self.claim_problems = write_reports(
            self.wb, self.profile, self.plans, self.results, merge=True, argv=self.argv, git=self.git,
            packages=self.packages, cluster=self.cluster)

    # ----------------------------------------------------------------- interrupt

    def _stop(self, n_pending: int, why: str | None = None) -> int:
        """Stop every running worker (each kills its kernel), keep every previous output, say so.
        ``why``: the full disk that stopped the run (exit status 1), else the signal received."""
        stopped = sorted(self.running)
        for proc, *_ in self.running.values():
            _signal_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for proc, *_ in self.running.values():
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(proc, signal.SIGKILL)
                proc.wait()
        self.running.clear()
        self.bar.close()
        done = len(self.results)
        if why is not None:
            print(f"hb: error: {why}; stopped {', '.join(stopped) if stopped else 'no running notebook'}, "
                  f"{len(stopped) + n_pending} notebook(s) did not run; manifest.json and index.html are those of the "
                  "last state that could be written whole, with every previous figure and table", file=sys.stderr)
            return 1
        print(f"hb: interrupted: stopped {', '.join(stopped) if stopped else 'no running notebook'}; "
              f"{done} notebook(s) finished and are recorded, {len(stopped) + n_pending} did not run "
              f"(their previous outputs are kept)", file=sys.stderr)
        return EXIT_INTERRUPTED if self.stop_signal == signal.SIGINT else 128 + int(self.stop_signal)


def remove_leftovers(profile_dir: Path) -> list[Path]:
    """Remove the temporary files a killed run left in the folders only hb run writes (the profile
    folder itself, ``notebooks/``, ``html/``, ``failed/``, ``claims/``): ``.manifest.*.json.tmp`` and
    the like (``outputs.atomic_write``) and ``.hb-probe.*`` (``check_writable``). Called under the
    profile lock, so no other run is writing them."""
    removed = []
    for folder in (profile_dir, *(profile_dir / sub for sub in ("notebooks", "html", "failed", "claims"))):
        for path in folder.glob(".*") if folder.is_dir() else ():
            if path.is_file() and not path.is_symlink() and (path.name.endswith(".tmp")
                                                             or path.name.startswith(".hb-probe.")):
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def first_error(exc: BaseException) -> str:
    """One short line for ``exc``; ``shutil.copytree``'s error lists every file that failed (megabytes
    of text when the disk is full), so only its first reason is kept."""
    if isinstance(exc, shutil.Error) and exc.args and isinstance(exc.args[0], list) and exc.args[0]:
        first = exc.args[0][0]
        reason = first[-1] if isinstance(first, tuple) else first
        more = len(exc.args[0]) - 1
        return one_line(reason)[:200] + (f" and {more} more file(s)" if more else "")
    return one_line(exc)[:300]


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
