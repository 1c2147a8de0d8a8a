"""ET-SWGTS (Fiandri et al. 2025): kernel equals reference, parameter checks, explore-then-sample."""
import math

import numpy as np
import pytest

import horizonbandits.rising as R
from horizonbandits.rising.policies import POLICIES
from horizonbandits.rising.policies.et_swgts import ETSWGTS
from horizonbandits.testing import assert_kernel_matches_reference, kernel_and_reference_arms

T = 3000


def late_bloomer(T_max=T):
    """Arm 0 constant at 0.5; arm 1 rises linearly from 0 to 1 over its first 50 pulls, then stays at 1."""
    n = np.arange(T_max + 1, dtype=float)
    return R.RisingInstance(np.vstack([np.full_like(n, 0.5), np.minimum(1.0, n / 50)]), noise=0.0)


POLICY_CASES = [
    ETSWGTS(),
    ETSWGTS(window=7, explore=3, gamma=0.5),
    ETSWGTS(window=1, explore=1, gamma=10.0),
    ETSWGTS(window=40, explore=60, gamma=2.0),
]


@pytest.mark.parametrize("policy", POLICY_CASES, ids=lambda p: repr(p))
@pytest.mark.parametrize("noise", [None, 0.2, "bernoulli"])
def test_kernel_matches_reference_on_random_ltf(policy, noise):
    for seed in range(3):
        inst = R.ltf_random(np.random.default_rng(200 + seed), K=2 + seed, T_ref=T)
        assert_kernel_matches_reference(policy, inst, T=T, n_seeds=2, seed=seed, noise=noise)


def test_kernel_matches_reference_on_identical_deterministic_arms():
    means = np.full((3, T + 1), 0.4)
    inst = R.RisingInstance(means, noise=0.0)
    for policy in (ETSWGTS(window=5, explore=2), ETSWGTS(window=1, explore=1, gamma=1e12)):
        assert_kernel_matches_reference(policy, inst, T=T, n_seeds=3)


def test_defaults_and_registry():
    assert POLICIES["ET-SWGTS"] is ETSWGTS
    assert not ETSWGTS.uses_horizon and ETSWGTS.randomised
    assert ETSWGTS().explore_pulls == ETSWGTS().window
    assert ETSWGTS(window=9, explore=4).explore_pulls == 4


@pytest.mark.parametrize("kwargs, name", [
    (dict(window=0), "window"), (dict(window=2.5), "window"), (dict(window=True), "window"),
    (dict(explore=0), "explore"), (dict(explore=-3), "explore"),
    (dict(gamma=0.0), "gamma"), (dict(gamma=-1.0), "gamma"), (dict(gamma=math.inf), "gamma"),
])
def test_bad_parameters_raise_one_line_errors(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}=") as err:
        ETSWGTS(**kwargs)
    assert "\n" not in str(err.value)


def test_explores_round_robin_before_any_draw():
    inst = R.ltf_random(np.random.default_rng(3), K=4, T_ref=T)
    policy = ETSWGTS(window=20, explore=25)
    obs = R.draw_observations(inst, T, 0, 0)
    runs = [policy.reference(obs.X, T, stream_seed=s, trace=True) for s in (11, 12)]
    n_explore = 4 * 25
    for arms, trace in runs:
        assert np.array_equal(arms[:n_explore], np.arange(n_explore) % 4)
        assert np.all(np.isnan(trace[:n_explore]))       # no posterior draw while exploring
        assert not np.any(np.isnan(trace[n_explore:]))   # a draw for every arm afterwards
    # Only the sampling phase depends on the policy's stream.
    assert not np.array_equal(runs[0][0][n_explore:], runs[1][0][n_explore:])


def test_exploration_lets_a_late_bloomer_overtake():
    # With a tiny posterior spread the sampling phase is almost greedy on the window means.
    inst = late_bloomer()
    sharp = dict(window=100, gamma=1e6)
    kern, ref = kernel_and_reference_arms(ETSWGTS(explore=1, **sharp), inst, T)
    assert np.array_equal(kern, ref)
    assert np.all(ref[2:] == 0)        # one pull each: the late bloomer looks bad and is never tried again
    kern, ref = kernel_and_reference_arms(ETSWGTS(explore=100, **sharp), inst, T)
    assert np.array_equal(kern, ref)
    assert np.all(ref[200:] == 1)      # 100 pulls each: its window mean passes 0.5 and it wins


def test_draws_are_centred_on_the_window_mean_with_the_posterior_spread():
    inst = late_bloomer()
    obs = R.draw_observations(inst, T, 0, 0)
    window, gamma = 30, 4.0
    arms, trace = ETSWGTS(window=window, explore=40, gamma=gamma).reference(obs.X, T, 5, trace=True)
    pulls = np.zeros(2, dtype=int)
    z = []
    for t in range(T):
        if t >= 80:
            for i in range(2):
                h = min(pulls[i], window)
                mean = obs.X[i, pulls[i] - h + 1: pulls[i] + 1].mean()
                z.append((trace[t, i] - mean) * math.sqrt(gamma * h))
        pulls[arms[t]] += 1
    z = np.asarray(z)
    # Standardised by the window mean and 1/sqrt(gamma h), the draws are standard normal.
    assert abs(z.mean()) < 0.05 and abs(z.std() - 1.0) < 0.05


def test_pull_counts_at_every_checkpoint_match_the_arm_sequence():
    inst = R.ltf_random(np.random.default_rng(8), K=3, T_ref=T)
    obs = R.draw_observations(inst, T, 0, 0)
    checkpoints = np.array([1, 2, 3, 50, 1234, T - 1, T], dtype=np.int64)
    arms = np.empty(T, dtype=np.int64)
    out = ETSWGTS(window=10, explore=5).run_kernel(obs, T, checkpoints, arms, 9)
    for row, c in zip(out, checkpoints):
        assert row.tolist() == np.bincount(arms[:c], minlength=3).tolist()
