"""run_grid: the three models through one call, one leading set of columns, each row its model's simulate."""
import numpy as np
import pandas as pd
import pytest

from horizonbandits.commit import ROSCOC, UCBCommit, UCBPortfolio, UniformCommit, simulate, summary_table
from horizonbandits.commit import instances as commit_instances
from horizonbandits.commit.portfolio_instances import section73
from horizonbandits.experiments import TIDY_COLUMNS, run_grid
from horizonbandits.rising import CureUCB, RedUCB, ltf_random
from horizonbandits.stats import normal_interval

KW = dict(cache=False, progress=False)


def test_rising():
    rng = np.random.default_rng(1)
    insts = {"a": ltf_random(rng, K=3, T_ref=400), "b": ltf_random(rng, K=2, T_ref=400)}
    pols = {"CURE": CureUCB(), "Red": RedUCB()}
    df = run_grid(insts, pols, [200, 400], n_seeds=3, seed=2, backend="sequential", **KW)
    assert list(df.columns[:7]) == TIDY_COLUMNS + ["root_seed"] and (df.model == "rising").all()
    assert list(df.columns[7:]) == ["optimal_pulls", "optimal_arm", "K", "wall_time"]
    assert df.problem.tolist() == ["a"] * 12 + ["b"] * 12 and df.seed_index.tolist() == [0, 1, 2] * 8
    loky = run_grid(insts, pols, [200, 400], n_seeds=3, seed=2, n_jobs=2, **KW)  # the rising default: loky
    pd.testing.assert_frame_equal(df.drop(columns="wall_time"), loky.drop(columns="wall_time"))


def test_commitment_sweeping_the_horizon():
    pols = {"UCB": UCBCommit(), "Uniform": UniformCommit()}
    df = run_grid(lambda T: commit_instances.section72(T, 0.5), pols, [300, 600], n_seeds=5, seed=1,
                  problem_label="section 7.2", **KW)
    assert list(df.columns[:6]) == TIDY_COLUMNS and (df.model == "commitment").all()
    assert sorted(df["T"].unique()) == [300, 600] and len(df) == 2 * 2 * 5 and set(df.problem) == {"section 7.2"}
    for (T, name), rows in df.groupby(["T", "policy"]):
        res = simulate(commit_instances.section72(T, 0.5), pols[name], n_seeds=5, seed=1)
        assert np.array_equal(rows.regret.to_numpy(), res.regret)
        assert np.array_equal(rows[[f"pulls_{i + 1}" for i in range(res.pulls.shape[1])]].to_numpy(), res.pulls)
    assert (df.experiment + df.commitment - df.regret).abs().max() < 1e-9


def test_commitment_cases_keep_their_labels_and_summarise_as_simulate():
    cases = [dict(T=T, c=c, problem=commit_instances.section72(T, c)) for T in (300, 900) for c in (0.5, 0.2)]
    pols = {"RAEC": commit_instances.section72_policy(), "UCB": UCBCommit()}
    runs = run_grid(cases, pols, n_seeds=6, seed=2, **KW)
    assert list(runs.columns[:8]) == TIDY_COLUMNS + ["root_seed", "c"] and runs.attrs["case_labels"] == ["T", "c"]
    assert runs.problem.iloc[0] == "c=0.5"
    table = summary_table(runs)
    assert list(table.columns[:4]) == ["T", "c", "policy", "N"] and len(table) == len(cases) * len(pols)
    k = 0
    for case in cases:
        for name, pol in pols.items():
            res = simulate(case["problem"], pol, n_seeds=6, seed=2)  # the same runs, summarised here by hand
            mean, half = normal_interval(res.regret)
            want = {"T": case["T"], "c": case["c"], "policy": name, "N": res.N, "n_seeds": 6, "mean_regret": mean,
                    "ci_low": mean - half, "ci_high": mean + half, "se": res.regret.std(ddof=1) / np.sqrt(6),
                    "experiment_regret": res.experiment_regret.mean(), "commitment_regret": res.commitment_regret.mean(),
                    "p_commit_best": np.mean(res.committed == res.best_g), "label": pol.label,
                    **{f"commit_arm{i + 1}": v for i, v in enumerate(res.commit_rate())},
                    **{f"pulls_arm{i + 1}": v for i, v in enumerate(res.pulls.mean(axis=0))}}
            got = table.iloc[k].to_dict()
            assert set(got) == set(want)
            assert {key: got[key] for key in want} == want  # exactly: the same arithmetic on the same runs
            k += 1
    # a case-dependent policy (section 7.1's Stage-I scale): the callable form
    by_case = run_grid(cases[:2], lambda case: {"RAEC": commit_instances.section72_policy()}, n_seeds=2, seed=0, **KW)
    assert set(by_case.policy) == {"RAEC"} and len(by_case) == 4


def test_portfolio():
    df = run_grid({"7.3": section73(300)}, {"ROSCOC": ROSCOC(), "UCB-P": UCBPortfolio()}, n_seeds=2, seed=0, **KW)
    assert list(df.columns[:6]) == TIDY_COLUMNS and (df.model == "portfolio").all()
    assert df.policy.tolist() == ["ROSCOC"] * 2 + ["UCB-P"] * 2
    swept = run_grid(section73, [ROSCOC()], [200, 300], n_seeds=2, seed=0, **KW)
    assert swept["T"].tolist() == [200, 200, 300, 300] and set(swept.problem) == {"problem"}
    assert np.array_equal(swept.regret.to_numpy()[2:], df.regret.to_numpy()[:2])


def test_bad_problems():
    with pytest.raises(ValueError, match="problem="):
        run_grid({"x": 3}, {}, n_seeds=1)
    with pytest.raises(ValueError, match="horizons"):
        run_grid({"7.2": commit_instances.section72(300, 0.5)}, {"UCB": UCBCommit()}, [300], n_seeds=1)
    with pytest.raises(ValueError, match="horizons=None"):
        run_grid({"a": ltf_random(np.random.default_rng(0), K=2, T_ref=100)}, {"CURE": CureUCB()}, n_seeds=1)
    with pytest.raises(ValueError, match="mixes the models"):
        run_grid({"a": ltf_random(np.random.default_rng(0), K=2, T_ref=300), "b": commit_instances.section72(300, 0.5)},
                 {"UCB": UCBCommit()}, [100], n_seeds=1)


def test_every_model_names_the_root_seed_that_simulate_takes():
    from horizonbandits.commit.portfolio_model import simulate as portfolio_simulate
    from horizonbandits.rising import simulate as rising_simulate
    inst = ltf_random(np.random.default_rng(3), K=3, T_ref=400)
    rising = run_grid({"a": inst}, {"CURE": CureUCB()}, [400], n_seeds=3, seed=5, backend="sequential", **KW)
    assert rising.root_seed.nunique() == 1
    res = rising_simulate(inst, CureUCB(), 400, n_seeds=3, seed=int(rising.root_seed.iloc[0]))
    assert np.array_equal(rising.regret.to_numpy(), res.regret)
    problem = commit_instances.section72(300, 0.5)
    commit = run_grid({"7.2": problem}, {"UCB": UCBCommit()}, n_seeds=4, seed=6, **KW)
    assert set(commit.root_seed) == {6}
    assert np.array_equal(commit.regret.to_numpy(), simulate(problem, UCBCommit(), n_seeds=4, seed=6).regret)
    portfolio = run_grid({"7.3": section73(200)}, {"ROSCOC": ROSCOC()}, n_seeds=2, seed=4, **KW)
    assert set(portfolio.root_seed) == {4}
    res = portfolio_simulate(section73(200), ROSCOC(), n_seeds=2, seed=4)
    assert np.array_equal(portfolio.regret.to_numpy(), res.regret)
