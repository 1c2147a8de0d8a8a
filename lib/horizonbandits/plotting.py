"""Seaborn figure helpers shared by the notebooks, and saving of figures and tables.

``save_figure(fig, name, output_dir)`` writes ``figures/<name>.png`` and ``.pdf``;
``save_table(df, name, output_dir)`` writes ``tables/<name>.csv``. Both are atomic.
``mean_band(ax, x, mean, low, high, ...)`` draws a mean with its interval band.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

if matplotlib.get_backend().lower() not in ("module://matplotlib_inline.backend_inline", "inline"):
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from .outputs import atomic_write, resolve_output_dir  # noqa: E402
from .timing import charged  # noqa: E402
from .stats import bootstrap_band, mean_ci  # noqa: E402,F401 (moved to stats; notebooks import them from here)

# One colour per policy, stable across notebooks.
POLICY_ORDER = ["CURE-UCB", "R-ed-UCB", "ET-SWGTS", "TI-UCB", "R-ed-AE", "SW-UCB", "SW-KL-UCB",
                "SW-TS", "Rexp3", "Ser4"]


def setup(context: str = "notebook") -> None:
    sns.set_theme(context=context, style="whitegrid")


def policy_palette(names=None) -> dict:
    names = list(names) if names is not None else POLICY_ORDER
    ordered = [n for n in POLICY_ORDER if n in names] + [n for n in names if n not in POLICY_ORDER]
    colours = sns.color_palette("tab10", max(10, len(ordered)))
    return {n: colours[i % len(colours)] for i, n in enumerate(ordered)}


@charged("figures")
def save_figure(fig, name: str, output_dir="") -> Path:
    """Save ``fig`` as ``figures/<name>.png`` (150 dpi) and ``figures/<name>.pdf``; returns the PNG path."""
    folder = resolve_output_dir(output_dir) / "figures"
    png = atomic_write(folder / f"{name}.png", lambda tmp: fig.savefig(tmp, dpi=150, bbox_inches="tight", format="png"))
    atomic_write(folder / f"{name}.pdf", lambda tmp: fig.savefig(tmp, bbox_inches="tight", format="pdf"))
    return png


def save_table(df: pd.DataFrame, name: str, output_dir="", index: bool = False) -> Path:
    """Save ``df`` as ``tables/<name>.csv``."""
    folder = resolve_output_dir(output_dir) / "tables"
    return atomic_write(folder / f"{name}.csv", lambda tmp: df.to_csv(tmp, index=index))


def regret_vs_horizon(df: pd.DataFrame, x: str = "T", y: str = "regret", hue: str = "policy", ax=None,
                      logy: bool = False, title: str | None = None):
    """Mean regret against the horizon with 95 % bootstrap intervals (``stats.bootstrap_band``: seeded, so
    the figure is the same at every run), one line per policy."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.2))
    sns.lineplot(data=df, x=x, y=y, hue=hue, marker="o", errorbar=bootstrap_band, ax=ax,
                 palette=policy_palette(df[hue].unique()))
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel("horizon T")
    ax.set_ylabel("cumulative pseudo-regret")
    if title:
        ax.set_title(title)
    return ax


def mean_band(ax, x, mean, low, high, color=None, label=None, alpha: float = 0.25, band_lw: float | None = None,
              **line_kw):
    """Draw a centre line (a mean, or a median) over ``x`` with its interval band from ``low`` to ``high``.

    The line gets ``color``, ``label`` and ``line_kw`` (``marker``, ``ms``, ...); the band the same
    colour at opacity ``alpha``, and edge width ``band_lw`` (matplotlib's default when None). Returns
    the line and the band.
    """
    if not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha!r}")
    (line,) = ax.plot(x, mean, color=color, label=label, **line_kw)
    band_kw = {} if band_lw is None else {"lw": band_lw}
    band = ax.fill_between(x, low, high, color=line.get_color(), alpha=alpha, **band_kw)
    return line, band


def win_rate_heatmap(matrix: pd.DataFrame, ax=None, title: str | None = None):
    """Heatmap of a square win-rate matrix (row beats column), in percent."""
    if ax is None:
        _, ax = plt.subplots(figsize=(1 + 0.6 * len(matrix), 0.8 + 0.5 * len(matrix)))
    sns.heatmap(100 * matrix, annot=True, fmt=".0f", cmap="RdBu_r", vmin=0, vmax=100, cbar=False, ax=ax)
    ax.set_xlabel("column policy")
    ax.set_ylabel("row policy (share of instances it beats the column)")
    if title:
        ax.set_title(title)
    return ax
