"""tidy_grid: the three models through one call, one leading set of columns, the numbers of each model's own grid."""
import numpy as np
import pandas as pd
import pytest

from horizonbandits.commit import UCBCommit, UniformCommit
from horizonbandits.commit import instances as commit_instances
from horizonbandits.commit.portfolio_model import portfolio_grid
from horizonbandits.commit.grid import run_grid as commit_grid
from horizonbandits.commit.portfolio_instances import section73
from horizonbandits.commit import ROSCOC, UCBPortfolio
from horizonbandits.experiments import TIDY_COLUMNS, run_grid, tidy_grid
from horizonbandits.rising import CureUCB, RedUCB, ltf_random

KW = dict(cache=False)


def test_rising():
    rng = np.random.default_rng(1)
    insts = {"a": ltf_random(rng, K=3, T_ref=400), "b": ltf_random(rng, K=2, T_ref=400)}
    pols = {"CURE": CureUCB(), "Red": RedUCB()}
    df = tidy_grid(insts, pols, [200, 400], n_seeds=3, seed=2, **KW)
    assert list(df.columns[:6]) == TIDY_COLUMNS and (df.model == "rising").all()
    ref = run_grid(insts, pols, [200, 400], n_seeds=3, seed=2, backend="sequential", progress=False, **KW)
    assert np.array_equal(df.regret.to_numpy(), ref.regret.to_numpy())
    assert df.problem.tolist() == ref.instance.tolist() and df.seed_index.tolist() == ref.seed.tolist()


def test_commitment_sweeping_the_horizon():
    pols = {"UCB": UCBCommit(), "Uniform": UniformCommit()}
    df = tidy_grid(lambda T: commit_instances.section72(T, 0.5), pols, [300, 600], n_seeds=5, seed=1,
                   problem_label="section 7.2", **KW)
    assert list(df.columns[:6]) == TIDY_COLUMNS and (df.model == "commitment").all()
    assert sorted(df["T"].unique()) == [300, 600] and len(df) == 2 * 2 * 5
    cases = [dict(T=T, problem=commit_instances.section72(T, 0.5)) for T in (300, 600)]
    _, runs = commit_grid(cases, pols, n_seeds=5, seed=1, keep_runs=True, **KW)
    pd.testing.assert_series_equal(df.regret, runs.regret)
    assert (df.experiment + df.commitment - df.regret).abs().max() < 1e-9


def test_portfolio():
    df = tidy_grid({"7.3": section73(300)}, {"ROSCOC": ROSCOC(), "UCB-P": UCBPortfolio()}, n_seeds=2, seed=0, **KW)
    assert list(df.columns[:6]) == TIDY_COLUMNS and (df.model == "portfolio").all()
    assert df.policy.tolist() == ["ROSCOC"] * 2 + ["UCB-P"] * 2
    ref = portfolio_grid(section73, [300], [ROSCOC(), UCBPortfolio()], n_seeds=2, seed=0, **KW)
    assert np.array_equal(df.regret.to_numpy(), ref.regret.to_numpy())


def test_bad_problems():
    with pytest.raises(ValueError, match="problem="):
        tidy_grid({"x": 3}, {}, n_seeds=1)
    with pytest.raises(ValueError, match="horizons"):
        tidy_grid({"7.2": commit_instances.section72(300, 0.5)}, {"UCB": UCBCommit()}, [300], n_seeds=1)


def test_every_model_names_the_root_seed_that_simulate_takes():
    from horizonbandits.commit import simulate as commit_simulate
    from horizonbandits.commit.portfolio_model import simulate as portfolio_simulate
    from horizonbandits.rising import simulate as rising_simulate
    inst = ltf_random(np.random.default_rng(3), K=3, T_ref=400)
    rising = tidy_grid({"a": inst}, {"CURE": CureUCB()}, [400], n_seeds=3, seed=5, **KW)
    assert list(rising.columns[:7]) == TIDY_COLUMNS + ["root_seed"] and rising.root_seed.nunique() == 1
    res = rising_simulate(inst, CureUCB(), 400, n_seeds=3, seed=int(rising.root_seed.iloc[0]))
    assert np.array_equal(rising.regret.to_numpy(), res.regret)
    problem = commit_instances.section72(300, 0.5)
    commit = tidy_grid({"7.2": problem}, {"UCB": UCBCommit()}, n_seeds=4, seed=6, **KW)
    assert list(commit.columns[:7]) == TIDY_COLUMNS + ["root_seed"] and set(commit.root_seed) == {6}
    res = commit_simulate(problem, UCBCommit(), n_seeds=4, seed=6)
    assert np.array_equal(commit.regret.to_numpy(), res.regret)
    portfolio = tidy_grid({"7.3": section73(200)}, {"ROSCOC": ROSCOC()}, n_seeds=2, seed=4, **KW)
    assert list(portfolio.columns[:7]) == TIDY_COLUMNS + ["root_seed"] and set(portfolio.root_seed) == {4}
    res = portfolio_simulate(section73(200), ROSCOC(), n_seeds=2, seed=4)
    assert np.array_equal(portfolio.regret.to_numpy(), res.regret)
