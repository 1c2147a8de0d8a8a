"""CommitProblem validation and regret, the binomial sampler, block sums and seeding."""
import numpy as np
import pytest
from numba import njit
from scipy import stats

import horizonbandits as hb  # noqa: F401  (the package must import)
from horizonbandits.commit import CommitProblem, RAEC, UCBCommit, UniformCommit, simulate
from horizonbandits.commit.problem import DISCRETE
from horizonbandits.commit.sampling import (draw_tables, nb_binomial, nb_block_sums, nb_pull, nb_pull_step,
                                            policy_stream_seeds, prefix_sums, py_pull)
from horizonbandits.rng import PyStream


def test_bernoulli_problem_means_and_regret_parts():
    p = CommitProblem.bernoulli([0.8, 0.77, 0.2, 0.2], [0.2, 0.2, 0.6, 0.55], N=100, T=400)
    assert p.K == 4 and p.best_f == 0 and p.best_g == 2
    np.testing.assert_allclose(p.probs.sum(axis=1), 1.0)
    np.testing.assert_allclose(p.probs @ p.f_values, p.mu_f)
    np.testing.assert_allclose(p.probs @ p.g_values, p.mu_g)
    exp, com = p.regret_parts(np.array([[97, 1, 1, 1]]), np.array([3]))
    assert exp[0] == pytest.approx(0.03 + 0.6 + 0.6)
    assert com[0] == pytest.approx(300 * 0.05)


def test_discrete_problem_evaluates_f_and_g_on_the_support():
    p = CommitProblem.discrete([[1.0, 0.2], [0.0, 0.9]], [[0.5, 0.5], [0.1, 0.9]],
                               f=lambda o: o[0], g=lambda o: 1 - o[1], N=5, T=10)
    assert p.kind == DISCRETE
    np.testing.assert_allclose(p.mu_f, [0.5, 0.1])
    np.testing.assert_allclose(p.mu_g, [0.5 * 0.8 + 0.5 * 0.1, 0.1 * 0.8 + 0.9 * 0.1])


@pytest.mark.parametrize("kwargs, word", [
    (dict(mu_f=[0.5, 0.4], mu_g=[0.5, 0.4], N=0, T=10), "N=0"),
    (dict(mu_f=[0.5, 0.4], mu_g=[0.5, 0.4], N=10, T=10), "N=10"),
    (dict(mu_f=[0.5], mu_g=[0.5], N=1, T=10), "K >= 2"),
    (dict(mu_f=[0.5, 1.4], mu_g=[0.5, 0.4], N=1, T=10), "[0, 1]"),
    (dict(mu_f=[0.5, 0.4], mu_g=[0.5, 0.4, 0.3], N=1, T=10), "mu_g"),
])
def test_bad_problems_give_one_line_errors(kwargs, word):
    with pytest.raises(ValueError) as err:
        CommitProblem.bernoulli(**kwargs)
    assert word in str(err.value) and "\n" not in str(err.value)


def test_discrete_rejects_rewards_outside_unit_interval():
    with pytest.raises(ValueError, match="g is not allowed"):
        CommitProblem.discrete([0.0, 1.0], [[0.5, 0.5], [0.2, 0.8]], lambda o: o[0], lambda o: 2 * o[0], 3, 9)


@njit
def _binomials(seed, n, p, reps):
    st = np.empty(1, dtype=np.uint64)
    st[0] = seed
    out = np.empty(reps, dtype=np.int64)
    for r in range(reps):
        out[r] = nb_binomial(st, n, p)
    return out


@pytest.mark.parametrize("n, p", [(7, 0.3), (60, 0.1), (400, 0.5), (3000, 0.93), (20000, 0.5064)])
def test_binomial_sampler_matches_the_binomial_law(n, p):
    reps = 60000
    x = _binomials(np.uint64(12345 + n), n, p, reps)
    k = np.arange(n + 1)
    expected = stats.binom.pmf(k, n, p) * reps
    observed = np.bincount(x, minlength=n + 1)
    keep = expected > 20  # pool the tails into one cell
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    chi2 = np.sum((obs - exp) ** 2 / np.maximum(exp, 1e-9))
    assert stats.chi2.sf(chi2, obs.size - 1) > 1e-4
    assert x.min() >= 0 and x.max() <= n


@njit
def _block_counts(seed, probs, fv, reps, c):
    st = np.empty(1, dtype=np.uint64)
    st[0] = seed
    K = probs.shape[0]
    mu = np.zeros(K)
    out = np.empty(reps)
    for r in range(reps):
        sf, _ = nb_block_sums(st, 1, 0, c, mu, mu, probs, fv, fv)
        out[r] = sf
    return out


def test_block_sums_of_a_discrete_law_have_multinomial_marginals():
    probs = np.array([[0.2, 0.5, 0.3], [0.3, 0.3, 0.4]])
    for j in range(3):  # indicator of support point j: its block sum is Binomial(c, p_j)
        fv = np.zeros(3)
        fv[j] = 1.0
        x = _block_counts(np.uint64(7 + j), probs, fv, 40000, 50).astype(np.int64)
        expected = stats.binom.pmf(np.arange(51), 50, probs[0, j]) * x.size
        keep = expected > 20
        obs = np.append(np.bincount(x, minlength=51)[keep], np.bincount(x, minlength=51)[~keep].sum())
        exp = np.append(expected[keep], expected[~keep].sum())
        assert stats.chi2.sf(np.sum((obs - exp) ** 2 / exp), obs.size - 1) > 1e-4


@njit
def _pull_means(seed, kind, mu_f, mu_g, cdf, fv, gv, reps):
    st = np.empty(1, dtype=np.uint64)
    st[0] = seed
    sf = 0.0
    sg = 0.0
    for _ in range(reps):
        x, y = nb_pull(st, kind, 1, mu_f, mu_g, cdf, fv, gv)
        sf += x
        sg += y
    return sf / reps, sg / reps


@njit
def _pull_pairs(seed, kind, mu_f, mu_g, cdf, fv, gv, arms):
    """(f, g) of pulls of ``arms`` from nb_pull (array state) and from nb_pull_step (scalar state), one stream each."""
    st = np.empty(1, dtype=np.uint64)
    st[0] = seed
    s = seed
    out = np.zeros((arms.size, 4))
    for k in range(arms.size):
        out[k, 0], out[k, 1] = nb_pull(st, kind, arms[k], mu_f, mu_g, cdf, fv, gv)
        out[k, 2], out[k, 3], s = nb_pull_step(s, kind, arms[k], mu_f, mu_g, cdf, fv, gv)
    return out, st[0] == s


@pytest.mark.parametrize("problem", [
    CommitProblem.bernoulli([0.5, 0.3, 0.9], [0.2, 0.7, 0.5], 5, 10),
    CommitProblem.discrete([[0.0, 1.0], [0.5, 0.25], [1.0, 0.0]], [[1 / 3] * 3, [0.6, 0.1, 0.3], [0, 0.5, 0.5]],
                           lambda o: o[0], lambda o: o[1], 5, 10),
], ids=["bernoulli", "discrete"])
def test_the_three_single_pull_samplers_make_the_same_draws(problem):
    arms = np.random.default_rng(0).integers(0, problem.K, 500)
    seed = np.uint64(1234567)
    out, same_state = _pull_pairs(seed, problem.kind, problem.mu_f, problem.mu_g, problem.cdf, problem.f_values,
                                  problem.g_values, arms)
    assert same_state
    np.testing.assert_array_equal(out[:, :2], out[:, 2:])
    stream = PyStream(int(seed))
    np.testing.assert_array_equal(out[:, :2], [py_pull(stream, problem, int(a)) for a in arms])
    assert len(np.unique(out[:, 0])) > 1


@pytest.mark.parametrize("problem", [
    CommitProblem.bernoulli([0.5, 0.3], [0.2, 0.7], 5, 10),
    CommitProblem.discrete([[0.0, 1.0], [0.5, 0.25], [1.0, 0.0]], [[1 / 3] * 3, [0.6, 0.1, 0.3]],
                           lambda o: o[0], lambda o: o[1], 5, 10),
])
def test_single_pulls_have_the_right_means(problem):
    reps = 200000
    mf, mg = _pull_means(np.uint64(99), problem.kind, problem.mu_f, problem.mu_g, problem.cdf,
                         problem.f_values, problem.g_values, reps)
    assert abs(mf - problem.mu_f[1]) < 5 * 0.5 / np.sqrt(reps)
    assert abs(mg - problem.mu_g[1]) < 5 * 0.5 / np.sqrt(reps)


def test_tables_and_prefix_sums():
    p = CommitProblem.bernoulli([0.9, 0.1], [0.1, 0.9], 2000, 3000)
    F, G = draw_tables(p, 2000, seed=3, s=1)
    assert F.shape == (2, 2001) and F[:, 0].sum() == 0
    assert abs(F[0, 1:].mean() - 0.9) < 0.05 and abs(G[1, 1:].mean() - 0.9) < 0.05
    C = prefix_sums(F)
    assert C[0, 10] == F[0, 1:11].sum()
    F2, _ = draw_tables(p, 500, seed=3, s=1)
    np.testing.assert_array_equal(F2, F[:, :501])  # a shorter table is a prefix


@pytest.mark.parametrize("policy", [RAEC(), UCBCommit(), UniformCommit()])
def test_runs_do_not_depend_on_how_many_are_made_together(policy):
    p = CommitProblem.bernoulli([0.6, 0.5, 0.4], [0.4, 0.5, 0.6], 200, 800)
    many = simulate(p, policy, n_seeds=12, seed=4)
    few = simulate(p, policy, n_seeds=5, seed=4)
    np.testing.assert_array_equal(many.regret[:5], few.regret)
    np.testing.assert_array_equal(many.committed[:5], few.committed)
    other = simulate(p, policy, n_seeds=12, seed=5)
    assert not np.array_equal(other.pulls, many.pulls) or not np.array_equal(other.committed, many.committed)


def test_seed_arrays_are_cached_read_only():
    a = policy_stream_seeds(0, 10)
    assert a is policy_stream_seeds(0, 10) and not a.flags.writeable


def test_simulate_validates_its_arguments():
    p = CommitProblem.bernoulli([0.6, 0.5], [0.4, 0.5], 20, 80)
    for kwargs, word in [(dict(n_seeds=0), "n_seeds"), (dict(draws="fast"), "draws"), (dict(seed=-1), "seed")]:
        with pytest.raises(ValueError, match=word):
            simulate(p, RAEC(), **kwargs)
    with pytest.raises(ValueError, match="policy"):
        simulate(p, "RAEC")
