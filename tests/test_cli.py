"""The `hb` command end to end on the fixture workbook (tests/fixtures/workbook).

Fast checks call ``main`` in-process; the runs that start kernels go through a real ``hb``
subprocess, once per module, and many tests read their results.
"""
from __future__ import annotations

import contextlib
import io
import json
import sys
import types

import nbformat
import pytest

from horizonbandits import cli


def hb(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.strip()]


# ----------------------------------------------------------------------------- help, list, usage

def test_help_names_every_command(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0
    for word in ("list", "run", "new", "data", "--root"):
        assert word in out


def test_run_help_lists_profiles(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    out = capsys.readouterr().out
    assert "smoke" in out and "paper" in out and "--only" in out and "--jobs" in out


def test_list_shows_descriptions_and_picks_up_new_files(fixture_workbook, capsys):
    code, out, _ = hb(capsys, "--root", fixture_workbook, "list")
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == ["alpha_demo", "beta_range", "gamma_crash"]
    assert lines[0].split(None, 1)[1] == "Draws a straight line and saves it as a figure and a table."
    # a notebook is registered by existing
    nb = nbformat.read(fixture_workbook / "notebooks" / "beta_range.ipynb", as_version=4)
    nb.cells[0].source = "# Zeta\n\nA copy made by hand."
    nbformat.write(nb, fixture_workbook / "notebooks" / "zeta.ipynb")
    _, out, _ = hb(capsys, "--root", fixture_workbook, "list")
    assert out.splitlines()[-1].split(None, 1) == ["zeta", "A copy made by hand."]


def test_root_from_environment(fixture_workbook, capsys, monkeypatch):
    monkeypatch.setenv("HB_ROOT", str(fixture_workbook))
    code, out, _ = hb(capsys, "list")
    assert code == 0 and "gamma_crash" in out


@pytest.mark.parametrize("args, fragment", [
    (["run", "--profile", "huge"], "invalid choice: 'huge'"),
    (["run", "--jobs", "0"], "--jobs=0 is not allowed"),
    (["run", "--only", "alpha_dem"], "unknown notebook 'alpha_dem' (did you mean 'alpha_demo'?); valid names: "
                                     "alpha_demo, beta_range, gamma_crash"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["new", "Bad Name", "--from", "alpha_demo"], "is not allowed"),
    (["data"], "hb data needs a data set"),
])
def test_user_mistakes_are_one_line(fixture_workbook, capsys, args, fragment):
    try:
        code, out, err = hb(capsys, "--root", fixture_workbook, *args)
    except SystemExit as done:  # argparse's own errors
        code, (out, err) = done.code, capsys.readouterr()
    assert code == 2
    assert len(error_lines(err)) == 1 and fragment in err and "Traceback" not in err
    assert not (fixture_workbook / "outputs").exists()


def test_missing_root_is_one_line(tmp_path, capsys):
    code, _, err = hb(capsys, "--root", tmp_path / "nowhere", "list")
    assert code == 2 and error_lines(err) == [f"hb: error: workbook root {tmp_path / 'nowhere'} has no notebooks/ folder"]


# ----------------------------------------------------------------------------- validation before running

def test_unknown_key_stops_everything(fixture_workbook, capsys):
    (fixture_workbook / "params" / "smoke" / "gamma_crash.yaml").write_text("divisr: 3\n")
    code, _, err = hb(capsys, "--root", fixture_workbook, "run", "--profile", "smoke")
    assert code == 2
    assert error_lines(err) == ["hb: error: params/smoke/gamma_crash.yaml: unknown key 'divisr' (did you mean "
                                "'divisor'?); valid keys: divisor"]
    assert not (fixture_workbook / "outputs").exists()  # nothing ran, not even the valid notebooks


def test_wrong_types_each_get_a_line(fixture_workbook, capsys):
    (fixture_workbook / "params" / "default" / "alpha_demo.yaml").write_text("n_points: 2.5\nlabel: 7\n")
    (fixture_workbook / "params" / "default" / "gamma_crash.yaml").write_text("divisor: '3'\n")
    code, _, err = hb(capsys, "--root", fixture_workbook, "run", "--profile", "default")
    lines = error_lines(err)
    assert code == 2 and len(lines) == 3
    assert lines[0].startswith("hb: error: params/default/alpha_demo.yaml: key 'n_points' expects int")
    assert lines[1].startswith("hb: error: params/default/alpha_demo.yaml: key 'label' expects str")
    assert lines[2].startswith("hb: error: params/default/gamma_crash.yaml: key 'divisor' expects int")
    assert not (fixture_workbook / "outputs").exists()


def test_bad_yaml_and_bad_notebook(fixture_workbook, capsys):
    (fixture_workbook / "params" / "paper" / "alpha_demo.yaml").write_text("n_points: [1, 2\n")
    (fixture_workbook / "notebooks" / "broken.ipynb").write_text("{not json")
    code, _, err = hb(capsys, "--root", fixture_workbook, "run", "--profile", "paper")
    lines = error_lines(err)
    assert code == 2 and len(lines) == 2 and "Traceback" not in err
    assert lines[0].startswith("hb: error: params/paper/alpha_demo.yaml line 2: invalid YAML")
    assert lines[1].startswith("hb: error: notebooks/broken.ipynb: not a readable notebook")


def test_only_validates_the_selected_notebooks(fixture_workbook, capsys):
    (fixture_workbook / "params" / "smoke" / "gamma_crash.yaml").write_text("nope: 1\n")
    code, out, err = hb(capsys, "--root", fixture_workbook, "run", "--profile", "smoke", "--check",
                        "--only", "alpha_demo", "beta_range")
    assert code == 0 and err == ""
    assert "alpha_demo: params/smoke/alpha_demo.yaml; overrides {'n_points': 4, 'slope': 2.0}" in out
    assert not (fixture_workbook / "outputs").exists()


# ----------------------------------------------------------------------------- hb data fetch-imdb

def test_a_second_run_into_the_same_folder_stops_with_one_line(fixture_workbook, capsys, tmp_path):
    # A run holding the profile folder (here: this process, through the same lock hb run takes).
    from horizonbandits import workbook as wbk
    wb = wbk.Workbook.locate(fixture_workbook, tmp_path / "out")
    folder = wb.profile_dir("smoke")
    folder.mkdir(parents=True)
    with wbk.exclusive_profile_dir(wb, folder):
        code, out, err = hb(capsys, "--root", fixture_workbook, "--outputs", tmp_path / "out", "run", "--profile", "smoke")
    assert code == 2
    lines = error_lines(err)
    assert len(lines) == 1 and "another hb run" in lines[0] and "--outputs" in lines[0]
    assert sorted(p.name for p in folder.iterdir()) == [".hb-run.lock"]  # nothing was written
    # Released on exit: the lock can be taken again.
    with wbk.exclusive_profile_dir(wb, folder):
        pass


def test_fetch_imdb_calls_the_loader_lazily(fixture_workbook, capsys, monkeypatch, tmp_path):
    calls = []
    fake = types.ModuleType("horizonbandits.rising.imdb")
    fake.fetch_imdb = lambda dest: calls.append(dest) or dest
    monkeypatch.setitem(sys.modules, "horizonbandits.rising.imdb", fake)
    code, out, _ = hb(capsys, "--root", fixture_workbook, "data", "fetch-imdb", "--dest", tmp_path / "d")
    assert code == 0 and calls == [tmp_path / "d"] and str(tmp_path / "d") in out


def test_fetch_imdb_without_loader_is_one_line(fixture_workbook, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "horizonbandits.rising.imdb", None)  # import fails
    code, _, err = hb(capsys, "--root", fixture_workbook, "data", "fetch-imdb")
    assert code == 2 and len(error_lines(err)) == 1
    assert err.startswith("hb: error: the IMDB loader is not available")


# ----------------------------------------------------------------------------- real runs (kernels)

@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory, hb_subprocess, copy_workbook):
    """All three fixture notebooks with the smoke profile, two at a time: alpha_demo succeeds,
    beta_range hits a library ValueError, gamma_crash divides by zero."""
    root = copy_workbook(tmp_path_factory.mktemp("run") / "workbook")
    proc = hb_subprocess("--root", root, "run", "--profile", "smoke", "--jobs", "2")
    profile_dir = root / "outputs" / "smoke"
    manifest = json.loads((profile_dir / "manifest.json").read_text())
    return types.SimpleNamespace(root=root, proc=proc, dir=profile_dir, manifest=manifest,
                                 table=(profile_dir / "tables" / "alpha_demo_values.csv").read_text())


def test_failed_notebooks_make_the_exit_status_nonzero(smoke_run):
    assert smoke_run.proc.returncode == 1, smoke_run.proc.stdout + smoke_run.proc.stderr


def test_library_value_error_is_exactly_one_line(smoke_run):
    out = smoke_run.proc.stdout
    lines = [line for line in out.splitlines() if line.startswith("beta_range")]
    assert lines == ["beta_range: ValueError: n_arms=1 is not allowed: expected an integer >= 2"]
    assert "Traceback" not in out + smoke_run.proc.stderr
    # the line is followed by the next report, not by traceback lines
    following = out.splitlines()[out.splitlines().index(lines[0]) + 1:]
    assert not following or not following[0].startswith("    |")


def test_other_failures_show_the_cell_error_and_a_traceback_tail(smoke_run):
    out = smoke_run.proc.stdout.splitlines()
    start = next(i for i, line in enumerate(out) if line.startswith("gamma_crash"))
    assert out[start] == "gamma_crash: failed in cell [3]: ZeroDivisionError: division by zero"
    tail = [line for line in out[start + 1:] if line.startswith("    |")]
    assert any("return 10 / d" in line for line in tail)


def test_the_other_notebook_still_ran(smoke_run):
    assert "ok      alpha_demo" in smoke_run.proc.stdout
    assert (smoke_run.dir / "notebooks" / "alpha_demo.ipynb").is_file()
    assert (smoke_run.dir / "figures" / "alpha_demo_line.png").stat().st_size > 0
    assert smoke_run.table.splitlines() == ["x,y", "0,0.0", "1,2.0", "2,4.0", "3,6.0"]  # n_points 4, slope 2


def test_failed_outputs_stay_apart_from_good_ones(smoke_run):
    assert sorted(p.name for p in (smoke_run.dir / "notebooks").iterdir()) == ["alpha_demo.ipynb"]
    assert sorted(p.name for p in (smoke_run.dir / "html").iterdir()) == ["alpha_demo.html"]
    failed = sorted(p.name for p in (smoke_run.dir / "failed").iterdir())
    assert failed == ["beta_range.html", "beta_range.ipynb", "gamma_crash.html", "gamma_crash.ipynb"]
    assert not (smoke_run.dir / ".running").exists()
    executed = nbformat.read(smoke_run.dir / "notebooks" / "alpha_demo.ipynb", as_version=4)
    injected = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and f'output_dir = "{smoke_run.dir}"' in injected[0].source


def test_manifest_contents(smoke_run):
    m = smoke_run.manifest
    assert m["profile"] == "smoke" and set(m["git"]) == {"commit", "dirty"}
    for package in ("numpy", "scipy", "numba", "pandas", "matplotlib", "seaborn", "papermill", "cvxpy", "dask"):
        assert m["packages"][package], package
    assert m["python"].count(".") == 2
    nbs = m["notebooks"]
    assert {k: v["status"] for k, v in nbs.items()} == {"alpha_demo": "ok", "beta_range": "failed",
                                                         "gamma_crash": "failed"}
    alpha = nbs["alpha_demo"]
    assert alpha["parameters"] == {"n_points": 4, "slope": 2.0, "label": "line", "seed": None,
                                   "output_dir": str(smoke_run.dir)}
    assert alpha["wall_time_s"] > 0 and alpha["figures"] == ["figures/alpha_demo_line.png"]
    assert alpha["tables"] == ["tables/alpha_demo_values.csv"] and alpha["html"] == "html/alpha_demo.html"
    assert nbs["beta_range"]["error"] == "ValueError: n_arms=1 is not allowed: expected an integer >= 2"
    assert nbs["gamma_crash"]["parameters"]["divisor"] == 0


def test_index_page(smoke_run):
    page = (smoke_run.dir / "index.html").read_text()
    for text in ("Alpha demo", "Draws a straight line", "Beta range", "Gamma crash",
                 'href="html/alpha_demo.html"', 'src="figures/alpha_demo_line.png"',
                 'href="tables/alpha_demo_values.csv"', 'href="failed/gamma_crash.html"',
                 "ZeroDivisionError: division by zero", f"{smoke_run.manifest['notebooks']['alpha_demo']['wall_time_s']:.1f} s"):
        assert text in page, text
    rendered = (smoke_run.dir / "html" / "alpha_demo.html").read_text()
    assert "data:image/png;base64" in rendered and "The line ends at 6" in rendered


@pytest.fixture(scope="module")
def copy_and_rerun(smoke_run, hb_subprocess):
    """`hb new delta_copy --from alpha_demo` on the run's workbook, then `hb run --only delta_copy`
    (one notebook at a time, where the first run used two processes)."""
    new = hb_subprocess("--root", smoke_run.root, "new", "delta_copy", "--from", "alpha_demo")
    listed = io.StringIO()
    with contextlib.redirect_stdout(listed):
        cli.main(["--root", str(smoke_run.root), "list"])
    rerun = hb_subprocess("--root", smoke_run.root, "run", "--profile", "smoke", "--only", "delta_copy")
    manifest = json.loads((smoke_run.dir / "manifest.json").read_text())
    return types.SimpleNamespace(new=new, listed=listed.getvalue(), rerun=rerun, manifest=manifest)


def test_hb_new_end_to_end(smoke_run, copy_and_rerun):
    assert copy_and_rerun.new.returncode == 0, copy_and_rerun.new.stderr
    assert "delta_copy" in copy_and_rerun.listed.split()
    assert copy_and_rerun.rerun.returncode == 0, copy_and_rerun.rerun.stdout + copy_and_rerun.rerun.stderr
    assert (smoke_run.dir / "figures" / "delta_copy_line.png").is_file()  # its own figure names
    entry = copy_and_rerun.manifest["notebooks"]["delta_copy"]
    assert entry["status"] == "ok" and entry["title"] == "Delta copy"
    assert entry["parameters"]["n_points"] == 4  # the copied smoke params were used
    again = cli.main(["--root", str(smoke_run.root), "new", "delta_copy", "--from", "alpha_demo"])
    assert again == 2


def test_only_merges_with_the_previous_manifest(copy_and_rerun):
    nbs = copy_and_rerun.manifest["notebooks"]
    assert set(nbs) == {"alpha_demo", "beta_range", "gamma_crash", "delta_copy"}
    assert nbs["gamma_crash"]["status"] == "failed"  # kept from the first run


def test_jobs_do_not_change_results(smoke_run, copy_and_rerun):
    # the copy computes what alpha_demo computed with the same smoke parameters: --jobs 2 then --jobs 1
    copy_table = (smoke_run.dir / "tables" / "delta_copy_values.csv").read_text()
    assert copy_table == smoke_run.table
    assert (smoke_run.dir / "tables" / "alpha_demo_values.csv").read_text() == smoke_run.table  # untouched
