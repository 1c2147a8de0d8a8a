"""A grid killed from outside: its loky workers end with it, and a rerun completes it bit for bit."""
import os
import pickle
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import psutil

SCRIPT = """
import pickle, sys
from horizonbandits.experiments import instance_set, make_policies, run_grid
insts = instance_set("concave", {n_instances}, seed=3, H={H})
pols = make_policies(["CURE-UCB", "R-ed-UCB"])
df = run_grid(insts, pols, {horizons}, n_seeds={n_seeds}, seed=5, backend="{backend}", n_jobs=2, chunk_size=1,
              cache_dir=sys.argv[1], progress=False)
with open(sys.argv[2], "wb") as fh:
    pickle.dump(df, fh)
"""


def grid_script(tmp_path, backend="loky", n_instances=2, H=2_000, horizons=(500, 2_000), n_seeds=4) -> Path:
    path = tmp_path / "grid.py"
    path.write_text(SCRIPT.format(n_instances=n_instances, H=H, horizons=list(horizons), n_seeds=n_seeds,
                                  backend=backend))
    return path


def start(script, cache, out):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("HB_DASK_ADDRESS", None)
    # SIGINT back to its default in the child (a shell's background job inherits it ignored),
    # so that Python turns it into KeyboardInterrupt as in a terminal.
    return subprocess.Popen([sys.executable, str(script), str(cache), str(out)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def wait_for_workers(proc: subprocess.Popen, n: int, timeout: float = 120) -> list[psutil.Process]:
    parent = psutil.Process(proc.pid)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        workers = [c for c in parent.children(recursive=True) if "resource_tracker" not in " ".join(_cmdline(c))]
        if len(workers) >= n:
            return workers
        if proc.poll() is not None:
            raise AssertionError(f"the grid ended before its workers started: {proc.stderr.read().decode()[-2000:]}")
        time.sleep(0.1)
    raise AssertionError("the grid's workers did not start")


def _cmdline(p):
    try:
        return p.cmdline()
    except psutil.Error:
        return []


def test_loky_workers_end_with_their_killed_parent(tmp_path):
    # A grid long enough that its workers are busy when the parent dies.
    script = grid_script(tmp_path, n_instances=4, H=40_000, horizons=(40_000,), n_seeds=40)
    proc = start(script, tmp_path / "cache", tmp_path / "out.pkl")
    workers = wait_for_workers(proc, 2)
    deadline = time.monotonic() + 120
    while not list((tmp_path / "cache").rglob("*.hbc")) and time.monotonic() < deadline:
        time.sleep(0.1)  # kill only once the workers are running tasks
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    _, alive = psutil.wait_procs(workers, timeout=10)
    names = [_cmdline(p) for p in alive]
    for p in alive:  # clean up before failing, so that a regression does not leave them behind
        p.kill()
    assert not alive, f"{len(alive)} loky workers outlived their parent by 10 s: {names}"


def run_to_completion(script, cache, out) -> pd.DataFrame:
    proc = start(script, cache, out)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err.decode()[-3000:]
    with open(out, "rb") as fh:
        return pickle.load(fh)


def test_grid_killed_at_random_points_resumes_bit_for_bit(tmp_path):
    from horizonbandits.experiments import instance_set, make_policies, run_grid
    script = grid_script(tmp_path)
    reference = run_grid(instance_set("concave", 2, seed=3, H=2_000), make_policies(["CURE-UCB", "R-ed-UCB"]),
                         [500, 2_000], n_seeds=4, seed=5, backend="sequential", cache=False, progress=False)
    cache = tmp_path / "cache"
    rng = random.Random(20261201)
    for sig in [signal.SIGINT, signal.SIGKILL, signal.SIGKILL]:
        proc = start(script, cache, tmp_path / "partial.pkl")
        time.sleep(rng.uniform(1.0, 6.0))  # python start-up and numba loading take about a second
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode != 0 or b"Traceback" not in err
    resumed = run_to_completion(script, cache, tmp_path / "resumed.pkl")
    pd.testing.assert_frame_equal(resumed.drop(columns="wall_time"), reference.drop(columns="wall_time"))
