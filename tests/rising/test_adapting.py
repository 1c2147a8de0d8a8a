"""Adapting the workbook: instances from anywhere, diagnose, switch_horizons."""
import numpy as np
import pandas as pd
import pytest

import horizonbandits.rising as R
from horizonbandits.testing import assert_kernel_matches_reference


def test_from_callables_vectorised_and_scalar():
    inst = R.RisingInstance.from_callables([lambda n: np.minimum(0.5, 0.01 * n), lambda n: 0.3 + 0 * n], T_max=100)
    assert inst.K == 2 and inst.means[0, 10] == pytest.approx(0.1) and inst.means[1, 0] == 0.3
    import math

    def scalar_only(n):
        return 1 - math.exp(-n / 10)
    inst = R.RisingInstance.from_callables([scalar_only, lambda n: 0.5], T_max=50, names=["exp", "flat"])
    assert inst.names == ("exp", "flat") and inst.means[1, 7] == 0.5
    with pytest.raises(ValueError, match=r"funcs\[1\] returned nan at n=0"):
        R.RisingInstance.from_callables([scalar_only, lambda n: float("nan")], T_max=5)
    with pytest.raises(ValueError, match="not callable"):
        R.RisingInstance.from_callables([scalar_only, 3], T_max=5)


def test_from_csv_long_and_wide(tmp_path):
    long = pd.DataFrame({"arm": ["a"] * 4 + ["b"] * 4, "n": [0, 1, 2, 3] * 2, "mean": [0, .1, .2, .3, .5, .5, .5, .5]})
    long.to_csv(tmp_path / "long.csv", index=False)
    inst = R.RisingInstance.from_csv(tmp_path / "long.csv", noise=0.0)
    assert inst.names == ("a", "b") and inst.T_max == 3 and inst.means[0, 2] == 0.2
    wide = pd.DataFrame({"n": [0, 1, 2], "x": [0, .5, .6], "y": [.1, .2, .3]})
    wide.to_csv(tmp_path / "wide.csv", index=False)
    inst = R.RisingInstance.from_csv(tmp_path / "wide.csv")
    assert inst.names == ("x", "y") and inst.means[1, 2] == 0.3
    pd.DataFrame({"x": [0, .5, .6], "y": [.1, .2, .3]}).to_csv(tmp_path / "nocol.csv", index=False)
    assert R.RisingInstance.from_csv(tmp_path / "nocol.csv").T_max == 2


def test_from_csv_errors(tmp_path):
    gap = pd.DataFrame({"arm": ["a"] * 3 + ["b"] * 3, "n": [0, 1, 3, 0, 1, 2], "mean": [0.1] * 6})
    gap.to_csv(tmp_path / "gap.csv", index=False)
    with pytest.raises(ValueError, match=r"arm 'a'.*n=3 where n=2"):
        R.RisingInstance.from_csv(tmp_path / "gap.csv")
    nan = pd.DataFrame({"arm": ["a"] * 3 + ["b"] * 3, "n": [0, 1, 2] * 2, "mean": [0.1, np.nan, 0.2, 0, 0, 0]})
    nan.to_csv(tmp_path / "nan.csv", index=False)
    with pytest.raises(ValueError, match=r"arm 'a': mean at n=1"):
        R.RisingInstance.from_csv(tmp_path / "nan.csv")
    ragged = pd.DataFrame({"arm": ["a"] * 3 + ["b"] * 2, "n": [0, 1, 2, 0, 1], "mean": [0.1] * 5})
    ragged.to_csv(tmp_path / "ragged.csv", index=False)
    with pytest.raises(ValueError, match="different lengths"):
        R.RisingInstance.from_csv(tmp_path / "ragged.csv")
    (tmp_path / "wide.csv").write_text("x,y\n0,0.1\n0.5,0.2\n0.6,\n")
    with pytest.raises(ValueError, match="arm 'y' has 2 values"):
        R.RisingInstance.from_csv(tmp_path / "wide.csv")
    with pytest.raises(ValueError, match="not a file"):
        R.RisingInstance.from_csv(tmp_path / "missing.csv")


def test_from_npy(tmp_path):
    np.save(tmp_path / "both.npy", np.array([[0, .1, .2], [.3, .3, .3]]))
    assert R.RisingInstance.from_npy(tmp_path / "both.npy").K == 2
    np.save(tmp_path / "a.npy", np.array([.1, .2, .3]))
    np.save(tmp_path / "b.npy", np.array([.2, .2, .2]))
    inst = R.RisingInstance.from_npy([tmp_path / "a.npy", tmp_path / "b.npy"], prepend_first=True)
    assert inst.names == ("a", "b") and inst.T_max == 3 and inst.means[0, 0] == inst.means[0, 1] == 0.1
    np.save(tmp_path / "c.npy", np.array([.2, .2]))
    with pytest.raises(ValueError, match="different lengths"):
        R.RisingInstance.from_npy([tmp_path / "a.npy", tmp_path / "c.npy"])
    np.save(tmp_path / "bad.npy", np.array([[0, np.inf], [0, 1.0]]))
    with pytest.raises(ValueError, match="non-finite"):
        R.RisingInstance.from_npy(tmp_path / "bad.npy")


def test_diagnose_finds_known_defects():
    n = np.arange(101, dtype=float)
    good = np.minimum(0.8, 0.02 * n)                     # LTF, saturates at 40
    dip = np.minimum(0.8, 0.02 * n)
    dip[30] -= 0.05      # drops at n = 29 -> 30
    convex = (n / 100) ** 2                               # rising but not concave
    report = R.RisingInstance(np.vstack([good, dip, convex]), names=["good", "dip", "convex"]).diagnose(100)
    t = report.table.set_index("arm")
    assert t.loc["good", "rising"] and t.loc["good", "concave"] and t.loc["good", "linear_then_flat"]
    assert t.loc["good", "saturation_n"] == 40
    assert not t.loc["dip", "rising"] and t.loc["dip", "first_drop_n"] == 29
    assert t.loc["dip", "drop"] == pytest.approx(-0.03)
    assert t.loc["convex", "rising"] and not t.loc["convex", "concave"] and t.loc["convex", "first_convex_n"] == 1
    assert report.assumptions == {"rising": False, "concave": False, "linear-then-flat": False, "means in [0, 1]": True}
    assert not report.theorems["Theorem 5.5 (regret bound)"]
    assert report.optimal_arm == "good"
    ltf = R.ltf_random(np.random.default_rng(3), T_ref=500, noise=0.0).diagnose()
    assert ltf.assumptions["linear-then-flat"] and ltf.theorems["Theorem 5.2 (CURE-UCB dominates R-ed-UCB)"]
    assert "Optimal arm" in report._repr_markdown_()


def test_switch_horizons_against_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(20):
        K, T_max = int(rng.integers(2, 5)), 300
        inc = -np.sort(-rng.exponential(size=(K, T_max)), axis=1) * rng.uniform(0.1, 3, size=(K, 1))
        means = np.hstack([rng.uniform(0, 50, size=(K, 1)), rng.uniform(0, 50, size=(K, 1)) + np.cumsum(inc, 1)])
        inst = R.RisingInstance(means)
        brute = []
        previous = None
        for T in range(1, T_max + 1):
            best = int(np.argmax([sum(means[i, 1:T + 1]) for i in range(K)]))
            if previous is not None and best != previous:
                brute.append((T, previous, best))
            previous = best
        assert R.switch_horizons(inst) == brute


def test_every_builtin_policy_passes_the_public_checker():
    inst = R.ltf_random(np.random.default_rng(11), K=4, T_ref=1500, noise=0.05)
    for cls in R.POLICIES.values():
        assert_kernel_matches_reference(cls(), inst, T=1500, n_seeds=2, seed=11)


@pytest.mark.parametrize("name", sorted(R.POLICIES))
def test_checkpoint_counts_match_the_arm_sequence_and_simulate_runs(name):
    # Every kernel keeps its own checkpoint bookkeeping inline, so every kernel is checked here.
    inst = R.ltf_random(np.random.default_rng(12), K=3, T_ref=900)
    obs = R.draw_observations(inst, 900, seed=5)
    policy = R.POLICIES[name]()
    cps = np.array([1, 7, 300, 900], dtype=np.int64)
    arms = np.empty(900, dtype=np.int64)
    counts = policy.run_kernel(obs, 900, cps, arms, 5)
    for row, c in zip(counts, cps):
        np.testing.assert_array_equal(row, np.bincount(arms[:c], minlength=3))
    np.testing.assert_array_equal(policy.run_kernel(obs, 900, cps, np.empty(0, dtype=np.int64), 5), counts)
    assert R.simulate(inst, policy, 900, n_seeds=2, seed=1).pulls.sum(axis=1).tolist() == [900, 900]
