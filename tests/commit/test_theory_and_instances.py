"""Formulas of the theory module and the instance builders of sections 6.1, 7.1, 7.2 and Theorem 5.3."""
import math

import numpy as np
import pandas as pd
import pytest

import horizonbandits as hb  # noqa: F401
from horizonbandits.commit import CommitProblem, instances, theory
from horizonbandits.commit.grid import summary_table
from horizonbandits.experiments import run_grid
from horizonbandits.stats import half_slopes, slope


def test_raec_epsilon_formula():
    K, N, T = 4, 5000, 20000
    lg = math.log(15000)
    assert theory.raec_epsilon(K, N, T) == pytest.approx(max(4 * math.sqrt(K * lg / N), (K * lg / 15000) ** (1 / 3)))
    assert theory.raec_epsilon(4, 99, 100) == 0.0
    assert theory.raec_epochs(4, 99, 100) == math.inf
    assert theory.raec_epochs(4, 22, 500) <= 0


@pytest.mark.parametrize("boundaries", ["intro", "section3"])
def test_regimes_along_the_schedules(boundaries):
    T = 10 ** 9
    assert theory.regime(4, int(T ** 0.5), T, boundaries) == "I"
    assert theory.regime(4, T // 4, T, boundaries) == "II"
    assert theory.regime(4, T - int(T ** 0.5), T, boundaries) == "III"
    assert theory.regime(4, T - 1, T, boundaries) == "III"


def test_the_two_boundary_conventions_differ_near_t_minus_t34():
    T = 10 ** 6
    N = T - int(T ** 0.75)
    assert theory.regime(4, N, T, "intro") != theory.regime(4, N, T, "section3")
    with pytest.raises(ValueError, match="boundaries"):
        theory.regime(4, N, T, "paper")


def test_combined_rate_reduces_to_the_region_rates():
    K = 4
    for N, T, expected in [(100, 10 ** 6, math.sqrt(K * (10 ** 6 - 100) ** 2 / 100)),
                           (250000, 10 ** 6, K ** (1 / 3) * 750000 ** (2 / 3)),
                           (10 ** 6 - 100, 10 ** 6, math.sqrt(K * (10 ** 6 - 100)))]:
        assert theory.minimax_lower_bound(K, N, T) == pytest.approx(expected)
        assert theory.upper_bound_rate(K, N, T) == pytest.approx(expected)
    assert theory.upper_bound_rate(K, 250000, 10 ** 6, logs=True) > theory.upper_bound_rate(K, 250000, 10 ** 6)


@pytest.mark.parametrize("a", [0.3, 0.5, 0.6, 0.7, 0.9])
def test_experiment_side_exponent_matches_the_formula(a):
    num = theory.numeric_exponent(theory.combined_rate_real, 4, lambda T: (T ** a, T - T ** a))
    assert num == pytest.approx(float(theory.exponent_vs_experiment(a)), abs=2e-3)


@pytest.mark.parametrize("b", [0.2, 0.5, 0.7, 0.8, 0.95])
def test_commitment_side_exponent_matches_the_formula(b):
    num = theory.numeric_exponent(theory.combined_rate_real, 4, lambda T: (T - T ** b, T ** b))
    assert num == pytest.approx(float(theory.exponent_vs_commitment(b)), abs=2e-3)


def test_k_inf_of_bernoulli_coordinates_is_the_bernoulli_kl():
    p = CommitProblem.bernoulli([0.7, 0.4, 0.55], [0.3, 0.6, 0.5], 100, 400)
    d_f, d_g = theory.divergences(p)
    assert d_f[1] == pytest.approx(theory.bernoulli_kl(0.4, 0.7), rel=1e-6)
    assert d_f[2] == pytest.approx(theory.bernoulli_kl(0.55, 0.7), rel=1e-6)
    assert d_g[0] == pytest.approx(theory.bernoulli_kl(0.3, 0.6), rel=1e-6)
    assert d_g[1] == pytest.approx(theory.bernoulli_kl(0.6, 0.5), rel=1e-6)  # g-best pushed below the runner-up
    assert theory.instance_lower_bound(p) > 0


def test_instance_bounds_grow_with_the_horizon_and_shrink_with_the_gaps():
    p = CommitProblem.bernoulli([0.8, 0.77, 0.2, 0.2], [0.2, 0.2, 0.6, 0.55], 1000, 4000)
    wide = CommitProblem.bernoulli([0.8, 0.77, 0.2, 0.2], [0.2, 0.2, 0.8, 0.55], 1000, 4000)
    assert theory.asymptotic_instance_bound(wide) < theory.asymptotic_instance_bound(p)
    b = theory.proposition41_bound(p)
    assert b["total"] == pytest.approx(b["experiment"] + b["commitment"] + b["failure"])
    assert theory.proposition41_bound(p.with_horizon(4000, 16000))["experiment"] > b["experiment"]
    np.testing.assert_allclose(theory.gammas_g([0.2, 0.2, 0.6, 0.55]), [0.4, 0.4, 0.05, 0.05])


@pytest.mark.parametrize("schedule, T, N", [("sqrt", 1000, 31), ("two_thirds", 1000, 100), ("two_thirds", 8000, 400),
                                            ("quarter", 2500, 625), ("late_3_4", 10000, 9000),
                                            ("late_3_4", 500, 500 - 106), ("late_1_2", 10000, 9900),
                                            ("late_1_2", 500, 500 - 23)])
def test_schedules_use_exact_integer_roots(schedule, T, N):
    assert instances.experiment_length(schedule, T) == N


def test_section71_cells_and_rates():
    for sch in instances.SCHEDULES:
        for T in instances.PAPER_GRID:
            p = instances.section71(sch, T)
            assert 1 <= p.N < p.T == T and p.best_f == 0 and p.best_g == 1
    assert instances.section71_policy("sqrt").stage1_scale == 1.0
    assert instances.section71_policy("quarter").stage1_scale == 0.1
    assert instances.section71_policy("quarter").commit == "empirical"
    rates = [instances.section71_rate("quarter", 4, T) for T in (10 ** 6, 10 ** 7)]
    assert math.log(rates[1] / rates[0]) / math.log(10) == pytest.approx(2 / 3, abs=1e-3)


def test_section72_instance_and_gap_validation():
    p = instances.section72(20000, c=0.5)
    np.testing.assert_allclose(p.mu_f, [0.8, 0.77, 0.2, 0.2])
    assert p.N == 5000 and p.mu_g[2] == pytest.approx(0.55 + 0.5 / math.sqrt(math.log(5000)))
    with pytest.raises(ValueError, match="c=1.5"):
        instances.section72(500, c=1.5)
    pol = instances.section72_policy()
    assert (pol.stage1_scale, pol.stage2_scale, pol.commit) == (1 / 25, 1 / 10, "empirical")


def test_section72_policy_takes_the_eps_of_region_ii():
    # every T of Figure 4's grid is Region II by section 3.2's boundaries, so eps = (K log(T-N) / (T-N))^(1/3)
    region, thm = instances.section72_policy(), instances.section72_policy(eps_rule="theorem3.1")
    for T in (500, 1000, 2500, 5000, 10000, 15000, 20000):
        p = instances.section72(T)
        assert theory.regime(4, p.N, T, "section3") == "II"
        assert region.epsilon(p) == pytest.approx((4 * math.log(T - p.N) / (T - p.N)) ** (1 / 3))
        assert thm.epsilon(p) == pytest.approx(theory.raec_epsilon(4, p.N, T))
        assert region.stage1_epochs(p) > thm.stage1_epochs(p)  # Theorem 3.1's first term dominates here
    assert theory.regime(4, 125, 500, "intro") == "I"  # section 1.1's boundaries put T = 500 in Region I
    assert instances.section72_policy(eps=0.3).eps == 0.3
    with pytest.raises(ValueError, match="eps_rule='paper'"):
        instances.section72_policy(eps_rule="paper")


def test_separable_family_and_when_raec_is_uniform_exploration():
    p = instances.section71("quarter", 20000, family="separable")
    assert p.N == 5000 and p.best_f == 0 and p.best_g == 1
    assert p.gaps_f[1] == pytest.approx(0.45) and p.mu_g[1] - 0.5 == pytest.approx(0.5 * (4 / 15000) ** (1 / 3))
    assert np.allclose(instances.section71("quarter", 20000).mu_f[1:], 0.5)  # the critical family is the default
    # section 7.1's own settings: for N = floor(sqrt T) the first Stage-I target, ceil(16 log(T - N)) = 159 pulls
    # per arm at T = 20,000, exceeds N/K = 35 (targets are capped at N = 141)
    sqrt_cell = instances.section71("sqrt", 20000)
    pol = instances.section71_policy("sqrt")
    assert math.ceil(16 * math.log(20000 - 141)) == 159 and sqrt_cell.N == 141
    assert pol.schedule(sqrt_cell)[0][0] == 141 and pol.is_uniform(sqrt_cell)
    assert not instances.section71_policy("quarter").is_uniform(p)
    with pytest.raises(ValueError, match="family='easy'"):
        instances.section71("quarter", 1000, family="easy")


def test_lower_bound_families():
    fam = instances.commitment_side_family(4, 5000, 20000, c=0.5)
    assert len(fam) == 3 and len({p.best_g for p in fam}) == 3 and all(p.best_f == 0 for p in fam)
    assert all(p.gaps_f[p.best_g] == pytest.approx(0.25) for p in fam)
    exp_side = instances.experiment_side_family(4, 5000, 20000)
    assert [p.best_f for p in exp_side] == [0, 1, 2, 3] and all(np.ptp(p.mu_g) == 0 for p in exp_side)


def test_lower_bound_grid_is_the_same_on_loky_and_in_process():
    # lower_bound_construction's grid (both families, its four policies) at a small size: the notebook runs it on
    # loky workers, and its numbers must be those of the sequential run (9 seeds: not a multiple of UCBCommit's lanes)
    from horizonbandits.commit import RAEC, UCBCommit, UniformCommit
    cases = []
    for schedule, T in [("sqrt", 900), ("quarter", 600), ("two_thirds", 700)]:
        N = instances.experiment_length(schedule, T)
        for p in instances.commitment_side_family(4, N, T, c=0.5, delta_f=0.4):
            cases.append(dict(schedule=schedule, T=T, side="commitment", problem=p))
        for p in instances.experiment_side_family(4, N, T, c=1.0):
            cases.append(dict(schedule=schedule, T=T, side="experiment", problem=p))

    def policies(case):
        return {"RAEC": RAEC(), "RAEC (section 7.1 settings)": instances.section71_policy(case["schedule"]),
                "UCBCommit": UCBCommit(), "UniformCommit": UniformCommit()}
    here_runs = run_grid(cases, policies, n_seeds=9, seed=3, cache=False)
    there_runs = run_grid(cases, policies, n_seeds=9, seed=3, backend="loky", n_jobs=2, cache=False)
    here, there = summary_table(here_runs), summary_table(there_runs)
    assert len(here) == 4 * len(cases) and here_runs.regret.nunique() > 10
    pd.testing.assert_frame_equal(here, there)
    pd.testing.assert_frame_equal(here_runs, there_runs)


def test_section61_instances():
    same = instances.no_shift_instance(3, 10, 40, 0.2)
    np.testing.assert_allclose(same.mu_f, same.mu_g)
    scaled = instances.scaled_shift_instance(3, 10, 40, 0.2, scale=0.3, offset=0.1)
    np.testing.assert_allclose(scaled.mu_g, 0.1 + 0.3 * scaled.mu_f)
    moved = instances.reordered_shift_instance(3, 10, 40, 0.2)
    assert moved.best_f == 0 and moved.best_g == 1


def test_grid_and_slopes():
    x = np.array([1.0, 2, 4, 8, 16, 32, 64])
    assert slope(x, 3 * x ** 0.5) == pytest.approx(0.5)
    lo, hi = half_slopes(x, np.where(x <= 8, x, 8 * (x / 8) ** 0.25))
    assert lo == pytest.approx(1.0) and hi == pytest.approx(0.25)
    cases = [dict(T=T, problem=instances.section72(T)) for T in (500, 1000)]
    table = summary_table(run_grid(cases, {"RAEC": instances.section72_policy()}, n_seeds=20, seed=0))
    assert list(table["T"]) == [500, 1000] and (table["ci_low"] <= table["mean_regret"]).all()


def test_epsilon_by_region_follows_section_32():
    K, N, T = 4, 5000, 20000
    assert theory.regime(K, N, T, "section3") == "II"
    assert theory.epsilon_by_region(K, N, T) == pytest.approx((K * math.log(T - N) / (T - N)) ** (1 / 3))
    assert theory.epsilon_by_region(K, N, T) < theory.raec_epsilon(K, N, T)
    assert theory.epsilon_by_region(K, 50, T) == pytest.approx(4 * math.sqrt(K * math.log(T - 50) / 50))
