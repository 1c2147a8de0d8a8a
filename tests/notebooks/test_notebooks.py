"""Every committed notebook follows the workbook's conventions and runs with the smoke profile.

(a) stripped outputs, one `parameters` cell holding `output_dir`, kernelspec python3;
(b) params/{smoke,default,paper}/<name>.yaml exist and validate against the parameters cell;
(c) `hb run --profile smoke` over all notebooks (once per session, into a temporary outputs
    root) succeeds for each notebook, which writes at least one figure; manifest and index exist.
"""
from __future__ import annotations

import itertools
import json
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

from horizonbandits import workbook as wbk

REPO = Path(__file__).resolve().parents[2]
WORKBOOK = wbk.Workbook(REPO, REPO / "outputs")
NAMES = WORKBOOK.names()

# One test per notebook, so a failure names it; with no notebooks, one explicit skip.
per_notebook = pytest.mark.parametrize(
    "name", NAMES or [pytest.param(None, marks=pytest.mark.skip(reason="no notebooks in notebooks/ yet"))])


def load(name: str):
    return nbformat.read(WORKBOOK.notebook_path(name), as_version=4)


def test_notebooks_are_discovered():
    on_disk = sorted(p.stem for p in (REPO / "notebooks").glob("*.ipynb"))
    assert NAMES == on_disk


def git(*args, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(REPO), *args], input=stdin, capture_output=True, check=False)


IN_GIT = shutil.which("git") is not None and git("rev-parse", "--git-dir").returncode == 0


def committed(name: str):
    """The notebook as git holds it at HEAD (what a commit carries, not the working copy, which JupyterLab's
    autosave may have filled with outputs); the working copy outside a git checkout."""
    if not IN_GIT:
        return load(name)
    shown = git("show", f"HEAD:notebooks/{name}.ipynb")
    if shown.returncode != 0:  # a notebook not committed yet: its working copy
        return load(name)
    return nbformat.reads(shown.stdout.decode(), as_version=4)


@per_notebook
def test_committed_without_outputs(name):
    dirty = [i for i, cell in enumerate(committed(name).cells)
             if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)]
    assert dirty == [], f"{name}: cells {dirty} carry outputs or execution counts; strip them before committing"


@pytest.mark.skipif(not IN_GIT, reason="not a git checkout")
def test_notebooks_pass_through_the_output_stripping_filter():
    """.gitattributes sends every notebook through nbstripout (configured by make install), and a notebook
    with outputs comes out of that filter without them, cell ids kept."""
    attr = git("check-attr", "filter", "notebooks/ltf_experiments.ipynb").stdout.decode()
    assert attr.strip().endswith("filter: nbstripout"), attr
    clean = git("config", "filter.nbstripout.clean").stdout.decode().strip()
    if not clean:
        pytest.skip("filter.nbstripout.clean is not configured in this checkout (make install configures it)")
    nb = load("optimal_policy")
    code = next(c for c in nb.cells if c.cell_type == "code")
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="hello\n")]
    code.execution_count = 3
    out = subprocess.run(clean, shell=True, input=nbformat.writes(nb).encode(), capture_output=True, check=True)
    stripped = nbformat.reads(out.stdout.decode(), as_version=4)
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in stripped.cells if c.cell_type == "code")
    assert [c.id for c in stripped.cells] == [c.id for c in nb.cells]


@per_notebook
def test_kernelspec_and_title(name):
    nb = load(name)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3", f"{name}: kernelspec must be python3"
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# "), \
        f"{name}: the first cell must be markdown starting with '# <Title>'"
    assert wbk.title_and_description(nb, name)[1], f"{name}: no one-line description after the title"


@per_notebook
def test_one_parameters_cell_with_output_dir(name):
    nb = load(name)
    assert len(wbk.parameters_cells(nb)) == 1, f"{name}: expected exactly one cell tagged 'parameters'"
    defaults = wbk.parameters_of(nb, f"notebooks/{name}.ipynb")  # literals only, or it raises
    assert defaults.get("output_dir") == "", f"{name}: the parameters cell needs output_dir = \"\""


@per_notebook
@pytest.mark.parametrize("profile", wbk.PROFILES)
def test_params_files_exist_and_validate(name, profile):
    path = WORKBOOK.params_path(profile, name)
    assert path.is_file(), f"missing {WORKBOOK.rel(path)} (write {{}} for no overrides)"
    defaults = wbk.parameters_of(load(name), f"notebooks/{name}.ipynb")
    _, problems = wbk.check_overrides(wbk.load_overrides(path, WORKBOOK.rel(path)), defaults, WORKBOOK.rel(path))
    assert problems == []


def failure_report(stdout: str, name: str) -> str:
    """The lines `hb run` printed about ``name``: its error line and the indented tail after it."""
    lines, block = stdout.splitlines(), []
    for i, line in enumerate(lines):
        if line.startswith(f"{name}:"):
            block = [line, *itertools.takewhile(lambda ln: ln.startswith("    "), lines[i + 1:])]
            break
    return "\n".join(block) or stdout[-2000:]


@pytest.fixture(scope="session")
def smoke_outputs(tmp_path_factory, hb_subprocess):
    """One `hb run --profile smoke` over every notebook of the repository, written to a temporary
    outputs root so the real outputs/ is never touched."""
    if not NAMES:
        pytest.skip("no notebooks in notebooks/ yet")
    out = tmp_path_factory.mktemp("smoke_outputs")
    # ~1 min on 2 cores (45 to 65 s measured, 2026-12-05): a run still going after 10 min is stuck, and the
    # failure then says where (conftest.where_stuck) instead of CI's limit ending it silently.
    proc = hb_subprocess("--root", REPO, "--outputs", out, "run", "--profile", "smoke", "--jobs", "2", timeout=600)
    profile_dir = out / "smoke"
    manifest_path = profile_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    return proc, profile_dir, manifest


def test_smoke_run_writes_manifest_and_index(smoke_outputs):
    proc, profile_dir, manifest = smoke_outputs
    assert (profile_dir / "manifest.json").is_file(), proc.stdout + proc.stderr
    assert manifest["profile"] == "smoke" and sorted(manifest["notebooks"]) == NAMES
    page = (profile_dir / "index.html").read_text()
    for name in NAMES:
        assert f'id="{name}"' in page


@per_notebook
def test_smoke_run_succeeds(smoke_outputs, name):
    proc, profile_dir, manifest = smoke_outputs
    entry = manifest.get("notebooks", {}).get(name, {})
    assert entry.get("status") == "ok", f"{name} failed in the smoke run:\n" + failure_report(proc.stdout, name)
    assert (profile_dir / "notebooks" / f"{name}.ipynb").is_file()
    assert (profile_dir / "html" / f"{name}.html").is_file()
    assert entry["figures"], f"{name} wrote no figure named {name}_*.png into figures/"
    for figure in entry["figures"]:
        assert (profile_dir / figure).stat().st_size > 0


CLUSTER_NOTEBOOKS = ["ltf_experiments", "raec_vs_ucb"]  # a rising grid and a commitment grid
TIMING_COLUMNS = {"wall_time", "seconds", "kernel_seconds"}


def _numbers(csv_path: Path):
    import pandas as pd
    table = pd.read_csv(csv_path)
    return table.drop(columns=[c for c in table.columns if c in TIMING_COLUMNS])


def test_hb_run_cluster_sends_the_grids_to_the_scheduler_with_local_numbers(smoke_outputs, cluster, hb_subprocess,
                                                                            tmp_path):
    """`hb run --cluster ADDRESS`: the grid notebooks' work runs on the scheduler's worker, tables equal the local run's."""
    from conftest import executed
    address, client = cluster
    _, local_dir, local_manifest = smoke_outputs
    before = executed(client)
    proc = hb_subprocess("--root", REPO, "--outputs", tmp_path, "run", "--profile", "smoke", "--cluster", address,
                         "--only", *CLUSTER_NOTEBOOKS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert executed(client) > before, "no task ran on the cluster"
    remote = json.loads((tmp_path / "smoke" / "manifest.json").read_text())
    compared = 0
    for name in CLUSTER_NOTEBOOKS:
        tables = remote["notebooks"][name]["tables"]
        assert tables and sorted(tables) == sorted(local_manifest["notebooks"][name]["tables"])
        for rel in tables:
            a, b = _numbers(tmp_path / "smoke" / rel), _numbers(local_dir / rel)
            assert a.equals(b), f"{rel} differs between the cluster run and the local run"
            compared += 1
    assert compared >= 2
