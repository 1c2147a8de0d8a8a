"""Timings of the experiment-then-commit simulator (prints figures, asserts nothing).

    .venv/bin/python bench/bench_commit.py [--seeds 1500]

1. The section 7.1 grid of Figure 3 (5 schedules x 7 horizons, RAEC and UniformCommit, ``--seeds`` runs each):
   wall and CPU time.
2. Per policy at N = 5000, T = 20000: microseconds per run on the fast path (``draws="batch"``), on the table path
   (``draws="table"``, which pre-draws every pull), and the per-round reference; UCB's nanoseconds per round.
3. The binomial sampler: nanoseconds per draw for small and large n.
CPU times (``time.process_time``) are given beside wall times because other processes may share the machine.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit

from horizonbandits.commit import RAEC, UCBCommit, UniformCommit, reference_runs, simulate
from horizonbandits.commit import instances
from horizonbandits.commit.sampling import nb_binomial


def clock(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def grid71(n_seeds: int):
    for sch in instances.SCHEDULES:
        for T in instances.PAPER_GRID:
            p = instances.section71(sch, T)
            simulate(p, instances.section71_policy(sch), n_seeds, seed=0)
            simulate(p, UniformCommit(), n_seeds, seed=0)


@njit(cache=True)
def _binomial_loop(n, p, reps):
    st = np.empty(1, dtype=np.uint64)
    st[0] = 12345
    total = 0
    for _ in range(reps):
        total += nb_binomial(st, n, p)
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=1500)
    args = ap.parse_args()

    grid71(2)  # compile and load the kernels
    _, wall, cpu = clock(lambda: grid71(args.seeds))
    print(f"section 7.1 grid, 35 cells x (RAEC + UniformCommit) x {args.seeds} runs: {wall:.2f} s wall, {cpu:.2f} s CPU")

    p = instances.section72(20000)
    simulate(p, UniformCommit(), 20000, seed=1)  # the per-run seeds are cached per (seed, n_seeds): draw them first
    simulate(p, UniformCommit(), 2000, seed=1)
    print(f"\nper run on {p}:")
    for pol in [instances.section72_policy(), RAEC(), UCBCommit(), UniformCommit()]:
        n = 2000 if isinstance(pol, UCBCommit) else 20000
        simulate(p, pol, 4, seed=1)
        _, w, c = clock(lambda pol=pol, n=n: simulate(p, pol, n, seed=1))
        _, wt, ct = clock(lambda pol=pol: simulate(p, pol, 20, seed=1, draws="table"))
        _, wr, cr = clock(lambda pol=pol: reference_runs(p, pol, 3, seed=1))
        line = (f"  {pol.label:55s} batch {1e6 * c / n:9.1f} us/run   table {1e6 * ct / 20:9.1f} us/run   "
                f"reference {1e6 * cr / 3:11.1f} us/run")
        if isinstance(pol, UCBCommit):
            line += f"   ({1e9 * c / n / p.N:.1f} ns/round, {1e9 * c / n / p.N / p.K:.1f} ns/round/arm)"
        print(line)

    print("\nbinomial sampler:")
    for n_, p_ in [(10, 0.3), (200, 0.05), (5000, 0.5), (20000, 0.2)]:
        _binomial_loop(n_, p_, 10)
        reps = 1_000_000
        _, w, c = clock(lambda n_=n_, p_=p_, reps=reps: _binomial_loop(n_, p_, reps))
        print(f"  n = {n_:6d}, p = {p_}: {1e9 * c / reps:6.1f} ns per draw")


if __name__ == "__main__":
    main()
