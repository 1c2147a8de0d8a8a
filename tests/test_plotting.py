"""The mean-with-band helper the notebooks share."""
import matplotlib
import numpy as np
import pytest
from matplotlib.colors import to_rgba

from horizonbandits import plotting

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def test_mean_band_draws_the_line_and_its_band_in_one_colour():
    fig, ax = plt.subplots()
    x = np.array([1.0, 2.0, 4.0])
    line, band = plotting.mean_band(ax, x, [1.0, 2.0, 3.0], [0.5, 1.5, 2.0], [1.5, 2.5, 4.0], color="tab:red",
                                    label="CURE-UCB", alpha=0.15, band_lw=0, marker="o", ms=4)
    np.testing.assert_array_equal(line.get_xdata(), x)
    np.testing.assert_array_equal(line.get_ydata(), [1.0, 2.0, 3.0])
    assert line.get_label() == "CURE-UCB" and line.get_marker() == "o" and line.get_markersize() == 4
    assert to_rgba(band.get_facecolor()[0], 1) == to_rgba("tab:red") and band.get_alpha() == 0.15
    assert band.get_linewidth()[0] == 0
    # The band spans low..high: its vertices reach exactly the extreme values.
    ys = band.get_paths()[0].vertices[:, 1]
    assert ys.min() == 0.5 and ys.max() == 4.0
    assert [h.get_label() for h in ax.get_legend_handles_labels()[0]] == ["CURE-UCB"]
    plt.close(fig)


def test_mean_band_without_a_colour_shares_the_lines_cycle_colour():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])                      # takes C0, so the band's line gets C1
    line, band = plotting.mean_band(ax, [0, 1], [1, 2], [0, 1], [2, 3])
    assert to_rgba(line.get_color()) == to_rgba("C1")
    assert to_rgba(band.get_facecolor()[0], 1) == to_rgba("C1")
    plt.close(fig)


def test_mean_band_rejects_an_opacity_outside_0_1():
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="alpha"):
        plotting.mean_band(ax, [0, 1], [1, 2], [0, 1], [2, 3], alpha=1.5)
    plt.close(fig)


def _counting_savefig(fig, calls):
    real = fig.savefig

    def savefig(fname, *a, **kw):
        calls.append(kw.get("format"))
        return real(fname, *a, **kw)

    fig.savefig = savefig


def _saved(folder, name, calls):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    _counting_savefig(fig, calls)
    png = plotting.save_figure(fig, name, folder)
    assert plt.fignum_exists(fig.number)  # outside a notebook the figure stays open
    plt.close(fig)
    return png


@pytest.mark.parametrize("profile", ["smoke", "default", "interactive"])
def test_a_page_only_profile_gets_the_png_alone(tmp_path, monkeypatch, profile):
    monkeypatch.delenv("HB_FIGURE_FORMATS", raising=False)
    calls = []
    png = _saved(tmp_path / profile, "one", calls)
    assert calls == ["png"]
    assert png == tmp_path / profile / "figures" / "one.png" and png.stat().st_size > 0
    assert sorted(p.name for p in png.parent.iterdir()) == ["one.png"]  # no PDF, no temporary left


def test_the_paper_profile_gets_a_pdf_too_each_saved_once(tmp_path, monkeypatch):
    monkeypatch.delenv("HB_FIGURE_FORMATS", raising=False)
    calls = []
    png = _saved(tmp_path / "paper", "one", calls)
    assert sorted(calls) == ["pdf", "png"]
    assert png == tmp_path / "paper" / "figures" / "one.png" and (png.parent / "one.pdf").read_bytes()[:5] == b"%PDF-"
    assert sorted(p.name for p in png.parent.iterdir()) == ["one.pdf", "one.png"]  # no temporary left


@pytest.mark.parametrize("value, formats", [("png,pdf", ["pdf", "png"]), (" PDF ", ["pdf", "png"]),
                                            ("png", ["png"]), ("", ["png"])])
def test_hb_figure_formats_adds_formats(tmp_path, monkeypatch, value, formats):
    monkeypatch.setenv("HB_FIGURE_FORMATS", value)
    calls = []
    png = _saved(tmp_path / "smoke", "one", calls)
    assert sorted(calls) == formats
    assert sorted(p.name for p in png.parent.iterdir()) == [f"one.{f}" for f in formats]


@pytest.mark.parametrize("value", ["svg", "png,jpg", "png;pdf"])
def test_a_bad_hb_figure_formats_is_a_one_line_error(tmp_path, monkeypatch, value):
    monkeypatch.setenv("HB_FIGURE_FORMATS", value)
    fig, _ = plt.subplots()
    with pytest.raises(ValueError) as err:
        plotting.save_figure(fig, "one", tmp_path / "smoke")
    plt.close(fig)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"HB_FIGURE_FORMATS={value!r} is not allowed")
    assert message.endswith("expected a comma-separated list of png, pdf")
    assert not (tmp_path / "smoke" / "figures").exists() or not any((tmp_path / "smoke" / "figures").iterdir())


def test_in_a_notebook_the_saved_png_is_shown_and_the_figure_not_drawn_again(tmp_path, monkeypatch):
    """The inline backend would draw the figure a third time when the cell ends; the cell shows the PNG written."""
    import IPython.display

    shown = []
    monkeypatch.delenv("HB_FIGURE_FORMATS", raising=False)
    monkeypatch.setattr(plotting, "_in_notebook", lambda: True)
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [1, 0])
    calls = []
    _counting_savefig(fig, calls)
    png = plotting.save_figure(fig, "two", tmp_path / "paper")
    assert sorted(calls) == ["pdf", "png"]
    (image,) = shown
    assert image.data == png.read_bytes()
    width_px = int.from_bytes(image.data[16:20], "big")
    assert image.width == round(width_px * fig.dpi / plotting.PNG_DPI)  # the size the inline backend shows
    assert not plt.fignum_exists(fig.number)


_THEME_PROBE = """
import hashlib, json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
if sys.argv[2] == "perturbed":
    plt.style.use("ggplot")  # a theme set before: every key the theme sets must be set again
    matplotlib.rcParams.update({"font.family": ["serif"], "image.cmap": "magma"})
if sys.argv[1] == "ours":
    from horizonbandits import plotting
    plotting.setup()
    imported = sorted(m for m in ("seaborn", "scipy.stats") if m in sys.modules)
else:
    import seaborn as sns
    sns.set_theme(context="notebook", style="whitegrid")
    imported = None
rc = {k: repr(v) for k, v in matplotlib.rcParams.items()}
codes = {c: matplotlib.colors.to_rgba(c) for c in "bgrmyck"}
fig, axes = plt.subplots(1, 3, figsize=(7, 2.5))
for i in range(4):
    axes[0].plot([0, 1, 2], [i, i + 1, i * 0.5], marker="o", label=f"line {i}")
axes[0].plot([0, 2], [3, 0], "r--", label="r")
axes[0].legend(title="legend")
axes[0].set_title("title")
axes[0].set_xlabel("x")
axes[1].bar(["a", "b", "c"], [3, 1, 2], color="g")
axes[2].imshow(np.arange(64.0).reshape(8, 8))
fig.canvas.draw()
pixels = hashlib.sha256(np.asarray(fig.canvas.buffer_rgba()).tobytes()).hexdigest()
print(json.dumps({"rc": rc, "codes": codes, "pixels": pixels, "imported": imported}))
"""


def _theme(which: str, state: str) -> dict:
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "PYTHONPATH": str(Path(plotting.__file__).resolve().parents[1]), "MPLBACKEND": "Agg"}
    out = subprocess.run([sys.executable, "-c", _THEME_PROBE, which, state], capture_output=True, text=True,
                         check=True, env=env)
    return json.loads(out.stdout)


@pytest.mark.parametrize("state", ["fresh", "perturbed"])
def test_setup_sets_seaborns_theme_without_importing_seaborn(state):
    ours, seaborns = _theme("ours", state), _theme("seaborn", state)
    assert ours["imported"] == []  # neither seaborn nor scipy.stats at setup
    differ = {k: (v, seaborns["rc"][k]) for k, v in ours["rc"].items() if v != seaborns["rc"][k]}
    assert differ == {}
    assert ours["codes"] == seaborns["codes"]
    assert ours["pixels"] == seaborns["pixels"]  # the same figure, pixel for pixel (image.cmap included)


def test_policy_palette_is_seaborns_tab10():
    import seaborn as sns
    for n in range(1, 26):
        names = [f"p{i}" for i in range(n)]
        colours = sns.color_palette("tab10", max(10, n))
        expected = {name: colours[i % len(colours)] for i, name in enumerate(names)}
        assert plotting.policy_palette(names) == expected
    assert list(plotting.policy_palette()) == plotting.POLICY_ORDER
