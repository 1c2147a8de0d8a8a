"""The commitment and portfolio grids on the shared runner: same numbers on every backend, resumable cache."""
import warnings

import numpy as np
import pandas as pd
import pytest

import horizonbandits.commit.portfolio_model as concave
import horizonbandits.commit.grid as grid
from horizonbandits.commit import UCBCommit, UniformCommit, simulate
from horizonbandits.commit import instances as commit_instances
from horizonbandits.commit.portfolio_instances import section73
from horizonbandits.commit import ROSCOC, UCBPortfolio
from horizonbandits.compute.cache import CacheWarning
from horizonbandits.experiments import run_grid


@pytest.fixture(scope="module")
def cases():
    return [dict(T=T, c=c, problem=commit_instances.section72(T, c)) for T in (300, 900) for c in (0.5, 0.2)]


@pytest.fixture(scope="module")
def policies():
    return {"RAEC": commit_instances.section72_policy(), "UCB": UCBCommit(), "Uniform": UniformCommit()}


@pytest.fixture(scope="module")
def local(cases, policies):
    runs = run_grid(cases, policies, n_seeds=12, seed=2, cache=False)
    return grid.summary_table(runs), runs


def test_commit_grid_rows_are_simulate(local, cases, policies):
    table, runs = local
    for case in cases:
        for name, pol in policies.items():
            res = simulate(case["problem"], pol, n_seeds=12, seed=2)
            sel = runs[(runs["T"] == case["T"]) & (runs.c == case["c"]) & (runs.policy == name)]
            assert np.array_equal(sel.regret.to_numpy(), res.regret)
            row = table[(table["T"] == case["T"]) & (table.c == case["c"]) & (table.policy == name)].iloc[0]
            assert row.mean_regret == res.regret.mean()


def test_commit_grid_on_loky_and_from_the_cache(local, cases, policies, tmp_path, monkeypatch):
    calls = []
    real = grid._simulate_task
    monkeypatch.setattr(grid, "_simulate_task", lambda *a: calls.append(a[2:]) or real(*a))
    first = run_grid(cases, policies, n_seeds=12, seed=2, backend="sequential", cache_dir=tmp_path)
    assert len(calls) == len(cases) * len(policies)
    calls.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        again = run_grid(cases, policies, n_seeds=12, seed=2, cache_dir=tmp_path)
    assert calls == []  # every (case, policy) came from the cache
    monkeypatch.setattr(grid, "_simulate_task", real)
    loky = run_grid(cases, policies, n_seeds=12, seed=2, backend="loky", n_jobs=2, cache=False)
    for result in (first, again, loky):
        pd.testing.assert_frame_equal(result, local[1])
        pd.testing.assert_frame_equal(grid.summary_table(result), local[0])


def test_commit_grid_bad_arguments(cases, policies):
    with pytest.raises(ValueError, match="backend='spark'"):
        run_grid(cases, policies, n_seeds=2, backend="spark", cache=False)
    with pytest.raises(ValueError, match="expected a CommitPolicy"):
        run_grid(cases, {"x": object()}, n_seeds=2, cache=False)
    with pytest.raises(ValueError, match="expected a CommitProblem"):
        run_grid([dict(problem="p")], policies, n_seeds=2, cache=False)


def test_portfolio_grid_chunks_backends_and_cache(tmp_path, monkeypatch):
    pols = [ROSCOC(), UCBPortfolio()]
    ref = run_grid(section73, pols, [200, 400], n_seeds=3, seed=1, cache=False)
    res = concave.simulate(section73(400), pols[0], n_seeds=3, seed=1)
    sel = ref[(ref["T"] == 400) & (ref.policy == res.policy)]
    assert list(ref.problem.unique()) == ["problem"] and ref.seed_index.tolist()[:3] == [0, 1, 2]
    assert np.array_equal(sel.regret.to_numpy(), res.regret)  # the grid's rows are simulate's
    calls = []
    real = concave._portfolio_task
    monkeypatch.setattr(concave, "_portfolio_task", lambda *a: calls.append(a[3:]) or real(*a))
    chunked = run_grid(section73, pols, [200, 400], n_seeds=3, seed=1, chunk_size=2, cache_dir=tmp_path)
    assert len(calls) == 2 * 2 * 2
    calls.clear()
    cached = run_grid(section73, pols, [200, 400], n_seeds=3, seed=1, chunk_size=2, cache_dir=tmp_path)
    assert calls == []
    monkeypatch.setattr(concave, "_portfolio_task", real)
    loky = run_grid(section73, pols, [200, 400], n_seeds=3, seed=1, n_jobs=2, cache=False)
    for df in (chunked, cached, loky):
        pd.testing.assert_frame_equal(df.drop(columns="seconds"), ref.drop(columns="seconds"))


def test_rising_grid_rows_name_their_root_seed(tmp_path):
    """root_seed: simulate(inst, policy, T, n_seeds, seed=root_seed) gives each row's seed index its regret, fresh
    and from the cache (which holds pull counts, not the table)."""
    from horizonbandits.experiments import instance_seed
    from horizonbandits.rising import CureUCB, RedUCB, ltf_random
    from horizonbandits.rising import simulate as rising_simulate
    rng = np.random.default_rng(4)
    insts = {"a": ltf_random(rng, K=3, T_ref=500), "b": ltf_random(rng, K=4, T_ref=500)}
    pols = {"CURE": CureUCB(), "Red": RedUCB()}  # horizon-aware, and read off one run to the largest T
    fresh = run_grid(insts, pols, [250, 500], n_seeds=4, seed=7, backend="sequential", cache_dir=tmp_path, progress=False)
    cached = run_grid(insts, pols, [250, 500], n_seeds=4, seed=7, backend="sequential", cache_dir=tmp_path, progress=False)
    pd.testing.assert_frame_equal(fresh.drop(columns="wall_time"), cached.drop(columns="wall_time"))
    for key, inst in insts.items():
        rows = fresh[fresh.problem == key]
        assert set(rows.root_seed) == {instance_seed(7, inst)} and instance_seed(7, inst) != 7
    checked = 0
    for row in fresh[fresh.seed_index.isin([0, 3])].itertuples():
        res = rising_simulate(insts[row.problem], pols[row.policy], row.T, n_seeds=row.seed_index + 1, seed=row.root_seed)
        assert res.regret[row.seed_index] == row.regret
        checked += 1
    assert checked == 2 * 2 * 2 * 2
    other = run_grid(insts, pols, [250], n_seeds=1, seed=8, backend="sequential", cache=False, progress=False)
    assert not set(other.root_seed) & set(fresh.root_seed)  # another root seed, other roots
