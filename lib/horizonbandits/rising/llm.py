"""LLM selection as a rising bandit: rewards replayed from logged fine-tuning trajectories.

Implements the reward construction and replay of appendix B.2 of the CURE-UCB paper (Song et al.
2026, section 6.4), which adapts the cost-penalised reward of Xia et al. (WWW 2024, TI-UCB).
Input: checkpoint evaluations (arm, step, score) of each candidate model, e.g. a CSV of real
fine-tuning logs (:func:`read_trajectories`), and a cost coefficient m_k per arm. For each arm k,
with t = 1, 2, ... the index of its checkpoints in step order:

1. smoothing: rho~_t = uniform moving average of the scores over ``window`` = 5 checkpoints;
2. cost penalty: nu_t = rho~_t - m_k t;
3. peak-capping: nu_t <- nu_{t*} for t >= t* = argmax_t nu_t (training stops at its best point);
4. a fixed perturbation eta_t ~ N(0, 0.005^2) drawn once from ``seed`` (the same in every
   simulation), then zero-clipping nu'_t = max(nu_t + eta_t, 0);
5. global rescaling r_t = (nu'_t - min) / (max - min), min and max over all arms and checkpoints;
6. replay: the checkpoints are placed on a grid of ``length`` = 1,000 pull counts in proportion
   to their training step (position (length - 1) step / largest step), the grid is filled by
   linear interpolation (np.interp), holding the first and last checkpoint values outside the
   trajectory's range, and the pull with local count N (N = 0 for the first pull) has mean
   table[min(N, length - 1)]. Rewards are Gaussian around it with sigma_obs.

Choices of ours where the appendix is silent (parameters, defaults first):

- ``smoothing="trailing"``: the average at t is over checkpoints max(1, t - 4)..t (shorter windows
  at the start, so every checkpoint is kept); ``"centered"`` uses t - 2..t + 2 (shortened at the
  ends), ``"valid"`` keeps only checkpoints with a full trailing window (np.convolve 'valid');
- t in the cost is the 1-based index of the checkpoint in the arm's input (``cost_index=
  "checkpoint"``); ``"step"`` charges m_k per training step instead;
- the first argmax is the peak when the maximum is attained several times;
- the perturbation is drawn for all arms at once, arm after arm in input order, checkpoint after
  checkpoint (``numpy.random.default_rng(SeedSequence(seed)).normal``);
- a pull with local count N has mean table[N], matching the appendix's "at round t the selected
  arm returns mu_i(N_{i,t-1})"; so in :class:`RisingInstance` terms mu_i(n) = table[n - 1] for
  the n-th pull and mu_i(0) = table[0]; ``pulls_per_entry`` > 1 stretches the table over more
  pulls (mean at count N read at N / pulls_per_entry by linear interpolation);
- sigma_obs = 0.01 by default, the noise level of the paper's synthetic experiments (the CURE-UCB
  rows of Tables 1 (eps = 1/2) and 2 (sigma = 0.01) coincide); the appendix does not give it.

The paper's Qwen trajectories are not public. :func:`illustrative_trajectories` generates an
ILLUSTRATIVE stand-in with the described shapes; ``data/examples/llm_trajectories_illustrative.csv``
is its output. It is not a measurement and must be labelled as such wherever it is shown.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import check_choice, check_int, check_real
from ..outputs import REPO_ROOT, atomic_write_text
from .instances import RisingInstance

SMOOTHING_MODES = ("trailing", "centered", "valid")
COST_INDEX = ("checkpoint", "step")
ILLUSTRATIVE_CSV = Path(REPO_ROOT) / "data" / "examples" / "llm_trajectories_illustrative.csv"

# --------------------------------------------------------------------------------------------
# Input
# --------------------------------------------------------------------------------------------


def read_trajectories(source) -> pd.DataFrame:
    """Checkpoint evaluations as a DataFrame with columns arm (str), step (number >= 0), score.

    ``source``: a CSV path (lines starting with '#' are comments) or a DataFrame. Rows are sorted
    by step within each arm; arms keep the order of their first appearance. Errors name the
    problem: missing columns, non-numeric or non-finite values, a repeated (arm, step), fewer
    than two arms.
    """
    if isinstance(source, pd.DataFrame):
        df = source.copy()
        where = "trajectories"
    else:
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"trajectories={str(path)!r} is not allowed: no such file (expected a CSV with columns arm, step, score)")
        df = pd.read_csv(path, comment="#")
        where = str(path)
    missing = [c for c in ("arm", "step", "score") if c not in df.columns]
    if missing:
        raise ValueError(f"{where} lacks column(s) {missing}: expected columns arm, step, score (found {list(df.columns)})")
    df = df[["arm", "step", "score"]].copy()
    df["arm"] = df["arm"].astype(str)
    for col in ("step", "score"):
        values = pd.to_numeric(df[col], errors="coerce")
        bad = ~np.isfinite(values.to_numpy(dtype=float))
        if bad.any():
            row = int(np.argmax(bad))
            raise ValueError(f"{where}: {col}={df[col].iloc[row]!r} in row {row} is not allowed: expected a finite number")
        df[col] = values.astype(float)
    if (df["step"] < 0).any():
        raise ValueError(f"{where}: step={df['step'].min()!r} is not allowed: steps must be >= 0")
    dup = df.duplicated(["arm", "step"])
    if dup.any():
        r = df[dup].iloc[0]
        raise ValueError(f"{where}: arm {r['arm']!r} has step {r['step']:g} twice: each (arm, step) must appear once")
    order = list(dict.fromkeys(df["arm"]))
    if len(order) < 2:
        raise ValueError(f"{where} has arms {order}: at least 2 arms are needed")
    if df["step"].max() <= 0:
        raise ValueError(f"{where}: every step is 0: steps must reach a positive value to place checkpoints")
    df["arm"] = pd.Categorical(df["arm"], categories=order, ordered=True)
    df = df.sort_values(["arm", "step"], kind="stable").reset_index(drop=True)
    df["arm"] = df["arm"].astype(str)
    return df


def _costs_vector(costs, names) -> np.ndarray:
    if isinstance(costs, Mapping):
        unknown = [k for k in costs if k not in names]
        missing = [n for n in names if n not in costs]
        if missing or unknown:
            raise ValueError(f"costs={dict(costs)!r} is not allowed: expected one coefficient per arm {list(names)}"
                             + (f" (missing {missing})" if missing else "") + (f" (unknown {unknown})" if unknown else ""))
        values = [costs[n] for n in names]
    else:
        values = list(costs) if isinstance(costs, (Sequence, np.ndarray)) else [costs]
        if len(values) != len(names):
            raise ValueError(f"costs={values!r} is not allowed: expected {len(names)} coefficients, one per arm {list(names)}")
    return np.array([check_real(f"costs[{n!r}]", v, 0.0) for n, v in zip(names, values)])


# --------------------------------------------------------------------------------------------
# The steps of appendix B.2, each on plain arrays
# --------------------------------------------------------------------------------------------


def moving_average(scores, window: int = 5, mode: str = "trailing") -> np.ndarray:
    """Step 1: uniform moving average over ``window`` checkpoints (see the module notes for modes).

    "trailing" and "centered" return one value per checkpoint; "valid" returns one per full
    trailing window (len(scores) - window + 1 values, for checkpoints window..end).
    """
    x = np.asarray(scores, dtype=np.float64)
    window = check_int("window", window, 1)
    check_choice("smoothing", mode, SMOOTHING_MODES)
    if mode == "valid":
        if x.size < window:
            raise ValueError(f"window={window} is not allowed with smoothing='valid' on {x.size} checkpoints: "
                             "expected at most the number of checkpoints")
        c = np.concatenate([[0.0], np.cumsum(x)])
        return (c[window:] - c[:-window]) / window
    s = pd.Series(x)
    return s.rolling(window, min_periods=1, center=(mode == "centered")).mean().to_numpy()


def cost_penalty(smoothed, m: float, t) -> np.ndarray:
    """Step 2: nu_t = rho~_t - m t for the given checkpoint indices t."""
    return np.asarray(smoothed, dtype=np.float64) - float(m) * np.asarray(t, dtype=np.float64)


def peak_cap(net) -> tuple[np.ndarray, int]:
    """Step 3: hold the value of the (first) maximum from there on. Returns (capped, t*) with t*
    the 0-based position of the peak."""
    x = np.asarray(net, dtype=np.float64)
    peak = int(np.argmax(x))
    out = x.copy()
    out[peak:] = x[peak]
    return out, peak


def fixed_perturbation(sizes, sd: float = 0.005, seed: int = 0) -> list[np.ndarray]:
    """Step 4a: one N(0, sd^2) draw per checkpoint, arm after arm, from ``SeedSequence(seed)``."""
    sd = check_real("perturbation_sd", sd, 0.0)
    seed = check_int("seed", seed, 0)
    sizes = [int(n) for n in sizes]
    draws = np.random.default_rng(np.random.SeedSequence(seed)).normal(0.0, 1.0, sum(sizes)) * sd
    return np.split(draws, np.cumsum(sizes)[:-1])


def zero_clip(x) -> np.ndarray:
    """Step 4b: negative values become 0."""
    return np.maximum(np.asarray(x, dtype=np.float64), 0.0)


def global_minmax(arrays) -> tuple[list[np.ndarray], float, float]:
    """Step 5: (x - min) / (max - min) with min and max over every arm and checkpoint."""
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    lo = float(min(a.min() for a in arrays))
    hi = float(max(a.max() for a in arrays))
    if hi <= lo:
        raise ValueError(f"every reward equals {lo!r} after the penalty and perturbation: rescaling needs max > min")
    return [(a - lo) / (hi - lo) for a in arrays], lo, hi


def replay_table(rewards, steps, max_step: float, length: int = 1000) -> np.ndarray:
    """Step 6: the length-``length`` array over pull counts: checkpoint at step s placed at
    (length - 1) s / max_step, linear interpolation between checkpoints, first and last values
    held outside them (np.interp)."""
    length = check_int("length", length, 2)
    positions = (length - 1) * np.asarray(steps, dtype=np.float64) / float(max_step)
    return np.interp(np.arange(length, dtype=np.float64), positions, np.asarray(rewards, dtype=np.float64))


def replay_means(table, T_max: int, pulls_per_entry: float = 1.0) -> np.ndarray:
    """Means mu(n), n = 0..T_max, of a replayed arm: the n-th pull (local count N = n - 1) reads
    the table at N / pulls_per_entry (linear interpolation, last value held); mu(0) = table[0]."""
    table = np.asarray(table, dtype=np.float64)
    T_max = check_int("T_max", T_max, 1)
    scale = check_real("pulls_per_entry", pulls_per_entry, 0.0, lo_open=True)
    counts = np.maximum(np.arange(T_max + 1) - 1, 0) / scale
    return np.interp(counts, np.arange(table.size, dtype=np.float64), table)


# --------------------------------------------------------------------------------------------
# The whole pipeline
# --------------------------------------------------------------------------------------------


@dataclass
class LLMRewards:
    """Every stage of the reward construction, per arm (lists of arrays over checkpoints)."""

    names: tuple
    costs: np.ndarray
    steps: list
    raw: list
    smoothed: list
    net: list
    capped: list
    peak: np.ndarray
    perturbation: list
    clipped: list
    rewards: list
    lo: float
    hi: float
    table: np.ndarray
    settings: dict = field(default_factory=dict)

    @property
    def K(self) -> int:
        return len(self.names)

    def means(self, T_max: int, pulls_per_entry: float = 1.0) -> np.ndarray:
        return np.vstack([replay_means(row, T_max, pulls_per_entry) for row in self.table])

    def instance(self, T_max: int, sigma_obs: float = 0.01, pulls_per_entry: float = 1.0) -> RisingInstance:
        """The rising bandit: replayed means for pull counts 0..T_max, Gaussian noise sigma_obs."""
        sigma_obs = check_real("sigma_obs", sigma_obs, 0.0)
        return RisingInstance(self.means(T_max, pulls_per_entry), self.names, sigma_obs)

    def stages(self) -> pd.DataFrame:
        """Tidy table (arm, step, stage, value) of every stage, for plots and CSV export."""
        frames = []
        for i, name in enumerate(self.names):
            n = self.rewards[i].size
            st = self.steps[i]
            for stage, values in (("raw score", self.raw[i][-n:]), ("smoothed", self.smoothed[i]),
                                  ("net of cost", self.net[i]), ("peak-capped", self.capped[i]),
                                  ("perturbed, clipped", self.clipped[i]), ("reward", self.rewards[i])):
                frames.append(pd.DataFrame({"arm": name, "step": st, "stage": stage, "value": values}))
        return pd.concat(frames, ignore_index=True)


def llm_rewards(trajectories, costs, window: int = 5, smoothing: str = "trailing", cost_index: str = "checkpoint",
                perturbation_sd: float = 0.005, seed: int = 0, length: int = 1000) -> LLMRewards:
    """The fixed reward functions of appendix B.2 from checkpoint trajectories (see the module notes).

    ``trajectories``: a CSV path or DataFrame of (arm, step, score); ``costs``: dict arm -> m_k or
    a sequence in arm order (m_k >= 0). Returns an :class:`LLMRewards` holding every stage and the
    replay table; ``.instance(T_max, sigma_obs)`` gives the bandit.
    """
    df = read_trajectories(trajectories)
    check_choice("smoothing", smoothing, SMOOTHING_MODES)
    check_choice("cost_index", cost_index, COST_INDEX)
    window = check_int("window", window, 1)
    length = check_int("length", length, 2)
    names = tuple(dict.fromkeys(df["arm"]))
    m = _costs_vector(costs, names)
    raw, steps, smoothed, net, capped, peaks = [], [], [], [], [], []
    for k, name in enumerate(names):
        rows = df[df["arm"] == name]
        score = rows["score"].to_numpy()
        step = rows["step"].to_numpy()
        rho = moving_average(score, window, smoothing)
        kept = slice(score.size - rho.size, None)  # 'valid' drops the first window - 1 checkpoints
        t = np.arange(1, score.size + 1)[kept] if cost_index == "checkpoint" else step[kept]
        nu = cost_penalty(rho, m[k], t)
        nu_capped, peak = peak_cap(nu)
        raw.append(score)
        steps.append(step[kept])
        smoothed.append(rho)
        net.append(nu)
        capped.append(nu_capped)
        peaks.append(peak)
    eta = fixed_perturbation([c.size for c in capped], perturbation_sd, seed)
    clipped = [zero_clip(c + e) for c, e in zip(capped, eta)]
    rewards, lo, hi = global_minmax(clipped)
    max_step = max(float(s.max()) for s in steps)
    if max_step <= 0:
        raise ValueError("every kept checkpoint has step 0: steps must reach a positive value to place checkpoints")
    table = np.vstack([replay_table(r, s, max_step, length) for r, s in zip(rewards, steps)])
    settings = dict(window=window, smoothing=smoothing, cost_index=cost_index, perturbation_sd=perturbation_sd,
                    seed=seed, length=length)
    return LLMRewards(names, m, steps, raw, smoothed, net, capped, np.array(peaks), eta, clipped, rewards,
                      lo, hi, table, settings)


# --------------------------------------------------------------------------------------------
# The illustrative example (NOT measurements)
# --------------------------------------------------------------------------------------------

#: Cost coefficients of appendix B.2 (2B, 4B, 9B, 27B fine-tuned; the off-the-shelf arm pays none).
ILLUSTRATIVE_COSTS = {"2B-LoRA": 5e-5, "4B-LoRA": 7.5e-5, "9B-LoRA": 1.05e-4, "27B-LoRA": 1.6e-4, "Max-ICL": 0.0}

#: Shapes of the illustrative score curves: start, ceiling and time scale (in steps) of
#: score(s) = start + (ceiling - start) (1 - exp(-s / scale)); the off-the-shelf arm is flat.
ILLUSTRATIVE_SHAPES = {
    "2B-LoRA": (0.18, 0.30, 500.0),
    "4B-LoRA": (0.20, 0.33, 800.0),
    "9B-LoRA": (0.22, 0.37, 1300.0),
    "27B-LoRA": (0.24, 0.40, 2000.0),
    "Max-ICL": (0.335, 0.335, 1.0),
}


def illustrative_trajectories(n_checkpoints: int = 200, every: int = 25, eval_noise: float = 0.004,
                              seed: int = 0, shapes: Mapping | None = None) -> pd.DataFrame:
    """ILLUSTRATIVE checkpoint trajectories shaped like appendix B.2's description (not data).

    Four fine-tuned arms whose score (a ROUGE-like number) rises from a start to a ceiling along
    start + (ceiling - start)(1 - exp(-step / scale)), larger models starting higher, rising to
    higher ceilings and more slowly (``ILLUSTRATIVE_SHAPES``), and one off-the-shelf arm that is
    high and flat. Checkpoints every ``every`` steps; each evaluation gets independent
    N(0, eval_noise^2) jitter (evaluation noise on a finite eval set) from ``SeedSequence(seed)``.
    With ``ILLUSTRATIVE_COSTS`` the small models peak and are capped, and the best arm changes
    with the horizon (flat arm first, a large fine-tuned arm later).
    """
    n_checkpoints = check_int("n_checkpoints", n_checkpoints, 2)
    every = check_int("every", every, 1)
    eval_noise = check_real("eval_noise", eval_noise, 0.0)
    shapes = dict(ILLUSTRATIVE_SHAPES if shapes is None else shapes)
    rng = np.random.default_rng(np.random.SeedSequence(check_int("seed", seed, 0)))
    step = every * np.arange(1, n_checkpoints + 1, dtype=np.float64)
    frames = []
    for name, (start, ceiling, scale) in shapes.items():
        score = start + (ceiling - start) * (1.0 - np.exp(-step / scale))
        score = score + eval_noise * rng.standard_normal(n_checkpoints)
        frames.append(pd.DataFrame({"arm": name, "step": step.astype(np.int64), "score": np.round(score, 6)}))
    return pd.concat(frames, ignore_index=True)


def illustrative_header(**kwargs) -> str:
    """The comment lines that open the illustrative CSV (they name the generator call)."""
    args = dict(n_checkpoints=200, every=25, eval_noise=0.004, seed=0)
    args.update(kwargs)
    call = ", ".join(f"{k}={v!r}" for k, v in args.items() if k != "shapes")
    return (
        "# ILLUSTRATIVE trajectories, NOT measurements: generated by\n"
        f"# horizonbandits.rising.llm.illustrative_trajectories({call})\n"
        "# to mimic the shapes described in appendix B.2 of the CURE-UCB paper (four LoRA fine-tuned models\n"
        "# rising at different speeds, one off-the-shelf model high and flat). The paper's Qwen logs are not public.\n"
        "# Costs to use with it: horizonbandits.rising.llm.ILLUSTRATIVE_COSTS. Replace with real (arm, step, score) logs.\n"
    )


def write_illustrative_csv(path=ILLUSTRATIVE_CSV, **kwargs) -> Path:
    """Write :func:`illustrative_trajectories` (``kwargs`` passed on) as CSV, opened by
    :func:`illustrative_header`."""
    df = illustrative_trajectories(**kwargs)
    return atomic_write_text(path, illustrative_header(**kwargs) + df.to_csv(index=False))
