"""CURE-UCB's and R-ed-UCB's indices pinned to the formulas printed in section 4.1 of the CURE-UCB paper.

The other policy tests compare kernel and reference with each other, so a constant changed in both
(say the bonus factor 3/(2h^3) turned into 1/(2h^3)) would pass them. Here each index is recomputed
term by term from the printed formula, straight from the reward table and the run's own pull history,
with sigma > 0, and compared with the index the reference traces at every round and arm. The
kernels are tied to the references pull for pull by test_core_policies.py.
"""
import math

import numpy as np
import pytest

import horizonbandits.rising as R
from horizonbandits.rising.generators import concave_random
from horizonbandits.rising.policies import CureUCB, RedUCB

T = 400


def traces():
    """Recorded runs on a rising LTF instance and a concave one, with Gaussian noise."""
    ltf = R.ltf([0.004, 0.002, 0.001], [0.6, 0.7, 0.5], T_max=T, noise=0.05)
    concave = concave_random(np.random.default_rng(7), K=4, H=2_000, noise=0.05)
    return [(name, R.draw_observations(inst, T, 11, 0, 0.05).X) for name, inst in (("ltf", ltf), ("concave", concave))]


def pulls_before(arms, t, i):
    """N_{i,t-1}: pulls of arm i in rounds 1..t-1."""
    return int(np.sum(arms[: t - 1] == i))


def window(eps, N):
    return max(math.floor(eps * N), 1)


def cure_index(X, i, N, t, T, eps, sigma):
    """B_i(t) of section 4.1, written as printed: (i) recent average + (ii) expected future cumulative gain
    + (iii) exploration bonus, with h_i = max(floor(eps N_{i,t-1}), 1)."""
    h = window(eps, N)
    ls = np.arange(N - h + 1, N + 1)
    recent_average = np.sum(X[i, ls]) / h
    future_gain = (T - t + 2) / 2 * np.sum((X[i, ls] - X[i, ls - h]) / h) / h
    bonus = sigma * math.sqrt(2 * (3 * (T - t + 2) ** 2 + 8 * h ** 2) * math.log(t ** 3) / (4 * h ** 3))
    return recent_average + future_gain + bonus


def red_index(X, i, N, t, eps, sigma, delta_exponent):
    """B^red_i(t) of the remark in section 4.1, with delta_t = t^(-delta_exponent) (Metelli et al. 2022: 4)."""
    h = window(eps, N)
    ls = np.arange(N - h + 1, N + 1)
    recent_average = np.sum(X[i, ls]) / h
    future_gain = np.sum((t - ls) * (X[i, ls] - X[i, ls - h]) / h) / h
    log_inv_delta = math.log(1 / t ** -delta_exponent)
    bonus = sigma * (t - N + h - 1) * math.sqrt(10 * log_inv_delta / h ** 3)
    return recent_average + future_gain + bonus


def check_against_trace(policy, X, formula):
    arms, trace = policy.reference(X, T, trace=True)
    K = X.shape[0]
    checked = 0
    for t in range(1, T + 1):
        if np.all(np.isnan(trace[t - 1])):
            assert t <= K * policy.init_pulls  # only the round-robin start has no index
            continue
        expected = [formula(i, pulls_before(arms, t, i), t) for i in range(K)]
        np.testing.assert_allclose(trace[t - 1], expected, rtol=1e-10, atol=1e-12, err_msg=f"round {t}")
        assert arms[t - 1] == int(np.argmax(expected))
        checked += K
    assert checked >= (T - K * policy.init_pulls) * K
    return arms


@pytest.mark.parametrize("eps", [0.5, 0.25])
@pytest.mark.parametrize("sigma", [0.05, 0.3])
def test_cure_ucb_index_is_the_printed_formula(eps, sigma):
    policy = CureUCB(eps=eps, sigma=sigma)
    for name, X in traces():
        arms = check_against_trace(policy, X, lambda i, N, t, X=X: cure_index(X, i, N, t, T, eps, sigma))
        assert len(set(arms.tolist())) > 1, name  # the runs explore, so several arms' indices are exercised


@pytest.mark.parametrize("eps", [0.5, 0.25])
@pytest.mark.parametrize("sigma", [0.05, 0.3])
def test_red_ucb_index_is_the_printed_formula(eps, sigma):
    policy = RedUCB(eps=eps, sigma=sigma)
    for name, X in traces():
        arms = check_against_trace(policy, X, lambda i, N, t, X=X: red_index(X, i, N, t, eps, sigma, 4.0))
        assert len(set(arms.tolist())) > 1, name


def test_red_ucb_index_follows_its_confidence_exponent():
    policy = RedUCB(eps=0.5, sigma=0.1, delta_exponent=2.0)
    _, X = traces()[0]
    check_against_trace(policy, X, lambda i, N, t: red_index(X, i, N, t, 0.5, 0.1, 2.0))


def test_each_term_matters():
    # The bonus and the growth term are both far from zero on these traces, so a wrong constant in
    # either one moves the index by much more than the tolerance above.
    _, X = traces()[1]
    N, t = 40, 200
    full = cure_index(X, 0, N, t, T, 0.5, 0.3)
    no_bonus = cure_index(X, 0, N, t, T, 0.5, 0.0)
    assert full - no_bonus > 1e-3
    h = window(0.5, N)
    assert abs(cure_index(X, 0, N, t, T, 0.5, 0.0) - np.mean(X[0, N - h + 1:N + 1])) > 1e-6
