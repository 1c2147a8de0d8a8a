"""SW-KL-UCB (KL-UCB of Garivier and Cappe 2011 over a sliding window): kernel equals reference, the
KL upper bound's accuracy, the index solving N kl(p, q) = log s + c log log s with the arm's own
window count, parameter checks, horizon-agnostic runs, and the window forgetting."""
import math

import numpy as np
import pytest

import horizonbandits.rising as R
from horizonbandits.rising.policies import POLICIES
from horizonbandits.rising.policies.sw_kl_ucb import (SCREEN_GAP, SWKLUCB, exploration_level,
                                                      kl_root_upper, kl_root_versus, kl_upper_bound,
                                                      nb_kl_root_upper, nb_kl_root_versus, nb_kl_upper_bound)
from horizonbandits.testing import assert_kernel_matches_reference
from horizonbandits.testing import kernel_arms as run_arms

T = 1200

POLICY_CASES = [
    SWKLUCB(),                        # tau = 252, c = 3
    SWKLUCB(tau=30, c=0.0),           # short window, KL-UCB's practical c = 0
    SWKLUCB(tau=1),                   # a window of one round
    SWKLUCB(tau=5000, c=1.0),         # nothing ever leaves: plain KL-UCB
    SWKLUCB(tau=60, kl_steps=1),      # a truncated solver still agrees
]


def kl(p, q):
    """Bernoulli divergence, with log1p so that it stays accurate for q close to p."""
    out = 0.0
    if p > 0:
        out += p * (math.log1p((p - q) / q) if q < 2 * p else math.log(p / q))
    if p < 1:
        out += (1 - p) * math.log1p((q - p) / (1 - q))
    return out


def bisection_bound(p, delta, steps=200):
    lo, hi = p, 1.0
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if mid < 1.0 and kl(p, mid) <= delta:
            lo = mid
        else:
            hi = mid
    return lo


@pytest.mark.parametrize("policy", POLICY_CASES, ids=lambda p: repr(p))
@pytest.mark.parametrize("noise", [0.1, "bernoulli"])
def test_kernel_matches_reference_on_random_ltf(policy, noise):
    for seed in range(2):
        inst = R.ltf_random(np.random.default_rng(400 + seed), K=2 + 3 * seed, T_ref=T)
        assert_kernel_matches_reference(policy, inst, T=T, n_seeds=2, seed=seed, noise=noise)


def test_kl_upper_bound_matches_bisection_and_its_compiled_twin():
    ps = np.concatenate([[0.0, 1e-9, 1e-3, 0.5, 0.999, 1 - 1e-9, 1.0], np.linspace(0.01, 0.99, 23)])
    deltas = np.concatenate([[0.0, 1e-12], np.logspace(-6, 2.5, 25)])
    for p in ps:
        for delta in deltas:
            u = kl_upper_bound(float(p), float(delta), 16)
            assert u == nb_kl_upper_bound(float(p), float(delta), 16)  # same double in kernels
            assert p <= u <= 1.0
            if delta == 0.0 or p == 1.0:
                assert u == p  # the constraint holds only at q = p
            else:
                assert u == pytest.approx(bisection_bound(p, delta), abs=1e-13)
    rng = np.random.default_rng(0)
    for p, delta, steps in zip(rng.random(200), rng.exponential(0.5, 200), rng.integers(1, 6, 200)):
        assert kl_upper_bound(p, delta, int(steps)) == nb_kl_upper_bound(p, delta, int(steps))


def test_kl_upper_bound_is_accurate_across_scales():
    """Means near 0 and 1 and thresholds from 1e-12 to 400 (where the solver switches between log1p
    and log, skips or uses its second starting bound, and may fall back to bisection)."""
    rng = np.random.default_rng(7)
    n = 1500
    ps = np.concatenate([rng.random(n), rng.random(n) ** 4, 1 - rng.random(n) ** 4])
    deltas = np.exp(rng.uniform(math.log(1e-12), math.log(400.0), ps.size))
    worst = 0.0
    for p, delta in zip(ps, deltas):
        u = kl_upper_bound(float(p), float(delta), 16)
        assert u == nb_kl_upper_bound(float(p), float(delta), 16)
        worst = max(worst, abs(u - bisection_bound(p, delta)))
    assert worst < 1e-13


def screening_cases(n=3000):
    """(p, delta, B): means near 0, 1 and in between, thresholds 1e-9 .. 50, B anywhere in [0, 1.1]
    and, half of the time, within 1e-6 of the exact bound (where a screened decision is hardest)."""
    rng = np.random.default_rng(3)
    ps = np.concatenate([rng.random(n), rng.random(n) ** 4, 1 - rng.random(n) ** 4, [0.0, 1e-12, 0.5]])
    deltas = np.exp(rng.uniform(math.log(1e-9), math.log(50.0), ps.size))
    cases = []
    for k, (p, delta) in enumerate(zip(ps, deltas)):
        exact = kl_upper_bound(float(p), float(delta), 16)
        B = exact + rng.uniform(-1e-6, 1e-6) if k % 2 else rng.uniform(0.0, 1.1)
        cases.append((float(p), float(delta), float(B), exact))
    return cases


def test_screening_upper_bound_is_above_the_exact_bound():
    gaps = []
    for p, delta, _, exact in screening_cases():
        hi = kl_root_upper(p, delta)
        assert hi == nb_kl_root_upper(p, delta)
        assert hi >= exact + 0.5 * SCREEN_GAP
        gaps.append(hi - exact)
    assert np.median(gaps) < 0.05  # a bound, but a useful one


def test_screening_comparison_agrees_with_the_exact_bound():
    """+1 only when the exact bound is above B, -1 only when below, and the returned bound is above
    the exact bound and, after a loss, below B; most comparisons are decided."""
    decided = 0
    cases = screening_cases()
    for p, delta, B, exact in cases:
        verdict, bound = kl_root_versus(p, delta, B)
        assert (verdict, bound) == nb_kl_root_versus(p, delta, B)
        assert verdict in (-1, 0, 1)
        assert bound >= exact + 0.5 * SCREEN_GAP - 1e-15
        if verdict > 0:
            assert exact > B
        elif verdict < 0:
            assert exact < B and bound < B
        decided += verdict != 0
    assert decided > 0.6 * len(cases)


@pytest.mark.parametrize("K, noise", [(5, 0.01), (3, "bernoulli"), (8, 0.1)])
def test_screened_kernel_matches_reference_on_long_runs(K, noise):
    """Past the window's growth, where the kernel decides most rounds from bounds (tau = 252)."""
    inst = R.ltf_random(np.random.default_rng(K), K=K, T_ref=100_000)
    assert_kernel_matches_reference(SWKLUCB(), inst, T=4000, n_seeds=1, seed=K, noise=noise)


def test_screened_kernel_breaks_exact_ties_like_the_reference():
    # Identical deterministic arms have identical windows, so identical indices: the lowest arm wins.
    inst = R.ltf([0.001, 0.001, 0.002, 0.001], [0.5, 0.5, 0.4, 0.5], T_max=1500, noise=0.0)
    for policy in (SWKLUCB(), SWKLUCB(tau=20), SWKLUCB(tau=7, c=0.0)):
        assert_kernel_matches_reference(policy, inst, T=1500, n_seeds=1)
    rng = np.random.default_rng(5)
    means = np.minimum(np.cumsum(rng.integers(0, 2, size=(4, 1501)) / 64, axis=1) / 16, 1.0)
    assert_kernel_matches_reference(SWKLUCB(tau=50), R.RisingInstance(means, noise=0.0), T=1500, n_seeds=1)


def test_exploration_level_is_log_s_plus_c_loglog_s_never_negative():
    assert exploration_level(1, 3.0) == 0.0
    assert exploration_level(2, 3.0) == math.log(2)  # log log 2 < 0 is dropped
    for s in (3, 10, 252, 10 ** 6):
        assert exploration_level(s, 3.0) == pytest.approx(math.log(s) + 3 * math.log(math.log(s)))
        assert exploration_level(s, 0.0) == math.log(s)


def test_reference_index_solves_the_kl_equation_with_the_arms_window_count():
    """Each traced index u satisfies N_i kl(p_i, u) = log s + c log log s, with N_i and p_i (mean of
    clipped rewards) recomputed afresh from the last tau rounds and s = min(t - 1, tau)."""
    inst = R.ltf_random(np.random.default_rng(11), K=3, T_ref=500)
    obs = R.draw_observations(inst, 500, seed=2, noise=0.3)
    tau, c = 40, 3.0
    arms, trace = SWKLUCB(tau=tau, c=c).reference(obs.X, 500, trace=True)
    pulls = np.zeros(3, dtype=int)
    rewards = np.empty(500)
    for r, a in enumerate(arms):
        pulls[a] += 1
        rewards[r] = min(max(obs.X[a, pulls[a]], 0.0), 1.0)
    checked = 0
    for t in range(4, 501):
        lo = max(1, t - tau)
        in_window = arms[lo - 1:t - 1]
        level = exploration_level(min(t - 1, tau), c)
        for i in range(3):
            mask = in_window == i
            u = trace[t - 1, i]
            if not mask.any():
                assert u == math.inf
                continue
            n, p = mask.sum(), rewards[lo - 1:t - 1][mask].mean()
            assert u >= p - 1e-12
            if u < 1.0:
                assert n * kl(p, u) == pytest.approx(level, rel=1e-8)
                checked += 1
        assert arms[t - 1] == int(np.argmax(trace[t - 1]))
    assert checked > 500


def test_registry_defaults_and_horizon_agnostic_runs():
    assert POLICIES["SW-KL-UCB"] is SWKLUCB
    assert not SWKLUCB.uses_horizon and not SWKLUCB.randomised
    p = SWKLUCB()
    assert (p.c, p.tau) == (3.0, 252)
    assert p.tau == math.ceil(0.001 ** (-4 / 5))  # Metelli et al. 2022's window
    # Horizon-agnostic: the run to T is the first T rounds of the run to any longer horizon.
    inst = R.ltf_random(np.random.default_rng(5), K=4, T_ref=2000)
    obs = R.draw_observations(inst, 2000, seed=3)
    np.testing.assert_array_equal(run_arms(p, obs.X, 700), run_arms(p, obs.X, 2000)[:700])


@pytest.mark.parametrize("kwargs, name", [
    (dict(c=-1.0), "c"), (dict(c=math.inf), "c"),
    (dict(tau=0), "tau"), (dict(tau=None), "tau"), (dict(tau=3.0), "tau"),
    (dict(kl_steps=0), "kl_steps"),
])
def test_bad_parameters_raise_one_line_errors(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}=") as err:
        SWKLUCB(**kwargs)
    assert "\n" not in str(err.value)


def test_window_forgets_and_the_empty_window_arm_comes_back_every_tau_plus_one_rounds():
    """Arm 0 always pays 1 (index exactly 1), arm 1 pays ``first`` then 0 (index < 1). Arm 1 is pulled
    only when its last pull has left the window: rounds 2, 2 + (tau + 1), 2 + 2 (tau + 1), ..."""
    tau, horizon = 10, 70
    policy = SWKLUCB(tau=tau)
    traces = []
    for first in (0.0, 0.25):
        X = np.zeros((2, horizon + 1))
        X[0, :] = 1.0
        X[1, 1] = first
        arms, trace = policy.reference(X, horizon, trace=True)
        expected = np.zeros(horizon, dtype=np.int64)
        expected[1::tau + 1] = 1
        np.testing.assert_array_equal(arms, expected)
        np.testing.assert_array_equal(run_arms(policy, X, horizon), expected)
        traces.append(trace)
        # Without a window arm 1 is never pulled again.
        assert (run_arms(SWKLUCB(tau=10 * horizon), X, horizon)[2:] == 0).all()
    # Arm 1's first reward moves its index only while it is in the window (rounds 3 .. tau + 2).
    assert (traces[0][2:tau + 2, 1] < traces[1][2:tau + 2, 1]).all()
    np.testing.assert_array_equal(traces[0][tau + 2:], traces[1][tau + 2:])
