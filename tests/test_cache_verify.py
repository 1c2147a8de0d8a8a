"""The result cache is trusted input; ``hb cache verify`` recomputes a sample and finds edits (issue 29, item 9)."""
from __future__ import annotations

import json

import nbformat
import numpy as np
import pandas as pd
import pytest

from conftest import run_hb
from horizonbandits.commit import UCBCommit, UniformCommit
from horizonbandits.commit import instances as commit_instances
from horizonbandits.compute import cache as cache_mod
from horizonbandits.experiments import run_grid
from horizonbandits.rising import CureUCB, RedUCB, ltf_random


def _swap_pulls(folder) -> list:
    """The trial's edit: every entry's pull counts swapped between arms, with a digest recomputed for them."""
    edited = []
    for path in sorted(folder.rglob("*.hbc")):
        key, _, arrays = cache_mod.read_entry(path)
        arrays["pulls"] = np.ascontiguousarray(arrays["pulls"][..., ::-1])
        cache_mod.write_entry(path, key, cache_mod._content_digest(key, arrays), arrays)
        edited.append(path)
    return edited


def _commit(cache_dir):
    cases = [dict(T=T, problem=commit_instances.section72(T, 0.5)) for T in (300, 900)]
    pols = {"RAEC": commit_instances.section72_policy(), "UCB": UCBCommit(), "Uniform": UniformCommit()}
    return run_grid(cases, pols, n_seeds=8, seed=3, cache_dir=cache_dir)


def _rising(cache_dir):
    rng = np.random.default_rng(2)
    insts = {"a": ltf_random(rng, K=3, T_ref=800), "b": ltf_random(rng, K=2, T_ref=800)}
    return run_grid(insts, {"CURE": CureUCB(), "Red": RedUCB(eps=0.5)}, [400, 800], n_seeds=4, seed=9,
                    chunk_size=2, backend="sequential", cache_dir=cache_dir, progress=False).drop(columns="wall_time")


@pytest.mark.parametrize("grid", [_commit, _rising])
def test_edited_entries_are_read_as_computed_and_verify_finds_every_one(grid, tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    truth = grid(folder)
    edited = _swap_pulls(folder)
    assert edited
    trusted = grid(folder)  # the digest was recomputed: the edit passes every check the cache makes
    assert not trusted.equals(truth)
    before = {p: p.stat().st_mtime_ns for p in folder.rglob("*")}
    log = tmp_path / "verify.jsonl"
    monkeypatch.setenv("HB_CACHE_VERIFY", "1000")
    monkeypatch.setenv("HB_CACHE_VERIFY_LOG", str(log))
    verified = grid(folder)
    pd.testing.assert_frame_equal(verified, truth)  # the recomputed numbers are the ones used
    records = [json.loads(line) for line in log.read_text().splitlines()]
    checked = {r["entry"]: r["differs"] for r in records if "entry" in r}
    assert set(checked) == {str(p) for p in edited} and all("pulls" in d for d in checked.values())
    assert sum(r.get("read", 0) for r in records) == len(edited)
    assert {p: p.stat().st_mtime_ns for p in folder.rglob("*")} == before  # verifying writes nothing


def test_untouched_entries_verify_equal_and_the_sample_is_bounded(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    _rising(folder)
    log = tmp_path / "verify.jsonl"
    monkeypatch.setenv("HB_CACHE_VERIFY", "3")
    monkeypatch.setenv("HB_CACHE_VERIFY_LOG", str(log))
    _rising(folder)
    checked = [json.loads(line) for line in log.read_text().splitlines() if "entry" in line]
    assert len(checked) == 3 and all(r["differs"] == [] for r in checked)  # wall times are not compared
    monkeypatch.setenv("HB_CACHE_VERIFY", "0")
    with pytest.raises(ValueError, match="HB_CACHE_VERIFY='0' is not allowed: expected a number of entries >= 1"):
        _rising(folder)


GRID_NOTEBOOK = '''\
import numpy as np
from horizonbandits.commit import UCBCommit
from horizonbandits.commit import instances
from horizonbandits.experiments import run_grid

cases = [dict(T=T, problem=instances.section72(T, 0.5)) for T in (300, 600)]
table = run_grid(cases, {"RAEC": instances.section72_policy(), "UCB": UCBCommit()}, n_seeds=n_seeds, seed=1)
table
'''


def test_hb_cache_verify(fixture_workbook, tmp_path):
    """End to end: a notebook's grid cached by hb run, verified equal, edited, verified again."""
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Delta grid\n\nA small cached commitment grid."),
        nbformat.v4.new_code_cell('n_seeds = 4\noutput_dir = ""', metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(GRID_NOTEBOOK)],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.write(nb, fixture_workbook / "notebooks" / "delta_grid.ipynb")
    out = tmp_path / "out"
    common = ("--root", fixture_workbook, "--outputs", out)
    assert run_hb(*common, "run", "--profile", "smoke", "--only", "delta_grid").returncode == 0
    profile_files = sorted(p.relative_to(out) for p in out.rglob("*") if "cache" not in p.parts)
    ok = run_hb(*common, "cache", "verify", "--profile", "smoke", "--only", "delta_grid", "--sample", "2")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f"cache {out / 'cache'}: 2 of the 4 entries the smoke notebooks read were recomputed" in ok.stdout
    assert "all 2 recomputed entries equal the cache's" in ok.stdout
    edited = _swap_pulls(out / "cache")
    bad = run_hb(*common, "cache", "verify", "--profile", "smoke", "--only", "delta_grid", "--sample", "10")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    lines = [ln for ln in bad.stdout.splitlines() if ln.startswith("differs: ")]
    assert sorted(lines) == sorted(f"differs: {p} (commit run_grid: pulls)" for p in edited)
    assert "4 of 4 recomputed entries differ from the cache: do not trust it" in bad.stdout
    # the profile's own outputs were not touched by either verification
    assert sorted(p.relative_to(out) for p in out.rglob("*") if "cache" not in p.parts) == profile_files
    empty = run_hb(*common, "cache", "verify", "--cache", tmp_path / "nowhere")
    assert empty.returncode == 2 and empty.stderr.startswith(f"hb: error: no result cache at {tmp_path / 'nowhere'}")
