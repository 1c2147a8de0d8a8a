"""Compiled paths against the per-round references (exactly on shared tables, in distribution otherwise),
and the behaviour each policy's description promises."""
import math

import numpy as np
import pytest

from commit_checks import assert_same_commitment_shares, discrete_problem, z

from horizonbandits.commit import (CommitProblem, NoShiftElimination, RAEC, UCBCommit, UniformCommit,
                                   reference_runs, simulate, stage1_survivors)
from horizonbandits.commit import instances, theory
from horizonbandits.commit.elimination import allocate_round_robin
from horizonbandits.commit.sampling import draw_tables, environment_stream_seeds, policy_stream_seeds

PROBLEMS = {
    "bernoulli": CommitProblem.bernoulli([0.6, 0.5, 0.45, 0.3], [0.3, 0.5, 0.55, 0.52], 300, 1200),
    "eliminating": CommitProblem.bernoulli([0.9, 0.2, 0.5, 0.3], [0.1, 0.9, 0.6, 0.2], 600, 1200),
    "N<K": CommitProblem.bernoulli([0.6, 0.5, 0.45], [0.3, 0.5, 0.55], 2, 50),
    "T-N=1": CommitProblem.bernoulli([0.6, 0.5, 0.45], [0.3, 0.5, 0.55], 80, 81),
    "discrete": discrete_problem(),
}
POLICIES = [RAEC(), RAEC(commit="empirical", stage1_scale=0.1), RAEC(eps=0.05, stage2_scale=0.1),
            RAEC(min_epochs=0), UCBCommit(), UniformCommit(), NoShiftElimination(stage_scale=0.2)]


@pytest.mark.parametrize("name", list(PROBLEMS))
@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.label)
def test_compiled_path_equals_reference_on_shared_tables(name, policy):
    problem = PROBLEMS[name]
    seeds = policy_stream_seeds(11, 6)
    for s in range(6):
        F, G = draw_tables(problem, problem.N, seed=11, s=s)
        counts, committed = policy.run_table(problem, F, G, int(seeds[s]))
        arms, ref_committed = policy.reference(problem, F, G, int(seeds[s]))
        assert arms.size == problem.N and counts.sum() == problem.N
        np.testing.assert_array_equal(counts, np.bincount(arms, minlength=problem.K))
        assert committed == ref_committed


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_ucb_batch_kernel_picks_the_reference_arms_on_the_batch_stream(name):
    # the batch kernel runs several seeds side by side (LANES); 9 seeds fill two groups of lanes and part of a
    # third, and every seed must make the per-round reference's pulls and commitment on its own outcome stream
    problem = PROBLEMS[name]
    env, pol = environment_stream_seeds(13, 9), policy_stream_seeds(13, 9)
    counts, committed = UCBCommit().run_batch(problem, env, pol)
    for s in range(9):
        arms, ref_committed = UCBCommit().reference_batch(problem, int(env[s]), int(pol[s]))
        np.testing.assert_array_equal(counts[s], np.bincount(arms, minlength=problem.K))
        assert committed[s] == ref_committed


def test_ucb_batch_kernel_follows_close_arms_pull_for_pull():
    # nearly equal arms: UCB switches arm in hundreds of rounds, so a wrong index or tie in any round shows
    problem = CommitProblem.bernoulli([0.5, 0.5, 0.51, 0.5, 0.49], [0.5, 0.4, 0.5, 0.6, 0.5], 1500, 3000)
    env, pol = environment_stream_seeds(3, 5), policy_stream_seeds(3, 5)
    counts, committed = UCBCommit().run_batch(problem, env, pol)
    for s in range(5):
        arms, ref_committed = UCBCommit().reference_batch(problem, int(env[s]), int(pol[s]))
        assert np.count_nonzero(np.diff(arms)) > problem.N // 5
        np.testing.assert_array_equal(counts[s], np.bincount(arms, minlength=problem.K))
        assert committed[s] == ref_committed


@pytest.mark.parametrize("name", ["eliminating", "discrete"])
@pytest.mark.parametrize("policy", [RAEC(stage1_scale=0.1, stage2_scale=0.1, commit="empirical"), RAEC(),
                                    UCBCommit(), UniformCommit(), NoShiftElimination(stage_scale=0.1)],
                         ids=lambda p: p.label)
def test_batch_draws_agree_with_reference_in_distribution(name, policy):
    problem = PROBLEMS[name]
    n = 300
    ref_pulls, ref_committed = reference_runs(problem, policy, n, seed=21)
    exp, com = problem.regret_parts(ref_pulls, ref_committed)
    fast = simulate(problem, policy, n, seed=22)
    # four-sigma bands, on the regret, on each arm's pulls and on each arm's commitment share
    assert abs(z(exp + com, fast.regret)) < 4
    for i in range(problem.K):
        assert abs(z(ref_pulls[:, i], fast.pulls[:, i])) < 4
    assert_same_commitment_shares(ref_committed, fast.committed, problem.K)


def test_every_policy_uses_exactly_the_budget_and_commits_to_an_arm():
    problem = PROBLEMS["eliminating"]
    for policy in POLICIES:
        res = simulate(problem, policy, 50, seed=1)
        assert np.all(res.pulls.sum(axis=1) == problem.N)
        assert res.committed.min() >= 0 and res.committed.max() < problem.K
        np.testing.assert_allclose(res.regret, res.experiment_regret + res.commitment_regret)


def test_round_robin_allocation_serves_arms_in_cycles():
    need = np.array([5, 0, 2, 7], dtype=np.int64)
    np.testing.assert_array_equal(allocate_round_robin(need, 100), need)
    # 9 rounds: cycles 1 and 2 pull arms 0, 2, 3 (6 rounds), cycle 3 pulls arms 0 and 3, then arm 0 in cycle 4
    np.testing.assert_array_equal(allocate_round_robin(need, 9), [4, 0, 2, 3])
    np.testing.assert_array_equal(allocate_round_robin(need, 8), [3, 0, 2, 3])
    assert allocate_round_robin(need, 0).sum() == 0


def test_raec_reserved_epochs_follow_theorem_31_and_the_clamp():
    p = CommitProblem.bernoulli([0.5] * 4, [0.5] * 4, 5000, 20000)
    eps = theory.raec_epsilon(4, 5000, 20000)
    assert RAEC().stage1_epochs(p) == math.ceil(math.log2(1 / eps)) == 2
    assert not RAEC().binding(p)
    short = p.with_horizon(22, 500)  # eps > 1: the formula asks for no reserved epoch
    assert theory.raec_epsilon(4, 22, 500) > 1 and RAEC().theory_epochs(short) <= 0
    assert RAEC().stage1_epochs(short) == 1 and RAEC().binding(short)
    assert RAEC(min_epochs=0).stage1_epochs(short) == 0
    last = p.with_horizon(19999, 20000)  # T - N = 1: eps = 0, L clamped to 62
    assert RAEC().epsilon(last) == 0 and RAEC().stage1_epochs(last) == 62
    tg, tf = RAEC(stage1_scale=0.1).schedule(p)
    np.testing.assert_array_equal(tg, [math.ceil(0.1 * 4 * math.log(15000) * 4 ** l) for l in (1, 2)])
    assert tf[0] == math.ceil(4 * math.log(5000) * 4) and tf[-1] >= 5000 > tf[-2]


def test_raec_eps_by_region_reserves_more_in_region_two():
    p = instances.section72(20000)
    assert RAEC(eps="by_region").epsilon(p) == theory.epsilon_by_region(4, p.N, p.T)
    assert RAEC(eps="by_region").stage1_epochs(p) > RAEC().stage1_epochs(p)


def test_raec_trace_eliminates_exactly_the_arms_beyond_the_threshold():
    problem = PROBLEMS["eliminating"]
    policy = RAEC(stage1_scale=0.2, stage2_scale=0.2)
    F, G = draw_tables(problem, problem.N, seed=2, s=0)
    arms, committed, epochs = policy.reference(problem, F, G, 5, trace=True)
    assert any(e["eliminated"] for e in epochs)
    for e in epochs:
        if e["stage"] != "commit" and e["means"]:
            best = max(e["means"].values())
            assert set(e["eliminated"]) == {i for i, m in e["means"].items() if best - m > e["threshold"]}
            assert all(e["pulls"][i] == 0 for i in range(problem.K) if i not in e["active"])
    stage1 = [e for e in epochs if e["stage"] == "I (g)"]
    assert len(stage1) <= policy.stage1_epochs(problem)
    survivors = epochs[-1]["active"]
    assert committed in survivors and epochs[-1]["committed"] == committed


def test_raec_uniform_commitment_stays_in_the_surviving_g_set():
    # arm 2 is g-best by 0.8: Stage I removes the others, so the uniform commitment finds it almost surely
    p = CommitProblem.bernoulli([0.9, 0.1, 0.1], [0.1, 0.9, 0.1], 3000, 6000)
    res = simulate(p, RAEC(), 200, seed=0)
    assert np.mean(res.committed == 1) > 0.97


def test_ucb_concentrates_on_the_f_best_arm_and_commits_on_g():
    p = CommitProblem.bernoulli([0.9, 0.3, 0.3], [0.2, 0.3, 0.8], 2000, 4000)
    res = simulate(p, UCBCommit(), 100, seed=0)
    assert np.all(res.pulls[:, 0] > 0.8 * p.N)
    assert np.mean(res.committed == 2) > 0.9


def test_uniform_commit_pulls_round_robin():
    p = CommitProblem.bernoulli([0.9, 0.3, 0.3], [0.2, 0.3, 0.8], 1001, 4000)
    res = simulate(p, UniformCommit(), 20, seed=0)
    assert np.all(res.pulls == [334, 334, 333])


def test_no_shift_policy_finds_the_best_arm_when_f_equals_g():
    p = instances.no_shift_instance(4, 8000, 16000, delta=0.3)
    res = simulate(p, NoShiftElimination(), 200, seed=0)
    assert np.mean(res.committed == 0) > 0.99
    assert res.experiment_regret.mean() < 0.5 * 0.3 * 8000 * 3 / 4  # eliminates: well below uniform's cost


@pytest.mark.parametrize("kwargs, word", [
    (dict(eps=-0.1), "eps"), (dict(eps="region"), "eps"), (dict(stage1_scale=0), "stage1_scale"),
    (dict(stage2_scale=-1), "stage2_scale"),
    (dict(commit="best"), "commit"), (dict(min_epochs=-1), "min_epochs"), (dict(min_epochs=1.5), "min_epochs"),
])
def test_raec_rejects_bad_hyperparameters(kwargs, word):
    with pytest.raises(ValueError, match=word):
        RAEC(**kwargs)


def test_labels_show_changed_hyperparameters():
    assert RAEC().label == "RAEC"
    assert RAEC(commit="empirical").label == "RAEC(commit='empirical')"
    assert instances.section72_policy().label.startswith("RAEC(eps='by_region', stage1_scale=0.04")
    assert instances.section72_policy(eps_rule="theorem3.1").label.startswith("RAEC(stage1_scale=0.04")


ELIMINATION = [RAEC(), RAEC(commit="empirical", stage1_scale=0.1), RAEC(eps=0.05, stage2_scale=0.1),
               NoShiftElimination(stage_scale=0.2)]


@pytest.mark.parametrize("name", ["bernoulli", "eliminating", "discrete"])
@pytest.mark.parametrize("policy", ELIMINATION, ids=lambda p: p.label)
def test_stage1_set_on_tables_is_the_reference_trace_set(name, policy):
    # the set the compiled path reports is the one the per-round trace commits from (RAEC: A_g when Stage I
    # ends; the structural policy has no Stage I and keeps every arm in A_g)
    problem = PROBLEMS[name]
    seeds = policy_stream_seeds(5, 6)
    for s in range(6):
        F, G = draw_tables(problem, problem.N, seed=5, s=s)
        counts, committed, active_g = policy.run_table_sets(problem, F, G, int(seeds[s]))
        _, _, epochs = policy.reference(problem, F, G, int(seeds[s]), trace=True)
        stage1 = [e for e in epochs if e["stage"] == "I (g)"]
        expected = set(range(problem.K))
        for e in stage1:
            expected = set(e["active"]) - set(e["eliminated"])
        assert set(np.flatnonzero(active_g)) == expected
        if not isinstance(policy, NoShiftElimination):
            assert active_g[committed]


def test_stage1_survivors_pair_with_simulate_and_shrink_on_a_wide_g_gap():
    problem = PROBLEMS["eliminating"]  # g-best arm 2 by 0.3: Stage I removes the g-bad arms in most runs
    policy = RAEC(commit="empirical", stage1_scale=0.2)
    res = simulate(problem, policy, n_seeds=200, seed=4)
    sets = stage1_survivors(problem, policy, n_seeds=200, seed=4)
    assert sets.shape == (200, problem.K)
    assert sets[np.arange(200), res.committed].all()  # the commitment is drawn from A_g, run by run
    assert sets[:, problem.best_g].mean() > 0.9
    assert sets.sum(axis=1).mean() < problem.K - 1  # elimination happened: the set is not all the arms
    counts, committed, _ = policy.run_batch_sets(problem, environment_stream_seeds(4, 200), policy_stream_seeds(4, 200))
    np.testing.assert_array_equal(counts, res.pulls)
    np.testing.assert_array_equal(committed, res.committed)
    tables = stage1_survivors(problem, policy, n_seeds=5, seed=4, draws="table")
    for s in range(5):
        F, G = draw_tables(problem, problem.N, seed=4, s=s)
        np.testing.assert_array_equal(tables[s], policy.run_table_sets(problem, F, G, int(policy_stream_seeds(4, 5)[s]))[2])
    with pytest.raises(ValueError, match="policy="):
        stage1_survivors(problem, UCBCommit(), n_seeds=3)
