"""The `hb` command end to end on the fixture workbook (tests/fixtures/workbook).

Fast checks call ``main`` in-process; the runs that start kernels go through a real ``hb``
subprocess, once per module, and many tests read their results.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import time
import types
from pathlib import Path

import nbformat
import pytest

from conftest import free_port
from horizonbandits import cli


def hb(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.strip()]


def add_notebook(root: Path, name: str, parameters: str, *code: str) -> Path:
    """Write ``notebooks/<name>.ipynb`` into a copied workbook: a title, the parameters cell, ``code`` cells."""
    cells = [nbformat.v4.new_markdown_cell(f"# {name}\n\nA notebook written by a test."),
             nbformat.v4.new_code_cell(parameters, metadata={"tags": ["parameters"]}),
             *(nbformat.v4.new_code_cell(c) for c in code)]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                        "language": "python"}})
    path = root / "notebooks" / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


# ----------------------------------------------------------------------------- help, list, usage

def test_help_names_every_command(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0
    for word in ("list", "run", "new", "data", "warmup", "--root"):
        assert word in out


def test_warmup_prints_a_line_per_model_and_the_total_without_a_workbook(capsys, tmp_path, monkeypatch):
    from horizonbandits.workbook import warmup
    monkeypatch.chdir(tmp_path)  # no notebooks/ or params/ here: warmup needs the package only
    monkeypatch.setattr(warmup, "_WARMERS", {"rising": lambda: 10, "commitment": lambda: 4, "portfolio": lambda: 2})
    code, out, err = hb(capsys, "warmup")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["rising", "commitment", "portfolio", "warmup"]
    assert lines[0].startswith("rising: 10 policies, all loaded from the cache, ") and lines[0].endswith(" s")
    assert lines[-1].startswith("warmup: ") and "in all, 0 kernel(s) compiled" in lines[-1]


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
        code, (_, err) = done.code, capsys.readouterr()
    assert code == 2
    assert len(error_lines(err)) == 1 and fragment in err and "Traceback" not in err
    assert not (fixture_workbook / "outputs").exists()


@pytest.mark.parametrize("args", [["run", "--profile", "smoke"], ["run", "--check"]])
def test_a_bad_hb_figure_formats_stops_the_run_in_one_line(fixture_workbook, capsys, monkeypatch, args):
    monkeypatch.setenv("HB_FIGURE_FORMATS", "png,svg")
    code, _, err = hb(capsys, "--root", fixture_workbook, *args)
    assert code == 2 and error_lines(err) == ["hb: error: HB_FIGURE_FORMATS='png,svg' is not allowed: unknown figure "
                                              "format 'svg'; expected a comma-separated list of png, pdf"]
    assert not (fixture_workbook / "outputs").exists()  # said before any notebook ran


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


def test_bad_yaml_stops_everything_and_a_broken_notebook_does_not_hide_it(fixture_workbook, capsys):
    (fixture_workbook / "params" / "paper" / "alpha_demo.yaml").write_text("n_points: [1, 2\n")
    (fixture_workbook / "notebooks" / "broken.ipynb").write_text("{not json")
    code, _, err = hb(capsys, "--root", fixture_workbook, "run", "--profile", "paper")
    lines = error_lines(err)
    assert code == 2 and len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith("hb: error: params/paper/alpha_demo.yaml line 2: invalid YAML")
    assert not (fixture_workbook / "outputs").exists()


def test_a_broken_notebook_is_listed_by_name_and_the_others_still_list(fixture_workbook, capsys):
    (fixture_workbook / "notebooks" / "broken.ipynb").write_text("{not json")
    code, out, err = hb(capsys, "--root", fixture_workbook, "list")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == ["alpha_demo", "beta_range", "broken", "gamma_crash"]
    assert "broken       (cannot be read)" in out and "Draws a straight line" in out
    assert len(error_lines(err)) == 1
    assert err.startswith("hb: warning: notebooks/broken.ipynb: not a readable notebook")
    code, out, err = hb(capsys, "--root", fixture_workbook, "run", "--profile", "smoke", "--check")
    assert code == 0 and "broken: cannot run: notebooks/broken.ipynb: not a readable notebook" in out


# ----------------------------------------------------------------------------- silent typos

def test_a_parameter_file_without_its_notebook_is_an_error(fixture_workbook, capsys):
    (fixture_workbook / "params" / "smoke" / "alpha_dmeo.yaml").write_text("n_points: 3\n")
    code, _, err = hb(capsys, "--root", fixture_workbook, "run", "--profile", "smoke", "--only", "beta_range")
    assert code == 2
    assert error_lines(err) == ["hb: error: params/smoke/alpha_dmeo.yaml: no notebook named 'alpha_dmeo' (did you "
                                "mean 'alpha_demo'?); rename or delete the file"]
    assert not (fixture_workbook / "outputs").exists()


def test_list_elements_are_checked(fixture_workbook, capsys):
    add_notebook(fixture_workbook, "horizons_demo", 'horizons = [1000, 2000]\nsigmas = [0.5, 1]\noutput_dir = ""')
    (fixture_workbook / "params" / "smoke" / "horizons_demo.yaml").write_text('horizons: ["5000"]\nsigmas: [0.1, 2]\n')
    code, _, err = hb(capsys, "--root", fixture_workbook, "run", "--profile", "smoke", "--only", "horizons_demo")
    assert code == 2
    assert error_lines(err) == ["hb: error: params/smoke/horizons_demo.yaml: key 'horizons' expects a list of int "
                                "(the notebook's default is [1000, 2000]), got '5000' (str) at position 0"]
    assert not (fixture_workbook / "outputs").exists()


def test_unknown_policy_names_are_errors(fixture_workbook, capsys):
    add_notebook(fixture_workbook, "policy_demo", 'policies = ["CURE-UCB", "SW-UCB"]\n'
                                                  'policy_params = {"CURE-UCB": {"eps": 0.5}}\noutput_dir = ""')
    params = fixture_workbook / "params" / "smoke" / "policy_demo.yaml"
    params.write_text('policies: ["CURE-UCB", "R-ed-UCB"]\npolicy_params: {"R-ed-UCB": {"sigma": 0.1}}\n')
    code, _, err = hb(capsys, "--root", fixture_workbook, "run", "--profile", "smoke", "--only", "policy_demo", "--check")
    assert code == 0, err  # registered names pass
    params.write_text('policies: ["CURE-UBC", "SW-UCB"]\npolicy_params: {"SW-UCD": {}}\n')
    code, _, err = hb(capsys, "--root", fixture_workbook, "run", "--profile", "smoke", "--only", "policy_demo")
    lines = error_lines(err)
    assert code == 2 and len(lines) == 2
    assert lines[0].startswith("hb: error: params/smoke/policy_demo.yaml: key 'policies' names unknown policy "
                               "'CURE-UBC' (did you mean 'CURE-UCB'?); valid policies: ")
    assert "R-ed-UCB" in lines[0].split("valid policies: ")[1]
    assert lines[1].startswith("hb: error: params/smoke/policy_demo.yaml: key 'policy_params' names unknown policy "
                               "'SW-UCD' (did you mean 'SW-UCB'?)")
    assert not (fixture_workbook / "outputs").exists()


# ----------------------------------------------------------------------------- unwritable outputs (item 6)

def test_outputs_path_that_is_a_file(fixture_workbook, capsys, tmp_path):
    (tmp_path / "out").write_text("not a folder")
    code, _, err = hb(capsys, "--root", fixture_workbook, "--outputs", tmp_path / "out", "run", "--profile", "smoke")
    assert code == 2
    assert error_lines(err) == [f"hb: error: cannot write to {tmp_path / 'out' / 'smoke'}: a file is in the way of "
                                "that path; nothing was run (fix it, or write elsewhere with --outputs DIR)"]
    (tmp_path / "out2" / "smoke").mkdir(parents=True)
    (tmp_path / "out2" / "smoke" / "figures").write_text("")
    code, _, err = hb(capsys, "--root", fixture_workbook, "--outputs", tmp_path / "out2", "run", "--profile", "smoke")
    assert code == 2 and error_lines(err) == [
        f"hb: error: cannot write to {tmp_path / 'out2' / 'smoke' / 'figures'}: it is a file, not a folder; nothing "
        "was run (fix it, or write elsewhere with --outputs DIR)"]
    assert sorted(p.name for p in (tmp_path / "out2" / "smoke").iterdir()) == ["figures"]


def test_read_only_figures_folder(fixture_workbook, capsys, tmp_path, monkeypatch):
    # Simulated, so the test also holds when run as root (which ignores permission bits).
    from horizonbandits.workbook import runner
    figures = tmp_path / "out" / "smoke" / "figures"
    figures.mkdir(parents=True)
    real = runner.tempfile.mkstemp

    def mkstemp(*args, dir=None, **kw):
        if dir is not None and Path(dir) == figures:
            raise PermissionError(13, "Read-only file system")
        return real(*args, dir=dir, **kw)

    monkeypatch.setattr(runner.tempfile, "mkstemp", mkstemp)
    code, _, err = hb(capsys, "--root", fixture_workbook, "--outputs", tmp_path / "out", "run", "--profile", "smoke")
    assert code == 2 and error_lines(err) == [
        f"hb: error: cannot write to {figures}: read-only file system; nothing was run (fix it, or write elsewhere "
        "with --outputs DIR)"]
    assert sorted(p.name for p in figures.parent.iterdir()) == ["figures"]  # no lock, no manifest: nothing ran


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permission bits")
def test_read_only_outputs_folder(fixture_workbook, capsys, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o555)
    try:
        code, _, err = hb(capsys, "--root", fixture_workbook, "--outputs", out, "run", "--profile", "smoke")
    finally:
        out.chmod(0o755)
    assert code == 2 and error_lines(err)[0].startswith(f"hb: error: cannot write to {out / 'smoke'}: permission denied")


# ----------------------------------------------------------------------------- the kernels' environment (items 5, 12)

def test_check_shows_the_cache_and_the_cluster(fixture_workbook, capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("HB_CACHE_DIR", raising=False)
    monkeypatch.delenv("HB_DASK_ADDRESS", raising=False)
    code, out, _ = hb(capsys, "--root", fixture_workbook, "--outputs", tmp_path / "o", "run", "--check")
    assert code == 0 and f"kernels get HB_CACHE_DIR={tmp_path / 'o' / 'cache'} (grids run on this machine)" in out
    monkeypatch.setenv("HB_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("HB_DASK_ADDRESS", "tcp://10.0.0.1:8786")
    asked = []
    monkeypatch.setattr(cli.wbk, "check_scheduler", lambda address: asked.append(address) or 3)  # tests/test_cluster_faults.py
    code, out, _ = hb(capsys, "--root", fixture_workbook, "run", "--check")
    assert f"HB_CACHE_DIR={tmp_path / 'mine'} and HB_DASK_ADDRESS=tcp://10.0.0.1:8786" in out
    code, out, _ = hb(capsys, "--root", fixture_workbook, "run", "--check", "--cluster", "tcp://h:1")
    assert "HB_DASK_ADDRESS=tcp://h:1 (grids run on that dask cluster, 3 worker(s) now)" in out
    assert asked == ["tcp://10.0.0.1:8786", "tcp://h:1"]  # --check asks the scheduler too
    code, _, err = hb(capsys, "--root", fixture_workbook, "run", "--check", "--cluster", "tcp://h :1")
    assert code == 2 and "--cluster='tcp://h :1' is not allowed" in err


# ----------------------------------------------------------------------------- hb claims

def test_claims_of_a_profile_not_run(fixture_workbook, capsys, tmp_path):
    code, out, err = hb(capsys, "--root", fixture_workbook, "--outputs", tmp_path / "o", "claims", "--profile", "paper")
    assert code == 2 and error_lines(err) == [
        f"hb: error: no claims for the paper profile: {tmp_path / 'o' / 'paper' / 'claims.csv'} does not exist; run "
        "hb run --profile paper first"]


def _ledger_file(path, rows):
    from horizonbandits import claims
    frame = pd_frame([{c: "" for c in claims.COLUMNS} | r for r in rows], claims.COLUMNS)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return path


def pd_frame(rows, columns):
    import pandas as pd
    return pd.DataFrame(rows, columns=columns)


def test_claims_diff_against_a_profile_or_a_file(fixture_workbook, capsys, tmp_path):
    out_root = tmp_path / "o"
    base = {"paper": "A", "kind": "test", "where": "w", "statement": "s", "notebook": "alpha_demo"}
    _ledger_file(out_root / "default" / "claims.csv", [
        base | {"claim_id": "A-one", "verdict": "inconclusive", "ours": "93% [83%, 100%]"},
        base | {"claim_id": "A-two", "verdict": "reproduced", "ours": "1", "kind": "illustration"}])
    old = tmp_path / "old_claims.csv"
    pd_frame([{"claim_id": "A-one", "verdict": "partly", "ours": "93%"},
              {"claim_id": "A-gone", "verdict": "reproduced", "ours": "x"}], ["claim_id", "verdict", "ours"]).to_csv(
        old, index=False)
    code, out, err = hb(capsys, "--root", fixture_workbook, "--outputs", out_root, "claims", "--diff", str(old))
    assert code == 0 and err == ""
    assert "A-one" in out and "verdict: partly -> inconclusive" in out and "ours: 93% -> 93% [83%, 100%]" in out
    assert "added: - -> illustration: reproduced" in out and "removed: : reproduced -> -" in out
    code, out, _ = hb(capsys, "--root", fixture_workbook, "--outputs", out_root, "claims", "--diff", "default")
    assert code == 0 and out.strip() == "no claim changed from default to default"
    code, _, err = hb(capsys, "--root", fixture_workbook, "--outputs", out_root, "claims", "--diff", "nowhere.csv")
    assert code == 2 and "neither a profile" in err


def test_claims_print_no_terminal_escapes(fixture_workbook, capsys, tmp_path):
    out_root = tmp_path / "o"
    _ledger_file(out_root / "default" / "claims.csv", [
        {"claim_id": "A-one", "paper": "A", "kind": "test", "verdict": "reproduced", "ours": "\x1b[2J\x1b[31mred",
         "notebook": "alpha_demo"}])
    code, out, _ = hb(capsys, "--root", fixture_workbook, "--outputs", out_root, "claims")
    assert code == 0 and "\x1b" not in out and "?[2J?[31mred" in out


@pytest.mark.parametrize("edit, word", [(lambda rows: rows[:7], "fields"), (lambda rows: ["C" if v == "A" else v for v in rows],
                                                                            "unknown paper")])
def test_claims_refuse_a_damaged_ledger(fixture_workbook, capsys, tmp_path, edit, word):
    import csv as csv_mod
    out_root = tmp_path / "o"
    path = _ledger_file(out_root / "default" / "claims.csv", [
        {"claim_id": "A-one", "paper": "A", "kind": "test", "verdict": "reproduced", "notebook": "alpha_demo"}])
    rows = list(csv_mod.reader(path.open()))
    with path.open("w", newline="") as fh:
        csv_mod.writer(fh).writerows([rows[0], edit(rows[1])])
    code, _, err = hb(capsys, "--root", fixture_workbook, "--outputs", out_root, "claims")
    assert code == 2 and len(error_lines(err)) == 1 and word in err


def test_an_uncatalogued_claim_fails_its_notebook_in_one_line(fixture_workbook, hb_subprocess):
    catalogue = fixture_workbook / "catalogue.yaml"
    catalogue.write_text(catalogue.read_text().split("B-fixture-untestable:")[0])
    proc = hb_subprocess("--root", fixture_workbook, "run", "--profile", "smoke", "--only", "alpha_demo")
    assert proc.returncode == 1
    assert ("alpha_demo: ClaimsError: claim 'B-fixture-untestable' recorded by alpha_demo is not in the catalogue "
            "(catalogue.yaml); add an entry there first") in proc.stdout


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

CLUSTER = f"tcp://127.0.0.1:{free_port()}"


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory, hb_subprocess, copy_workbook):
    """All three fixture notebooks with the smoke profile, two at a time: alpha_demo succeeds,
    beta_range hits a library ValueError, gamma_crash divides by zero. ``--cluster`` names a
    scheduler without workers (hb run checks that one answers) that no fixture notebook contacts:
    the run only passes the address on."""
    root = copy_workbook(tmp_path_factory.mktemp("run") / "workbook")
    env = {k: v for k, v in os.environ.items() if k != "HB_DASK_ADDRESS"}
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", CLUSTER.rsplit(":", 1)[1], "--no-dashboard"], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                cli.wbk.check_scheduler(CLUSTER, timeout=5)
                break
            except cli.wbk.WorkbookError:
                assert time.monotonic() < deadline, "the test's dask scheduler did not start"
                time.sleep(0.5)
        proc = hb_subprocess("--root", root, "run", "--profile", "smoke", "--jobs", "2", "--cluster", CLUSTER)
    finally:
        scheduler.kill()
        scheduler.wait(timeout=30)
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
    assert alpha["tables"] == ["tables/alpha_demo_env.csv", "tables/alpha_demo_values.csv"]
    assert alpha["html"] == "html/alpha_demo.html"
    assert m["cluster"] == CLUSTER
    assert alpha["outputs_from"]["started"] == alpha["started"]  # its files come from this run
    assert nbs["gamma_crash"]["outputs_from"] is None  # no run of it has succeeded
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


NETWORK = [re.compile(p, re.IGNORECASE) for p in (
    r"<(?:script|link|img|iframe|source)\b[^>]*\b(?:src|href)\s*=\s*[\"']?\s*(?:https?:)?//",  # a tag that loads a URL
    r"@import\s+(?:url\()?\s*[\"']?\s*(?:https?:)?//",  # a stylesheet importing one
    r"url\(\s*[\"']?\s*(?:https?:)?//",  # a font or image in CSS
    r"\bimport\s*\(\s*[\"'](?:https?:)?//",  # a script importing a module
)]


def network_references(page: str) -> list[str]:
    return [m.group(0) for pattern in NETWORK for m in pattern.finditer(page)]


def test_network_reference_scan_can_fail():
    assert network_references('<script src="https://cdn.example/x.js"></script>')
    assert network_references("<link rel=stylesheet href='//fonts.example/f.css'>")
    assert network_references("<style>@import url(https://x/y.css);</style>")
    assert network_references('<script type="module">await import("https://x/m.mjs")</script>')
    assert not network_references('<script src="../_static/mathjax/MathJax.js"></script><a href="https://x">a link</a>')


def test_pages_load_nothing_from_the_network_and_formulas_render_offline(smoke_run):
    pages = [smoke_run.dir / "index.html", *smoke_run.dir.glob("html/*.html"), *smoke_run.dir.glob("failed/*.html")]
    assert len(pages) == 4  # the index, alpha_demo's page and the two failed notebooks' pages
    for page in pages:
        text = page.read_text()
        assert network_references(text) == [], page
        for src in re.findall(r'<script[^>]*\bsrc="([^"]+)"', text):  # every script is a local file
            assert (page.parent / src.split("?")[0]).is_file(), (page, src)
    rendered = (smoke_run.dir / "html" / "alpha_demo.html").read_text()
    assert '<script src="../_static/mathjax/MathJax.js?config=' in rendered
    assert 'webFont: "STIX-Web"' in rendered  # the fonts the copy ships
    assert (smoke_run.dir / "_static" / "mathjax" / "fonts" / "HTML-CSS" / "STIX-Web" / "woff").is_dir()


def test_the_kernel_sees_the_cache_folder_and_the_cluster(smoke_run):
    env = (smoke_run.dir / "tables" / "alpha_demo_env.csv").read_text().splitlines()
    assert env == ["variable,value", f"HB_CACHE_DIR,{smoke_run.root / 'outputs' / 'cache'}",
                   f"HB_DASK_ADDRESS,{CLUSTER}"]


def test_the_ledger(smoke_run):
    from horizonbandits import claims
    ledger = claims.read(smoke_run.dir / "claims.csv")
    assert list(ledger.columns) == claims.COLUMNS
    assert ledger[["claim_id", "verdict", "notebook", "profile"]].values.tolist() == [
        ["A-fixture-line-end", "reproduced", "alpha_demo", "smoke"],
        ["B-fixture-untestable", "not testable", "alpha_demo", "smoke"]]
    assert ledger["ours"].tolist()[0] == "6" and ledger["settings"].tolist()[0] == "slope = 2"
    assert ledger["kind"].tolist() == ["test", "test"] and ledger["rule"].tolist()[0] == "exact check (no sampling)"
    page = (smoke_run.dir / "index.html").read_text()
    section = page.split('<section id="claims">')[1].split("</section>")[0]
    # the contents list first, then the ledger, then the notebooks' sections
    assert page.index('<nav id="contents">') < page.index('<section id="claims">') < page.index('<section class="nb"')
    assert "paper A: 1 reproduced &middot; paper B: 1 not testable" in section
    assert section.count('<a href="html/alpha_demo.html">alpha_demo</a>') == 2


def test_hb_claims_prints_the_ledger(smoke_run, capsys):
    code, out, err = hb(capsys, "--root", smoke_run.root, "claims", "--profile", "smoke")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "paper A: Tests of the papers' claims"
    assert lines[-3:] == ["smoke: paper A tests: 1 reproduced", "smoke: paper B tests: 1 not testable",
                          "smoke: 2 claim(s) in all: 1 reproduced, 1 not testable"]
    assert lines[1].split()[:2] == ["A-fixture-line-end", "reproduced"] and "[alpha_demo]" in lines[1]
    assert any(line.split()[:3] == ["B-fixture-untestable", "not", "testable"] for line in lines)


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
    listed = next(line for line in copy_and_rerun.listed.splitlines() if "delta_copy" in line)
    assert "A copy of `alpha_demo`: replace this line" in listed  # a placeholder, not the source's description
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


def test_only_merges_the_ledger(smoke_run, copy_and_rerun):
    from horizonbandits import claims
    ledger = claims.read(smoke_run.dir / "claims.csv")
    assert ledger.groupby("notebook").size().to_dict() == {"alpha_demo": 2, "delta_copy": 2}
    copy = ledger[ledger["notebook"] == "delta_copy"]
    assert sorted(copy["claim_id"]) == ["delta_copy.A-fixture-line-end", "delta_copy.B-fixture-untestable"]
    assert set(copy["kind"]) == {"ours"}  # a copy is not a test of the paper: the tallies stay the same
    assert "paper A: 1 reproduced &middot; paper B: 1 not testable" in (smoke_run.dir / "index.html").read_text()


def test_jobs_do_not_change_results(smoke_run, copy_and_rerun):
    # the copy computes what alpha_demo computed with the same smoke parameters: --jobs 2 then --jobs 1
    copy_table = (smoke_run.dir / "tables" / "delta_copy_values.csv").read_text()
    assert copy_table == smoke_run.table
    assert (smoke_run.dir / "tables" / "alpha_demo_values.csv").read_text() == smoke_run.table  # untouched


@pytest.fixture(scope="module")
def failed_rerun(smoke_run, copy_and_rerun, hb_subprocess):
    """alpha_demo run again with a parameter the library refuses: the run fails before writing anything."""
    before = {p.relative_to(smoke_run.dir).as_posix(): p.read_bytes()
              for p in smoke_run.dir.rglob("*alpha_demo*") if p.is_file()}
    (smoke_run.root / "params" / "smoke" / "alpha_demo.yaml").write_text("n_points: 1\n")
    proc = hb_subprocess("--root", smoke_run.root, "run", "--profile", "smoke", "--only", "alpha_demo")
    manifest = json.loads((smoke_run.dir / "manifest.json").read_text())
    return types.SimpleNamespace(before=before, proc=proc, manifest=manifest)


def test_a_failed_rerun_keeps_the_previous_outputs(smoke_run, failed_rerun):
    assert failed_rerun.proc.returncode == 1
    assert "alpha_demo: ValueError: n_points=1 is not allowed" in failed_rerun.proc.stdout
    for rel, data in failed_rerun.before.items():  # figures, tables, claims, executed notebook, html
        assert (smoke_run.dir / rel).read_bytes() == data, rel
    assert {"figures/alpha_demo_line.png", "tables/alpha_demo_values.csv", "claims/alpha_demo.csv",
            "notebooks/alpha_demo.ipynb", "html/alpha_demo.html"} <= set(failed_rerun.before)
    assert (smoke_run.dir / "failed" / "alpha_demo.ipynb").is_file()  # the failed run, for reading
    assert not (smoke_run.dir / ".running").exists()


def test_the_index_says_which_run_the_outputs_come_from(smoke_run, failed_rerun):
    entry = failed_rerun.manifest["notebooks"]["alpha_demo"]
    first = smoke_run.manifest["notebooks"]["alpha_demo"]
    assert entry["status"] == "failed" and entry["started"] >= first["started"]
    assert entry["outputs_from"]["started"] == first["started"]
    assert entry["outputs_html"] == "html/alpha_demo.html" and entry["figures"] == ["figures/alpha_demo_line.png"]
    page = (smoke_run.dir / "index.html").read_text()
    section = page.split('id="alpha_demo"')[1].split("<section")[0]
    assert (f"This run failed; the figures and tables below are from the run of {first['started']}" in section)
    assert "the last run failed; this row is from the run of" in page.split('<section id="claims">')[1]
