"""The window and noise ablations (appendix K of paper A): their tables are the statistics of their own grids."""
import numpy as np
import pandas as pd
import pytest

from horizonbandits.experiments import ablations, instance_set, make_policies, run_grid
from horizonbandits.stats import paired_differences, regret_summary

GRID = dict(backend="sequential", cache=False, progress=False)
T, H, SEEDS = 600, 1000, 2


def sets(noise=0.01, n=2, **options):
    return {family: instance_set(family, n, seed=0, H=H, noise=noise, **options) for family in ("concave", "ltf")}


@pytest.fixture(scope="module")
def window_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("window")
    pols = ablations.window_policies([0.5, 0.125], sigma=0.01)
    blend = {w: instance_set("concave", 2, seed=0, H=H, noise=0.01, challenger_blend=(w, w)) for w in (0.0, 0.6)}
    result = ablations.window(sets(), pols, T, SEEDS, blend_sets=blend, sweep_seeds=1, n_boot=50, output_dir=out, **GRID)
    return result, pols, blend, out


def test_window_tables_are_the_statistics_of_the_grid(window_run):
    result, pols, blend, out = window_run
    assert list(pols) == ["1/2", "1/8"] and [p.eps for p in pols.values()] == [0.5, 0.125]
    ltf = run_grid(sets()["ltf"], pols, [T], SEEDS, **GRID)
    expected = regret_summary(ltf, n_boot=50)
    got = result.summary[result.summary["family"] == "ltf"]
    assert np.array_equal(got["mean_regret"].to_numpy(), expected["mean_regret"].to_numpy())
    assert list(result.table["paper"]) == [2056, 3691, 3230, 6574]  # Table 1's cells of eps 1/2 and 1/8
    assert np.allclose(result.table["ours / paper"], result.table["ours"] / result.table["paper"])
    diffs = paired_differences(ltf, "1/2", n_boot=50)
    assert set(result.diffs["baseline"]) == {"1/2"}
    assert np.array_equal(result.diffs[result.diffs["family"] == "ltf"]["mean_difference"].to_numpy(),
                          diffs["mean_difference"].to_numpy())
    assert result.order == ["1/2", "1/8"]
    assert np.array_equal(result.means("ltf"), got["mean_regret"].to_numpy())
    for part in ("regret", "table1", "paired_differences", "blend_sweep"):
        assert (out / "tables" / f"window_ablation_{part}.csv").is_file()
    assert (out / "figures" / "window_ablation_regret.png").is_file()


def test_window_blend_sweep(window_run):
    result, pols, blend, _ = window_run
    readings = result.sweep.readings
    assert list(readings["reading"].unique()) == [ablations.DEFAULT_READING, "w = 0", "w = 0.6"]
    w0 = regret_summary(run_grid(blend[0.0], pols, [T], 1, **GRID), n_boot=50)
    assert np.array_equal(readings[readings["w"] == 0.0]["mean_regret"].to_numpy(), w0["mean_regret"].to_numpy())
    for reading, rows in readings.groupby("reading"):
        assert result.sweep.distance[reading] == pytest.approx(ablations.distance(rows["mean_regret"], rows["paper"]))
    table = result.sweep_table()
    assert list(table.index) == ["1/2", "1/8", "distance"] and list(table.columns)[-1] == "paper"
    assert "closest reading" in result.sweep.closest_note()
    assert len(result.closing_lines()) == 3


def test_noise_tables_and_the_sigma_each_policy_is_told(tmp_path):
    sigmas = [0.01, 0.05]
    inst = {(f, x): sets(noise=x, n=2)[f] for f in ("concave", "ltf") for x in sigmas}
    names = ["CURE-UCB", "SW-UCB"]
    result = ablations.noise(inst, names, T, SEEDS, policy_params={"CURE-UCB": {"eps": 0.5}}, n_boot=50,
                             output_dir=tmp_path, **GRID)
    assert result.families == ["concave", "ltf"] and result.sigmas == sigmas and result.sweep is None
    ref = run_grid(inst[("ltf", 0.05)], make_policies(names, {"CURE-UCB": {"eps": 0.5}}, sigma=0.05), [T], SEEDS, **GRID)
    got = result.summary[(result.summary["family"] == "ltf") & (result.summary["sigma"] == 0.05)]
    assert np.array_equal(got["mean_regret"].to_numpy(), regret_summary(ref, n_boot=50)["mean_regret"].to_numpy())
    assert got.set_index("policy")["paper"].to_dict() == {"CURE-UCB": 5450, "SW-UCB": 7896}  # Table 2, LTF, sigma 0.05
    assert set(result.diffs["policy"]) == {"SW-UCB"} and len(result.diffs) == 4
    assert result.lowest("ltf", 0.05) == got.sort_values("mean_regret")["policy"].iloc[0]
    assert np.array_equal(result.regrets("ltf", "CURE-UCB"),
                          result.summary[(result.summary["family"] == "ltf") & (result.summary["policy"] == "CURE-UCB")]
                          .sort_values("sigma")["mean_regret"].to_numpy())
    assert (tmp_path / "tables" / "noise_ablation_regret.csv").is_file()
    assert ablations.table2_value("ltf", "CURE-UCB", 0.02) != ablations.table2_value("ltf", "CURE-UCB", 0.02)  # NaN


def test_distance_and_reach():
    assert ablations.distance([2, 2], [2, 2]) == 0.0
    assert ablations.distance([4, 1], [2, 2]) == pytest.approx(1.0)
    parts = [pd.DataFrame({"reading": r, "w": w, "eps": ["1/2", "1/4"], "mean_regret": m, "ci_low": lo, "ci_high": hi,
                           "paper": [100.0, 400.0]})
             for r, w, m, lo, hi in ((ablations.DEFAULT_READING, np.nan, [90, 150], [80, 140], [95, 160]),
                                     ("w = 0", 0.0, [100, 400], [99, 399], [101, 401]),
                                     ("w = 0.5", 0.5, [120, 300], [110, 250], [130, 350]))]
    sweep = ablations.BlendSweep.from_parts(parts, ["eps"])
    # reach: the envelope of the consistent readings' intervals ([80, 130] and [140, 350]); w = 0 is outside B.1.2,
    # so its exact hit of 400 does not count
    assert sweep.reach["reached"].to_dict() == {"1/2": True, "1/4": False}
    assert sweep.reach.loc["1/4", ["low", "high"]].tolist() == [140, 350]
    note = sweep.closest_note()
    assert note.startswith("closest reading w = 0 (distance 0%)") and "closest consistent sweep reading w = 0.5" in note


def test_bad_arguments_name_the_parameter():
    pols = ablations.window_policies([0.5], sigma=0.01)
    with pytest.raises(ValueError, match="instance_sets"):
        ablations.window({}, pols, T, SEEDS, **GRID)
    with pytest.raises(ValueError, match=r"policies\['SW'\]"):
        ablations.window(sets(), {"SW": make_policies(["SW-UCB"])["SW-UCB"]}, T, SEEDS, **GRID)
    with pytest.raises(ValueError, match=r"instance_sets has keys .*\(family, sigma\)"):
        ablations.noise(sets(), ["CURE-UCB"], T, SEEDS, **GRID)
    with pytest.raises(ValueError, match="eps"):
        ablations.window_policies([0.75], sigma=0.01)  # CURE-UCB's window fraction lies in [0, 1/2]
