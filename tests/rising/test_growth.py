"""Cumulative increment Upsilon(M, q) and the Theorem 5.5 bound."""
import math

import numpy as np
import pytest

from horizonbandits.rising import CureUCB, ltf_saturating, simulate
from horizonbandits.rising.generators import concave_random
from horizonbandits.rising.growth import (best_bound, bound_argument, cumulative_increment,
                                          cumulative_increment_curve, max_increments, theorem55_bound)


def direct_upsilon(means, M, q):
    """sum_{n=1}^{M} (max_i (mu_i(n+1) - mu_i(n)))^q by a plain loop, 0^q := 0."""
    total = 0.0
    for n in range(1, M + 1):
        g = max(means[i][n + 1] - means[i][n] for i in range(len(means)))
        if g > 0:
            total += g ** q
    return total


@pytest.fixture(scope="module")
def ltf3():
    # Slopes 1/40, 1/100, 1/10; saturation at pulls 40, 100, 10.
    return ltf_saturating([1.0, 1.0, 1.0], [40, 100, 10], T_max=300, noise=0.0)


@pytest.mark.parametrize("q", [0.0, 0.3, 0.5, 1.0])
def test_matches_a_direct_loop(ltf3, q):
    for M in (0, 1, 9, 10, 39, 57, 150, 299):
        assert cumulative_increment(ltf3, M, q) == pytest.approx(direct_upsilon(ltf3.means.tolist(), M, q), rel=1e-12)


def test_closed_forms_on_ltf(ltf3):
    # The steepest still-rising arm sets gamma_max: 1/10 for n < 10, 1/40 for n < 40, 1/100 for n < 100, 0 after.
    expected_q1 = 9 * 0.1 + 30 * (1 / 40) + 60 * (1 / 100)
    assert cumulative_increment(ltf3, 299, 1.0) == pytest.approx(expected_q1, rel=1e-12)
    assert cumulative_increment(ltf3, 299, 0.0) == 99  # q = 0 counts the pulls with growth
    assert cumulative_increment(ltf3, 20, 0.0) == 20


def test_q1_telescopes_for_a_single_shape():
    inst = concave_random(np.random.default_rng(0), K=3, H=5_000)
    # Two identical copies of one arm: gamma_max = gamma, and Upsilon(M, 1) = mu(M+1) - mu(1).
    from horizonbandits.rising import RisingInstance
    twin = RisingInstance(np.vstack([inst.means[0], inst.means[0]]), noise=0.0)
    curve = cumulative_increment_curve(twin, 1.0)
    M = np.arange(1, 4_000)
    assert np.allclose(curve[M], twin.means[0, M + 1] - twin.means[0, 1], rtol=1e-9, atol=1e-12)
    assert max_increments(twin).min() >= 0


def test_bound_formula_and_eps_half(ltf3):
    T, eps, q = 240, 0.25, 0.5
    M = math.ceil((1 - 2 * eps) * T / 3)
    assert bound_argument(T, 3, eps) == M == 40
    expected = 3 * (1 + 2 ** -q) * T ** q / (1 - 2 * eps) * direct_upsilon(ltf3.means.tolist(), M, q)
    assert theorem55_bound(ltf3, T, eps, q) == pytest.approx(expected, rel=1e-12)
    assert theorem55_bound(ltf3, T, 0.5, q) == math.inf
    assert best_bound(ltf3, T, 0.5)[0] == math.inf


def test_best_bound_is_the_minimum_over_q(ltf3):
    value, q_best = best_bound(ltf3, 300, 0.1)
    grid = [theorem55_bound(ltf3, 300, 0.1, q) for q in np.linspace(0, 1, 101)]
    assert value == pytest.approx(min(grid), rel=1e-12)
    assert theorem55_bound(ltf3, 300, 0.1, q_best) == pytest.approx(value, rel=1e-12)


def test_bound_holds_for_noise_free_cure_ucb_on_random_concave_instances():
    rng = np.random.default_rng(11)
    for _ in range(3):
        inst = concave_random(rng, K=4, H=20_000, noise=0.0)
        for eps in (0.0, 0.25):
            pol = CureUCB(eps=eps, sigma=0.0, init_pulls=1)
            for T in (2_000, 20_000):
                regret = simulate(inst, pol, T).regret[0]
                assert regret <= best_bound(inst, T, eps)[0]


@pytest.mark.parametrize("call, match", [
    (lambda i: cumulative_increment(i, 300, 0.5), "M=300"),
    (lambda i: cumulative_increment(i, 10, 1.5), "q=1.5"),
    (lambda i: theorem55_bound(i, 10, 0.6, 0.5), "eps=0.6"),
    (lambda i: theorem55_bound(i, 400, 0.1, 0.5), "T=400"),
    (lambda i: best_bound(i, 100, 0.1, qs=[2.0]), "qs="),
])
def test_bad_arguments(ltf3, call, match):
    with pytest.raises(ValueError, match=match):
        call(ltf3)
