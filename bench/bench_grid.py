"""Where the time of the paper-scale synthetic experiments goes, and how long they should take (prints figures).

    .venv/bin/python bench/bench_grid.py [--sample 8] [--seeds 2] [--workers 2] [--policies ...] [--check]

1. Times every policy's kernel (CPU time, so other processes on the machine do not inflate it) on the first
   ``--sample`` instances of the LTF and concave sets the notebooks use, at T = 100,000, on the lazy reward
   source run_grid hands them (each kernel draws the rewards of its own pulls, so its time includes them), and
   the making of that source (one key per arm); fits the time per round as a + b K for each policy.
2. From those fits and the K of every instance in the paper sets (100 each), predicts the CPU time of the paper
   profiles of ltf_experiments, concave_experiments, window_ablation and noise_ablation, counting what run_grid
   really runs: horizon-aware policies once per T, the others once to the largest T; one reward source per
   (instance, seed); runs already cached by an earlier notebook (same instance, policy and T) not counted again;
   the blend-weight sweeps included. Then the budget: issue 18's 15 minutes on 2 cores against these kernels
   alone and, from the last paper run's manifest, the other notebooks' times.
3. ``--check`` runs a small grid through run_grid on ``--workers`` processes (no cache) and compares its wall
   time with the same prediction, which measures the parallel efficiency and the per-task overhead.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from horizonbandits.experiments import instance_set, make_policies, run_grid
from horizonbandits.rising import policy_stream_seed, reward_source

PAPER = dict(n_instances=100, n_seeds=40, horizons=list(range(10_000, 100_001, 10_000)), T_ablation=50_000,
             eps_values=[0.5, 0.25, 0.125, 0.0625, 0.03125], sigmas=[0.001, 0.01, 0.05, 0.1],
             noise_policies=["CURE-UCB", "SW-UCB", "R-ed-UCB"],
             # the blend-weight sweeps of the three notebooks with a concave part (params/paper/*.yaml)
             blend_sweep=[0.0, 0.2, 0.5, 0.8], sweep_instances=30, sweep_seeds=10, win_rate_horizons=[20_000, 100_000])
# make paper's target in issue 18: 15 minutes of wall time on this machine's 2 cores.
BUDGET_MIN, CORES = 15.0, 2
MAIN_PARAMS = {"CURE-UCB": {"eps": 0.5}}  # as in the notebooks
ROOT = Path(__file__).resolve().parents[1]


def measure(names, sample: int, seeds: int, T: int):
    """Per (policy, family): fitted seconds per round a + b K (draws included); per family: seconds per arm-round of
    making the reward source, spread over T as the prediction counts it."""
    pols = make_policies(names, MAIN_PARAMS)
    rows, draws = [], []
    for family in ("ltf", "concave"):
        for inst in instance_set(family, sample, seed=0).values():
            for s in range(seeds):
                t0 = time.process_time()
                obs = reward_source(inst, seed=0, s=s)  # what run_task hands every kernel of this seed
                draws.append({"family": family, "K": inst.K, "sec": time.process_time() - t0})
                for name, pol in pols.items():
                    pol.run_kernel(obs, 1_000, np.array([1_000]), np.empty(0, np.int64), 1)  # load the kernel
                    t0 = time.process_time()
                    pol.run_kernel(obs, T, np.array([T]), np.empty(0, np.int64), policy_stream_seed(0, s))
                    rows.append({"policy": name, "family": family, "K": inst.K, "sec_per_round": (time.process_time() - t0) / T})
    runs = pd.DataFrame(rows)
    fits = {}
    for name, g in runs.groupby("policy"):
        b, a = np.polyfit(g["K"], g["sec_per_round"], 1) if g["K"].nunique() > 1 else (0.0, g["sec_per_round"].mean())
        fits[name] = (a, b)
    d = pd.DataFrame(draws)
    draw_per_arm_round = float((d["sec"] / (d["K"] * T)).median())
    return runs, fits, draw_per_arm_round, pols


def run_cost(fits, name: str, K, rounds, seeds: int) -> float:
    """CPU seconds of ``seeds`` runs of ``rounds`` rounds of policy ``name`` on instances with K arms (a + b K per round)."""
    a, b = fits[name]
    return float(np.sum((a + b * K) * rounds)) * seeds


def predict(fits, pols, draw_cost, paper=PAPER, families=("ltf", "concave")):
    """CPU seconds of each paper notebook, by policy, as run_grid schedules the work."""
    Ks = {f: np.array([inst.K for inst in instance_set(f, paper["n_instances"], seed=0).values()]) for f in families}
    seeds = paper["n_seeds"]
    cached = set()  # (family, policy identity, T) already computed by an earlier notebook
    out = []

    def cost(name, K, rounds):
        return run_cost(fits, name, K, rounds, seeds)

    def add(notebook, family, label, name, policy, horizons):
        key_T = tuple(horizons) if not policy.uses_horizon else None
        todo = [T for T in horizons if (family, repr(policy), T) not in cached] if policy.uses_horizon else \
            ([max(horizons)] if (family, repr(policy), key_T) not in cached else [])
        rounds = sum(todo)
        out.append({"notebook": notebook, "family": family, "run": label, "cpu_s": cost(name, Ks[family], rounds)})
        for T in (horizons if policy.uses_horizon else [key_T]):
            cached.add((family, repr(policy), T))

    for family in families:
        nb = f"{family}_experiments"
        for name, pol in pols.items():
            add(nb, family, name, name, pol, paper["horizons"])
        out.append({"notebook": nb, "family": family, "run": "reward tables",
                    "cpu_s": draw_cost * float(np.sum(Ks[family])) * max(paper["horizons"]) * seeds})
    if "CURE-UCB" in pols:
        for family in families:
            for e in paper["eps_values"]:
                pol = make_policies(["CURE-UCB"], {"CURE-UCB": {"eps": e}})["CURE-UCB"]
                add("window_ablation", family, f"CURE-UCB eps={e:g}", "CURE-UCB", pol, [paper["T_ablation"]])
            out.append({"notebook": "window_ablation", "family": family, "run": "reward tables",
                        "cpu_s": draw_cost * float(np.sum(Ks[family])) * paper["T_ablation"] * seeds})
    noise_names = [n for n in paper["noise_policies"] if n in pols]
    for family in families:
        for sigma in paper["sigmas"]:
            for name, pol in make_policies(noise_names, {k: v for k, v in MAIN_PARAMS.items() if k in noise_names},
                                           sigma=sigma).items():
                # A different sigma is a different instance (noise model) unless it equals the main experiments' 0.01.
                fam = family if sigma == 0.01 else f"{family} sigma={sigma}"
                Ks.setdefault(fam, Ks[family])
                add("noise_ablation", fam, f"{name} sigma={sigma:g}", name, pol, [paper["T_ablation"]])
            out.append({"notebook": "noise_ablation", "family": family, "run": "reward tables",
                        "cpu_s": draw_cost * float(np.sum(Ks[family])) * paper["T_ablation"] * seeds})
    out += predict_sweeps(fits, pols, paper)
    return pd.DataFrame(out)


def predict_sweeps(fits, pols, paper=PAPER) -> list[dict]:
    """CPU seconds of the blend-weight sweeps: for each fixed challenger weight w, concave_experiments' ten
    policies at the win-rate horizons, window_ablation's CURE-UCB windows and noise_ablation's three
    policies at every noise level, at T_ablation, on ``sweep_instances`` concave instances x ``sweep_seeds``."""
    out, seeds = [], paper["sweep_seeds"]

    def cost(name, K, rounds):
        return run_cost(fits, name, K, rounds, seeds)

    for w in paper["blend_sweep"]:
        K = np.array([inst.K for inst in instance_set("concave", paper["sweep_instances"], seed=0,
                                                      challenger_blend=(w, w)).values()])
        for name, pol in pols.items():
            horizons = paper["win_rate_horizons"]
            rounds = sum(horizons) if pol.uses_horizon else max(horizons)
            out.append({"notebook": "concave_experiments", "family": "concave sweep", "run": name,
                        "cpu_s": cost(name, K, rounds)})
        cached = set()  # (policy, sigma) runs at T_ablation already made by the window sweep
        if "CURE-UCB" in pols:
            for e in paper["eps_values"]:
                cached.add((repr(make_policies(["CURE-UCB"], {"CURE-UCB": {"eps": e}})["CURE-UCB"]), 0.01))
                out.append({"notebook": "window_ablation", "family": "concave sweep", "run": f"CURE-UCB eps={e:g}",
                            "cpu_s": cost("CURE-UCB", K, paper["T_ablation"])})
        noise_names = [n for n in paper["noise_policies"] if n in pols]
        for sigma in paper["sigmas"]:
            for name, pol in make_policies(noise_names, {k: v for k, v in MAIN_PARAMS.items() if k in noise_names},
                                           sigma=sigma).items():
                if (repr(pol), sigma) in cached:
                    continue
                out.append({"notebook": "noise_ablation", "family": "concave sweep", "run": f"{name} sigma={sigma:g}",
                            "cpu_s": cost(name, K, paper["T_ablation"])})
    return out


def budget(by_nb: pd.Series, times_path) -> None:
    """The 15-minute target against the grids' kernel time alone, and with the other notebooks' times from a cold
    paper run (``params/paper/expected_seconds.json``, or a manifest of a run from an empty cache)."""
    import json

    grids = by_nb.sum() / 60
    print(f"\nBudget: {BUDGET_MIN:g} min on {CORES} cores = {BUDGET_MIN * CORES:g} CPU min. The kernels of these four "
          f"notebooks' grids alone: {grids:.1f} CPU min ({grids / CORES:.1f} min with both cores always busy), "
          f"{grids / (BUDGET_MIN * CORES):.0%} of the budget, before any other notebook, figure or import.")
    path = Path(times_path)
    if not path.exists():
        print(f"  ({path} not found: no cold paper run to compare the other notebooks with)")
        return
    data = json.loads(path.read_text())
    if "notebooks" in data:  # a manifest
        times = {k: v.get("wall_time_s", 0.0) for k, v in data["notebooks"].items()}
    else:
        times = {k: v for k, v in data.items() if not k.startswith("_")}
    others = {k: v for k, v in times.items() if k not in by_nb.index}
    if others:
        rest = sum(others.values()) / 60
        print(f"  The other {len(others)} notebooks took {rest:.1f} min of wall time in the cold paper run of {path} "
              f"(two at a time, each with about one core, so about as many CPU minutes): with them, at least "
              f"{(grids + rest) / CORES:.1f} min on {CORES} cores.")


def check(names, workers: int, fits, draw_cost, pols):
    """Run a small concave grid through run_grid and compare its wall time with the prediction."""
    small = dict(n_instances=6, n_seeds=4, horizons=[20_000, 50_000])
    insts = instance_set("concave", small["n_instances"], seed=0)
    Ks = np.array([i.K for i in insts.values()])
    predicted = 0.0
    for name, pol in pols.items():
        a, b = fits[name]
        rounds = sum(small["horizons"]) if pol.uses_horizon else max(small["horizons"])
        predicted += float(np.sum((a + b * Ks) * rounds)) * small["n_seeds"]
    predicted += draw_cost * float(Ks.sum()) * max(small["horizons"]) * small["n_seeds"]
    t0 = time.perf_counter()
    run_grid(insts, pols, small["horizons"], small["n_seeds"], seed=0, n_jobs=workers, cache=False, progress=False)
    wall = time.perf_counter() - t0
    print(f"\ncheck: 6 concave instances x 4 seeds x {len(pols)} policies, T = 20K and 50K, {workers} workers: "
          f"predicted CPU {predicted:.1f} s -> ideal wall {predicted / workers:.1f} s; measured wall {wall:.1f} s "
          f"(efficiency {predicted / workers / wall:.0%}, including worker start-up and kernel loading)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", type=int, default=8, help="instances per family to time")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--policies", nargs="+", default=None)
    ap.add_argument("--check", action="store_true", help="also run a small grid and compare with the prediction")
    ap.add_argument("--times", default=str(ROOT / "params" / "paper" / "expected_seconds.json"),
                    help="per-notebook wall seconds of a cold paper run (that file, or a manifest.json), for the budget")
    args = ap.parse_args(argv)
    from horizonbandits.rising import POLICIES
    names = args.policies or list(POLICIES)
    T = 100_000
    runs, fits, draw_cost, pols = measure(names, args.sample, args.seeds, T)
    per = runs.groupby(["policy", "family"])["sec_per_round"].mean().unstack("family") * 1e9
    per["K=3 ns/round"] = [fits[p][0] * 1e9 + 3 * fits[p][1] * 1e9 for p in per.index]
    per["K=15 ns/round"] = [fits[p][0] * 1e9 + 15 * fits[p][1] * 1e9 for p in per.index]
    per["horizon-aware"] = [pols[p].uses_horizon for p in per.index]
    print(f"Kernel CPU time per round at T = {T:,} (mean over the sampled instances; fit a + b K):")
    print(per.rename(columns={"ltf": "LTF ns/round", "concave": "concave ns/round"}).round(0).to_string())
    print(f"reward source (keys; the kernels' own times include the draws): {draw_cost * 1e9:.3f} ns per arm and round")
    pred = predict(fits, pols, draw_cost)
    by_nb = pred.groupby("notebook", sort=False)["cpu_s"].sum()
    print("\nPredicted CPU time of the paper profiles (100 instances x 40 seeds; T = 10K..100K; ablations at 50K):")
    for nb, sec in by_nb.items():
        print(f"  {nb:22s} {sec / 60:7.1f} CPU min  -> {sec / 60 / args.workers:6.1f} min on {args.workers} workers")
    total = by_nb.sum()
    print(f"  {'total':22s} {total / 60:7.1f} CPU min  -> {total / 60 / args.workers:6.1f} min on {args.workers} workers")
    top = pred.groupby("run")["cpu_s"].sum().sort_values(ascending=False).head(8)
    print("\nLargest items (CPU min, all notebooks): " + ", ".join(f"{k} {v / 60:.1f}" for k, v in top.items()))
    sweeps = pred[pred["family"] == "concave sweep"].groupby("notebook", sort=False)["cpu_s"].sum()
    print("of which the blend-weight sweeps: " + ", ".join(f"{k} {v / 60:.1f}" for k, v in sweeps.items()) + " CPU min")
    budget(by_nb, args.times)
    if args.check:
        check(names, args.workers, fits, draw_cost, pols)


if __name__ == "__main__":
    main()
