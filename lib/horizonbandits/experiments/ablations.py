"""The two ablations of paper A's appendix K for any instance sets: the window (K.1, Table 1) and the noise (K.2, Table 2).

Both run CURE-UCB (and, for the noise, its baselines) at one horizon T on the random instance families of
appendix B.1, put the paper's table beside ours and, because our reading of the concave generator's challenger
blend weight w moves the regrets, recompute the concave part of the table for fixed weights (the "blend sweep"):

- :func:`window` - one CURE-UCB per window fraction eps (h_i = max(floor(eps N_i), 1), section 4.1), Table 1
  beside ours, the paired differences against the largest window. Returns a :class:`WindowAblation`.
- :func:`noise` - the policies at each noise level sigma (the environment's Gaussian noise, also told to the
  policies whose index takes a noise scale), Table 2 beside ours, the paired differences against CURE-UCB.
  Returns a :class:`NoiseAblation`.

Tables are saved as ``tables/<name>_<part>.csv`` and figures as ``figures/<name>_<part>.png``. Intervals are
bootstrap intervals over instances (``horizonbandits.stats``, seed 0, ``n_boot`` resamples). The distance of a
reading to the paper is the typical factor exp(mean |log(ours / paper)|) - 1 over the cells the paper gives.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..plotting import policy_palette, save_figure, save_table
from ..stats import paired_differences, regret_summary

# Appendix K.1, Table 1: CURE-UCB's mean cumulative regret at T = 50,000 by window fraction.
TABLE1 = pd.DataFrame({"eps": ["1/2", "1/4", "1/8", "1/16", "1/32"],
                       "concave": [2056, 2818, 3691, 4766, 6069], "ltf": [3230, 4576, 6574, 9158, 12254]})
# Appendix K.2, Table 2: mean cumulative regret at T = 50,000 by (family, policy), one value per sigma.
TABLE2_SIGMAS = [0.001, 0.01, 0.05, 0.1]
TABLE2 = {("concave", "CURE-UCB"): [783, 2057, 3439, 4145], ("concave", "SW-UCB"): [10212, 10209, 10209, 10176],
          ("concave", "R-ed-UCB"): [6667, 7886, 8059, 8530], ("ltf", "CURE-UCB"): [1974, 3239, 5450, 6981],
          ("ltf", "SW-UCB"): [7855, 7837, 7896, 7890], ("ltf", "R-ed-UCB"): [8761, 10268, 13805, 15585]}
# The concave generator as appendix B.1.2 reads to us (the reading the sweep is compared with).
DEFAULT_READING = "default w ~ U[0.5, 0.8]"
REFERENCE = "CURE-UCB"


# --------------------------------------------------------------------------------------------
# Shared pieces
# --------------------------------------------------------------------------------------------

def eps_label(eps: float) -> str:
    """A window fraction as the paper writes it: 0.25 -> "1/4"."""
    return str(Fraction(eps).limit_denominator(1024))


def distance(ours, paper) -> float:
    """Typical factor between two sets of cells: exp(mean |log(ours / paper)|) - 1 (0 when equal)."""
    return float(np.exp(np.mean(np.abs(np.log(np.asarray(ours, float) / np.asarray(paper, float))))) - 1)


def table2_value(family: str, policy: str, sigma: float) -> float:
    """Table 2's mean regret of ``policy`` on ``family`` at ``sigma`` (NaN where the paper has none)."""
    if sigma not in TABLE2_SIGMAS:
        return np.nan
    return TABLE2.get((family, policy), [np.nan] * len(TABLE2_SIGMAS))[TABLE2_SIGMAS.index(sigma)]


def _check_sets(name: str, sets, pairs: str | None = None) -> None:
    """A one-line error unless ``sets`` is a non-empty mapping (with ``pairs``: of 2-tuples) to instance sets."""
    if not isinstance(sets, Mapping) or not sets:
        raise ValueError(f"{name}={sets!r} is not allowed: expected a non-empty dict of instance sets")
    if pairs and not all(isinstance(k, tuple) and len(k) == 2 for k in sets):
        raise ValueError(f"{name} has keys {list(sets)!r}: expected {pairs} pairs")


def _grid(instances, policies, T: int, n_seeds: int, seed: int, grid_options: dict) -> pd.DataFrame:
    from . import run_grid
    return run_grid(instances, policies, [T], n_seeds, seed=seed, **grid_options)


@dataclass
class BlendSweep:
    """The concave part of a table under each reading of the challenger blend weight w.

    ``readings``: one row per (reading, cell) with mean_regret, its interval and the paper's value; w is NaN for
    our default reading. ``distance``: per reading, the typical factor to the paper over the cells the paper gives.
    ``reach``: per cell, the widest interval over the readings consistent with B.1.2 (the default and the swept
    0 < w < 1) and whether it holds the paper's value.
    """
    readings: pd.DataFrame
    distance: pd.Series
    reach: pd.DataFrame

    @classmethod
    def from_parts(cls, parts: list[pd.DataFrame], cell: list[str]) -> BlendSweep:
        readings = pd.concat(parts, ignore_index=True)[["reading", "w", *cell, "mean_regret", "ci_low", "ci_high", "paper"]]
        cells = readings.dropna(subset=["paper"])
        dist = pd.Series({r: distance(g["mean_regret"], g["paper"]) for r, g in cells.groupby("reading", sort=False)},
                         dtype=float)
        consistent = cells[cells["w"].isna() | ((cells["w"] > 0) & (cells["w"] < 1))]
        reach = consistent.groupby(cell).agg(low=("ci_low", "min"), high=("ci_high", "max"), paper=("paper", "first"))
        reach["reached"] = (reach["low"] <= reach["paper"]) & (reach["paper"] <= reach["high"])
        return cls(readings, dist, reach)

    def closest_note(self) -> str:
        """The swept reading closest to the paper and, when that one is outside B.1.2 (w = 0 or 1, no blend), the
        closest consistent one."""
        w_of = self.readings.groupby("reading", sort=False)["w"].first()
        swept = self.distance.drop(DEFAULT_READING)
        best = swept.idxmin()
        note = f"closest reading {best} (distance {swept[best]:.0%})"
        consistent = [r for r in swept.index if 0 < w_of[r] < 1]
        if consistent and not 0 < w_of[best] < 1:
            fair = swept[consistent].idxmin()
            note += f", which is no blend (outside B.1.2); closest consistent sweep reading {fair} (distance {swept[fair]:.0%})"
        return note

    def distance_line(self, what: str) -> str:
        return f"- {what} by reading, distance to the paper: " + ", ".join(f"{r} {v:.0%}" for r, v in self.distance.items()) + "."


# --------------------------------------------------------------------------------------------
# Window ablation (appendix K.1, Table 1)
# --------------------------------------------------------------------------------------------

def window_policies(eps_values, sigma: float, cure_params: Mapping | None = None) -> dict:
    """One CURE-UCB per window fraction, labelled as the paper writes eps ("1/2", "1/4", ...); ``sigma`` is the
    environment's noise level, which CURE-UCB's index takes; ``cure_params`` its other hyperparameters."""
    from . import make_policies
    return {eps_label(e): make_policies([REFERENCE], {REFERENCE: {**dict(cure_params or {}), "eps": e}}, sigma=sigma)[REFERENCE]
            for e in eps_values}


@dataclass
class WindowAblation:
    """The tables of :func:`window`. ``summary``: mean regret per (family, eps); ``table``: ours beside Table 1
    (columns family, eps, ours, ci_low, ci_high, paper, ours / paper); ``diffs``: paired differences against the
    largest window; ``sweep``: the concave column under fixed blend weights (None without it)."""
    policies: dict
    T: int
    df: pd.DataFrame
    summary: pd.DataFrame
    table: pd.DataFrame
    diffs: pd.DataFrame
    sweep: BlendSweep | None
    figures: dict = field(default_factory=dict)

    @property
    def order(self) -> list[str]:
        """The eps labels, largest window first."""
        return sorted(self.policies, key=lambda e: -self.policies[e].eps)

    def means(self, family: str, frame: pd.DataFrame | None = None, value: str = "ours") -> np.ndarray:
        """``value`` of ``family``'s rows (or of ``frame``) in :attr:`order`."""
        rows = self.table[self.table["family"] == family] if frame is None else frame
        return rows.set_index("eps").reindex(self.order)[value].to_numpy(float)

    def paper_table(self) -> pd.DataFrame:
        """Ours, the paper's and their ratio, one row per eps, one column block per family."""
        wide = self.table.pivot(index="eps", columns="family", values=["ours", "paper", "ours / paper"])
        return wide.reindex(list(self.policies))

    def sweep_table(self) -> pd.DataFrame:
        """Mean regret per eps under each reading, the paper's column, and a last row with each reading's distance."""
        readings = self.sweep.readings
        wide = readings.pivot(index="eps", columns="reading", values="mean_regret").reindex(list(self.policies))
        wide = wide[list(dict.fromkeys(readings["reading"]))]
        wide["paper"] = TABLE1.set_index("eps")["concave"].reindex(wide.index)
        wide.loc["distance"] = list(self.sweep.distance.reindex(wide.columns[:-1])) + [np.nan]
        return wide

    def closing_lines(self) -> list[str]:
        """Sentences computed from the tables: our column beside the paper's for each family, the readings' distances."""
        lines = []
        for family in self.table["family"].unique():
            t = self.table[self.table["family"] == family].set_index("eps").reindex(self.order)
            lines.append(f"- {family}: mean regret " + ", ".join(f"eps={e} {v:,.0f}" for e, v in zip(self.order, t["ours"]))
                         + " (paper " + ", ".join(f"{v:,.0f}" for v in t["paper"]) + f"); ours / paper from "
                         f"{t['ours / paper'].min():.2f} to {t['ours / paper'].max():.2f}.")
        if self.sweep is not None:
            lines.append(self.sweep.distance_line("Concave column"))
        return lines


def window(instance_sets: Mapping, policies: Mapping, T: int, n_seeds: int, *, blend_sets: Mapping | None = None,
           sweep_seeds: int = 1, seed: int = 0, n_boot: int = 2000, name: str = "window_ablation", output_dir="",
           **grid_options) -> WindowAblation:
    """Appendix K.1 (Table 1): CURE-UCB's mean regret at ``T`` for each window fraction, on each family.

    ``instance_sets``: family name ("concave", "ltf") -> instances; ``policies``: eps label -> CureUCB (see
    :func:`window_policies`); ``blend_sets``: fixed blend weight w -> concave instances, for the sweep of the
    concave column (``sweep_seeds`` seeds each). The comparison with the paper uses Table 1's cell of the same
    family and eps label (NaN where it has none). Saves ``<name>_regret``, ``<name>_table1``,
    ``<name>_paired_differences``, ``<name>_blend_sweep`` and the figure ``<name>_regret``.
    ``grid_options`` go to ``run_grid`` (backend, cache, n_jobs, address).
    """
    _check_sets("instance_sets", instance_sets)
    for label, pol in dict(policies).items():
        if not isinstance(getattr(pol, "eps", None), float):
            raise ValueError(f"policies[{label!r}]={pol!r} is not allowed: expected a CURE-UCB with a window fraction eps "
                             "(see window_policies)")
    frames = [_grid(inst, policies, T, n_seeds, seed, grid_options).assign(family=family)
              for family, inst in instance_sets.items()]
    summary = pd.concat([regret_summary(d, n_boot=n_boot).assign(family=d["family"].iloc[0]) for d in frames],
                        ignore_index=True).rename(columns={"policy": "eps"})
    summary["eps"] = summary["eps"].astype(str)
    save_table(summary, f"{name}_regret", output_dir)
    table = _beside_table1(summary)
    save_table(table, f"{name}_table1", output_dir)
    largest = max(policies, key=lambda e: policies[e].eps)
    diffs = pd.concat([paired_differences(d, largest, n_boot=n_boot).assign(family=d["family"].iloc[0]) for d in frames],
                      ignore_index=True)
    save_table(diffs, f"{name}_paired_differences", output_dir)
    sweep = None
    if blend_sets and "concave" in instance_sets:
        sweep = _window_sweep(table, blend_sets, policies, T, sweep_seeds, seed, n_boot, grid_options)
        save_table(sweep.readings, f"{name}_blend_sweep", output_dir)
    result = WindowAblation(dict(policies), T, pd.concat(frames, ignore_index=True), summary, table, diffs, sweep)
    result.figures["regret"] = _plot_window(result)
    save_figure(result.figures["regret"], f"{name}_regret", output_dir)
    return result


def _beside_table1(summary: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for r in summary.itertuples():
        paper = TABLE1.set_index("eps")[r.family].get(r.eps, np.nan) if r.family in TABLE1 else np.nan
        rows.append({"family": r.family, "eps": r.eps, "ours": r.mean_regret, "ci_low": r.ci_low, "ci_high": r.ci_high,
                     "paper": paper, "ours / paper": r.mean_regret / paper})
    return pd.DataFrame(rows)


def _window_sweep(table, blend_sets, policies, T, sweep_seeds, seed, n_boot, grid_options) -> BlendSweep:
    default = table[table["family"] == "concave"].rename(columns={"ours": "mean_regret"})
    parts = [default.assign(reading=DEFAULT_READING, w=np.nan)]
    for w, inst in blend_sets.items():
        s = regret_summary(_grid(inst, policies, T, sweep_seeds, seed, grid_options), n_boot=n_boot)
        s = s.rename(columns={"policy": "eps"})
        s["eps"] = s["eps"].astype(str)
        parts.append(s.assign(reading=f"w = {w:g}", w=w, paper=s["eps"].map(TABLE1.set_index("eps")["concave"])))
    return BlendSweep.from_parts(parts, ["eps"])


def _plot_window(result: WindowAblation):
    """Mean regret against eps (log scale, window shrinking to the right), ours with intervals, Table 1 dashed."""
    fig, ax = plt.subplots(figsize=(6.8, 4.3))
    colours = {"concave": "tab:green", "ltf": "tab:blue"}
    table = result.table
    for family in table["family"].unique():
        t = table[table["family"] == family]
        x = [result.policies[e].eps for e in t["eps"]]
        ax.errorbar(x, t["ours"], yerr=[t["ours"] - t["ci_low"], t["ci_high"] - t["ours"]], marker="o", capsize=3,
                    color=colours.get(family), label=f"{family}, ours")
        ax.plot(x, t["paper"], ls="--", marker="s", mfc="none", color=colours.get(family), label=f"{family}, paper (Table 1)")
    ax.set_xscale("log", base=2)
    ax.set_xticks([result.policies[e].eps for e in result.policies], list(result.policies))
    ax.invert_xaxis()
    ax.set_xlabel("window fraction eps (window shrinks to the right)")
    ax.set_ylabel(f"mean pseudo-regret at T = {result.T:,}")
    ax.set_title("CURE-UCB: sensitivity to the window size")
    ax.legend(fontsize=8)
    return fig


# --------------------------------------------------------------------------------------------
# Noise ablation (appendix K.2, Table 2)
# --------------------------------------------------------------------------------------------

@dataclass
class NoiseAblation:
    """The tables of :func:`noise`. ``summary``: mean regret per (family, sigma, policy) with Table 2's value in
    ``paper``; ``diffs``: paired differences against CURE-UCB (empty without CURE-UCB and a baseline);
    ``sweep``: the concave half under fixed blend weights (None without it)."""
    policies: list
    families: list
    sigmas: list
    T: int
    df: pd.DataFrame
    summary: pd.DataFrame
    diffs: pd.DataFrame
    sweep: BlendSweep | None
    figures: dict = field(default_factory=dict)

    def paper_table(self) -> pd.DataFrame:
        """Mean regret (ours, then the paper's), one row per policy, one column per (family, sigma)."""
        return self.summary.pivot_table(index="policy", columns=["family", "sigma"],
                                        values=["mean_regret", "paper"]).reindex(self.policies)

    def differences_table(self) -> pd.DataFrame:
        """Baseline minus CURE-UCB, one row per (family, policy), one column per sigma."""
        return self.diffs.pivot_table(index=["family", "policy"], columns="sigma", values="mean_difference", observed=True)

    def sweep_table(self) -> pd.DataFrame:
        """Mean regret per (policy, sigma) under each reading, and the paper's column."""
        wide = self.sweep.readings.pivot_table(index=["policy", "sigma"], columns="reading", values="mean_regret", sort=False)
        wide["paper"] = [table2_value("concave", pol, sig) for pol, sig in wide.index]
        return wide

    def regrets(self, family: str, policy: str, frame: pd.DataFrame | None = None) -> np.ndarray:
        """``policy``'s mean regret on ``family`` (in ``frame``, default the summary), sigma ascending."""
        frame = self.summary if frame is None else frame
        rows = frame[(frame["family"] == family) & (frame["policy"] == policy)]
        return rows.sort_values("sigma")["mean_regret"].to_numpy()

    def lowest(self, family: str, sigma: float, frame: pd.DataFrame | None = None) -> str:
        """The policy with the lowest mean regret on ``family`` at ``sigma``."""
        frame = self.summary if frame is None else frame
        rows = frame[(frame["family"] == family) & (frame["sigma"] == sigma)]
        return rows.sort_values("mean_regret")["policy"].iloc[0]

    def closing_lines(self) -> list[str]:
        """Sentences computed from the tables: each policy's regret against sigma beside the paper's, the readings'
        distances."""
        lines = []
        for family in self.families:
            s = self.summary[self.summary["family"] == family]
            for policy in self.policies:
                p_ = s[s["policy"] == policy].sort_values("sigma")
                ours = ", ".join(f"sigma={x:g} {v:,.0f}" for x, v in zip(p_["sigma"], p_["mean_regret"]))
                paper = " (paper " + ", ".join(f"{v:,.0f}" for v in p_["paper"]) + ")" if p_["paper"].notna().any() else ""
                lines.append(f"- {family}, {policy}: {ours}{paper}")
        if self.sweep is not None and len(self.sweep.distance):
            lines.append(self.sweep.distance_line("Concave half"))
        return lines


def noise(instance_sets: Mapping, policies, T: int, n_seeds: int, *, policy_params: Mapping | None = None,
          blend_sets: Mapping | None = None, sweep_seeds: int = 1, seed: int = 0, n_boot: int = 2000,
          name: str = "noise_ablation", output_dir="", **grid_options) -> NoiseAblation:
    """Appendix K.2 (Table 2): the mean regret of ``policies`` at ``T`` for each noise level, on each family.

    ``instance_sets``: (family, sigma) -> instances whose Gaussian noise is sigma; ``policies``: policy names,
    made at each sigma by ``make_policies(policies, policy_params, sigma=sigma)`` (so sigma reaches only the
    policies whose index takes a noise scale: CURE-UCB and R-ed-UCB, the two the appendix names);
    ``blend_sets``: (w, sigma) -> concave instances with fixed blend weight w, for the sweep of the concave half
    (``sweep_seeds`` seeds each). Saves ``<name>_regret``, ``<name>_paired_differences``, ``<name>_blend_sweep``
    and the figure ``<name>_regret``. ``grid_options`` go to ``run_grid`` (backend, cache, n_jobs, address).
    """
    from . import make_policies
    policies = [policies] if isinstance(policies, str) else list(policies)
    _check_sets("instance_sets", instance_sets, pairs="(family, sigma)")
    if blend_sets:
        _check_sets("blend_sets", blend_sets, pairs="(w, sigma)")
    frames, summaries, diffs = [], [], []
    for (family, sigma), inst in instance_sets.items():
        pols = make_policies(policies, policy_params, sigma=sigma)
        d = _grid(inst, pols, T, n_seeds, seed, grid_options).assign(family=family, sigma=sigma)
        frames.append(d)
        summaries.append(regret_summary(d, n_boot=n_boot).assign(family=family, sigma=sigma))
        if REFERENCE in pols and len(pols) > 1:
            diffs.append(paired_differences(d, REFERENCE, n_boot=n_boot).assign(family=family, sigma=sigma))
    summary = pd.concat(summaries, ignore_index=True)
    summary["policy"] = summary["policy"].astype(str)
    summary["paper"] = [table2_value(r.family, r.policy, r.sigma) for r in summary.itertuples()]
    diffs = pd.concat(diffs, ignore_index=True) if diffs else pd.DataFrame()
    save_table(summary, f"{name}_regret", output_dir)
    save_table(diffs, f"{name}_paired_differences", output_dir)
    families = list(dict.fromkeys(f for f, _ in instance_sets))
    sigmas = list(dict.fromkeys(x for _, x in instance_sets))
    sweep = None
    if blend_sets and "concave" in families:
        sweep = _noise_sweep(summary, blend_sets, policies, policy_params, T, sweep_seeds, seed, n_boot, grid_options)
        save_table(sweep.readings, f"{name}_blend_sweep", output_dir)
    result = NoiseAblation(policies, families, sigmas, T, pd.concat(frames, ignore_index=True), summary, diffs, sweep)
    result.figures["regret"] = _plot_noise(result)
    save_figure(result.figures["regret"], f"{name}_regret", output_dir)
    return result


def _noise_sweep(summary, blend_sets, policies, policy_params, T, sweep_seeds, seed, n_boot, grid_options) -> BlendSweep:
    from . import make_policies
    parts = [summary[summary["family"] == "concave"].assign(reading=DEFAULT_READING, w=np.nan)]
    for (w, sigma), inst in blend_sets.items():
        d = _grid(inst, make_policies(policies, policy_params, sigma=sigma), T, sweep_seeds, seed, grid_options)
        parts.append(regret_summary(d, n_boot=n_boot).assign(family="concave", sigma=sigma, reading=f"w = {w:g}", w=w))
    for part in parts:
        part["policy"] = part["policy"].astype(str)
        part["paper"] = [table2_value("concave", r.policy, r.sigma) for r in part.itertuples()]
    return BlendSweep.from_parts(parts, ["policy", "sigma"])


def _plot_noise(result: NoiseAblation):
    """Mean regret against sigma (log scale) per family: ours with intervals, Table 2 dashed."""
    palette = policy_palette(result.policies)
    summary = result.summary
    fig, axes = plt.subplots(1, len(result.families), figsize=(6.2 * len(result.families), 4.3), squeeze=False)
    for ax, family in zip(axes[0], result.families):
        for policy in result.policies:
            s = summary[(summary["family"] == family) & (summary["policy"] == policy)].sort_values("sigma")
            ax.errorbar(s["sigma"], s["mean_regret"], yerr=[s["mean_regret"] - s["ci_low"], s["ci_high"] - s["mean_regret"]],
                        marker="o", capsize=3, color=palette[policy], label=f"{policy}, ours")
            ax.plot(s["sigma"], s["paper"], ls="--", marker="s", mfc="none", color=palette[policy], label=f"{policy}, paper")
        ax.set_xscale("log")
        ax.set_xlabel("noise sigma (environment and policies)")
        ax.set_ylabel(f"mean pseudo-regret at T = {result.T:,}")
        ax.set_title(family)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return fig
