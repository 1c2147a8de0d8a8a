"""The policy stream (horizonbandits.rng): compiled samplers and their PyStream twins agree bit for bit,
and each sampler has the law it claims (moments within Monte Carlo error, goodness of fit on the
ziggurat's own layers, the rare tail and wedge paths exercised)."""
import math

import numpy as np
import pytest
from numba import njit

from horizonbandits import rng
from horizonbandits.rng import (PyStream, gamma_constants, nb_beta, nb_beta_int_step, nb_exponential_step,
                                nb_gamma, nb_gamma_constants, nb_gamma_int_step, nb_gamma_step, nb_normal,
                                nb_normal_step, nb_uniform, nb_uniform_step, new_state)

N_TWIN = 10_000

UNIFORM, NORMAL, GAMMA, BETA = 0, 1, 2, 3  # array-state samplers
U_STEP, NORMAL_STEP, EXP_STEP, GAMMA_STEP, GAMMA_INT_STEP, BETA_INT_STEP = 4, 5, 6, 7, 8, 9  # scalar state


# One small compiled function per sampler family (the step samplers are inlined into their caller,
# and one function holding them all takes several times longer to compile).

@njit
def _array_state_draws(state, n, kind, p1, p2):
    out = np.empty(n)
    for k in range(n):
        if kind == UNIFORM:
            out[k] = nb_uniform(state)
        elif kind == NORMAL:
            out[k] = nb_normal(state)
        elif kind == GAMMA:
            out[k] = nb_gamma(state, p1)
        else:
            out[k] = nb_beta(state, p1, p2)
    return out


@njit
def _ziggurat_draws(state, n, kind):
    out = np.empty(n)
    s = state[0]
    for k in range(n):
        if kind == U_STEP:
            out[k], s = nb_uniform_step(s)
        elif kind == NORMAL_STEP:
            out[k], s = nb_normal_step(s)
        else:
            out[k], s = nb_exponential_step(s)
    state[0] = s
    return out


@njit
def _gamma_draws(state, n, shape):
    out = np.empty(n)
    s = state[0]
    d, c = nb_gamma_constants(shape)
    for k in range(n):
        out[k], s = nb_gamma_step(s, d, c)
    state[0] = s
    return out


@njit
def _gamma_int_draws(state, n, shape):
    out = np.empty(n)
    s = state[0]
    d, c = nb_gamma_constants(float(shape))
    for k in range(n):
        out[k], s = nb_gamma_int_step(s, shape, d, c)
    state[0] = s
    return out


@njit
def _beta_int_draws(state, n, a, b):
    out = np.empty(n)
    s = state[0]
    da, ca = nb_gamma_constants(float(a))
    db, cb = nb_gamma_constants(float(b))
    for k in range(n):
        out[k], s = nb_beta_int_step(s, a, b, da, ca, db, cb)
    state[0] = s
    return out


def compiled_draws(state, n, kind, p1, p2):
    """n draws of one sampler; the scalar-state kinds start from state[0] and write it back."""
    if kind <= BETA:
        return _array_state_draws(state, n, kind, p1, p2)
    if kind <= EXP_STEP:
        return _ziggurat_draws(state, n, kind)
    if kind == GAMMA_STEP:
        return _gamma_draws(state, n, p1)
    if kind == GAMMA_INT_STEP:
        return _gamma_int_draws(state, n, int(p1))
    return _beta_int_draws(state, n, int(p1), int(p2))


def twin_draws(seed, n, kind, p1=1.0, p2=1.0):
    stream = PyStream(seed)
    d, c = gamma_constants(p1) if p1 >= 1.0 else (0.0, 0.0)
    draw = {
        UNIFORM: stream.uniform, NORMAL: stream.normal, GAMMA: lambda: stream.gamma(p1),
        BETA: lambda: stream.beta(p1, p2), U_STEP: stream.uniform, NORMAL_STEP: stream.normal_zig,
        EXP_STEP: stream.exponential_zig, GAMMA_STEP: lambda: stream.gamma_mt(d, c),
        GAMMA_INT_STEP: lambda: stream.gamma_int(int(p1)), BETA_INT_STEP: lambda: stream.beta_int(int(p1), int(p2)),
    }[kind]
    return np.array([draw() for _ in range(n)]), stream.state


def draws(seed, n, kind, p1=1.0, p2=1.0):
    return compiled_draws(new_state(seed), n, kind, float(p1), float(p2))


TWIN_CASES = [
    (UNIFORM, 1, 1), (NORMAL, 1, 1), (GAMMA, 0.4, 1), (GAMMA, 3.5, 1), (BETA, 2.0, 7.0),
    (U_STEP, 1, 1), (NORMAL_STEP, 1, 1), (EXP_STEP, 1, 1),
    (GAMMA_STEP, 1.0, 1), (GAMMA_STEP, 2.5, 1), (GAMMA_STEP, 300.0, 1),
    (GAMMA_INT_STEP, 1, 1), (GAMMA_INT_STEP, 2, 1), (GAMMA_INT_STEP, 3, 1), (GAMMA_INT_STEP, 57, 1),
    (BETA_INT_STEP, 1, 1), (BETA_INT_STEP, 2, 9), (BETA_INT_STEP, 40, 3), (BETA_INT_STEP, 150, 170),
]


@pytest.mark.parametrize("kind, p1, p2", TWIN_CASES)
def test_compiled_and_python_twins_agree_bit_for_bit(kind, p1, p2):
    for seed in (0, 2 ** 64 - 5):
        state = new_state(seed)
        compiled = compiled_draws(state, N_TWIN, kind, float(p1), float(p2))
        python, py_state = twin_draws(seed, N_TWIN, kind, float(p1), float(p2))
        np.testing.assert_array_equal(compiled, python)
        if kind >= U_STEP:
            assert int(state[0]) == py_state  # same number of 64-bit draws consumed


def test_scalar_state_uniform_is_the_array_state_uniform():
    np.testing.assert_array_equal(draws(7, 1000, U_STEP), draws(7, 1000, UNIFORM))


@pytest.mark.parametrize("kind, r", [(NORMAL_STEP, rng._ZIG_R), (EXP_STEP, rng._ZIG_EXP_R)])
def test_twins_agree_on_the_rare_paths_too(kind, r):
    """50,000 draws reach the ziggurat's tail (beyond r) and its wedges; the twins still agree there."""
    compiled = draws(3, 50_000, kind)
    python, _ = twin_draws(3, 50_000, kind)
    np.testing.assert_array_equal(compiled, python)
    assert (np.abs(compiled) > r).sum() >= 3


def normal_cdf(x):
    return 0.5 * (1.0 + np.vectorize(math.erf)(np.asarray(x) / math.sqrt(2.0)))


def chi_square_on_edges(sample, edges, cdf):
    """Pearson statistic and degrees of freedom of the sample's counts between consecutive edges."""
    counts = np.histogram(sample, bins=edges)[0]
    expected = sample.size * np.diff(cdf(edges))
    return float(((counts - expected) ** 2 / expected).sum()), edges.size - 2


def zig_edges(f, f_inverse, tail, r):
    x, _ = rng._ziggurat_edges(f, f_inverse, tail, r)
    return np.array(sorted(set(x[1:])))  # x_1 = r down to 0: the layers' wedge boundaries


def assert_chi_square_fits(stat, dof):
    # mean dof, sd sqrt(2 dof): six standard deviations is far beyond chance for a fixed seed,
    # and far below what a wrong layer (a 1/256 slice of the mass off by a few %) produces.
    assert stat < dof + 6 * math.sqrt(2 * dof), (stat, dof)


def test_ziggurat_normal_fits_on_every_layer_and_in_the_tail():
    z = draws(11, 2_000_000, NORMAL_STEP)
    edges = zig_edges(rng._normal_half, rng._normal_half_inverse, rng._normal_tail, rng._ZIG_R)
    edges = np.concatenate([-edges[::-1], edges[1:], [np.inf]])
    edges = np.concatenate([[-np.inf], edges])
    stat, dof = chi_square_on_edges(z, edges, normal_cdf)
    assert_chi_square_fits(stat, dof)
    n = z.size
    assert abs(z.mean()) < 5 / math.sqrt(n)
    assert abs(z.var() - 1.0) < 5 * math.sqrt(2 / n)
    assert abs((z ** 4).mean() - 3.0) < 5 * math.sqrt(96 / n)
    tail = (np.abs(z) > rng._ZIG_R).mean()
    p_tail = 2 * (1 - normal_cdf(rng._ZIG_R))
    assert abs(tail - p_tail) < 5 * math.sqrt(p_tail / n)
    # beyond the tail's start the law is still normal: P(|Z| > r + 0.5 | |Z| > r)
    far = (np.abs(z) > rng._ZIG_R + 0.5).sum() / (np.abs(z) > rng._ZIG_R).sum()
    expected = (1 - normal_cdf(rng._ZIG_R + 0.5)) / (1 - normal_cdf(rng._ZIG_R))
    assert abs(far - expected) < 0.05


def test_ziggurat_exponential_fits_on_every_layer_and_in_the_tail():
    x = draws(12, 2_000_000, EXP_STEP)
    assert x.min() >= 0.0
    edges = zig_edges(rng._exp_half, rng._exp_inverse, rng._exp_tail, rng._ZIG_EXP_R)
    edges = np.concatenate([edges, [rng._ZIG_EXP_R + 1.0, np.inf]])
    stat, dof = chi_square_on_edges(x, edges, lambda e: 1.0 - np.exp(-e))
    assert_chi_square_fits(stat, dof)
    n = x.size
    assert abs(x.mean() - 1.0) < 5 / math.sqrt(n)
    assert abs(x.var() - 1.0) < 5 * math.sqrt(8 / n)


def test_ziggurat_constants_are_the_largest_bases_that_cover_the_density():
    """r is the bisection's answer: the layers built on it reach f(0) = 1, those on the next double do not."""
    for f, inv, tail, r in [(rng._normal_half, rng._normal_half_inverse, rng._normal_tail, rng._ZIG_R),
                            (rng._exp_half, rng._exp_inverse, rng._exp_tail, rng._ZIG_EXP_R)]:
        assert rng._solve_ziggurat_r(f, inv, tail, r - 0.5, r + 0.5) == r
        _, top = rng._ziggurat_edges(f, inv, tail, r)
        assert 1.0 <= top < 1.0 + 1e-13
        _, top_next = rng._ziggurat_edges(f, inv, tail, math.nextafter(r, math.inf))
        assert top_next is None or top_next < 1.0


def test_gamma_squeeze_is_a_lower_bound_of_the_acceptance_exponent():
    """phi(w) = 3w^2/2 - 3w - w^3 + 3 log(1 + w) >= -3 w^4 / (4 (1 + min(w, 0))) on w > -1 (the
    squeeze of nb_gamma_step never accepts what Marsaglia and Tsang's test rejects)."""
    w = np.concatenate([np.linspace(-1 + 1e-6, 0, 100_001), np.linspace(0, 30, 100_001)])
    phi = 1.5 * w ** 2 - 3 * w - w ** 3 + 3 * np.log1p(w)
    bound = -0.75 * w ** 4 / (1 + np.minimum(w, 0))
    assert (phi - bound).min() > -1e-12 * (1 + np.abs(phi)).max()


def gamma_moment_errors(g, shape):
    n = g.size
    mean_err = abs(g.mean() - shape) / math.sqrt(shape / n)
    # Var of the sample variance ~ (mu4 - sigma^4) / n with mu4 = 3 k^2 + 6 k for Gamma(k).
    var_err = abs(g.var() - shape) / math.sqrt((3 * shape ** 2 + 6 * shape - shape ** 2) / n)
    return mean_err, var_err


@pytest.mark.parametrize("kind, shape", [(GAMMA_STEP, 1.0), (GAMMA_STEP, 1.7), (GAMMA_STEP, 4.0),
                                         (GAMMA_STEP, 250.0), (GAMMA_INT_STEP, 1), (GAMMA_INT_STEP, 2),
                                         (GAMMA_INT_STEP, 3), (GAMMA_INT_STEP, 12), (GAMMA, 0.3), (GAMMA, 5.0)])
def test_gamma_moments(kind, shape):
    g = draws(21, 400_000 if kind != GAMMA else 100_000, kind, shape)
    assert g.min() > 0.0
    mean_err, var_err = gamma_moment_errors(g, shape)
    assert mean_err < 5 and var_err < 5, (mean_err, var_err)


def test_integer_gamma_matches_its_cdf():
    """Gamma(n) for integer n has P(G <= x) = 1 - sum_{j<n} e^-x x^j / j!: chi-square on 40 bins."""
    for n in (1, 2, 3, 4, 20):
        g = draws(30 + n, 400_000, GAMMA_INT_STEP, n)

        def cdf(x, n=n):
            x = np.minimum(np.asarray(x, dtype=float), 1e3)  # the last edge is inf: cdf 1
            return 1.0 - sum(np.exp(-x) * x ** j / math.factorial(j) for j in range(n))

        edges = np.concatenate([np.quantile(g, np.linspace(0, 1, 41)[1:-1]), [np.inf]])
        edges = np.concatenate([[0.0], edges])
        stat, dof = chi_square_on_edges(g, edges, cdf)
        assert_chi_square_fits(stat, dof)


@pytest.mark.parametrize("kind, a, b", [(BETA_INT_STEP, 1, 1), (BETA_INT_STEP, 1, 6), (BETA_INT_STEP, 3, 2),
                                        (BETA_INT_STEP, 90, 200), (BETA, 2.0, 7.0)])
def test_beta_moments_and_cdf(kind, a, b):
    x = draws(41, 400_000 if kind != BETA else 100_000, kind, a, b)
    assert 0.0 <= x.min() and x.max() <= 1.0
    n = x.size
    mean = a / (a + b)
    var = a * b / ((a + b) ** 2 * (a + b + 1))
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / n)
    # sample variance: loose but honest bound, the fourth central moment is below var for a Beta
    assert abs(x.var() - var) < 5 * math.sqrt(var / n)
    if kind == BETA_INT_STEP:
        # P(X <= q) = P(Binomial(a + b - 1, q) >= a) for integer shapes
        m = a + b - 1
        for q in (0.1, 0.3, 0.5, 0.7, 0.9, mean):
            p = sum(math.comb(m, j) * q ** j * (1 - q) ** (m - j) for j in range(a, m + 1))
            assert abs((x <= q).mean() - p) < 5 * math.sqrt(max(p * (1 - p), 1e-12) / n) + 1e-12


# --- Counter-based draws (horizonbandits.counter_rng): pull n of an arm as a function of (key, n) ----

from horizonbandits import counter_rng  # noqa: E402


@njit
def _pull_draws(key, n0, n, uniform):
    out = np.empty(n)
    for k in range(n):
        out[k] = counter_rng.nb_pull_uniform(key, n0 + k) if uniform else counter_rng.nb_pull_normal(key, n0 + k)
    return out


@pytest.mark.parametrize("key", [0, 1, 0x0123456789ABCDEF, (1 << 64) - 1])
def test_counter_draws_and_their_python_twins_agree_bit_for_bit(key):
    for uniform, twin in ((True, counter_rng.pull_uniform), (False, counter_rng.pull_normal)):
        compiled = _pull_draws(np.uint64(key), 1, 3000, uniform)
        python = np.array([twin(key, n) for n in range(1, 3001)])
        assert np.array_equal(compiled, python)


def test_counter_draw_is_a_function_of_key_and_pull_number_only():
    key = np.uint64(987654321)
    whole = _pull_draws(key, 1, 2000, False)
    assert np.array_equal(_pull_draws(key, 1001, 1000, False), whole[1000:])  # any order, any start
    other = _pull_draws(np.uint64(987654322), 1, 2000, False)
    assert not np.any(whole == other)  # a neighbouring key gives unrelated draws


def test_counter_normals_are_standard_and_uncorrelated_across_pulls_and_arms():
    # 200,000 draws: mean, variance and lag-1 correlations within a few standard errors
    # (1 / sqrt(n) = 0.0022); the tail probability P(|z| > 3) = 0.0027 within 5 standard errors.
    n = 200_000
    a = _pull_draws(np.uint64(11), 1, n, False)
    b = _pull_draws(np.uint64(12), 1, n, False)
    se = 1.0 / math.sqrt(n)
    assert abs(a.mean()) < 5 * se
    assert abs(a.var() - 1.0) < 5 * math.sqrt(2.0) * se
    assert abs(np.corrcoef(a[1:], a[:-1])[0, 1]) < 5 * se
    assert abs(np.corrcoef(a, b)[0, 1]) < 5 * se
    p = 2 * 0.5 * math.erfc(3 / math.sqrt(2))
    assert abs(np.mean(np.abs(a) > 3) - p) < 5 * math.sqrt(p * (1 - p) / n)
    u = _pull_draws(np.uint64(13), 1, n, True)
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / n) and u.min() >= 0.0 and u.max() < 1.0
