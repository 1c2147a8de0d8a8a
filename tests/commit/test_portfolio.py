"""Portfolio problems (cvxpy vs exact active sets), the concave-commitment model, its regret and section 7.3."""
import numpy as np
import pytest
from scipy.optimize import linprog

from horizonbandits.commit.portfolio_model import (PortfolioProblem, clipped_normal_moments, run_seed, simulate,
                                           theorem63_stage1_budget)
from horizonbandits.commit.portfolio import (OptimisticPortfolioSolver, QuadraticReward, portfolio_solve,
                                             portfolio_solve_exact, solver_for)
from horizonbandits.commit.portfolio_instances import SECTION73_OUTCOMES, section73
from horizonbandits.commit import ROSCOC, UCBPortfolio


def random_quadratic(rng, d):
    B = rng.normal(size=(d, d))
    return rng.uniform(-0.1, 1.1, d), B @ B.T + 0.05 * np.eye(d)


def test_portfolio_solve_matches_exact_active_set_enumeration():
    rng = np.random.default_rng(7)
    for _ in range(25):
        d, K = int(rng.integers(1, 5)), int(rng.integers(2, 8))
        c, A = random_quadratic(rng, d)
        for _ in range(3):  # the same built problem, re-solved with new O (DPP)
            O = rng.random((d, K))
            x, value = portfolio_solve(O, c, A, return_value=True)
            x_exact, v_exact = portfolio_solve_exact(O, c, A)
            assert x.min() >= 0 and abs(x.sum() - 1) < 1e-12
            assert abs(value - v_exact) < 1e-6
            assert value <= v_exact + 1e-12  # exact is optimal: cvxpy's feasible x cannot beat it
            e = O @ x_exact - c
            assert abs(v_exact + e @ A @ e) < 1e-12


def test_portfolio_problem_is_built_once_and_re_solved():
    reward = QuadraticReward([0.3, 0.5], np.eye(2))
    solver = solver_for(reward, 4)
    before = solver.n_solves
    portfolio_solve(np.random.default_rng(0).random((2, 4)), [0.3, 0.5])
    assert solver_for(QuadraticReward([0.3, 0.5]), 4) is solver
    assert solver.n_solves == before + 1


def test_exact_solver_reaches_a_target_inside_the_hull():
    rng = np.random.default_rng(3)
    O = rng.random((3, 6))
    w = rng.dirichlet(np.ones(6))
    x, v = portfolio_solve_exact(O, O @ w)
    assert v > -1e-12 and np.allclose(O @ x, O @ w, atol=1e-9)


def test_optimistic_step_is_the_plug_in_step_for_point_boxes_and_optimal_for_wide_boxes():
    rng = np.random.default_rng(11)
    c = np.array([0.3, 0.5, 0.2])
    reward = QuadraticReward(c)
    opt = OptimisticPortfolioSolver(reward, 5)
    for _ in range(5):
        O = rng.random((3, 5))
        x, v = opt.solve(O, O)
        assert abs(v - portfolio_solve_exact(O, c)[1]) < 1e-6
        rad = rng.uniform(0, 0.2, (3, 5))
        lo, hi = np.clip(O - rad, 0, 1), np.clip(O + rad, 0, 1)
        x, v = opt.solve(lo, hi)

        def optimistic_value(x, lo=lo, hi=hi):  # A = I: each coordinate of sum_j x_j v_j ranges over [lo x, hi x]
            return -np.sum((np.clip(c, lo @ x, hi @ x) - c) ** 2)

        assert abs(optimistic_value(x) - v) < 1e-6
        others = rng.dirichlet(np.ones(5), size=2000)
        assert v >= max(optimistic_value(y) for y in others) - 1e-7
        assert v >= portfolio_solve_exact(O, c)[1] - 1e-7  # optimism never lowers the value


def test_quadratic_reward_validation_and_lipschitz_constant():
    with pytest.raises(ValueError, match="symmetric"):
        QuadraticReward([0.1, 0.2], [[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(ValueError, match="semidefinite"):
        QuadraticReward([0.1, 0.2], [[1.0, 0.0], [0.0, -1.0]])
    with pytest.raises(ValueError, match="A of shape"):
        QuadraticReward([0.1, 0.2], np.eye(3))
    with pytest.raises(ValueError, match="O of shape"):
        portfolio_solve(np.ones((3, 4)), [0.1, 0.2])
    rng = np.random.default_rng(2)
    c, A = random_quadratic(rng, 3)
    reward = QuadraticReward(c, A)
    grads = 2 * (rng.random((20000, 3)) - c) @ A
    L = reward.lipschitz()
    assert np.linalg.norm(grads, axis=1).max() <= L + 1e-12
    assert np.linalg.norm(grads, axis=1).max() >= 0.8 * L  # random points get close to the worst vertex


@pytest.mark.parametrize("loc,sd", [(0.08, 0.1), (0.5, 0.3), (0.95, 0.2), (0.3, 1.0), (0.4, 0.0)])
def test_clipped_normal_moments_match_monte_carlo(loc, sd):
    z = np.random.default_rng(5).standard_normal(400_000)
    x = np.clip(loc + sd * z, 0, 1)
    m, v = clipped_normal_moments(np.array([loc]), sd)
    assert abs(m[0] - x.mean()) < 4 * x.std() / np.sqrt(x.size) + 1e-12
    assert abs(v[0] - x.var()) < 0.01 * max(v[0], 1e-3) + 1e-12


@pytest.mark.parametrize("execution", ["sampled", "proportional"])
def test_sampling_cost_is_the_jensen_gap_of_the_simulated_commitment_phase(execution):
    problem = section73(T=40, N=10, outcomes="gaussian", noise_sd=0.3, execution=execution)
    x = np.array([0.2, 0.1, 0.3, 0.2, 0.2])  # (T - N) x is integral for the proportional execution
    n = problem.T - problem.N
    rng = np.random.default_rng(0)
    reps = 20_000
    if execution == "sampled":
        arms = rng.choice(5, size=(reps, n), p=x)
    else:
        arms = np.broadcast_to(np.repeat(np.arange(5), np.round(n * x).astype(int)), (reps, n))
    locs = SECTION73_OUTCOMES.T[arms]  # reps x n x d
    outcomes = np.clip(locs + problem.noise_sd * rng.standard_normal(locs.shape), 0, 1)
    realised = n * (problem.optimal_value - problem.reward.value(outcomes.mean(axis=1)))
    predicted = problem.commitment_regret(x)[0] + problem.sampling_cost(x)[0]
    assert abs(realised.mean() - predicted) < 4 * realised.std() / np.sqrt(reps)
    assert problem.sampling_cost(x)[0] > 0


@pytest.mark.parametrize("noise_sd", [0.0, 0.1, 0.3])
def test_section73_inside_hull_optimum_is_unique_and_mixes_arms_3_4_5(noise_sd):
    # target_z=None, A = I: the earlier default (c inside the hull of m_3, m_4, m_5)
    problem = section73(2000, outcomes="gaussian", noise_sd=noise_sd, a_scale=1.0, a_shape=(1, 1, 1), target_z=None)
    x_star = np.array([0, 0, 0.4, 0.3, 0.3])
    assert abs(problem.optimal_value) < 1e-12
    assert np.allclose(problem.optimal_portfolio, x_star, atol=1e-9)
    # OPT = 0 means M x = c: the optimal set is {x >= 0, sum x = 1, M x = c}; each coordinate is pinned.
    A_eq = np.vstack([problem.outcome_mean, np.ones(5)])
    b_eq = np.append(problem.reward.c, 1.0)
    for i in range(5):
        for sign in (1, -1):
            res = linprog(sign * np.eye(5)[i], A_eq=A_eq, b_eq=b_eq, bounds=[(0, None)] * 5)
            assert res.status == 0 and abs(res.x[i] - x_star[i]) < 1e-9
    if noise_sd == 0:
        assert np.allclose(problem.reward.c, [0.296, 0.502, 0.18])


@pytest.mark.parametrize("outcomes", ["bernoulli", "gaussian"])
def test_section73_default_optimum_is_x_star_and_unique(outcomes):
    problem = section73(2000, outcomes=outcomes)
    x_star = np.array([0, 0, 0.4, 0.3, 0.3])
    assert np.allclose(problem.reward.A, np.diag([2.0, 2.0, 50.0])) and problem.reward.c[2] == 0.0
    assert np.allclose(problem.optimal_portfolio, x_star, atol=1e-9)
    # OPT_g = -50 z^2, z the third coordinate of M x* (0.18 for Bernoulli outcomes): the first two hit c
    z = problem.outcome_mean[2] @ x_star
    assert problem.optimal_value == pytest.approx(-50 * z ** 2, abs=1e-9)
    assert outcomes == "gaussian" or z == pytest.approx(0.18)
    # unique: every other portfolio on a fine random sample of the simplex is strictly worse
    grid = np.random.default_rng(0).dirichlet(np.ones(5), size=20000)
    values = problem.reward.value(grid @ problem.outcome_mean.T)
    dist = np.abs(grid - x_star).sum(axis=1)
    assert np.all(values[dist > 0.05] < problem.optimal_value - 1e-4)


def test_bernoulli_outcomes_have_bernoulli_coordinates():
    problem = section73(8000)
    tables = problem.draw(seed=1, s=0)
    assert set(np.unique(tables.Y)) <= {0.0, 1.0}
    se = np.sqrt(0.25 / problem.N)
    assert np.all(np.abs(tables.Y.mean(axis=1).T - SECTION73_OUTCOMES) < 5 * se)
    assert np.allclose(problem.outcome_var, SECTION73_OUTCOMES * (1 - SECTION73_OUTCOMES))
    # the f-draws are those of the Gaussian model: only the outcome law differs
    assert np.array_equal(tables.F, section73(8000, outcomes="gaussian").draw(seed=1, s=0).F)
    with pytest.raises(ValueError, match="outcomes='poisson'"):
        section73(1000, outcomes="poisson")
    with pytest.raises(ValueError, match="a_scale"):
        section73(1000, a_scale=0)
    with pytest.raises(ValueError, match="a_shape"):
        section73(1000, a_shape=(1, 1))


def test_section73_arms_and_validation():
    problem = section73(1000, delta_f=0.2)
    assert problem.N == 250 and problem.K == 5 and problem.d == 3
    assert np.allclose(problem.mu_f, [0.65, 0.45, 0.16, 0.08, 0.02])
    assert np.argmax(problem.mu_f) == 0 and set(np.argsort(problem.mu_f)[:3]) == {2, 3, 4}
    with pytest.raises(ValueError, match="policy="):
        simulate(problem, "ROSCOC")
    with pytest.raises(ValueError, match="n_seeds=0"):
        simulate(problem, ROSCOC(), n_seeds=0)
    with pytest.raises(ValueError, match="delta_f"):
        section73(1000, delta_f=1.5)
    with pytest.raises(ValueError, match="T=4"):
        section73(4)
    with pytest.raises(ValueError, match="N=1000"):
        PortfolioProblem([0.5, 0.4], np.ones((1, 2)) * 0.5, QuadraticReward([0.5]), N=1000, T=1000)
    with pytest.raises(ValueError, match="mu_f"):
        PortfolioProblem([1.5, 0.4], np.ones((1, 2)) * 0.5, QuadraticReward([0.5]), N=10, T=100)
    with pytest.raises(ValueError, match="reward"):
        PortfolioProblem([0.5, 0.4], np.ones((1, 2)) * 0.5, QuadraticReward([0.5, 0.5]), N=10, T=100)


def test_tables_are_common_random_numbers_with_the_right_law():
    problem = section73(8000, outcomes="gaussian", noise_sd=0.1)
    a, b = problem.draw(seed=3, s=1), problem.draw(seed=3, s=1, n_max=500)
    assert np.array_equal(a.F[:, :500], b.F) and np.array_equal(a.Y[:, :500], b.Y)  # prefixes
    assert not np.array_equal(a.F, problem.draw(seed=3, s=2).F)
    se = np.sqrt(0.25 / problem.N)
    assert np.all(np.abs(a.F.mean(axis=1) - problem.mu_f) < 5 * se)
    assert np.all(np.abs(a.Y.mean(axis=1).T - problem.outcome_mean) < 5 * 0.1 / np.sqrt(problem.N))
    assert np.allclose(a.CF[:, -1], a.F.sum(axis=1))


def test_simulate_is_reproducible_and_independent_of_workers():
    problem = section73(600)
    policy = ROSCOC(solve_every="doubling")
    one = simulate(problem, policy, n_seeds=5, seed=4)
    two = simulate(problem, policy, n_seeds=5, seed=4, n_jobs=2)  # chunks run in two processes
    assert np.array_equal(one.pulls, two.pulls) and np.array_equal(one.portfolios, two.portfolios)
    assert np.array_equal(one.regret, two.regret)
    single = run_seed(problem, policy, seed=4, s=3)
    assert np.array_equal(single.pulls, one.pulls[3]) and np.array_equal(single.portfolio, one.portfolios[3])
    for res in (one, simulate(problem, UCBPortfolio(), n_seeds=5, seed=4)):
        assert np.allclose(res.regret, res.experiment_regret + res.commitment_regret + res.sampling_cost)
        assert np.all(res.pulls.sum(axis=1) == problem.N)
        assert np.all(res.commitment_regret >= 0) and np.all(res.sampling_cost > 0)


def test_stage1_budget_balances_the_two_terms_of_theorem63():
    K, d, L = 5, 3, 2.4
    for T in (2000, 20000, 10 ** 6):
        N = T // 4
        tau = theorem63_stage1_budget(K, d, N, T, L)
        if tau < N:  # Stage-I cost tau equals the commitment loss (T - N) L sqrt(K d / tau)
            assert np.isclose(tau, (T - N) * L * np.sqrt(K * d / tau))
    assert theorem63_stage1_budget(K, d, 10, 10 ** 6, L) == 10


def test_portfolio_results_do_not_depend_on_what_ran_before_in_the_process():
    """The cvxpy problems are shared by every policy of a process; a solve must not start from the last one."""
    from horizonbandits.experiments import run_grid
    from horizonbandits.commit.portfolio_instances import section73
    from horizonbandits.commit import ROSCOC, UCBPortfolio
    both = run_grid(section73, [ROSCOC(), UCBPortfolio()], [300], n_seeds=2, seed=0, cache=False)
    alone = run_grid(section73, [UCBPortfolio()], [300], n_seeds=2, seed=0, cache=False)
    assert np.array_equal(both.regret.to_numpy()[2:], alone.regret.to_numpy())


def test_affine_reward_portfolio_is_the_best_single_arm():
    from horizonbandits.commit.portfolio import AffineReward, solver_for
    rng = np.random.default_rng(3)
    for _ in range(10):
        O = rng.uniform(size=(3, 5))
        g = AffineReward(rng.normal(size=3), 0.7)
        x, v = solver_for(g, 5).solve(O)
        best = int(np.argmax(g.value(O.T)))
        assert x[best] > 1 - 1e-5 and v == pytest.approx(g.value(O[:, best]), abs=1e-6)
    g = AffineReward([3.0, 4.0], -1.0)
    assert g.lipschitz() == 5.0 and g.value([1.0, 1.0]) == 6.0
    for bad, name in (([np.nan], "w"), ([[1.0]], "w")):
        with pytest.raises(ValueError, match=f"^{name}="):
            AffineReward(bad)
    with pytest.raises(ValueError, match="^b="):
        AffineReward([1.0], float("inf"))
