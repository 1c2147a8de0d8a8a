"""stats.py holds the statistics, each under one name: no other module re-exports them."""
import math

import numpy as np
import pytest
from scipy.stats import norm

from horizonbandits import stats


def test_the_stats_functions_live_in_stats_only():
    import horizonbandits.commit.grid as grid
    import horizonbandits.experiments as ex
    import horizonbandits.plotting as plotting
    for name in ["regret_summary", "win_rates", "win_rate_matrix", "paired_differences"]:
        assert not hasattr(ex, name)  # one name per function: they live in stats only
    assert not hasattr(grid, "slope") and not hasattr(grid, "half_slopes")
    assert not hasattr(plotting, "mean_ci") and not hasattr(stats, "mean_ci")  # normal_interval has one name


def test_normal_interval():
    x = np.array([1.0, 2.0, 4.0, 7.0])
    mean, half = stats.normal_interval(x)
    assert mean == pytest.approx(3.5) and half == pytest.approx(norm.ppf(0.975) * x.std(ddof=1) / 2)
    m2, h2 = stats.normal_interval(np.stack([x, 2 * x], axis=1), axis=0, level=0.9)
    assert m2.tolist() == pytest.approx([3.5, 7.0]) and h2[1] == pytest.approx(2 * h2[0])
    assert stats.normal_interval([5.0])[1] == 0  # one value: no interval


def test_slopes():
    x = np.array([1, 2, 4, 8, 16])
    assert stats.slope(x, 3 * x ** 0.5) == pytest.approx(0.5)
    y = np.where(x <= 4, x ** 1.0, 4 * (x / 4) ** 0.5)
    lo, hi = stats.half_slopes(x, y)
    assert lo == pytest.approx(1.0) and hi == pytest.approx(0.5)


def test_bootstrap_band_is_the_seeded_percentile_interval_of_the_mean():
    from horizonbandits.stats import bootstrap_band
    x = np.random.default_rng(3).normal(10.0, 2.0, size=40)
    lo, hi = bootstrap_band(x)
    boot = x[np.random.default_rng(0).integers(0, 40, size=(1000, 40))].mean(axis=1)
    assert (lo, hi) == (np.quantile(boot, 0.025), np.quantile(boot, 0.975))
    assert bootstrap_band(x) == (lo, hi) and lo < x.mean() < hi
    # about two standard errors each side, as a 95 % interval of a mean should be
    se = x.std(ddof=1) / np.sqrt(40)
    assert 1.6 * se < x.mean() - lo < 2.4 * se and 1.6 * se < hi - x.mean() < 2.4 * se
    narrow = bootstrap_band(x, level=0.5)
    assert lo < narrow[0] < narrow[1] < hi
    assert bootstrap_band([5.0]) == (5.0, 5.0)


def test_difference_of_independent_estimates():
    from horizonbandits.stats import Estimate, difference, proportion_estimate
    a, b = Estimate(10.0, 8.0, 12.0, 50), Estimate(4.0, 1.0, 7.0, 40)
    d = difference(a, b)
    assert d.value == 6.0 and d.n == 40
    assert abs(d.half_width - math.hypot(2.0, 3.0)) < 1e-12
    # Newcombe's hybrid score interval: asymmetric, from the two Wilson intervals
    p, q = proportion_estimate(199, 200), proportion_estimate(180, 200)
    d = difference(p, q)
    assert d.percent and abs(d.value - 0.095) < 1e-12
    assert abs((d.value - d.low) - math.hypot(p.value - p.low, q.high - q.value)) < 1e-12
    assert abs((d.high - d.value) - math.hypot(p.high - p.value, q.value - q.low)) < 1e-12
    assert d.low > 0 and d.high < 0.2
    with pytest.raises(ValueError, match="level"):
        difference(a, Estimate(1.0, 0.0, 2.0, 5, level=0.9))


def test_summary_rows_read_back_as_estimates_with_their_standard_errors():
    from horizonbandits.commit import CommitProblem, UCBCommit, summary_table
    from horizonbandits.experiments import run_grid
    problem = CommitProblem.bernoulli([0.7, 0.5, 0.3], [0.3, 0.5, 0.7], 60, 240)
    runs = run_grid({"p": problem}, {"UCBCommit": UCBCommit()}, n_seeds=40, seed=3, cache=False, progress=False)
    row = summary_table(runs).iloc[0]
    est = stats.summary_estimate(row)
    assert (est.value, est.low, est.high, est.n, est.unit) == (row.mean_regret, row.ci_low, row.ci_high, 40, "runs")
    se = runs.regret.std(ddof=1) / math.sqrt(40)  # the summary keeps the standard error of its mean
    assert row.se == pytest.approx(se, rel=1e-12)
    assert row.ci_high - row.ci_low == pytest.approx(2 * norm.ppf(0.975) * se, rel=1e-12)
    one = summary_table(run_grid({"p": problem}, {"UCBCommit": UCBCommit()}, n_seeds=1, seed=3, cache=False,
                                 progress=False)).iloc[0]
    assert one.se == 0 and one.ci_low == one.ci_high == one.mean_regret  # one run: no interval


def test_worst_rows_picks_the_largest_value_per_group():
    import pandas as pd
    table = pd.DataFrame({"T": [1, 1, 2, 2, 1], "policy": ["a", "a", "a", "b", "b"], "gap": [0.1, 0.2, 0.1, 0.1, 0.3],
                          "mean_regret": [3.0, 5.0, 1.0, 2.0, 0.5]})
    worst = stats.worst_rows(table, ["T", "policy"])
    assert worst[["T", "policy", "gap", "mean_regret"]].values.tolist() == [[1, "a", 0.2, 5.0], [1, "b", 0.3, 0.5],
                                                                           [2, "a", 0.1, 1.0], [2, "b", 0.1, 2.0]]
    assert list(worst.index) == [0, 1, 2, 3]


def test_ratio_of_independent_estimates_has_a_log_scale_interval():
    a, b = stats.Estimate(6.0, 5.4, 6.6, 30, "runs"), stats.Estimate(2.0, 1.6, 2.4, 20, "runs")
    r = stats.ratio(a, b)
    w = math.hypot(0.6 / 6.0, 0.4 / 2.0)
    assert r.value == 3.0 and r.n == 20 and r.unit == "runs"
    assert r.low == pytest.approx(3.0 * math.exp(-w), rel=1e-14) and r.high == pytest.approx(3.0 * math.exp(w), rel=1e-14)
    assert r.low * r.high == pytest.approx(r.value ** 2, rel=1e-12)  # symmetric in logs
    with pytest.raises(ValueError, match="positive"):
        stats.ratio(stats.Estimate(0.0, -1.0, 1.0, 5), b)
    with pytest.raises(ValueError, match="level"):
        stats.ratio(a, stats.Estimate(2.0, 1.0, 3.0, 5, level=0.9))


def test_log_line_is_the_least_squares_line_in_logs():
    x = np.array([10.0, 100.0, 1000.0, 10000.0])
    y = 3.0 * x ** 0.5 * np.array([1.1, 0.9, 1.05, 0.97])
    intercept, b = stats.log_line(x, y)
    assert b == pytest.approx(stats.slope(x, y), rel=1e-12)
    assert intercept == pytest.approx(np.mean(np.log(y)) - b * np.mean(np.log(x)), rel=1e-12)
    assert stats.log_line(x, 2.0 * x, 1.0) == pytest.approx((math.log(2.0), 1.0), rel=1e-12)
    assert stats.log_line(x, 5.0 * np.ones(4), 0)[0] == pytest.approx(math.log(5.0))  # the vertical shift of a reference


def test_the_quantiles_are_scipy_stats_bit_for_bit():
    """normal_quantile and student_t_quantile avoid importing scipy.stats; they must give its numbers exactly."""
    from scipy.stats import t
    rng = np.random.default_rng(33)
    q = np.concatenate([rng.random(20_000), np.linspace(0, 1, 2_001), 10.0 ** -np.arange(1, 300, 7.0),
                        1 - 10.0 ** -np.arange(1, 17), [0.0, 1.0, 0.5, 0.975, 0.995, 0.9, 1e-300, -0.1, 1.1, np.nan]])
    for level in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999):  # what the functions ask for: 0.5 + level / 2, as they compute it
        q = np.append(q, 0.5 + level / 2)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(stats.normal_quantile(q), norm.ppf(q))
        for df in [1, 2, 3, 5, 9, 10, 39, 40, 99, 100, 1_499, 10**6, 1e12, 0.5]:
            np.testing.assert_array_equal(stats.student_t_quantile(q, df), t.ppf(q, df), err_msg=f"df={df}")
    assert type(stats.normal_quantile(0.975)) is type(norm.ppf(0.975))  # a numpy float, as before
    assert stats.student_t_quantile(0.975, 9) == t.ppf(0.975, 9) and stats.normal_quantile(0.975) == norm.ppf(0.975)


def test_stats_does_not_import_scipy_stats():
    import subprocess
    import sys
    code = ("import sys, numpy as np; from horizonbandits import stats; "
            "stats.mean_estimate([1.0, 2.0, 4.0]); stats.proportion_estimate(3, 10); stats.normal_interval([1.0, 2.0]); "
            "stats.slope([1, 2, 4, 8], [1.0, 2.1, 3.9, 8.3]); stats.binomial_half_width(0.3, 100); "
            "print('scipy.stats' in sys.modules)")
    import os
    from pathlib import Path
    env = {**os.environ, "PYTHONPATH": str(Path(stats.__file__).resolve().parents[1])}  # this checkout's package
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "False"
