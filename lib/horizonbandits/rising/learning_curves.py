"""Learning curves of online classifiers, and rising-bandit instances built from them.

This rebuilds the pipeline that produced the IMDB curves of the rested rising-bandit experiment
(Metelli, Trovò, Pirola, Restelli, "Stochastic Rising Bandits", ICML 2022, section 7; public code
albertometelli/stochastic-rising-bandits, ``src/IMDB_learning_curves_generator.py``), which the
CURE-UCB paper (Song et al. 2026, section 6.3) reuses:

- an arm is an online learner; pulling it shows the learner one more sample: it first predicts
  the sample's label (the reward is 1 when the prediction is right) and then trains on it
  (prequential evaluation: every prediction is on a sample the learner has not seen);
- a run shuffles the data and feeds it to the learner one sample at a time; the curve is the
  share of correct predictions at each update, averaged over ``n_runs`` shuffled runs. Entry
  n - 1 of a curve is therefore the expected reward mu(n) of the n-th pull.

Learners (names match the files of the published curves):

- ``lr_alpha_A``  :class:`OnlineLogistic`, SGD on the logistic loss, w <- w - A (p - y) x;
- ``ogd_beta_B``  :class:`OnlineGradientDescent`, w <- Proj_[-2, 2](w - B (p - y) x / sqrt(t));
- ``adagrad_alpha_A`` :class:`AdaGrad`, w <- w - A g / sqrt(sum of g^2 + 1e-8), coordinatewise;
- ``nn_H``        :class:`OnlineMLP`, the network of scikit-learn's ``MLPClassifier`` (ReLU
  hidden layers of sizes H, logistic output, log-loss, L2 penalty 1e-4, Adam with step 0.001)
  trained by one ``partial_fit`` per sample, re-implemented in numba (the scikit-learn call costs
  about 4 ms per sample here; a test checks that both give the same weights).

The three linear learners start from w = (1/d, ..., 1/d), predict p = sigmoid(w.x) clipped to
[1e-4, 1 - 1e-4] and label 1 when p > 0.5, as in the public code. The network, like the public
code, answers p = 1/2 (label 0) before its first update.

Conventions of ours (documented, parameters where they matter): a run shares one shuffled order
among all learners (common random numbers; the public code shuffled each learner separately,
which gives the same expected curves); each run's order and network initialisation come from
``SeedSequence(seed, spawn_key=(run,))``, and the per-run correct counts are summed as integers,
so the curves do not depend on ``n_jobs``.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from numba import njit

from ..errors import check_int, check_real
from .. import seeds
from .instances import RisingInstance

# --------------------------------------------------------------------------------------------
# Reading the aclImdb bag-of-words files
# --------------------------------------------------------------------------------------------


def read_labeled_bow(path, n_features: int | None = None):
    """Read an aclImdb ``labeledBow.feat`` file (Maas et al. 2011).

    Each line is ``<rating> <index>:<count> <index>:<count> ...`` with 0-based word indices (the
    LIBSVM layout). Returns ``(X, rating)``: a scipy CSR matrix of counts (float64) with
    ``n_features`` columns (the first ``n_features`` words of the vocabulary, which is sorted by
    frequency; all words when None) and the integer ratings (1-4 negative, 7-10 positive).
    """
    from scipy.sparse import csr_matrix

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path={str(path)!r} is not allowed: no such file (expected an aclImdb labeledBow.feat file)")
    if n_features is not None:
        n_features = check_int("n_features", n_features, 1)
    ratings, indptr, indices, counts = [], [0], [], []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.split()
            if not parts:
                continue
            try:
                ratings.append(int(float(parts[0])))
                for item in parts[1:]:
                    j, c = item.split(":")
                    j = int(j)
                    if j < 0:
                        raise ValueError
                    if n_features is None or j < n_features:
                        indices.append(j)
                        counts.append(float(c))
            except ValueError:
                raise ValueError(f"{path}:{lineno}: not a labeledBow line (expected '<rating> <index>:<count> ...')") from None
            indptr.append(len(indices))
    width = n_features if n_features is not None else (max(indices) + 1 if indices else 0)
    X = csr_matrix((np.array(counts, dtype=np.float64), np.array(indices, dtype=np.int64),
                    np.array(indptr, dtype=np.int64)), shape=(len(ratings), width))
    X.sum_duplicates()
    return X, np.array(ratings, dtype=np.int64)


def load_aclimdb(acl_dir, n_features: int = 1000, n_samples: int | None = None, seed: int = 0):
    """The data set of the IMDB curves: train and test ``labeledBow.feat`` merged, shuffled with
    ``seed``, the first ``n_samples`` reviews (all when None) and the first ``n_features`` word
    counts kept, label y = 1{rating > 5}. Returns a dense float64 X and an int64 y."""
    acl_dir = Path(acl_dir)
    parts = []
    for split in ("train", "test"):
        found = [acl_dir / split / f for f in ("labeledBow.feat", "labeledBoW.feat") if (acl_dir / split / f).is_file()]
        if not found:
            raise ValueError(f"acl_dir={str(acl_dir)!r} is not allowed: {split}/labeledBow.feat is missing "
                             "(expected the unpacked aclImdb_v1 folder)")
        parts.append(read_labeled_bow(found[0], n_features))
    from scipy.sparse import vstack
    X = vstack([p[0] for p in parts]).tocsr()
    rating = np.concatenate([p[1] for p in parts])
    order = seeds.data_generator(check_int("seed", seed, 0)).permutation(len(rating))
    if n_samples is not None:
        order = order[: check_int("n_samples", n_samples, 1)]
    return X[order].toarray(), (rating[order] > 5).astype(np.int64)


# --------------------------------------------------------------------------------------------
# Online learners
# --------------------------------------------------------------------------------------------

_LR, _OGD, _ADAGRAD = 0, 1, 2
P_CLIP = 1e-4  # the public code clips predicted probabilities to [1e-4, 1 - 1e-4]


def _fmt(x: float) -> str:
    return f"{x:g}"


@dataclass(frozen=True)
class OnlineLogistic:
    """Logistic regression trained by SGD with constant step alpha: w <- w - alpha (p - y) x."""

    alpha: float = 0.003

    def __post_init__(self):
        object.__setattr__(self, "alpha", check_real("alpha", self.alpha, 0.0, lo_open=True))

    @property
    def name(self) -> str:
        return f"lr_alpha_{_fmt(self.alpha)}"

    def run(self, X, y, order, rng=None) -> np.ndarray:
        return _linear_run(X, y, order, _LR, self.alpha, 0.0, 0.0)


@dataclass(frozen=True)
class OnlineGradientDescent:
    """Online gradient descent on the logistic loss with step beta / sqrt(t), projected on
    [-radius, radius]^d (Zinkevich 2003): w <- clip(w - beta (p - y) x / sqrt(t), -2, 2)."""

    beta: float = 0.1
    radius: float = 2.0

    def __post_init__(self):
        object.__setattr__(self, "beta", check_real("beta", self.beta, 0.0, lo_open=True))
        object.__setattr__(self, "radius", check_real("radius", self.radius, 0.0, lo_open=True))

    @property
    def name(self) -> str:
        return f"ogd_beta_{_fmt(self.beta)}"

    def run(self, X, y, order, rng=None) -> np.ndarray:
        return _linear_run(X, y, order, _OGD, self.beta, self.radius, 0.0)


@dataclass(frozen=True)
class AdaGrad:
    """Diagonal AdaGrad on the logistic loss (Duchi, Hazan, Singer 2011):
    V <- V + g^2, w <- w - alpha g / sqrt(V + eps), with g = (p - y) x."""

    alpha: float = 0.05
    eps: float = 1e-8

    def __post_init__(self):
        object.__setattr__(self, "alpha", check_real("alpha", self.alpha, 0.0, lo_open=True))
        object.__setattr__(self, "eps", check_real("eps", self.eps, 0.0, lo_open=True))

    @property
    def name(self) -> str:
        return f"adagrad_alpha_{_fmt(self.alpha)}"

    def run(self, X, y, order, rng=None) -> np.ndarray:
        return _linear_run(X, y, order, _ADAGRAD, self.alpha, 0.0, self.eps)


@dataclass(frozen=True)
class OnlineMLP:
    """scikit-learn's ``MLPClassifier(hidden_layer_sizes=hidden, learning_rate_init=...)`` trained
    by one ``partial_fit`` per sample, re-implemented step for step:

    - Glorot-uniform initialisation: every weight and bias of a layer with fan-in a and fan-out b
      drawn from U(-sqrt(6 / (a + b)), +sqrt(6 / (a + b))), layer by layer, weights then biases;
    - forward pass: ReLU hidden layers, logistic output p;
    - gradient of the log-loss plus (l2 / 2) ||W||^2 on one sample: output delta p - y, hidden
      deltas back-propagated through the current weights and zeroed where the unit is 0;
      weight gradient a delta^T + l2 W, bias gradient delta;
    - Adam (Kingma and Ba 2015) with scikit-learn's defaults beta1 = 0.9, beta2 = 0.999,
      eps = 1e-8: step learning_rate sqrt(1 - beta2^t) / (1 - beta1^t) m / (sqrt(v) + eps).

    Before its first update the network predicts p = 1/2, as the public code did (scikit-learn
    raises NotFittedError and the code answered 1/2).
    """

    hidden: tuple = (2,)
    learning_rate: float = 0.001
    l2: float = 1e-4

    def __post_init__(self):
        hidden = tuple(self.hidden) if isinstance(self.hidden, (tuple, list)) else (self.hidden,)
        if not hidden or any(isinstance(h, bool) or not isinstance(h, (int, np.integer)) or h < 1 for h in hidden):
            raise ValueError(f"hidden={self.hidden!r} is not allowed: expected a non-empty tuple of layer sizes >= 1")
        object.__setattr__(self, "hidden", tuple(int(h) for h in hidden))
        object.__setattr__(self, "learning_rate", check_real("learning_rate", self.learning_rate, 0.0, lo_open=True))
        object.__setattr__(self, "l2", check_real("l2", self.l2, 0.0))

    @property
    def name(self) -> str:
        return "nn_" + "-".join(str(h) for h in self.hidden)

    def sizes(self, d: int) -> np.ndarray:
        return np.array([d, *self.hidden, 1], dtype=np.int64)

    def n_parameters(self, d: int) -> int:
        s = self.sizes(d)
        return int(sum(s[i] * s[i + 1] + s[i + 1] for i in range(len(s) - 1)))

    def initial_parameters(self, d: int, rng) -> np.ndarray:
        """Flat parameter vector [W_0, b_0, W_1, b_1, ...] (W_l row-major, fan_in x fan_out) drawn
        like scikit-learn's ``_init_coef``; ``rng`` is a numpy Generator or RandomState."""
        s = self.sizes(d)
        parts = []
        for a, b in zip(s[:-1], s[1:]):
            bound = math.sqrt(6.0 / (a + b))
            parts.append(np.asarray(rng.uniform(-bound, bound, (a, b)), dtype=np.float64).ravel())
            parts.append(np.asarray(rng.uniform(-bound, bound, b), dtype=np.float64))
        return np.concatenate(parts)

    def run(self, X, y, order, rng=None, params=None) -> np.ndarray:
        X = np.ascontiguousarray(X, dtype=np.float64)
        if params is None:
            rng = np.random.default_rng(0) if rng is None else rng
            params = self.initial_parameters(X.shape[1], rng)
        correct, _ = _mlp_run(X, np.asarray(y, dtype=np.int64), np.asarray(order, dtype=np.int64),
                              self.sizes(X.shape[1]), params.copy(), self.learning_rate, self.l2)
        return correct

    def trained_parameters(self, X, y, order, params) -> np.ndarray:
        """The flat parameters after training on X[order] from ``params`` (used by the tests)."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        _, out = _mlp_run(X, np.asarray(y, dtype=np.int64), np.asarray(order, dtype=np.int64),
                          self.sizes(X.shape[1]), params.copy(), self.learning_rate, self.l2)
        return out


def learner_from_name(name: str):
    """The learner of a curve file name: ``lr_alpha_0.003``, ``ogd_beta_0.1``,
    ``adagrad_alpha_0.05``, ``nn_2-2``."""
    patterns = [
        (r"lr_alpha_([0-9.eE+-]+)", lambda v: OnlineLogistic(float(v))),
        (r"ogd_beta_([0-9.eE+-]+)", lambda v: OnlineGradientDescent(float(v))),
        (r"adagrad_alpha_([0-9.eE+-]+)", lambda v: AdaGrad(float(v))),
        (r"nn_([0-9]+(?:-[0-9]+)*)", lambda v: OnlineMLP(tuple(int(h) for h in v.split("-")))),
    ]
    for pattern, make in patterns:
        m = re.fullmatch(pattern, str(name))
        if m:
            return make(m.group(1))
    raise ValueError(f"name={name!r} is not allowed: expected lr_alpha_A, ogd_beta_B, adagrad_alpha_A or nn_H1-H2-...")


# --------------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _sigmoid(z):
    # expit without overflow for large |z|
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@njit(cache=True)
def _linear_run(X, y, order, kind, step, radius, eps):
    """One prequential pass of a linear learner over X[order]: 1 where the prediction was right."""
    d = X.shape[1]
    w = np.full(d, 1.0 / d)
    V = np.zeros(d)
    correct = np.zeros(order.size, dtype=np.uint8)
    for t in range(order.size):
        x = X[order[t]]
        target = y[order[t]]
        z = 0.0
        for j in range(d):
            z += w[j] * x[j]
        p = min(max(_sigmoid(z), P_CLIP), 1.0 - P_CLIP)
        correct[t] = 1 if (p > 0.5) == (target == 1) else 0
        r = p - target  # gradient of the log-loss in z
        if kind == 0:
            for j in range(d):
                w[j] -= step * r * x[j]
        elif kind == 1:
            scale = step / math.sqrt(t + 1.0)
            for j in range(d):
                v = w[j] - scale * (r * x[j])
                w[j] = min(max(v, -radius), radius)
        else:
            for j in range(d):
                g = r * x[j]
                V[j] += g * g
                w[j] -= step * g / math.sqrt(V[j] + eps)
    return correct


@njit(cache=True)
def _mlp_run(X, y, order, sizes, params, lr, l2):
    """Prequential pass of the scikit-learn MLP (see :class:`OnlineMLP`); returns (correct, params)."""
    L = sizes.size - 1
    w_off = np.zeros(L, dtype=np.int64)
    b_off = np.zeros(L, dtype=np.int64)
    a_off = np.zeros(L + 2, dtype=np.int64)
    pos = 0
    for l in range(L):
        w_off[l] = pos
        pos += sizes[l] * sizes[l + 1]
        b_off[l] = pos
        pos += sizes[l + 1]
    for l in range(L + 1):
        a_off[l + 1] = a_off[l] + sizes[l]
    act = np.zeros(a_off[L + 1])
    delta = np.zeros(a_off[L + 1])
    grad = np.zeros(params.size)
    m = np.zeros(params.size)
    v = np.zeros(params.size)
    b1, b2, adam_eps = 0.9, 0.999, 1e-8
    d = sizes[0]
    correct = np.zeros(order.size, dtype=np.uint8)
    for t in range(order.size):
        x = X[order[t]]
        target = y[order[t]]
        for j in range(d):
            act[j] = x[j]
        # forward pass
        for l in range(L):
            fi, fo = sizes[l], sizes[l + 1]
            for k in range(fo):
                z = 0.0
                for j in range(fi):
                    z += act[a_off[l] + j] * params[w_off[l] + j * fo + k]
                z += params[b_off[l] + k]
                if l < L - 1:
                    act[a_off[l + 1] + k] = z if z > 0.0 else 0.0
                else:
                    act[a_off[l + 1] + k] = _sigmoid(z)
        p = act[a_off[L]] if t > 0 else 0.5  # not fitted before the first update
        correct[t] = 1 if (p > 0.5) == (target == 1) else 0
        # backward pass with the current weights (all gradients before any update)
        delta[a_off[L]] = act[a_off[L]] - target
        for l in range(L - 1, -1, -1):
            fi, fo = sizes[l], sizes[l + 1]
            for j in range(fi):
                for k in range(fo):
                    wi = w_off[l] + j * fo + k
                    grad[wi] = act[a_off[l] + j] * delta[a_off[l + 1] + k] + l2 * params[wi]
            for k in range(fo):
                grad[b_off[l] + k] = delta[a_off[l + 1] + k]
            if l > 0:
                for j in range(fi):
                    s = 0.0
                    for k in range(fo):
                        s += delta[a_off[l + 1] + k] * params[w_off[l] + j * fo + k]
                    delta[a_off[l] + j] = s if act[a_off[l] + j] != 0.0 else 0.0
        # Adam step
        step = t + 1
        lr_t = lr * math.sqrt(1.0 - b2 ** step) / (1.0 - b1 ** step)
        for i in range(params.size):
            m[i] = b1 * m[i] + (1.0 - b1) * grad[i]
            v[i] = b2 * v[i] + (1.0 - b2) * (grad[i] * grad[i])
            params[i] += -lr_t * m[i] / (math.sqrt(v[i]) + adam_eps)
    return correct, params


# --------------------------------------------------------------------------------------------
# Averaging over shuffled runs
# --------------------------------------------------------------------------------------------


def _as_learners(learners) -> list:
    if isinstance(learners, Mapping):
        items = list(learners.values())
    elif isinstance(learners, (str, bytes)) or not isinstance(learners, Sequence):
        items = [learners]
    else:
        items = list(learners)
    out = [learner_from_name(x) if isinstance(x, str) else x for x in items]
    if not out:
        raise ValueError("learners=[] is not allowed: expected at least one learner")
    for x in out:
        if not hasattr(x, "run") or not hasattr(x, "name"):
            raise ValueError(f"learners contains {x!r}: expected learner objects (OnlineLogistic, ...) or names")
    names = [x.name for x in out]
    if len(set(names)) != len(names):
        raise ValueError(f"learners={names!r} is not allowed: names must be distinct")
    return out


def _run_chunk(learners, X, y, runs, T, seed):
    counts = np.zeros((len(learners), T), dtype=np.int64)
    for r in runs:
        rng = seeds.run_generator(seed, r)
        order = rng.permutation(X.shape[0])[:T].astype(np.int64)
        for i, learner in enumerate(learners):
            counts[i] += learner.run(X, y, order, rng)
    return counts


def _chunk_counts(learners, X, y, start, stop, T, seed) -> dict:
    return {"counts": _run_chunk(learners, X, y, range(start, stop), T, seed)}


def _cached_counts(learners, X, y, n_runs, T, seed, n_jobs, backend, cache_dir, progress) -> np.ndarray:
    """The summed counts of runs 0..n_runs-1, computed as cached tasks of CACHE_CHUNK_RUNS runs each."""
    from ..compute.cache import code_digest, digest
    from ..compute.tasks import Task, fingerprint, run_cached

    data = digest(X.shape, X.tobytes(), y.tobytes())
    who = [fingerprint(x) for x in learners]
    code = code_digest("rising")

    def check(arrays, size):
        counts = arrays.get("counts")
        if counts is None or counts.shape != (len(learners), T) or counts.dtype.kind not in "iu":
            return "counts missing or of the wrong shape"
        if counts.min(initial=0) < 0 or counts.max(initial=0) > size:
            return "counts out of range"
        return None

    tasks = []
    for start in range(0, n_runs, CACHE_CHUNK_RUNS):
        stop = min(start + CACHE_CHUNK_RUNS, n_runs)
        tasks.append(Task(key=digest("learning_curves/1", code, who, data, T, seed, start, stop), fn=_chunk_counts,
                          args=(learners, X, y, start, stop, T, seed), cost=float(stop - start),
                          check=lambda arrays, size=stop - start: check(arrays, size)))
    parts = run_cached(tasks, backend=backend, n_jobs=n_jobs, cache=True, cache_dir=cache_dir, progress=progress,
                       what="learning_curves")
    return np.sum([p["counts"] for p in parts], axis=0)


# Runs per cached task of ``learning_curves(..., cache=True)``. The counts are integer sums, so the
# curves are the same for any split; a fixed size keeps the cache keys independent of n_jobs.
CACHE_CHUNK_RUNS = 50


def learning_curves(learners, X, y, n_runs: int, T: int | None = None, seed: int = 0,
                    n_jobs: int = 1, backend: str = "loky", cache: bool = False, cache_dir=None,
                    progress: bool = False) -> pd.DataFrame:
    """Expected prequential accuracy of each learner after each online update.

    ``learners``: learner objects or curve names (``"nn_2-2"``), a list or a dict. ``X`` (n x d)
    and ``y`` (labels 0/1). Each of the ``n_runs`` runs shuffles the n samples, takes the first T
    (all when None) and feeds them one at a time to every learner. Returns a DataFrame indexed by
    the update n = 1..T (name ``pull``) with one column per learner: the share of runs whose n-th
    prediction was right, an estimate of mu(n). ``n_jobs`` > 1 splits the runs over joblib
    workers (``backend``: "loky" processes by default, -1 = every core); the result is the same for any
    ``n_jobs``. ``cache=True`` runs the runs in chunks of ``CACHE_CHUNK_RUNS`` as cached tasks
    (``compute.tasks.run_cached``: ``cache_dir``, else ``$HB_CACHE_DIR``, else outputs/cache;
    ``backend`` then one of "loky", "dask", "sequential"), so a rerun reads them back, with a progress
    bar if ``progress``.
    """
    learners = _as_learners(learners)
    X = np.ascontiguousarray(np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64))
    y = np.asarray(y)
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise ValueError(f"X and y must be (n, d) and (n,), got shapes {X.shape} and {y.shape}")
    if not np.all(np.isin(y, (0, 1))):
        raise ValueError(f"y contains {sorted(set(np.unique(y).tolist()) - {0, 1})[:5]}: labels must be 0 or 1")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains non-finite values: features must be finite numbers")
    y = y.astype(np.int64)
    n_runs = check_int("n_runs", n_runs, 1)
    T = X.shape[0] if T is None else check_int("T", T, 1, X.shape[0])
    seed = check_int("seed", seed, 0)
    n_jobs = check_int("n_jobs", n_jobs)
    if n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"n_jobs={n_jobs} is not allowed: expected a positive number of workers or -1 for all cores")
    runs = np.arange(n_runs)
    if cache:
        counts = _cached_counts(learners, X, y, n_runs, T, seed, n_jobs, backend, cache_dir, progress)
    elif n_jobs == 1:
        counts = _run_chunk(learners, X, y, runs, T, seed)
    else:
        from joblib import Parallel, delayed
        from ..compute.executor import workers_for
        chunks = [c for c in np.array_split(runs, workers_for(n_jobs)) if c.size]
        parts = Parallel(n_jobs=n_jobs, backend=backend)(delayed(_run_chunk)(learners, X, y, c, T, seed) for c in chunks)
        counts = np.sum(parts, axis=0)  # integer sums: exact whatever the split
    curves = counts / n_runs
    index = pd.RangeIndex(1, T + 1, name="pull")
    return pd.DataFrame(curves.T, index=index, columns=[x.name for x in learners])


# --------------------------------------------------------------------------------------------
# Curves -> rising bandit
# --------------------------------------------------------------------------------------------


def _curves_array(curves, names=None):
    if isinstance(curves, pd.DataFrame):
        return curves.to_numpy(dtype=np.float64).T, list(curves.columns) if names is None else names
    if isinstance(curves, Mapping):
        return np.vstack([np.asarray(v, dtype=np.float64) for v in curves.values()]), \
            list(curves.keys()) if names is None else names
    return np.atleast_2d(np.asarray(curves, dtype=np.float64)), names


def curves_instance(curves, names=None, noise="bernoulli", T_max: int | None = None) -> RisingInstance:
    """A rising bandit whose n-th pull of arm i has mean ``curves[i][n - 1]``.

    ``curves``: a DataFrame from :func:`learning_curves` (columns are arms), a dict name -> curve,
    or a (K, T) array. mu_i(0), which no pull ever has, is set to mu_i(1) (the value before any
    pull is only read by the deterministic conventions of the proofs). ``T_max`` truncates.
    Bernoulli rewards by default: the reward of a pull is 1{prediction correct}.
    """
    arr, names = _curves_array(curves, names)
    if T_max is not None:
        arr = arr[:, : check_int("T_max", T_max, 1, arr.shape[1])]
    means = np.hstack([arr[:, :1], arr])
    return RisingInstance(means, names, noise)


def isotonic_curves(curves: np.ndarray) -> np.ndarray:
    """The closest nondecreasing curve in least squares to each row (pool adjacent violators)."""
    from scipy.optimize import isotonic_regression
    arr = np.atleast_2d(np.asarray(curves, dtype=np.float64))
    return np.vstack([isotonic_regression(row, increasing=True).x for row in arr])


def isotonic_instance(inst: RisingInstance) -> RisingInstance:
    """The same bandit with every mean curve replaced by its isotonic (monotone) least-squares fit
    over the pulls n = 1..T_max (mu(0) kept equal to the fitted mu(1))."""
    fitted = isotonic_curves(inst.means[:, 1:])
    return RisingInstance(np.hstack([fitted[:, :1], fitted]), inst.names, inst.noise)


def curve_summary(inst: RisingInstance, horizons=None) -> pd.DataFrame:
    """Per arm: first and last mean, share of pull-to-pull steps that go down, largest drop, and the
    cumulative reward at each horizon in ``horizons`` (default: T_max)."""
    horizons = [inst.T_max] if horizons is None else list(horizons)
    m = inst.means[:, 1:]
    steps = np.diff(m, axis=1)
    rows = {
        "arm": list(inst.names),
        "mu(1)": m[:, 0],
        "mu(T_max)": m[:, -1],
        "max mu": m.max(axis=1),
        "share of steps down": (steps < 0).mean(axis=1),
        "largest drop": -steps.min(axis=1),
    }
    for T in horizons:
        rows[f"sum mu, T={T}"] = inst.cumulative(T)
    return pd.DataFrame(rows)


def optimal_arm_changes(inst: RisingInstance) -> pd.DataFrame:
    """Every horizon T at which the optimal arm argmax_i sum_{n<=T} mu_i(n) changes (first row T=1)."""
    best = np.argmax(inst.prefix[:, 1:], axis=0)
    starts = np.concatenate([[0], np.nonzero(np.diff(best))[0] + 1])
    return pd.DataFrame({"from T": starts + 1, "optimal arm": [inst.names[best[s]] for s in starts]})
