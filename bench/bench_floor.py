"""The floor of a rising kernel: what a round costs when the policy does nothing (prints figures).

    .venv/bin/python bench/bench_floor.py [--T 100000] [--reps 5]

Trivial kernels with the bookkeeping of the real ones (pull counts, the last pull drawn per arm,
checkpoints) that pull the arms round-robin (or always arm 0) and take their rewards from the same
reward source with the same helpers (``fill_c``, ``fill_cw``, ``fill_x``) as the policies, on the
instances the notebooks use (``instance_set("ltf"/"concave", 4, seed=0)``, gaussian noise 0.01, source
``reward_source(inst, 0, 0)``). The same loop on the means themselves (mode TABLE: no draw) and with no
reward at all separate the draw from the bookkeeping. CPU time, ns per round, minimum and median of
``--reps`` interleaved repetitions.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit

from horizonbandits.experiments import instance_set
from horizonbandits.rising import reward_source
from horizonbandits.rising.rewards import TABLE, fill_c, fill_cw, fill_x, kernel_args, start_c, start_cw


@njit(cache=True)
def _nothing(K, T, same_arm):
    """Round-robin (or arm 0) with pull counts and a checkpoint, no reward."""
    counts = np.zeros(K, dtype=np.int64)
    out = np.zeros(K, dtype=np.int64)
    arm = 0
    for t in range(1, T + 1):
        arm = 0 if same_arm else (t - 1) % K
        counts[arm] += 1
        if t == T:
            for k in range(K):
                out[k] = counts[k]
    return out


@njit(cache=True)
def _with_c(mode, table, sigma, keys, work, T, same_arm):
    """As ``_nothing``, plus the pulled arm's running sum C from ``fill_c`` (SW-UCB, CURE-UCB)."""
    K = table.shape[0]
    C = work[0]
    start_c(C, table)
    filled = np.zeros(K, dtype=np.int64)
    counts = np.zeros(K, dtype=np.int64)
    out = np.zeros(K, dtype=np.int64)
    total = 0.0
    for t in range(1, T + 1):
        arm = 0 if same_arm else (t - 1) % K
        counts[arm] += 1
        n = counts[arm]
        if n > filled[arm]:
            filled[arm] = fill_c(C, mode, table, sigma, keys, arm, filled[arm] + 1, T)
        total += C[arm, n + 1]  # read what a policy reads, so nothing is optimised away
        if t == T:
            for k in range(K):
                out[k] = counts[k]
    out[0] += total > 1e300
    return out


@njit(cache=True)
def _with_cw(mode, table, sigma, keys, work, T, same_arm):
    """As ``_with_c`` with C and W from ``fill_cw`` (R-ed-UCB, R-ed-AE)."""
    K = table.shape[0]
    C, W, filled = start_cw(work, table)
    counts = np.zeros(K, dtype=np.int64)
    out = np.zeros(K, dtype=np.int64)
    total = 0.0
    for t in range(1, T + 1):
        arm = 0 if same_arm else (t - 1) % K
        counts[arm] += 1
        n = counts[arm]
        if n > filled[arm]:
            filled[arm] = fill_cw(C, W, mode, table, sigma, keys, arm, filled[arm] + 1, T)
        total += C[arm, n + 1] + W[arm, n + 1]
        if t == T:
            for k in range(K):
                out[k] = counts[k]
    out[0] += total > 1e300
    return out


@njit(cache=True)
def _with_x(mode, table, sigma, keys, work, T, same_arm):
    """As ``_with_c`` with the rewards themselves from ``fill_x`` (Ser4, SW-KL-UCB, SW-TS)."""
    K = table.shape[0]
    X = work[0]
    filled = np.zeros(K, dtype=np.int64)
    counts = np.zeros(K, dtype=np.int64)
    out = np.zeros(K, dtype=np.int64)
    total = 0.0
    for t in range(1, T + 1):
        arm = 0 if same_arm else (t - 1) % K
        counts[arm] += 1
        n = counts[arm]
        if n > filled[arm]:
            filled[arm] = fill_x(X, mode, table, sigma, keys, arm, filled[arm] + 1, T)
        total += X[arm, n]
        if t == T:
            for k in range(K):
                out[k] = counts[k]
    out[0] += total > 1e300
    return out


def cases(obs, T):
    mode, table, sigma, keys, work = kernel_args(obs, T)
    K = obs.K
    return {
        "no reward, round-robin": lambda: _nothing(K, T, False),
        "C on means (no draw), rr": lambda: _with_c(TABLE, table, sigma, keys, work, T, False),
        "C, fill_c, round-robin": lambda: _with_c(mode, table, sigma, keys, work, T, False),
        "C, fill_c, arm 0 only": lambda: _with_c(mode, table, sigma, keys, work, T, True),
        "C+W, fill_cw, round-robin": lambda: _with_cw(mode, table, sigma, keys, work, T, False),
        "X, fill_x, round-robin": lambda: _with_x(mode, table, sigma, keys, work, T, False),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--T", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    T = args.T
    print(f"T = {T:,}, CPU time; ns per round, min / median of {args.reps}")
    for family in ("ltf", "concave"):
        for label, inst in list(instance_set(family, 4, seed=0, H=T, noise=0.01).items())[:2]:
            obs = reward_source(inst, 0, 0)
            runs = cases(obs, T)
            times = {name: [] for name in runs}
            for f in runs.values():
                f()  # compile / load
            for _ in range(args.reps):
                for name, f in runs.items():
                    t0 = time.process_time()
                    f()
                    times[name].append((time.process_time() - t0) / T * 1e9)
            for name, ts in times.items():
                print(f"{label:12s} K={inst.K:2d} {name:28s} {min(ts):6.1f} / {float(np.median(ts)):6.1f}")


if __name__ == "__main__":
    main()
