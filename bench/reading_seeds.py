"""How many seeds the Figure 2 notebooks' other-window-rule reading needs: the paper-scale grids (100 instances x 40
seeds, T = 10K, ..., 100K, the ten policies, noise 0.01) read back from the result cache of a paper run and judged on
their first k seeds (the same runs), k = 5, 10, 20, 40, under both window rules of SW-UCB and SW-TS.

    PYTHONPATH=lib HB_CACHE_DIR=outputs/cache python bench/reading_seeds.py ltf|concave

Without a paper run's cache it computes the grids (about 20 CPU-minutes for ltf, 40 for concave). It prints one line
per k and rule: each claim's verdict and our number (docs/performance.md, 2026-12-04, has the readings).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

from horizonbandits.experiments import figure2, run_grid  # noqa: E402

POLICIES = ["CURE-UCB", "R-ed-UCB", "ET-SWGTS", "TI-UCB", "R-ed-AE", "SW-UCB", "SW-KL-UCB", "SW-TS", "Rexp3", "Ser4"]
THRESHOLDS = {"ltf": (0.5, None), "concave": (0.95, 0.5)}  # the notebooks' win-rate thresholds (and partly)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("family", choices=sorted(THRESHOLDS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[5, 10, 20, 40])
    args = parser.parse_args()
    horizons = list(range(10_000, 100_001, 10_000))
    study = figure2.study(args.family, 100, POLICIES, {"CURE-UCB": {"eps": 0.5}}, "fixed", horizons, [20_000, 100_000],
                          H=100_000, noise=0.01)
    n = max(args.seeds)
    t0 = time.perf_counter()
    main_grid = run_grid(study.instances, study.policies, study.horizons, n, seed=0, progress=False)
    other = figure2.under_window_rule(main_grid, study.instances, study.policies, study.horizons, n, "horizon", seed=0,
                                      progress=False)
    print(f"grids ready in {time.perf_counter() - t0:.0f} s")
    threshold, partly = THRESHOLDS[args.family]
    for k in sorted(args.seeds):
        for rule, grid in (("fixed", main_grid), ("horizon", other)):
            g = grid[grid["seed_index"] < k]
            parts = [("ordering", figure2.ordering_outcome(g, n_boot=2000))]
            parts += [(f"wins T={T:,}", figure2.wins_outcome(g, T, threshold, partly=partly, n_boot=2000))
                      for T in (20_000, 100_000)]
            print(f"{args.family} k={k:2d} {rule:7s} " + " | ".join(f"{name}: {o.verdict}, {o.ours}" for name, o in parts))


if __name__ == "__main__":
    main()
