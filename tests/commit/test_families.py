"""The registry of commitment instance families (instances.COMMIT_FAMILIES) that notebooks name by parameter."""
import numpy as np
import pytest

from horizonbandits.commit import instances


def test_registered_families_build_the_constructors_instances():
    same = {
        "section72": ({"c": 0.3}, instances.section72(2500, 0.3)),
        "critical": ({"schedule": "sqrt"}, instances.hard_instance(4, 50, 2500, 0.1)),
        "separable": ({"K": 3, "c": 0.4}, instances.separable_instance(3, 625, 2500, 0.4, 0.45)),
        "no_shift": ({"delta": 0.1, "N": 100}, instances.no_shift_instance(4, 100, 2500, 0.1)),
        "scaled_shift": ({}, instances.scaled_shift_instance(4, 625, 2500, 0.2, 0.3, 0.1)),
        "reordered_shift": ({"schedule": "late_1_2"}, instances.reordered_shift_instance(4, 2450, 2500, 0.2)),
        "bernoulli": ({"mu_f": [0.6, 0.4], "mu_g": [0.3, 0.7]}, instances.CommitProblem.bernoulli([0.6, 0.4], [0.3, 0.7],
                                                                                                  625, 2500)),
    }
    assert set(same) == set(instances.COMMIT_FAMILIES)
    for name, (options, expected) in same.items():
        got = instances.family_instance(name, 2500, options)
        assert (got.N, got.T, got.K) == (expected.N, expected.T, expected.K), name
        np.testing.assert_array_equal(got.mu_f, expected.mu_f, err_msg=name)
        np.testing.assert_array_equal(got.mu_g, expected.mu_g, err_msg=name)
        np.testing.assert_array_equal(got.probs, expected.probs, err_msg=name)


def test_family_options_fill_defaults_and_the_rule_for_n():
    assert instances.family_options("separable", {"c": 0.2}) == {"K": 4, "c": 0.2, "delta_f": 0.45, "schedule": "quarter",
                                                                 "N": None}
    assert instances.family_experiment("section72") == "floor(T/4)"
    assert instances.family_experiment("critical", {"schedule": "two_thirds"}) == "floor(T^(2/3))"
    assert instances.family_experiment("critical", {"N": 300}) == "300"
    assert instances.family_instance("critical", 2000, {"N": 300, "schedule": "sqrt"}).N == 300  # N wins


@pytest.mark.parametrize("call, fragment", [
    (lambda: instances.family_instance("section27", 1000), "family='section27' is not allowed: expected one of "),
    (lambda: instances.family_instance("section72", 1000, {"d": 3}),
     "family_options={'d': 3} is not allowed: family 'section72' takes no option 'd'; its options: c=0.5"),
    (lambda: instances.family_instance("bernoulli", 1000, {"mu_f": [0.5, 0.6]}),
     "family 'bernoulli' needs 'mu_g'"),
    (lambda: instances.family_instance("section72", 500, {"c": 1.5}), "family_options of family 'section72': c=1.5"),
    (lambda: instances.family_instance("section72", 500, [0.5]), "family_options=[0.5] is not allowed: expected a dict"),
    (lambda: instances.family_instance("critical", 500, {"schedule": "half"}), "schedule='half' is not allowed"),
    (lambda: instances.family_sweep("section72", {}, {"c": [0.5], "T": [1]}), "family_sweep={'c': [0.5], 'T': [1]} is "
                                                                                "not allowed: expected {} or one option"),
    (lambda: instances.family_sweep("section72", {}, {"delta": [0.1]}), "family 'section72' takes no option 'delta'"),
    (lambda: instances.family_sweep("section72", {}, {"c": []}), "expected a non-empty list of values of 'c'"),
])
def test_bad_names_and_options_are_one_line_errors_naming_the_parameter(call, fragment):
    with pytest.raises(ValueError) as info:
        call()
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_unknown_family_suggests_the_closest_name():
    with pytest.raises(ValueError, match="did you mean 'section72'"):
        instances.family_instance("sectoin72", 1000, parameter="family")


def test_family_sweep_gives_the_options_at_each_value():
    assert instances.family_sweep("section72", {"c": 0.5}, {}) == (None, [])
    name, points = instances.family_sweep("separable", {"c": 0.5, "K": 3}, {"c": [0.25, 0.75]})
    assert name == "c" and points == [(0.25, {"c": 0.25, "K": 3}), (0.75, {"c": 0.75, "K": 3})]


def test_g_candidates_and_g_gap():
    p = instances.section72(20000, 0.5)
    assert instances.g_candidates(p) == [2, 3]  # arms 3 and 4: bad now, the only ones better on g than arm 1
    assert instances.g_gap(p) == pytest.approx(instances.section72_gap(20000, 0.5), rel=1e-12)
    assert instances.g_candidates(instances.no_shift_instance(4, 100, 400, 0.2)) == []  # f = g: the f-best is g-best
    assert instances.g_candidates(instances.separable_instance(4, 100, 400)) == [1]
    tie = instances.CommitProblem.bernoulli([0.9, 0.5, 0.5], [0.1, 0.6, 0.6], 10, 40)
    assert instances.g_gap(tie) == 0 and instances.g_candidates(tie) == [1, 2]


def test_register_family_refuses_a_taken_name():
    with pytest.raises(ValueError, match="already registered"):
        instances.register_family("section72", "again", c=0.5)(lambda T, c: instances.section72(T, c))
