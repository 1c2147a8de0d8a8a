"""A copy of a commitment notebook made with `hb new` runs another instance family after one edit of its
parameters cell (issue 30 item 6): the family is a registered name with its options
(``instances.COMMIT_FAMILIES``), so nothing below the parameters cell names an instance.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from horizonbandits import claims
from horizonbandits import workbook as wbk
from horizonbandits.commit import instances

REPO = Path(__file__).resolve().parents[2]
# source notebook -> (name of its copy, the family the copy runs, its options)
COPIES = {
    "raec_vs_ucb": ("vs_ucb_separable", "separable", {"c": 0.5}),
    "raec_walkthrough": ("walk_section72", "section72", {"c": 0.5}),
}
NOTEBOOKS = sorted(COPIES)


def set_family(source: str, family: str, options: dict) -> str:
    """The parameters cell ``source`` with its ``family`` and ``family_options`` lines replaced (one edit)."""
    lines = source.splitlines()
    for key, value in (("family", family), ("family_options", options)):
        [i] = [k for k, line in enumerate(lines) if re.match(rf"{key}\s*=", line)]
        lines[i] = f"{key} = {value!r}"
    return "\n".join(lines)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_family_is_a_parameter_and_the_code_names_no_instance(name):
    nb = nbformat.read(REPO / "notebooks" / f"{name}.ipynb", as_version=4)
    defaults = wbk.parameters_of(nb, f"notebooks/{name}.ipynb")
    assert defaults["family"] in instances.COMMIT_FAMILIES
    instances.family_options(defaults["family"], defaults["family_options"])  # valid options
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code" and "parameters" not in c.metadata.get("tags", []))
    assert "section72(" not in code and "CommitProblem.bernoulli(" not in code
    assert not re.search(r"\b(K|d)\s*=\s*\d", code), "a literal size in the notebook's code"


@pytest.fixture(scope="module")
def copies_run(tmp_path_factory, hb_subprocess):
    """A workbook holding the two sources; `hb new` copies each, one edit of the copy's parameters cell sets another
    family, and `hb run --profile smoke` runs the copies."""
    root = tmp_path_factory.mktemp("family_copies")
    (root / "notebooks").mkdir()
    for source in NOTEBOOKS:
        shutil.copy(REPO / "notebooks" / f"{source}.ipynb", root / "notebooks")
        for profile in wbk.PROFILES:
            (root / "params" / profile).mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / "params" / profile / f"{source}.yaml", root / "params" / profile)
    for source, (copy, family, options) in COPIES.items():
        made = hb_subprocess("--root", root, "new", copy, "--from", source)
        assert made.returncode == 0, made.stdout + made.stderr
        path = root / "notebooks" / f"{copy}.ipynb"
        nb = nbformat.read(path, as_version=4)
        [index] = wbk.parameters_cells(nb)
        cell = nb.cells[index]
        cell.source = set_family(cell.source, family, options)
        nbformat.write(nb, path)
    proc = hb_subprocess("--root", root, "--outputs", root / "outputs", "run", "--profile", "smoke", "--jobs", "1",
                         "--only", *(copy for copy, _, _ in COPIES.values()))
    out = root / "outputs" / "smoke"
    manifest = json.loads((out / "manifest.json").read_text()) if (out / "manifest.json").exists() else {}
    return proc, out, manifest


@pytest.mark.parametrize("source", NOTEBOOKS)
def test_a_copy_runs_another_family_after_one_edit(copies_run, source):
    proc, out, manifest = copies_run
    copy, family, options = COPIES[source]
    entry = manifest.get("notebooks", {}).get(copy, {})
    assert entry.get("status") == "ok", proc.stdout[-3000:] + proc.stderr[-3000:]
    assert entry["parameters"]["family"] == family and entry["parameters"]["family_options"] == options
    ledger = claims.read(out / "claims.csv")
    rows = ledger[ledger.notebook == copy]
    assert len(rows) > 0 and set(rows.kind) == {"ours"}  # a copy's claims are its own, not the paper's tests
    assert all(f"family = {family}" in s for s in rows.settings)
    if source == "raec_vs_ucb":  # the tables are the new family's: its g-gap at every horizon of the smoke grid
        details = pd.read_csv(out / "tables" / f"{copy}_details.csv")
        for T, gap in details.groupby("T").gap_g.first().items():
            assert gap == pytest.approx(instances.g_gap(instances.family_instance(family, int(T), options)), rel=1e-12)
        assert set(details.c) == {options["c"]}
    else:  # the trace ran on the family's instance: N = floor(T/4) and the g-best arm of section 7.2's instance
        split = pd.read_csv(out / "tables" / f"{copy}_split.csv")
        T = entry["parameters"]["T"]
        assert set(split.N) == {instances.family_instance(family, T, options).N}
        trace = pd.read_csv(out / "tables" / f"{copy}_trace.csv")
        assert len(trace) > 0 and trace.stage.iloc[-1] == "commit"
