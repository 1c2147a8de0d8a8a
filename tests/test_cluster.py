"""HB_DASK_ADDRESS sends every grid (rising, commitment, portfolio) to a dask scheduler; the numbers equal a local run's."""
import numpy as np
import pandas as pd

from horizonbandits.commit import UCBCommit, UniformCommit
from horizonbandits.commit import instances as commit_instances
from horizonbandits.commit.portfolio_instances import section73
from horizonbandits.commit import ROSCOC, UCBPortfolio
from horizonbandits.experiments import run_grid
from horizonbandits.rising import CureUCB, RedUCB, ltf_random

from conftest import executed  # noqa: F401 (the cluster fixture lives in conftest)


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
    local = run_grid(cases, pols, n_seeds=20, seed=3, cache=False)
    before = executed(client)
    monkeypatch.setenv("HB_DASK_ADDRESS", address)
    remote = run_grid(cases, pols, n_seeds=20, seed=3, cache=False)
    assert executed(client) - before == 2 * 3  # one task per (case, policy)
    pd.testing.assert_frame_equal(remote, local)


def test_portfolio_grid_runs_on_the_cluster_with_local_numbers(cluster, monkeypatch, tmp_path):
    address, client = cluster
    pols = [ROSCOC(), UCBPortfolio()]
    local = run_grid(section73, pols, [200], n_seeds=3, seed=1, cache=False)
    before = executed(client)
    monkeypatch.setenv("HB_DASK_ADDRESS", address)
    remote = run_grid(section73, pols, [200], n_seeds=3, seed=1, chunk_size=2, cache_dir=tmp_path)
    assert executed(client) - before == 2 * 2  # (T, policy) x 2 chunks of seeds
    pd.testing.assert_frame_equal(remote.drop(columns="seconds"), local.drop(columns="seconds"))
    # The cluster's results were cached on this side: a rerun computes nothing.
    before = executed(client)
    again = run_grid(section73, pols, [200], n_seeds=3, seed=1, chunk_size=2, cache_dir=tmp_path)
    assert executed(client) == before
    pd.testing.assert_frame_equal(again.drop(columns="seconds"), local.drop(columns="seconds"))
