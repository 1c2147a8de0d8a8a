"""Microseconds per cvxpy solve of the portfolio problems, and seconds per ROSCOC run (prints, asserts nothing).

    .venv/bin/python bench/bench_portfolio.py [--solves 300] [--T 2000 20000] [--seeds 3]

* plug-in solve: ``PortfolioSolver`` (max_x g(O x), O a Parameter), used once per run by
  UCB-Portfolio and to find the optimum;
* optimistic solve: ``OptimisticPortfolioSolver`` (ROSCOC's Stage-I convex step, boxes as
  Parameters), used every Stage-I round with ``solve_every="round"``;
* for comparison, the time of rebuilding the plug-in problem from scratch at every solve (what DPP
  re-use saves), and the exact active-set solver used by the tests.

Each figure is the median over 5 blocks of ``--solves`` solves on the section 7.3 reward with
random inputs, in CPU time of this process (the median and CPU time resist other processes on a
shared machine). Then the CPU time of one seed of each policy on section73(T), and the projected CPU
time of the Figure 5 grid. ROSCOC's default Stage I is the compiled Frank-Wolfe step, which calls no
solver (its "solves" are refreshes of the confidence boxes); cvxpy is called once per run by
UCB-Portfolio and by ROSCOC(stage1="convex_solve") at every refresh (the notebook's ablation, on the
doubling schedule).
"""
from __future__ import annotations

import argparse
import time

import cvxpy as cp
import numpy as np

from horizonbandits.commit.portfolio_model import run_seed
from horizonbandits.commit.portfolio import (OptimisticPortfolioSolver, PortfolioSolver, portfolio_solve_exact)
from horizonbandits.commit.portfolio_instances import section73
from horizonbandits.commit import ROSCOC, UCBPortfolio


def per_call_us(fn, inputs, blocks=5):
    times = []
    for _ in range(blocks):
        t0 = time.process_time()
        for args in inputs:
            fn(*args)
        times.append((time.process_time() - t0) / len(inputs) * 1e6)
    return float(np.median(times))


def rebuild_and_solve(reward, O):
    x = cp.Variable(O.shape[1], nonneg=True)
    cp.Problem(cp.Maximize(reward.cvxpy(O @ x)), [cp.sum(x) == 1]).solve(solver="CLARABEL")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--solves", type=int, default=300)
    ap.add_argument("--T", type=int, nargs="+", default=[2000, 20000])
    ap.add_argument("--seeds", type=int, default=2)
    args = ap.parse_args(argv)
    problem = section73(20000)
    reward, K, d = problem.reward, problem.K, problem.d
    rng = np.random.default_rng(0)
    Os = [np.clip(problem.outcome_mean + 0.05 * rng.standard_normal((d, K)), 0, 1) for _ in range(args.solves)]
    rads = [rng.uniform(0.0, 0.3, (d, K)) for _ in range(args.solves)]
    plug, opt = PortfolioSolver(reward, K), OptimisticPortfolioSolver(reward, K)
    plug.solve(Os[0]), opt.solve(Os[0] - rads[0], Os[0] + rads[0])  # first solve canonicalises
    rows = [
        ("plug-in solve, DPP re-solve", per_call_us(plug.solve, [(O,) for O in Os])),
        ("optimistic solve, DPP re-solve", per_call_us(opt.solve, [(np.clip(O - r, 0, 1), np.clip(O + r, 0, 1))
                                                                    for O, r in zip(Os, rads)])),
        ("plug-in, rebuilt every solve", per_call_us(rebuild_and_solve, [(reward, O) for O in Os[:60]], blocks=3)),
        ("exact active-set enumeration", per_call_us(lambda O: portfolio_solve_exact(O, reward.c, reward.A),
                                                     [(O,) for O in Os[:60]], blocks=3)),
    ]
    print(f"section 7.3 reward, K = {K}, d = {d}")
    for name, us in rows:
        print(f"  {name:34s} {us:9.0f} us per solve")
    print("\none seed per policy (CPU seconds; Stage-I refreshes in brackets, cvxpy solves only for convex_solve)")
    seconds = {}
    for T in args.T:
        prob = section73(T)
        for policy in (UCBPortfolio(), ROSCOC(), ROSCOC(solve_every="doubling"),
                       ROSCOC(stage1="convex_solve", solve_every="doubling")):
            run_seed(prob, policy, 0, 0)
            t0 = time.process_time()
            for s in range(args.seeds):
                run = run_seed(prob, policy, 1, s)
            sec = (time.process_time() - t0) / args.seeds
            seconds[(T, policy.label)] = sec
            print(f"  T={T:6d} {policy.label:32s} {sec:7.3f} s  [{run.info.get('solves')}]")
    plug_us = rows[0][1]
    grid = [500, 1000, 2000, 4000, 10000, 15000, 20000]
    per_rep = sum(seconds.get((T, lab), 0.0) for T in grid for lab in (UCBPortfolio().label, ROSCOC().label))
    timed = [T for T in grid if (T, ROSCOC().label) in seconds]
    if len(timed) == len(grid):
        print(f"\nFigure 5 grid (ROSCOC + UCB-Portfolio, 7 horizons): {per_rep:.2f} CPU s per replication, "
              f"~{200 * per_rep:.0f} CPU s for 200 replications; of which {len(grid)} cvxpy plug-in solves "
              f"({len(grid) * plug_us / 1e6:.3f} s) per replication")
    else:
        print(f"\nFigure 5 grid: cvxpy is called {len(grid)} times per replication (UCB-Portfolio's plug-in "
              f"portfolio, {plug_us:.0f} us each): {200 * len(grid) * plug_us / 1e6:.1f} CPU s for 200 "
              f"replications; pass --T {' '.join(map(str, grid))} to time the whole replication")

if __name__ == "__main__":
    main()
