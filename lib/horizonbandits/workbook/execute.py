"""Executing one notebook: papermill into a staging folder, then the swap into the profile folder.

A notebook runs in a worker process of its own (``python -m horizonbandits.workbook.worker``), so
``hb run`` can stop it at once on Ctrl-C. Its ``output_dir`` is a staging folder,
``<profile>/.running/<name>/out/<profile>``; only when the run succeeds does
:func:`adopt_outputs` move its figures, tables and claims into the profile folder, replacing the
previous run's. A failed, interrupted or killed run leaves the previous outputs as they were.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..outputs import atomic_write_text
from .base import KERNEL_NAME, PACKAGE_DIR, now, one_line, readable, unlink

# Folders of the profile directory the run's own bookkeeping owns; a notebook's files go elsewhere.
RESERVED = ("notebooks", "html", "failed", ".running")


@dataclass
class Task:
    """Everything the worker process needs to run one notebook; pickled to it."""

    name: str
    notebook: str
    cwd: str
    profile_dir: str
    profile: str
    overrides: dict
    progress_bar: bool = False

    @property
    def staging(self) -> Path:
        return Path(self.profile_dir) / ".running" / self.name

    @property
    def staged_outputs(self) -> Path:
        # Named like the profile, so claims.record (profile = the folder's name) records the right one.
        return self.staging / "out" / self.profile

    @property
    def staged_notebook(self) -> Path:
        return self.staging / f"{self.name}.ipynb"

    @property
    def staged_html(self) -> Path:
        return self.staging / f"{self.name}.html"


@dataclass
class Result:
    name: str
    status: str  # "ok" or "failed"
    wall_time_s: float
    started: str
    error: str | None = None  # one line: "ValueError: n_arms=1 is not allowed: ..."
    library_error: bool = False  # a ValueError raised inside horizonbandits (a user's bad value)
    failed_cell: int | None = None
    traceback_tail: list[str] = field(default_factory=list)
    executed: str | None = None  # relative to the profile folder
    html: str | None = None
    html_error: str | None = None


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_FRAME = re.compile(r"^File (.+?):\d+", re.MULTILINE)


def _raised_in_library(traceback_text: str) -> bool:
    """Whether the innermost frame of an IPython traceback lies in the horizonbandits package."""
    frames = _FRAME.findall(traceback_text)
    if not frames:
        return False
    innermost = frames[-1].strip()
    try:
        return Path(innermost).resolve().is_relative_to(PACKAGE_DIR)
    except (OSError, ValueError):
        return False


def owner_of(stem: str, names) -> str | None:
    """The notebook a figure or table belongs to: the longest name ``N`` with ``stem == N`` or
    ``stem`` starting with ``N_`` (notebooks save ``<notebook>_<what>``)."""
    best = None
    for name in names:
        if (stem == name or stem.startswith(name + "_")) and (best is None or len(name) > len(best)):
            best = name
    return best


# --------------------------------------------------------------------------- in the worker process

_KERNELS: list = []  # kernel managers started by this worker, so a stop request can kill them


def kill_kernels() -> None:
    """Kill every kernel this worker started, with its process group (its own worker processes)."""
    for km in _KERNELS:
        provisioner = getattr(km, "provisioner", None)
        pid = getattr(provisioner, "pid", None)
        if not pid:
            continue
        try:
            pgid = os.getpgid(pid)
            if pgid != os.getpgid(0):
                os.killpg(pgid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def stop_with_parent(parent_pid: int) -> None:
    """End this worker (and its kernel) when asked to (SIGTERM) or when ``hb run`` is gone, so no
    notebook keeps computing after an interrupt or after its parent was killed."""
    def stop(*_):
        kill_kernels()
        os._exit(143)

    signal.signal(signal.SIGTERM, stop)

    def watch():
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        stop()

    threading.Thread(target=watch, daemon=True, name="hb-parent-watch").start()


def _kernel_manager_logging_to(log):
    """A kernel manager whose kernels write their stderr (ipykernel's own log) to ``log`` instead
    of the terminal ``hb`` draws on, and which remembers its kernels so they can be killed."""
    from jupyter_client.manager import AsyncKernelManager

    class KernelManagerWithLog(AsyncKernelManager):
        async def start_kernel(self, **kw):
            kw.setdefault("stderr", log)
            _KERNELS.append(self)
            return await super().start_kernel(**kw)

    return KernelManagerWithLog


def execute_notebook(task: Task) -> Result:
    """Run one notebook with papermill (kernel python3, cwd = notebooks/, ``output_dir`` = the
    staging folder), then render it to HTML beside it. Never raises for a failing notebook: the
    failure is described in the returned ``Result``. The caller adopts the staged files."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    shutil.rmtree(task.staging, ignore_errors=True)
    task.staged_outputs.mkdir(parents=True)
    kernel_log = task.staging / "kernel.log"
    result = Result(task.name, "ok", 0.0, now())
    t0 = time.perf_counter()
    with open(kernel_log, "wb") as log:
        try:
            papermill.execute_notebook(
                task.notebook, str(task.staged_notebook),
                parameters=dict(task.overrides, output_dir=str(task.staged_outputs)),
                kernel_name=KERNEL_NAME, cwd=task.cwd, progress_bar=task.progress_bar,
                log_output=False, request_save_on_cell_execute=True,
                kernel_manager_class=_kernel_manager_logging_to(log),
                extra_arguments=["--IPKernelApp.log_level=ERROR"])  # no TCP notice in the log
        except PapermillExecutionError as exc:
            tail = _ANSI.sub("", "\n".join(exc.traceback or []))
            result.status = "failed"
            result.error = f"{exc.ename}: {' '.join(str(exc.evalue).split())}"
            result.failed_cell = exc.exec_count
            result.library_error = exc.ename == "ValueError" and _raised_in_library(tail)
            # drop blank context lines ("      3 ") so the tail shows code and messages
            result.traceback_tail = [ln for ln in tail.splitlines() if not re.fullmatch(r"\s*\d*\s*", ln)][-8:]
        except Exception as exc:  # the kernel died, could not start, timed out...
            result.status = "failed"
            result.error = f"{type(exc).__name__}: {one_line(exc)}"
            log.flush()
            lines = kernel_log.read_text(encoding="utf-8", errors="replace").splitlines()
            result.traceback_tail = [f"kernel: {ln}" for ln in lines if ln.strip()][-8:]
    result.wall_time_s = round(time.perf_counter() - t0, 3)
    staged = task.staged_notebook
    if staged.exists() and staged.stat().st_size > 0:
        _point_at_profile(staged, task.staged_outputs, Path(task.profile_dir))
        try:
            render_html(staged, task.staged_html, Path(task.cwd))
        except Exception as exc:  # a rendering problem must not hide the run's own result
            result.html_error = f"{type(exc).__name__}: {one_line(exc)}"
    return result


def _point_at_profile(ipynb: Path, staged: Path, final: Path) -> None:
    """Rewrite the staging folder's path to the profile folder in the executed notebook (the
    injected ``output_dir`` and any output that printed it): that is where its files end up."""
    import nbformat

    nb = nbformat.read(str(ipynb), as_version=4)
    old, new = str(staged), str(final)
    for cell in nb.cells:
        cell.source = cell.source.replace(old, new)
        for output in cell.get("outputs", []):
            if "text" in output:
                output["text"] = output["text"].replace(old, new)
            for mime, value in output.get("data", {}).items():
                if mime.startswith("text/") and isinstance(value, str):
                    output["data"][mime] = value.replace(old, new)
    for key in ("parameters",):
        params = nb.metadata.get("papermill", {}).get(key, {})
        if params.get("output_dir") == old:
            params["output_dir"] = new
    atomic_write_text(ipynb, nbformat.writes(nb))


def render_html(ipynb: Path, html_path: Path, resources_dir: Path) -> Path:
    """Convert an executed notebook to HTML with its images embedded (see ``pages``: no network)."""
    from .pages import render_notebook_html

    return readable(atomic_write_text(html_path, render_notebook_html(ipynb, resources_dir)))


# --------------------------------------------------------------------------- in hb run, afterwards


def _move(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.replace(readable(src), dest)


def adopt_outputs(task: Task, result: Result, all_names) -> Result:
    """Move a finished run's files from the staging folder into the profile folder.

    Success: the new figures, tables and claims replace the notebook's previous ones (new files
    are moved in first, then the previous files the new run did not rewrite are removed, so an
    interruption in between leaves a mix, never nothing), and the executed notebook and its HTML
    go to ``notebooks/`` and ``html/``. Failure: the executed notebook goes to ``failed/`` and
    every previous output stays. The staging folder is removed either way."""
    profile_dir = Path(task.profile_dir)
    name = task.name
    try:
        if result.status == "ok":
            written = set()
            for src in sorted(p for p in task.staged_outputs.rglob("*") if p.is_file()):
                rel = src.relative_to(task.staged_outputs)
                if rel.parts[0] in RESERVED:
                    continue
                _move(src, profile_dir / rel)
                written.add(rel)
            folders = {rel.parts[0] for rel in written if len(rel.parts) > 1} | {"figures", "tables", "claims"}
            for sub in sorted(folders):
                folder = profile_dir / sub
                for path in folder.iterdir() if folder.is_dir() else []:
                    if (path.is_file() and owner_of(path.stem, all_names) == name
                            and path.relative_to(profile_dir) not in written):
                        path.unlink(missing_ok=True)
            executed, html = profile_dir / "notebooks" / f"{name}.ipynb", profile_dir / "html" / f"{name}.html"
            unlink(profile_dir / "failed" / f"{name}.ipynb", profile_dir / "failed" / f"{name}.html")
        else:
            executed, html = profile_dir / "failed" / f"{name}.ipynb", profile_dir / "failed" / f"{name}.html"
        result.executed = result.html = None
        if task.staged_notebook.exists() and task.staged_notebook.stat().st_size > 0:
            _move(task.staged_notebook, executed)
            result.executed = executed.relative_to(profile_dir).as_posix()
            if task.staged_html.exists():
                _move(task.staged_html, html)
                result.html = html.relative_to(profile_dir).as_posix()
            else:
                unlink(html)
        elif result.status != "ok":
            unlink(executed, html)
    finally:
        shutil.rmtree(task.staging, ignore_errors=True)
    return result


def describe_failure(res: Result) -> list[str]:
    """The lines ``hb run`` prints for a failed notebook: one line for a library ValueError (a
    user's out-of-range parameter), else the failing cell's error and a short traceback tail."""
    if res.library_error:
        return [f"{res.name}: {res.error}"]
    cell = f" in cell [{res.failed_cell}]" if res.failed_cell is not None else ""
    lines = [f"{res.name}: failed{cell}: {res.error}"]
    lines += [f"    | {ln}" for ln in res.traceback_tail]
    if res.executed:
        lines.append(f"    (partial output: {res.executed})")
    return lines
