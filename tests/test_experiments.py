"""The grid runner: same numbers whatever the backend, chunking or cache; win rates and paired differences."""
import numpy as np
import pandas as pd
import pytest

import horizonbandits.experiments as ex
import horizonbandits.experiments.rising_grid as rising_grid
from horizonbandits.compute import executor
from horizonbandits.experiments import instance_seed, make_policies, run_grid
from horizonbandits.stats import paired_differences, regret_summary, win_rate_matrix, win_rates
from horizonbandits.rising import CureUCB, RedUCB, RisingInstance, ltf_random, simulate
from horizonbandits.rising.generators import concave_random

HORIZONS = [500, 1_200, 2_000]


@pytest.fixture(scope="module")
def instances():
    rng = np.random.default_rng(5)
    return {"ltf a": ltf_random(rng, K=3, T_ref=2_000), "ltf b": ltf_random(rng, K=2, T_ref=2_000),
            "concave": concave_random(rng, K=4, H=2_000)}


@pytest.fixture(scope="module")
def policies():
    return {"CURE": CureUCB(), "Red": RedUCB(eps=0.5)}


@pytest.fixture(scope="module")
def reference_grid(instances, policies):
    return run_grid(instances, policies, HORIZONS, n_seeds=5, seed=3, backend="sequential", cache=False,
                    chunk_size=5, progress=False)


def numbers(df):
    return df[["problem", "policy", "T", "seed_index", "regret", "optimal_pulls", "optimal_arm"]].reset_index(drop=True)


def test_table_layout(reference_grid, instances):
    df = reference_grid
    assert list(df.columns) == rising_grid.COLUMNS
    assert len(df) == len(instances) * 2 * len(HORIZONS) * 5
    assert not df.duplicated(["problem", "policy", "T", "seed_index"]).any()
    assert (df["optimal_pulls"] <= df["T"]).all() and (df["wall_time"] >= 0).all()
    assert list(df["policy"].cat.categories) == ["CURE", "Red"]


def test_rows_equal_independent_simulations(reference_grid, instances, policies):
    # Horizon-aware CURE-UCB runs once per T, R-ed-UCB is read off one run to T = 2000: both
    # must equal a separate simulate() at each T with the instance's noise seed.
    for key, inst in instances.items():  # noqa: B007 (key and label are used in the query string)
        for label, pol in policies.items():  # noqa: B007
            for T in HORIZONS:
                rows = reference_grid.query("problem == @key and policy == @label and T == @T")
                res = simulate(inst, pol, T, n_seeds=5, seed=instance_seed(3, inst))
                assert np.array_equal(rows["regret"].to_numpy(), res.regret)
                assert np.array_equal(rows["optimal_pulls"].to_numpy(), res.pulls[:, res.optimal_arm])


def test_loky_workers_and_chunking_do_not_change_numbers(reference_grid, instances, policies, tmp_path):
    df = run_grid(instances, policies, HORIZONS, n_seeds=5, seed=3, backend="loky", n_jobs=2, chunk_size=2,
                  cache_dir=tmp_path, progress=False)
    pd.testing.assert_frame_equal(numbers(df), numbers(reference_grid))


def test_dask_local_cluster_gives_the_loky_numbers(reference_grid, instances, policies):
    try:
        df = run_grid(instances, policies, HORIZONS, n_seeds=5, seed=3, backend="dask", n_jobs=2, chunk_size=3,
                      cache=False, progress=False)
        pd.testing.assert_frame_equal(numbers(df), numbers(reference_grid))
        assert len(executor._DASK_CLIENTS) == 1  # the LocalCluster is kept for the next call
        again = run_grid(instances, policies, [HORIZONS[0]], n_seeds=2, seed=3, backend="dask", n_jobs=2,
                         cache=False, progress=False)
        assert len(executor._DASK_CLIENTS) == 1
        pd.testing.assert_frame_equal(numbers(again), numbers(reference_grid.query("T == @HORIZONS[0] and seed_index < 2")))
    finally:
        executor.close_dask_clients()
    assert not executor._DASK_CLIENTS


def test_cache_rerun_is_free_and_code_change_invalidates(instances, policies, tmp_path, monkeypatch):
    calls = []
    real = rising_grid.run_task
    monkeypatch.setattr(rising_grid, "run_task", lambda *a: calls.append(a[4:]) or real(*a))
    kw = dict(n_seeds=4, seed=1, backend="sequential", chunk_size=2, cache_dir=tmp_path, progress=False)
    first = run_grid(instances, policies, HORIZONS, **kw)
    assert len(calls) == len(instances) * 2  # one task per (instance, chunk)
    assert not list(tmp_path.rglob("*.tmp"))  # atomic writes leave nothing behind
    calls.clear()
    again = run_grid(instances, policies, HORIZONS, **kw)
    assert calls == []
    pd.testing.assert_frame_equal(again, first)
    # A larger grid reuses what it can: a horizon-aware policy's runs are cached per T.
    calls.clear()
    run_grid(instances, {"CURE": CureUCB()}, [1_200], **kw)
    assert calls == []
    monkeypatch.setattr(rising_grid, "code_digest", lambda *a: "edited source")
    run_grid(instances, policies, HORIZONS, **kw)
    assert len(calls) == len(instances) * 2


def test_interrupted_run_resumes(instances, policies, tmp_path, monkeypatch):
    real = rising_grid.run_task
    done = []

    def flaky(*a):
        if len(done) == 2:
            raise KeyboardInterrupt
        done.append(a[4:])
        return real(*a)
    monkeypatch.setattr(rising_grid, "run_task", flaky)
    kw = dict(n_seeds=4, seed=2, backend="sequential", chunk_size=2, cache_dir=tmp_path, progress=False)
    with pytest.raises(KeyboardInterrupt):
        run_grid(instances, policies, HORIZONS, **kw)
    monkeypatch.setattr(rising_grid, "run_task", lambda *a: done.append(a[4:]) or real(*a))
    resumed = run_grid(instances, policies, HORIZONS, **kw)
    assert len(done) == len(instances) * 2  # only the missing tasks ran the second time
    fresh = run_grid(instances, policies, HORIZONS, n_seeds=4, seed=2, backend="sequential", cache=False,
                     progress=False)
    pd.testing.assert_frame_equal(numbers(resumed), numbers(fresh))


def test_seed_indices_do_not_depend_on_n_seeds(reference_grid, instances, policies):
    small = run_grid(instances, policies, HORIZONS, n_seeds=2, seed=3, backend="sequential", cache=False,
                     progress=False)
    pd.testing.assert_frame_equal(numbers(small), numbers(reference_grid[reference_grid["seed_index"] < 2]))


def synthetic(means: dict, n_seeds=1, T=100):
    """A fake run_grid table with given regrets: means[policy] = list over instances (one seed each)."""
    rows = [{"problem": i, "policy": p, "T": T, "seed_index": s, "regret": float(v)}
            for p, vals in means.items() for i, v in enumerate(vals) for s in range(n_seeds)]
    return pd.DataFrame(rows)


def test_win_rates_count_instances_and_ties():
    df = synthetic({"A": [1, 2, 3, 4], "B": [2, 2, 1, 5], "C": [9, 9, 9, 9]})
    rates = win_rates(df, 100, n_boot=500)
    m = win_rate_matrix(rates)
    assert m.loc["A", "B"] == pytest.approx((1 + 0.5 + 0 + 1) / 4)
    assert m.loc["B", "A"] == pytest.approx(1 - m.loc["A", "B"])
    assert m.loc["A", "C"] == 1.0 and m.loc["C", "A"] == 0.0
    assert np.isnan(m.loc["A", "A"])
    r = rates.set_index(["row", "col"])
    assert ((r["ci_low"] <= r["win_rate"]) & (r["win_rate"] <= r["ci_high"])).all()
    assert r.loc[("A", "C"), "ci_low"] == 1.0  # no resample can change a unanimous result
    assert 0 <= r.loc[("A", "B"), "ci_low"] < 0.625 < r.loc[("A", "B"), "ci_high"] <= 1


def test_win_rates_use_the_mean_over_seeds():
    rows = [{"problem": 0, "policy": "A", "T": 10, "seed_index": s, "regret": v} for s, v in enumerate([0, 10])]
    rows += [{"problem": 0, "policy": "B", "T": 10, "seed_index": s, "regret": v} for s, v in enumerate([6, 6])]
    m = win_rate_matrix(win_rates(pd.DataFrame(rows), 10, n_boot=10))
    assert m.loc["A", "B"] == 1.0  # mean 5 < 6 although A loses on seed 1


def test_paired_differences():
    df = synthetic({"base": [10, 20, 30], "X": [11, 25, 27]}, n_seeds=3)
    out = paired_differences(df, "base", n_boot=500)
    row = out.iloc[0]
    assert row["policy"] == "X" and row["mean_difference"] == pytest.approx((1 + 5 - 3) / 3)
    assert row["share_worse"] == pytest.approx(2 / 3)
    assert row["ci_low"] <= row["mean_difference"] <= row["ci_high"]
    per = paired_differences(df, "base", by_instance=True)
    assert per["mean_difference"].tolist() == pytest.approx([1, 5, -3])
    assert (per["ci_high"] - per["ci_low"]).abs().max() == 0  # identical seeds: zero width


def test_regret_summary(reference_grid):
    s = regret_summary(reference_grid, n_boot=200)
    direct = reference_grid.groupby(["policy", "T"], observed=True)["regret"].mean()
    for _, row in s.iterrows():
        assert row["mean_regret"] == pytest.approx(direct.loc[(row["policy"], row["T"])])
        assert row["ci_low"] <= row["mean_regret"] <= row["ci_high"]


def test_make_policies_sets_sigma_where_it_exists():
    pols = make_policies(["CURE-UCB", "R-ed-UCB"], {"CURE-UCB": {"eps": 0.5}}, sigma=0.05)
    assert list(pols) == ["CURE-UCB", "R-ed-UCB"]
    assert pols["CURE-UCB"] == CureUCB(eps=0.5, sigma=0.05) and pols["R-ed-UCB"].sigma == 0.05
    with pytest.raises(ValueError, match="policies='nope'"):
        make_policies(["nope"])
    with pytest.raises(ValueError, match="policy_params"):
        make_policies(["CURE-UCB"], {"R-ed-UCB": {}})


def test_make_policies_gives_sigma_only_to_indices_that_take_a_noise_scale():
    # Fair baselines: the environment's sigma goes to CURE-UCB and R-ed-UCB only; every
    # other policy, R-ed-AE included, is built exactly as with no sigma at all (its own paper's default).
    from horizonbandits.rising.policies import POLICIES
    takers = sorted(name for name, cls in POLICIES.items() if cls.takes_noise_scale)
    assert takers == ["CURE-UCB", "R-ed-UCB"]
    names = sorted(POLICIES)
    told = make_policies(names, sigma=0.003)
    untold = make_policies(names)
    for name in names:
        if name in takers:
            assert told[name].sigma == 0.003 and told[name] != untold[name]
        else:
            assert told[name] == untold[name], name
    assert told["R-ed-AE"].sigma == 0.5  # rewards in [0, 1] are 1/2-sub-Gaussian
    # An explicit hyperparameter is still honoured for a policy that is not told the noise level.
    assert make_policies(["R-ed-AE"], {"R-ed-AE": {"sigma": 0.01}}, sigma=0.2)["R-ed-AE"].sigma == 0.01


@pytest.mark.parametrize("kwargs, match", [
    (dict(horizons=[5_000]), "horizons=5000"),
    (dict(horizons=[]), "horizons"),
    (dict(backend="spark"), "backend='spark'"),
    (dict(n_seeds=0), "n_seeds=0"),
    (dict(n_jobs=0), "n_jobs=0"),
])
def test_bad_arguments(instances, policies, kwargs, match):
    args = dict(problems=instances, policies=policies, horizons=HORIZONS, n_seeds=2, cache=False)
    with pytest.raises(ValueError, match=match):
        run_grid(**{**args, **kwargs})
    with pytest.raises(ValueError, match="problems is empty"):
        run_grid({}, policies, HORIZONS, 2, cache=False)


def test_instance_set_shares_tables_across_noise_levels_without_changing_them():
    base = ex.instance_set("concave", 3, seed=6, H=2_000, noise=0.01)
    louder = ex.instance_set("concave", 2, seed=6, H=2_000, noise=0.1)
    more = ex.instance_set("concave", 4, seed=6, H=2_000, noise=0.1)
    for j, key in enumerate(more):
        fresh = concave_random(np.random.default_rng(np.random.SeedSequence(6, spawn_key=(j,))), H=2_000, noise=0.1)
        assert np.array_equal(more[key].means, fresh.means) and np.array_equal(more[key].prefix, fresh.prefix)
        assert more[key].noise == 0.1 and more[key].names == fresh.names
        assert ex.instance_digest(more[key]) == rising_grid._hash_means(fresh)
    assert list(louder) == ["concave 000", "concave 001"]
    assert louder["concave 000"].means is base["concave 000"].means  # shared, not rebuilt
    assert base["concave 000"].noise == 0.01  # the earlier call's instances keep their noise
    # another set (options, seed or family) is drawn afresh
    blend = ex.instance_set("concave", 1, seed=6, H=2_000, challenger_blend=(0.2, 0.2))
    assert not np.array_equal(blend["concave 000"].means, base["concave 000"].means)
    ltf = ex.instance_set("ltf", 2, seed=6, H=2_000, noise=0.0)
    fresh = ltf_random(np.random.default_rng(np.random.SeedSequence(6, spawn_key=(1,))), T_ref=2_000, noise=0.0)
    assert np.array_equal(ltf["ltf 001"].means, fresh.means)
    with pytest.raises(ValueError, match="noise=-1"):
        ex.instance_set("ltf", 2, seed=6, H=2_000, noise=-1)


def test_with_noise_shares_the_tables_and_checks_the_model():
    inst = RisingInstance(np.array([[0.0, 0.5, 0.6], [0.0, 0.2, 1.5]]), noise=0.01)
    digest = ex.instance_digest(inst)
    twin = inst.with_noise(0.2)
    assert twin.noise == 0.2 and inst.noise == 0.01 and twin.means is inst.means and twin.prefix is inst.prefix
    assert ex.instance_digest(twin) == digest == rising_grid._hash_means(RisingInstance(inst.means.copy()))
    with pytest.raises(ValueError, match="bernoulli"):
        inst.with_noise("bernoulli")  # a mean of 1.5 is not a probability


def test_digest_reads_arrays_in_place_as_their_bytes():
    from horizonbandits.compute.cache import digest
    a = np.arange(12.0).reshape(3, 4)
    for x in (a, np.asfortranarray(a), a[:, ::2]):
        assert digest(memoryview(np.ascontiguousarray(x))) == digest(np.ascontiguousarray(x).tobytes())
    assert digest(memoryview(a)) != digest(memoryview(a + 1))
    inst = RisingInstance(np.asfortranarray(np.linspace(0.0, 1.0, 8).reshape(2, 4)))
    assert rising_grid._hash_means(inst) == digest(inst.means.shape, inst.means.tobytes(), inst.names)


def test_instance_set_is_prefix_stable_and_seeded():
    small = ex.instance_set("concave", 2, seed=4, H=3_000)
    large = ex.instance_set("concave", 3, seed=4, H=3_000)
    assert list(small) == ["concave 000", "concave 001"] and list(large)[:2] == list(small)
    for key in small:
        assert np.array_equal(small[key].means, large[key].means)
    other = ex.instance_set("concave", 2, seed=5, H=3_000)
    assert not np.array_equal(other["concave 000"].means, small["concave 000"].means)
    ltf = ex.instance_set("ltf", 2, seed=4, H=3_000, noise=0.05)
    assert all(inst.T_max == 3_000 and inst.noise == 0.05 and 2 <= inst.K <= 5 for inst in ltf.values())
    with pytest.raises(ValueError, match="family='linear'"):
        ex.instance_set("linear", 2)
