"""A wrong cluster address fails before anything runs, and a grid left without workers fails in one
line instead of waiting forever (issue 29, item 4)."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import free_port, run_hb
from horizonbandits import workbook as wbk
from horizonbandits.compute import executor


class _Server:
    """A TCP server on localhost that, per connection, waits for a request (as HTTP does) or speaks first."""

    def __init__(self, greeting: bytes | None, reply: bytes = b"HTTP/1.1 400 Bad Request\r\n\r\n"):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.address = f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"
        self.greeting, self.reply = greeting, reply
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                try:
                    if self.greeting is not None:
                        conn.sendall(self.greeting)
                    if conn.recv(1 << 16):  # a request: answer as a web server would
                        conn.sendall(self.reply)
                    time.sleep(0.5)
                except OSError:
                    pass

    def close(self):
        self.sock.close()


@pytest.mark.parametrize("greeting, fragment", [
    (None, "it accepted the connection but sent nothing within 2 s, as a web server does (the dashboard's port is "
           "usually 8787, the scheduler's 8786)"),
    (b"HTTP/1.1 200 OK\r\n", "it answered 'HTTP/1.1', which is not dask's protocol"),
])
def test_a_port_that_is_not_a_scheduler_is_one_line(greeting, fragment):
    server = _Server(greeting)
    try:
        start = time.monotonic()
        with pytest.raises(wbk.WorkbookError) as err:
            wbk.check_scheduler(server.address, timeout=2)
        assert time.monotonic() - start < 10
    finally:
        server.close()
    message = str(err.value)
    assert message.startswith(f"no dask scheduler at {server.address}: ") and fragment in message
    assert "\n" not in message and "EiB" not in message


def test_nothing_listening_is_one_line():
    address = f"tcp://127.0.0.1:{free_port()}"
    with pytest.raises(wbk.WorkbookError, match=rf"no dask scheduler at {address}: connection refused; start one"):
        wbk.check_scheduler(address, timeout=2)


def test_hb_run_refuses_a_dashboard_like_port_before_any_notebook_starts(fixture_workbook, tmp_path):
    """The trial: ``--cluster`` at the dashboard's port hung past 120 s; exit 2, nothing written."""
    server = _Server(None)
    try:
        start = time.monotonic()
        res = run_hb("--root", fixture_workbook, "--outputs", tmp_path / "out", "run", "--profile", "smoke",
                     "--only", "alpha_demo", "--cluster", server.address, timeout=120)
        took = time.monotonic() - start
    finally:
        server.close()
    assert res.returncode == 2 and took < 60, (res.returncode, took)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"hb: error: no dask scheduler at {server.address}: ")
    assert not (tmp_path / "out").exists()


def test_a_scheduler_answers_with_its_workers(cluster):
    address, _ = cluster
    assert wbk.check_scheduler(address) == 1


@pytest.fixture
def lone_worker():
    """A scheduler and one worker without a nanny (a killed worker stays dead); yields (address, worker)."""
    address = f"tcp://127.0.0.1:{free_port()}"
    env = {k: v for k, v in os.environ.items() if k != "HB_DASK_ADDRESS"}
    quiet = dict(env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", address.rsplit(":", 1)[1], "--no-dashboard"], **quiet)
    worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                               "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"], **quiet)
    try:
        yield address, worker
    finally:
        executor.close_dask_clients()
        for proc in (worker, scheduler):
            proc.kill()
            proc.wait(timeout=10)


def _workers_of(address: str) -> list[str]:
    from distributed import Client
    deadline = time.monotonic() + 60
    while True:
        try:
            with Client(address, timeout=5, set_as_default=False) as client:
                client.wait_for_workers(1, timeout=60)
                return list(client.scheduler_info()["workers"])
        except OSError:
            assert time.monotonic() < deadline
            time.sleep(0.5)


def test_a_workers_port_is_not_a_scheduler(lone_worker):
    address, _ = lone_worker
    (worker_address,) = _workers_of(address)
    with pytest.raises(wbk.WorkbookError, match=rf"no dask scheduler at {worker_address}: it is a dask Worker"):
        wbk.check_scheduler(worker_address)


def test_a_grid_whose_workers_all_died_fails_in_one_line(lone_worker, monkeypatch):
    """The trial: when every worker died the grid waited forever."""
    address, worker = lone_worker
    _workers_of(address)
    monkeypatch.setenv("HB_DASK_NO_WORKER_TIMEOUT", "3")
    results = executor._execute_dask(time.sleep, [(0.01,), (600,), (600,)], 1, address)
    assert next(results)[1] is None  # the first, short task ran on the worker
    worker.send_signal(signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises(executor.ClusterError) as err:
        next(results)
    assert 3 - executor._WORKERS_EVERY_S <= time.monotonic() - start < 30  # from the last look that saw a worker
    assert str(err.value).startswith(f"no dask worker at {address} for 3 s, with 2 of 3 tasks left; start workers")


def test_the_no_worker_timeout_is_checked(monkeypatch):
    for bad in ("0", "-1", "soon", "inf"):
        monkeypatch.setenv("HB_DASK_NO_WORKER_TIMEOUT", bad)
        with pytest.raises(ValueError, match="HB_DASK_NO_WORKER_TIMEOUT=.* is not allowed: expected a number of seconds"):
            executor.no_worker_timeout()
    monkeypatch.delenv("HB_DASK_NO_WORKER_TIMEOUT")
    assert executor.no_worker_timeout() == 120.0
