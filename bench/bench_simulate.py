"""``simulate`` end to end against a hand-written compiled loop (issue 18, target 2; prints figures, asserts nothing).

    .venv/bin/python bench/bench_simulate.py [--K 5] [--T 100000] [--seeds 40]

Config of the issue: CURE-UCB(eps=0.25, sigma=0.01), noise 0.01, one thread. Printed in ns per round and arm
(CPU time of the whole call divided by seeds x T x K):

(a) ``simulate(inst, CureUCB(...), T, n_seeds, noise=0.01)``: keys, rewards, the policy, the regret;
(b) a plain numba loop, CURE-UCB's index written out once per arm and round (no tuning), which draws the
    reward of each pull itself with the same per-pull generator (``counter_rng.nb_pull_normal``) and adds
    up the regret; it makes the same choices as the kernel, so its regret is the same number;
(c) the ratio (a) / (b);
(d) the loop of (b) drawing with numba's ``np.random.standard_normal`` instead, for reference;

and the clock reading ``machine_speed()`` of ``bench_policies``.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

import horizonbandits.rising as R
from horizonbandits import seeds
from horizonbandits.counter_rng import nb_pull_normal

sys.path.insert(0, str(Path(__file__).parent))
from bench_policies import machine_speed  # noqa: E402


@njit(cache=True)
def hand_loop(mu, T, eps, sigma, noise, keys, numpy_normals):
    """(collected mean reward, pull counts) of one CURE-UCB run (section 4.1 index; 2 round-robin pulls
    per arm; ties to the lowest index)."""
    K = mu.shape[0]
    C = np.empty((K, T + 2))  # C[i, n + 1] = X_i(1) + ... + X_i(n), C[i, 0] = -mu_i(0)
    N = np.zeros(K, dtype=np.int64)
    for i in range(K):
        C[i, 0] = -mu[i, 0]
        C[i, 1] = 0.0
    collected = 0.0
    for t in range(1, T + 1):
        if t <= 2 * K:
            arm = (t - 1) % K
        else:
            remaining = float(T - t + 2)
            arm = 0
            best = -math.inf
            for i in range(K):
                n = N[i]
                h = max(int(math.floor(eps * n)), 1)
                recent = C[i, n + 1] - C[i, n - h + 1]
                lagged = C[i, n - h + 1] - C[i, n - 2 * h + 1]
                growth = (recent - lagged) / (h * h)
                bonus = sigma * math.sqrt((3.0 * math.log(t)) * ((remaining * remaining) * (1.5 / (h * h * h)) + 4.0 / h))
                b = (recent / h + remaining / 2.0 * growth) + bonus
                if b > best:
                    arm, best = i, b
        N[arm] += 1
        n = N[arm]
        z = np.random.standard_normal() if numpy_normals else nb_pull_normal(keys[arm], n)
        C[arm, n + 1] = C[arm, n] + (mu[arm, n] + noise * z)
        collected += mu[arm, n]
    return collected, N


def hand(inst, T, n_seeds, eps, sigma, noise, numpy_normals):
    """Regret and pull counts of every seed by ``hand_loop`` (keys from ``seeds.arm_reward_key``, as simulate's)."""
    mu = np.ascontiguousarray(inst.means)
    best = R.optimal_value(inst, T)
    regret = np.empty(n_seeds)
    pulls = np.empty((n_seeds, inst.K), dtype=np.int64)
    for s in range(n_seeds):
        np.random.seed(s)  # numba's generator, for (d) only
        keys = np.array([seeds.arm_reward_key(0, s, i) for i in range(inst.K)], dtype=np.uint64)
        collected, pulls[s] = hand_loop(mu, T, eps, sigma, noise, keys, numpy_normals)
        regret[s] = best - collected
    return regret, pulls


def cpu_ns(fn, work):
    t0 = time.process_time()
    out = fn()
    return (time.process_time() - t0) / work * 1e9, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--K", type=int, default=5)
    ap.add_argument("--T", type=int, default=100_000)
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=3, help="timed repeats; the fastest is printed")
    args = ap.parse_args(argv)
    K, T, n, eps, sigma, noise = args.K, args.T, args.seeds, 0.25, 0.01, 0.01
    inst = R.ltf_random(np.random.default_rng(K), K=K, T_ref=T, noise=noise)
    policy = R.CureUCB(eps=eps, sigma=sigma)
    work = n * T * K
    # compile / load every piece once, outside the timed region
    R.simulate(inst, policy, min(T, 1000), 1, noise=noise, progress=False)
    hand(inst, min(T, 1000), 1, eps, sigma, noise, False)
    hand(inst, min(T, 1000), 1, eps, sigma, noise, True)
    step = machine_speed()
    a = b = d = math.inf
    for _ in range(args.repeats):  # the fastest repeat: other processes only ever add time
        ta, run = cpu_ns(lambda: R.simulate(inst, policy, T, n, noise=noise, progress=False), work)
        tb, (regret_b, pulls_b) = cpu_ns(lambda: hand(inst, T, n, eps, sigma, noise, False), work)
        td, (regret_d, _) = cpu_ns(lambda: hand(inst, T, n, eps, sigma, noise, True), work)
        a, b, d = min(a, ta), min(b, tb), min(d, td)
    print(f"machine: {step:.2f} ns per dependent multiply-add step (about {8 / step:.2f} GHz if it takes 8 cycles)")
    print(f"CURE-UCB(eps={eps}, sigma={sigma}), noise {noise}, K = {K}, T = {T:,}, {n} seeds, one thread; "
          f"CPU ns per round and arm, fastest of {args.repeats}")
    print(f"(a) simulate end to end          {a:7.2f}   mean regret {run.mean_regret:.6g}")
    print(f"(b) hand loop, per-pull draws    {b:7.2f}   mean regret {regret_b.mean():.6g} "
          f"(same pulls as simulate: {'yes' if np.array_equal(pulls_b, run.pulls) else 'NO'})")
    print(f"(c) ratio (a) / (b)              {a / b:7.2f}")
    print(f"(d) hand loop, numba's normals   {d:7.2f}   mean regret {regret_d.mean():.6g} (other noise draws)")


if __name__ == "__main__":
    main()
