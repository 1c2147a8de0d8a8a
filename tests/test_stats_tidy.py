"""stats' functions for tidy grid tables: means with intervals, paired gaps, ratios, crossings."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from horizonbandits import stats


def _table():
    rng = np.random.default_rng(4)
    rows = []
    for T in (100, 200, 400):
        for s in range(30):
            base = rng.normal(T, 10)
            rows.append(dict(T=T, policy="A", seed_index=s, regret=base + rng.normal(5, 1)))
            rows.append(dict(T=T, policy="B", seed_index=s, regret=base))
    return pd.DataFrame(rows)


def test_mean_intervals_are_the_normal_interval_per_group():
    df = _table()
    out = stats.mean_intervals(df, ["T", "policy"])
    assert list(out.columns) == ["T", "policy", "mean_regret", "ci_low", "ci_high", "half_width", "se", "n"]
    assert len(out) == 6 and out.n.tolist() == [30] * 6
    sub = df[(df["T"] == 200) & (df.policy == "B")].regret.values
    row = out[(out["T"] == 200) & (out.policy == "B")].iloc[0]
    m, h = stats.normal_interval(sub)
    assert row.mean_regret == m and row.ci_low == m - h and row.ci_high == m + h  # bit for bit
    assert row.se == pytest.approx(sub.std(ddof=1) / math.sqrt(30), rel=1e-12)
    assert row.half_width == pytest.approx(norm.ppf(0.975) * row.se, rel=1e-12)
    with pytest.raises(ValueError, match="value='cost'"):
        stats.mean_intervals(df, ["T"], value="cost")


def test_paired_gaps_pair_by_seed_and_are_far_tighter_than_unpaired():
    df = _table()
    gaps = stats.paired_gaps(df, "A", "B").set_index("T")
    assert gaps["mean"].to_numpy() == pytest.approx([5.0] * 3, abs=0.5)
    at = df[df["T"] == 100]
    d = at[at.policy == "A"].regret.to_numpy() - at[at.policy == "B"].regret.to_numpy()
    assert gaps.loc[100, "half_width"] == pytest.approx(norm.ppf(0.975) * d.std(ddof=1) / math.sqrt(30))
    assert gaps.half_width.max() < 1.0  # the common part (sd 10) cancels
    shuffled = df.assign(seed_index=np.where(df.policy == "A", (df.seed_index + 1) % 30, df.seed_index))
    assert stats.paired_gaps(shuffled, "A", "B").half_width.min() > 3.0  # pairs broken: the sd-10 noise is back
    only_some = df[~((df.policy == "A") & (df.seed_index >= 10))]
    assert stats.paired_gaps(only_some, "A", "B").n.tolist() == [10, 10, 10]
    with pytest.raises(ValueError, match="'C'"):
        stats.paired_gaps(df, "C", "B")
    est = stats.estimates(stats.paired_gaps(df, "A", "B"), "T")
    assert set(est) == {100, 200, 400} and est[100].low == gaps.loc[100, "ci_low"] and est[100].n == 30


def test_paired_gaps_student_interval_and_pairs_over_instances_serve_run_differences():
    from scipy.stats import t as student_t

    from horizonbandits.experiments.figure2 import run_differences
    df = _table()
    normal = stats.paired_gaps(df, "A", "B").set_index("T")
    student = stats.paired_gaps(df, "A", "B", interval="student").set_index("T")
    assert (student["mean"] == normal["mean"]).all() and (student.se == normal.se).all()
    ratio = student.half_width / normal.half_width  # the t quantile over the normal one, 29 degrees of freedom
    assert ratio.to_numpy() == pytest.approx([student_t.ppf(0.975, 29) / norm.ppf(0.975)] * 3, rel=1e-12)
    at = df[df["T"] == 200]
    d = at[at.policy == "A"].regret.to_numpy() - at[at.policy == "B"].regret.to_numpy()
    ref = stats.mean_estimate(d)  # what run_differences computed before it called paired_gaps
    assert (student.loc[200, "ci_low"], student.loc[200, "ci_high"]) == pytest.approx((ref.low, ref.high), rel=1e-12)
    with pytest.raises(ValueError, match="interval='t' is not allowed"):
        stats.paired_gaps(df, "A", "B", interval="t")
    # two instances in a group: pairs are (problem, seed); run_differences reads them as Estimates per T and policy
    two = pd.concat([df.assign(problem="p"), df.assign(problem="q", regret=df.regret + np.where(df.policy == "A", 1.0, 0))])
    by_T = stats.paired_gaps(two, "A", "B", pair=["problem", "seed_index"], interval="student").set_index("T")
    assert by_T.n.tolist() == [60] * 3
    diffs = run_differences(two, subject="B")
    assert list(diffs) == [100, 200, 400] and list(diffs[100]) == ["A"]
    e = diffs[200]["A"]
    assert (e.value, e.low, e.high, e.n, e.unit) == (by_T.loc[200, "mean"], by_T.loc[200, "ci_low"],
                                                       by_T.loc[200, "ci_high"], 60, "(instance, seed) runs")
    wide = two[two["T"] == 200].pivot_table(index=["problem", "seed_index"], columns="policy", values="regret")
    old = stats.mean_estimate((wide["A"] - wide["B"]).to_numpy(), "(instance, seed) runs")
    assert (e.value, e.low, e.high) == pytest.approx((old.value, old.low, old.high), rel=1e-12)
    cells = run_differences(two, subject="B", by=("problem", "T"))
    assert list(cells)[:2] == [("p", 100), ("p", 200)] and cells[("q", 400)]["A"].unit == "seeds"
    assert cells[("q", 400)]["A"].value == pytest.approx(normal.loc[400, "mean"] + 1.0, rel=1e-12)
    with pytest.raises(ValueError, match="subject='C' is not allowed"):
        run_differences(two, subject="C")
    three = pd.concat([two, two[two.policy == "A"].assign(policy="C")])  # the grid's policy order, not sorted
    three["policy"] = pd.Categorical(three.policy, categories=["C", "B", "A"], ordered=True)
    assert list(run_differences(three, subject="B")[100]) == ["C", "A"]


def test_first_crossing_interpolates_in_log_x():
    x = [1_000, 10_000, 100_000]
    assert stats.first_crossing(x, [-2.0, -1.0, 1.0]) == pytest.approx(10 ** 4.5)
    assert stats.first_crossing(x, [-2.0, -1.0, 1.0], log_x=False) == pytest.approx(55_000)
    assert stats.first_crossing(x, [3.0, 1.0, -1.0]) == pytest.approx(10 ** 4.5)  # downward too
    assert math.isnan(stats.first_crossing(x, [-3.0, -2.0, -1.0]))
    with pytest.raises(ValueError):
        stats.first_crossing([3, 2, 1], [-1, 0, 1])


def test_crossing_estimate_reads_the_band_pointwise():
    x = [1_000, 10_000, 100_000, 1_000_000]
    value = np.array([-4.0, -2.0, 2.0, 6.0])
    est = stats.crossing_estimate(x, value, value - 3, value + 3, n=50)
    # the upper end (-1, 1, 5, 9) crosses halfway between 1e3 and 1e4 (log scale), the lower end (-7, -5, -1, 3) a quarter
    # of the way from 1e5 to 1e6
    assert est.low == pytest.approx(10 ** 3.5) and est.value == pytest.approx(10 ** 4.5)
    assert est.high == pytest.approx(10 ** (5 + 1 / 4))
    wide = stats.crossing_estimate(x, value, value - 9, value + 3, n=50)
    assert wide.high == math.inf and wide.value == pytest.approx(10 ** 4.5)  # the far end never crosses
    never = stats.crossing_estimate(x, value - 20, value - 23, value - 17, n=50)
    assert math.isnan(never.value) and never.low == 1_000_000 and never.high == math.inf
