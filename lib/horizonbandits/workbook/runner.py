"""``hb run``: check, lock the profile folder, execute the notebooks in worker processes, report.

- Nothing runs unless every selected notebook's parameter file is valid and the outputs folder
  can be written (one line naming the folder otherwise).
- Each notebook runs in a worker process of its own session (``worker.py``): the terminal's Ctrl-C
  reaches this process only, which then stops every running worker (SIGTERM, SIGKILL after a
  grace period), starts nothing new, prints one line and returns 130.
- After each notebook: its outputs are adopted (only a success replaces the previous ones) and
  ``manifest.json``, ``claims.csv`` and ``index.html`` are rewritten, so an interrupted run keeps
  what finished.
- With ``--jobs N`` > 1, in a profile that has ``params/<profile>/expected_seconds.json`` (the paper
  profile), the notebooks start longest first (``longest_first``: the larger of that file's wall times
  and this profile's last manifest's; a notebook known to neither
  starts first, since it may be long), so the long ones do not start last and leave a core idle; a
  notebook listed under ``"_after"`` there waits for the notebooks whose cached results it re-uses. The
  numbers a notebook computes do not depend on the order. Without that file the notebooks start in the
  order given.
- Kernels see ``HB_CACHE_DIR`` (the outputs folder's ``cache/`` unless the user set it) and, with
  ``--cluster``, ``HB_DASK_ADDRESS``.
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

from .base import WorkbookError, now, one_line
from .execute import Result, Task, adopt_outputs, describe_failure
from .locate import Workbook
from .pages import install_assets
from .params import Plan, plan_run
from .report import git_state, package_versions, write_reports

CACHE_ENV = "HB_CACHE_DIR"
CLUSTER_ENV = "HB_DASK_ADDRESS"
# Folders of a profile directory hb run writes into; each must be writable before anything runs.
OUTPUT_FOLDERS = ("figures", "tables", "claims", "notebooks", "html", "failed")
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
        try:
            fd, probe = tempfile.mkstemp(prefix=".hb-probe.", dir=folder)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            refuse(folder, (exc.strerror or one_line(exc)).lower())


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
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise WorkbookError(f"another hb run (pid {holder}) is writing to {wb.rel(profile_dir)}; wait for it "
                                f"to finish or give this run its own folder with --outputs DIR") from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)


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
    if cluster:
        env[CLUSTER_ENV] = cluster
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
        self.all_names = wb.names()
        self.env = kernel_environment(wb, cluster)
        self.git, self.packages = git_state(wb.root), package_versions()
        self.results: list[Result] = []
        self.running: dict[str, tuple[subprocess.Popen, Task, Path, Path]] = {}
        self.stop_signal: int | None = None
        self.index_path: Path | None = None

    # ----------------------------------------------------------------- the loop

    def go(self) -> int:
        from ..progress import tqdm

        shutil.rmtree(self.running_dir, ignore_errors=True)  # leftovers of a killed run
        try:
            install_assets(self.profile_dir)  # MathJax beside the pages, so they work offline
        except (ImportError, OSError) as exc:
            print(f"hb: warning: formulas will not render in the pages: MathJax not copied ({one_line(exc)})",
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
        try:
            with tqdm(total=len(self.plans), desc=f"hb run {self.profile}", unit="notebook", file=sys.stderr) as bar:
                self.bar = bar
                for plan in self.plans:
                    if plan.problem is not None:  # unreadable: reported as failed, the others run
                        self._record(plan, Result(plan.name, "failed", 0.0, now(), error=plan.problem))
                while (pending or self.running) and self.stop_signal is None:
                    while pending and len(self.running) < self.jobs and self.stop_signal is None:
                        name = next_startable([p.name for p in pending], set(self.running), after)
                        if name is None:
                            break
                        plan = next(p for p in pending if p.name == name)
                        pending.remove(plan)
                        bar.set_postfix_str(plan.name)
                        self._start(plan)
                    self._collect()
                    time.sleep(0.05)
                if self.stop_signal is not None:
                    return self._stop(len(pending))
        finally:
            self._restore_signals(previous)
            shutil.rmtree(self.running_dir, ignore_errors=True)
        failed = [r.name for r in self.results if r.status != "ok"]
        if self.index_path is None:
            self._write_reports()
        print(f"{self.profile}: {len(self.results)} notebook(s), {len(self.results) - len(failed)} ok, "
              f"{len(failed)} failed{' (' + ', '.join(failed) + ')' if failed else ''} in "
              f"{time.perf_counter() - t0:.1f} s; see {self.index_path}", file=self.out)
        return 1 if failed else 0

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
                result = Result(name, "failed", 0.0, now(), traceback_tail=[f"worker: {ln}" for ln in tail],
                                error=f"the worker process ended with status {proc.returncode} without a result")
            result = adopt_outputs(task, result, self.all_names)
            plan = next(p for p in self.plans if p.name == name)
            self._record(plan, result)

    def _record(self, plan: Plan, result: Result) -> None:
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
        _, self.index_path = write_reports(self.wb, self.profile, self.plans, self.results, merge=True,
                                           argv=self.argv, git=self.git, packages=self.packages,
                                           cluster=self.cluster)

    # ----------------------------------------------------------------- interrupt

    def _stop(self, n_pending: int) -> int:
        """Stop every running worker (each kills its kernel), keep every previous output, say so."""
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
        print(f"hb: interrupted: stopped {', '.join(stopped) if stopped else 'no running notebook'}; "
              f"{done} notebook(s) finished and are recorded, {len(stopped) + n_pending} did not run "
              f"(their previous outputs are kept)", file=sys.stderr)
        return EXIT_INTERRUPTED if self.stop_signal == signal.SIGINT else 128 + int(self.stop_signal)


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
