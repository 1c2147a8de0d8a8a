"""Progress bars: the widget bar only in a kernel a Jupyter server started, the text bar elsewhere, so
notebooks executed by papermill hold plain text and no widget state."""
import json

import nbformat
import pytest
from tqdm import notebook
from tqdm.std import tqdm as text_bar

from horizonbandits import progress
from horizonbandits import results as results_module  # rising and portfolio simulate loop over seeds in results.run_seeds

CODE = """\
import horizonbandits.rising as R
from horizonbandits.experiments import make_policies, run_grid
inst = R.figure1()
R.simulate(inst, R.CureUCB(), T=200, n_seeds=2, seed=0, progress=True)
run_grid({"fig1": inst}, make_policies(["CURE-UCB"]), [100, 200], n_seeds=2, seed=0, n_jobs=1, progress=True,
         cache=False)
print("finished")
"""


def test_choice_of_bar():
    assert progress.choose_bar({}, in_kernel=False) is text_bar
    assert progress.choose_bar({}, in_kernel=True) is text_bar  # papermill, nbconvert: no Jupyter server
    assert progress.choose_bar({"JPY_SESSION_NAME": "/w/nb.ipynb"}, in_kernel=False) is text_bar
    assert notebook.IProgress is not None, "ipywidgets is a dependency: tqdm's notebook bar must be usable"
    assert progress.choose_bar({"JPY_SESSION_NAME": "/w/nb.ipynb"}, in_kernel=True) is notebook.tqdm
    # the loops of the workbook use the chosen bar (the text bar here, in pytest)
    assert progress.chosen_bar() is text_bar and results_module.tqdm is progress.tqdm  # every simulate's seed loop
    with progress.tqdm(total=1, disable=True) as bar:
        assert type(bar) is text_bar


def _execute(tmp_path, monkeypatch, session_name):
    import papermill
    if session_name:
        monkeypatch.setenv("JPY_SESSION_NAME", session_name)
    else:
        monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(CODE)]
    src, out = tmp_path / "bars.ipynb", tmp_path / f"bars_{bool(session_name)}.ipynb"
    nbformat.write(nb, src)
    papermill.execute_notebook(str(src), str(out), kernel_name="python3", progress_bar=False, cwd=str(tmp_path))
    return nbformat.read(out, as_version=4)


@pytest.mark.timeout(300)
def test_papermill_output_holds_text_bars_and_no_widgets(tmp_path, monkeypatch):
    plain = _execute(tmp_path, monkeypatch, None)
    outputs = plain.cells[0].outputs
    assert "widgets" not in plain.metadata
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
    stderr = "".join(o.text for o in outputs if o.output_type == "stream" and o.name == "stderr")
    assert "run_grid: 1/1 tasks" in stderr and "100%|" in stderr  # the text bar, finished
    assert "finished" in "".join(o.get("text", "") for o in outputs)
    # the same notebook in a kernel that looks started by JupyterLab draws widget bars: the rule can fail
    lab = _execute(tmp_path, monkeypatch, str(tmp_path / "bars.ipynb"))
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in lab.cells[0].outputs)
    assert "application/vnd.jupyter.widget-state+json" in json.dumps(dict(lab.metadata))


def test_notebooks_take_their_bar_from_horizonbandits():
    """A notebook that imports tqdm.auto itself would draw widget bars under papermill too."""
    from pathlib import Path
    offenders = []
    for path in sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and any(line.strip().startswith(("from tqdm", "import tqdm"))
                                                for line in cell.source.splitlines()):
                offenders.append(path.stem)
    assert offenders == [], f"use `from horizonbandits.progress import tqdm` in {offenders}"


# ----------------------------------------------------------------------------- the grids' bar

def _bar_text(err: str) -> list[str]:
    return [line.strip() for line in err.replace("\r", "\n").splitlines() if line.strip()]


def test_the_grid_bar_label_has_one_colon(capsys):
    from horizonbandits.compute.executor import run_tasks
    got = {}
    run_tasks("sequential", lambda x: x * 2, [(1,), (2,)], [1.0, 3.0], 1, None, got.__setitem__, True, "run_grid")
    lines = _bar_text(capsys.readouterr().err)
    assert got == {0: 2, 1: 4}
    assert lines[0].startswith("run_grid: 0/2 tasks:   0%|") and lines[-1].startswith("run_grid: 2/2 tasks: 100%|")
    assert not any(": :" in line or "tasks: :" in line for line in lines), lines


def test_a_compile_in_the_grid_says_so_then_the_count_comes_back(capsys):
    """A kernel numba has to compile (here one made for this test, so never in any cache) changes the label."""
    from numba import njit

    from horizonbandits.compute.executor import COMPILING, run_tasks

    def task(x):
        return njit(lambda y: y + 1)(x)  # a new function: always compiled
    run_tasks("sequential", task, [(1,), (2,)], [1.0, 1.0], 1, None, lambda i, out: None, True, "grid")
    lines = _bar_text(capsys.readouterr().err)
    assert COMPILING == "compiling kernels (first run only)"
    assert any(line.startswith(f"grid: {COMPILING}:   0%|") for line in lines), lines
    assert any(line.startswith(f"grid: 1/2 tasks, {COMPILING}:  50%|") for line in lines), lines
    assert lines[-1].startswith("grid: 2/2 tasks: 100%|")


def test_no_compile_no_message(capsys):
    from horizonbandits.compute.executor import COMPILING, run_tasks
    run_tasks("sequential", lambda x: x, [(1,)], [1.0], 1, None, lambda i, out: None, True, "grid", prepare=lambda: None)
    assert COMPILING not in capsys.readouterr().err


COLD_RUN = """
import horizonbandits.rising as R
from horizonbandits.experiments import make_policies, run_grid
run_grid({"fig1": R.figure1(T_max=500)}, make_policies(["SW-UCB"]), [100, 200], n_seeds=2, seed=0, n_jobs=1,
         progress=True, cache=False)
"""


@pytest.mark.timeout(240)
def test_run_grid_on_a_cold_kernel_cache_says_it_is_compiling(tmp_path):
    """An empty numba cache: the bar of run_grid says it compiles; the same grid again (kernels cached) does not."""
    import os
    import subprocess
    import sys

    from horizonbandits._numba_cache import PACKAGE_DIR
    from horizonbandits.compute.executor import COMPILING
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "PYTHONPATH": str(PACKAGE_DIR.parent)}
    env.pop("JPY_SESSION_NAME", None)
    runs = [subprocess.run([sys.executable, "-c", COLD_RUN], env=env, capture_output=True, text=True, check=True).stderr
            for _ in range(2)]
    cold, warm = map(_bar_text, runs)
    assert f"run_grid: {COMPILING}:   0%|" in "\n".join(cold)
    assert cold[-1].startswith("run_grid: 1/1 tasks: 100%|")
    assert not any(COMPILING in line for line in warm) and warm[-1].startswith("run_grid: 1/1 tasks: 100%|")


def test_commitment_and_portfolio_grids_show_a_bar_by_default(capsys):
    import inspect

    import horizonbandits.commit as C
    from horizonbandits.commit.portfolio_model import _portfolio_grid
    from horizonbandits.experiments import run_grid
    assert inspect.signature(_portfolio_grid).parameters["progress"].default is True
    assert inspect.signature(run_grid).parameters["progress"].default is True
    problem = C.CommitProblem.bernoulli([0.6, 0.4], [0.4, 0.6], N=20, T=50)
    run_grid([{"problem": problem}], {"RAEC": C.RAEC()}, n_seeds=2, cache=False)
    lines = _bar_text(capsys.readouterr().err)
    assert lines[-1].startswith("commit run_grid: 1/1 tasks: 100%|"), lines
