"""Rexp3 (Besbes, Gur and Zeevi 2014): kernel equals reference on the same stream, Theorem 2's tuning,
probabilities normalised by all K weights, restarts at every batch boundary, overflow-safe weights,
horizon-agnostic runs, parameter checks."""
import math

import numpy as np
import pytest

import horizonbandits.rising as R
from horizonbandits.rising.policies import POLICIES
from horizonbandits.rising.policies.rexp3 import Rexp3
from horizonbandits.testing import assert_kernel_matches_reference
from horizonbandits.testing import kernel_arms as run_arms

T = 2000

POLICY_CASES = [
    Rexp3(),                           # V_T = 0.001 T: Delta = 201 for K = 5
    Rexp3(batch=37),                   # many restarts
    Rexp3(batch=1, gamma=0.3),         # restart every round
    Rexp3(variation_rate=0.05),        # short batches from the formula
    Rexp3(batch=10 * T, gamma=0.9),    # a single batch: plain Exp3
]


@pytest.mark.parametrize("policy", POLICY_CASES, ids=lambda p: repr(p))
@pytest.mark.parametrize("noise", [0.2, "bernoulli"])
def test_kernel_matches_reference_on_random_ltf(policy, noise):
    for seed in range(3):
        inst = R.ltf_random(np.random.default_rng(600 + seed), K=2 + 2 * seed, T_ref=T)
        assert_kernel_matches_reference(policy, inst, T=T, n_seeds=2, seed=seed, noise=noise)


def test_registry_and_theorem_2_tuning_with_v_t_proportional_to_t():
    assert POLICIES["Rexp3"] is Rexp3
    assert not Rexp3.uses_horizon and Rexp3.randomised
    p = Rexp3()
    for K in (2, 5, 15):
        for horizon in (10 ** 4, 10 ** 5, 10 ** 6):
            V = 0.001 * horizon
            delta = math.ceil((K * math.log(K)) ** (1 / 3) * (horizon / V) ** (2 / 3))
            assert p.batch_size(K) == delta  # Delta_T does not depend on T when V_T = 0.001 T
            assert p.exploration(K) == pytest.approx(min(1.0, math.sqrt(K * math.log(K) / ((math.e - 1) * delta))))
    assert Rexp3(batch=9, gamma=0.25).batch_size(4) == 9 and Rexp3(batch=9, gamma=0.25).exploration(4) == 0.25


@pytest.mark.parametrize("kwargs, name", [
    (dict(variation_rate=0.0), "variation_rate"), (dict(variation_rate=1.5), "variation_rate"),
    (dict(batch=0), "batch"), (dict(batch=2.0), "batch"),
    (dict(gamma=0.0), "gamma"), (dict(gamma=1.2), "gamma"), (dict(gamma=math.nan), "gamma"),
])
def test_bad_parameters_raise_one_line_errors(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}=") as err:
        Rexp3(**kwargs)
    assert "\n" not in str(err.value)


def test_probabilities_are_normalised_by_all_weights_and_keep_gamma_over_k():
    inst = R.ltf_random(np.random.default_rng(8), K=4, T_ref=T)
    X = R.draw_observations(inst, T, seed=1).X
    policy = Rexp3(batch=500, gamma=0.2)
    _, probs = policy.reference(X, T, stream_seed=3, trace=True)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert (probs >= 0.2 / 4 - 1e-15).all()
    assert probs.max() > 0.5  # the weights did learn something


def test_restarts_at_every_batch_boundary():
    """At each batch's first round p is uniform again (bit for bit as at round 1); at its second
    round p reflects only that first round's arm and reward, whatever the previous batches did."""
    K, batch, gamma = 3, 50, 0.3
    inst = R.ltf_random(np.random.default_rng(9), K=K, T_ref=T)
    X = R.draw_observations(inst, T, seed=2, noise=0.1).X
    policy = Rexp3(batch=batch, gamma=gamma)
    arms, probs = policy.reference(X, T, stream_seed=4, trace=True)
    np.testing.assert_array_equal(arms, run_arms(policy, X, T, 4))
    pulls = np.zeros(K, dtype=int)
    rewards = np.empty(T)
    for r, a in enumerate(arms):
        pulls[a] += 1
        rewards[r] = min(max(X[a, pulls[a]], 0.0), 1.0)
    starts = np.arange(0, T, batch)  # 0-based first rounds of the batches
    for s in starts:
        np.testing.assert_array_equal(probs[s], probs[0])
        a, x = arms[s], rewards[s]
        w = np.ones(K)
        w[a] = math.exp(gamma * (x / probs[s, a]) / K)
        np.testing.assert_allclose(probs[s + 1], (1 - gamma) * w / w.sum() + gamma / K, rtol=1e-13)
    assert np.abs(probs[starts[1:] - 1] - probs[0]).max() > 0.05  # the ends of batches are not uniform


def test_weights_never_overflow_in_a_long_batch():
    """One arm always pays 1: without rescaling its weight would overflow (exp(700) and beyond)
    within this single batch. Probabilities stay finite and normalised, kernel equals reference."""
    horizon = 4000
    X = np.zeros((2, horizon + 1))
    X[0] = 1.0
    policy = Rexp3(batch=horizon, gamma=0.5)
    arms, probs = policy.reference(X, horizon, stream_seed=1, trace=True)
    assert np.isfinite(probs).all()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert probs[-1, 0] == pytest.approx(1 - 0.5 / 2)
    np.testing.assert_array_equal(arms, run_arms(policy, X, horizon, 1))


def test_horizon_agnostic_runs_are_prefixes():
    inst = R.ltf_random(np.random.default_rng(10), K=5, T_ref=3000)
    X = R.draw_observations(inst, 3000, seed=4).X
    p = Rexp3()
    np.testing.assert_array_equal(run_arms(p, X, 1111, 7), run_arms(p, X, 3000, 7)[:1111])
