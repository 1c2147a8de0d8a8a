"""Ser4 (Allesiardo et al. 2017): kernel equals reference, parameter checks, elimination and resets."""
import math

import numpy as np
import pytest

import horizonbandits.rising as R
from horizonbandits.rising.policies import POLICIES
from horizonbandits.rising.policies.ser4 import Ser4
from horizonbandits.testing import assert_kernel_matches_reference, kernel_and_reference_arms

T = 3000


def constant_arms(levels, T_max=T, noise=0.0):
    means = np.repeat(np.asarray(levels, dtype=float)[:, None], T_max + 1, axis=1)
    return R.RisingInstance(means, noise=noise)


def first_eliminating_round(K, delta, gap, eps=0.0):
    """Smallest tau with gap + eps >= 2 sqrt(log(4 K tau^2 / delta) / (2 tau)), written out independently."""
    tau = 1
    while gap + eps < 2 * math.sqrt(math.log(4 * K * tau ** 2 / delta) / (2 * tau)):
        tau += 1
    return tau


def eliminated_somewhere(policy, inst, T, seed=0, noise=None):
    """True when the reference reports an eliminated arm (NaN estimate after the first round)."""
    obs = R.draw_observations(inst, T, seed, 0, noise)
    _, trace = policy.reference(obs.X, T, R.policy_stream_seed(seed, 0), trace=True)
    K = inst.K
    return bool(np.any(np.isnan(trace[K:]) & ~np.all(np.isnan(trace[K:]), axis=1, keepdims=True)))


POLICY_CASES = [
    Ser4(),
    Ser4(delta=0.3, eps=0.05, phi=0.05),
    Ser4(delta=0.5, eps=0.0, phi=0.002),
    Ser4(delta=0.9, eps=0.6, phi=0.0),
]


@pytest.mark.parametrize("policy", POLICY_CASES, ids=lambda p: repr(p))
@pytest.mark.parametrize("noise", [None, 0.2, "bernoulli"])
def test_kernel_matches_reference_on_random_ltf(policy, noise):
    for seed in range(3):
        inst = R.ltf_random(np.random.default_rng(100 + seed), K=2 + seed, T_ref=T)
        assert_kernel_matches_reference(policy, inst, T=T, n_seeds=2, seed=seed, noise=noise)


@pytest.mark.parametrize("noise", [0.1, "bernoulli"])
def test_kernel_matches_reference_through_eliminations_and_resets(noise):
    # Wide gaps so that arms are eliminated (checked) and resets bring them back, under noise.
    inst = constant_arms([0.9, 0.1, 0.5, 0.05], noise=noise)
    policy = Ser4(delta=0.5, eps=0.0, phi=0.005)
    assert eliminated_somewhere(policy, inst, T, noise=noise)
    assert_kernel_matches_reference(policy, inst, T=T, n_seeds=3, seed=4)


def test_kernel_matches_reference_when_identical_arms_tie():
    # eps close to 1 eliminates every arm but the leader even with equal means: the tie-break decides.
    inst = constant_arms([0.5, 0.5, 0.5])
    policy = Ser4(delta=0.9, eps=0.99, phi=0.01)
    assert eliminated_somewhere(policy, inst, T)
    assert_kernel_matches_reference(policy, inst, T=T, n_seeds=3)


def test_defaults_follow_metelli_and_read_the_horizon():
    assert POLICIES["Ser4"] is Ser4 and Ser4.uses_horizon and Ser4.randomised
    delta, eps, phi = Ser4().resolved(100_000, 5)
    assert delta == pytest.approx(1e-5)
    assert eps == pytest.approx(1 / 500_000)
    assert phi == pytest.approx((5 ** 3 * 100_000) ** -0.25)
    assert Ser4(delta=0.2, eps=0.1, phi=0.3).resolved(100_000, 5) == (0.2, 0.1, 0.3)


@pytest.mark.parametrize("kwargs, name", [
    (dict(delta=0.0), "delta"), (dict(delta=1.5), "delta"), (dict(delta="x"), "delta"),
    (dict(eps=-0.1), "eps"), (dict(eps=1.0), "eps"), (dict(eps=math.nan), "eps"),
    (dict(phi=-0.01), "phi"), (dict(phi=1.01), "phi"), (dict(phi=True), "phi"),
])
def test_bad_parameters_raise_one_line_errors(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}=") as err:
        Ser4(**kwargs)
    assert "\n" not in str(err.value)


def test_without_resets_an_eliminated_arm_never_returns():
    inst = constant_arms([1.0, 0.0, 0.0])
    policy = Ser4(delta=0.5, eps=0.0, phi=0.0)
    kern, ref = kernel_and_reference_arms(policy, inst, T)
    assert np.array_equal(kern, ref)
    tau = first_eliminating_round(3, 0.5, 1.0)
    # Both losers are pulled once per round until round tau, then never again.
    assert np.bincount(ref, minlength=3).tolist() == [T - 2 * tau, tau, tau]
    assert np.all(ref[3 * tau:] == 0)


def test_resets_bring_eliminated_arms_back():
    inst = constant_arms([1.0, 0.0, 0.0], T_max=6000)
    kern, ref = kernel_and_reference_arms(Ser4(delta=0.5, eps=0.0, phi=0.01), inst, 6000)
    assert np.array_equal(kern, ref)
    # With three active arms a randomised round-robin never pulls arm 0 three times in a row, so a
    # run of arm-0 pulls longer than 2 means the losers were eliminated; pulls of a loser after
    # such a run mean a reset restored them.
    is_best = np.concatenate([[False], ref == 0, [False]]).astype(int)
    starts = np.flatnonzero(np.diff(is_best) == 1)
    ends = np.flatnonzero(np.diff(is_best) == -1)
    long_runs = [(s, e) for s, e in zip(starts, ends) if e - s > 2]
    assert len(long_runs) >= 2
    assert any(e < len(ref) for _, e in long_runs)  # a loser is pulled again after an elimination


def test_a_reset_every_round_forgets_everything():
    # phi = 1 resets after every round: tau stays 1, nothing is eliminated, and every block of K pulls
    # is a fresh random permutation of all arms.
    inst = constant_arms([1.0, 0.0, 0.2, 0.4])
    kern, ref = kernel_and_reference_arms(Ser4(delta=0.5, eps=0.0, phi=1.0), inst, 400)
    assert np.array_equal(kern, ref)
    blocks = ref.reshape(-1, 4)
    assert all(sorted(b) == [0, 1, 2, 3] for b in blocks)
    assert len({tuple(b) for b in blocks}) > 5  # the order is reshuffled each round


def test_round_robin_order_comes_from_the_policy_stream():
    inst = constant_arms([0.3, 0.2, 0.1, 0.0])
    obs = R.draw_observations(inst, 200, 0, 0)
    a = Ser4().reference(obs.X, 200, stream_seed=1)
    b = Ser4().reference(obs.X, 200, stream_seed=2)
    assert not np.array_equal(a, b)
    assert sorted(a[:4]) == [0, 1, 2, 3] and sorted(b[:4]) == [0, 1, 2, 3]


def test_pull_counts_at_every_checkpoint_match_the_arm_sequence():
    inst = constant_arms([0.9, 0.1, 0.5], noise=0.1)
    obs = R.draw_observations(inst, T, 0, 0)
    checkpoints = np.array([1, 2, 3, 50, 1234, T - 1, T], dtype=np.int64)
    arms = np.empty(T, dtype=np.int64)
    out = Ser4(delta=0.5, eps=0.0, phi=0.01).run_kernel(obs, T, checkpoints, arms, 9)
    for row, c in zip(out, checkpoints):
        assert row.tolist() == np.bincount(arms[:c], minlength=3).tolist()
