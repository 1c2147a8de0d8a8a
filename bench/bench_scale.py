"""How the paper profile's notebooks grow with T, K and the number of seeds, and what the paper run should cost (prints).

    .venv/bin/python bench/bench_scale.py [--only NAME ...] [--shrink 8]

For each notebook of ``SCALING`` (every notebook whose paper run took more than a minute, except the two
ablations, which ``bench_grid.py`` predicts from kernel timings), the notebook's code cells run in a
subprocess at a small version of its paper parameters (``--shrink`` times fewer seeds and a shorter T, one
process, no result cache), then with the seeds doubled, T doubled and (where the notebook has a K) K
raised. CPU time (user + system of the subprocess and its children) of the cells that run the grids is
the cost (figures, tables and imports are left out: they do not grow with the study). The slopes of log
cost against log seeds, log T and log K are fitted from these pairs, and

    predicted = [c0 + (c_2seeds - c0) (paper seeds / small seeds - 1)] x (paper T / small T)^b_T x instances ratio

(affine in the seeds, because some work is done once per instance whatever the seeds; instances are
independent work, so they scale linearly; K is fixed by the paper's instances, so b_K is
printed for sizing only). Per-task overheads (caching, building the instances) flatten the slopes measured
on small runs, so the prediction is a lower bound when a slope is below 1; the local slopes are the ones a
user needs to size a study a few times larger than the paper's. The measured column is the wall time of the
last paper run in ``outputs/paper/manifest.json``, or "not run".

``--cluster`` instead measures how a heavy grid (ltf_experiments' ten policies on its instances, reduced
to ``--cluster-instances`` instances, 8 seeds, T = 20K and 50K) splits over a dask LocalCluster of 1 and
2 worker processes (one thread each), the way ``hb run --cluster`` / ``HB_DASK_ADDRESS`` sends the grids
of every notebook to a scheduler: wall time per worker count and the speed-up.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _scale_list(values, f):
    return sorted({max(2, int(round(v * f))) for v in values})


# Per notebook: which parameters count seeds, which are horizons (scaled together), which count instances,
# which is K, which cells (index in the notebook's cell list) compute the grids, and what else the small runs
# set (one process, no cache). Only those cells are timed (figures and tables cost about the same at every
# scale and would flatten the slopes); the cells after the last of them are not run.
SCALING = {
    "concave_experiments": dict(seeds=["n_seeds", "sweep_seeds"], T=["horizons", "win_rate_horizons", "H"],
                                instances=["n_instances", "sweep_instances"], cells=[4, 7],
                                fixed=dict(compute={"backend": "sequential", "n_jobs": 1, "cache": False}, n_boot=200)),
    "ltf_experiments": dict(seeds=["n_seeds"], T=["horizons", "win_rate_horizons", "H"], instances=["n_instances"],
                            cells=[4], fixed=dict(compute={"backend": "sequential", "n_jobs": 1, "cache": False}, n_boot=200)),
    "uniform_dominance_ltf": dict(seeds=["noise_seeds"], T=["T_ref"], instances=["n_instances"], cells=[3],
                                  fixed=dict(compute={"backend": "sequential", "n_jobs": 1, "cache": False})),
    "lower_bound_construction": dict(seeds=["n_seeds"], T=["T_values"], K="K", instances=[], cells=[3],
                                     fixed=dict(compute={"n_jobs": 1, "cache": False})),
    "roscoc_concave_commitment": dict(seeds=["n_seeds", "schedule_check_seeds", "sensitivity_seeds", "cross_seeds"],
                                      T=["T_grid", "sensitivity_T", "slope_T_min", "cross_T_grid", "reading_T_grid"],
                                      instances=[], cells=[3, 6, 13, 15], fixed=dict(n_jobs=1)),
    "optimal_policy": dict(seeds=[], T=["T_values"], K="K_values", instances=["n_instances"], cells=[3], fixed={}),
}


def paper_parameters(name: str) -> dict:
    """The notebook's defaults merged with params/paper/NAME.yaml."""
    from horizonbandits.workbook.locate import Workbook
    from horizonbandits.workbook.params import plan_run
    wb = Workbook.locate(ROOT)
    return dict(plan_run(wb, "paper", [name])[0].parameters)


def _get_scalar(value):
    return max(value) if isinstance(value, list) else value


def shrink(name: str, paper: dict, factor: float, seeds_x: int = 1, T_x: int = 1, K_step: int = 0) -> dict:
    """A small version of the paper parameters: seeds and instances / factor (at least 2), T / sqrt(factor);
    then the seeds times ``seeds_x``, T times ``T_x`` (exactly), K plus ``K_step``."""
    spec = SCALING[name]
    p = {k: v for k, v in paper.items() if k != "output_dir"}
    for key in spec["instances"]:
        p[key] = max(2, int(round(paper[key] / factor)))
    for key in spec["seeds"]:
        p[key] = max(2, int(round(paper[key] / factor))) * seeds_x
    for key in spec["T"]:
        v, f = paper[key], 1 / math.sqrt(factor)  # T shrinks by sqrt(factor): the horizons keep their shape
        p[key] = [x * T_x for x in _scale_list(v, f)] if isinstance(v, list) else max(2, int(round(v * f))) * T_x
    if spec.get("K") and K_step:
        k = spec["K"]
        p[k] = [x + K_step for x in paper[k]] if isinstance(paper[k], list) else paper[k] + K_step
    p.update(spec["fixed"])
    return p


def run_cells(name: str, params: dict) -> float:
    """CPU seconds of the notebook's compute cells (``SCALING[name]["cells"]``), run in a fresh subprocess with
    the cells before them."""
    code = f"""
import json, os, resource, sys
import matplotlib; matplotlib.use("Agg")
import IPython.display as d; d.display = lambda *a, **k: None
nb = json.load(open({str(ROOT / 'notebooks' / (name + '.ipynb'))!r}))
ns = {{"__name__": "__main__"}}
params = json.loads({json.dumps(json.dumps(params))})
cpu = lambda: sum(getattr(resource.getrusage(w), a) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
                  for a in ("ru_utime", "ru_stime"))
timed, total = {SCALING[name]["cells"]!r}, 0.0
for i, cell in enumerate(nb["cells"][:max(timed) + 1]):
    if cell["cell_type"] != "code":
        continue
    src = "".join(cell["source"])
    if "parameters" in cell["metadata"].get("tags", []):
        exec(src, ns); ns.update(params); ns["output_dir"] = sys.argv[1]
        continue
    start = cpu()
    exec(compile(src, {name!r}, "exec"), ns)
    if i in timed:
        total += cpu() - start
print("CPU", total)
"""
    with tempfile.TemporaryDirectory() as out:
        env = {**os.environ, "HB_CACHE_DIR": str(Path(out) / "cache")}  # an empty result cache for every run
        proc = subprocess.run([sys.executable, "-c", code, out], capture_output=True, text=True, cwd=ROOT, env=env)
    for line in proc.stdout.splitlines():
        if line.startswith("CPU "):
            return float(line.split()[1])
    raise RuntimeError(f"{name}: the small run failed:\n" + "\n".join(proc.stderr.splitlines()[-6:]))


def slope(c0: float, c1: float, ratio: float) -> float:
    return math.log(max(c1, 1e-3) / max(c0, 1e-3)) / math.log(ratio)


def measured_wall(name: str) -> str:
    try:
        entry = json.loads((ROOT / "outputs" / "paper" / "manifest.json").read_text())["notebooks"][name]
        return f"{entry['wall_time_s']:.0f} s wall" if entry.get("status") == "ok" else "failed"
    except (OSError, ValueError, KeyError, TypeError):
        return "not run"


def study(name: str, factor: float) -> dict:
    """Small runs, slopes and the prediction: affine in the seeds (per-instance work that does not repeat per
    seed stays fixed), a power law in T, linear in the instances."""
    spec, paper = SCALING[name], paper_parameters(name)
    base = shrink(name, paper, factor)
    run_cells(name, base)  # warm-up: numba caches, imports
    c0 = run_cells(name, base)
    row = dict(notebook=name, small_cpu=c0, b_seeds=None, b_T=None, b_K=None)
    predicted = c0
    if spec["seeds"]:
        key = spec["seeds"][0]
        c_s = run_cells(name, shrink(name, paper, factor, seeds_x=2))
        row["b_seeds"] = slope(c0, c_s, 2.0)
        predicted = c0 + (c_s - c0) * (paper[key] / base[key] - 1)
    if spec["T"]:
        key = spec["T"][0]
        row["b_T"] = slope(c0, run_cells(name, shrink(name, paper, factor, T_x=2)), 2.0)
        predicted *= (_get_scalar(paper[key]) / _get_scalar(base[key])) ** row["b_T"]
    if spec.get("K"):
        k = spec["K"]
        k0 = _get_scalar(base[k])
        row["b_K"] = slope(c0, run_cells(name, shrink(name, paper, factor, K_step=1)), (k0 + 1) / k0)
    for key in spec["instances"][:1]:
        predicted *= paper[key] / base[key]
    row.update(predicted_cpu=max(predicted, 0.0), measured=measured_wall(name))
    return row


def cluster_study(n_instances: int, workers=(1, 2)) -> None:
    import time

    from distributed import Client, LocalCluster

    from horizonbandits.experiments import instance_set, make_policies, run_grid
    from horizonbandits.compute.executor import close_dask_clients
    pols = make_policies(["CURE-UCB", "R-ed-UCB", "ET-SWGTS", "TI-UCB", "R-ed-AE", "SW-UCB", "SW-KL-UCB", "SW-TS",
                          "Rexp3", "Ser4"], {"CURE-UCB": {"eps": 0.5}}, sigma=0.01)
    insts = instance_set("ltf", n_instances, seed=0)
    run_grid(dict(list(insts.items())[:1]), pols, [2000], 1, backend="sequential", cache=False, progress=False)  # compile
    walls = {}
    for n in workers:
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
                Client(cluster):
            t0 = time.perf_counter()
            run_grid(insts, pols, [20_000, 50_000], 8, backend="dask", address=cluster.scheduler_address, cache=False,
                     progress=False)
            walls[n] = time.perf_counter() - t0
            close_dask_clients()  # the grid keeps a client per address; this cluster is about to close
        print(f"  dask LocalCluster, {n} worker(s): {walls[n]:6.1f} s wall", flush=True)
    if len(walls) > 1:
        print(f"  speed-up with {max(walls)} workers: {walls[min(walls)] / walls[max(walls)]:.2f} "
              f"(ideal {max(walls) / min(walls):.0f}; the rest is the scheduler, the tasks' transfer and other load)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", default=list(SCALING), choices=list(SCALING), metavar="NAME")
    ap.add_argument("--shrink", type=float, default=8.0,
                    help="small runs: seeds and instances / SHRINK, T / sqrt(SHRINK) (default 8)")
    ap.add_argument("--cluster", action="store_true", help="measure a grid on a dask LocalCluster of 1 and 2 workers")
    ap.add_argument("--cluster-instances", type=int, default=12)
    args = ap.parse_args(argv)
    if args.cluster:
        print(f"ltf grid, {args.cluster_instances} instances x 10 policies x 8 seeds, T = 20K and 50K, no cache:")
        cluster_study(args.cluster_instances)
        return
    print("notebook                     small CPU s   slope seeds   slope T   slope K   predicted paper CPU   measured")
    total = 0.0
    for name in args.only:
        t0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        row = study(name, args.shrink)
        total += row["predicted_cpu"]
        t1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        b = {k: "-" if row[k] is None else f"{row[k]:.2f}" for k in ("b_seeds", "b_T", "b_K")}
        print(f"{name:28s} {row['small_cpu']:10.1f} {b['b_seeds']:>13s} {b['b_T']:>9s} {b['b_K']:>9s} "
              f"{row['predicted_cpu']:16.0f} s   {row['measured']}   (bench {t1.ru_utime - t0.ru_utime:.0f} CPU s)",
              flush=True)
    print(f"\npredicted total of these notebooks: {total:.0f} CPU s; on 2 busy cores at least {total / 2 / 60:.1f} min wall")


if __name__ == "__main__":
    main()
