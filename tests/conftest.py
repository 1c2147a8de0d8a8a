"""Shared test helpers: a throwaway copy of the fixture workbook and a way to run ``hb``."""
from __future__ import annotations

import os
import shutil
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


def run_hb(*args, timeout: float = 1800) -> subprocess.CompletedProcess:
    """Run ``hb ARGS`` in a fresh interpreter, as a user would, and capture its output."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HB_ROOT", "HB_OUTPUTS", "HB_CACHE_DIR", "HB_DASK_ADDRESS")}
    return subprocess.run([sys.executable, "-m", "horizonbandits.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)


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
