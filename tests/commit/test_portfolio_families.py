"""The portfolio instance families (registered in the one family registry, model "portfolio") and the random family
built like section 7.3's."""
import inspect

import numpy as np
import pytest

from horizonbandits.commit import instances
from horizonbandits.commit.portfolio_instances import PORTFOLIO_FAMILIES, quadratic_weights, random_quadratic, section73

PORTFOLIO = dict(model="portfolio")


def test_registry_names_and_unknown_family_is_one_line():
    assert list(PORTFOLIO_FAMILIES) == ["section73", "random_quadratic"]
    assert PORTFOLIO_FAMILIES["section73"].model == "portfolio" and "section73" not in instances.COMMIT_FAMILIES
    assert "section72" not in PORTFOLIO_FAMILIES and len(PORTFOLIO_FAMILIES) == 2
    with pytest.raises(ValueError) as err:
        instances.family_instance("section_73", 1000, **PORTFOLIO)
    msg = str(err.value)
    assert "\n" not in msg and "family='section_73'" in msg and "'section73'" in msg and "random_quadratic" in msg
    assert "did you mean 'section73'" in msg


def test_a_family_of_the_other_model_is_one_line_naming_both_models():
    for call, fragment in ((lambda: instances.family_instance("section72", 1000, **PORTFOLIO),
                            "family='section72' is not allowed: 'section72' is a commitment family"),
                           (lambda: instances.family_instance("section73", 1000),
                            "family='section73' is not allowed: 'section73' is a portfolio family")):
        with pytest.raises(ValueError) as err:
            call()
        assert fragment in str(err.value) and "\n" not in str(err.value)


def test_unknown_option_is_one_line_naming_the_allowed_ones():
    with pytest.raises(ValueError) as err:
        instances.family_options("section73", {"a_scal": 2.0}, **PORTFOLIO)
    msg = str(err.value)
    assert "\n" not in msg and "'a_scal'" in msg and "a_scale=2.0" in msg and "target_z" in msg
    assert msg.startswith("family_options={'a_scal': 2.0} is not allowed: family 'section73' takes no option")
    with pytest.raises(ValueError) as err:  # a bad value: one line naming family_options and the option
        instances.family_instance("section73", 1000, {"a_scale": -1.0}, **PORTFOLIO)
    assert str(err.value).startswith("family_options of family 'section73': a_scale=-1.0 is not allowed")


def test_registered_options_are_the_functions_keyword_defaults():
    for name, build in (("section73", section73), ("random_quadratic", random_quadratic)):
        entry = PORTFOLIO_FAMILIES[name]
        assert entry.build is build
        params = {k: p.default for k, p in inspect.signature(build).parameters.items() if k != "T"}
        assert list(entry.defaults) == list(params), name
        for key, default in params.items():
            assert np.array_equal(entry.defaults[key], default) or entry.defaults[key] is default, (name, key)


def test_family_of_section73_is_section73_with_its_options():
    a = instances.family_instance("section73", 2000, {"a_scale": 0.5, "outcomes": "gaussian"}, **PORTFOLIO)
    b = section73(2000, a_scale=0.5, outcomes="gaussian")
    assert type(a) is type(b) and a.N == b.N == 500
    assert np.array_equal(a.reward.A, b.reward.A) and np.array_equal(a.reward.c, b.reward.c)
    assert np.array_equal(a.outcome_mean, b.outcome_mean) and a.noise_sd == b.noise_sd
    options = instances.family_options("section73", **PORTFOLIO)
    assert options["a_scale"] == 2.0 and "T" not in options
    assert instances.family_experiment("section73", **PORTFOLIO) == "floor(T/4)"
    assert instances.family_experiment("random_quadratic", {"N": 700}, **PORTFOLIO) == "700"
    assert instances.family_instance("random_quadratic", 2000, {"N": 700}, **PORTFOLIO).N == 700


def test_a_shape_as_one_number_is_the_last_coordinates_weight():
    assert quadratic_weights(25.0, 3).tolist() == [1.0, 1.0, 25.0]
    assert quadratic_weights(1, 4).tolist() == [1.0] * 4
    assert np.array_equal(section73(1000, a_shape=25.0).reward.A, section73(1000).reward.A)
    assert np.array_equal(section73(1000, a_shape=1.0).reward.A, section73(1000, a_shape=(1, 1, 1)).reward.A)
    for bad in ([1.0, 2.0], 0.0, [1.0, -1.0, 1.0]):
        with pytest.raises(ValueError, match="a_shape"):
            quadratic_weights(bad, 3)


@pytest.mark.parametrize("K, d, n_good", [(5, 3, 2), (6, 4, 2), (4, 2, 1)])
def test_random_quadratic_sizes_structure_and_optimum(K, d, n_good):
    p = random_quadratic(4000, K=K, d=d, n_good=n_good, instance_seed=3)
    assert (p.K, p.d, p.N, p.T) == (K, d, 1000, 4000)
    assert np.all(p.mu_f[:n_good] >= 0.5) and np.all(p.mu_f[n_good:] <= 0.2)
    assert np.all(np.diff(p.mu_f[n_good:]) <= 0)
    assert np.all(p.loc[d - 1, n_good:] == 0.18) and np.all(p.loc[d - 1, :n_good] >= 0.3)
    assert p.reward.c[d - 1] == 0.0 and np.allclose(np.diag(p.reward.A), 2.0 * np.r_[np.ones(d - 1), 25.0])
    if K - n_good <= d:  # the optimum is the planted mixture of the f-poor arms
        x = p.optimal_portfolio
        assert np.all(x[:n_good] < 1e-6) and x.sum() == pytest.approx(1.0)
        mixture = p.outcome_mean @ x
        assert np.allclose(mixture[:d - 1], p.reward.c[:d - 1], atol=1e-6)


def test_random_quadratic_is_one_instance_across_T_and_changes_with_its_seed():
    a, b = random_quadratic(2000, instance_seed=1), random_quadratic(20000, instance_seed=1)
    assert np.array_equal(a.loc, b.loc) and np.array_equal(a.mu_f, b.mu_f) and np.array_equal(a.reward.c, b.reward.c)
    c = random_quadratic(2000, instance_seed=2)
    assert not np.array_equal(a.loc, c.loc)
    inside = random_quadratic(2000, instance_seed=1, target_z=None)
    assert inside.optimal_value == pytest.approx(0.0, abs=1e-8)  # c inside the hull: the mixture reaches it


def test_a_family_runs_through_the_run_grid():
    from horizonbandits import experiments
    from horizonbandits.commit import ROSCOC, UCBPortfolio
    def make(T):
        return instances.family_instance("random_quadratic", T, {"K": 4, "d": 2}, **PORTFOLIO)

    runs = experiments.run_grid(make, {"ROSCOC": ROSCOC(), "UCB-Portfolio": UCBPortfolio()}, [400], 2, seed=0,
                                 cache=False)
    assert set(runs.policy) == {"ROSCOC", "UCB-Portfolio"} and len(runs) == 4
    assert {"x_4", "n_4"} <= set(runs.columns) and "x_5" not in runs.columns
