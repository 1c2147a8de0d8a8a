"""The commitment grid's run table and its summary: built column by column (the fast way) they equal, value for
value and dtype for dtype, what one DataFrame per task concatenated and one ``summarise`` per (case, policy)
gave; where the two ways could differ in a dtype the table is built frame by frame."""
import numpy as np
import pandas as pd
import pytest

from horizonbandits.commit import UCBCommit, UniformCommit, grid, simulate, summarise, summary_table
from horizonbandits.commit import instances
from horizonbandits.experiments import run_grid


def _done(labels_per_case, K=None):
    """(case, labels, name, CommitResult) per task, as ``_commitment_grid`` collects them."""
    out = []
    for case, labels in enumerate(labels_per_case):
        problem = instances.section72(300 + 100 * case, 0.5) if K is None else _k_arms(K[case], 400)
        for name, policy in (("UCB", UCBCommit()), ("Uniform", UniformCommit())):
            out.append((case, labels, name, simulate(problem, policy, n_seeds=4 + case, seed=case)))
    return out


def _k_arms(K, T):
    from horizonbandits.commit import CommitProblem

    rng = np.random.default_rng(K)
    return CommitProblem.bernoulli(rng.uniform(0.2, 0.8, K), rng.uniform(0.2, 0.8, K), N=T // 4, T=T)


def _assert_same(a: pd.DataFrame, b: pd.DataFrame):
    assert list(a.columns) == list(b.columns)
    assert list(a.dtypes) == list(b.dtypes)
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_columns_equal_frames_on_plain_labels():
    labels = [dict(schedule=s, T=T, c=c, flag=T > 400, side="commitment") for s, T, c in
              (("sqrt", 300, 0.25), ("quarter", 400, 1.0), ("sqrt", 500, 4.0))]
    done = _done(labels)
    fast = grid._runs_table_columns(done)
    assert fast is not None  # the fast way is the one taken for a grid like the notebooks'
    _assert_same(fast, grid._runs_table_frames(done))
    assert fast.schedule.dtype == pd.Series(["sqrt"]).dtype and fast["T"].dtype == np.int64 and fast.flag.dtype == bool


@pytest.mark.parametrize("labels, K", [
    ([dict(c=1), dict(c=0.5), dict(c=2)], None),  # an int and a float: the column is float
    ([dict(c=1, extra="x"), dict(c=2), dict(c=3)], None),  # a label missing in some cases: NaN there
    ([dict(c=1), dict(c=True), dict(c=3)], None),  # a bool among ints: object
    ([dict(c=np.float32(1)), dict(c=np.float32(2)), dict(c=np.float32(3))], None),  # a numpy scalar type
    ([dict(c=1), dict(c=2), dict(c=3)], [3, 4, 3]),  # K differs: pulls_4 is NaN where K = 3
])
def test_frames_are_kept_where_a_dtype_could_differ(labels, K):
    done = _done(labels, K)
    assert grid._runs_table_columns(done) is None
    _assert_same(grid._runs_table(done), grid._runs_table_frames(done))


def _summary_by_groupby(runs, labels):
    """``summary_table`` as it was written before the fast way: one pandas group and one ``summarise`` each."""
    rows = []
    for _, g in runs.groupby(["case", "policy"], sort=False, observed=True, dropna=False):
        first = g.iloc[0]
        rows.append({**{c: first[c] for c in labels if c != "policy"}, **summarise(g)})
    return pd.DataFrame(rows)


def test_summary_table_equals_one_summarise_per_group():
    cases = [dict(T=T, c=c, problem=instances.section72(T, c)) for T in (300, 900) for c in (0.5, 0.2)]
    runs = run_grid(cases, {"U": UCBCommit(), "R": UniformCommit()}, n_seeds=7, seed=3, cache=False, progress=False)
    _assert_same(summary_table(runs), _summary_by_groupby(runs, runs.attrs["case_labels"]))
    # rows out of order and a group split in two places: each pair's runs in table order, pairs by first row
    shuffled = runs.iloc[np.random.default_rng(0).permutation(len(runs))].reset_index(drop=True)
    shuffled.attrs = runs.attrs
    _assert_same(summary_table(shuffled), _summary_by_groupby(shuffled, runs.attrs["case_labels"]))
    mixed_K = run_grid([dict(c=1, problem=_k_arms(3, 400)), dict(c=0.5, problem=_k_arms(4, 400))], {"U": UCBCommit()},
                       n_seeds=5, seed=1, cache=False, progress=False)
    _assert_same(summary_table(mixed_K), _summary_by_groupby(mixed_K, mixed_K.attrs["case_labels"]))


def test_a_summary_reads_its_own_rows():
    cases = [dict(T=300, problem=instances.section72(300, 0.5))]
    runs = run_grid(cases, {"U": UCBCommit()}, n_seeds=6, seed=2, cache=False, progress=False)
    row = summarise(runs)
    res = simulate(cases[0]["problem"], UCBCommit(), n_seeds=6, seed=2)
    assert row["mean_regret"] == res.regret.mean() and row["n_seeds"] == 6
    assert row["pulls_arm1"] == res.pulls[:, 0].mean() and row["se"] == res.regret.std(ddof=1) / np.sqrt(6)
