"""One line where one line is promised, and nothing left behind (issue 29, items 7 and 8)."""
from __future__ import annotations

import pytest

from horizonbandits import cli
from horizonbandits import workbook as wbk


def test_a_lock_file_that_is_a_folder_is_one_line(fixture_workbook, tmp_path, capsys):
    lock = tmp_path / "out" / "smoke" / ".hb-run.lock"
    lock.mkdir(parents=True)
    code = cli.main(["--root", str(fixture_workbook), "--outputs", str(tmp_path / "out"), "run", "--profile", "smoke"])
    err = capsys.readouterr().err
    assert code == 2 and err == f"hb: error: cannot lock {lock}: it is a folder; remove it; nothing was run\n", err


def test_relative_folders_in_the_environment_are_resolved_where_hb_was_called(tmp_path, monkeypatch):
    """The trial: a relative HB_CACHE_DIR landed in notebooks/ (the kernels' working folder)."""
    monkeypatch.chdir(tmp_path)
    wb = wbk.Workbook(tmp_path / "wb", tmp_path / "out")
    env = wbk.kernel_environment(wb, None, base={"HB_CACHE_DIR": "shared/cache", "HB_DATA_DIR": "data"})
    assert env["HB_CACHE_DIR"] == str(tmp_path / "shared" / "cache") and env["HB_DATA_DIR"] == str(tmp_path / "data")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert wbk.kernel_environment(wb, None, base={"HB_CACHE_DIR": "~/c"})["HB_CACHE_DIR"] == str(tmp_path / "home" / "c")
    assert wbk.kernel_environment(wb, None, base={"HB_CACHE_DIR": "/abs"})["HB_CACHE_DIR"] == "/abs"


def test_a_run_removes_what_killed_runs_left(fixture_workbook, tmp_path):
    """The trial: runs killed while writing left ``.manifest.*.json.tmp`` files for good."""
    (fixture_workbook / "notebooks" / "broken.ipynb").write_text("{")  # reported as failed without a kernel
    wb = wbk.Workbook.locate(fixture_workbook, tmp_path / "out")
    profile = wb.profile_dir("smoke")
    left = [profile / ".manifest.k2j4.json.tmp", profile / ".index.a1.html.tmp", profile / ".hb-probe.x9",
            profile / "html" / ".alpha_demo.q.html.tmp", profile / "notebooks" / ".alpha_demo.r.ipynb.tmp"]
    kept = [profile / "figures" / ".by_hand.png.tmp", profile / "tables" / "alpha_demo_values.csv"]
    for path in left + kept:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    assert wbk.run(wb, "smoke", only=["broken"], out=open("/dev/null", "w")) == 1
    assert [p for p in left if p.exists()] == [] and all(p.exists() for p in kept)
    assert (profile / "manifest.json").is_file() and not list(profile.glob(".*.tmp"))


@pytest.mark.parametrize("title", ["<script>alert(1)</script>", "[click](javascript:alert(1))", "Fish & chips",
                                   "`code`", "two\nlines", "tab\there", " ", "x" * 201])
def test_titles_that_would_be_live_html_or_markup_are_refused(fixture_workbook, title):
    """The trial: ``hb new --title`` with a <script> put a live script into html/<name>.html."""
    wb = wbk.Workbook.locate(fixture_workbook)
    with pytest.raises(wbk.WorkbookError) as err:
        wbk.new_notebook(wb, "fresh", "alpha_demo", title=title)
    assert str(err.value).startswith("--title is not allowed: ") and "\n" not in str(err.value)
    assert not wb.notebook_path("fresh").exists()


def test_plain_titles_are_kept(fixture_workbook):
    wb = wbk.Workbook.locate(fixture_workbook)
    wbk.new_notebook(wb, "fresh", "alpha_demo", title="Rising bandits: T = 10,000 (what's new?) 50% / 2")
    assert wb.info("fresh").title == "Rising bandits: T = 10,000 (what's new?) 50% / 2"
