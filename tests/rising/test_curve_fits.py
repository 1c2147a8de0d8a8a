"""The curve fits of appendix C's claim recover the curves they are given."""
import numpy as np
import pytest

from horizonbandits.rising.curve_fits import fit_exponential, fit_ltf

n = np.arange(1, 20_001, dtype=float)


def test_ltf_with_a_start_level_is_recovered():
    y = 0.5 + 4e-5 * np.minimum(n, 6_000.0)
    f = fit_ltf(y)
    assert f.r2 > 1 - 1e-6 and abs(f.shape / 6_000 - 1) < 0.01
    assert f.coefficients == pytest.approx((0.5, 4e-5), rel=0.01)
    assert np.abs(f.predict(n) - y).max() < 2e-3


def test_definition_5_1_ltf_has_no_start_level():
    y = 1e-4 * np.minimum(n, 5_000.0)
    f = fit_ltf(y, offset=False)
    assert f.r2 > 1 - 1e-6 and abs(f.shape / 5_000 - 1) < 0.01
    # with a start level the same curve would need c = 0.5 more: Definition 5.1's form cannot fit it
    assert fit_ltf(y + 0.5, offset=False).r2 < 0.9 < fit_ltf(y + 0.5).r2


def test_exponential_is_recovered_and_beats_ltf_on_its_own_curve():
    k = 3 / 20_000
    y = 0.2 + 0.6 * (1 - np.exp(-k * n))
    e = fit_exponential(y)
    assert e.r2 > 1 - 1e-6 and abs(e.shape / k - 1) < 0.01
    assert e.coefficients == pytest.approx((0.2, 0.6), rel=0.01)
    assert fit_ltf(y).r2 < e.r2


def test_r2_and_rmse_are_the_definitions():
    rng = np.random.default_rng(0)
    y = 0.5 + 4e-5 * np.minimum(n, 6_000.0) + rng.normal(0, 0.01, n.size)
    f = fit_ltf(y)
    resid = y - f.predict(n)
    assert f.r2 == pytest.approx(1 - np.sum(resid ** 2) / np.sum((y - y.mean()) ** 2))
    assert f.rmse == pytest.approx(np.sqrt(np.mean(resid ** 2)))


@pytest.mark.parametrize("bad", [[0.1, 0.2], [[0.1, 0.2, 0.3]], [0.1, np.nan, 0.3]])
def test_bad_curves_raise_one_line_errors(bad):
    with pytest.raises(ValueError, match="^curve of shape") as err:
        fit_ltf(bad)
    assert "\n" not in str(err.value)
