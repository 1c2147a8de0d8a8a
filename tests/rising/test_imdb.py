"""IMDB loader: data-folder resolution (per arm, first folder that has it), the missing-data error,
shapes and names, the optimal arm at T = 1,000 and 50,000 on the real curves, the isotonic fit, and
the checkpoint view of the curves.

The real-curve tests read the seven curves committed under data/imdb-learning-curves/, so they run
from a clone with nothing beside it.
"""
import io
import urllib.parse
from pathlib import Path

import numpy as np
import pytest

from horizonbandits.outputs import REPO_ROOT
from horizonbandits.rising import optimal_arm
from horizonbandits.rising import imdb as I


@pytest.fixture
def committed_curves(monkeypatch):
    """The loader as a clone with nothing beside it sees it: no HB_DATA_DIR, no ../shared/data."""
    monkeypatch.delenv("HB_DATA_DIR", raising=False)
    monkeypatch.setattr(I, "SHARED_DATA", Path(REPO_ROOT) / "no-such-shared-folder")


@pytest.fixture
def no_default_folders(monkeypatch, tmp_path):
    """The loader with empty repository and shared folders, so only what a test writes is found."""
    monkeypatch.delenv("HB_DATA_DIR", raising=False)
    monkeypatch.setattr(I, "REPO_DATA", tmp_path / "repo-data")
    monkeypatch.setattr(I, "SHARED_DATA", tmp_path / "shared-data")


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
    repo, shared = Path(REPO_ROOT) / "data", Path(REPO_ROOT).parent / "shared" / "data"
    assert I.REPO_DATA == repo and I.SHARED_DATA == shared
    assert I.search_roots() == [repo, shared]
    assert I.data_root() == shared  # downloads never go into the repository
    monkeypatch.setenv("HB_DATA_DIR", str(tmp_path / "env"))
    assert I.search_roots() == [tmp_path / "env", repo, shared]
    assert I.search_roots(tmp_path / "arg") == [tmp_path / "arg", tmp_path / "env", repo, shared]
    assert I.search_roots("") == I.search_roots(None) == [tmp_path / "env", repo, shared]
    assert I.search_roots(repo) == [repo, tmp_path / "env", shared]  # each folder once
    assert I.data_root() == tmp_path / "env"
    assert I.data_root(tmp_path / "arg") == tmp_path / "arg"  # the argument wins over the environment
    assert I.data_root("") == tmp_path / "env"


def test_each_arm_comes_from_the_first_folder_that_has_it(no_default_folders, monkeypatch, tmp_path):
    arg = _fake_data(tmp_path / "arg", ["nn_1"], T=30, seed=1)
    env = _fake_data(tmp_path / "env", ["nn_1", "nn_2"], T=30, seed=2)
    repo = _fake_data(I.REPO_DATA, ["nn_2", "ogd_beta_0.1"], T=30, seed=3)
    shared = _fake_data(I.SHARED_DATA, ["ogd_beta_0.1", "lr_alpha_0.003"], T=30, seed=4)
    monkeypatch.setenv("HB_DATA_DIR", str(tmp_path / "env"))
    df = I.load_curves(["nn_1", "nn_2", "ogd_beta_0.1", "lr_alpha_0.003"], data_dir=tmp_path / "arg")
    np.testing.assert_array_equal(df["nn_1"], arg["nn_1"])
    np.testing.assert_array_equal(df["nn_2"], env["nn_2"])
    np.testing.assert_array_equal(df["ogd_beta_0.1"], repo["ogd_beta_0.1"])
    np.testing.assert_array_equal(df["lr_alpha_0.003"], shared["lr_alpha_0.003"])
    assert I.find_curve("nn_1", tmp_path / "arg") == tmp_path / "arg" / I.SUBDIR / "nn_1.npy"
    assert I.find_curve("nn_1") == tmp_path / "env" / I.SUBDIR / "nn_1.npy"
    assert I.find_curve("nn_5") is None
    assert I.available_arms() == ["lr_alpha_0.003", "nn_1", "nn_2", "ogd_beta_0.1"]
    # curves of different lengths from different folders are refused, naming where each came from
    _fake_data(tmp_path / "short", ["nn_1"], T=20)
    with pytest.raises(ValueError, match="different lengths") as info:
        I.load_curves(["nn_1", "nn_2"], data_dir=tmp_path / "short")
    assert str(tmp_path / "short" / I.SUBDIR) in str(info.value) and "\n" not in str(info.value)


def test_missing_data_error_says_where_and_how(no_default_folders, monkeypatch, tmp_path):
    with pytest.raises(I.MissingDataError) as info:
        I.imdb(data_dir=tmp_path / "arg")
    msg = str(info.value)
    assert "\n" not in msg
    for folder in (tmp_path / "arg" / I.SUBDIR, I.REPO_DATA / I.SUBDIR, I.SHARED_DATA / I.SUBDIR):
        assert str(folder) in msg  # every folder searched is named
    assert "hb data fetch-imdb" in msg and "HB_DATA_DIR" in msg and I.UPSTREAM_REPO in msg
    assert "lr_alpha_0.003.npy" in msg
    # the environment variable is honoured, and a partial folder names what is missing
    _fake_data(tmp_path / "env", ["nn_1"])
    monkeypatch.setenv("HB_DATA_DIR", str(tmp_path / "env"))
    with pytest.raises(I.MissingDataError, match="nn_2.npy") as info:
        I.imdb(arms=["nn_1", "nn_2"])
    assert "nn_1.npy" not in str(info.value)


def test_an_arm_that_is_not_committed_is_missing_in_a_bare_clone(committed_curves):
    """A clone with nothing beside it has the paper's seven arms; any other one is a one-line error."""
    assert I.available_arms() == sorted(I.PAPER_ARMS)
    with pytest.raises(I.MissingDataError, match="adagrad_alpha_1.npy") as info:
        I.load_curves(["nn_1", "adagrad_alpha_1"])
    assert "nn_1.npy" not in str(info.value) and "\n" not in str(info.value)


def test_loader_on_a_small_fake_folder(no_default_folders, tmp_path):
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


def test_loader_rejects_bad_arguments_and_files(no_default_folders, tmp_path):
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


def test_checkpoint_view_of_the_curves(no_default_folders, tmp_path):
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


def test_real_curves_shapes_names_and_optimal_arms(committed_curves):
    inst = I.imdb()
    assert inst.names == I.PAPER_ARMS
    assert inst.means.shape == (7, I.T_IMDB + 1) and inst.T_max == 50_000
    raw = np.load(I.REPO_DATA / I.SUBDIR / "nn_2.npy")
    np.testing.assert_array_equal(inst.means[inst.names.index("nn_2"), 1:], raw)
    assert np.all((inst.means >= 0) & (inst.means <= 1))
    # the optimal arm changes with the horizon: online gradient descent early, the 2-unit net late
    assert inst.names[optimal_arm(inst, 1_000)] == "ogd_beta_0.1"
    assert inst.names[optimal_arm(inst, 50_000)] == "nn_2"


def test_real_curves_are_not_monotone_and_the_isotonic_fit_is(committed_curves):
    inst = I.imdb()
    down = (np.diff(inst.means[:, 1:], axis=1) < 0).mean()
    assert 0.3 < down < 0.7  # about half the steps go down
    iso = I.imdb(isotonic=True)
    assert np.all(np.diff(iso.means, axis=1) >= 0)
    # the least-squares monotone fit keeps each curve's total (pool-adjacent-violators preserves sums)
    np.testing.assert_allclose(iso.means[:, 1:].sum(axis=1), inst.means[:, 1:].sum(axis=1), rtol=1e-12)
    assert iso.names[optimal_arm(iso, 50_000)] == "nn_2"


def test_fetched_curves_join_the_committed_ones(committed_curves, monkeypatch, tmp_path):
    """`hb data fetch-imdb` (network replaced by a fake) writes to ../shared/data by default, never into
    the repository, and the loader then mixes a fetched arm with the committed ones."""
    monkeypatch.setattr(I, "SHARED_DATA", tmp_path / "shared")
    fake = np.linspace(0.5, 0.9, I.T_IMDB)
    urls = []

    def download(url, timeout):
        urls.append(url)
        if url.endswith("LICENSE"):
            return b"licence text"
        buf = io.BytesIO()
        np.save(buf, fake)
        return buf.getvalue()

    monkeypatch.setattr(I, "_download", download)
    folder = I.fetch_imdb(arms=["adagrad_alpha_1", "nn_1"])
    assert folder == tmp_path / "shared" / I.SUBDIR
    assert sorted(p.name for p in folder.iterdir()) == ["LICENSE.source", "adagrad_alpha_1.npy", "nn_1.npy"]
    assert I.UPSTREAM_COMMIT in urls[0] and urllib.parse.quote("ADAGRAD alpha = 1_avg.npy") in urls[0]
    curves = I.load_curves(["nn_1", "adagrad_alpha_1"])
    assert I.find_curve("nn_1") == I.REPO_DATA / I.SUBDIR / "nn_1.npy"  # the committed copy comes first
    assert I.find_curve("adagrad_alpha_1") == folder / "adagrad_alpha_1.npy"
    np.testing.assert_array_equal(curves["adagrad_alpha_1"], fake)
    assert not np.array_equal(curves["nn_1"], fake)
