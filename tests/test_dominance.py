"""experiments.dominance (notebook uniform_dominance_ltf): the cached, chunked table is the plain loop's, bit for bit."""
import warnings

import numpy as np
import pandas as pd
import pytest

import horizonbandits.experiments.dominance as dominance
import horizonbandits.rising as R
from horizonbandits.compute.cache import CacheWarning


def plain_loop(probes, n_instances, T_ref, horizon_fractions, noise_sigma, noise_seeds, seed):
    """The notebook's loop as it was before the library took it over (one probe after the other, one
    generator per probe, ``run_seed`` for every run), written out here as the reference."""
    horizons = sorted({max(int(f * T_ref), 2) for f in horizon_fractions})
    deterministic = dict(eps=0.0, sigma=0.0, init_pulls=1)

    def make_instance(probe, rng):
        if probe == "real-valued saturation":
            return R.ltf_random(rng, T_ref=T_ref, integer_saturation=False, noise=0.0)
        if probe == "ties":
            K = int(rng.integers(2, 6))
            b = rng.choice([0.25, 0.5, 0.75, 1.0], size=K)
            c = rng.choice(np.arange(1, 11) * (T_ref // 10), size=K)
            return R.ltf_saturating(b, c, T_max=T_ref, noise=0.0)
        return R.ltf_random(rng, T_ref=T_ref, noise=0.0)

    def policies_for(probe):
        if probe == "eps > 0":
            return R.CureUCB(eps=0.25, sigma=0.0, init_pulls=2), R.RedUCB(eps=0.25, sigma=0.0, init_pulls=2)
        if probe == "noise":
            return R.CureUCB(sigma=noise_sigma), R.RedUCB(sigma=noise_sigma)
        return R.CureUCB(**deterministic), R.RedUCB(**deterministic)

    def regrets(inst, cure, red, noise, n_seeds):
        out = np.zeros((len(horizons), 2))
        for s in range(n_seeds):
            red_pulls, _ = R.run_seed(inst, red, max(horizons), seed, s, noise, checkpoints=horizons)
            for j, T in enumerate(horizons):
                cure_pulls, _ = R.run_seed(inst, cure, T, seed, s, noise)
                out[j, 0] += R.optimal_value(inst, T) - R.collected_value(inst, cure_pulls[-1])
                out[j, 1] += R.optimal_value(inst, T) - R.collected_value(inst, red_pulls[j])
        return out / n_seeds

    rows = []
    for probe in probes:
        rng = np.random.default_rng([seed, probes.index(probe)])
        cure, red = policies_for(probe)
        noise, n_seeds = (noise_sigma, noise_seeds) if probe == "noise" else (0.0, 1)
        for k in range(n_instances):
            inst = make_instance(probe, rng)
            reg = regrets(inst, cure, red, noise, n_seeds)
            b = inst.means[:, -1]
            c = np.argmax(inst.means >= b[:, None] - 1e-15, axis=1)
            for j, T in enumerate(horizons):
                rows.append(dict(probe=probe, instance=k, K=inst.K, T=T, cure=reg[j, 0], red=reg[j, 1],
                                 diff=reg[j, 1] - reg[j, 0], plateaus=" ".join(f"{x:.4f}" for x in b),
                                 saturation=" ".join(str(int(x)) for x in c),
                                 slopes=" ".join(f"{x:.3e}" for x in inst.means[:, 1])))
    return pd.DataFrame(rows)


SMALL = dict(probes=list(dominance.PROBES), n_instances=7, T_ref=1500, horizon_fractions=[0.002, 0.05, 0.3, 1.0],
             noise_sigma=0.01, noise_seeds=3, seed=4)
LOCAL = dict(backend="sequential", n_jobs=1, progress=False)


def assert_same_table(ours: pd.DataFrame, reference: pd.DataFrame):
    """Same columns, types and values bit for bit, and the same CSV text (what the notebook saves)."""
    assert list(ours.columns) == list(reference.columns)
    assert list(ours.dtypes) == list(reference.dtypes)
    pd.testing.assert_frame_equal(ours, reference, check_exact=True)
    assert ours.to_csv(index=False) == reference.to_csv(index=False)


@pytest.fixture(scope="module")
def reference():
    return plain_loop(**SMALL)


def test_table_is_the_plain_loop(reference):
    # Chunks of 3: chunk boundaries inside every probe, the last chunk shorter.
    table = dominance.dominance_table(**SMALL, **LOCAL, cache=False, chunk_size=3)
    assert len(table) == 5 * 7 * 4
    assert (table["diff"] != 0).any()  # the check would be idle on a table of zeros
    assert table.loc[table.probe == "noise", "cure"].gt(0).any()
    assert_same_table(table, reference)


@pytest.mark.parametrize("seed", range(6))
def test_table_is_the_plain_loop_on_random_settings(seed):
    """Random probe orders (a probe's generator is keyed by its position), sizes, horizons, noise and chunkings."""
    rng = np.random.default_rng(seed)
    args = dict(probes=[str(p) for p in rng.permutation(dominance.PROBES)[: rng.integers(1, 6)]],
                n_instances=int(rng.integers(1, 9)), T_ref=int(rng.integers(20, 1200)),
                horizon_fractions=[float(f) for f in rng.uniform(0, 1, rng.integers(1, 4))] + [1.0],
                noise_sigma=float(rng.choice([0.0, 0.01, 0.2])), noise_seeds=int(rng.integers(1, 4)),
                seed=int(rng.integers(0, 50)))
    table = dominance.dominance_table(**args, **LOCAL, cache=False, chunk_size=int(rng.integers(1, 5)))
    assert_same_table(table, plain_loop(**args))


def test_second_call_comes_from_the_cache(reference, tmp_path, monkeypatch):
    calls = []
    real = dominance.probe_chunk
    monkeypatch.setattr(dominance, "probe_chunk", lambda *a: calls.append(a[0]) or real(*a))
    first = dominance.dominance_table(**SMALL, **LOCAL, cache_dir=tmp_path, chunk_size=4)
    assert len(calls) == 5 * 2  # 7 instances in chunks of 4: two tasks per probe
    calls.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)  # every entry is read back whole
        second = dominance.dominance_table(**SMALL, **LOCAL, cache_dir=tmp_path, chunk_size=4)
    assert calls == []
    assert_same_table(first, reference)
    assert_same_table(second, reference)
    # Anything that sets the numbers is in the key: another noise level reruns the noise probe only.
    dominance.dominance_table(**{**SMALL, "noise_sigma": 0.02}, **LOCAL, cache_dir=tmp_path, chunk_size=4)
    assert calls == ["noise", "noise"]


def test_interrupted_run_resumes(reference, tmp_path, monkeypatch):
    real = dominance.probe_chunk
    done = []

    def fail_on_the_third(*a):
        if len(done) == 2:
            raise KeyboardInterrupt
        done.append(a[0])
        return real(*a)
    monkeypatch.setattr(dominance, "probe_chunk", fail_on_the_third)
    with pytest.raises(KeyboardInterrupt):
        dominance.dominance_table(**SMALL, **LOCAL, cache_dir=tmp_path, chunk_size=4)
    calls = []
    monkeypatch.setattr(dominance, "probe_chunk", lambda *a: calls.append(a[0]) or real(*a))
    table = dominance.dominance_table(**SMALL, **LOCAL, cache_dir=tmp_path, chunk_size=4)
    assert len(calls) == 5 * 2 - 2
    assert_same_table(table, reference)


def test_loky_gives_the_same_table(reference, tmp_path):
    table = dominance.dominance_table(**SMALL, backend="loky", n_jobs=2, cache=False, chunk_size=2, progress=False)
    assert_same_table(table, reference)


def test_damaged_entry_is_recomputed(reference, tmp_path):
    dominance.dominance_table(**SMALL, **LOCAL, cache_dir=tmp_path, chunk_size=4)
    entry = sorted(tmp_path.rglob("*.hbc"))[0]
    entry.write_bytes(entry.read_bytes()[:100])
    with pytest.warns(CacheWarning, match="1 damaged cache entry"):
        table = dominance.dominance_table(**SMALL, **LOCAL, cache_dir=tmp_path, chunk_size=4)
    assert_same_table(table, reference)


def test_check_chunk_names_what_is_wrong():
    good = {"cure": np.zeros((2, 3)), "red": np.zeros((2, 3)), "K": np.array([2, 3]), "plateaus": np.zeros(5),
            "saturation": np.zeros(5, dtype=np.int64), "slopes": np.zeros(5)}
    assert dominance.check_chunk(good, 2, 3) is None
    assert "cure" in dominance.check_chunk({**good, "cure": np.full((2, 3), np.nan)}, 2, 3)
    assert "red" in dominance.check_chunk({**good, "red": np.zeros((2, 4))}, 2, 3)
    assert "K" in dominance.check_chunk({**good, "K": np.array([1, 3])}, 2, 3)
    assert "slopes" in dominance.check_chunk({**good, "slopes": np.zeros(4)}, 2, 3)
    assert "arrays" in dominance.check_chunk({k: v for k, v in good.items() if k != "K"}, 2, 3)


@pytest.mark.parametrize("bad, message", [
    (dict(probes=["theorem", "theorem"]), "distinct probes"),
    (dict(probes=["theorm"]), "did you mean 'theorem'"),
    (dict(n_instances=0), "n_instances=0"),
    (dict(horizon_fractions=[1.5]), "horizon_fractions=1.5"),
    (dict(horizon_fractions=[]), "horizon_fractions"),
    (dict(noise_seeds=0), "noise_seeds=0"),
    (dict(noise_sigma=-1.0), "noise_sigma=-1.0"),
])
def test_bad_input_is_named(bad, message):
    with pytest.raises(ValueError, match=message):
        dominance.dominance_table(**{**SMALL, **bad}, **LOCAL, cache=False)


def test_ltf_saturating_is_the_where_formula():
    """``ltf_saturating`` fills its table row by row (faster for the 5,000 tables of the paper run); the entries are
    those of the formula it replaced, np.where(n >= c, b, (b / c) n), bit for bit, also for c beyond T_max and c = 1."""
    rng = np.random.default_rng(11)
    for _ in range(300):
        K, T_max = int(rng.integers(2, 7)), int(rng.integers(1, 3000))
        b = rng.uniform(-2.0, 2.0, K) * 10.0 ** rng.integers(-3, 4, K)
        c = rng.integers(1, T_max + 20, K)
        c[rng.integers(K)] = rng.choice([1, T_max, T_max + 1])
        n = np.arange(T_max + 1, dtype=float)
        expected = np.where(n[None, :] >= c[:, None], b[:, None], (b / c)[:, None] * n[None, :])
        means = R.ltf_saturating(b, c, T_max=T_max, noise=0.0).means
        assert means.dtype == expected.dtype and np.array_equal(means, expected)
        assert np.array_equal(np.signbit(means), np.signbit(expected))  # also the signs of zeros


def test_a_probe_that_stops_when_decided_keeps_the_chunks_up_to_its_first_violation():
    """stop_when_decided: the probe's rows are the full table's rows up to the end of the first chunk holding a
    violation (found by the plain loop), on one worker or two; the other probes are untouched."""
    args = dict(probes=["theorem", "eps > 0", "noise"], n_instances=40, T_ref=600, horizon_fractions=[0.01, 0.2, 1.0],
                noise_sigma=0.2, noise_seeds=2, seed=1)
    full = dominance.dominance_table(**args, **LOCAL, cache=False, chunk_size=4)
    for kw in (LOCAL, dict(backend="loky", n_jobs=2, progress=False)):
        cut = dominance.dominance_table(**args, **kw, cache=False, chunk_size=4, stop_when_decided=["eps > 0", "noise"])
        for probe in args["probes"]:
            rows, ref = cut[cut.probe == probe], full[full.probe == probe]
            if probe == "theorem":
                pd.testing.assert_frame_equal(rows, ref)
                continue
            bad = ref[ref["diff"] < -dominance.VIOLATION_TOL].instance
            end = (bad.min() // 4 + 1) * 4 if len(bad) else args["n_instances"]
            assert rows.instance.max() + 1 == min(end, args["n_instances"])
            pd.testing.assert_frame_equal(rows.reset_index(drop=True), ref[ref.instance < end].reset_index(drop=True))
    assert (full[full.probe == "noise"]["diff"] < -dominance.VIOLATION_TOL).any()  # the rule had something to stop on
    with pytest.raises(ValueError, match="stop_when_decided"):
        dominance.dominance_table(**args, **LOCAL, cache=False, stop_when_decided=["theorem"])
