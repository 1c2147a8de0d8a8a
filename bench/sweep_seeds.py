"""How many seeds concave_experiments' blend-weight sweep needs: the paper profile's sweep grids (each fixed challenger
blend weight w of `blend_sweep` on `sweep_instances` = 30 instances x `sweep_seeds` = 10 seeds, T = 20K and 100K, the ten
policies, noise 0.01) judged on their first k seeds (the same runs), k = 2, 3, 5, 10 by default.

    PYTHONPATH=lib HB_CACHE_DIR=/tmp/cache python bench/sweep_seeds.py [--seeds 2 3 5 10] [--instances 30] [--n-jobs 1]

Each w is a reading of the notebook's three Figure 2 (d to f) claims: the ordering (CURE-UCB lowest at every win-rate
horizon), the wins at 20K and at 100K (every win rate's interval above 95 %, partly above 50 %). The grids are computed
once at the largest k (about 130 CPU-s on one core, 2026-12-04) and cached; each line prints one (w, k): each claim's
verdict and our number with its interval over instances, then the largest move of an interval end from the largest k.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

from horizonbandits.experiments import figure2, instance_set, run_grid  # noqa: E402

POLICIES = ["CURE-UCB", "R-ed-UCB", "ET-SWGTS", "TI-UCB", "R-ed-AE", "SW-UCB", "SW-KL-UCB", "SW-TS", "Rexp3", "Ser4"]
WIN_T = [20_000, 100_000]
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def ends(text: str) -> list[float]:
    """The numbers of an outcome's interval text ("[93%, 100%]", "[-355, -289]")."""
    return [float(v.replace(",", "")) for v in NUMBER.findall(text or "")]


def judge(grid, n_boot: int) -> dict:
    """The notebook's three claims on one grid (figure2.check_claims' judges): name -> Outcome."""
    return {"ordering": figure2.ordering_outcome(grid, n_boot=n_boot),
            "wins 20K": figure2.wins_outcome(grid, min(WIN_T), 0.95, partly=0.5, n_boot=n_boot),
            "wins 100K": figure2.wins_outcome(grid, max(WIN_T), 0.95, partly=0.5, n_boot=n_boot)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[2, 3, 5, 10])
    parser.add_argument("--instances", type=int, default=30)
    parser.add_argument("--blend", type=float, nargs="+", default=[0.0, 0.2, 0.5, 0.8])
    parser.add_argument("--n-boot", type=int, default=2000)
    parser.add_argument("--n-jobs", type=int, default=1)
    args = parser.parse_args()
    study = figure2.study("concave", 1, POLICIES, {"CURE-UCB": {"eps": 0.5}}, "fixed", WIN_T, WIN_T, H=100_000,
                          noise=0.01)
    n = max(args.seeds)
    for w in args.blend:
        inst = instance_set("concave", args.instances, seed=0, H=100_000, noise=0.01, challenger_blend=(w, w))
        t0 = time.process_time()
        grid = run_grid(inst, study.policies, WIN_T, n, seed=0, backend="loky" if args.n_jobs > 1 else "sequential",
                        n_jobs=args.n_jobs, progress=False)
        print(f"w = {w:g}: grid of {args.instances} instances x {n} seeds ready ({time.process_time() - t0:.0f} CPU-s "
              "in this process; 0 when cached)", flush=True)
        full = judge(grid, args.n_boot)
        for k in sorted(args.seeds):
            out = full if k == n else judge(grid[grid["seed_index"] < k], args.n_boot)
            moves = [max((abs(a - b) for a, b in zip(ends(o.interval), ends(full[name].interval))), default=0.0)
                     for name, o in out.items()]
            same = all(o.verdict == full[name].verdict for name, o in out.items())
            print(f"  w = {w:g} k = {k:2d} | "
                  + " | ".join(f"{name}: {o.verdict}, {o.ours} ({o.interval})" for name, o in out.items())
                  + f" || verdicts {'as' if same else 'NOT as'} at k = {n}; largest interval-end move "
                  + ", ".join(f"{m:g}" for m in moves), flush=True)


if __name__ == "__main__":
    main()
