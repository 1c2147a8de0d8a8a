"""Nanoseconds per round and arm of the SW-TS kernel on the notebooks' instances (prints figures, asserts nothing).

    .venv/bin/python bench/bench_sw_ts.py [--T 100000] [--instances 4] [--reps 5]

The Figure 2 notebooks run SW-TS on ``instance_set("ltf" | "concave", ..., H=100000, noise=0.01)``: LTF
instances have K = 4 or 5 arms, concave ones 11 to 14, and the rewards are low, so most posterior draws
are Beta(1 or 2, large). For each instance: the kernel's CPU time per round and arm (minimum and median
over the repetitions, which are interleaved across instances so that a busy spell of the shared machine
does not fall on one instance only), drawing the rewards as ``simulate`` does (``reward_source``).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import horizonbandits.rising as R
from horizonbandits.experiments import instance_set
from horizonbandits.rising.policies.sw_ts import SWTS


def kernel_seconds(policy, source, T: int) -> float:
    checkpoints = np.array([T], dtype=np.int64)
    t0 = time.process_time()  # CPU time: other processes on a shared machine do not inflate it
    policy.run_kernel(source, T, checkpoints, np.empty(0, dtype=np.int64), R.policy_stream_seed(0, 0))
    return time.process_time() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--T", type=int, default=100_000)
    ap.add_argument("--instances", type=int, default=4, help="instances per family")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    policy = SWTS(window_rule="horizon")
    cases = [(name, inst, R.reward_source(inst, 0, 0))
             for family in ("ltf", "concave")
             for name, inst in instance_set(family, args.instances, seed=0, H=args.T, noise=0.01).items()]
    kernel_seconds(policy, cases[0][2], 10)  # compile / load from cache
    times = {name: [] for name, _, _ in cases}
    for _ in range(args.reps):
        for name, inst, source in cases:
            times[name].append(kernel_seconds(policy, source, args.T) / (args.T * inst.K) * 1e9)
    print(f"SW-TS, T = {args.T:,}, window {policy.window(args.T)}, {args.reps} repetitions; ns per round and arm")
    print(f"{'instance':<12} {'K':>3} {'min':>7} {'median':>7} {'ns/round':>9}")
    for name, inst, _ in cases:
        best, median = min(times[name]), float(np.median(times[name]))
        print(f"{name:<12} {inst.K:>3} {best:>7.2f} {median:>7.2f} {best * inst.K:>9.0f}")


if __name__ == "__main__":
    main()
