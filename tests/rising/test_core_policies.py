"""CURE-UCB and R-ed-UCB: kernel equals reference, exact values of Proposition 5.3, dominance (Theorem 5.2)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import horizonbandits.rising as R
from horizonbandits.testing import assert_kernel_matches_reference

DETERMINISTIC = dict(eps=0.0, sigma=0.0, init_pulls=1)


def random_rising(seed, K, T_max, concave=True):
    """Nondecreasing (optionally concave) random curves with values in [0, 1]."""
    rng = np.random.default_rng(seed)
    inc = rng.exponential(size=(K, T_max)) * rng.uniform(0.2, 2.0, size=(K, 1))
    if concave:
        inc = -np.sort(-inc, axis=1)
    curves = np.cumsum(inc, axis=1)
    curves = curves / curves[:, -1:] * rng.uniform(0.3, 1.0, size=(K, 1))
    start = rng.uniform(0, 0.3, size=(K, 1))
    means = np.hstack([start, start + curves * (1 - start)])
    return R.RisingInstance(means, noise=0.05)


@pytest.mark.parametrize("policy", [
    R.CureUCB(), R.RedUCB(), R.CureUCB(eps=0.5, sigma=0.1), R.RedUCB(eps=0.125, sigma=0.02, init_pulls=3),
    R.CureUCB(**DETERMINISTIC), R.RedUCB(**DETERMINISTIC), R.RedUCB(delta_exponent=2.0),
], ids=lambda p: p.label)
@pytest.mark.parametrize("noise", [None, 0.0, "bernoulli"])
def test_kernel_matches_reference(policy, noise):
    for seed in range(3):
        inst = random_rising(seed, K=2 + seed, T_max=1500)
        assert_kernel_matches_reference(policy, inst, T=1500, n_seeds=2, seed=seed, noise=noise)


def test_kernel_matches_reference_on_ltf_ties():
    # Identical arms force exact ties every round: both sides must break them the same way.
    inst = R.ltf([0.001, 0.001, 0.002], [0.5, 0.5, 0.4], T_max=800, noise=0.0)
    for policy in (R.CureUCB(**DETERMINISTIC), R.RedUCB(**DETERMINISTIC), R.CureUCB(sigma=0.0)):
        assert_kernel_matches_reference(policy, inst, T=800, n_seeds=1)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), K=st.integers(2, 6), eps=st.sampled_from([0.0, 0.25, 0.5]),
       sigma=st.sampled_from([0.0, 0.01]), which=st.sampled_from(["cure", "red"]))
def test_kernels_break_ties_like_the_reference(seed, K, eps, sigma, which):
    # Means on a coarse grid make equal indices common, between the arm pulled last round (which the
    # kernels compare last) and the others; the lowest index must win every time, as in the reference.
    rng = np.random.default_rng(seed)
    steps = rng.integers(0, 2, size=(K, 400)) / 8
    means = np.minimum(np.cumsum(np.hstack([rng.integers(0, 3, size=(K, 1)) / 8, steps]), axis=1), 1.0)
    inst = R.RisingInstance(means, noise=0.0)
    policy = (R.CureUCB if which == "cure" else R.RedUCB)(eps=eps, sigma=sigma, init_pulls=1 if eps == 0 else 2)
    assert_kernel_matches_reference(policy, inst, T=400)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), K=st.integers(2, 5), T=st.integers(1, 80), init_pulls=st.integers(1, 3),
       eps=st.sampled_from([0.0, 0.1, 0.25, 0.5]), which=st.sampled_from(["cure", "red"]))
def test_short_horizons_and_long_initialisations(seed, K, T, init_pulls, eps, which):
    # Horizons shorter than the initialisation, tables exactly as long as the run: the kernels'
    # look-ahead statistics, computed one pull ahead and skipped at the table's end, must not change a
    # choice. (Out-of-range reads are not visible here; a run under NUMBA_BOUNDSCHECK=1 found none.)
    policy = (R.CureUCB if which == "cure" else R.RedUCB)(eps=eps, init_pulls=init_pulls)
    inst = random_rising(seed, K=K, T_max=T)
    assert_kernel_matches_reference(policy, inst, T=T, n_seeds=1, seed=seed)


def test_reference_trace_gives_the_chosen_arm():
    inst = R.figure1(T_max=30_000)
    obs = R.draw_observations(inst, 3000, seed=1)
    arms, trace = R.CureUCB().reference(obs.X, 3000, trace=True)
    ok = ~np.isnan(trace).any(axis=1)
    assert ok.sum() == 3000 - 2 * inst.K
    assert np.array_equal(np.argmax(trace[ok], axis=1), arms[ok])


@given(seed=st.integers(0, 10_000), K=st.integers(2, 5), T=st.integers(5, 400),
       concave=st.booleans(), which=st.sampled_from(["cure", "red"]))
@settings(max_examples=60, deadline=None)
def test_pseudo_regret_nonnegative_on_nondecreasing_curves(seed, K, T, concave, which):
    inst = random_rising(seed, K, T, concave)
    policy = R.CureUCB() if which == "cure" else R.RedUCB()
    res = R.simulate(inst, policy, T, n_seeds=2, seed=seed)
    assert np.all(res.regret >= -1e-9)
    assert np.all(res.pulls.sum(axis=1) == T)


@pytest.mark.parametrize("T,alpha", [(100, 0.3), (1000, 0.3), (1001, 0.25), (5000, 0.49), (4000, 0.1)])
def test_prop53_two_arms_exact(T, alpha):
    inst = R.prop53(T, alpha)
    cure = R.simulate(inst, R.CureUCB(**DETERMINISTIC), T)
    red = R.simulate(inst, R.RedUCB(**DETERMINISTIC), T)
    assert cure.regret[0] == pytest.approx(0.5, abs=1e-9)
    assert cure.pulls[0].tolist() == [1, T - 1]
    assert red.regret[0] - cure.regret[0] >= alpha * T / 4 - 1.5 - 1e-9


@pytest.mark.parametrize("K", [3, 4, 6])
def test_prop53_dummy_arms_exact(K):
    T, alpha = 2000, 0.3
    inst = R.prop53(T, alpha, K=K)
    cure = R.simulate(inst, R.CureUCB(**DETERMINISTIC), T)
    red = R.simulate(inst, R.RedUCB(**DETERMINISTIC), T)
    assert cure.regret[0] == pytest.approx(0.5 + 3 * (K - 2) / 4, abs=1e-9)
    assert red.regret[0] - cure.regret[0] >= alpha * T / 4 - 1.5 - (K - 2) / 2 - 1e-9


def test_dominance_on_integer_saturation_ltf():
    cure, red = R.CureUCB(**DETERMINISTIC), R.RedUCB(**DETERMINISTIC)
    checked = 0
    for seed in range(60):
        inst = R.ltf_random(np.random.default_rng(seed), T_ref=3000, noise=0.0)
        for T in (30, 300, 1500, 3000):
            rc = R.simulate(inst, cure, T).regret[0]
            rr = R.simulate(inst, red, T).regret[0]
            assert rc <= rr + 1e-9, (seed, T, rc, rr)
            checked += 1
    assert checked == 240


def test_cure_adapts_to_the_horizon_on_figure1():
    inst = R.figure1()
    assert R.optimal_arm(inst, 10_000) == 0 and R.optimal_arm(inst, 30_000) == 1
    short = R.simulate(inst, R.CureUCB(), 10_000, n_seeds=3)
    long = R.simulate(inst, R.CureUCB(), 30_000, n_seeds=3)
    assert np.all(short.pulls[:, 0] > short.pulls[:, 1])
    assert np.all(long.pulls[:, 1] > long.pulls[:, 0])


def twin_table(seed, T, twins, mu0):
    """A 0/1 reward table of 3 arms where arms ``twins`` give the same rewards from pull 1 on but start
    from different mu_i(0) (``mu0``): whenever they have the same pull count their indices are equal
    mathematically (the windows of all three policies below never reach pull 0 after the
    initialisation), so the lower of the two must be chosen."""
    rng = np.random.default_rng(seed)
    X = (rng.random((3, T + 1)) < 0.6).astype(float)
    X[twins[0], 1:] = X[twins[1], 1:] = np.minimum(X[twins[0], 1:] + (rng.random(T) < 0.1), 1.0)  # the better pair
    X[:, 0] = mu0
    return X


def same_state(policy, arms, t, a, b):
    """Arms a and b enter round t with the same statistics: the same pull count and, for SW-UCB,
    the same number of pulls among the window's rounds."""
    before = arms[: t - 1]
    if np.count_nonzero(before == a) != np.count_nonzero(before == b):
        return False
    if policy.name == "SW-UCB":
        recent = before[max(0, t - 1 - policy.window(arms.size)):]
        return np.count_nonzero(recent == a) == np.count_nonzero(recent == b)
    return True


@pytest.mark.parametrize("policy", [R.CureUCB(), R.RedUCB(), R.CureUCB(eps=0.5, sigma=0.5),
                                    R.RedUCB(eps=0.5, sigma=0.5), R.make_policy("SW-UCB")], ids=lambda p: p.label)
@pytest.mark.parametrize("twins", [(0, 1), (1, 2), (0, 2)])
def test_exact_ties_go_to_the_lowest_index(policy, twins):
    # Before the running sums started at 0 (mu_i(0) kept apart), these indices differed in the last
    # bit and the higher index won about a quarter of such ties.
    from horizonbandits.testing import kernel_arms
    T, checked = 3000, 0
    lo, hi = twins
    for seed in range(4):
        X = twin_table(seed, T, twins, mu0=[0.1, 0.7, 0.3])
        arms = kernel_arms(policy, X, T)
        assert np.array_equal(arms, policy.reference(X, T))
        for t in range(3 * 2 + 1, T + 1):
            if arms[t - 1] in twins and same_state(policy, arms, t, lo, hi):
                assert arms[t - 1] == lo, (seed, t)
                checked += 1
    assert checked >= 5  # the situation occurs, so the test can fail


@pytest.mark.parametrize("noise", [None, "bernoulli"])
def test_red_ucb_bonus_cap_kernel_matches_reference(noise):
    for cap in (1.0, 0.05):
        policy = R.RedUCB(eps=1 / 32, sigma=0.1, bonus_cap=cap)  # the official code's IMDB settings
        for seed in range(2):
            inst = random_rising(seed, K=4, T_max=1500)
            assert_kernel_matches_reference(policy, inst, T=1500, n_seeds=2, seed=seed, noise=noise)


def test_red_ucb_bonus_cap_changes_choices_only_when_it_binds():
    from horizonbandits.testing import kernel_arms
    inst = random_rising(7, K=4, T_max=1500)
    X = R.draw_observations(inst, 1500, seed=7, noise="bernoulli").X
    free = kernel_arms(R.RedUCB(sigma=0.5), X, 1500)
    assert np.array_equal(kernel_arms(R.RedUCB(sigma=0.5, bonus_cap=1e300), X, 1500), free)
    assert not np.array_equal(kernel_arms(R.RedUCB(sigma=0.5, bonus_cap=0.01), X, 1500), free)
    for bad in (0.0, -1.0, "1"):
        with pytest.raises(ValueError, match="bonus_cap"):
            R.RedUCB(bonus_cap=bad)


def test_log_table_serves_every_horizon_from_one_table():
    """log t for t <= T whatever horizons were asked before, read-only, and without a rebuild when a grid
    cycles through more horizons than a per-T cache would keep (the Figure 2 grids ask for ten per seed)."""
    import math

    from horizonbandits.rising.policies._common import log_table
    longest = log_table(3_000)
    for _ in range(2):
        for T in (300, 30, 2_900, 1, 3_000, 1_234):
            table = log_table(T)
            assert table.shape == (T + 1,) and not table.flags.writeable and table.flags.c_contiguous
            assert all(table[t] == math.log(t) for t in range(1, T + 1))
            assert np.shares_memory(table, longest)
    assert log_table(5_000)[4_999] == math.log(4_999)
