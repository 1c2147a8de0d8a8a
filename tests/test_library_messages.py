"""The library's own messages for bad inputs name the parameter or the file.

Each test reproduces one defect seen by a user (a bare AttributeError, pandas' or numpy's message
without the file or the parameter, out-of-range values passing silently) and checks the one-line
error or the documented behaviour that replaces it.
"""
from __future__ import annotations

import numpy as np
import pytest

from horizonbandits.commit import CommitProblem
from horizonbandits.commit.portfolio import portfolio_solve, portfolio_solve_exact
from horizonbandits.rising import CureUCB, RisingInstance, simulate
from horizonbandits.rising import imdb as imdb_mod
from horizonbandits.rising.instances import ltf, ltf_saturating



def _one_line(err) -> str:
    msg = str(err.value)
    assert "\n" not in msg
    return msg


@pytest.fixture
def inst():
    n = np.arange(51)
    return RisingInstance(np.vstack([np.minimum(0.5, n / 20), np.full(51, 0.4)]), noise=0.1)


# ---------------------------------------------------------------- simulate with a policy name
def test_simulate_accepts_a_registered_policy_name(inst):
    by_name = simulate(inst, "CURE-UCB", T=50, n_seeds=3, seed=7)
    by_object = simulate(inst, CureUCB(), T=50, n_seeds=3, seed=7)
    assert by_name.policy == "CURE-UCB"
    np.testing.assert_array_equal(by_name.pulls, by_object.pulls)
    np.testing.assert_array_equal(by_name.regret, by_object.regret)


def test_simulate_unknown_policy_name_is_one_line_naming_policy(inst):
    with pytest.raises(ValueError) as err:
        simulate(inst, "CURE_UCB", T=50)
    msg = _one_line(err)
    assert msg.startswith("policy='CURE_UCB' is not allowed")
    assert "did you mean 'CURE-UCB'" in msg


def test_simulate_policy_of_wrong_type_is_one_line(inst):
    with pytest.raises(ValueError) as err:
        simulate(inst, 3, T=50)
    msg = _one_line(err)
    assert msg.startswith("policy=3 is not allowed") and "registered name" in msg


# ---------------------------------------------------------------- files that cannot be read
def test_from_csv_empty_file_names_the_file(tmp_path):
    path = tmp_path / "curves.csv"
    path.write_text("")
    with pytest.raises(ValueError) as err:
        RisingInstance.from_csv(path)
    msg = _one_line(err)
    assert str(path) in msg and "empty" in msg


def test_from_csv_header_only_names_the_file(tmp_path):
    path = tmp_path / "curves.csv"
    path.write_text("a,b\n")
    with pytest.raises(ValueError) as err:
        RisingInstance.from_csv(path)
    msg = _one_line(err)
    assert str(path) in msg and "no rows" in msg


def _truncated_npy(path, n=1000):
    np.save(path, np.linspace(0.5, 0.9, n))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def test_truncated_imdb_npy_names_the_file(tmp_path):
    folder = tmp_path / imdb_mod.SUBDIR
    folder.mkdir()
    np.save(folder / "lr.npy", np.linspace(0.5, 0.9, 1000))
    _truncated_npy(folder / "nb.npy")
    with pytest.raises(ValueError) as err:
        imdb_mod.load_curves(["lr", "nb"], data_dir=tmp_path)
    msg = _one_line(err)
    assert str(folder / "nb.npy") in msg and "not a readable .npy file" in msg


def test_truncated_npy_in_from_npy_names_the_file(tmp_path):
    np.save(tmp_path / "a.npy", np.linspace(0.5, 0.9, 1000))
    _truncated_npy(tmp_path / "b.npy")
    with pytest.raises(ValueError) as err:
        RisingInstance.from_npy([tmp_path / "a.npy", tmp_path / "b.npy"])
    msg = _one_line(err)
    assert str(tmp_path / "b.npy") in msg


# ---------------------------------------------------------------- string or ragged means
@pytest.mark.parametrize("means", [[["0.1", "x"], [0.2, 0.3]], [[0.1, 0.2, 0.3], [0.2, 0.3]], "abc"])
def test_rising_instance_bad_means_name_the_parameter(means):
    with pytest.raises(ValueError) as err:
        RisingInstance(means)
    msg = _one_line(err)
    assert msg.startswith("means=") and "is not allowed" in msg


@pytest.mark.parametrize("call, name", [
    (lambda: ltf(["a", 0.1], [0.5, 0.6]), "a"),
    (lambda: ltf([0.1, 0.1], [[0.5], [0.6, 0.7]]), "b"),
    (lambda: ltf_saturating(["x", 0.6], [10, 20]), "b"),
])
def test_ltf_bad_vectors_name_the_parameter(call, name):
    with pytest.raises(ValueError) as err:
        call()
    assert _one_line(err).startswith(f"{name}=")


@pytest.mark.parametrize("mu_f, mu_g, name", [
    (["0.5", "hello"], [0.3, 0.4], "mu_f"),
    ([0.5, 0.6], [[0.3], [0.4, 0.1]], "mu_g"),
])
def test_commit_problem_bad_means_name_the_parameter(mu_f, mu_g, name):
    with pytest.raises(ValueError) as err:
        CommitProblem.bernoulli(mu_f, mu_g, N=10, T=100)
    msg = _one_line(err)
    assert msg.startswith(f"{name}=") and "is not allowed" in msg


def test_commit_problem_discrete_ragged_probs_name_the_parameter():
    with pytest.raises(ValueError) as err:
        CommitProblem.discrete([0.0, 1.0], [[0.5, 0.5], [1.0]], lambda o: o[0], lambda o: o[0], N=10, T=100)
    assert _one_line(err).startswith("probs=")


def test_portfolio_solve_string_means_name_the_parameter():
    with pytest.raises(ValueError) as err:
        portfolio_solve([["a", 0.2], [0.3, 0.4]], c=[0.5, 0.5])
    assert _one_line(err).startswith("O=")


# ---------------------------------------------------------------- ranges: allowed or not
def test_rising_means_may_be_negative_and_the_docstring_says_so():
    # Paper A's model (section 3) asks only for nondecreasing means; rewards are Gaussian around
    # them, so any finite real mean is a valid model (a constant shift changes no decision).
    assert "any finite real" in RisingInstance.__doc__
    n = np.arange(51)
    shifted = RisingInstance(np.vstack([np.minimum(0.5, n / 20), np.full(51, 0.4)]) - 3.0, noise=0.1)
    base = RisingInstance(shifted.means + 3.0, noise=0.1)
    a = simulate(shifted, CureUCB(), T=50, n_seeds=2, seed=1)
    b = simulate(base, CureUCB(), T=50, n_seeds=2, seed=1)
    np.testing.assert_array_equal(a.pulls, b.pulls)
    with pytest.raises(ValueError) as err:
        shifted.with_noise("bernoulli")
    assert "[0, 1]" in _one_line(err)


@pytest.mark.parametrize("solve", [portfolio_solve, portfolio_solve_exact])
@pytest.mark.parametrize("bad", [-0.1, 1.2])
def test_portfolio_outcome_means_outside_unit_cube_are_refused(solve, bad):
    O = np.array([[0.2, 0.8, 0.5], [0.7, 0.1, bad]])
    with pytest.raises(ValueError) as err:
        solve(O, c=[0.5, 0.5])
    msg = _one_line(err)
    assert msg.startswith("O=") and "[0, 1]" in msg
    assert "[0, 1]" in solve.__doc__
