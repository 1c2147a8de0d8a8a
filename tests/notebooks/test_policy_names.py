"""A policy name in a notebook's `policies` parameter that is not registered stops the notebook with one
line naming the parameter, the unknown name and the allowed names (with a suggestion), instead of
being dropped while the notebook carries on with exit status 0.

Runs the real notebooks through `hb run` from a throwaway workbook holding only them and smoke
parameter files with a typo; the error is raised in each notebook's setup cell, before any grid runs.
horizon_dependence also refuses a list without the three policies Figure 1 compares (a copy of it runs
under another name with such a list).
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


@pytest.fixture(scope="module")
def typo_run(tmp_path_factory, hb_subprocess):
    root = tmp_path_factory.mktemp("typo_workbook")
    (root / "notebooks").mkdir()
    for profile in ("smoke", "default", "paper"):
        (root / "params" / profile).mkdir(parents=True)
    runs = [(name, name, policies) for name, (policies, _, _) in TYPOS.items()] + [INCOMPLETE]
    for source, name, policies in runs:
        shutil.copy(REPO / "notebooks" / f"{source}.ipynb", root / "notebooks" / f"{name}.ipynb")
        overrides = yaml.safe_load((REPO / "params" / "smoke" / f"{source}.yaml").read_text()) or {}
        overrides["policies"] = policies
        (root / "params" / "smoke" / f"{name}.yaml").write_text(yaml.safe_dump(overrides))
        for profile in ("default", "paper"):
            (root / "params" / profile / f"{name}.yaml").write_text("{}\n")
    proc = hb_subprocess("--root", root, "--outputs", root / "outputs", "run", "--profile", "smoke",
                         "--only", *(name for _, name, _ in runs), "--jobs", "2")
    return proc, root / "outputs" / "smoke"


def test_typo_fails_the_run(typo_run):
    proc, _ = typo_run
    assert proc.returncode == 1, proc.stdout + proc.stderr


@pytest.mark.parametrize("name", sorted(TYPOS))
def test_typo_is_one_line_naming_parameter_name_and_suggestion(typo_run, name):
    (proc, profile_dir), (policies, typo, suggestion) = typo_run, TYPOS[name]
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(f"{name}:")]
    assert len(lines) == 1, proc.stdout
    line = lines[0]
    assert "failed" in line and "ValueError" in line, line
    assert f"policies={policies!r}" in line, line
    assert f"{typo!r} is not a registered policy (did you mean {suggestion!r}?)" in line, line
    allowed = line.split("expected names from ", 1)[-1].split(", ")
    assert sorted(allowed) == sorted(POLICIES), line


def test_figure1_needs_its_three_policies(typo_run):
    (proc, _), (_, name, policies) = typo_run, INCOMPLETE
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(f"{name}:")]
    assert len(lines) == 1, proc.stdout
    assert f"ValueError: policies={policies!r} is not allowed: it must include 'R-ed-UCB'" in lines[0], lines[0]


@pytest.mark.parametrize("name", sorted(TYPOS) + [INCOMPLETE[1]])
def test_typo_stops_before_anything_is_computed(typo_run, name):
    _, profile_dir = typo_run
    written = sorted(p.name for p in profile_dir.glob(f"*/{name}_*"))
    assert written == [], f"{name} wrote {written} before stopping on the typo"
