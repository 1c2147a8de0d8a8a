"""AdaptiveRAEC (ours, the comparator of the abstract's "adapting the reserve does not improve the rate"): the compiled
paths against the per-round reference, the plug-in bound and the stopping rule recomputed from their formulas, and the
one-line errors."""
import math

import numpy as np
import pytest

from commit_checks import assert_same_commitment_shares, discrete_problem, z

from horizonbandits.commit import RAEC, CommitProblem, instances, reference_runs, simulate, theory
from horizonbandits.commit.policies import COMMIT_POLICIES, AdaptiveRAEC
from horizonbandits.commit.policies.adaptive_raec import (_keep_reserving, nb_plugin_bound, plugin_epochs,
                                                          resolved_leader)
from horizonbandits.commit.sampling import draw_tables, policy_stream_seeds

PROBLEMS = {
    "eliminating": CommitProblem.bernoulli([0.9, 0.2, 0.5, 0.3], [0.1, 0.9, 0.6, 0.2], 600, 1200),
    "close g-arms": CommitProblem.bernoulli([0.6, 0.5, 0.45, 0.3], [0.3, 0.5, 0.55, 0.52], 300, 1200),
    "hidden g-arm": instances.commitment_side_family(4, 2500, 10000, c=2.0, delta_f=0.4)[1],
    "N<K": CommitProblem.bernoulli([0.6, 0.5, 0.45], [0.3, 0.5, 0.55], 2, 50),
    "T-N=1": CommitProblem.bernoulli([0.6, 0.5, 0.45], [0.3, 0.5, 0.55], 80, 81),
    "discrete": discrete_problem(),
}
POLICIES = [AdaptiveRAEC(), AdaptiveRAEC(rule="resolved"), AdaptiveRAEC(commit="empirical", stage1_scale=0.1),
            AdaptiveRAEC(rule="resolved", commit="empirical", stage2_scale=0.2)]


@pytest.mark.parametrize("name", list(PROBLEMS))
@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.label)
def test_compiled_path_equals_reference_on_shared_tables(name, policy):
    problem = PROBLEMS[name]
    seeds = policy_stream_seeds(17, 8)
    for s in range(8):
        F, G = draw_tables(problem, problem.N, seed=17, s=s)
        counts, committed, active_g = policy.run_table_sets(problem, F, G, int(seeds[s]))
        arms, ref_committed, records = policy.reference(problem, F, G, int(seeds[s]), trace=True)
        assert arms.size == problem.N and counts.sum() == problem.N
        np.testing.assert_array_equal(counts, np.bincount(arms, minlength=problem.K))
        assert committed == ref_committed
        assert set(np.flatnonzero(active_g)) == set(records[-1]["active"]) and active_g[committed]


def test_both_decisions_of_each_rule_happen_on_the_test_problems():
    # the agreement above means something only if each rule both continues and stops somewhere
    seen = {"plugin": set(), "resolved": set()}
    seeds = policy_stream_seeds(17, 8)
    for rule in seen:
        policy = AdaptiveRAEC(rule=rule)
        for problem in PROBLEMS.values():
            for s in range(8):
                F, G = draw_tables(problem, problem.N, seed=17, s=s)
                for e in policy.reference(problem, F, G, int(seeds[s]), trace=True)[2]:
                    d = e.get("decision", "")
                    if d.startswith("plug-in"):
                        seen[rule].add("continue" if int(d.split("=")[1]) > e["epoch"] else "stop")
                    elif d.startswith("resolved"):
                        seen[rule].add("stop")
                    elif d == "not resolved":
                        seen[rule].add("continue")
    assert seen == {"plugin": {"continue", "stop"}, "resolved": {"continue", "stop"}}


@pytest.mark.parametrize("name", ["eliminating", "hidden g-arm", "discrete"])
@pytest.mark.parametrize("policy", POLICIES[:2], ids=lambda p: p.label)
def test_batch_draws_agree_with_reference_in_distribution(name, policy):
    problem = PROBLEMS[name]
    n = 300
    ref_pulls, ref_committed = reference_runs(problem, policy, n, seed=21)
    exp, com = problem.regret_parts(ref_pulls, ref_committed)
    fast = simulate(problem, policy, n, seed=22)
    assert abs(z(exp + com, fast.regret)) < 4
    assert_same_commitment_shares(ref_committed, fast.committed, problem.K)


def test_reserved_epochs_are_those_of_the_simulated_runs():
    problem = PROBLEMS["hidden g-arm"]
    policy = AdaptiveRAEC()
    counts, committed, _, epochs = policy.run_batch_epochs(problem, *_batch_seeds(5, 50))
    res = simulate(problem, policy, 50, seed=5)
    np.testing.assert_array_equal(counts, res.pulls)
    np.testing.assert_array_equal(epochs, policy.reserved_epochs(problem, 50, seed=5))
    # every finished epoch l brought each arm still in A_g to m_g,l: the arms' pulls reach the last target
    tg, _ = policy.schedule(problem)
    assert np.all(counts.max(axis=1) >= tg[epochs - 1])


def _batch_seeds(seed, n):
    from horizonbandits.commit.sampling import environment_stream_seeds
    return environment_stream_seeds(seed, n), policy_stream_seeds(seed, n)


# ------------------------------------------------------------------------------------------------ formulas
def _printed_bound(mu_f, mu_g, N, T, L):
    """Proposition 4.1 at eps = 2^-L, term by term as printed (constants dropped), from the means."""
    eps = 2.0 ** -L
    K = len(mu_f)
    gaps_f = [max(mu_f) - m for m in mu_f]
    gaps_g = [max(mu_g) - m for m in mu_g]
    star = int(np.argmax(mu_g))
    gam = [gaps_g[i] if i != star else min(gaps_g[j] for j in range(K) if j != star) for i in range(K)]
    experiment = sum(gaps_f[i] * max(math.log(T - N) / max(gam[i], eps) ** 2, math.log(N) / gaps_f[i] ** 2)
                     for i in range(K) if gaps_f[i] > 0)
    commitment = (T - N) * max(g for g in gaps_g if g <= 2 * eps)
    B = min(N, K * 4 * math.log(T - N) / eps ** 2)
    return experiment + commitment + K * L / (T - N) + K * B * L / (T - N) ** 2


def test_plugin_bound_is_proposition_41_at_the_empirical_means():
    rng = np.random.default_rng(0)
    for _ in range(200):
        K = int(rng.integers(2, 7))
        N = int(rng.integers(20, 5000))
        T = N + int(rng.integers(2, 20000))
        mu_f, mu_g = rng.random(K), rng.random(K)
        if rng.random() < 0.3:  # ties, as Bernoulli means of few pulls have
            mu_g = np.round(mu_g, 1)
            mu_f = np.round(mu_f, 1)
        for L in (1, 2, 3, 5, 9, 30, 62):
            want = _printed_bound(list(mu_f), list(mu_g), N, T, L)
            assert theory.proposition41_terms(mu_f, mu_g, N, T, 2.0 ** -L)["total"] == pytest.approx(want, rel=1e-12)
            assert nb_plugin_bound(L, mu_f, mu_g, N, T) == pytest.approx(want, rel=1e-12)


def test_plugin_epochs_minimise_the_printed_bound():
    # the hidden-g-arm instance, at its true means and at noisy ones: L* = argmin over L' >= l of the printed bound
    N, T = 2500, 10000
    cases = [([0.9, 0.5, 0.5, 0.5], [0.5, 0.5, 0.64, 0.5]), ([0.9, 0.5, 0.5, 0.5], [0.5, 0.52, 0.51, 0.49]),
             ([0.6, 0.5, 0.45, 0.3], [0.3, 0.5, 0.55, 0.52]), ([0.5, 0.5, 0.1], [0.1, 0.9, 0.85])]
    chosen = []
    for mu_f, mu_g in cases:
        for done in (1, 2, 4):
            values = {L: _printed_bound(mu_f, mu_g, N, T, L) for L in range(done, 63)}
            want = min(values, key=lambda L: (values[L], L))
            assert plugin_epochs(mu_f, mu_g, N, T, done) == want
            counts = np.full(4 if len(mu_f) == 4 else 3, 100, dtype=np.int64)
            sums_f, sums_g = 100 * np.array(mu_f), 100 * np.array(mu_g)
            active = np.ones(counts.size, dtype=np.bool_)
            assert _keep_reserving(0, done, 62, N, T, counts, sums_f, sums_g, active) == (want > done)
            chosen.append(want)
    # the hidden arm at 0.64 is worth finding (reserve to eps < 0.14 / 2), near-equal g-arms are not
    assert plugin_epochs(*cases[0], N, T, 1) == 4 and plugin_epochs(*cases[1], N, T, 1) == 1
    assert len(set(chosen)) >= 3


def test_resolved_rule_stops_when_the_leader_clears_the_next_threshold():
    # after epoch l the leader must lead every other survivor by more than 2^-(l+1); then the others leave A_g
    for done, lead, resolved in [(1, 0.26, True), (1, 0.24, False), (2, 0.13, True), (2, 0.12, False), (3, 0.07, True)]:
        means = {0: 0.5, 2: 0.5 + lead, 3: 0.49}  # arm 1 was eliminated before
        assert (resolved_leader(means, 2.0 ** -(done + 1)) == 2) == resolved
        counts = np.full(4, 1000, dtype=np.int64)
        sums_g = np.array([1000 * means[0], 0.0, 1000 * means[2], 1000 * means[3]])
        active = np.array([True, False, True, True])
        keep = _keep_reserving(1, done, 5, 2500, 10000, counts, np.zeros(4), sums_g, active)
        assert keep == (not resolved)
        np.testing.assert_array_equal(active, [False, False, True, False] if resolved else [True, False, True, True])
    assert resolved_leader({1: 0.7, 2: 0.7, 3: 0.1}, 0.25) is None  # a tie at the top is never resolved


def test_resolved_rule_never_reserves_more_than_raec():
    for problem in PROBLEMS.values():
        policy = AdaptiveRAEC(rule="resolved")
        assert policy.cap(problem) == RAEC().stage1_epochs(problem)
        assert policy.reserved_epochs(problem, 100, seed=1).max() <= RAEC().stage1_epochs(problem)
    assert AdaptiveRAEC().cap(PROBLEMS["eliminating"]) == 62


def test_stage1_targets_are_raecs():
    problem = PROBLEMS["hidden g-arm"]
    tg, tf = AdaptiveRAEC(stage1_scale=0.5).schedule(problem)
    want = [min(max(math.ceil(0.5 * 4 * math.log(problem.T - problem.N) / 2.0 ** (-2 * l)), 1), problem.N)
            for l in range(1, 63)]
    np.testing.assert_array_equal(tg, want)
    np.testing.assert_array_equal(tf, RAEC().schedule(problem)[1])


# ------------------------------------------------------------------------------------------------ errors
@pytest.mark.parametrize("kwargs, word", [
    (dict(rule="adaptive"), "rule"), (dict(rule=None), "rule"), (dict(stage1_scale=0), "stage1_scale"),
    (dict(stage2_scale=-1), "stage2_scale"), (dict(commit="best"), "commit"),
])
def test_bad_hyperparameters_get_a_one_line_error(kwargs, word):
    with pytest.raises(ValueError, match=word) as info:
        AdaptiveRAEC(**kwargs)
    assert "\n" not in str(info.value)


def test_registered_and_labelled():
    assert COMMIT_POLICIES["AdaptiveRAEC"] is AdaptiveRAEC
    assert AdaptiveRAEC().label == "AdaptiveRAEC"
    assert AdaptiveRAEC(rule="resolved").label == "AdaptiveRAEC(rule='resolved')"
