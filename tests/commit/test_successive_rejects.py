"""Successive Rejects (Audibert, Bubeck and Munos 2010): compiled paths against the per-round reference, and the
printed formulas of its phases and of its error bound recomputed term by term.

The formulas, as printed in section 3 and Theorem 2 of the 2010 paper:

    logbar(K) = 1/2 + sum_{i=2}^K 1/i,
    n_k = ceil( (n - K) / (logbar(K) (K + 1 - k)) ),  k = 1..K-1,  n_0 = 0,
    e_n <= K (K - 1) / 2 exp( -(n - K) / (logbar(K) H_2) ),  H_2 = max_i i Delta_(i)^-2.

One-constant edits tried in ``commit/policies/successive_rejects.py`` (each alone, the tests run, then reverted):
 1. logbar's 1/2 -> 1: test_phase_lengths_are_the_printed_formula, test_printed_phases_by_hand,
    test_error_bound_is_theorem_2, test_runs_pull_the_printed_phases.
 2. (K + 1 - k) -> (K - k + 2) in ``phase_lengths``: test_phase_lengths_are_the_printed_formula,
    test_printed_phases_by_hand, test_runs_pull_the_printed_phases.
 3. the bound's K (K - 1) / 2 -> K (K - 1): test_error_bound_is_theorem_2.
 4. H_2's i -> i + 1 (1-based index shifted): test_error_bound_is_theorem_2.
 5. the kernels' rejection test ``mean < worst`` -> ``-mean < worst`` in ``_reject`` (the reference unchanged):
    test_table_kernel_equals_reference_on_shared_tables, test_batch_kernel_commits_like_the_reference.
"""
import math
from fractions import Fraction

import numpy as np
import pytest

from commit_checks import assert_same_commitment_shares, discrete_problem

from horizonbandits.commit import COMMIT_POLICIES, CommitProblem, SuccessiveRejects, reference_runs, simulate
from horizonbandits.commit.policies.successive_rejects import error_bound, log_bar, phase_lengths
from horizonbandits.commit.sampling import draw_tables, policy_stream_seeds

PROBLEMS = {
    # f = 0: section 2.1's best-arm identification case
    "f=0": CommitProblem.bernoulli([0.0] * 4, [0.5, 0.45, 0.4, 0.3], 400, 2000),
    # ties of the empirical g-means are frequent with few Bernoulli pulls and equal means
    "ties": CommitProblem.bernoulli([0.6, 0.5, 0.4], [0.5, 0.5, 0.5], 13, 50),
    "general": CommitProblem.bernoulli([0.6, 0.5, 0.45, 0.3, 0.7], [0.3, 0.5, 0.55, 0.52, 0.1], 777, 3000),
    "discrete": discrete_problem(),
}


def paper_log_bar(K):
    return Fraction(1, 2) + sum(Fraction(1, i) for i in range(2, K + 1))


def paper_phase_lengths(n, K):
    # exact rational arithmetic: the ceiling of the printed fraction
    return [math.ceil(Fraction(n - K) / (paper_log_bar(K) * (K + 1 - k))) for k in range(1, K)]


@pytest.mark.parametrize("K, n", [(2, 3), (2, 100), (3, 13), (4, 400), (5, 777), (7, 1000), (10, 12345)])
def test_phase_lengths_are_the_printed_formula(K, n):
    assert log_bar(K) == pytest.approx(float(paper_log_bar(K)), rel=1e-15)
    assert phase_lengths(n, K).tolist() == paper_phase_lengths(n, K)
    # the phases fit in the budget: one arm leaves with n_k pulls after phase k, the last one has n_(K-1)
    lengths = paper_phase_lengths(n, K)
    assert sum(lengths) + lengths[-1] <= n


def test_printed_phases_by_hand():
    # K = 4: logbar = 1/2 + 1/2 + 1/3 + 1/4 = 19/12; n = 400: 396 * 12 / 19 / (4, 3, 2) = 62.5, 83.4, 125.1
    assert paper_log_bar(4) == Fraction(19, 12)
    assert phase_lengths(400, 4).tolist() == [63, 84, 126]


def test_error_bound_is_theorem_2():
    mu = [0.5, 0.45, 0.4, 0.3]  # sorted gaps 0.05, 0.05, 0.1, 0.2
    H2 = max(1 / 0.05 ** 2, 2 / 0.05 ** 2, 3 / 0.1 ** 2, 4 / 0.2 ** 2)
    assert H2 == pytest.approx(800.0)
    for n in (400, 5000, 40000):
        expected = 4 * 3 / 2 * math.exp(-(n - 4) / (19 / 12 * H2))
        assert error_bound(mu, n) == pytest.approx(expected, rel=1e-12)
        assert error_bound(mu[::-1], n) == pytest.approx(expected, rel=1e-12)  # arm order does not matter
    # sorted gaps 0.1, 0.1, 0.2, 0.2: H_2 = max(1 / 0.01, 2 / 0.01, 3 / 0.04, 4 / 0.04) = 200, set by i = 2
    assert error_bound([0.9, 0.7, 0.7, 0.8], 1000) == pytest.approx(6 * math.exp(-996 / (19 / 12 * 200.0)), rel=1e-12)
    assert error_bound([0.5, 0.5, 0.3], 100) == 3.0  # a tie for the best: the trivial bound


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_table_kernel_equals_reference_on_shared_tables(name):
    problem, policy = PROBLEMS[name], SuccessiveRejects()
    seeds = policy_stream_seeds(11, 25)
    for s in range(25):
        F, G = draw_tables(problem, problem.N, seed=11, s=s)
        counts, committed = policy.run_table(problem, F, G, int(seeds[s]))
        arms, ref_committed = policy.reference(problem, F, G, int(seeds[s]))
        assert arms.size == problem.N and counts.sum() == problem.N
        np.testing.assert_array_equal(counts, np.bincount(arms, minlength=problem.K))
        assert committed == ref_committed


def test_runs_pull_the_printed_phases():
    problem = PROBLEMS["general"]
    F, G = draw_tables(problem, problem.N, seed=3, s=0)
    arms, committed, phases = SuccessiveRejects().reference(problem, F, G, 5, trace=True)
    lengths = paper_phase_lengths(problem.N, problem.K)
    counts = np.bincount(arms, minlength=problem.K)
    rejected = [p["rejected"] for p in phases]
    assert sorted(rejected + [committed]) == list(range(problem.K))
    for k, arm in enumerate(rejected):
        assert counts[arm] == lengths[k]  # an arm rejected after phase k was pulled n_k times
        means = phases[k]["means"]
        assert means[arm] == min(means.values())  # the lowest empirical g-mean leaves
    assert counts[committed] == problem.N - sum(lengths)  # n_(K-1) plus the rounds the ceilings leave
    assert [p["last_round"] for p in phases] == [sum(lengths[:k]) + (problem.K - k) * lengths[k - 1]
                                                for k in range(1, problem.K)]


@pytest.mark.parametrize("name", ["f=0", "ties", "discrete"])
def test_batch_kernel_commits_like_the_reference(name):
    problem, policy, n = PROBLEMS[name], SuccessiveRejects(), 400
    ref_pulls, ref_committed = reference_runs(problem, policy, n, seed=21)
    fast = simulate(problem, policy, n, seed=22)
    np.testing.assert_array_equal(np.sort(fast.pulls, axis=1)[0], np.sort(ref_pulls, axis=1)[0])  # same phases
    assert_same_commitment_shares(ref_committed, fast.committed, problem.K)


def test_wrong_commitment_rate_respects_theorem_2():
    # a wide-gap instance where the bound is well below 1: the measured share must sit under it
    problem = CommitProblem.bernoulli([0.0] * 3, [0.8, 0.5, 0.3], 150, 600)
    bound = error_bound(problem.mu_g, problem.N)
    assert bound < 0.2
    res = simulate(problem, SuccessiveRejects(), 4000, seed=2)
    wrong = float(np.mean(res.committed != problem.best_g))
    assert wrong + 3 * math.sqrt(max(wrong * (1 - wrong), 1e-4) / 4000) < bound
    np.testing.assert_allclose(res.regret, (problem.T - problem.N) * problem.gaps_g[res.committed])  # f = 0


def test_registered_and_rejects_a_budget_without_pulls():
    assert COMMIT_POLICIES["SuccessiveRejects"] is SuccessiveRejects
    with pytest.raises(ValueError, match=r"^N=4 is not allowed"):
        simulate(CommitProblem.bernoulli([0.1] * 4, [0.5, 0.4, 0.3, 0.2], 4, 20), SuccessiveRejects(), 2)
