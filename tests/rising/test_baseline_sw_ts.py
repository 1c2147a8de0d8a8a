"""SW-TS (Trovo et al. 2020): kernel equals reference on the same stream, parameter checks, the
Bernoulli trick on clipped rewards, and the window forgetting old outcomes."""
import math

import numpy as np
import pytest

import horizonbandits.rising as R
from horizonbandits.rising.policies import POLICIES
from horizonbandits.rising.policies.sw_ts import SWTS
from horizonbandits.testing import assert_kernel_matches_reference
from horizonbandits.testing import kernel_arms as run_arms

T = 1000

POLICY_CASES = [
    SWTS(),          # tau = ceil(sqrt(100,000)) = 317, whatever T
    SWTS(window_rule="horizon"),  # tau = ceil(sqrt(1000)) = 32
    SWTS(tau=5),     # outcomes leave the window all the time
    SWTS(tau=1),     # a window of one round
    SWTS(tau=400),   # a long window
]


@pytest.mark.parametrize("policy", POLICY_CASES, ids=lambda p: repr(p))
@pytest.mark.parametrize("noise", [0.1, "bernoulli"])
def test_kernel_matches_reference_on_random_ltf(policy, noise):
    for seed in range(2):
        inst = R.ltf_random(np.random.default_rng(500 + seed), K=2 + 3 * seed, T_ref=T)
        assert_kernel_matches_reference(policy, inst, T=T, n_seeds=2, seed=seed, noise=noise)


def test_registry_defaults_and_horizon_use():
    assert POLICIES["SW-TS"] is SWTS
    assert SWTS.randomised
    fixed, by_horizon = SWTS(), SWTS(window_rule="horizon")
    assert not fixed.uses_horizon and by_horizon.uses_horizon
    assert {fixed.window(horizon) for horizon in (1, 50, 10 ** 6)} == {317}  # ceil(sqrt(100,000))
    assert SWTS(reference_horizon=10 ** 10).window(3) == 10 ** 5  # exact at perfect squares
    for horizon in range(1, 2000):
        assert by_horizon.window(horizon) == math.ceil(math.sqrt(horizon))
    assert by_horizon.window(10 ** 10) == 10 ** 5
    assert SWTS(tau=9, window_rule="horizon").window(10 ** 6) == 9


@pytest.mark.parametrize("kwargs, name", [
    (dict(tau=0), "tau"), (dict(tau=-4), "tau"), (dict(tau=2.5), "tau"), (dict(tau=True), "tau"),
    (dict(window_rule="fixed size"), "window_rule"), (dict(reference_horizon=0), "reference_horizon"),
])
def test_bad_parameters_raise_one_line_errors(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}=") as err:
        SWTS(**kwargs)
    assert "\n" not in str(err.value)


def test_same_seed_same_run_other_seed_other_run():
    inst = R.ltf_random(np.random.default_rng(3), K=3, T_ref=800)
    X = R.draw_observations(inst, 800, seed=0).X
    a = run_arms(SWTS(), X, 800, stream_seed=11)
    np.testing.assert_array_equal(a, run_arms(SWTS(), X, 800, stream_seed=11))
    assert (a != run_arms(SWTS(), X, 800, stream_seed=12)).any()


def test_bernoulli_trick_uses_the_clipped_reward_as_the_success_probability():
    """Rewards above 1 act as 1 and below 0 as 0 (the draw u < clip(x) is then certain), and a
    fractional reward is a success with that probability: constant rewards 0.8 vs 0.2 are told apart."""
    horizon = 600
    X = np.zeros((3, horizon + 1))
    X[0, 1::2], X[1, 1::3] = 1.0, 1.0
    clipped_view = X.copy()
    clipped_view[X == 1.0] = 7.5
    clipped_view[X == 0.0] = -3.0
    for seed in (1, 2):
        np.testing.assert_array_equal(run_arms(SWTS(tau=50), X, horizon, seed),
                                      run_arms(SWTS(tau=50), clipped_view, horizon, seed))
    fractional = np.vstack([np.full(horizon + 1, 0.2), np.full(horizon + 1, 0.8)])
    arms = run_arms(SWTS(tau=200), fractional, horizon, 5)
    assert (arms == 1).mean() > 0.8


def test_window_forgets_old_outcomes():
    """Arm 0 always succeeds, arm 1 always fails. With a window of 20 rounds arm 1's failures leave
    it and its posterior returns to the uniform prior, so it keeps being tried (about once every 22
    rounds); with a window as long as the run its failures are remembered and it is dropped."""
    horizon = 3000
    X = np.zeros((2, horizon + 1))
    X[0] = 1.0
    late_short, late_long = [], []
    for seed in range(3):
        late_short.append((run_arms(SWTS(tau=20), X, horizon, seed)[2000:] == 1).sum())
        late_long.append((run_arms(SWTS(tau=horizon), X, horizon, seed)[2000:] == 1).sum())
    assert min(late_short) >= 15 and max(late_long) <= 2


@pytest.mark.parametrize("seed", [0, 1])
def test_kernel_matches_reference_on_random_concave(seed):
    """The notebooks' second family with their K (11 to 14): at T = 1000 every combination of the
    Erlang (shape 1 or 2) and Marsaglia-Tsang paths for a and b occurs, mixed from arm to arm."""
    inst = R.concave_random(np.random.default_rng(700 + seed), K=11 + 2 * seed, H=T)
    assert_kernel_matches_reference(SWTS(), inst, T=T, n_seeds=2, seed=seed)
