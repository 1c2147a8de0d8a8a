"""Old against new rising kernels, in one process: same arms? and CPU time interleaved (prints figures).

    .venv/bin/python bench/ab_kernels.py --rev 2a5a46e [--policies SW-UCB CURE-UCB] [--reps 5] [--check 300]

``--rev`` is a git revision of this repository: its ``lib/horizonbandits`` is extracted into a temporary
folder as the package ``horizonbandits_old`` and imported next to the working tree's ``horizonbandits``.

1. ``--check N``: N random (family, instance, seed index, T) inputs; on each, every policy's old and new
   kernel must return the same pull counts at a few checkpoints and the same arm at every round. The inputs
   mix the notebooks' LTF and concave sets (gaussian noise 0.01), bernoulli rewards, larger noise and
   shorter horizons; a mismatch is printed and makes the exit status 1.
2. Timing: on the instances the notebooks use (``instance_set("ltf"/"concave", 4, seed=0)``, T = 100,000,
   policies as ``make_policies(..., {"CURE-UCB": {"eps": 0.5}}, sigma=0.01)`` makes them), old and new runs
   alternate (A, B, A, B ...) ``--reps`` times; ns per round (and per round and arm), minimum and median.
   ``--T`` times shorter runs on the same instances (the Figure 2 grids run T = 10,000 .. 100,000).
3. ``--grid``: old and new alternated as ``run_task`` runs a policy in the Figure 2 grids (per seed, one run per
   horizon T = 10,000, 20,000 .. 100,000 for a horizon-aware policy, one run to 100,000 otherwise), so that
   per-call costs (the log table, the work array) count: ns per round over 2 instances x 2 seeds per family.
"""
from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_POLICIES = ["SW-UCB", "CURE-UCB", "Ser4", "R-ed-AE", "SW-KL-UCB", "R-ed-UCB"]
MAIN_PARAMS = {"CURE-UCB": {"eps": 0.5}}


def import_old(rev: str):
    """``horizonbandits`` as it was at ``rev``, imported as ``horizonbandits_old`` from a folder kept under the
    system's temporary directory (kept, so that numba's cache of the old kernels is found on the next run)."""
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", rev], check=True, capture_output=True,
                            text=True).stdout.strip()
    into = Path(tempfile.gettempdir()) / f"hb_ab_kernels_{commit[:12]}"
    if not (into / "horizonbandits_old").is_dir():
        blob = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "lib/horizonbandits"],
                              check=True, capture_output=True).stdout
        with tempfile.TemporaryDirectory(dir=tempfile.gettempdir()) as tmp:
            with tarfile.open(fileobj=BytesIO(blob)) as tar:
                tar.extractall(tmp, filter="data")
            into.mkdir(exist_ok=True)
            (Path(tmp) / "lib" / "horizonbandits").rename(into / "horizonbandits_old")
    sys.path.insert(0, str(into))
    return importlib.import_module("horizonbandits_old")


def policies_of(pkg, names, sigma=0.01):
    make = importlib.import_module(pkg.__name__ + ".experiments").make_policies
    return make(names, {k: v for k, v in MAIN_PARAMS.items() if k in names}, sigma=sigma)


def run(policy, obs, T, checkpoints, stream_seed):
    arms = np.empty(T, dtype=np.int64)
    counts = policy.run_kernel(obs, T, checkpoints, arms, stream_seed)
    return counts, arms


def check(old, new, names, n_inputs: int, seed: int = 1) -> int:
    """Number of (input, policy) pairs on which old and new disagree."""
    ex_new = importlib.import_module("horizonbandits.experiments")
    R = importlib.import_module("horizonbandits.rising")
    rng = np.random.default_rng(seed)
    sets = {f: ex_new.instance_set(f, 100, seed=0, H=20_000) for f in ("ltf", "concave")}
    bad = 0
    for k in range(n_inputs):
        family = ("ltf", "concave")[k % 2]
        inst = list(sets[family].values())[int(rng.integers(100))]
        T = int(rng.choice([int(rng.integers(2, 200)), int(rng.integers(200, 5_000)), int(rng.integers(5_000, 20_001))]))
        noise = [0.01, 0.01, 0.1, "bernoulli"][int(rng.integers(4))]
        sigma = 0.01 if noise == "bernoulli" else noise
        s = int(rng.integers(1_000))
        obs = R.reward_source(inst, seed=k, s=s, noise=noise)
        stream = R.policy_stream_seed(k, s)
        cps = np.unique(np.array([1, T // 3 + 1, T // 2 + 1, T], dtype=np.int64))
        old_pols, new_pols = policies_of(old, names, sigma), policies_of(new, names, sigma)
        for name in names:
            c_old, a_old = run(old_pols[name], obs, T, cps, stream)
            c_new, a_new = run(new_pols[name], obs, T, cps, stream)
            if not (np.array_equal(c_old, c_new) and np.array_equal(a_old, a_new)):
                bad += 1
                first = int(np.flatnonzero(a_old != a_new)[0]) + 1 if (a_old != a_new).any() else None
                print(f"MISMATCH {name} input {k}: {family} K={inst.K} T={T} noise={noise} s={s}; first round {first}")
    print(f"check: {n_inputs} inputs x {len(names)} policies, {bad} mismatches")
    return bad


def timing(old, new, names, reps: int, T: int = 100_000):
    """Old and new kernels alternated on the notebooks' instances (reference horizon 100,000), run to T."""
    ex = importlib.import_module("horizonbandits.experiments")
    R = importlib.import_module("horizonbandits.rising")
    old_pols, new_pols = policies_of(old, names), policies_of(new, names)
    cps = np.array([T], dtype=np.int64)
    none = np.empty(0, dtype=np.int64)
    print(f"T = {T:,}, CPU time, old/new interleaved x {reps}: ns per round (per round and arm), min / median")
    for family in ("ltf", "concave"):
        for label, inst in ex.instance_set(family, 4, seed=0, H=100_000, noise=0.01).items():
            obs = R.reward_source(inst, 0, 0)
            stream = R.policy_stream_seed(0, 0)
            for name in names:
                for pol in (old_pols[name], new_pols[name]):
                    pol.run_kernel(obs, 1_000, np.array([1_000]), none, stream)  # load / compile
                times = {"old": [], "new": []}
                for _ in range(reps):
                    for which, pol in (("old", old_pols[name]), ("new", new_pols[name])):
                        t0 = time.process_time()
                        pol.run_kernel(obs, T, cps, none, stream)
                        times[which].append((time.process_time() - t0) / T * 1e9)
                cells = []
                for which in ("old", "new"):
                    lo, med = min(times[which]), float(np.median(times[which]))
                    cells.append(f"{which} {lo:6.1f} / {med:6.1f} ({lo / inst.K:4.1f})")
                ratio = min(times["new"]) / min(times["old"])
                print(f"{label:12s} K={inst.K:2d} {name:10s} " + "   ".join(cells) + f"   new/old {ratio:.2f}")


def grid_timing(old, new, names, reps: int):
    ex = importlib.import_module("horizonbandits.experiments")
    R = importlib.import_module("horizonbandits.rising")
    horizons = list(range(10_000, 100_001, 10_000))
    none = np.empty(0, dtype=np.int64)
    print(f"As run_task runs them (per seed, T = 10,000 .. 100,000), CPU time, old/new interleaved x {reps}: "
          "ns per round, min / median")
    for family in ("ltf", "concave"):
        insts = list(ex.instance_set(family, 2, seed=0, H=100_000, noise=0.01).values())
        for name in names:
            pols = {"old": policies_of(old, [name])[name], "new": policies_of(new, [name])[name]}
            Ts = horizons if pols["new"].uses_horizon else [max(horizons)]
            for pol in pols.values():
                pol.run_kernel(R.reward_source(insts[0], 0, 0), 1_000, np.array([1_000]), none, 1)
            times = {"old": [], "new": []}
            for _ in range(reps):
                for which, pol in pols.items():
                    t0 = time.process_time()
                    for inst in insts:
                        for s in range(2):
                            obs = R.reward_source(inst, 0, s)
                            for T in Ts:
                                pol.run_kernel(obs, T, np.array([T], dtype=np.int64), none, R.policy_stream_seed(0, s))
                    times[which].append((time.process_time() - t0) / (len(insts) * 2 * sum(Ts)) * 1e9)
            cells = [f"{w} {min(v):6.1f} / {float(np.median(v)):6.1f}" for w, v in times.items()]
            print(f"{family:8s} {name:10s} " + "   ".join(cells) + f"   new/old {min(times['new']) / min(times['old']):.2f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rev", required=True, help="git revision holding the old kernels")
    ap.add_argument("--policies", nargs="+", default=DEFAULT_POLICIES)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--check", type=int, default=0, help="random inputs to compare (0: skip)")
    ap.add_argument("--no-timing", action="store_true")
    ap.add_argument("--T", type=int, default=100_000, help="horizon of the timed runs (at most 100,000)")
    ap.add_argument("--grid", action="store_true", help="time as the Figure 2 grids run the kernels instead")
    args = ap.parse_args(argv)
    old = import_old(args.rev)
    new = importlib.import_module("horizonbandits")
    bad = check(old, new, args.policies, args.check) if args.check else 0
    if args.grid:
        grid_timing(old, new, args.policies, args.reps)
    elif not args.no_timing:
        timing(old, new, args.policies, args.reps, args.T)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
