"""UCBCommit's batch kernel against an older revision's: same pulls and commitments, and the time (prints).

    .venv/bin/python bench/ab_commit_ucb.py [--against 2a5a46e] [--problems 300] [--seeds 300]

The older ``commit/policies/ucb.py`` is read with ``git show REV:...`` and compiled beside the current one
(without numba's disk cache, under a name of its own). Then:

1. Equality: ``--problems`` random problems (K = 2..8, N = 1..3000, Bernoulli with and without tied means,
   discrete laws with 1..5 support points), 1..40 runs each from a random root seed; every run's pull counts
   and committed arm must be equal (the script stops at the first difference).
2. Time: K = 4 problems of lower_bound_construction's two families and K = 2, 8 problems (one arm leads / the
   arms alternate), old and new interleaved in this process, 7 times each; CPU time (``time.process_time``), minimum and median
   in ns per round and arm. Other processes on the machine change the medians more than the minima.
"""
from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from horizonbandits.commit import CommitProblem, instances
from horizonbandits.commit.policies import ucb as new
from horizonbandits.commit.sampling import environment_stream_seeds, policy_stream_seeds

ROOT = Path(__file__).resolve().parents[1]


def old_module(rev: str):
    source = subprocess.run(["git", "show", f"{rev}:lib/horizonbandits/commit/policies/ucb.py"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "ucb_old.py"
    path.write_text(source.replace("cache=True", "cache=False"))
    spec = importlib.util.spec_from_file_location("horizonbandits.commit.policies.ucb_old", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(module, problem, n_seeds: int, seed: int = 0):
    counts = np.zeros((n_seeds, problem.K), dtype=np.int64)
    committed = np.zeros(n_seeds, dtype=np.int64)
    module._ucb_batch(problem.N, environment_stream_seeds(seed, n_seeds), policy_stream_seeds(seed, n_seeds),
                      problem.kind, problem.mu_f, problem.mu_g, problem.cdf, problem.f_values, problem.g_values,
                      counts, committed)
    return counts, committed


def random_problem(rng) -> CommitProblem:
    K = int(rng.integers(2, 9))
    N = int(rng.integers(1, 3000))
    T = N + int(rng.integers(1, 5000))
    if rng.random() < 0.6:
        mu_f, mu_g = rng.random(K), rng.random(K)
        if rng.random() < 0.3:
            mu_f, mu_g = np.round(mu_f, 1), np.round(mu_g, 1)  # tied means: ties of the index and of the commitment
        return CommitProblem.bernoulli(mu_f, mu_g, N, T)
    m = int(rng.integers(1, 6))
    return CommitProblem.discrete(rng.random((m, 2)), rng.dirichlet(np.ones(m), size=K), lambda o: o[0],
                                  lambda o: o[1], N, T)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", default="2a5a46e", help="git revision of the old kernel (default: before the lanes)")
    ap.add_argument("--problems", type=int, default=300)
    ap.add_argument("--seeds", type=int, default=300, help="runs per timed problem")
    args = ap.parse_args(argv)
    old = old_module(args.against)

    rng = np.random.default_rng(0)
    runs = 0
    for k in range(args.problems):
        problem = random_problem(rng)
        n, seed = int(rng.integers(1, 41)), int(rng.integers(0, 1000))
        a, b = run(old, problem, n, seed), run(new, problem, n, seed)
        if not (np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])):
            sys.exit(f"problem {k} ({problem}), {n} runs from seed {seed}: the kernels differ")
        runs += n
    print(f"same pull counts and commitments on {args.problems} random problems ({runs} runs)")

    n = args.seeds
    timed = [p for N, T in [(5000, 20000), (500, 2000), (60, 500)]
             for p in (instances.commitment_side_family(4, N, T, c=1.0, delta_f=0.4)[0],
                       instances.experiment_side_family(4, N, T, c=1.0)[0])]
    timed += [CommitProblem.bernoulli([lead] + [0.5] * (K - 1), [0.5] * K, 5000, 20000)
              for K in (2, 8) for lead in (0.9, 0.52)]
    for problem in timed:
        N = problem.N
        run(old, problem, 3)
        run(new, problem, 3)
        times = {"old": [], "new": []}
        for _ in range(7):
            for name, module in (("old", old), ("new", new)):
                start = time.process_time()
                run(module, problem, n)
                times[name].append(time.process_time() - start)
        ns = {name: [1e9 * x / (n * N * problem.K) for x in v] for name, v in times.items()}
        print(f"K = {problem.K}, N = {N:5d}, mu_f = {np.round(problem.mu_f, 3).tolist()}: "
              + "   ".join(f"{name} {min(v):.2f} (median {statistics.median(v):.2f})" for name, v in ns.items())
              + " ns per round and arm")


if __name__ == "__main__":
    main()
