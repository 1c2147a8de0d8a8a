"""A warm notebook's fixed cost: the CPU seconds of one ``hb run`` of one notebook, whole process tree, by part.

    PYTHONPATH=lib python bench/bench_fixed_cost.py [--profile smoke] [--repeat 3] [--outputs DIR] [--together] [NAME ...]

For each notebook (all of them unless named): one run first, so the result cache is filled and the
numba kernels are compiled (a warm run), then ``--repeat`` measured runs of
``hb --outputs DIR run --profile P --only NAME`` with ``HB_TIMINGS`` set (``horizonbandits.timing``:
every process of the run charges its CPU time to the part it is in). This script makes itself the
child subreaper (Linux ``prctl``), so every process of the run, orphans included (loky workers left by
a killed kernel), is reaped here and counted in the total (``wait4``'s resource usage).

``--together``: one ``hb run`` of all the notebooks per repeat instead of one per notebook, as ``make test``
and ``make paper`` run them: ``hb run``'s own CPU time (its start, its loop, its reports) and what no marker
saw are shared equally among the notebooks; each worker's and kernel's parts are its notebook's (the
notebooks run one at a time, in the order given; a worker writes its lines last, after its kernel's).

Parts (the median over the repeats of each; the total is the median of the totals):

- ``hb start``: ``hb run`` until it starts the worker, and the worker until it calls papermill;
- ``kernel pool``: ``hb run``'s kernel pool (``workbook.kernel_pool``): its start and imports, shared by the
  notebooks in ``--together`` mode (with one notebook there is no pool);
- ``kernel start``: launching the kernel, and the kernel until its first cell (ipykernel's own start);
- ``imports``: every import made in the kernel (the outermost one, wherever it happens);
- ``numba load``: compiled kernels loaded from numba's cache;
- ``compute``: the grids (``experiments.run_grid``, ``compute.run_cached``), in the kernel;
- ``cells``: the notebook's own code outside the above;
- ``figures``: ``plotting.save_figure`` and the inline display of figures after a cell;
- ``waiting``: papermill's client in the worker, the kernel between cells, ``hb run``'s loop;
- ``page/report``: the notebook's HTML page (rendered by ``hb run`` itself once its worker has ended), and
  ``hb run``'s adoption of outputs and its reports;
- ``teardown``: the kernel's shutdown as seen by the worker, the worker's exit, and what no marker saw
  (interpreters finishing after their last marker, orphaned workers);
- ``fixed``: everything but ``compute`` and ``cells`` (the notebook's own work, whatever it is: the
  issue's fixed cost is the start, imports, kernels loaded, figures, pages and teardown).

Prints a table per notebook and the average over the notebooks. CPU seconds, not wall: the machine may be
shared. A benchmark prints figures; no test asserts a time.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from horizonbandits import timing  # noqa: E402

PARTS = ["hb start", "kernel pool", "kernel start", "imports", "numba load", "compute", "cells", "figures", "waiting",
         "page/report", "teardown"]
GROUP = {"hb start": "hb start", "worker start": "hb start", "kernel launch": "kernel start",
         "kernel start": "kernel start", "kernel pool": "kernel pool", "imports": "imports", "numba load": "numba load",
         "compute": "compute",
         "cells": "cells", "figures": "figures", "display": "figures", "papermill": "waiting",
         "kernel idle": "waiting", "hb loop": "waiting", "page": "page/report", "report": "page/report",
         "teardown": "teardown", "worker exit": "teardown"}
PR_SET_CHILD_SUBREAPER = 36
ORPHAN_WAIT_S = 60.0


def become_subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")


def cpu(ru) -> float:
    return ru.ru_utime + ru.ru_stime


def hb_command() -> list[str]:
    script = Path(sys.executable).with_name("hb")
    return [str(script)] if script.exists() else [sys.executable, "-m", "horizonbandits.cli"]


def run_once(name: str, profile: str, outputs: Path, timings: Path | None) -> dict[str, float]:
    """One ``hb run`` of ``name``; its parts in CPU seconds (``total``: the whole tree)."""
    env = dict(os.environ)
    env.pop(timing.ENV, None)
    if timings is not None:
        timings.unlink(missing_ok=True)
        env[timing.ENV] = str(timings)
    cmd = [*hb_command(), "--outputs", str(outputs), "run", "--profile", profile, "--only", name]
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.read().decode(errors="replace")
    total, status = 0.0, None
    deadline = None
    while True:
        try:
            pid, st, ru = os.wait4(-1, os.WNOHANG if deadline else 0)
        except ChildProcessError:
            break
        if pid == 0:
            if time.monotonic() > deadline:
                print(f"  {name}: processes still alive {ORPHAN_WAIT_S:.0f} s after hb ended; not counted",
                      file=sys.stderr)
                break
            time.sleep(0.02)
            continue
        total += cpu(ru)
        if pid == proc.pid:
            status = os.waitstatus_to_exitcode(st)
            proc.returncode = status
            deadline = time.monotonic() + ORPHAN_WAIT_S
    if status != 0:
        raise SystemExit(f"{name}: hb run failed (status {status}):\n{out[-2000:]}")
    parts = dict.fromkeys(PARTS, 0.0)
    if timings is not None:
        for per_pid in timing.read(timings).values():
            for part, sec in per_pid.items():
                parts[GROUP.get(part, "teardown")] += sec
        parts["teardown"] += total - sum(parts.values())  # what no marker saw
    parts["total"] = total
    parts["fixed"] = total - parts["compute"] - parts["cells"]
    return parts


HB_PARTS = ("hb start", "hb loop", "page", "report")  # the hb run process's own (shared in --together mode)


def run_together(names: list[str], profile: str, outputs: Path, timings: Path) -> dict[str, dict[str, float]]:
    """One ``hb run`` of ``names`` (in that order); the parts of each notebook (see the module docstring)."""
    timings.unlink(missing_ok=True)
    env = {**os.environ, timing.ENV: str(timings)}
    cmd = [*hb_command(), "--outputs", str(outputs), "run", "--profile", profile, "--only", *names]
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.read().decode(errors="replace")
    total, status = 0.0, None
    while True:
        try:
            pid, st, ru = os.wait4(-1, 0)
        except ChildProcessError:
            break
        total += cpu(ru)
        if pid == proc.pid:
            status = proc.returncode = os.waitstatus_to_exitcode(st)
    if status != 0:
        raise SystemExit(f"hb run failed (status {status}):\n{out[-2000:]}")
    by_pid: dict[int, list] = {}
    for line in timings.read_text(encoding="utf-8").splitlines():
        pid, part, sec = line.split("\t")
        by_pid.setdefault(int(pid), []).append((part, float(sec)))  # dicts keep the order of first appearance

    def having(part):
        return [pid for pid, items in by_pid.items() if any(p == part for p, _ in items)]

    hb_pids, workers, kernels = having("hb start"), having("worker start"), having("kernel start")
    if len(workers) != len(names) or len(kernels) != len(names) or len(hb_pids) != 1:
        raise SystemExit(f"found {len(workers)} workers and {len(kernels)} kernels' timings, expected {len(names)}")
    shared = dict.fromkeys(PARTS, 0.0)
    for pid in hb_pids + having("kernel pool"):  # hb run's own and its kernel pool's: shared by the notebooks
        for part, sec in by_pid[pid]:
            shared[GROUP[part]] += sec
    rows = []
    for worker, kernel in zip(workers, kernels):  # a kernel writes during its run, its worker when it ends
        row = dict.fromkeys(PARTS, 0.0)
        for part, sec in by_pid[worker] + by_pid[kernel]:
            row[GROUP.get(part, "teardown")] += sec
        rows.append(row)
    unseen = total - sum(sum(r.values()) for r in rows) - sum(shared.values())
    shared["teardown"] += unseen
    parts = {}
    for name, row in zip(names, rows):
        row = {k: v + shared[k] / len(names) for k, v in row.items()}
        row["total"] = sum(row.values())
        row["fixed"] = row["total"] - row["compute"] - row["cells"]
        parts[name] = row
    return parts


def median_parts(runs: list[dict]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def table(rows: dict[str, dict[str, float]]) -> str:
    cols = PARTS + ["fixed", "total"]
    short = {"hb start": "hb", "kernel pool": "pool", "kernel start": "kernel", "imports": "imports", "numba load": "numba",
             "compute": "compute", "cells": "cells", "figures": "figures", "waiting": "waiting",
             "page/report": "page", "teardown": "teardown", "fixed": "FIXED", "total": "total"}
    width = max(len(n) for n in rows) + 1
    lines = ["notebook".ljust(width) + "".join(f"{short[c]:>9}" for c in cols)]
    for name, parts in rows.items():
        lines.append(name.ljust(width) + "".join(f"{parts[c]:9.2f}" for c in cols))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="notebooks (default: all)")
    ap.add_argument("--profile", default="smoke")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--outputs", default=None, help="outputs folder (default: a temporary one, removed)")
    ap.add_argument("--no-warm", action="store_true", help="skip the warming run (the caches are already filled)")
    ap.add_argument("--json", default=None, help="also write the medians (and every run) to this file")
    ap.add_argument("--together", action="store_true", help="one hb run of all the notebooks per repeat")
    args = ap.parse_args(argv)
    names = args.names or sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    become_subreaper()
    # hb run asks git whether the tree is dirty; git runs the notebooks' clean filter (nbstripout, a Python
    # process per notebook) on every notebook whose file changed since git last looked, and hb gives up
    # after 30 s. Once here, so the measured runs see what a steady checkout costs.
    subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"], capture_output=True)
    outputs = Path(args.outputs) if args.outputs else Path(tempfile.mkdtemp(prefix="hb-fixed-cost."))
    timings = Path(tempfile.mkdtemp(prefix="hb-timings.")) / "timings.txt"
    rows, every = {}, {}
    try:
        if args.together:
            if not args.no_warm:
                run_together(names, args.profile, outputs, timings)
            runs = []
            for _ in range(args.repeat):
                runs.append(run_together(names, args.profile, outputs, timings))
                if args.json:  # what is measured so far, in case the machine is slow
                    Path(args.json).write_text(json.dumps({"runs": {n: [r[n] for r in runs] for n in names}}, indent=1))
            for name in names:
                rows[name], every[name] = median_parts([r[name] for r in runs]), [r[name] for r in runs]
            print(f"{len(names)} notebooks in one hb run, totals: "
                  + ", ".join(f"{sum(r[n]['total'] for n in names):.1f}" for r in runs), flush=True)
        for name in (names if not args.together else []):
            if not args.no_warm:
                run_once(name, args.profile, outputs, None)
            runs = [run_once(name, args.profile, outputs, timings) for _ in range(args.repeat)]
            rows[name], every[name] = median_parts(runs), runs
            print(f"{name}: total {rows[name]['total']:.2f} CPU-s, fixed {rows[name]['fixed']:.2f} "
                  "(runs: " + ", ".join(f"{r['total']:.2f}" for r in runs) + ")", flush=True)
    finally:
        shutil.rmtree(timings.parent, ignore_errors=True)
        if not args.outputs:
            shutil.rmtree(outputs, ignore_errors=True)
    mean = {k: statistics.fmean(r[k] for r in rows.values()) for k in next(iter(rows.values()))}
    print(f"\nwarm hb run --profile {args.profile}, CPU seconds of the whole process tree, median of {args.repeat}:")
    print(table({**rows, "AVERAGE": mean}))
    print(f"\naverage fixed cost (all but compute and cells): {mean['fixed']:.2f} CPU-s over {len(rows)} notebook(s)")
    if args.json:
        Path(args.json).write_text(json.dumps({"medians": rows, "average": mean, "runs": every}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
