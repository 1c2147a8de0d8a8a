"""Executing one notebook: papermill into a staging folder, then the swap into the profile folder.

A notebook runs in a worker process of its own (``python -m horizonbandits.workbook.worker``), so
``hb run`` can stop it at once on Ctrl-C. Its ``output_dir`` is a staging folder,
``<profile>/.running/<name>/out/<profile>``; only when the run succeeds does
:func:`adopt_outputs` move its figures, tables and claims into the profile folder, replacing the
previous run's. A failed, interrupted or killed run leaves the previous outputs as they were.

Ownership is exact: the files a notebook owns are the ones its last successful run wrote, listed
in the manifest (``outputs`` of its entry; the staging folder shows exactly what a run wrote), not
guessed from file names (the longest notebook name prefixing a file: a notebook named
``horizon_dependence_regret`` then owned ``horizon_dependence``'s ``horizon_dependence_regret.png``
and deleted it). A run that writes a file another notebook owns fails instead of overwriting it.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import timing
from ..outputs import atomic_write_text
from .base import KERNEL_NAME, PACKAGE_DIR, now, one_line, readable, unlink
from .literals import literal_problem

# Names in the profile directory that hb run's own bookkeeping owns; a notebook's files go elsewhere.
RESERVED = ("notebooks", "html", "failed", ".running", "_static", "manifest.json", "index.html", "claims.csv",
            "readings.csv", ".hb-run.lock")


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
        # Named like the profile, so a Ledger (profile = the folder's name) records the right one.
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
    outputs: list[str] | None = None  # files the run wrote (relative to the profile folder) when it succeeded
    disk_full: bool = False  # the run failed because the disk was full (``error`` then names it)


# Errors the library raises with a message that says it all: hb run prints that line, no traceback.
ONE_LINE_ERRORS = ("ValueError", "ClusterError", "ClaimsError")  # ClaimsError: an id the catalogue lacks
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


def ownable(rel: str) -> bool:
    """Whether ``rel`` (from a manifest, which may have been edited) names a notebook's file inside the
    profile folder: relative, no ``..``, not hidden, not one of hb run's own names."""
    parts = Path(rel).parts
    return bool(parts) and not Path(rel).is_absolute() and ".." not in parts and parts[0] not in RESERVED \
        and not any(p.startswith(".") for p in parts)


def owner_of(rel: str, records: dict[str, list[str]]) -> str | None:
    """The notebook whose last successful run wrote ``rel`` (``records``: name -> its files), or None."""
    return next((name for name, files in records.items() if rel in files), None)


# --------------------------------------------------------------------------- in the worker process

_KERNELS: list = []  # kernel managers started by this worker, so a stop request can kill them
# Whether kernels talk over Unix sockets (ZeroMQ's ipc transport; Linux and macOS) instead of TCP ports on localhost;
# HB_KERNEL_TRANSPORT=tcp for the TCP ports jupyter_client uses by default.
IPC_TRANSPORT = os.name == "posix" and os.environ.get("HB_KERNEL_TRANSPORT", "ipc") == "ipc"


def _zmq_has_ipc() -> bool:
    import zmq

    return bool(zmq.has("ipc"))


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
    of the terminal ``hb`` draws on, which remembers its kernels so they can be killed, and whose kernels
    come from ``hb run``'s kernel pool when there is one (``kernel_pool``)."""
    from jupyter_client.manager import AsyncKernelManager

    from .kernel_pool import client_command

    class KernelManagerWithLog(AsyncKernelManager):
        async def start_kernel(self, **kw):
            kw.setdefault("stderr", log)
            _KERNELS.append(self)
            if IPC_TRANSPORT and _zmq_has_ipc():
                # The kernel's five channels on Unix sockets in a folder of its own, not on TCP ports: a free port
                # is only free until someone binds it, and two kernels started at once (hb run's two jobs, another
                # run, a test suite) could be handed the same one ("Address already in use": the kernel died
                # before replying; seen once in 10 smoke runs beside the test suite, 2026-12-05).
                self._ipc_dir = tempfile.mkdtemp(prefix="hb-zmq-")
                self.transport, self.ip = "ipc", os.path.join(self._ipc_dir, "k")
            with timing.part("kernel launch"):
                return await super().start_kernel(**kw)

        async def shutdown_kernel(self, *a, **kw):
            try:
                with timing.part("teardown"):
                    return await super().shutdown_kernel(*a, **kw)
            finally:
                if getattr(self, "_ipc_dir", None):
                    shutil.rmtree(self._ipc_dir, ignore_errors=True)

        def format_kernel_cmd(self, extra_arguments=None):
            # Through hb run's kernel pool when it has one: the kernel is forked there, imports done.
            return client_command(super().format_kernel_cmd(extra_arguments))

    return KernelManagerWithLog


def execute_notebook(task: Task, render_page: bool = True) -> Result:
    """Run one notebook with papermill (kernel python3, cwd = notebooks/, ``output_dir`` = the
    staging folder; the kernel is killed once its last cell has answered), then render it to HTML beside
    it (unless ``render_page`` is false: ``hb run``'s worker leaves that to ``hb run``, see
    :func:`render_staged_page`). Never raises for a failing notebook: the failure is described in the
    returned ``Result``. The caller adopts the staged files."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    shutil.rmtree(task.staging, ignore_errors=True)
    task.staged_outputs.mkdir(parents=True)
    kernel_log = task.staging / "kernel.log"
    result = Result(task.name, "ok", 0.0, now())
    # hb run checked the parameters; this is the last gate before papermill writes them as code.
    refused = literal_problem(task.overrides)
    if refused is not None:
        result.status, result.error = "failed", f"parameters refused: the overrides {refused}"
        return result
    t0 = time.perf_counter()
    timing.switch("papermill")
    with open(kernel_log, "wb") as log:
        try:
            papermill.execute_notebook(
                task.notebook, str(task.staged_notebook),
                parameters=dict(task.overrides, output_dir=str(task.staged_outputs)),
                kernel_name=KERNEL_NAME, cwd=task.cwd, progress_bar=task.progress_bar,
                log_output=False, request_save_on_cell_execute=True,
                # Killed (its process group: any worker processes of its own) once its last cell has
                # answered: every file a cell writes is written, atomically, before the cell answers, and
                # the executed notebook is the worker's; a graceful shutdown cost ~1 CPU-s (2026-12-03).
                shutdown_kernel="immediate",
                kernel_manager_class=_kernel_manager_logging_to(log),
                extra_arguments=["--IPKernelApp.log_level=ERROR", *timing_arguments()])  # no TCP notice in the log
        except PapermillExecutionError as exc:
            tail = _ANSI.sub("", "\n".join(exc.traceback or []))
            result.status = "failed"
            result.error = f"{exc.ename}: {' '.join(str(exc.evalue).split())}"
            result.failed_cell = exc.exec_count
            result.library_error = exc.ename in ONE_LINE_ERRORS and _raised_in_library(tail)
            # drop blank context lines ("      3 ") so the tail shows code and messages
            result.traceback_tail = [ln for ln in tail.splitlines() if not re.fullmatch(r"\s*\d*\s*", ln)][-8:]
        except Exception as exc:  # the kernel died, could not start, timed out...
            result.status = "failed"
            result.error = f"{type(exc).__name__}: {one_line(exc)}"
            log.flush()
            lines = kernel_log.read_text(encoding="utf-8", errors="replace").splitlines()
            result.traceback_tail = [f"kernel: {ln}" for ln in lines if ln.strip()][-8:]
    result.wall_time_s = round(time.perf_counter() - t0, 3)
    timing.switch("page")
    return finish_staged_notebook(task, result, render_page=render_page)


def timing_arguments() -> list[str]:
    """With ``$HB_TIMINGS`` set, the kernel's option that loads ``horizonbandits.timing`` by its path before the
    first cell (so importing it costs no package import; a kernel of the pool has it) and marks the kernel's
    parts; else none."""
    if not timing.enabled():
        return []
    # A kernel forked by the kernel pool has the module already (reset by ``timing.forked``): the one the
    # package's modules imported there, so their parts (figures, compute) are counted by the same module.
    code = ("import importlib.util as _u, sys as _s; _m = _s.modules.get('horizonbandits.timing'); "
            f"_p = None if _m else _u.spec_from_file_location('horizonbandits.timing', {timing.__file__!r}); "
            "_m = _s.modules['horizonbandits.timing'] = _m or _u.module_from_spec(_p); "
            "_p and _p.loader.exec_module(_m); _m.kernel_ready(); del _u, _s, _p, _m")
    return [f"--IPKernelApp.exec_lines={code}"]


def finish_staged_notebook(task: Task, result: Result, render_page: bool = True) -> Result:
    """Point the executed notebook at the profile folder and (``render_page``) render its page. A notebook
    that cannot be read back whole (papermill writes it in place: on a full disk it is cut short) is
    deleted and the run counts as failed, so no truncated ``failed/<name>.ipynb`` is ever kept."""
    staged = task.staged_notebook
    if staged.exists():
        try:  # reads it whole
            _point_at_profile(staged, task.staged_outputs, Path(task.profile_dir))
        except Exception as exc:  # noqa: BLE001 - a notebook that cannot be read back is not kept
            unlink(staged)
            why = f"the executed notebook could not be saved whole ({type(exc).__name__}: {one_line(exc)[:200]})"
            if result.status == "ok":
                result.status, result.error = "failed", why
            result.traceback_tail.append(why)
            return result
        if render_page:
            render_staged_page(task, result)
    return result


def render_staged_page(task: Task, result: Result) -> Result:
    """Render the staged executed notebook's page beside it (``staged_html``), if the notebook is there; a
    rendering problem goes to ``result.html_error`` and never hides the run's own result.

    ``hb run`` calls this in its own process when a worker has ended, not the worker: nbconvert's import and
    a process's first page (pygments', mistune's and bleach's regular expressions compiled) are paid once per
    ``hb run`` instead of once per notebook; in a run of all 19 notebooks the page and reports went from 0.99
    to 0.69 CPU-s per notebook (a page itself costs 0.4 to 1.1 CPU-s, as before; measured 2026-12-04). The
    page is the same either way."""
    if task.staged_notebook.exists():
        try:
            render_html(task.staged_notebook, task.staged_html, Path(task.cwd))
        except Exception as exc:  # noqa: BLE001 - a rendering problem must not hide the run's own result
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


def adopt_outputs(task: Task, result: Result, records: dict[str, list[str]]) -> Result:
    """Move a finished run's files from the staging folder into the profile folder.

    ``records``: for each notebook, the files its last successful run wrote (the manifest's
    ``outputs``). Success: the new figures, tables and claims replace the notebook's previous ones
    (new files are moved in first, then the files of its record that the new run did not rewrite are
    removed, so an interruption in between leaves a mix, never nothing), ``result.outputs`` lists
    what it wrote, and the executed notebook and its HTML go to ``notebooks/`` and ``html/``. A run
    that wrote a file another notebook's record holds fails with one line, and nothing of it is
    adopted. Failure: the executed notebook goes to ``failed/`` (when it is a whole notebook) and
    every previous output stays. The staging folder is removed either way."""
    profile_dir = Path(task.profile_dir)
    name = task.name
    try:
        if result.status == "ok":
            written = [src.relative_to(task.staged_outputs).as_posix()
                       for src in sorted(p for p in task.staged_outputs.rglob("*") if p.is_file())]
            written = [rel for rel in written if ownable(rel)]
            others = {n: files for n, files in records.items() if n != name}
            clash = next(((rel, owner) for rel in written if (owner := owner_of(rel, others))), None)
            if clash is not None:
                result.status = "failed"
                result.error = (f"it wrote {clash[0]}, which notebook {clash[1]!r} wrote in its last run; nothing of "
                                f"this run was kept (give the file a name that starts with {name!r})")
        if result.status == "ok":
            for rel in written:
                _move(task.staged_outputs / rel, profile_dir / rel)
            for rel in sorted(set(records.get(name, ())) - set(written)):
                if ownable(rel):
                    (profile_dir / rel).unlink(missing_ok=True)
            result.outputs = written
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
    user's out-of-range parameter) or a full disk, else the failing cell's error and a short
    traceback tail."""
    if res.library_error or res.disk_full:
        return [f"{res.name}: {res.error}"]
    cell = f" in cell [{res.failed_cell}]" if res.failed_cell is not None else ""
    lines = [f"{res.name}: failed{cell}: {res.error}"]
    lines += [f"    | {ln}" for ln in res.traceback_tail]
    if res.executed:
        lines.append(f"    (partial output: {res.executed})")
    return lines
