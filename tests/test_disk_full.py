"""A full disk: one line naming it, reports that agree, nothing truncated, previous figures kept (issue 29, item 5).

The end-to-end test mounts a small tmpfs in a private mount namespace (``unshare -rm``: no privilege
is needed where user namespaces are allowed, and nothing outside the test sees the mount), runs
``hb`` once with room, then again with the disk filled to a few amounts of free space. Where that
is not possible the same promises are checked with a simulated ``ENOSPC``.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import textwrap

import nbformat
import pytest

from conftest import REPO, run_hb
from horizonbandits import outputs
from horizonbandits import workbook as wbk


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt 2>/dev/null || "
                            "mount -t tmpfs -o size=1m tmpfs /tmp"], capture_output=True, timeout=30)
    return probe.returncode == 0


FREE_KB = (0, 16, 64, 160, 400)  # free space left before each run: hb's own files, the figures, the page...

SCRIPT = textwrap.dedent("""\
    set -u
    WB=$1; OUT=$2; SNAP=$3; shift 3
    mount -t tmpfs -o size=24m tmpfs "$OUT" || exit 99
    hb() { env -u HB_ROOT -u HB_OUTPUTS -u HB_CACHE_DIR -u HB_DASK_ADDRESS "{python}" -m horizonbandits.cli \
           --root "$WB" --outputs "$OUT" run --profile smoke --only alpha_demo beta_range; }
    hb > "$SNAP/first.out" 2>&1; echo $? > "$SNAP/first.rc"
    mkdir -p "$SNAP/first"; cp -r "$OUT/smoke/figures" "$OUT/smoke/tables" "$SNAP/first/"
    for kb in "$@"; do
      avail=$(df -k --output=avail "$OUT" | tail -1); fill=$((avail - kb))
      if [ $fill -gt 0 ]; then head -c ${fill}K /dev/zero > "$OUT/filler" 2>/dev/null; fi
      hb > "$SNAP/$kb.out" 2>&1; echo $? > "$SNAP/$kb.rc"
      rm -f "$OUT/filler"
      mkdir -p "$SNAP/$kb"
      (cd "$OUT/smoke" && find . -path ./_static -prune -o -type f -print | sort) > "$SNAP/$kb/files"
      cp -r "$OUT/smoke/manifest.json" "$OUT/smoke/index.html" "$OUT/smoke/figures" "$OUT/smoke/tables" "$SNAP/$kb/"
      if [ -d "$OUT/smoke/failed" ]; then cp -r "$OUT/smoke/failed" "$SNAP/$kb/"; fi
    done
    """)


@pytest.mark.skipif(not _unshare_works(), reason="no private tmpfs here (unshare -rm); the simulated ENOSPC tests run")
def test_hb_run_on_a_full_tmpfs(fixture_workbook, tmp_path):
    """The trial: a traceback while writing index.html (exit 1), manifest "failed" beside index "ok",
    no word of disk space, a truncated failed/<nb>.ipynb."""
    snap, out = tmp_path / "snap", tmp_path / "out"
    snap.mkdir()
    out.mkdir()
    script = tmp_path / "run.sh"
    script.write_text(SCRIPT.replace("{python}", sys.executable))
    proc = subprocess.run(["unshare", "-rm", "sh", str(script), str(fixture_workbook), str(out), str(snap),
                           *map(str, FREE_KB)], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (snap / "first.rc").read_text().strip() == "1"  # beta_range fails by design in smoke
    first = {p.relative_to(snap / "first"): p.read_bytes() for p in (snap / "first").rglob("*") if p.is_file()}
    assert first  # alpha_demo's figure and tables
    full = 0
    for kb in FREE_KB:
        rc = int((snap / f"{kb}.rc").read_text())
        text = (snap / f"{kb}.out").read_text()
        where = f"{kb} KB free: exit {rc}\n{text}"
        assert "Traceback" not in text, where
        errors = [ln for ln in text.splitlines() if ln.startswith("hb: error:")]
        if errors:
            assert len(errors) == 1 and ("ran out of space" in errors[0] or "no space left on device" in errors[0]), where
            assert str(out / "smoke") in errors[0], where  # names the folder, so the disk
            assert rc == (2 if "nothing was run" in errors[0] else 1), where
            full += 1
        else:  # there was room after all
            assert rc == 1 and "1 ok, 1 failed (beta_range)" in text, where
        # the reports agree: every notebook's status in the manifest is the one its index badge shows
        manifest = json.loads((snap / str(kb) / "manifest.json").read_text())
        page = (snap / str(kb) / "index.html").read_text()
        for name, entry in manifest["notebooks"].items():
            section = page.split(f'id="{name}"')[1].split("</section>")[0]
            assert f'class="status {entry["status"]}"' in section, where
        # nothing truncated or left half-written
        files = (snap / str(kb) / "files").read_text().split()
        assert not [f for f in files if f.endswith(".tmp") or "/.running/" in f or "filler" in f], where
        for ipynb in (snap / str(kb) / "failed").glob("*.ipynb"):
            nbformat.read(ipynb, as_version=4)
        # the previous figures and tables, or the ones of a run that succeeded whole
        now = {p.relative_to(snap / str(kb)): p.read_bytes() for sub in ("figures", "tables")
               for p in (snap / str(kb) / sub).rglob("*") if p.is_file()}
        assert set(now) == set(first), where
    assert full >= len(FREE_KB) - 1  # the disk was full in (almost) every run


# ----------------------------------------------------------------------------- simulated ENOSPC


def _disk_full_on(nth: int, monkeypatch):
    """Make the ``nth`` file that ``outputs.atomic_write_together`` writes fail with ENOSPC."""
    real = os.fdopen
    count = {"n": 0}

    class Full:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def write(self, text):
            self.handle.write(text[: len(text) // 2])
            self.handle.flush()
            raise OSError(errno.ENOSPC, "No space left on device")

    def fdopen(fd, *args, **kw):
        count["n"] += 1
        handle = real(fd, *args, **kw)
        return Full(handle) if count["n"] == nth else handle

    monkeypatch.setattr(outputs.os, "fdopen", fdopen)


@pytest.mark.parametrize("nth", [1, 2])
def test_reports_keep_their_last_whole_state_when_a_write_finds_no_space(fixture_workbook, tmp_path, monkeypatch, nth):
    wb = wbk.Workbook.locate(fixture_workbook, tmp_path / "out")
    profile_dir = wb.profile_dir("smoke")
    plan = wbk.Plan("alpha_demo", "Alpha demo", "d", None, {}, {"n_points": 5})
    wbk.write_reports(wb, "smoke", [plan], [wbk.Result("alpha_demo", "ok", 1.0, "t1", outputs=[])], merge=True)
    before = {name: (profile_dir / name).read_bytes() for name in ("manifest.json", "index.html", "claims.csv")}
    _disk_full_on(nth, monkeypatch)
    with pytest.raises(OSError) as err:
        wbk.write_reports(wb, "smoke", [plan], [wbk.Result("alpha_demo", "failed", 1.0, "t2", error="x")], merge=True)
    assert wbk.base.is_disk_full(err.value)
    assert {name: (profile_dir / name).read_bytes() for name in before} == before  # all three as they were
    assert not [p for p in profile_dir.iterdir() if p.name.endswith(".tmp")]


def test_a_truncated_executed_notebook_is_not_kept(tmp_path):
    task = wbk.Task("a", "nb", str(tmp_path), str(tmp_path / "smoke"), "smoke", {})
    task.staged_outputs.mkdir(parents=True)
    task.staged_notebook.write_text('{"cells": [{"cell_type": "code", "sou')  # cut short by a full disk
    result = wbk.execute.finish_staged_notebook(task, wbk.Result("a", "ok", 1.0, "t"))
    assert result.status == "failed" and result.error.startswith("the executed notebook could not be saved whole")
    assert not task.staged_notebook.exists()
    adopted = wbk.adopt_outputs(task, result, {})
    assert adopted.executed is None and not (tmp_path / "smoke" / "failed" / "a.ipynb").exists()


def test_a_notebook_that_finds_the_disk_full_is_one_line_naming_it(fixture_workbook, tmp_path):
    """A cell's write failing with ENOSPC (raised here by the notebook itself): one line naming the
    disk instead of a traceback tail, the previous figures kept, exit 1."""
    out = tmp_path / "out"
    assert run_hb("--root", fixture_workbook, "--outputs", out, "run", "--profile", "smoke", "--only",
                  "alpha_demo").returncode == 0
    figure = (out / "smoke" / "figures" / "alpha_demo_line.png").read_bytes()
    path = fixture_workbook / "notebooks" / "alpha_demo.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(4, nbformat.v4.new_code_cell(
        'raise OSError(28, "No space left on device", str(folder / "figures" / "alpha_demo_line.png"))'))
    nbformat.write(nb, path)
    res = run_hb("--root", fixture_workbook, "--outputs", out, "run", "--profile", "smoke", "--only", "alpha_demo")
    assert res.returncode == 1, res.stdout + res.stderr
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("alpha_demo")]
    assert len(lines) == 1 and lines[0].startswith(f"alpha_demo: the disk holding {out / 'smoke'} ran out of space (")
    assert "OSError: [Errno 28] No space left on device" in lines[0] and "    |" not in res.stdout
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("hb: error:")]
    assert len(errors) == 1 and "ran out of space" in errors[0] and "Traceback" not in res.stderr
    assert (out / "smoke" / "figures" / "alpha_demo_line.png").read_bytes() == figure
    manifest = json.loads((out / "smoke" / "manifest.json").read_text())
    assert manifest["notebooks"]["alpha_demo"]["status"] == "failed"
    assert 'class="status failed"' in (out / "smoke" / "index.html").read_text().split('id="alpha_demo"')[1]
