"""The IMDB online model-selection bandit on real learning curves (CURE-UCB paper, section 6.3).

The curves come from the code of "Stochastic Rising Bandits" (Metelli, Trovò, Pirola, Restelli,
ICML 2022; public repository albertometelli/stochastic-rising-bandits, folder
``data/learning curves/npy``, MIT licence): for each online learner, its expected prequential
accuracy at each of 50,000 online updates on IMDB reviews, averaged over 1,000 shuffled runs.
The seven curves of the paper's arm set ship with the workbook in ``data/imdb-learning-curves/``
(exact copies, with the source's licence); the other 22 come from ``hb data fetch-imdb``. Each arm
is looked up on its own, first match wins, in these data folders: the ``data_dir`` argument, the
``HB_DATA_DIR`` environment variable, the repository's ``data/``, then ``../shared/data`` beside
the repository. In each folder the curves live in the sub-folder ``imdb-learning-curves/`` (or in
the folder itself) as ``<arm>.npy``.
"""
from __future__ import annotations

import io
import os
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import check_int
from ..outputs import REPO_ROOT, atomic_write, atomic_write_text
from .instances import RisingInstance
from .learning_curves import OnlineMLP, curves_instance, isotonic_instance, learner_from_name
from .loaders import read_npy

#: The arm set of the ICML 2022 IMDB experiment, reused by the CURE-UCB paper (T = 50,000).
PAPER_ARMS = ("lr_alpha_0.003", "ogd_beta_0.1", "nn_1", "nn_2", "nn_2-2", "nn_2-2-2", "nn_1-1-2")

#: Every curve published with that code (names of the files in imdb-learning-curves/).
ALL_ARMS = tuple(
    [f"adagrad_alpha_{a}" for a in ("0.001", "0.003", "0.05", "0.25", "0.5", "1")]
    + [f"lr_alpha_{a}" for a in ("0.001", "0.003", "0.1", "0.25", "0.5", "1")]
    + [f"nn_{h}" for h in ("1", "2", "3", "4", "5", "1-1", "1-2", "2-2", "1-1-1", "1-1-2", "2-2-2")]
    + [f"ogd_beta_{b}" for b in ("0.0001", "0.003", "0.1", "0.25", "0.5", "1")]
)

SUBDIR = "imdb-learning-curves"
T_IMDB = 50_000
N_FEATURES = 1000  # bag-of-words features the learners used
UPSTREAM_REPO = "albertometelli/stochastic-rising-bandits"
UPSTREAM_COMMIT = "2b49e82e734e64afe554befc95dfaf7d8e9cae41"
UPSTREAM_FOLDER = "data/learning curves/npy"


class MissingDataError(FileNotFoundError):
    """The IMDB learning curves are not where the loader looked."""


#: The repository's own data folder: the paper's seven curves are committed there.
REPO_DATA = Path(REPO_ROOT) / "data"
#: The shared data folder beside the repository (all 29 curves on the project's machines).
SHARED_DATA = Path(REPO_ROOT).parent / "shared" / "data"


def _given(data_dir) -> bool:
    return data_dir is not None and str(data_dir) != ""


def data_root(data_dir=None) -> Path:
    """The folder ``hb data fetch-imdb`` writes to: ``data_dir``, else ``$HB_DATA_DIR``, else
    ``../shared/data`` beside the repository (never the repository's ``data/``, so downloads do not
    show up as untracked files)."""
    if _given(data_dir):
        return Path(data_dir).expanduser()
    env = os.environ.get("HB_DATA_DIR", "")
    return Path(env).expanduser() if env else SHARED_DATA


def search_roots(data_dir=None) -> list[Path]:
    """The data folders the loader searches, in order: ``data_dir``, ``$HB_DATA_DIR``, the
    repository's ``data/``, ``../shared/data`` (each at most once)."""
    roots = [Path(data_dir).expanduser()] if _given(data_dir) else []
    env = os.environ.get("HB_DATA_DIR", "")
    if env:
        roots.append(Path(env).expanduser())
    roots += [REPO_DATA, SHARED_DATA]
    return list(dict.fromkeys(roots))


def curves_dir(data_dir=None) -> Path:
    """Folder holding ``<arm>.npy`` inside one data folder (``data_root(data_dir)`` by default):
    ``<data folder>/imdb-learning-curves``, or the data folder itself when the files sit there."""
    root = data_root(data_dir)
    if not (root / SUBDIR).is_dir() and any(root.glob("*.npy")):
        return root
    return root / SUBDIR


def search_folders(data_dir=None) -> list[Path]:
    """The curve folders of :func:`search_roots`, in the same order."""
    return list(dict.fromkeys(curves_dir(root) for root in search_roots(data_dir)))


def find_curve(arm: str, data_dir=None) -> Path | None:
    """The file of ``arm`` in the first search folder that has it, or None."""
    for folder in search_folders(data_dir):
        if (folder / f"{arm}.npy").is_file():
            return folder / f"{arm}.npy"
    return None


def missing_data_message(folders, missing) -> str:
    folders = [folders] if isinstance(folders, (str, Path)) else list(folders)
    places = ", ".join(str(f) for f in folders)
    missing = list(missing)
    shown = ", ".join(f"{a}.npy" for a in missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
    return (f"IMDB learning curves not found: {shown} missing in {places}. Put the curve files in one of these "
            f"(folder '{UPSTREAM_FOLDER}' of github.com/{UPSTREAM_REPO}, saved as <arm>.npy), or point "
            f"HB_DATA_DIR or data_dir to a folder holding {SUBDIR}/, or download them with `hb data fetch-imdb`.")


def available_arms(data_dir=None) -> list[str]:
    """Arm names whose curve file is present in at least one search folder."""
    return sorted({p.stem for folder in search_folders(data_dir) if folder.is_dir() for p in folder.glob("*.npy")})


def load_curves(arms=PAPER_ARMS, data_dir=None) -> pd.DataFrame:
    """The raw curves as a DataFrame (index: update n = 1..50,000; one column per arm). Each arm is
    read from the first folder of :func:`search_folders` that has it."""
    arms = _check_arms(arms)
    files = {a: find_curve(a, data_dir) for a in arms}
    missing = [a for a, path in files.items() if path is None]
    if missing:
        raise MissingDataError(missing_data_message(search_folders(data_dir), missing))
    cols = {}
    for a, path in files.items():
        c = read_npy(path)
        if c.ndim != 1 or c.size < 2 or not np.all(np.isfinite(c)) or c.min() < 0 or c.max() > 1:
            raise ValueError(f"{path} is not a learning curve: expected a 1-D array of accuracies in [0, 1]")
        cols[a] = c.astype(np.float64)
    lengths = {c.size for c in cols.values()}
    if len(lengths) != 1:
        where = ", ".join(f"{a} ({cols[a].size}) from {files[a].parent}" for a in arms)
        raise ValueError(f"the curves have different lengths: {where}; expected equal lengths")
    n = lengths.pop()
    return pd.DataFrame(cols, index=pd.RangeIndex(1, n + 1, name="pull"))


def imdb(arms=PAPER_ARMS, data_dir=None, noise="bernoulli", T_max: int | None = None,
         isotonic: bool = False) -> RisingInstance:
    """The IMDB model-selection bandit of section 6.3 as a :class:`RisingInstance`.

    Arm i is an online classifier; its n-th pull has mean mu_i(n) = entry n - 1 of its curve file
    (the expected accuracy of its prediction at its n-th online update), so T_max = 50,000.
    mu_i(0), the value before any pull, is set to mu_i(1). Rewards are Bernoulli with these means
    (the reward of a pull is 1{prediction correct}), as in the original experiment; ``noise``
    overrides the model. ``isotonic=True`` replaces each curve by its monotone least-squares fit
    (the raw curves go down at about half the steps). ``T_max`` truncates the curves.
    """
    inst = curves_instance(load_curves(arms, data_dir), noise=noise, T_max=T_max)
    return isotonic_instance(inst) if isotonic else inst


def _check_arms(arms) -> list[str]:
    if isinstance(arms, str):
        arms = [arms]
    arms = [str(a) for a in arms]
    if len(arms) < 2 or len(set(arms)) != len(arms):
        raise ValueError(f"arms={arms!r} is not allowed: expected at least 2 distinct curve names such as {PAPER_ARMS[:2]}")
    return arms


# --------------------------------------------------------------------------------------------
# The curves as checkpoint trajectories (the second, real input of the LLM-selection pipeline)
# --------------------------------------------------------------------------------------------


def parameter_count(arm: str, n_features: int = N_FEATURES) -> int:
    """Number of trained parameters of an IMDB learner: d weights for the linear learners (no
    intercept in the public code), sum over layers of fan_in fan_out + fan_out for a network."""
    learner = learner_from_name(arm)
    if isinstance(learner, OnlineMLP):
        return learner.n_parameters(n_features)
    return int(n_features)


def imdb_trajectories(arms=PAPER_ARMS, every: int = 250, data_dir=None) -> pd.DataFrame:
    """The IMDB curves read every ``every`` updates, as (arm, step, score) checkpoints: the same
    layout as logged fine-tuning evaluations, for :func:`horizonbandits.rising.llm.llm_rewards`."""
    curves = load_curves(arms, data_dir)
    every = check_int("every", every, 1, len(curves))
    steps = np.arange(every, len(curves) + 1, every)
    rows = [pd.DataFrame({"arm": a, "step": steps, "score": curves[a].to_numpy()[steps - 1]}) for a in curves.columns]
    return pd.concat(rows, ignore_index=True)


def imdb_costs(arms=PAPER_ARMS, per_thousand_parameters: float = 5e-5, n_features: int = N_FEATURES) -> dict:
    """Size-dependent cost coefficients m_k = per_thousand_parameters * (parameters of k) / 1000."""
    return {a: per_thousand_parameters * parameter_count(a, n_features) / 1000.0 for a in _check_arms(arms)}


# --------------------------------------------------------------------------------------------
# Download
# --------------------------------------------------------------------------------------------


def upstream_filename(arm: str) -> str:
    """Name of an arm's curve in the public repository (e.g. nn_2-2 -> 'NN: (2, 2)_avg.npy')."""
    learner = learner_from_name(arm)
    if isinstance(learner, OnlineMLP):
        inner = ", ".join(str(h) for h in learner.hidden) + ("," if len(learner.hidden) == 1 else "")
        return f"NN: ({inner})_avg.npy"
    kind, _, value = arm.rpartition("_")
    label = {"lr_alpha": "Logistic Regression alpha", "ogd_beta": "OGD beta", "adagrad_alpha": "ADAGRAD alpha"}[kind]
    return f"{label} = {value}_avg.npy"


def _raw_url(path: str, commit: str) -> str:
    return f"https://raw.githubusercontent.com/{UPSTREAM_REPO}/{commit}/" + urllib.parse.quote(path)


def _download(url: str, timeout: float) -> bytes:
    req = urllib.request.Request(url, headers={"User-Agent": "horizonbandits"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return resp.read()


def _save_npy(path, array) -> None:
    with open(path, "wb") as fh:
        np.save(fh, np.asarray(array, dtype=np.float64))


def fetch_imdb(dest=None, arms=ALL_ARMS, commit: str = UPSTREAM_COMMIT, timeout: float = 60.0,
               overwrite: bool = False) -> Path:
    """Download the IMDB learning curves from the public repository into ``<dest>/imdb-learning-curves``.

    ``dest`` is the data folder (default: as :func:`data_root` resolves it). Each file is checked
    (a 1-D float array of accuracies) and written atomically as ``<arm>.npy``; existing files are
    kept unless ``overwrite``. The repository's licence is saved as ``LICENSE.source``. Needs
    network access (ConnectionError, an OSError, when it fails; ValueError for a file that is not
    a curve); the tests never call it. Returns the curves folder.
    """
    folder = data_root(dest) / SUBDIR
    folder.mkdir(parents=True, exist_ok=True)
    for arm in _check_arms(arms):
        target = folder / f"{arm}.npy"
        if target.is_file() and not overwrite:
            continue
        url = _raw_url(f"{UPSTREAM_FOLDER}/{upstream_filename(arm)}", commit)
        try:
            payload = _download(url, timeout)
        except OSError as exc:
            raise ConnectionError(f"could not download {url} ({exc}): check the network, or copy the files by hand "
                                  f"into {folder} as <arm>.npy") from None
        curve = np.load(io.BytesIO(payload), allow_pickle=False)
        if curve.ndim != 1 or not np.all(np.isfinite(curve)) or curve.min() < 0 or curve.max() > 1:
            raise ValueError(f"{url} is not a learning curve (shape {curve.shape}): nothing written for {arm}")
        atomic_write(target, lambda tmp, c=curve: _save_npy(tmp, c))
    licence = folder / "LICENSE.source"
    if not licence.is_file():
        try:
            atomic_write_text(licence, _download(_raw_url("LICENSE", commit), timeout).decode("utf-8"))
        except OSError:
            pass  # the curves are what matter; the licence text is a courtesy copy
    return folder
