"""The timing markers of ``horizonbandits.timing`` (bench/bench_fixed_cost.py): nothing unless $HB_TIMINGS is set."""
from __future__ import annotations

import subprocess
import sys

from horizonbandits._numba_cache import PACKAGE_DIR

LIB = str(PACKAGE_DIR.parent)

OFF = """
import contextlib, os
from horizonbandits import timing, plotting
from horizonbandits.compute import tasks
from horizonbandits.experiments import grid
assert not timing.enabled()
assert timing.part("x") is timing.part("y") and isinstance(timing.part("x"), contextlib.nullcontext)
f = lambda: 1
assert timing.charged("compute")(f) is f
# the marked functions are the functions themselves, not wrappers
assert not hasattr(plotting.save_figure, "__wrapped__") and not hasattr(tasks.run_cached, "__wrapped__")
assert not hasattr(grid.run_grid, "__wrapped__")
timing.switch("a"); timing.flush()
print("ok")
"""

ON = """
import time
from horizonbandits import timing
timing.begin("first")

def spin(s):
    t = time.process_time()
    while time.process_time() - t < s:
        pass

spin(0.05)
timing.switch("base")
spin(0.05)
with timing.part("outer"):
    spin(0.05)
    with timing.part("inner"):
        spin(0.1)
timing.flush()
"""


def test_markers_cost_nothing_and_write_nothing_when_the_variable_is_unset(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    env = {"PATH": "", "HOME": str(tmp_path / "home"), "PYTHONPATH": LIB, "MPLBACKEND": "Agg"}
    out = subprocess.run([sys.executable, "-c", OFF], env=env, cwd=run, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    assert list(run.iterdir()) == []


def test_each_part_gets_its_own_time_nested_blocks_excluded(tmp_path):
    from horizonbandits import timing

    path = tmp_path / "t.txt"
    env = {"PATH": "", "HOME": str(tmp_path), "PYTHONPATH": LIB, timing.ENV: str(path)}
    subprocess.run([sys.executable, "-c", ON], env=env, check=True)
    (pid, parts), = timing.read(path).items()
    assert set(parts) == {"first", "base", "outer", "inner"}
    assert parts["inner"] >= 0.1 and 0.05 <= parts["outer"] < 0.1   # the inner block is not the outer's
    assert parts["base"] >= 0.05 and parts["first"] >= 0.05          # the first part holds the interpreter's start
