"""Which rows of lower_bound_construction's paper-profile grid need its 1,500 runs: the grid (5 schedules x 7 T, the
lower-bound families, six policies) with the rows of some policies judged on their first k runs (the same runs), the
others on all of them, and the notebook's claims on each: Theorem 5.3's level test per (policy, schedule) and the
abstract's adaptive-reserve test per (rule, schedule).

    PYTHONPATH=lib HB_CACHE_DIR=/tmp/cache python bench/lower_bound_seeds.py [--cut adaptive|baselines] [--seeds ...]

``--cut adaptive``: AdaptiveRAEC's two rules on k runs (ours: the paper defines no adaptive policy); ``--cut
baselines``: UCBCommit and UniformCommit on k runs (ours: section 7.1 runs RAEC only). Each policy's CPU is printed
as its grid is computed (once, on one core; about 160 CPU-s for all six from an empty cache, 2026-12-04), then one
line per (k, claim part): the verdict, the ratio with its interval, and the largest move of an interval end from
the full grid's, in points (hundredths of the ratio). The claims' rules are the notebook's (cells 7 and 9).
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

import pandas as pd  # noqa: E402

from horizonbandits.claims import rules  # noqa: E402
from horizonbandits.commit import RAEC, AdaptiveRAEC, UCBCommit, UniformCommit, instances, summary_table, theory  # noqa: E402
from horizonbandits.experiments import run_grid  # noqa: E402
from horizonbandits.stats import ratio, summary_estimate, worst_rows  # noqa: E402
from horizonbandits.workbook import Workbook, parameters_of, profile_parameters, read_notebook  # noqa: E402

NAME = "lower_bound_construction"
LABELS = ["schedule", "T", "side", "c", "member"]


def paper_parameters() -> dict:
    wb = Workbook.locate(ROOT)
    path = wb.notebooks_dir / f"{NAME}.ipynb"
    return {**parameters_of(read_notebook(path), str(path)), **profile_parameters(NAME, "paper", ROOT)}


def build_cases(p: dict) -> list[dict]:
    """The notebook's cases (cell 3): each c kept only where valid at every T of the grid."""
    K, T_values = p["K"], p["T_values"]

    def g_scale(sch, T):
        N = instances.experiment_length(sch, T)
        return max(math.sqrt(K / N), (K / (T - N)) ** (1 / 3))

    cases = []
    for sch in p["schedules"]:
        commit_c = [c for c in p["c_values"] if all(c * g_scale(sch, T) <= 0.45 for T in T_values)]
        exper_c = [c for c in p["c_values"]
                   if all(c * math.sqrt(K / instances.experiment_length(sch, T)) <= 0.45 for T in T_values)]
        for T in T_values:
            N = instances.experiment_length(sch, T)
            for c in commit_c:
                for q in instances.commitment_side_family(K, N, T, c=c, delta_f=p["delta_f"]):
                    cases.append(dict(schedule=sch, T=T, side="commitment", c=c, member=q.best_g + 1, problem=q))
            for c in exper_c:
                for q in instances.experiment_side_family(K, N, T, c=c):
                    cases.append(dict(schedule=sch, T=T, side="experiment", c=c, member=q.best_f + 1, problem=q))
    return cases


def policies(case: dict, rules_: list[str]) -> dict:
    return ({"RAEC": RAEC(), "RAEC (section 7.1 settings)": instances.section71_policy(case["schedule"]),
             "UCBCommit": UCBCommit(), "UniformCommit": UniformCommit()}
            | {f"AdaptiveRAEC ({rule})": AdaptiveRAEC(rule=rule) for rule in rules_})


def level_parts(worst, p: dict, names: list[str]) -> dict:
    """Theorem 5.3 (cell 7): per (policy, schedule), (worst / rate at the largest T) / (the same at the smallest T)."""
    out = {}
    for sch in p["schedules"]:
        cur = worst[worst.schedule == sch]
        for name in names:
            sub = cur[cur.policy == name].sort_values("T")
            first, last = sub.iloc[0], sub.iloc[-1]
            est = ratio(summary_estimate(last, "runs per point").scaled(1 / last.rate),
                        summary_estimate(first, "runs per point").scaled(1 / first.rate))
            out[f"Thm 5.3 {name}, {sch}"] = (rules.compare(est, p["level_factor"], ">").verdict, est)
    return out


def adaptive_parts(worst, p: dict, by_T: dict) -> dict:
    """The abstract's implication (cell 9): per (rule, schedule), the adaptive / RAEC worst-case ratio at the last
    deciding T over the first (horizons where no Stage-I epoch ends are left out)."""
    out = {}
    for rule in p["adaptive_rules"]:
        aname = f"AdaptiveRAEC ({rule})"
        for sch in p["schedules"]:
            cur = worst[worst.schedule == sch]
            at = {T: ratio(summary_estimate(cur[(cur.policy == aname) & (cur["T"] == T)].iloc[0], "runs per point"),
                           summary_estimate(cur[(cur.policy == "RAEC") & (cur["T"] == T)].iloc[0], "runs per point"))
                  for T in p["T_values"]}
            deciding = [T for T in p["T_values"] if not RAEC().is_uniform(by_T[(sch, T)])]
            if len(deciding) >= 2:
                est = ratio(at[max(deciding)], at[min(deciding)])
                out[f"adaptive {rule}, {sch}"] = (rules.compare(est, p["level_factor"], ">").verdict, est)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cut", choices=["adaptive", "baselines"], default="adaptive")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1000, 750, 500, 300])
    args = parser.parse_args()
    p = paper_parameters()
    n = p["n_seeds"]
    cases = build_cases(p)
    by_T = {(c["schedule"], c["T"]): c["problem"] for c in cases}
    names = list(policies(cases[0], p["adaptive_rules"]))
    cut = ([x for x in names if x.startswith("AdaptiveRAEC")] if args.cut == "adaptive"
           else ["UCBCommit", "UniformCommit"])
    tables = []
    for name in names:
        t0 = time.process_time()
        tables.append(run_grid(cases, lambda case, name=name: {name: policies(case, p["adaptive_rules"])[name]},
                               n_seeds=n, seed=p["seed"], backend="sequential", n_jobs=1, progress=False))
        print(f"{name}: {len(cases)} cases x {n} runs, {time.process_time() - t0:.1f} CPU-s (about 0 when cached)",
              flush=True)

    def judge(k: int) -> dict:
        rows = [summary_table(t if t.policy.iloc[0] not in cut or k >= n else t[t.seed_index < k], labels=LABELS)
                for t in tables]
        runs = pd.concat(rows, ignore_index=True)
        runs["rate"] = [theory.minimax_lower_bound(p["K"], N, T) for N, T in zip(runs.N, runs["T"])]
        worst = worst_rows(runs, ["schedule", "T", "policy"])
        parts = level_parts(worst, p, [x for x in names if not x.startswith("AdaptiveRAEC")])
        return parts | adaptive_parts(worst, p, by_T)

    full = judge(n)
    for k in [n] + sorted((k for k in args.seeds if k < n), reverse=True):
        res = full if k == n else judge(k)
        print(f"\n== {', '.join(cut)} on the first {k} of {n} runs")
        for key, (verdict, est) in res.items():
            if k < n and not (key.startswith("adaptive") if args.cut == "adaptive" else
                              any(c in key for c in cut)):
                continue
            ref = full[key][1]
            move = 100 * max(abs(est.low - ref.low), abs(est.high - ref.high))
            print(f"  {key:45s} {verdict:15s} {est.value:.3f} [{est.low:.3f}, {est.high:.3f}]"
                  + ("" if k == n else f"  ({'same' if verdict == full[key][0] else 'CHANGED'}; move {move:.1f} pts)"))


if __name__ == "__main__":
    main()
