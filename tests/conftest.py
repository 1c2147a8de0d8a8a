"""Shared test helpers: a throwaway copy of the fixture workbook and a way to run ``hb``."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURE_WORKBOOK = Path(__file__).resolve().parent / "fixtures" / "workbook"


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (a zombie has stopped computing); Linux (/proc)."""
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in state


def gone_within(pids, seconds: float = 10.0) -> bool:
    """Wait up to ``seconds`` for every process of ``pids`` to be gone (or a zombie); whether they are."""
    deadline = time.monotonic() + seconds
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(alive(p) for p in pids)


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, their children, ...), from /proc; Linux."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def catches_sigusr1(pid: int) -> bool:
    """Whether process ``pid`` has a handler for SIGUSR1 (its mask of caught signals in /proc)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next((ln.split()[1] for ln in status.splitlines() if ln.startswith("SigCgt:")), "0")
    return bool(int(mask, 16) >> (signal.SIGUSR1 - 1) & 1)


def where_stuck(pid: int, tail_chars: int = 6000) -> str:
    """For a run that does not end: ask ``pid`` and every process below it for their stacks (SIGUSR1,
    horizonbandits/workbook/stacks.py), then each one's command line and the end of the log file its standard
    error goes to (a worker's, the kernel pool's, a kernel's), where the stacks were written."""
    procs = [pid, *descendants(pid)]
    for p in procs:
        if catches_sigusr1(p):  # one that does not would end (the signal's default)
            try:
                os.kill(p, signal.SIGUSR1)
            except OSError:
                pass
    time.sleep(3)
    lines, logs = [], []
    for p in procs:
        try:
            cmd = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:300]
            state = next((ln for ln in Path(f"/proc/{p}/status").read_text().splitlines() if ln.startswith("State")), "")
            log = os.readlink(f"/proc/{p}/fd/2")
        except OSError:
            continue
        lines.append(f"pid {p} ({state.split(':', 1)[-1].strip()}): {cmd}  [stderr -> {log}]")
        if log.endswith(".log") and log not in logs:
            logs.append(log)
    for log in logs:
        try:
            text = Path(log).read_text(errors="replace")
        except OSError:
            continue
        lines += [f"----- {log} (last {tail_chars} characters)", text[-tail_chars:]]
    return "\n".join(lines)


def run_hb(*args, timeout: float = 1800, stuck_when=None) -> subprocess.CompletedProcess:
    """Run ``hb ARGS`` in a fresh interpreter, as a user would, and capture its output. A run that has not
    ended after ``timeout`` seconds fails the test with where each of its processes is (:func:`where_stuck`);
    so does one for which ``stuck_when()`` (asked every half second) turns true before it ends."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HB_ROOT", "HB_OUTPUTS", "HB_CACHE_DIR", "HB_DASK_ADDRESS")}
    cmd = [sys.executable, "-m", "horizonbandits.cli", *map(str, args)]
    start = time.monotonic()
    deadline = start + timeout
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    try:
        while True:
            left = max(0.01, deadline - time.monotonic())
            try:
                out, err = proc.communicate(timeout=min(left, 0.5) if stuck_when else left)
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline or (stuck_when is not None and stuck_when()):
                    raise
    except subprocess.TimeoutExpired:
        waited = time.monotonic() - start
        report = where_stuck(proc.pid)
        for p in [proc.pid, *descendants(proc.pid)]:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        out, err = proc.communicate()
        pytest.fail(f"hb {' '.join(map(str, args))} had not ended after {waited:.0f} s; its processes:\n{report}\n"
                    f"----- its stdout\n{out[-4000:]}\n----- its stderr (hb run's own stacks at the end)\n{err[-8000:]}",
                    pytrace=False)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def copy_fixture_workbook(dest: Path) -> Path:
    """A private copy of tests/fixtures/workbook (notebooks/ and params/) at ``dest``."""
    shutil.copytree(FIXTURE_WORKBOOK, dest)
    return dest


@pytest.fixture
def fixture_workbook(tmp_path) -> Path:
    return copy_fixture_workbook(tmp_path / "workbook")


@pytest.fixture(scope="session")
def hb_subprocess():
    """``run_hb``: run the hb command in a subprocess."""
    return run_hb


@pytest.fixture(scope="session")
def copy_workbook():
    """``copy_fixture_workbook``: for fixtures of wider scope than ``tmp_path``."""
    return copy_fixture_workbook


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster():
    """A scheduler and one single-threaded worker on localhost; yields (address, client)."""
    from distributed import Client
    address = f"tcp://127.0.0.1:{free_port()}"
    env = {k: v for k, v in os.environ.items() if k != "HB_DASK_ADDRESS"}
    quiet = dict(env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", address.rsplit(":", 1)[1], "--no-dashboard"], **quiet)]
    try:
        procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nworkers", "1",
                                       "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"], **quiet))
        deadline = time.monotonic() + 60
        while True:
            try:
                client = Client(address, timeout=5)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        client.wait_for_workers(1, timeout=60)
        yield address, client
        client.close()
    finally:
        from horizonbandits.compute import close_dask_clients
        close_dask_clients()
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def executed(client) -> int:
    """Tasks the cluster's workers have run so far."""
    return sum(client.run(lambda dask_worker: dask_worker.state.executed_count).values())
