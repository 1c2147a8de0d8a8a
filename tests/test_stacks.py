"""``kill -USR1``: a process of hb run writes its threads' stacks and goes on (``workbook.stacks``); the test
suite's report on a run that does not end (``conftest.where_stuck``) collects them from each process's log."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from conftest import REPO, alive, catches_sigusr1, where_stuck

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

WAITER = """
import time
from horizonbandits.workbook.stacks import dump_on_signal
dump_on_signal()
def waiting_here():
    print("ready", flush=True)
    time.sleep(60)
waiting_here()
"""


def test_a_process_asked_for_its_stack_writes_it_to_its_log_and_goes_on(tmp_path):
    log = tmp_path / "waiter.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-c", WAITER], stdout=subprocess.PIPE, stderr=err, text=True,
                                cwd=REPO / "lib")
    try:
        assert proc.stdout.readline().strip() == "ready"
        report = where_stuck(proc.pid)
        assert f"pid {proc.pid}" in report and str(log) in report
        assert "waiting_here" in log.read_text()  # the function it was in, from its own stack
        assert "waiting_here" in report
        assert alive(proc.pid)  # a dump does not stop it
    finally:
        proc.kill()
        proc.wait()


def test_the_kernel_pool_writes_its_stack_to_its_log(tmp_path):
    import os

    from horizonbandits.workbook import kernel_pool

    pool = kernel_pool.KernelPool({**os.environ, "PYTHONPATH": str(REPO / "lib")}, tmp_path)
    try:
        deadline = time.monotonic() + 120
        while not catches_sigusr1(pool.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)  # until its handler is installed (before it, the signal would end it)
        assert catches_sigusr1(pool.proc.pid)
        while "in serve" not in _stack_of(pool) and time.monotonic() < deadline:
            time.sleep(0.5)  # asked again until its imports are done and it serves
        assert "in serve" in _stack_of(pool)
        assert pool.proc.poll() is None
    finally:
        assert pool.close() is None  # it ran until told to stop: the signal did not end it


def _stack_of(pool) -> str:
    import os
    import signal

    os.kill(pool.proc.pid, signal.SIGUSR1)
    time.sleep(0.3)
    with open(pool.log_path, errors="replace") as fh:
        return fh.read()


STUCK_CELL = """
import time
from pathlib import Path

def stuck_in_this_cell():
    Path({marker!r}).touch()
    time.sleep(600)

stuck_in_this_cell()
"""


def test_a_run_that_does_not_end_fails_with_where_each_process_is(copy_workbook, tmp_path):
    """What CI prints for a smoke run that never ends: hb run's, the worker's and the pooled kernel's stacks,
    the kernel's showing the cell it is stuck in."""
    import nbformat

    from conftest import descendants, run_hb

    root = copy_workbook(tmp_path / "wb")
    marker = tmp_path / "stuck"  # written by the cell as it starts to wait: no need to wait out a fixed timeout
    for name, code in (("stuck_one", STUCK_CELL.format(marker=str(marker))), ("quick_one", "x = 1")):
        cells = [nbformat.v4.new_code_cell('output_dir = ""', metadata={"tags": ["parameters"]}),
                 nbformat.v4.new_code_cell(code)]
        nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "language": "python",
                                                                            "display_name": "Python 3"}})
        nbformat.write(nb, root / "notebooks" / f"{name}.ipynb")
        (root / "params" / "smoke" / f"{name}.yaml").write_text("{}\n")
    before = set(descendants(os.getpid()))
    with pytest.raises(pytest.fail.Exception) as failed:
        run_hb("--root", root, "--outputs", tmp_path / "out", "run", "--profile", "smoke", "--jobs", "2",
               "--only", "stuck_one", "quick_one", timeout=300, stuck_when=marker.exists)
    report = str(failed.value)
    assert "had not ended after" in report
    assert "stuck_in_this_cell" in report  # the kernel's own stack, from its log
    assert "horizonbandits/workbook/worker.py" in report and "kernel_pool.py" in report
    assert "runner.py" in report  # hb run's stack, on its stderr
    assert set(descendants(os.getpid())) <= before  # and nothing of the run is left
