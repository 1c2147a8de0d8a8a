"""A policy name in a notebook's `policies` parameter that is not registered is never dropped silently.

Two layers, both tested here:
- `hb run` checks every parameter file before anything runs: a misspelt name is one line naming the
  file, the key, the name and a suggestion, exit 2, nothing written;
- a notebook run by hand (no `hb run`, e.g. papermill or JupyterLab) checks the names in its setup
  cell and stops with one line naming the parameter, the unknown name and the allowed names.
horizon_dependence also refuses a list of valid names without the three policies Figure 1 compares
(a copy of it runs under another name with such a list): that passes the parameter check and fails in
the notebook, exit 1, before any grid runs.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from horizonbandits.rising import POLICIES

REPO = Path(__file__).resolve().parents[2]
TYPOS = {  # notebook -> (policies with one misspelt name, the misspelling, the name it should suggest)
    "horizon_dependence": (["CURE-UCB", "R-ed-UBC", "SW-UCB"], "R-ed-UBC", "R-ed-UCB"),
    "new_instance_family": (["CURE-UCB", "SW-UCB", "SW-KL-UBC"], "SW-KL-UBC", "SW-KL-UCB"),
}
INCOMPLETE = ("horizon_dependence", "figure1_incomplete", ["CURE-UCB", "SW-UCB"])  # source, copy, policies


def make_workbook(root: Path, runs) -> Path:
    (root / "notebooks").mkdir(parents=True)
    for profile in ("smoke", "default", "paper"):
        (root / "params" / profile).mkdir(parents=True)
    for source, name, policies in runs:
        shutil.copy(REPO / "notebooks" / f"{source}.ipynb", root / "notebooks" / f"{name}.ipynb")
        overrides = yaml.safe_load((REPO / "params" / "smoke" / f"{source}.yaml").read_text()) or {}
        overrides["policies"] = policies
        (root / "params" / "smoke" / f"{name}.yaml").write_text(yaml.safe_dump(overrides))
        for profile in ("default", "paper"):
            (root / "params" / profile / f"{name}.yaml").write_text("{}\n")
    return root


@pytest.fixture(scope="module")
def typo_run(tmp_path_factory, hb_subprocess):
    root = make_workbook(tmp_path_factory.mktemp("typo_workbook"),
                         [(name, name, policies) for name, (policies, _, _) in TYPOS.items()])
    proc = hb_subprocess("--root", root, "--outputs", root / "outputs", "run", "--profile", "smoke", "--jobs", "2")
    return proc, root / "outputs"


def test_hb_run_refuses_a_typo_before_anything_runs(typo_run):
    proc, outputs = typo_run
    assert proc.returncode == 2, proc.stdout + proc.stderr
    for name, (_, typo, suggestion) in TYPOS.items():
        lines = [ln for ln in proc.stderr.splitlines() if f"params/smoke/{name}.yaml" in ln]
        assert len(lines) == 1, proc.stderr
        assert "'policies'" in lines[0] and repr(typo) in lines[0] and f"did you mean {suggestion!r}" in lines[0]
    assert not any(outputs.glob("smoke/*/*")), "files were written although the parameters were refused"


@pytest.mark.parametrize("name", sorted(TYPOS))
def test_notebook_run_by_hand_names_parameter_name_and_suggestion(name, tmp_path):
    import papermill as pm
    policies, typo, suggestion = TYPOS[name]
    with pytest.raises(pm.PapermillExecutionError) as info:
        pm.execute_notebook(str(REPO / "notebooks" / f"{name}.ipynb"), str(tmp_path / "out.ipynb"),
                            parameters=dict(policies=policies, output_dir=str(tmp_path / "run")),
                            kernel_name="python3", progress_bar=False, cwd=str(REPO / "notebooks"))
    err = info.value
    assert err.ename == "ValueError"
    line = err.evalue
    assert "\n" not in line
    assert f"policies={policies!r}" in line, line
    assert f"{typo!r} is not a registered policy (did you mean {suggestion!r}?)" in line, line
    allowed = line.split("expected names from ", 1)[-1].split(", ")
    assert sorted(allowed) == sorted(POLICIES), line
    assert not list((tmp_path / "run").glob("*/*")), "the notebook wrote results before stopping on the typo"


def test_figure1_needs_its_three_policies(tmp_path, hb_subprocess):
    root = make_workbook(tmp_path / "wb", [INCOMPLETE])
    source, name, policies = INCOMPLETE
    proc = hb_subprocess("--root", root, "--outputs", root / "outputs", "run", "--profile", "smoke")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(f"{name}:")]
    assert len(lines) == 1, proc.stdout
    assert f"ValueError: policies={policies!r} is not allowed: it must include 'R-ed-UCB'" in lines[0], lines[0]
    assert sorted(p.name for p in (root / "outputs" / "smoke").glob(f"*/{name}_*")) == []
