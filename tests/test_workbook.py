"""Unit tests of horizonbandits.workbook: parsing, validation, reports and `hb new` (no kernels)."""
from __future__ import annotations

import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from conftest import gone_within

from horizonbandits import workbook as wbk
from horizonbandits.workbook.execute import _raised_in_library


def make_nb(params_source: str, intro: str = "# A title\n\nOne sentence.\n\nMore.", extra=()):
    cells = [new_markdown_cell(intro), new_code_cell(params_source, metadata={"tags": ["parameters"]}), *extra]
    return new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                              "language": "python"}})


# ----------------------------------------------------------------------------- parameters cell

def test_parameters_cell_parsed_as_literals():
    nb = make_nb('T = 1000\neps = 0.25\nname: str = "x"\nflags = [True, False]\nopts = {"a": (1, -2.5)}\n'
                 'seed = None\noutput_dir = ""  # set by hb run')
    assert wbk.parameters_of(nb, "nb.ipynb") == {"T": 1000, "eps": 0.25, "name": "x", "flags": [True, False],
                                                 "opts": {"a": (1, -2.5)}, "seed": None, "output_dir": ""}


@pytest.mark.parametrize("source, fragment", [
    ("import numpy as np\nT = 3", "line 1: only `name = literal`"),
    ("T = 3\nT += 1", "line 2: only `name = literal`"),
    ("a = b = 1", "line 1: only `name = literal`"),
    ("T = int('3')", "line 1: the value of 'T' is not a plain literal"),
    ("T = 3 *", "line 1"),
])
def test_parameters_cell_refuses_code(source, fragment):
    with pytest.raises(wbk.WorkbookError) as err:
        wbk.parameters_of(make_nb(source), "notebooks/x.ipynb")
    message = str(err.value)
    assert message.startswith("notebooks/x.ipynb: parameters cell") and fragment in message
    assert "\n" not in message


@pytest.mark.parametrize("n_cells", [0, 2])
def test_exactly_one_parameters_cell(n_cells):
    nb = make_nb("a = 1")
    nb.cells[1].metadata["tags"] = []
    for _ in range(n_cells):
        nb.cells.append(new_code_cell("b = 2", metadata={"tags": ["parameters"]}))
    with pytest.raises(wbk.WorkbookError, match=f"exactly one code cell tagged 'parameters', found {n_cells}"):
        wbk.parameters_of(nb, "x.ipynb")


def test_title_and_description():
    nb = make_nb("a = 1", intro="Some preface\n# Horizon matters\n\n\n  The first sentence.  \nSecond line.")
    assert wbk.title_and_description(nb, "hm") == ("Horizon matters", "The first sentence.")
    assert wbk.title_and_description(make_nb("a = 1", intro="no title here"), "hm") == ("hm", "")


# ----------------------------------------------------------------------------- parameter files

DEFAULTS = {"T": 1000, "eps": 0.25, "policy": "CURE-UCB", "horizons": [10, 20], "noisy": True,
            "extra": None, "output_dir": ""}


def test_unknown_key_names_file_key_and_valid_keys():
    merged, problems = wbk.check_overrides({"epsilon": 0.1}, DEFAULTS, "params/smoke/nb.yaml")
    assert len(problems) == 1
    message = problems[0]
    assert message.startswith("params/smoke/nb.yaml: unknown key 'epsilon'")
    assert "valid keys: T, eps, extra, horizons, noisy, policy" in message
    assert "output_dir" not in message.split("valid keys:")[1]
    assert "did you mean" not in message or "'eps'" in message


def test_close_misspelling_gets_a_suggestion():
    _, problems = wbk.check_overrides({"horizon": [5]}, DEFAULTS, "f.yaml")
    assert "did you mean 'horizons'?" in problems[0]


@pytest.mark.parametrize("key, value, expected", [
    ("T", 10.0, "expects int"),
    ("T", True, "expects int"),
    ("T", "100", "expects int"),
    ("eps", "0.1", "expects float (or int)"),
    ("eps", False, "expects float (or int)"),
    ("policy", 3, "expects str"),
    ("horizons", 10, "expects list"),
    ("noisy", 1, "expects bool"),
    ("T", None, "expects int"),
])
def test_wrong_type_names_file_key_and_expected_type(key, value, expected):
    _, problems = wbk.check_overrides({key: value}, DEFAULTS, "params/default/nb.yaml")
    assert len(problems) == 1
    assert problems[0].startswith(f"params/default/nb.yaml: key '{key}' {expected}")
    assert "\n" not in problems[0]


def test_accepted_values_and_merge():
    merged, problems = wbk.check_overrides({"eps": 1, "extra": {"any": "thing"}, "horizons": [1, 2, 3]},
                                           DEFAULTS, "f.yaml")
    assert problems == []
    assert merged["eps"] == 1.0 and isinstance(merged["eps"], float)  # int promoted where float expected
    assert merged["extra"] == {"any": "thing"} and merged["horizons"] == [1, 2, 3]
    assert merged["T"] == 1000  # untouched default kept


def test_output_dir_cannot_be_overridden():
    _, problems = wbk.check_overrides({"output_dir": "/tmp/x"}, DEFAULTS, "f.yaml")
    assert problems == ["f.yaml: key 'output_dir' is set by hb run; remove it from the file"]


def test_every_problem_is_reported():
    _, problems = wbk.check_overrides({"a": 1, "T": "x", "b": 2}, DEFAULTS, "f.yaml")
    assert len(problems) == 3


def test_yaml_reading(tmp_path):
    path = tmp_path / "p.yaml"
    assert wbk.load_overrides(path) == {}  # missing file: no overrides
    path.write_text("# only a comment\n")
    assert wbk.load_overrides(path) == {}
    path.write_text("eps: 1e-3\nT: 2_000\nname: abc\n")
    assert wbk.load_overrides(path) == {"eps": 0.001, "T": 2000, "name": "abc"}  # 1e-3 is a float here


@pytest.mark.parametrize("text, fragment", [
    ("T: [1, 2\n", "line 2: invalid YAML"),
    ("T: 1\nT: 2\n", "line 2: invalid YAML: key 'T' is given twice"),
    ("- 1\n- 2\n", "expected a mapping of parameter names to values, got list"),
])
def test_bad_yaml_is_one_line(tmp_path, text, fragment):
    path = tmp_path / "p.yaml"
    path.write_text(text)
    with pytest.raises(wbk.WorkbookError) as err:
        wbk.load_overrides(path, "params/smoke/p.yaml")
    assert str(err.value).startswith("params/smoke/p.yaml") and fragment in str(err.value)
    assert "\n" not in str(err.value)


# ----------------------------------------------------------------------------- failures and ownership

def test_owner_is_the_notebook_whose_last_run_wrote_the_file():
    records = {"regret": ["figures/regret_curves_fig1.png"], "regret_curves": ["figures/regret_curves.png"]}
    assert wbk.owner_of("figures/regret_curves_fig1.png", records) == "regret"  # not the longest prefix
    assert wbk.owner_of("figures/regret_curves.png", records) == "regret_curves"
    assert wbk.owner_of("figures/regretful.png", records) is None


def test_library_value_error_detected_from_innermost_frame():
    inside = str(wbk.PACKAGE_DIR / "errors.py")
    tb = f"Cell In[3], line 1\n----> 1 f()\nFile {inside}:20, in check_int(name)\n---> 20 _fail()\nValueError: x"
    assert _raised_in_library(tb)
    numpy_last = tb + "\nFile /usr/lib/python3/site-packages/numpy/core.py:5, in g()\nValueError: y"
    assert not _raised_in_library(numpy_last)
    assert not _raised_in_library("Cell In[3], line 1\nValueError: raised in the notebook itself")


def test_describe_failure():
    lib = wbk.Result("nb", "failed", 1.0, "t", error="ValueError: T=0 is not allowed: expected >= 1",
                     library_error=True, traceback_tail=["a", "b"])
    assert wbk.describe_failure(lib) == ["nb: ValueError: T=0 is not allowed: expected >= 1"]
    other = wbk.Result("nb", "failed", 1.0, "t", error="KeyError: 'x'", failed_cell=4,
                       traceback_tail=["----> 1 d['x']", "KeyError: 'x'"], executed="failed/nb.ipynb")
    lines = wbk.describe_failure(other)
    assert lines[0] == "nb: failed in cell [4]: KeyError: 'x'"
    assert lines[1:3] == ["    | ----> 1 d['x']", "    | KeyError: 'x'"] and "failed/nb.ipynb" in lines[-1]


# ----------------------------------------------------------------------------- reports

def test_index_groups_figures_and_escapes(fixture_workbook, tmp_path):
    wb = wbk.Workbook.locate(fixture_workbook, tmp_path / "out")
    profile_dir = wb.profile_dir("smoke")
    for rel in ["figures/alpha_demo_line.png", "figures/alpha_demo_line.pdf", "figures/stray.png",
                "figures/beta_range_bars.png", "tables/alpha_demo_values.csv"]:
        (profile_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (profile_dir / rel).write_bytes(b"x")
    manifest = {"profile": "smoke", "generated": "now", "git": {"commit": "abc", "dirty": True},
                "packages": {"numpy": "1"}, "python": "3",
                "notebooks": {"alpha_demo": {"title": "Alpha <demo>", "status": "ok", "wall_time_s": 1.25,
                                             "html": "html/alpha_demo.html", "executed": "notebooks/alpha_demo.ipynb",
                                             "parameters": {"n": 1},
                                             "outputs": ["figures/alpha_demo_line.png", "figures/alpha_demo_line.pdf",
                                                         "tables/alpha_demo_values.csv"]},
                              # an entry of a manifest written before "outputs": its figures list still places them
                              "beta_range": {"status": "ok", "figures": ["figures/beta_range_bars.png"]}}}
    page = wbk.render_index(wb, manifest, wb.notebooks())
    assert "Alpha &lt;demo&gt;" in page and "<demo>" not in page
    assert 'href="html/alpha_demo.html"' in page and "1.2 s" in page
    # every notebook has a section, the unrun ones marked so
    for name in ("alpha_demo", "beta_range", "gamma_crash"):
        assert f'id="{name}"' in page
    assert page.count("not run") >= 2
    # figures appear in their notebook's section; the stray one under "Other"
    alpha = page.split('id="alpha_demo"')[1].split('<section')[0]
    beta = page.split('id="beta_range"')[1].split('<section')[0]
    other = page.split('id="other-files"')[1]
    assert 'src="figures/alpha_demo_line.png"' in alpha and 'href="tables/alpha_demo_values.csv"' in alpha
    assert 'src="figures/beta_range_bars.png"' in beta and "alpha_demo" not in beta
    # a figure's PDF is linked when it was written (the paper profile, $HB_FIGURE_FORMATS), never otherwise
    assert 'href="figures/alpha_demo_line.pdf"' in alpha
    assert ".pdf" not in beta and ".pdf" not in other
    assert 'src="figures/stray.png"' in other
    assert "http://" not in page and "https://" not in page  # self-contained


def test_manifest_merges_previous_entries(fixture_workbook, tmp_path):
    wb = wbk.Workbook.locate(fixture_workbook, tmp_path / "out")
    profile_dir = wb.profile_dir("smoke")
    profile_dir.mkdir(parents=True)
    old = {"profile": "smoke", "notebooks": {"beta_range": {"status": "failed", "wall_time_s": 3.0},
                                             "deleted_nb": {"status": "ok"}}}
    (profile_dir / "manifest.json").write_text(json.dumps(old))
    plan = wbk.Plan("alpha_demo", "Alpha demo", "d", None, {}, {"n_points": 5})
    res = wbk.Result("alpha_demo", "ok", 2.5, "t")
    merged = wbk.build_manifest(wb, "smoke", [plan], [res], merge=True)
    assert set(merged["notebooks"]) == {"alpha_demo", "beta_range"}  # deleted notebooks are dropped
    assert merged["notebooks"]["beta_range"]["status"] == "failed"
    assert merged["notebooks"]["alpha_demo"]["parameters"]["output_dir"] == str(profile_dir)
    fresh = wbk.build_manifest(wb, "smoke", [plan], [res], merge=False)
    assert set(fresh["notebooks"]) == {"alpha_demo"}
    assert set(wbk.MANIFEST_PACKAGES) <= set(fresh["packages"])


# ----------------------------------------------------------------------------- hb new

def test_new_notebook_copies_strips_and_renames(fixture_workbook):
    wb = wbk.Workbook.locate(fixture_workbook)
    src = wb.notebook_path("alpha_demo")
    nb = nbformat.read(src, as_version=4)
    nb.cells[2].outputs = [new_output("stream", name="stdout", text="old output")]
    nb.cells[2].execution_count = 7
    nbformat.write(nb, src)
    written = wbk.new_notebook(wb, "my_lines", "alpha_demo")
    assert [p.relative_to(fixture_workbook).as_posix() for p in written] == [
        "notebooks/my_lines.ipynb", "params/smoke/my_lines.yaml", "params/default/my_lines.yaml",
        "params/paper/my_lines.yaml"]
    copy = nbformat.read(wb.notebook_path("my_lines"), as_version=4)
    assert copy.cells[0].source.splitlines()[0] == "# My lines"
    assert wb.info("my_lines").description == wbk.placeholder_description("alpha_demo")  # the author writes one
    assert wb.info("alpha_demo").description in copy.cells[0].source  # the source's text stays for reference
    assert all(c.outputs == [] and c.execution_count is None for c in copy.cells if c.cell_type == "code")
    code = "\n".join(c.source for c in copy.cells if c.cell_type == "code")
    assert '"my_lines_line.png"' in code and "alpha_demo" not in code
    assert wb.params_path("smoke", "my_lines").read_text() == wb.params_path("smoke", "alpha_demo").read_text()
    assert "my_lines" in wb.names()


def test_new_notebook_writes_empty_params_where_source_has_none(fixture_workbook):
    wb = wbk.Workbook.locate(fixture_workbook)
    wbk.new_notebook(wb, "beta_copy", "beta_range", title="Beta, copied")
    assert wb.params_path("default", "beta_copy").read_text() == "{}\n"  # beta_range has no default file
    assert wbk.load_overrides(wb.params_path("default", "beta_copy")) == {}
    assert wb.info("beta_copy").title == "Beta, copied"


@pytest.mark.parametrize("name, source, fragment", [
    ("Bad-Name", "alpha_demo", "is not allowed: expected at most 64 lowercase letters"),
    ("1abc", "alpha_demo", "is not allowed"),
    ("fresh\n", "alpha_demo", "'fresh\\n' is not allowed"),  # the pattern's $ matched before the newline
    ("a" * 301, "alpha_demo", "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' is not allowed: expected at most 64"),
    ("alpha_demo_line", "beta_range", "'alpha_demo_line' starts with 'alpha_demo_', the prefix of notebook "
                                      "'alpha_demo''s files"),
    ("alpha", "beta_range", "'alpha_demo' starts with 'alpha_', the prefix of notebook 'alpha''s files"),
    ("fresh", "alpha_dem", "unknown notebook 'alpha_dem' (did you mean 'alpha_demo'?); valid names: alpha_demo, "
                           "beta_range, gamma_crash"),
    ("beta_range", "alpha_demo", "notebooks/beta_range.ipynb already exists"),
])
def test_new_notebook_refusals(fixture_workbook, name, source, fragment):
    wb = wbk.Workbook.locate(fixture_workbook)
    before = sorted(p for p in fixture_workbook.rglob("*"))
    with pytest.raises(wbk.WorkbookError) as err:
        wbk.new_notebook(wb, name, source)
    assert fragment in str(err.value) and "\n" not in str(err.value)
    assert sorted(p for p in fixture_workbook.rglob("*")) == before


def test_new_notebook_refuses_stray_params_file(fixture_workbook):
    wb = wbk.Workbook.locate(fixture_workbook)
    wb.params_path("paper", "later").write_text("{}\n")
    with pytest.raises(wbk.WorkbookError, match="params/paper/later.yaml already exists"):
        wbk.new_notebook(wb, "later", "alpha_demo")
    assert not wb.notebook_path("later").exists()


# ----------------------------------------------------------------------------- elements and policy names

@pytest.mark.parametrize("key, value, fragment", [
    ("horizons", ["5000"], "key 'horizons' expects a list of int (the notebook's default is [10, 20]), got '5000' "
                           "(str) at position 0"),
    ("horizons", [10, 2.5], "got 2.5 (float) at position 1"),
    ("horizons", [10, True], "got True (bool) at position 1"),
    ("weights", [1, "a"], "key 'weights' expects a list of float (or int)"),
    ("grid", [[1, 2], [3, "x"]], "key 'grid' expects a list of list"),
    ("params", {"CURE-UCB": 3}, "key 'params' for 'CURE-UCB' expects dict (the notebook's default is {'eps': 0.5})"),
    ("params", {"SW-UCB": 3}, "key 'params' expects a mapping to dict"),
])
def test_list_and_mapping_elements_are_checked(key, value, fragment):
    defaults = dict(DEFAULTS, weights=[0.5], grid=[[1, 2]], params={"CURE-UCB": {"eps": 0.5}})
    _, problems = wbk.check_overrides({key: value}, defaults, "f.yaml", registries={})
    assert len(problems) == 1 and fragment in problems[0] and "\n" not in problems[0]


def test_accepted_elements():
    defaults = dict(DEFAULTS, weights=[0.5], grid=[[1, 2]], params={"CURE-UCB": {"eps": 0.5}}, empty=[])
    overrides = {"horizons": [5, 6], "weights": [1, 0.25], "grid": [[3]], "params": {"X": {"window": 3, "a": "b"}},
                 "empty": ["anything", 1]}
    _, problems = wbk.check_overrides(overrides, defaults, "f.yaml", registries={})
    assert problems == []


REGISTRIES = {"rising": ["CURE-UCB", "R-ed-UCB", "SW-UCB"], "commitment": ["RAEC", "UCB"]}


def test_policy_names_checked_against_the_notebooks_own_registry():
    defaults = {"policies": ["CURE-UCB", "SW-UCB"], "policy_params": {}, "sigma_policies": ["CURE-UCB"]}
    ok = {"policies": ["R-ed-UCB"], "policy_params": {"SW-UCB": {}}, "sigma_policies": []}
    assert wbk.check_policy_names(ok, defaults, "f.yaml", REGISTRIES) == []
    bad = {"policies": ["CURE-UBC", "RAEC"], "sigma_policies": ["SW_UCB"]}
    problems = wbk.check_policy_names(bad, defaults, "f.yaml", REGISTRIES)
    assert problems == [
        "f.yaml: key 'policies' names unknown policy 'CURE-UBC' (did you mean 'CURE-UCB'?); valid policies: "
        "CURE-UCB, R-ed-UCB, SW-UCB",
        "f.yaml: key 'policies' names unknown policy 'RAEC'; valid policies: CURE-UCB, R-ed-UCB, SW-UCB",
        "f.yaml: key 'sigma_policies' names unknown policy 'SW_UCB' (did you mean 'SW-UCB'?); valid policies: "
        "CURE-UCB, R-ed-UCB, SW-UCB"]
    commit = wbk.check_policy_names({"policies": ["UCB", "CURE-UCB"]}, {"policies": ["RAEC"]}, "g.yaml", REGISTRIES)
    assert commit == ["g.yaml: key 'policies' names unknown policy 'CURE-UCB'; valid policies: RAEC, UCB"]
    # defaults that name no registered policy say nothing about which names are valid: not checked
    assert wbk.check_policy_names({"policies": ["x"]}, {"policies": ["mine"]}, "h.yaml", REGISTRIES) == []


def test_the_real_registries_hold_the_notebooks_policies():
    registries = wbk.policy_registries()
    assert {"CURE-UCB", "R-ed-UCB", "SW-UCB"} <= set(registries["rising"])
    assert registries.get("commitment"), "no commitment policy registered"


# ----------------------------------------------------------------------------- staging and adoption

def test_adopt_replaces_owned_files_only_on_success(tmp_path):
    profile = tmp_path / "smoke"
    records = {"alpha": ["figures/alpha_old.png", "figures/alpha_keep.png", "claims/alpha.csv"],
               "alpha_two": ["figures/alpha_two_x.png"], "beta": ["figures/beta_y.png"]}
    old = {"figures/alpha_old.png": b"old", "figures/alpha_keep.png": b"old-keep", "figures/alpha_two_x.png": b"two",
           "figures/beta_y.png": b"beta", "claims/alpha.csv": b"old claims", "notebooks/alpha.ipynb": b"{}",
           "html/alpha.html": b"old page"}
    for rel, data in old.items():
        (profile / rel).parent.mkdir(parents=True, exist_ok=True)
        (profile / rel).write_bytes(data)

    def staged_task(files, notebook=True):
        task = wbk.Task("alpha", "nb", str(tmp_path), str(profile), "smoke", {})
        for rel, data in files.items():
            (task.staged_outputs / rel).parent.mkdir(parents=True, exist_ok=True)
            (task.staged_outputs / rel).write_bytes(data)
        if notebook:
            task.staged_notebook.write_text('{"new": 1}')
            task.staged_html.write_text("new page")
        return task

    failed = wbk.adopt_outputs(staged_task({"figures/alpha_keep.png": b"partial"}),
                               wbk.Result("alpha", "failed", 1.0, "t"), records)
    assert {rel: (profile / rel).read_bytes() for rel in old} == old  # nothing replaced
    assert failed.executed == "failed/alpha.ipynb" and failed.html == "failed/alpha.html"
    assert not (profile / ".running" / "alpha").exists()

    ok = wbk.adopt_outputs(staged_task({"figures/alpha_keep.png": b"new", "tables/alpha_t.csv": b"t"}),
                           wbk.Result("alpha", "ok", 1.0, "t"), records)
    assert ok.executed == "notebooks/alpha.ipynb" and ok.html == "html/alpha.html"
    assert ok.outputs == ["figures/alpha_keep.png", "tables/alpha_t.csv"]
    assert (profile / "figures" / "alpha_keep.png").read_bytes() == b"new"
    assert (profile / "tables" / "alpha_t.csv").read_bytes() == b"t"
    assert not (profile / "figures" / "alpha_old.png").exists()  # the previous run's, not rewritten
    assert not (profile / "claims" / "alpha.csv").exists()  # this run recorded no claims
    assert (profile / "figures" / "alpha_two_x.png").read_bytes() == b"two"  # another notebook's
    assert (profile / "figures" / "beta_y.png").read_bytes() == b"beta"
    assert (profile / "html" / "alpha.html").read_text() == "new page"
    assert not (profile / "failed" / "alpha.ipynb").exists()


def test_kernel_environment_keeps_the_users_cache(tmp_path):
    wb = wbk.Workbook(tmp_path, tmp_path / "out")
    env = wbk.kernel_environment(wb, None, base={"PATH": "/bin"})
    assert env["HB_CACHE_DIR"] == str(tmp_path / "out" / "cache") and "HB_DASK_ADDRESS" not in env
    env = wbk.kernel_environment(wb, "tcp://x:1", base={"HB_CACHE_DIR": "/mine"})
    assert env["HB_CACHE_DIR"] == "/mine" and env["HB_DASK_ADDRESS"] == "tcp://x:1"


def test_the_workbook_reads_notebooks_without_the_slow_iri_format_check():
    # jsonschema's optional "iri" check imports rfc3987_syntax, which builds a grammar for ~3 CPU-s in
    # every process that imports nbformat; the workbook's processes leave it out (workbook/base.py).
    import subprocess
    import sys
    code = ("import sys, horizonbandits.workbook, nbformat; "
            "nb = nbformat.read('notebooks/regret_phase_diagram.ipynb', as_version=4); nbformat.validate(nb); "
            "print(sys.modules.get('rfc3987_syntax', 'absent'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parents[1]))
    assert out.stdout.strip() == "None"


def test_require_policy_names_is_one_line_with_a_suggestion():
    from horizonbandits.rising import POLICIES
    from horizonbandits.workbook.params import require_policy_names
    assert require_policy_names(("CURE-UCB", "SW-UCB"), POLICIES) == ["CURE-UCB", "SW-UCB"]
    with pytest.raises(ValueError, match=r"'CURE-UBC' is not a registered policy \(did you mean 'CURE-UCB'\?\)"):
        require_policy_names(["CURE-UBC"], POLICIES)
    with pytest.raises(ValueError, match="it must include 'R-ed-UCB'"):
        require_policy_names(["CURE-UCB"], POLICIES, required=["R-ed-UCB"])


def test_profile_parameters_are_the_checked_values_of_a_profile_file():
    import yaml

    from pathlib import Path

    from horizonbandits.workbook import PROFILES, WorkbookError, profile_parameters
    root = Path(__file__).resolve().parents[1]
    on_disk = yaml.safe_load((root / "params" / "smoke" / "ltf_experiments.yaml").read_text())
    assert profile_parameters("ltf_experiments", "smoke", root=root) == on_disk
    assert profile_parameters("ltf_experiments", "default", root=root) == {}  # the default profile sets nothing
    with pytest.raises(WorkbookError, match="unknown profile"):
        profile_parameters("ltf_experiments", "huge", root=root)
    with pytest.raises(WorkbookError, match="^name='nope' is not allowed"):
        profile_parameters("nope", PROFILES[0], root=root)


LAST_CELL = """
import os, subprocess
from pathlib import Path
from horizonbandits.outputs import atomic_write_text
Path("pids.txt").write_text(f"{os.getpid()} {subprocess.Popen(['sleep', '120']).pid}")
atomic_write_text(Path(output_dir) / "tables" / "big.csv", "x,y\\n" + "1,2\\n" * 200_000)
"""


def test_the_kernel_is_killed_after_its_last_cell_with_every_output_whole(tmp_path):
    """The kernel (and its process group) is killed once the last cell answered, not shut down gracefully:
    what the cells wrote is whole, no temporary file is left, and no process of the kernel survives."""
    import os

    nb = make_nb("output_dir = ''", extra=[new_code_cell(LAST_CELL)])
    path = tmp_path / "last.ipynb"
    nbformat.write(nb, str(path))
    profile = tmp_path / "out" / "smoke"
    task = wbk.Task("last", str(path), str(tmp_path), str(profile), "smoke", {})
    result = wbk.execute_notebook(task)
    assert result.status == "ok", result.error
    table = task.staged_outputs / "tables" / "big.csv"
    assert table.read_text() == "x,y\n" + "1,2\n" * 200_000
    assert [p.name for p in table.parent.iterdir()] == ["big.csv"]
    assert task.staged_notebook.is_file() and task.staged_html.is_file()
    pids = [int(p) for p in (tmp_path / "pids.txt").read_text().split()]
    assert gone_within(pids), pids
    for pid in pids:  # reap what is ours, if anything
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
