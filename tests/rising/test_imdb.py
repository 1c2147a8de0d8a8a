"""IMDB loader: data-folder resolution, the missing-data error, shapes and names, the optimal arm
at T = 1,000 and 50,000 on the real curves, the isotonic fit, and the checkpoint view of the curves.

Tests marked by ``real_curves`` need ../shared/data/imdb-learning-curves: they FAIL when it is
missing and the environment variable CI is set (CI always has it), and skip elsewhere.
"""
import os
from pathlib import Path

import numpy as np
import pytest

from horizonbandits.outputs import REPO_ROOT
from horizonbandits.rising import optimal_arm
from horizonbandits.rising import imdb as I


@pytest.fixture
def real_data_dir():
    folder = I.curves_dir()
    missing = [a for a in I.PAPER_ARMS if not (folder / f"{a}.npy").is_file()]
    if missing:
        message = I.missing_data_message(folder, missing)
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return I.data_root()


def _fake_data(root: Path, arms, T=50, seed=0):
    folder = root / I.SUBDIR
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    curves = {}
    for a in arms:
        c = np.clip(0.5 + 0.4 * (1 - np.exp(-np.arange(1, T + 1) / 10)) + 0.02 * rng.standard_normal(T), 0, 1)
        np.save(folder / f"{a}.npy", c)
        curves[a] = c
    return curves


# --------------------------------------------------------------------------------------------
# Folder resolution and the missing-data error (no real data needed)
# --------------------------------------------------------------------------------------------


def test_data_folder_resolution_order(monkeypatch, tmp_path):
    monkeypatch.delenv("HB_DATA_DIR", raising=False)
    assert I.data_root() == Path(REPO_ROOT).parent / "shared" / "data"
    monkeypatch.setenv("HB_DATA_DIR", str(tmp_path / "env"))
    assert I.data_root() == tmp_path / "env"
    assert I.data_root(tmp_path / "arg") == tmp_path / "arg"  # the argument wins over the environment
    assert I.data_root("") == tmp_path / "env"


def test_missing_data_error_says_where_and_how(monkeypatch, tmp_path):
    monkeypatch.delenv("HB_DATA_DIR", raising=False)
    with pytest.raises(I.MissingDataError) as info:
        I.imdb(data_dir=tmp_path)
    msg = str(info.value)
    assert "\n" not in msg
    assert str(tmp_path / I.SUBDIR) in msg
    assert "hb data fetch-imdb" in msg and "HB_DATA_DIR" in msg and I.UPSTREAM_REPO in msg
    assert "lr_alpha_0.003.npy" in msg
    # the environment variable is honoured, and a partial folder names what is missing
    _fake_data(tmp_path, ["nn_1"])
    monkeypatch.setenv("HB_DATA_DIR", str(tmp_path))
    with pytest.raises(I.MissingDataError, match="nn_2.npy") as info:
        I.imdb(arms=["nn_1", "nn_2"])
    assert "nn_1.npy" not in str(info.value)


def test_loader_on_a_small_fake_folder(tmp_path):
    curves = _fake_data(tmp_path, ["nn_1", "ogd_beta_0.1", "lr_alpha_0.003"], T=40)
    inst = I.imdb(arms=["ogd_beta_0.1", "nn_1"], data_dir=tmp_path)
    assert inst.names == ("ogd_beta_0.1", "nn_1") and inst.T_max == 40 and inst.noise == "bernoulli"
    np.testing.assert_array_equal(inst.means[1, 1:], curves["nn_1"])   # entry n-1 is mu(n)
    np.testing.assert_array_equal(inst.means[:, 0], inst.means[:, 1])  # mu(0) := mu(1)
    assert I.imdb(arms=["ogd_beta_0.1", "nn_1"], data_dir=tmp_path, T_max=10).T_max == 10
    assert I.imdb(arms=["ogd_beta_0.1", "nn_1"], data_dir=tmp_path, noise=0.1).noise == 0.1
    # the folder may also hold the files directly
    assert I.imdb(arms=["ogd_beta_0.1", "nn_1"], data_dir=tmp_path / I.SUBDIR).T_max == 40
    assert I.available_arms(tmp_path) == ["lr_alpha_0.003", "nn_1", "ogd_beta_0.1"]


def test_loader_rejects_bad_arguments_and_files(tmp_path):
    _fake_data(tmp_path, ["nn_1", "nn_2"], T=30)
    with pytest.raises(ValueError, match="arms="):
        I.imdb(arms=["nn_1"], data_dir=tmp_path)
    with pytest.raises(ValueError, match="arms="):
        I.imdb(arms=["nn_1", "nn_1"], data_dir=tmp_path)
    np.save(tmp_path / I.SUBDIR / "nn_2.npy", np.full((3, 3), 0.5))
    with pytest.raises(ValueError, match="not a learning curve"):
        I.imdb(arms=["nn_1", "nn_2"], data_dir=tmp_path)


def test_upstream_file_names_and_parameter_counts():
    assert I.upstream_filename("nn_1") == "NN: (1,)_avg.npy"
    assert I.upstream_filename("nn_1-1-2") == "NN: (1, 1, 2)_avg.npy"
    assert I.upstream_filename("lr_alpha_0.003") == "Logistic Regression alpha = 0.003_avg.npy"
    assert I.upstream_filename("ogd_beta_0.0001") == "OGD beta = 0.0001_avg.npy"
    assert I.upstream_filename("adagrad_alpha_1") == "ADAGRAD alpha = 1_avg.npy"
    assert I.parameter_count("lr_alpha_0.003") == 1000
    assert I.parameter_count("nn_2") == 1000 * 2 + 2 + 2 * 1 + 1
    assert I.parameter_count("nn_2-2-2", n_features=10) == (10 * 2 + 2) + (2 * 2 + 2) * 2 + (2 + 1)
    costs = I.imdb_costs(["lr_alpha_0.003", "nn_2"], per_thousand_parameters=1e-4)
    assert costs["lr_alpha_0.003"] == pytest.approx(1e-4) and costs["nn_2"] == pytest.approx(1e-4 * 2.005)
    with pytest.raises(ValueError, match="name="):
        I.upstream_filename("svm_c_1")


def test_checkpoint_view_of_the_curves(tmp_path):
    curves = _fake_data(tmp_path, ["nn_1", "nn_2"], T=50)
    df = I.imdb_trajectories(["nn_1", "nn_2"], every=10, data_dir=tmp_path)
    assert list(df.columns) == ["arm", "step", "score"] and len(df) == 10
    row = df[(df.arm == "nn_2") & (df.step == 30)].iloc[0]
    assert row.score == curves["nn_2"][29]
    with pytest.raises(ValueError, match="every="):
        I.imdb_trajectories(["nn_1", "nn_2"], every=0, data_dir=tmp_path)


# --------------------------------------------------------------------------------------------
# The real curves
# --------------------------------------------------------------------------------------------


def test_real_curves_shapes_names_and_optimal_arms(real_data_dir):
    inst = I.imdb()
    assert inst.names == I.PAPER_ARMS
    assert inst.means.shape == (7, I.T_IMDB + 1) and inst.T_max == 50_000
    raw = np.load(I.curves_dir() / "nn_2.npy")
    np.testing.assert_array_equal(inst.means[inst.names.index("nn_2"), 1:], raw)
    assert np.all((inst.means >= 0) & (inst.means <= 1))
    # the optimal arm changes with the horizon: online gradient descent early, the 2-unit net late
    assert inst.names[optimal_arm(inst, 1_000)] == "ogd_beta_0.1"
    assert inst.names[optimal_arm(inst, 50_000)] == "nn_2"


def test_real_curves_are_not_monotone_and_the_isotonic_fit_is(real_data_dir):
    inst = I.imdb()
    down = (np.diff(inst.means[:, 1:], axis=1) < 0).mean()
    assert 0.3 < down < 0.7  # about half the steps go down
    iso = I.imdb(isotonic=True)
    assert np.all(np.diff(iso.means, axis=1) >= 0)
    # the least-squares monotone fit keeps each curve's total (pool-adjacent-violators preserves sums)
    np.testing.assert_allclose(iso.means[:, 1:].sum(axis=1), inst.means[:, 1:].sum(axis=1), rtol=1e-12)
    assert iso.names[optimal_arm(iso, 50_000)] == "nn_2"
