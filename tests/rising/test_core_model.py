"""RisingInstance, families, oracle, simulate: validation, reproducibility, common random numbers."""
import numpy as np
import pytest

import horizonbandits.rising as R


def test_instance_validation_messages():
    with pytest.raises(ValueError, match="at least 2"):
        R.RisingInstance(np.zeros((1, 5)))
    with pytest.raises(ValueError, match=r"means\[0, 2\]"):
        R.RisingInstance([[0, 1, np.nan], [0, 1, 2]])
    with pytest.raises(ValueError, match="noise"):
        R.RisingInstance(np.zeros((2, 5)), noise=-1)
    with pytest.raises(ValueError, match="bernoulli"):
        R.RisingInstance(np.full((2, 5), 2.0), noise="bernoulli")
    with pytest.raises(ValueError, match="names"):
        R.RisingInstance(np.zeros((2, 5)), names=["a", "a"])
    inst = R.RisingInstance(np.zeros((2, 5)))
    with pytest.raises(ValueError, match=r"T=6 .*\[1, 4\]"):
        R.simulate(inst, R.CureUCB(), 6)


@pytest.mark.parametrize("kwargs,name", [
    (dict(eps=0.6), "eps"), (dict(eps=-0.1), "eps"), (dict(sigma=-1), "sigma"),
    (dict(init_pulls=0), "init_pulls"), (dict(init_pulls=1.5), "init_pulls"),
])
def test_policy_parameter_validation(kwargs, name):
    for cls in (R.CureUCB, R.RedUCB):
        with pytest.raises(ValueError, match=rf"^{name}="):
            cls(**kwargs)
    with pytest.raises(ValueError, match="delta_exponent"):
        R.RedUCB(delta_exponent=0)


def test_registry_and_make_policy():
    assert R.POLICIES["CURE-UCB"] is R.CureUCB and R.POLICIES["R-ed-UCB"] is R.RedUCB
    assert R.CureUCB.uses_horizon and not R.RedUCB.uses_horizon
    with pytest.raises(ValueError, match="policy='nope'"):
        R.make_policy("nope")
    for name, cls in R.POLICIES.items():
        assert cls().name == name


def test_families():
    inst = R.ltf([0.1, 0.01], [0.5, 0.9], T_max=100)
    assert inst.means[0, 3] == pytest.approx(0.3) and inst.means[0, 10] == 0.5
    sat = R.ltf_saturating([0.7, 0.2], [3, 1], T_max=10)
    assert sat.means[0, 3] == 0.7 and sat.means[0, 2] == pytest.approx(0.7 * 2 / 3)
    rnd = R.ltf_random(np.random.default_rng(0), T_ref=1000)
    assert 2 <= rnd.K <= 5 and rnd.T_max == 1000
    assert np.all(np.diff(rnd.means, axis=1) >= 0)
    again = R.ltf_random(np.random.default_rng(0), T_ref=1000)
    assert np.array_equal(rnd.means, again.means)
    p = R.prop53(100, 0.3, K=4)
    assert p.means[0, 0] == 0.5 and p.means[2, 0] == 0.25 and p.means[1, 30] == 1.0 and p.means[1, 29] < 1
    with pytest.raises(ValueError, match="alpha"):
        R.prop53(100, 0.5)


def test_oracle_matches_brute_force_on_small_instance():
    inst = R.RisingInstance([[0, .2, .3, .35, .4], [0, .1, .3, .5, .6], [0, .3, .3, .3, .3]])
    for T in range(1, 5):
        sums = inst.means[:, 1:T + 1].sum(axis=1)
        assert R.optimal_arm(inst, T) == int(np.argmax(sums))
        assert R.optimal_value(inst, T) == pytest.approx(sums.max())
    assert R.pseudo_regret(inst, [[4, 0, 0]], 4) == pytest.approx(1.5 - 1.25)
    with pytest.raises(ValueError, match="sum to"):
        R.pseudo_regret(inst, [[1, 0, 0]], 4)


def test_regret_can_be_negative_and_is_not_clipped():
    # A curve that falls: the best fixed arm is not the best policy.
    inst = R.RisingInstance([[0, 1.0, 0.0, 0.0], [0, 0.4, 0.4, 0.4]], noise=0.0)
    assert R.pseudo_regret(inst, [[1, 2]], 3) == pytest.approx(1.2 - 1.8)


def test_same_seed_same_numbers_and_prefix_property():
    inst = R.figure1(T_max=30_000)
    a = R.simulate(inst, R.RedUCB(), 5000, n_seeds=4, seed=7)
    b = R.simulate(inst, R.RedUCB(), 5000, n_seeds=4, seed=7)
    assert np.array_equal(a.regret, b.regret) and np.array_equal(a.pulls, b.pulls)
    # Seed index s gives the same run whether 2 or 4 seeds are simulated.
    c = R.simulate(inst, R.RedUCB(), 5000, n_seeds=2, seed=7)
    assert np.array_equal(a.regret[:2], c.regret)
    # The reward table of a shorter horizon is a prefix of the longer one.
    short = R.draw_observations(inst, 1000, seed=3, s=1)
    long = R.draw_observations(inst, 5000, seed=3, s=1)
    assert np.array_equal(short.X, long.X[:, :1001])
    d = R.simulate(inst, R.RedUCB(), 5000, n_seeds=1, seed=8)
    assert not np.array_equal(a.regret[:1], d.regret)


def test_horizon_agnostic_run_can_be_read_off_at_checkpoints():
    inst = R.figure1(T_max=30_000)
    pol = R.RedUCB()
    pulls, _ = R.run_seed(inst, pol, 6000, seed=2, s=0, checkpoints=[1000, 3000, 6000])
    for row, T in zip(pulls, (1000, 3000, 6000)):
        alone = R.simulate(inst, pol, T, n_seeds=1, seed=2)
        assert np.array_equal(alone.pulls[0], row)


def test_curve_and_arms():
    inst = R.figure1(T_max=30_000)
    res = R.simulate(inst, R.CureUCB(), 2000, n_seeds=2, return_curve=True, return_arms=True)
    assert res.curve.shape == (2, 2000) and res.arms.shape == (2, 2000)
    assert np.allclose(res.curve[:, -1], res.regret)
    assert np.array_equal(np.stack([np.bincount(a, minlength=2) for a in res.arms]), res.pulls)


def test_bernoulli_and_deterministic_observations():
    inst = R.figure1(T_max=30_000)
    obs = R.draw_observations(inst, 500, noise="bernoulli")
    assert set(np.unique(obs.X[:, 1:])) <= {0.0, 1.0}
    det = R.draw_observations(inst, 500, noise=0)
    assert np.array_equal(det.X, inst.means[:, :501])
    assert np.allclose(obs.C[:, -1] - obs.C[:, 0], obs.X.sum(axis=1))  # the sum over l = 0..T


def test_running_sums_are_plain_sequential_sums():
    # C and W must round exactly like a running total (what the references accumulate), whatever
    # computes them: W is a compiled single pass, C numpy's cumsum.
    rng = np.random.default_rng(7)
    X = rng.normal(0.5, 0.3, size=(3, 2001))
    obs = R.Observations(X)
    C_plain, W_plain = np.zeros((3, 2002)), np.zeros((3, 2002))
    C_plain[:, 0] = -X[:, 0]  # mu_i(0) kept apart: the sums of the observed rewards start at 0
    for i in range(3):
        c = w = 0.0
        for n in range(2001):
            c += X[i, n] if n > 0 else 0.0
            w += X[i, n] * n
            C_plain[i, n + 1], W_plain[i, n + 1] = c, w
    assert np.array_equal(obs.C, C_plain)
    assert np.array_equal(obs.W, W_plain)


@pytest.mark.parametrize("noise", [0.05, "bernoulli", 0.0])
def test_every_kernel_sees_the_same_rewards_drawn_lazily_or_from_the_table(noise):
    # Common random numbers: a kernel drawing the rewards of its own pulls (what simulate runs) chooses
    # the arms it chooses on the table draw_observations fills; the rewards are the counter-based ones
    # of rising.rewards, so any policy reads the same reward for pull n of arm i.
    inst = R.ltf_random(np.random.default_rng(4), K=4, T_ref=1500)
    T = 1500
    cps = np.array([500, T], dtype=np.int64)
    for name, cls in sorted(R.POLICIES.items()):
        policy = cls()
        lazy_arms, table_arms = np.empty(T, dtype=np.int64), np.empty(T, dtype=np.int64)
        lazy = policy.run_kernel(R.reward_source(inst, seed=3, s=2, noise=noise), T, cps, lazy_arms, 11)
        table = policy.run_kernel(R.draw_observations(inst, T, seed=3, s=2, noise=noise), T, cps, table_arms, 11)
        assert np.array_equal(lazy_arms, table_arms), name
        assert np.array_equal(lazy, table), name


def test_reward_table_is_the_counter_based_draws():
    from horizonbandits import seeds
    from horizonbandits.counter_rng import pull_normal, pull_uniform
    inst = R.figure1(T_max=30_000)
    gauss = R.draw_observations(inst, 200, seed=5, s=3, noise=0.1).X
    coin = R.draw_observations(inst, 200, seed=5, s=3, noise="bernoulli").X
    for i in range(inst.K):
        key = seeds.arm_reward_key(5, 3, i)
        for n in (1, 2, 63, 64, 65, 200):
            assert gauss[i, n] == inst.means[i, n] + 0.1 * pull_normal(key, n)
            assert coin[i, n] == (1.0 if pull_uniform(key, n) < inst.means[i, n] else 0.0)
    with pytest.raises(ValueError, match="T=201"):
        R.CureUCB().run_kernel(R.draw_observations(inst, 200), 201, np.array([201]), np.empty(0, dtype=np.int64), 0)
