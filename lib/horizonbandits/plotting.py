"""Seaborn figure helpers shared by the notebooks, and saving of figures and tables.

``setup()`` sets seaborn's theme (``sns.set_theme(context="notebook", style="whitegrid")``) without importing
seaborn: importing it costs a notebook about 1.4 CPU-s (seaborn imports scipy.stats), and most notebooks draw
with matplotlib alone. The values are seaborn 0.13's, checked key by key and pixel by pixel against seaborn by
``tests/test_plotting.py``; seaborn itself is imported by the helpers that draw with it
(:func:`regret_vs_horizon`, :func:`win_rate_heatmap`) or by a notebook that imports it.

``save_figure(fig, name, output_dir)`` writes ``figures/<name>.png``, and ``.pdf`` in the paper profile or
when ``$HB_FIGURE_FORMATS`` asks for it (and in a notebook shows the PNG it wrote);
``save_table(df, name, output_dir)`` writes ``tables/<name>.csv``. Both are atomic.
``mean_band(ax, x, mean, low, high, ...)`` draws a mean with its interval band.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

INLINE_BACKENDS = ("module://matplotlib_inline.backend_inline", "inline")
if matplotlib.get_backend().lower() not in INLINE_BACKENDS:
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from cycler import cycler  # noqa: E402
from matplotlib.colors import ListedColormap, to_rgb  # noqa: E402

from .outputs import atomic_write, figure_formats, resolve_output_dir  # noqa: E402
from .timing import charged  # noqa: E402
from .stats import bootstrap_band  # noqa: E402

# One colour per policy, stable across notebooks.
POLICY_ORDER = ["CURE-UCB", "R-ed-UCB", "ET-SWGTS", "TI-UCB", "R-ed-AE", "SW-UCB", "SW-KL-UCB",
                "SW-TS", "Rexp3", "Ser4"]


# seaborn's "notebook" context and "whitegrid" style (seaborn 0.13), what sns.set_theme sets, in its order.
_NOTEBOOK_CONTEXT = {
    "axes.linewidth": 1.25, "grid.linewidth": 1, "lines.linewidth": 1.5, "lines.markersize": 6, "patch.linewidth": 1,
    "xtick.major.width": 1.25, "ytick.major.width": 1.25, "xtick.minor.width": 1, "ytick.minor.width": 1,
    "xtick.major.size": 6, "ytick.major.size": 6, "xtick.minor.size": 4, "ytick.minor.size": 4,
    "font.size": 12, "axes.labelsize": 12, "axes.titlesize": 12, "xtick.labelsize": 11, "ytick.labelsize": 11,
    "legend.fontsize": 11, "legend.title_fontsize": 12,
}
_WHITEGRID_STYLE = {
    "figure.facecolor": "white", "axes.labelcolor": ".15", "xtick.direction": "out", "ytick.direction": "out",
    "xtick.color": ".15", "ytick.color": ".15", "axes.axisbelow": True, "grid.linestyle": "-", "text.color": ".15",
    "font.family": ["sans-serif"],
    "font.sans-serif": ["Arial", "DejaVu Sans", "Liberation Sans", "Bitstream Vera Sans", "sans-serif"],
    "lines.solid_capstyle": "round", "patch.edgecolor": "w", "patch.force_edgecolor": True, "image.cmap": "rocket",
    "xtick.top": False, "ytick.right": False, "axes.grid": True, "axes.facecolor": "white", "axes.edgecolor": ".8",
    "grid.color": ".8", "axes.spines.left": True, "axes.spines.bottom": True, "axes.spines.right": True,
    "axes.spines.top": True, "xtick.bottom": False, "ytick.left": False,
}
# seaborn's "deep" palette: the colour cycle; its six-colour version and a near black are the colour codes.
_DEEP = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C", "#CCB974", "#64B5CD"]
_COLOUR_CODES = dict(zip("bgrmyck", [_DEEP[i] for i in (0, 2, 3, 4, 8, 9)] + [(0.1, 0.1, 0.1)]))


class _SeabornColormap(ListedColormap):
    """A seaborn colormap (``rocket``, the theme's ``image.cmap``) registered under its name before seaborn is
    imported; its colours are seaborn's, read (importing seaborn) when the map is first used (seaborn, once
    imported, keeps this registration: it registers a name only once)."""

    def __init__(self, name: str):
        super().__init__(["black"] * 256, name)  # seaborn's maps have 256 colours

    @property
    def colors(self):
        if self._seaborn_colors is None:
            import seaborn.cm

            self._seaborn_colors = getattr(seaborn.cm, self.name).colors
        return self._seaborn_colors

    @colors.setter
    def colors(self, value):  # only ListedColormap.__init__ sets it, to the placeholder above
        self._seaborn_colors = None


def setup(context: str = "notebook") -> None:
    """seaborn's theme, ``sns.set_theme(context=context, style="whitegrid")``; for the notebook context (every
    notebook's) without importing seaborn."""
    if context != "notebook":
        import seaborn as sns

        sns.set_theme(context=context, style="whitegrid")
        return
    matplotlib.rcParams.update(_NOTEBOOK_CONTEXT)
    matplotlib.rcParams.update(_WHITEGRID_STYLE)
    matplotlib.rcParams["axes.prop_cycle"] = cycler("color", [to_rgb(c) for c in _DEEP])
    for code, colour in _COLOUR_CODES.items():
        matplotlib.colors.colorConverter.colors[code] = to_rgb(colour)
    if "rocket" not in matplotlib.colormaps:
        matplotlib.colormaps.register(_SeabornColormap("rocket"))


def _tab10() -> list[tuple[float, float, float]]:
    """matplotlib's tab10 colours as seaborn's ``color_palette("tab10")`` gives them."""
    cmap = matplotlib.colormaps["tab10"]
    return [to_rgb(c) for c in cmap(np.linspace(0, 1, cmap.N))]


def policy_palette(names=None) -> dict:
    """One tab10 colour per policy, in ``POLICY_ORDER`` first (the colours cycle after ten policies)."""
    names = list(names) if names is not None else POLICY_ORDER
    ordered = [n for n in POLICY_ORDER if n in names] + [n for n in names if n not in POLICY_ORDER]
    colours = _tab10()
    return {n: colours[i % len(colours)] for i, n in enumerate(ordered)}


PNG_DPI = 150


@charged("figures")
def save_figure(fig, name: str, output_dir="") -> Path:
    """Save ``fig`` as ``figures/<name>.png`` (150 dpi), and as ``figures/<name>.pdf`` where a paper needs it;
    returns the PNG path.

    Formats (``outputs.figure_formats``): the PNG always (the pages show it); the PDF when the output folder
    is the ``paper`` profile's (``outputs/paper``: its name, as for the claims' profile column) or when
    ``$HB_FIGURE_FORMATS`` lists it (``HB_FIGURE_FORMATS=png,pdf hb run ...``; a format other than png and
    pdf is a one-line error naming the variable). A PDF costs 0.7 to 1.4 CPU-s a figure (measured
    2026-12-04), more than the PNG, and no page links one that was not written.

    In a notebook (matplotlib's inline backend) the cell shows the PNG just written, at the size the
    inline backend would show the figure (``figure.dpi``), and the figure is closed: the inline backend
    would otherwise draw it a third time when the cell ends (about as long as writing the PNG; measured
    2026-12-03). Cutting the PDF to a bounding box computed once for both files saved nothing measurable
    (matplotlib's tight box costs a layout pass, not a draw), so both files are cut as before.
    """
    folder = resolve_output_dir(output_dir) / "figures"
    formats = figure_formats(output_dir)
    png = atomic_write(folder / f"{name}.png", lambda tmp: fig.savefig(tmp, dpi=PNG_DPI, bbox_inches="tight", format="png"))
    if "pdf" in formats:
        atomic_write(folder / f"{name}.pdf", lambda tmp: fig.savefig(tmp, bbox_inches="tight", format="pdf"))
    if _in_notebook():
        show_png(png.read_bytes(), fig.dpi / PNG_DPI)
        plt.close(fig)
    return png


def show_png(data: bytes, scale: float = 1.0) -> None:
    """Display PNG ``data`` in the notebook, ``scale`` times its width in pixels (its IHDR header)."""
    from IPython.display import Image, display

    width = int.from_bytes(data[16:20], "big")
    display(Image(data=data, format="png", width=max(1, round(width * scale))))


def _in_notebook() -> bool:
    """Whether figures are shown by matplotlib's inline backend in an IPython kernel."""
    if matplotlib.get_backend().lower() not in INLINE_BACKENDS:
        return False
    from IPython import get_ipython

    return get_ipython() is not None


def save_table(df: pd.DataFrame, name: str, output_dir="", index: bool = False) -> Path:
    """Save ``df`` as ``tables/<name>.csv``."""
    folder = resolve_output_dir(output_dir) / "tables"
    return atomic_write(folder / f"{name}.csv", lambda tmp: df.to_csv(tmp, index=index))


def regret_vs_horizon(df: pd.DataFrame, x: str = "T", y: str = "regret", hue: str = "policy", ax=None,
                      logy: bool = False, title: str | None = None):
    """Mean regret against the horizon with 95 % bootstrap intervals (``stats.bootstrap_band``: seeded, so
    the figure is the same at every run), one line per policy."""
    import seaborn as sns

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
    import seaborn as sns

    if ax is None:
        _, ax = plt.subplots(figsize=(1 + 0.6 * len(matrix), 0.8 + 0.5 * len(matrix)))
    sns.heatmap(100 * matrix, annot=True, fmt=".0f", cmap="RdBu_r", vmin=0, vmax=100, cbar=False, ax=ax)
    ax.set_xlabel("column policy")
    ax.set_ylabel("row policy (share of instances it beats the column)")
    if title:
        ax.set_title(title)
    return ax
