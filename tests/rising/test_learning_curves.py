"""The learning-curve generator: the labeledBow reader on a small generated file, each online
learner against a plain per-step implementation (the network against scikit-learn itself), and
the averaging over shuffled runs on a tiny data set."""
import numpy as np
import pytest
from sklearn.neural_network import MLPClassifier

from horizonbandits.rising import learning_curves as LC


def _write_bow(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{r} " + " ".join(f"{j}:{c}" for j, c in feats) + "\n" for r, feats in rows))


def _toy(n=80, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.0, (n, d)).astype(float)
    y = (X[:, 0] + 0.5 * X[:, 1] > X[:, 2] + 0.5).astype(np.int64)
    return X, y


def test_read_labeled_bow(tmp_path):
    path = tmp_path / "labeledBow.feat"
    _write_bow(path, [(9, [(0, 2), (3, 1)]), (2, [(1, 5), (7, 1)]), (7, [])])
    X, rating = LC.read_labeled_bow(path)
    assert rating.tolist() == [9, 2, 7]
    assert X.shape == (3, 8)  # 0-based indices: the largest index 7 needs 8 columns
    np.testing.assert_array_equal(X.toarray()[0], [2, 0, 0, 1, 0, 0, 0, 0])
    X4, _ = LC.read_labeled_bow(path, n_features=4)  # keep the first 4 words only
    np.testing.assert_array_equal(X4.toarray(), [[2, 0, 0, 1], [0, 5, 0, 0], [0, 0, 0, 0]])
    path.write_text("9 0:2 3\n")
    with pytest.raises(ValueError, match=":1: not a labeledBow line"):
        LC.read_labeled_bow(path)
    with pytest.raises(ValueError, match="path="):
        LC.read_labeled_bow(tmp_path / "nope.feat")


def test_load_aclimdb_merges_shuffles_and_labels(tmp_path):
    _write_bow(tmp_path / "train" / "labeledBow.feat", [(10, [(0, 1)]), (1, [(1, 1)]), (8, [(2, 3)])])
    _write_bow(tmp_path / "test" / "labeledBow.feat", [(4, [(0, 4)]), (6, [(5, 2)])])
    X, y = LC.load_aclimdb(tmp_path, n_features=3, seed=1)
    assert X.shape == (5, 3) and sorted(y.tolist()) == [0, 0, 1, 1, 1]
    # each row keeps its own label: rating > 5
    pairs = {tuple(row): label for row, label in zip(X.tolist(), y.tolist())}
    assert pairs[(1.0, 0.0, 0.0)] == 1 and pairs[(0.0, 1.0, 0.0)] == 0 and pairs[(4.0, 0.0, 0.0)] == 0
    X2, y2 = LC.load_aclimdb(tmp_path, n_features=3, n_samples=2, seed=1)
    np.testing.assert_array_equal(X2, X[:2])
    with pytest.raises(ValueError, match="acl_dir="):
        LC.load_aclimdb(tmp_path / "missing")


def _reference_linear(kind, step, X, y, order, radius=2.0, eps=1e-8):
    """The update rules of the public code, one sample at a time."""
    d = X.shape[1]
    w = np.ones(d) / d
    V = np.zeros(d)
    out = []
    for t, i in enumerate(order, 1):
        p = min(max(1 / (1 + np.exp(-w @ X[i])), 1e-4), 1 - 1e-4)
        out.append(int((p > 0.5) == y[i]))
        g = X[i] * (-y[i] * (1 - p) + (1 - y[i]) * p)
        if kind == "lr":
            w = w - step * (p - y[i]) * X[i]
        elif kind == "ogd":
            w = np.clip(w - step * g / np.sqrt(t), -radius, radius)
        else:
            V = V + g ** 2
            w = w - step * g / np.sqrt(V + eps)
    return np.array(out)


@pytest.mark.parametrize("learner,kind", [
    (LC.OnlineLogistic(0.05), "lr"), (LC.OnlineGradientDescent(0.3), "ogd"), (LC.AdaGrad(0.05), "ada"),
])
def test_linear_learners_follow_the_update_rules(learner, kind):
    X, y = _toy()
    order = np.random.default_rng(3).permutation(len(y))
    step = getattr(learner, "alpha", getattr(learner, "beta", None))
    np.testing.assert_array_equal(learner.run(X, y, order), _reference_linear(kind, step, X, y, order))


@pytest.mark.parametrize("hidden", [(2,), (2, 2), (1, 1, 2)])
def test_network_equals_sklearn_partial_fit(hidden):
    X, y = _toy(n=40, d=5, seed=2)
    order = np.random.default_rng(4).permutation(40)[:25]
    clf = MLPClassifier(hidden_layer_sizes=hidden, learning_rate_init=0.001, random_state=11)
    ours = LC.OnlineMLP(hidden)
    init = ours.initial_parameters(5, np.random.RandomState(11))  # scikit-learn's draws, in its order
    labels = []
    for k, i in enumerate(order):
        labels.append(int(clf.predict_proba(X[i:i + 1])[0, 1] > 0.5) if k else 0)  # unfitted: p = 1/2
        clf.partial_fit(X[i:i + 1], [y[i]], classes=[0, 1])
    flat = np.concatenate([np.concatenate([W.ravel(), b]) for W, b in zip(clf.coefs_, clf.intercepts_)])
    np.testing.assert_allclose(ours.trained_parameters(X, y, order, init), flat, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(ours.run(X, y, order, params=init), (np.array(labels) == y[order]).astype(int))


def test_learner_names_round_trip_and_validation():
    for name in ("lr_alpha_0.003", "ogd_beta_0.1", "adagrad_alpha_0.05", "nn_1", "nn_2-2", "nn_1-1-2"):
        assert LC.learner_from_name(name).name == name
    assert LC.learner_from_name("nn_1-1-2").hidden == (1, 1, 2)
    assert LC.OnlineMLP((2, 2)).n_parameters(10) == (10 * 2 + 2) + (2 * 2 + 2) + (2 + 1)
    with pytest.raises(ValueError, match="name="):
        LC.learner_from_name("svm")
    with pytest.raises(ValueError, match="hidden="):
        LC.OnlineMLP((0,))
    with pytest.raises(ValueError, match="alpha="):
        LC.OnlineLogistic(-1)
    with pytest.raises(ValueError, match="beta="):
        LC.OnlineGradientDescent(0)


def test_learning_curves_on_a_tiny_data_set():
    X, y = _toy(n=120, d=6)
    learners = ["lr_alpha_0.05", LC.OnlineGradientDescent(0.3), "nn_2"]
    curves = LC.learning_curves(learners, X, y, n_runs=7, T=100, seed=5)
    assert list(curves.columns) == ["lr_alpha_0.05", "ogd_beta_0.3", "nn_2"]
    assert curves.index[0] == 1 and curves.index[-1] == 100 and curves.index.name == "pull"
    np.testing.assert_allclose(curves.to_numpy() * 7, np.round(curves.to_numpy() * 7))  # shares of 7 runs
    # averaging over shuffled runs: each run is one prequential pass over a permutation
    again = LC.learning_curves(learners, X, y, n_runs=7, T=100, seed=5)
    assert curves.equals(again)
    assert not curves.equals(LC.learning_curves(learners, X, y, n_runs=7, T=100, seed=6))
    # the linear learners learn this nearly linear rule: late accuracy above early accuracy
    lr = curves["lr_alpha_0.05"].to_numpy()
    assert lr[60:].mean() > lr[:10].mean() + 0.1
    # the network answers 1/2 (label 0) before its first update
    assert curves["nn_2"].iloc[0] == pytest.approx(np.mean([1 - y[np.random.default_rng(
        np.random.SeedSequence(5, spawn_key=(r,))).permutation(120)[0]] for r in range(7)]))


def test_learning_curves_do_not_depend_on_the_number_of_jobs():
    X, y = _toy(n=60, d=4, seed=1)
    one = LC.learning_curves(["lr_alpha_0.05", "nn_1"], X, y, n_runs=5, seed=2)
    # threads exercise the same split-and-sum path as processes without their start-up time
    two = LC.learning_curves(["lr_alpha_0.05", "nn_1"], X, y, n_runs=5, seed=2, n_jobs=2, backend="threading")
    three = LC.learning_curves(["lr_alpha_0.05", "nn_1"], X, y, n_runs=5, seed=2, n_jobs=3, backend="threading")
    assert one.equals(two) and one.equals(three)


def test_learning_curves_validation():
    X, y = _toy(n=20, d=3)
    with pytest.raises(ValueError, match="n_runs="):
        LC.learning_curves(["nn_1"], X, y, n_runs=0)
    with pytest.raises(ValueError, match="T="):
        LC.learning_curves(["nn_1"], X, y, n_runs=1, T=21)
    with pytest.raises(ValueError, match="labels must be 0 or 1"):
        LC.learning_curves(["nn_1"], X, y + 1, n_runs=1)
    with pytest.raises(ValueError, match="distinct"):
        LC.learning_curves(["nn_1", "nn_1"], X, y, n_runs=1)


def test_curves_to_bandit_and_isotonic_fit():
    curves = {"a": np.array([0.5, 0.4, 0.7, 0.6, 0.9]), "b": np.array([0.6, 0.6, 0.6, 0.6, 0.6])}
    inst = LC.curves_instance(curves)
    assert inst.names == ("a", "b") and inst.T_max == 5 and inst.noise == "bernoulli"
    np.testing.assert_array_equal(inst.means[0], [0.5, 0.5, 0.4, 0.7, 0.6, 0.9])
    iso = LC.isotonic_instance(inst)
    np.testing.assert_allclose(iso.means[0], [0.45, 0.45, 0.45, 0.65, 0.65, 0.9])  # pooled violators
    np.testing.assert_array_equal(iso.means[1], inst.means[1])
    changes = LC.optimal_arm_changes(inst)
    # cumulative sums a: .5 .9 1.6 2.2 3.1, b: .6 1.2 1.8 2.4 3.0 -> b leads until T=4, a from T=5
    assert changes.to_dict("list") == {"from T": [1, 5], "optimal arm": ["b", "a"]}
    summary = LC.curve_summary(inst)
    assert summary.loc[0, "share of steps down"] == pytest.approx(0.5)
    assert summary.loc[0, "largest drop"] == pytest.approx(0.1)


def test_cached_learning_curves_match_the_plain_loop_and_are_read_back(tmp_path, monkeypatch):
    X, y = _toy(n=60, d=4, seed=3)
    learners = ["lr_alpha_0.05", "nn_1"]
    monkeypatch.setattr(LC, "CACHE_CHUNK_RUNS", 3)  # 7 runs -> chunks of 3, 3 and 1
    plain = LC.learning_curves(learners, X, y, n_runs=7, seed=4)
    cached = LC.learning_curves(learners, X, y, n_runs=7, seed=4, cache=True, cache_dir=tmp_path)
    assert plain.equals(cached)
    assert len(list(tmp_path.rglob("*.hbc"))) == 3
    # a second call reads the chunks back instead of running them
    monkeypatch.setattr(LC, "_run_chunk", lambda *a: (_ for _ in ()).throw(AssertionError("recomputed")))
    assert plain.equals(LC.learning_curves(learners, X, y, n_runs=7, seed=4, cache=True, cache_dir=tmp_path))
    with pytest.raises(ValueError, match="n_jobs=0"):
        LC.learning_curves(learners, X, y, n_runs=7, n_jobs=0)
