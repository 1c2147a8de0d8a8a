"""Our baselines beside implementations nobody here wrote, on the same rested reward tables: how often they
choose the same arm as our kernel (as published, and with the conventions aligned), and their cost per
round and arm against our kernel and ``simulate``, timed interleaved (prints figures, asserts nothing).

    .venv/bin/python bench/bench_peers.py [--T 20000] [--seeds 3] [--dist-seeds 40] [--metelli-src DIR]

Peers, each used only when it imports (none of their code is in this repository):

- pymab (PyPI, in the dev extras): the plain-Python reference policies, driven by ``tests/peers/pymab_adapter``
  (where every convention that differs is listed and aligned), and its Rust policies stepped from Python
  (``pymab.policies``, as published: they take a seed, not our draws, so they are only timed and
  compared as published);
- SMPyBandits 0.9.7 (PyPI, not in the lock: ``pip install smpybandits==0.9.7`` into the venv or a folder on
  PYTHONPATH; it imports ``scipy.special.btdtri``, which scipy no longer has, so this script aliases it to
  ``betaincinv``, the same function): SWUCB and Exp3, aligned below;
- the official code of Metelli et al. (2022), github.com/albertometelli/stochastic-rising-bandits at commit
  2b49e82, given as ``--metelli-src`` (its ``src`` folder): ``SW_UCB_eff`` and ``R_ed_UCB`` as published.
  Their departures from the papers are listed in the docstrings of our ``SWUCB`` and ``RedUCB``; aligning
  them means patching that code, which this script does not do.

Agreement is the share of rounds (over all seeds) in which the peer pulls the arm our kernel pulls; for a
randomised policy run on its own draws it is chance, so the paired regret difference (peer minus ours,
mean and standard error over seeds) is printed instead. Costs are CPU time (``process_time``) per round
and arm: a peer's whole run, and for ours the median of 5 runs of the kernel on the lazy rewards and of
``simulate`` for one seed, taken between the peer's runs so that both see the same machine state.
"""
from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
from pathlib import Path

import numpy as np

import horizonbandits.rising as R
from horizonbandits.rising.observations import policy_stream_seed, reward_source
from horizonbandits.rising.oracle import collected_value, optimal_value
from horizonbandits.rising.policies.red_ucb import RedUCB
from horizonbandits.rising.policies.rexp3 import Rexp3
from horizonbandits.rising.policies.sw_kl_ucb import SWKLUCB
from horizonbandits.rising.policies.sw_ts import SWTS
from horizonbandits.rising.policies.sw_ucb import SWUCB

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "peers"))

SEED = 0
REPEATS = 5


def cpu_ns(fn, *args):
    t0 = time.process_time()
    out = fn(*args)
    return out, (time.process_time() - t0) * 1e9


class Ours:
    """Our side of one (policy, noise) comparison: arms, tables and the interleaved timings."""

    def __init__(self, inst, policy, T, noise):
        self.inst, self.policy, self.T, self.noise = inst, policy, T, noise
        sim = R.simulate(inst, policy, T, n_seeds=1, seed=SEED, noise=noise)  # compile / load the kernel
        del sim
        self.kernel_ns, self.simulate_ns = [], []

    def seed(self, s):
        arms = R.simulate(self.inst, self.policy, self.T, n_seeds=s + 1, seed=SEED, noise=self.noise,
                          return_arms=True).arms[s]
        X = R.draw_observations(self.inst, self.T, seed=SEED, s=s, noise=self.noise).X
        return arms, X, policy_stream_seed(SEED, s)

    def time_once(self, s):
        cps = np.array([self.T], dtype=np.int64)
        none = np.empty(0, dtype=np.int64)
        kern, sim = [], []
        for _ in range(REPEATS):
            src = reward_source(self.inst, SEED, s, self.noise)
            _, ns = cpu_ns(self.policy.run_kernel, src, self.T, cps, none, policy_stream_seed(SEED, s))
            kern.append(ns)
            _, ns = cpu_ns(R.simulate, self.inst, self.policy, self.T, 1, SEED + s, self.noise)
            sim.append(ns)
        self.kernel_ns.append(np.median(kern))
        self.simulate_ns.append(np.median(sim))

    def per_round_arm(self, values):
        return float(np.mean(values)) / (self.T * self.inst.K)

    def regret(self, arms):
        pulls = np.bincount(arms, minlength=self.inst.K)[None, :]
        return float(optimal_value(self.inst, self.T) - collected_value(self.inst, pulls)[0])


def run_rows(ours: Ours, seeds, runs):
    """``runs``: {label: fn(X, stream_seed, s) -> arms}. Times every run, interleaved with ours; returns
    {label: (agreement, regret difference mean, its se, ns per round and arm)}."""
    same = {k: [] for k in runs}
    diff = {k: [] for k in runs}
    cost = {k: [] for k in runs}
    for s in seeds:
        arms, X, stream = ours.seed(s)
        ours.time_once(s)
        for label, fn in runs.items():
            theirs, ns = cpu_ns(fn, X, stream, s)
            same[label].append(np.asarray(theirs) == arms)
            diff[label].append(ours.regret(np.asarray(theirs)) - ours.regret(arms))
            cost[label].append(ns)
            ours.time_once(s)
    out = {}
    for label in runs:
        d = np.array(diff[label])
        se = float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else float("nan")
        out[label] = (float(np.concatenate(same[label]).mean()), float(d.mean()), se, ours.per_round_arm(cost[label]))
    return out


def print_rows(title, ours: Ours, rows):
    k = ours.per_round_arm(ours.kernel_ns)
    sim = ours.per_round_arm(ours.simulate_ns)
    print(f"\n{title}: ours kernel {k:.1f} ns, simulate {sim:.1f} ns per round and arm")
    print(f"  {'peer run':62s} {'same arm':>9s} {'regret diff (se)':>18s} {'ns/round/arm':>13s} "
          f"{'x kernel':>9s} {'x simulate':>10s}")
    for label, (agree, d, se, ns) in rows.items():
        print(f"  {label:62s} {100 * agree:8.1f}% {d:+9.1f} ({se:5.1f}) {ns:13.0f} {ns / k:9.0f} {ns / sim:10.0f}")


# --- pymab ---------------------------------------------------------------------------------------

def pymab_section(inst, T, seeds, dist_seeds):
    try:
        import pymab
        import pymab_adapter as A
        from pymab.policies import EXP3Policy, SlidingWindowBernoulliThompsonSamplingPolicy, SlidingWindowUCBPolicy
    except ImportError as err:
        print(f"\npymab: skipped ({err})")
        return
    native = pymab._native.native_available()
    print(f"\npymab {pymab.__version__} (Rust extension {'loaded' if native else 'absent'})")
    K = inst.K

    p = SWUCB(window_rule="horizon")  # the window the recorded figures were measured with
    tau = p.window(T)
    ours = Ours(inst, p, T, 0.1)
    runs = {
        "SW-UCB Python reference, as published": lambda X, st, s: A.pymab_sw_ucb(
            X, T, p.xi, tau, p.B, align_log=False, align_ties=False, align_start=False, seed=s),
        "SW-UCB Python reference, aligned": lambda X, st, s: A.pymab_sw_ucb(X, T, p.xi, tau, p.B),
    }
    if native:
        runs["SW-UCB Rust, stepped from Python, as published"] = lambda X, st, s: A.serve(
            SlidingWindowUCBPolicy(n_arms=K, c=p.xi, reward_scale=p.B, window_size=tau), X, T, np.random.default_rng(s))
    print_rows(f"SW-UCB (tau = {tau}, xi = {p.xi}), Gaussian noise 0.1", ours, run_rows(ours, seeds, runs))

    p = Rexp3()
    gamma, batch = p.exploration(K), p.batch_size(K)
    ours = Ours(inst, p, T, 0.1)
    runs = {
        "EXP3 Python reference, no restarts, numpy draws (published)": lambda X, st, s: A.pymab_rexp3(
            X, T, gamma, batch, st, align_restarts=False, align_draws=False, seed=s),
        "EXP3 Python reference, restarted every Delta, our uniforms": lambda X, st, s: A.pymab_rexp3(X, T, gamma, batch, st),
    }
    if native:
        runs["EXP3 Rust, stepped from Python, restarted, numpy seeds"] = lambda X, st, s: A.serve(
            EXP3Policy(n_arms=K, gamma=gamma), X, T, np.random.default_rng(s), reward=A.clip01, restart_every=batch)
    print_rows(f"Rexp3 (Delta = {batch}, gamma = {gamma:.4f}), Gaussian noise 0.1", ours, run_rows(ours, seeds, runs))

    p = SWTS(window_rule="horizon")  # the window the recorded figures were measured with
    tau = p.window(T)
    ours = Ours(inst, p, T, "bernoulli")
    runs = {
        "SW-TS Python reference, numpy Beta draws (published)": lambda X, st, s: A.pymab_sw_ts(
            X, T, tau, seed=1000 + s, binary=True),
        "SW-TS Python reference, our Beta draws injected": lambda X, st, s: A.pymab_sw_ts(X, T, tau, stream_seed=st),
    }
    print_rows(f"SW-TS (tau = {tau}), Bernoulli rewards", ours, run_rows(ours, seeds, runs))
    if dist_seeds:
        runs = {"SW-TS Python reference, numpy Beta draws (published)": runs[
            "SW-TS Python reference, numpy Beta draws (published)"]}
        if native:
            runs["SW-TS Rust, stepped from Python (published)"] = lambda X, st, s: A.serve(
                SlidingWindowBernoulliThompsonSamplingPolicy(n_arms=K, window_size=tau), X, T, np.random.default_rng(1000 + s))
        print_rows(f"SW-TS in distribution, {dist_seeds} seeds", ours, run_rows(ours, range(dist_seeds), runs))


# --- SMPyBandits ---------------------------------------------------------------------------------

def smpybandits_section(inst, T, seeds):
    try:
        import scipy.special
        if not hasattr(scipy.special, "btdtri"):  # removed from scipy; SMPyBandits imports it by that name
            scipy.special.btdtri = scipy.special.betaincinv
        import contextlib
        import io
        with contextlib.redirect_stdout(io.StringIO()):  # its import prints a warning about numba
            import SMPyBandits.Policies.SlidingWindowUCB as smpy_sliding
            from SMPyBandits.Policies import SWUCB as SmpySWUCB
            from SMPyBandits.Policies import Exp3 as SmpyExp3
            from SMPyBandits.Policies import SWklUCB as SmpySWklUCB
        from importlib.metadata import version
        import pymab_adapter as A
    except ImportError as err:
        print(f"\nSMPyBandits: skipped ({err})")
        return
    print(f"\nSMPyBandits {version('SMPyBandits')}")

    class LowestTieSWUCB(SmpySWUCB):
        """First maximal index (SMPyBandits draws among equal maxima, first visits included, at random)."""

        def choice(self):
            self.computeAllIndex()
            return int(np.argmax(self.index))

    class LogOfThisRoundSWUCB(LowestTieSWUCB):
        """log(min(t, tau)) at round t: SMPyBandits' t counts the rounds already played."""

        def computeIndex(self, arm):
            self.t += 1
            try:
                return super().computeIndex(arm)
            finally:
                self.t -= 1

    class LowestTieSWklUCB(SmpySWklUCB):
        def choice(self):
            self.computeAllIndex()
            return int(np.argmax(self.index))

    def fine_bisection(fn):
        """Run with SMPyBandits' KL-UCB bisection tolerance (a module constant, 1e-4) set to 1e-12."""
        saved = smpy_sliding.tolerance
        smpy_sliding.tolerance = 1e-12
        try:
            return fn()
        finally:
            smpy_sliding.tolerance = saved

    class DrawFromTheStartExp3(SmpyExp3):
        """Draw from p from the first round, by inversion with our uniform (SMPyBandits plays a random
        permutation of the arms first, then numpy's choice)."""

        def __init__(self, K, gamma, stream_seed):
            super().__init__(K, gamma=gamma, unbiased=True)
            self.uniforms = A.OurStream(stream_seed)

        def choice(self):
            return self.uniforms.choice(self.nbArms, p=self.trusts)

    def play(policy, X, restart_every=None, clip=False):
        policy.startGame()
        pulls = np.zeros(X.shape[0], dtype=np.int64)
        arms = np.empty(T, dtype=np.int64)
        for t in range(T):
            if restart_every and t % restart_every == 0:
                policy.startGame()
            arm = int(policy.choice())
            pulls[arm] += 1
            x = float(X[arm, pulls[arm]])
            policy.getReward(arm, A.clip01(x) if clip else x)
            arms[t] = arm
        return arms

    def seeded(s, fn):
        np.random.seed(s)  # SMPyBandits draws from numpy's global generator
        return fn()

    K = inst.K
    p = SWUCB(window_rule="horizon")  # the window the recorded figures were measured with
    tau = p.window(T)
    ours = Ours(inst, p, T, 0.1)
    runs = {
        "SWUCB, as published": lambda X, st, s: seeded(s, lambda: play(SmpySWUCB(K, tau=tau, alpha=p.xi), X)),
        "SWUCB, lowest-index ties": lambda X, st, s: play(LowestTieSWUCB(K, tau=tau, alpha=p.xi), X),
        "SWUCB, lowest-index ties and log(min(t, tau))": lambda X, st, s: play(LogOfThisRoundSWUCB(K, tau=tau, alpha=p.xi), X),
    }
    print_rows(f"SW-UCB (tau = {tau}, xi = {p.xi}), Gaussian noise 0.1", ours, run_rows(ours, seeds, runs))

    p = Rexp3()
    gamma, batch = p.exploration(K), p.batch_size(K)
    ours = Ours(inst, p, T, 0.1)
    runs = {
        "Exp3, as published (no restarts, numpy draws)": lambda X, st, s: seeded(
            s, lambda: play(SmpyExp3(K, gamma=gamma, unbiased=True), X)),
        "Exp3 restarted every Delta, clipped, our uniforms from round 1": lambda X, st, s: play(
            DrawFromTheStartExp3(K, gamma, st), X, restart_every=batch, clip=True),
    }
    print_rows(f"Rexp3 (Delta = {batch}, gamma = {gamma:.4f}), Gaussian noise 0.1", ours, run_rows(ours, seeds, runs))

    # SMPyBandits' level is log(min(t - 1, tau)) / N, ours log s + c log log s with s = min(t - 1, tau): the
    # same with c = 0. On 0/1 rewards clipping each reward or the average (SMPyBandits) is the same.
    p = SWKLUCB()
    for ours_policy, label in ((p, f"ours as published (c = {p.c})"), (SWKLUCB(c=0.0, tau=p.tau), "ours with c = 0")):
        ours = Ours(inst, ours_policy, T, "bernoulli")
        runs = {
            "SWklUCB, as published": lambda X, st, s: seeded(s, lambda: play(SmpySWklUCB(K, tau=p.tau), X)),
            "SWklUCB, lowest-index ties, bisection to 1e-12": lambda X, st, s: fine_bisection(
                lambda: play(LowestTieSWklUCB(K, tau=p.tau), X)),
        }
        print_rows(f"SW-KL-UCB (tau = {p.tau}), Bernoulli rewards, {label}", ours, run_rows(ours, seeds, runs))


# --- the official code of Metelli et al. ------------------------------------------------------------

def metelli_section(inst, T, seeds, src):
    if src is None:
        print("\nofficial code of Metelli et al.: skipped (no --metelli-src)")
        return
    sys.path.insert(0, str(src))
    try:
        from algorithms.R_ed_UCB import R_ed_UCB
        from algorithms.SW_UCB_eff import SW_UCB_eff
    except ImportError as err:
        print(f"\nofficial code of Metelli et al.: skipped ({err})")
        return
    print(f"\nofficial code of Metelli et al. (from {src})")

    def play(agent, X, s):
        np.random.seed(s)  # it draws ties (and SW-UCB's Bernoulli conversion) from numpy's global generator
        agent.set_horizon(T)
        agent.set_arms_number(X.shape[0])
        pulls = np.zeros(X.shape[0], dtype=np.int64)
        arms = np.empty(T, dtype=np.int64)
        for t in range(T):
            arm = int(agent.select_arm())
            pulls[arm] += 1
            agent.new_observation(arm, float(X[arm, pulls[arm]]))
            arms[t] = arm
        return arms

    p = SWUCB(window_rule="horizon")  # the window the recorded figures were measured with
    ours = Ours(inst, p, T, "bernoulli")  # 0/1 rewards: its Bernoulli conversion of each reward changes nothing
    rows = run_rows(ours, seeds, {"SW_UCB_eff, as published": lambda X, st, s: play(SW_UCB_eff(), X, s)})
    print_rows(f"SW-UCB (tau = {p.window(T)}, xi = {p.xi}), Bernoulli rewards", ours, rows)
    p = RedUCB(eps=0.25, sigma=0.1)
    ours = Ours(inst, p, T, 0.1)
    rows = run_rows(ours, seeds, {"R_ed_UCB, as published": lambda X, st, s: play(R_ed_UCB(), X, s)})
    print_rows("R-ed-UCB (eps = 1/4, sigma = 0.1), Gaussian noise 0.1", ours, rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=int, default=20_000)
    ap.add_argument("--K", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--dist-seeds", type=int, default=40, help="seeds of SW-TS's comparison in distribution (0: none)")
    ap.add_argument("--metelli-src", type=Path, default=os.environ.get("HB_METELLI_SRC"),
                    help="the src folder of a checkout of albertometelli/stochastic-rising-bandits (or HB_METELLI_SRC)")
    ap.add_argument("--only", nargs="*", choices=["pymab", "smpybandits", "metelli"], default=None)
    args = ap.parse_args(argv)
    inst = R.ltf_random(np.random.default_rng(5), K=args.K, T_ref=args.T, noise=0.1)
    seeds = range(args.seeds)
    print(f"{datetime.datetime.now():%Y-%m-%d %H:%M}, load average {os.getloadavg()[0]:.2f}; K = {args.K} "
          f"linear-then-flat instance (ltf_random, rng 5), T = {args.T}, {args.seeds} seeds")
    only = set(args.only or ["pymab", "smpybandits", "metelli"])
    if "pymab" in only:
        pymab_section(inst, args.T, seeds, args.dist_seeds)
    if "smpybandits" in only:
        smpybandits_section(inst, args.T, seeds)
    if "metelli" in only:
        metelli_section(inst, args.T, seeds, args.metelli_src)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
