"""Interrupting ``hb run`` never loses a good output.

A copied fixture workbook gets four notebooks that sleep as long as their parameter says and write
a figure, a table and their kernel's pid. A first run (no sleep) leaves good outputs; then runs
that sleep are interrupted with Ctrl-C (SIGINT to hb's process group, as a terminal sends it) and
killed (SIGKILL), and everything the first run left must still be there, byte for byte.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from conftest import REPO, alive

NAMES = ["slow_a", "slow_b", "slow_c", "slow_d"]
BODY = '''import os
import time
from pathlib import Path

from horizonbandits.outputs import atomic_write, atomic_write_text, resolve_output_dir

if marker_dir:
    Path(marker_dir, NAME).write_text(str(os.getpid()))
time.sleep(sleep_s)
folder = resolve_output_dir(output_dir)
atomic_write_text(folder / "tables" / f"{NAME}_values.csv", f"run,{run_label}\\n")
atomic_write_text(folder / "figures" / f"{NAME}_plot.png", f"not really a png: {run_label}\\n")'''


def write_notebook(root: Path, name: str) -> None:
    cells = [nbformat.v4.new_markdown_cell(f"# {name}\n\nSleeps, then writes a table and a figure."),
             nbformat.v4.new_code_cell('sleep_s = 0.0\nmarker_dir = ""\nrun_label = "first"\noutput_dir = ""',
                                       metadata={"tags": ["parameters"]}),
             nbformat.v4.new_code_cell(f"NAME = {name!r}\n" + BODY)]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "language": "python",
                                                                        "display_name": "Python 3"}})
    nbformat.write(nb, root / "notebooks" / f"{name}.ipynb")


def set_params(root: Path, **per_name) -> None:
    for name in NAMES:
        (root / "params" / "smoke" / f"{name}.yaml").write_text(json.dumps(per_name.get(name, {})) + "\n")


def start_hb(root: Path, names=NAMES) -> subprocess.Popen:
    """``hb run`` in a process group of its own, as a shell runs a foreground job."""
    env = {k: v for k, v in os.environ.items() if k not in ("HB_ROOT", "HB_OUTPUTS", "HB_CACHE_DIR")}
    return subprocess.Popen([sys.executable, "-m", "horizonbandits.cli", "--root", str(root), "run", "--profile",
                             "smoke", "--only", *names, "--jobs", "2"], cwd=REPO, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def wait_for(paths, timeout=120.0) -> None:
    deadline = time.monotonic() + timeout
    while not all(p.exists() and p.read_text() for p in paths):
        assert time.monotonic() < deadline, f"timed out waiting for {paths}"
        time.sleep(0.2)


def snapshot(profile_dir: Path) -> dict:
    return {p.relative_to(profile_dir).as_posix(): p.read_bytes()
            for sub in ("figures", "tables", "notebooks", "html") for p in (profile_dir / sub).glob("slow_*")}


@pytest.fixture(scope="module")
def workbook(tmp_path_factory, copy_workbook):
    root = copy_workbook(tmp_path_factory.mktemp("interrupts") / "workbook")
    for name in NAMES:
        write_notebook(root, name)
    set_params(root)
    first = start_hb(root)
    out, err = first.communicate(timeout=600)
    assert first.returncode == 0, out + err
    profile_dir = root / "outputs" / "smoke"
    manifest = json.loads((profile_dir / "manifest.json").read_text())
    return root, profile_dir, snapshot(profile_dir), manifest


def test_the_first_run_left_outputs(workbook):
    _, _, good, manifest = workbook
    assert len(good) == 4 * 4  # a figure, a table, an executed notebook and a page each
    assert all(manifest["notebooks"][n]["status"] == "ok" for n in NAMES)


def test_ctrl_c_stops_at_once_and_keeps_what_finished(workbook, tmp_path):
    root, profile_dir, good, first = workbook
    markers = tmp_path / "markers"
    markers.mkdir()
    slow = {"sleep_s": 120.0, "marker_dir": str(markers), "run_label": "second"}
    set_params(root, slow_a={"marker_dir": str(markers), "run_label": "second"}, slow_b=slow, slow_c=slow, slow_d=slow)
    proc = start_hb(root)
    # slow_a finishes at once, so slow_c starts: then slow_b and slow_c are mid-computation and slow_d waits.
    wait_for([markers / "slow_b", markers / "slow_c"])
    kernels = [int((markers / n).read_text()) for n in ("slow_b", "slow_c")]
    t0 = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    stopped_after = time.monotonic() - t0
    print(f"hb run stopped {stopped_after:.1f} s after Ctrl-C")
    assert proc.returncode == 130, out + err
    assert stopped_after < 10, stopped_after
    lines = [ln for ln in err.splitlines() if ln.startswith("hb:")]
    assert lines == ["hb: interrupted: stopped slow_b, slow_c; 1 notebook(s) finished and are recorded, 3 did not run "
                     "(their previous outputs are kept)"]
    assert "Traceback" not in err + out and "asyncio" not in err
    assert not (markers / "slow_d").exists()  # nothing new started after Ctrl-C
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in kernels) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(pid) for pid in kernels), "a kernel kept running after Ctrl-C"
    # slow_a finished before the interrupt: its new outputs and its manifest entry are recorded
    manifest = json.loads((profile_dir / "manifest.json").read_text())
    assert (profile_dir / "tables" / "slow_a_values.csv").read_text() == "run,second\n"
    assert manifest["notebooks"]["slow_a"]["started"] >= first["notebooks"]["slow_a"]["started"]
    assert manifest["notebooks"]["slow_a"]["overrides"]["run_label"] == "second"
    # the three that were stopped or never started keep their first run, files and entries alike
    now = snapshot(profile_dir)
    for rel, data in good.items():
        if not rel.split("/")[1].startswith("slow_a"):
            assert now[rel] == data, rel
    for name in ("slow_b", "slow_c", "slow_d"):
        assert manifest["notebooks"][name] == first["notebooks"][name] | {
            "figures": manifest["notebooks"][name]["figures"], "tables": manifest["notebooks"][name]["tables"]}
    assert not (profile_dir / ".running").exists()


def test_sigkill_loses_nothing_and_leaves_no_kernel(workbook, tmp_path):
    root, profile_dir, _, _ = workbook
    before = snapshot(profile_dir)
    manifest_before = (profile_dir / "manifest.json").read_text()
    markers = tmp_path / "markers"
    markers.mkdir()
    slow = {"sleep_s": 120.0, "marker_dir": str(markers), "run_label": "third"}
    set_params(root, **{n: slow for n in NAMES})
    proc = start_hb(root)
    wait_for([markers / "slow_a", markers / "slow_b"])
    kernels = [int((markers / n).read_text()) for n in ("slow_a", "slow_b")]
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 15  # each worker notices its parent is gone and kills its kernel
    while any(alive(pid) for pid in kernels) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(pid) for pid in kernels), "a kernel outlived the killed hb run"
    assert snapshot(profile_dir) == before
    assert (profile_dir / "manifest.json").read_text() == manifest_before
    # the next run cleans the staging leftovers and takes the lock again
    set_params(root)
    again = start_hb(root, ["slow_a"])
    out, err = again.communicate(timeout=600)
    assert again.returncode == 0, out + err
    assert not (profile_dir / ".running").exists()
