"""hb run --jobs N starts the notebooks longest first (workbook/runner.py: expected_seconds, longest_first)."""
import json
from pathlib import Path

import pytest

from horizonbandits.workbook.locate import Workbook
from horizonbandits.workbook.runner import expected_seconds, longest_first, next_startable, start_after


def test_longest_first_puts_unknown_then_longest_first():
    expected = {"a": 5.0, "b": 300.0, "c": 60.0}
    assert longest_first(["a", "b", "c", "new"], expected) == ["new", "b", "c", "a"]


def test_longest_first_keeps_the_given_order_on_ties():
    assert longest_first(["x", "y", "z"], {"x": 1.0, "y": 1.0, "z": 1.0}) == ["x", "y", "z"]


@pytest.fixture()
def workbook(tmp_path):
    for sub in ("notebooks", "params/paper", "outputs/paper"):
        (tmp_path / sub).mkdir(parents=True)
    return Workbook(tmp_path, tmp_path / "outputs")


def test_expected_seconds_takes_the_larger_of_file_and_manifest(workbook):
    (workbook.params_dir / "paper" / "expected_seconds.json").write_text(
        json.dumps({"_note": "ignored", "slow": 300, "quick": 10}))
    manifest = {"notebooks": {"slow": {"status": "ok", "wall_time_s": 2.0},      # warm cache: keep 300
                              "quick": {"status": "ok", "wall_time_s": 50.0},    # grew: 50
                              "broken": {"status": "failed", "wall_time_s": 900.0},
                              "fresh": {"status": "ok", "wall_time_s": 7.0}}}
    (workbook.profile_dir("paper") / "manifest.json").write_text(json.dumps(manifest))
    assert expected_seconds(workbook, "paper") == {"slow": 300.0, "quick": 50.0, "fresh": 7.0}


def test_expected_seconds_without_files_is_empty(workbook):
    assert expected_seconds(workbook, "paper") == {}


def test_the_paper_file_names_every_notebook():
    wb = Workbook.locate(Path(__file__).resolve().parents[1])
    names = set(wb.names())
    listed = set(expected_seconds(wb, "paper"))
    assert names <= listed, f"params/paper/expected_seconds.json misses {sorted(names - listed)}"


def test_next_startable_waits_for_the_notebooks_it_reuses():
    after = {"ablation": ["figure"]}
    assert next_startable(["ablation", "other"], {"figure"}, after) == "other"
    assert next_startable(["ablation"], {"figure"}, after) is None          # wait while figure runs
    assert next_startable(["ablation"], set(), after) == "ablation"         # figure done (or not selected)
    assert next_startable(["ablation", "figure"], set(), after) == "figure"


def test_next_startable_breaks_a_cycle():
    after = {"a": ["b"], "b": ["a"]}
    assert next_startable(["a", "b"], set(), after) == "a"
    assert next_startable(["b"], {"a"}, after) is None


def test_start_after_reads_the_file(workbook):
    (workbook.params_dir / "paper" / "expected_seconds.json").write_text(json.dumps({"_after": {"x": ["y"]}, "x": 1}))
    assert start_after(workbook, "paper") == {"x": ["y"]}
    assert expected_seconds(workbook, "paper") == {"x": 1.0}
