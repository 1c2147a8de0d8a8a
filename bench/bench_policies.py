"""Nanoseconds per round and arm of every rising-bandit policy kernel (prints figures, asserts nothing).

    .venv/bin/python bench/bench_policies.py [--K 5 15] [--T 100000] [--seeds 40] [--policies CURE-UCB R-ed-UCB]

For each policy and K: the compiled kernel's median CPU time per round and arm over the seeds, drawing each
reward when it pulls (``reward_source``: what ``simulate`` runs), the same on a reward table drawn
beforehand (``Observations``: the policy's own cost and its running sums, without the draws), the cost of
filling a whole K x T table (``draw_observations``: what the references read, not on simulate's path),
and the plain-Python reference's time per round and arm on a shorter run, with the speed-up of the kernel.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit

import horizonbandits.rising as R


@njit(cache=True)
def _dependent_chain(n):
    x = 1.0
    for _ in range(n):
        x = x * 1.0000001 + 1e-9  # a multiply then an add, each waiting for the previous one
    return x


def machine_speed(n: int = 50_000_000) -> float:
    """ns per step of a dependent multiply-add chain (8 cycles on current x86 cores): a clock reading
    that shows whether the shared machine is in a fast or slow state when the kernels are timed."""
    _dependent_chain(10)
    t0 = time.process_time()
    _dependent_chain(n)
    return (time.process_time() - t0) / n * 1e9


def bench(policy, K: int, T: int, seeds: int, ref_T: int):
    inst = R.ltf_random(np.random.default_rng(K), K=K, T_ref=T, noise=0.01)
    R.draw_observations(inst, 10, seed=0, s=0)  # compile / load from cache
    t0 = time.process_time()
    tables = [R.draw_observations(inst, T, seed=0, s=s) for s in range(seeds)]
    draw = (time.process_time() - t0) / (seeds * T * K) * 1e9
    sources = [R.reward_source(inst, seed=0, s=s) for s in range(seeds)]
    cps = np.array([T], dtype=np.int64)
    none = np.empty(0, dtype=np.int64)
    policy.run_kernel(tables[0], T, cps, none, 1)  # compile / load from cache
    policy.run_kernel(sources[0], T, cps, none, 1)

    def median_ns(rewards):
        per_seed = []
        for s, obs in enumerate(rewards):
            t0 = time.process_time()  # CPU time: other processes on a shared machine do not inflate it
            policy.run_kernel(obs, T, cps, none, R.policy_stream_seed(0, s))
            per_seed.append(time.process_time() - t0)
        # The median over seeds is robust to other processes stealing the core for a moment.
        return float(np.median(per_seed)) / (T * K) * 1e9

    kernel, on_table = median_ns(sources), median_ns(tables)
    t0 = time.process_time()
    policy.reference(tables[0].X, ref_T, R.policy_stream_seed(0, 0))
    reference = (time.process_time() - t0) / (ref_T * K) * 1e9
    return kernel, on_table, draw, reference


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--K", type=int, nargs="+", default=[5, 15])
    ap.add_argument("--T", type=int, default=100_000)
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--ref-T", type=int, default=5_000, help="horizon of the timed reference run")
    ap.add_argument("--policies", nargs="+", default=None)
    args = ap.parse_args(argv)
    names = args.policies or list(R.POLICIES)
    step = machine_speed()
    print(f"machine: {step:.2f} ns per dependent multiply-add step (about {8 / step:.2f} GHz if it takes 8 cycles)")
    print(f"T = {args.T:,}, {args.seeds} seeds, one core; ns per round and arm")
    print(f"{'policy':<12} {'K':>3} {'kernel':>9} {'on table':>9} {'table':>7} {'reference':>10} {'speed-up':>9}")
    for name in names:
        policy = R.POLICIES[name]()
        for K in args.K:
            kernel, on_table, draw, reference = bench(policy, K, args.T, args.seeds, min(args.ref_T, args.T))
            print(f"{name:<12} {K:>3} {kernel:>9.2f} {on_table:>9.2f} {draw:>7.2f} {reference:>10.0f} "
                  f"{reference / kernel:>8.0f}x")


if __name__ == "__main__":
    main()
