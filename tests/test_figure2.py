"""Figure 2's shared code (experiments.figure2): the tables it saves are the ones the statistics give."""
import matplotlib
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from horizonbandits import stats  # noqa: E402
from horizonbandits.experiments import figure2, instance_set, make_policies  # noqa: E402


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("fig2")
    instances = instance_set("ltf", 3, seed=1, H=2_000)
    pols = make_policies(["CURE-UCB", "SW-UCB", "Rexp3"], sigma=0.01)
    result = figure2.run("demo", instances, pols, [500, 2_000], [2_000], 2, title="demo", n_boot=200, output_dir=out,
                         backend="sequential", cache=False, progress=False)
    plt.close("all")
    return instances, pols, result, out


def test_run_saves_the_statistics_of_its_grid(small_run):
    _, pols, r, out = small_run
    assert len(r.df) == 3 * 3 * 2 * 2
    pd.testing.assert_frame_equal(r.summary, stats.regret_summary(r.df, n_boot=200))
    pd.testing.assert_frame_equal(r.diffs, stats.paired_differences(r.df[r.df["T"] == 2_000], "CURE-UCB", n_boot=200))
    for part in ("regret", "win_rates", "instance_means", "compute", "paired_differences"):
        assert (out / "tables" / f"demo_{part}.csv").exists(), part
    for part in ("regret", "win_rates"):
        assert (out / "figures" / f"demo_{part}.png").exists(), part
    saved = pd.read_csv(out / "tables" / "demo_regret.csv")
    assert saved["mean_regret"].tolist() == pytest.approx(r.summary["mean_regret"].tolist())
    assert list(r.regret_table().index) == list(pols)
    assert list(r.differences_table().index) == ["SW-UCB", "Rexp3"]


def test_accessors_read_the_tables(small_run):
    _, _, r, _ = small_run
    row = r.rates[(r.rates["row"] == "CURE-UCB") & (r.rates["col"] == "Rexp3")].iloc[0]
    assert r.win_rate("CURE-UCB", "Rexp3", 2_000) == (row["win_rate"], row["ci_low"], row["ci_high"])
    for T, policy in r.lowest().items():
        at_T = r.summary[r.summary["T"] == T]
        assert at_T.loc[at_T["policy"] == policy, "mean_regret"].iloc[0] == at_T["mean_regret"].min()
    lines = r.closing_lines()
    assert len(lines) == 3 and lines[0].startswith("- T = 2,000, the whole win-rate matrix: ") and "beaten by" in lines[0]
    assert lines[1].startswith("- T = 2,000: mean regret ") and "of 2 baselines" in lines[2]


def test_describe_and_the_switching_share(small_run):
    instances, pols, _, out = small_run
    share = figure2.switching_share(instances, [500, 2_000])
    assert 0 <= share <= 1
    text = figure2.describe(instances, pols, [500, 2_000])
    assert text.startswith("3 instances") and f"{share:.0%} of them" in text and len(text.splitlines()) == 4
    fig = figure2.plot_instances(instances, "demo_instances", out, n_shown=2)
    assert len(fig.axes) == 2 and (out / "figures" / "demo_instances.png").exists()
    plt.close(fig)


def test_bad_arguments_name_the_parameter(small_run):
    instances, pols, _, out = small_run
    with pytest.raises(ValueError, match="win_rate_horizons"):
        figure2.run("demo", instances, pols, [500], [2_000], 1, title="x", output_dir=out, backend="sequential")
    with pytest.raises(ValueError, match="n_shown"):
        figure2.plot_instances(instances, "x", out, n_shown=0)


def test_window_params_set_the_rule_of_the_sliding_window_policies_only():
    params = figure2.window_params(["CURE-UCB", "SW-UCB", "SW-TS"], {"CURE-UCB": {"eps": 0.5}}, "horizon")
    assert params == {"CURE-UCB": {"eps": 0.5}, "SW-UCB": {"window_rule": "horizon"}, "SW-TS": {"window_rule": "horizon"}}
    assert figure2.window_params(["CURE-UCB"], {}, "fixed") == {}
    assert figure2.window_params(["SW-TS"], {}, "fixed", 5_000) == {"SW-TS": {"window_rule": "fixed", "reference_horizon": 5_000}}
    with pytest.raises(ValueError, match="^window_rule="):
        figure2.window_params(["SW-UCB"], {}, "T")


def test_under_window_rule_swaps_only_the_sliding_window_rows(small_run):
    instances, pols, r, _ = small_run
    grid = dict(backend="sequential", cache=False, progress=False)
    numbers = ["problem", "policy", "T", "seed_index", "regret", "optimal_pulls"]
    # under the rule the policies already have, the table is the same
    same = figure2.under_window_rule(r.df, instances, pols, [500, 2_000], 2, "fixed", **grid)
    pd.testing.assert_frame_equal(same[numbers], r.df[numbers])
    other = figure2.under_window_rule(r.df, instances, pols, [500, 2_000], 2, "horizon", **grid)
    assert len(other) == len(r.df) and list(other["policy"].cat.categories) == list(pols)
    keep = other["policy"] != "SW-UCB"
    pd.testing.assert_frame_equal(other[keep][numbers].reset_index(drop=True),
                                  r.df[r.df["policy"] != "SW-UCB"][numbers].reset_index(drop=True))
    # at T = 500 the horizon rule's window (4 sqrt(500 log 500) = 222 rounds) is not the fixed one (4,291): other runs
    sw = other["policy"] == "SW-UCB"
    assert not (other[sw]["regret"].to_numpy() == r.df[r.df["policy"] == "SW-UCB"]["regret"].to_numpy()).all()


def test_switches_within_counts_instances_whose_optimal_arm_changes():
    import horizonbandits.rising as R
    flip = R.figure1(T_max=40_000, noise=0.0)  # i*(T) switches at T = 15,258
    flat = R.ltf([0.001, 0.001], [0.5, 0.9], T_max=40_000, noise=0.0)  # arm 1 best at every T
    insts = {"flip": flip, "flat": flat}
    assert figure2.switches_within(insts, [10_000, 30_000]) == 1
    assert figure2.switches_within(insts, [10_000, 15_000]) == 0


def test_win_rate_summary_counts_the_whole_matrix(small_run):
    _, pols, r, _ = small_run
    board = figure2.win_rate_summary(r.rates)
    assert set(board["policy"]) == set(pols) and (board["others"] == len(pols) - 1).all()
    for row in board.itertuples():
        mine = r.rates[(r.rates["row"] == row.policy) & (r.rates["T"] == row.T)]
        assert row.mean_win_rate == pytest.approx(mine["win_rate"].mean())
        assert row.beats == int((mine["ci_low"] > 0.5).sum())
        assert row.beaten_by == int((r.rates[(r.rates["col"] == row.policy) & (r.rates["T"] == row.T)]["ci_low"] > 0.5).sum())
    assert board.groupby("T")["rank"].min().eq(1).all()


def test_study_is_the_notebooks_instances_policies_and_horizons(tmp_path):
    """figure2.study: instance_set, make_policies with the sliding windows set and the noise told, the horizons joined;
    study.run is figure2.run on them."""
    s = figure2.study("ltf", 2, ["CURE-UCB", "SW-UCB"], {}, "horizon", [300], [600, 200], H=600, noise=0.05)
    assert s.horizons == [200, 300, 600] and s.win_rate_horizons == [200, 600]
    assert list(s.instances) == list(instance_set("ltf", 2, H=600, noise=0.05))
    assert s.policies["SW-UCB"].window_rule == "horizon" and s.policies["CURE-UCB"].sigma == 0.05
    assert repr(s) == figure2.describe(s.instances, s.policies, s.horizons)
    assert figure2.other_window_rule("fixed") == "horizon" and figure2.other_window_rule("horizon") == "fixed"
    with pytest.raises(ValueError, match="window_rule"):
        figure2.other_window_rule("sliding")
    kw = dict(title="t", n_boot=50, output_dir=tmp_path, backend="sequential", cache=False, progress=False)
    a = s.run("a", 2, **kw)
    b = figure2.run("b", s.instances, s.policies, s.horizons, s.win_rate_horizons, 2, **kw)
    pd.testing.assert_frame_equal(a.df.drop(columns="wall_time"), b.df.drop(columns="wall_time"))
    assert "rows; kernel time" in a.compute_report()
    settings = s.ledger_settings(2, 0.05, {})
    assert settings["instances"] == 2 and settings["generator options"] == "defaults"


def test_the_run_method_reruns_under_the_other_window_rule_like_the_function(small_run):
    instances, pols, r, _ = small_run
    grid = dict(backend="sequential", cache=False, progress=False)
    numbers = ["problem", "policy", "T", "seed_index", "regret", "optimal_pulls"]
    by_function = figure2.under_window_rule(r.df, instances, pols, [500, 2_000], 2, "horizon", **grid)
    pd.testing.assert_frame_equal(r.under_window_rule("horizon", **grid)[numbers], by_function[numbers])


class _Recorder:
    """A stand-in ledger: the calls in order."""

    def __init__(self):
        self.calls = []

    def check(self, claim_id, outcome, **kw):
        self.calls.append((claim_id, outcome, kw))
        return outcome


def test_check_claims_judges_each_claim_on_each_grid_in_order(small_run):
    _, _, r, _ = small_run
    other = r.df.assign(regret=r.df["regret"].where(r.df["policy"] != "CURE-UCB", r.df["regret"] * 3))
    grids = [(r.df, {"rule": "a"}, True), (other, {"rule": "b"}, False)]
    ledger = _Recorder()
    r.check_claims(ledger, grids, "order", short=("short", 0.5, None), long=("long", 0.95, 0.5), n_boot=200)
    assert [(c, kw["reading"]["rule"], kw["default"]) for c, _, kw in ledger.calls] == [
        ("order", "a", True), ("order", "b", False), ("short", "a", True), ("short", "b", False),
        ("long", "a", True), ("long", "b", False)]
    assert [kw["settings"] for _, _, kw in ledger.calls] == [None, None, {"T": 2_000}, {"T": 2_000}, {"T": 2_000},
                                                            {"T": 2_000}]
    # each outcome is the rule's own on that grid (the thresholds and partly are passed on, not replaced)
    assert ledger.calls[0][1] == figure2.ordering_outcome(r.df, n_boot=200)
    assert ledger.calls[3][1] == figure2.wins_outcome(other, 2_000, 0.5, n_boot=200)
    assert ledger.calls[4][1] == figure2.wins_outcome(r.df, 2_000, 0.95, partly=0.5, n_boot=200)
    assert ledger.calls[4][1] != figure2.wins_outcome(r.df, 2_000, 0.5, n_boot=200)


def test_the_study_run_opens_its_closing_lines_and_makes_its_ledger(tmp_path, capsys):
    s = figure2.study("ltf", 2, ["CURE-UCB", "SW-UCB"], {}, "fixed", [300], [600], H=600, noise=0.05,
                      generator_options={"K": 3})
    a = s.run("a", 2, title="t", n_boot=50, output_dir=tmp_path, backend="sequential", cache=False, progress=False)
    plt.close("all")
    assert a.closing_lines()[0] == a.opening == (f"- 2 LTF instances x 2 seeds; the optimal arm changes between "
                                                 f"T = 300 and T = 600 on {s.switching:.0%} of them.")
    ledger = s.ledger("ltf_experiments", tmp_path, 2)
    assert ledger.settings == s.ledger_settings(2, 0.05, {"K": 3})
    a.show()
    shown = capsys.readouterr().out
    assert shown.startswith(a.compute_report()) and "SW-UCB" in shown


def test_a_reading_on_fewer_seeds_pairs_with_the_first_seeds_and_is_checked(small_run):
    instances, pols, r, _ = small_run
    grid = dict(backend="sequential", cache=False, progress=False)
    numbers = ["problem", "policy", "T", "seed_index", "regret", "optimal_pulls"]
    one = r.under_window_rule("horizon", 1, **grid)
    full = r.under_window_rule("horizon", **grid)
    assert set(one["seed_index"]) == {0} and len(one) == len(full) // 2
    pd.testing.assert_frame_equal(one[numbers].reset_index(drop=True),
                                  full[full["seed_index"] == 0][numbers].reset_index(drop=True))
    for bad in (0, 3):
        with pytest.raises(ValueError, match="n_seeds"):
            r.under_window_rule("horizon", bad, **grid)
    ledger = _Recorder()
    flips = r.check_claims(ledger, [(r.df, {"rule": "a"}, True)], "order", short=("short", 0.5, None),
                           long=("long", 0.5, None), n_boot=200, fewer_seeds=1)
    # the flips are exactly the claims whose verdict on the first seed differs from the one recorded
    expected = [cid for cid, judge in (("order", lambda d: figure2.ordering_outcome(d, n_boot=200)),
                                       ("short", lambda d: figure2.wins_outcome(d, 2_000, 0.5, n_boot=200)),
                                       ("long", lambda d: figure2.wins_outcome(d, 2_000, 0.5, n_boot=200)))
                if judge(r.df[r.df["seed_index"] < 1]).verdict != judge(r.df).verdict]
    assert [f.split(":")[0] for f in flips] == expected
    assert r.seed_cut == (1, flips) and "first 1 of the 2 seeds" in r.closing_lines()[-1]
    r.seed_cut = None  # the fixture is shared
