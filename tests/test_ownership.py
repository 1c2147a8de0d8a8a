"""A notebook's outputs are exactly the files its last successful run wrote (issue 29, item 2)."""
from __future__ import annotations

import json

import nbformat

from conftest import run_hb
from horizonbandits import workbook as wbk


def _copy_as(fixture_workbook, source: str, name: str) -> None:
    """A notebook made by hand (``cp``), so ``hb new``'s refusal of the name does not apply."""
    nb = nbformat.read(fixture_workbook / "notebooks" / f"{source}.ipynb", as_version=4)
    for cell in nb.cells:
        cell.source = cell.source.replace(f'"{source}_', f'"{name}_')
    nbformat.write(nb, fixture_workbook / "notebooks" / f"{name}.ipynb")


def test_a_notebook_named_like_anothers_figure_deletes_none_of_its_files(fixture_workbook, tmp_path):
    """The issue's trial: after a run of ``horizon_dependence_regret``, ``horizon_dependence``'s
    ``horizon_dependence_regret.{png,pdf,csv}`` were gone and the manifest still said "ok". Here
    ``alpha_demo_line`` (a copy of beta_range) runs after alpha_demo, whose figure is alpha_demo_line.png."""
    _copy_as(fixture_workbook, "beta_range", "alpha_demo_line")
    out = tmp_path / "out"
    first = run_hb("--root", fixture_workbook, "--outputs", out, "run", "--profile", "smoke", "--only", "alpha_demo")
    assert first.returncode == 0, first.stderr
    profile = out / "smoke"
    alphas = ["figures/alpha_demo_line.png", "figures/alpha_demo_line.pdf", "tables/alpha_demo_values.csv"]
    assert all((profile / rel).is_file() for rel in alphas)
    second = run_hb("--root", fixture_workbook, "--outputs", out, "run", "--profile", "smoke", "--only",
                    "alpha_demo_line")
    assert second.returncode == 0, second.stderr
    assert all((profile / rel).is_file() for rel in alphas)  # deleted before
    manifest = json.loads((profile / "manifest.json").read_text())
    alpha, copy = manifest["notebooks"]["alpha_demo"], manifest["notebooks"]["alpha_demo_line"]
    assert set(alphas) <= set(alpha["outputs"]) and alpha["figures"] == ["figures/alpha_demo_line.png"]
    assert copy["outputs"] == ["figures/alpha_demo_line_bars.png"] and copy["figures"] == copy["outputs"]
    page = (profile / "index.html").read_text()
    section = page.split('id="alpha_demo"')[1].split("<section")[0]
    assert 'src="figures/alpha_demo_line.png"' in section and "alpha_demo_line_bars" not in section


def _task(tmp_path, name: str, files: dict) -> wbk.Task:
    task = wbk.Task(name, "nb", str(tmp_path), str(tmp_path / "smoke"), "smoke", {})
    for rel, data in files.items():
        (task.staged_outputs / rel).parent.mkdir(parents=True, exist_ok=True)
        (task.staged_outputs / rel).write_bytes(data)
    task.staged_notebook.write_text("{}")
    return task


def test_a_run_that_writes_another_notebooks_file_fails_and_keeps_it(tmp_path):
    profile = tmp_path / "smoke"
    (profile / "figures").mkdir(parents=True)
    (profile / "figures" / "a_x.png").write_bytes(b"a's")
    records = {"a": ["figures/a_x.png"]}
    result = wbk.adopt_outputs(_task(tmp_path, "b", {"figures/a_x.png": b"b's", "figures/b_y.png": b"y"}),
                               wbk.Result("b", "ok", 1.0, "t"), records)
    assert result.status == "failed" and result.outputs is None
    assert result.error == ("it wrote figures/a_x.png, which notebook 'a' wrote in its last run; nothing of this run "
                            "was kept (give the file a name that starts with 'b')")
    assert (profile / "figures" / "a_x.png").read_bytes() == b"a's" and not (profile / "figures" / "b_y.png").exists()
    assert result.executed == "failed/b.ipynb"


def test_only_recorded_files_inside_the_profile_are_removed(tmp_path):
    """A manifest written before records existed lends no guesses to deletion, and an edited one
    cannot make a run delete hb run's own files or anything outside the profile folder."""
    profile = tmp_path / "smoke"
    outside = tmp_path / "precious.txt"
    keep = {"figures/a_old.png": b"legacy", "manifest.json": b"{}", "index.html": b"i"}
    for rel, data in keep.items():
        (profile / rel).parent.mkdir(parents=True, exist_ok=True)
        (profile / rel).write_bytes(data)
    outside.write_text("x")
    legacy = {"notebooks": {"a": {"status": "ok", "figures": ["figures/a_old.png"]}}}
    assert wbk.recorded_outputs(legacy) == {} and wbk.recorded_outputs(legacy, exact=False) == {
        "a": ["figures/a_old.png"]}
    records = {"a": ["../precious.txt", str(outside), "manifest.json", "index.html", ".hb-run.lock"]}
    result = wbk.adopt_outputs(_task(tmp_path, "a", {"figures/a_new.png": b"n"}), wbk.Result("a", "ok", 1.0, "t"),
                               records)
    assert result.status == "ok" and result.outputs == ["figures/a_new.png"]
    assert all((profile / rel).read_bytes() == data for rel, data in keep.items()) and outside.exists()
