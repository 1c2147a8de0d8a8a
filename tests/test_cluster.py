"""HB_DASK_ADDRESS sends every grid (rising, commitment, portfolio) to a dask scheduler; the numbers equal a local run's."""
import os
import socket
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

import horizonbandits.experiments as ex
from horizonbandits.commit import UCBCommit, UniformCommit
from horizonbandits.commit import instances as commit_instances
from horizonbandits.commit.concave import portfolio_grid
from horizonbandits.commit.grid import run_grid as commit_grid
from horizonbandits.commit.portfolio_instances import section73
from horizonbandits.commit.roscoc import ROSCOC, UCBPortfolio
from horizonbandits.experiments import run_grid
from horizonbandits.rising import CureUCB, RedUCB, ltf_random


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
        ex.close_dask_clients()
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


def test_rising_grid_runs_on_the_cluster_with_local_numbers(cluster, monkeypatch):
    address, client = cluster
    rng = np.random.default_rng(2)
    insts = {"a": ltf_random(rng, K=3, T_ref=800), "b": ltf_random(rng, K=2, T_ref=800)}
    pols = {"CURE": CureUCB(), "Red": RedUCB(eps=0.5)}
    kw = dict(n_seeds=4, seed=9, chunk_size=2, cache=False, progress=False)
    local = run_grid(insts, pols, [400, 800], backend="sequential", **kw)
    before = executed(client)
    monkeypatch.setenv("HB_DASK_ADDRESS", address)
    remote = run_grid(insts, pols, [400, 800], backend="loky", **kw)  # the variable wins over backend
    assert executed(client) - before == 2 * 2  # one task per (instance, chunk of 2 seeds)
    pd.testing.assert_frame_equal(remote.drop(columns="wall_time"), local.drop(columns="wall_time"))


def test_commitment_grid_runs_on_the_cluster_with_local_numbers(cluster, monkeypatch):
    address, client = cluster
    cases = [dict(T=T, problem=commit_instances.section72(T, 0.5)) for T in (300, 900)]
    pols = {"RAEC": commit_instances.section72_policy(), "UCB": UCBCommit(), "Uniform": UniformCommit()}
    local = commit_grid(cases, pols, n_seeds=20, seed=3, keep_runs=True, cache=False)
    before = executed(client)
    monkeypatch.setenv("HB_DASK_ADDRESS", address)
    remote = commit_grid(cases, pols, n_seeds=20, seed=3, keep_runs=True, cache=False)
    assert executed(client) - before == 2 * 3  # one task per (case, policy)
    for a, b in zip(remote, local):
        pd.testing.assert_frame_equal(a, b)


def test_portfolio_grid_runs_on_the_cluster_with_local_numbers(cluster, monkeypatch, tmp_path):
    address, client = cluster
    pols = [ROSCOC(), UCBPortfolio()]
    local = portfolio_grid(section73, [200], pols, n_seeds=3, seed=1, cache=False)
    before = executed(client)
    monkeypatch.setenv("HB_DASK_ADDRESS", address)
    remote = portfolio_grid(section73, [200], pols, n_seeds=3, seed=1, chunk_size=2, cache_dir=tmp_path)
    assert executed(client) - before == 2 * 2  # (T, policy) x 2 chunks of seeds
    pd.testing.assert_frame_equal(remote.drop(columns="seconds"), local.drop(columns="seconds"))
    # The cluster's results were cached on this side: a rerun computes nothing.
    before = executed(client)
    again = portfolio_grid(section73, [200], pols, n_seeds=3, seed=1, chunk_size=2, cache_dir=tmp_path)
    assert executed(client) == before
    pd.testing.assert_frame_equal(again.drop(columns="seconds"), local.drop(columns="seconds"))
