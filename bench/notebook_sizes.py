"""A notebook's claims at the paper profile and at smaller sizes of ours: the notebook executed (papermill, as `hb run`
does) with params/paper/NAME.yaml plus each size's overrides, and every claim and reading it records printed with its
verdict and our number, then compared with the first size's (verdicts that differ, largest move of an interval end).

    PYTHONPATH=lib HB_CACHE_DIR=/tmp/cache python bench/notebook_sizes.py NAME SIZE [SIZE ...] [--set JSON] [--claims ID ...]

Each SIZE is a JSON mapping of overrides (e.g. '{"adaptive_seeds": 500}'; '{}' is the paper profile itself); --set adds
overrides to every size (e.g. '{"n_jobs": 1}' to keep to one core: no number depends on it). With the result cache
each grid is computed once: a size that shares the paper run's grids reads them back. Intervals are read from each
row's text: every "[a, b]" in our number, in order (percentages as points), compared end by end with the first
size's. Outputs go to a temporary folder (--keep DIR keeps them). docs/performance.md and the notebooks' markdown give
the figures of 2026-12-04.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

import pandas as pd  # noqa: E402

from horizonbandits.workbook import Task, Workbook, execute_notebook, kernel_environment, profile_parameters  # noqa: E402

INTERVAL = re.compile(r"\[(-?[\d,.]+)(%?), (-?[\d,.]+)(%?)\]")


def intervals(text) -> list[float]:
    """The ends of every "[a, b]" in ``text``, in order (a percentage as its number of points)."""
    out = []
    for a, _, b, _ in INTERVAL.findall(str(text)):
        out += [float(a.replace(",", "")), float(b.replace(",", ""))]
    return out


def rows(folder: Path, name: str) -> pd.DataFrame:
    """The run's claims (each claim's verdict) and readings, one row each: what, verdict, ours."""
    claims = pd.read_csv(folder / "claims" / f"{name}.csv")
    out = [dict(what=r.claim_id, verdict=r.verdict, ours=f"{r.ours} (interval {r.interval})") for r in claims.itertuples()]
    readings = folder / "readings" / f"{name}.csv"
    if readings.exists():
        for r in pd.read_csv(readings).itertuples():
            out.append(dict(what=f"{r.claim_id} | {r.reading} = {r.value}", verdict=r.verdict, ours=str(r.ours)))
    return pd.DataFrame(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name")
    parser.add_argument("sizes", nargs="+", type=json.loads, help="JSON overrides, one mapping per size")
    parser.add_argument("--set", type=json.loads, default={}, help="JSON overrides added to every size")
    parser.add_argument("--claims", nargs="*", default=None, help="only these claim ids (default: all)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the outputs in this folder")
    args = parser.parse_args()
    wb = Workbook.locate(ROOT)
    os.environ.update(kernel_environment(wb))
    base = profile_parameters(args.name, "paper", ROOT)
    work = args.keep or Path(tempfile.mkdtemp(prefix="hb-sizes-"))
    tables = []
    for i, size in enumerate(args.sizes):
        overrides = {**base, **args.set, **size}
        task = Task(name=args.name, notebook=str(wb.notebooks_dir / f"{args.name}.ipynb"), cwd=str(wb.notebooks_dir),
                    profile_dir=str(work / f"size{i}"), profile="paper", overrides=overrides)
        t0, c0 = time.perf_counter(), os.times()
        result = execute_notebook(task, render_page=False)
        c1 = os.times()
        cpu = (c1.children_user + c1.children_system) - (c0.children_user + c0.children_system)
        if result.status != "ok":
            sys.exit(f"size {size}: {result.error}")
        print(f"size {i} {json.dumps(size)}: {time.perf_counter() - t0:.0f} s wall, {cpu:.0f} CPU-s of finished children "
              "(the kernel's own CPU is not counted when it is killed)", flush=True)
        table = rows(task.staged_outputs, args.name).assign(size=i)
        if args.claims:
            table = table[table.what.str.split(" | ").str[0].isin(args.claims)]
        tables.append(table)
    first = tables[0].set_index("what")
    for i, table in enumerate(tables):
        print(f"\n== size {i} {json.dumps(args.sizes[i])}")
        for r in table.itertuples():
            line = f"{r.what}: {r.verdict}; {r.ours}"
            if i and r.what in first.index:
                ref = first.loc[r.what]
                a, b = intervals(r.ours), intervals(ref.ours)
                move = max((abs(x - y) for x, y in zip(a, b)), default=0.0) if len(a) == len(b) else float("nan")
                line += (f"  <<< verdict {'same' if r.verdict == ref.verdict else 'CHANGED from ' + ref.verdict}, "
                         f"largest interval-end move {move:g}")
            print(line)


if __name__ == "__main__":
    main()
