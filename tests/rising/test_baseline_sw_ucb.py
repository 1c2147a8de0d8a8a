"""SW-UCB (Garivier and Moulines 2011): kernel equals reference, parameter checks, the index formula,
and the window forgetting a sample once it is older than tau rounds."""
import math

import numpy as np
import pytest

import horizonbandits.rising as R
from horizonbandits.rising.policies import POLICIES
from horizonbandits.rising.policies.sw_ucb import SWUCB
from horizonbandits.testing import assert_kernel_matches_reference
from horizonbandits.testing import kernel_arms as run_arms

T = 1500

POLICY_CASES = [
    SWUCB(),                       # tau = floor(4 sqrt(n log n)) at n = 100,000: 4,291 > T
    SWUCB(window_rule="horizon"),  # the same rule at n = T: 419 at T = 1500
    SWUCB(tau=40, xi=2.0),         # samples leave the window all the time
    SWUCB(tau=1, B=0.5),           # a window of one round
    SWUCB(tau=3, xi=0.1, B=3.0),   # window shorter than K for K >= 3
    SWUCB(tau=10 * T),             # nothing ever leaves: plain UCB with log t
]


@pytest.mark.parametrize("policy", POLICY_CASES, ids=lambda p: repr(p))
@pytest.mark.parametrize("noise", [0.1, "bernoulli"])
def test_kernel_matches_reference_on_random_ltf(policy, noise):
    for seed in range(3):
        inst = R.ltf_random(np.random.default_rng(300 + seed), K=2 + 2 * seed, T_ref=T)
        assert_kernel_matches_reference(policy, inst, T=T, n_seeds=2, seed=seed, noise=noise)


def test_registry_defaults_and_horizon_use():
    assert POLICIES["SW-UCB"] is SWUCB
    assert not SWUCB.randomised
    p = SWUCB()
    assert (p.xi, p.tau, p.B, p.window_rule, p.reference_horizon) == (0.6, None, 1.0, "fixed", 100_000)
    # the default window has a fixed size (the CURE-UCB paper's reading): it never reads T
    assert not p.uses_horizon
    assert {p.window(horizon) for horizon in (2, 10, 1000, 100_000, 10 ** 7)} == {4291}
    assert SWUCB(reference_horizon=10_000).window(50) == 1213
    h = SWUCB(window_rule="horizon")
    assert h.uses_horizon
    for horizon in (2, 10, 1000, 10_000, 30_000, 100_000):
        assert h.window(horizon) == max(math.floor(4 * math.sqrt(horizon * math.log(horizon))), 1)
    assert (h.window(10_000), h.window(30_000)) == (1213, 2224)
    assert h.window(1) == 1
    # an explicit window never reads T, under either rule
    for rule in ("fixed", "horizon"):
        q = SWUCB(tau=77, window_rule=rule)
        assert q.window(10) == q.window(10 ** 6) == 77 and not q.uses_horizon


@pytest.mark.parametrize("kwargs, name", [
    (dict(xi=0.0), "xi"), (dict(xi=-1.0), "xi"), (dict(xi=math.nan), "xi"),
    (dict(tau=0), "tau"), (dict(tau=2.5), "tau"), (dict(tau=True), "tau"),
    (dict(B=0.0), "B"), (dict(B="1"), "B"),
    (dict(window_rule="T"), "window_rule"), (dict(window_rule=None), "window_rule"),
    (dict(reference_horizon=1), "reference_horizon"), (dict(reference_horizon=1e5), "reference_horizon"),
])
def test_bad_parameters_raise_one_line_errors(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}=") as err:
        SWUCB(**kwargs)
    assert "\n" not in str(err.value)


def test_reference_index_is_the_window_formula():
    """Every traced index equals Xbar + B sqrt(xi log(min(t, tau)) / N) computed afresh from the
    rewards of the last tau rounds (inf for an arm absent from the window)."""
    inst = R.ltf_random(np.random.default_rng(7), K=3, T_ref=600)
    obs = R.draw_observations(inst, 600, seed=1, noise=0.3)
    policy = SWUCB(tau=25, xi=0.8, B=2.0)
    arms, trace = policy.reference(obs.X, 600, trace=True)
    pulls = np.zeros(3, dtype=int)
    rewards = np.empty(600)
    for r, a in enumerate(arms):  # reward of each round
        pulls[a] += 1
        rewards[r] = obs.X[a, pulls[a]]
    assert np.isnan(trace[:3]).all()
    for t in range(4, 601):
        lo = max(1, t - 25)
        in_window = arms[lo - 1:t - 1]
        for i in range(3):
            mask = in_window == i
            if not mask.any():
                assert trace[t - 1, i] == math.inf
                continue
            n = mask.sum()
            expected = rewards[lo - 1:t - 1][mask].mean() + 2.0 * math.sqrt(0.8 * math.log(min(t, 25)) / n)
            assert trace[t - 1, i] == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert arms[t - 1] == int(np.argmax(trace[t - 1]))


def forgetting_table(outlier, T_max=80):
    """Arm 0 always pays 1; arm 1 pays ``outlier`` on its first pull and 0.5 afterwards (exact in binary)."""
    X = np.full((2, T_max + 1), 0.5)
    X[0, 1:] = 1.0
    X[1, 1] = outlier
    return X


def test_window_forgets_a_sample_older_than_tau():
    tau, horizon = 10, 60
    policy = SWUCB(tau=tau)
    X1, X2 = forgetting_table(-1000.0), forgetting_table(-2000.0)
    arms1, trace1 = policy.reference(X1, horizon, trace=True)
    arms2, trace2 = policy.reference(X2, horizon, trace=True)
    # Arm 1's outlier (round 2) keeps it out until round 2 leaves the window; at round 2 + tau + 1
    # its window is empty, so it is pulled (the count leaves with the arm pulled then, not now).
    assert arms1[:2].tolist() == [0, 1]
    assert (arms1[2:tau + 2] == 0).all()
    assert arms1[tau + 2] == 1 and trace1[tau + 2, 1] == math.inf
    np.testing.assert_array_equal(arms1, arms2)
    np.testing.assert_array_equal(run_arms(policy, X1, horizon), arms1)
    # While the outlier is in the window it moves arm 1's index; once it is older than tau rounds it
    # no longer does (all sums here are exact in binary, so the traces are equal bit for bit).
    np.testing.assert_allclose(trace1[2:tau + 2, 1] - trace2[2:tau + 2, 1], 1000.0, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(trace1[tau + 2:], trace2[tau + 2:])
    # Without a window (tau >= T) the outlier is never forgotten and arm 1 never comes back.
    assert (run_arms(SWUCB(tau=10 * horizon), X1, horizon)[2:] == 0).all()
