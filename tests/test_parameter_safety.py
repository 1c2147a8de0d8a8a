"""Parameter files cannot run code: only plain literals reach papermill, checked at every depth
(issue 29, item 1), and the YAML is read as a person writes it, within bounds (items 3, 6, 7)."""
from __future__ import annotations

import ast
import base64
import datetime
import keyword
import math
import os
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from papermill.iorw import load_notebook_node
from papermill.parameterize import parameterize_notebook

from horizonbandits import workbook as wbk
from horizonbandits.workbook import literals, paramfile

PAYLOAD = b'"; __import__("os").system("touch PWNED"); x = "'


# ----------------------------------------------------------------------------- item 1: the trial


def test_binary_value_in_a_none_parameter_is_refused_before_anything_runs(fixture_workbook):
    """The issue's trial: ``!!binary`` where the notebook's default is None passed ``--check``."""
    path = fixture_workbook / "params" / "smoke" / "alpha_demo.yaml"
    path.write_text(f"seed: !!binary {base64.b64encode(PAYLOAD).decode()}\n")
    wb = wbk.Workbook.locate(fixture_workbook)
    with pytest.raises(wbk.ValidationError) as err:
        wbk.plan_run(wb, "smoke", ["alpha_demo"])
    (problem,) = err.value.problems
    assert problem.startswith("params/smoke/alpha_demo.yaml line 1: invalid YAML") and "binary" in problem


@pytest.mark.parametrize("value, fragment", [
    (PAYLOAD, "(bytes, from a !!binary tag), which is not a plain literal"),
    ({1, 2}, "(a set, from a !!set tag)"),
    ((1, 2), "(a tuple)"),
    (datetime.date(2026, 1, 1), "(a date)"),
    (1j, "(complex)"),
    (float("nan"), "nan, which is not a finite number"),
    (float("inf"), "inf, which is not a finite number"),
    (2**70, "an integer beyond 64 bits"),
    ("\ud800", "not valid Unicode"),
    ({1: 0.5}, "mapping key 1 (int); keys must be strings"),
    ([[[[[[[[[[[1]]]]]]]]]]], "nested more than 10 levels deep"),
    ("x" * 10_001, "a string of 10,001 characters"),
])
def test_only_plain_literals_pass_the_check(value, fragment):
    _, problems = wbk.check_overrides({"seed": value}, {"seed": None, "output_dir": ""}, "f.yaml")
    assert len(problems) == 1 and fragment in problems[0] and problems[0].startswith("f.yaml: key 'seed' ")
    assert "\n" not in problems[0] and len(problems[0]) < 400


@pytest.mark.parametrize("key, value", [
    ("policy_params", {"CURE-UCB": {"eps": PAYLOAD}}),
    ("generator_options", {"share": PAYLOAD}),
    ("costs", {"a": PAYLOAD}),
    ("cure_params", {"init_pulls": [PAYLOAD]}),
])
def test_non_literals_inside_mappings_are_refused(key, value):
    defaults = {"policy_params": {"CURE-UCB": {"eps": 0.5}}, "generator_options": {}, "costs": {}, "cure_params": {},
                "policies": ["CURE-UCB"], "output_dir": ""}
    _, problems = wbk.check_overrides({key: value}, defaults, "f.yaml")
    assert len(problems) == 1 and "(bytes, from a !!binary tag)" in problems[0]


def test_an_alias_bomb_is_refused_quickly_with_a_short_message(tmp_path):
    """A 9-level billion-laughs file: 372 bytes that name 9**9 values once aliases are expanded."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    defaults = {f"a{i}": [] for i in range(9)} | {"output_dir": ""}
    start = time.process_time()
    _, problems = wbk.check_overrides(wbk.load_overrides(path, "bomb.yaml"), defaults, "bomb.yaml")
    assert time.process_time() - start < 5  # bounded work (35 s and 1.2 GB before)
    assert any("more than 10,000 values (counting every alias expanded)" in p for p in problems)
    assert sum(len(p) for p in problems) < 3_000  # the error was 322 MB


def test_the_worker_refuses_what_the_check_would(tmp_path):
    """Defence in depth: a Task built around the check still does not reach papermill."""
    task = wbk.Task("x", str(tmp_path / "x.ipynb"), str(tmp_path), str(tmp_path / "smoke"), "smoke", {"eps": PAYLOAD})
    result = wbk.execute_notebook(task)
    assert result.status == "failed" and result.error.startswith("parameters refused: the overrides holds b'")
    assert not (tmp_path / "PWNED").exists()


# ----------------------------------------------------------------------------- item 1: values inside mappings


DICT_DEFAULTS = {"policies": ["CURE-UCB", "SW-UCB"], "policy_params": {"CURE-UCB": {"eps": 0.5}},
                 "generator_options": {}, "costs": {}, "cure_params": {}, "output_dir": ""}


@pytest.mark.parametrize("key, value, fragment", [
    ("policy_params", {"CURE-UCB": {"eps": "0.1"}}, "for 'CURE-UCB' for 'eps' expects float (or int)"),
    ("policy_params", {"CURE-UCB": {"epz": 0.1}}, "has 'epz', which is not a hyperparameter of CURE-UCB "
                                                  "(did you mean 'eps'?); valid: eps, sigma, init_pulls"),
    ("policy_params", {"SW-UCB": {"tau": 1.5}}, "for 'SW-UCB' for 'tau' expects int or None, got float 1.5"),
    ("policy_params", {"SW-UCB": {"xi": True}}, "for 'xi' expects float, got bool True"),
    ("policy_params", {"SW-UCB": 3}, "expects a mapping to dict"),
    ("generator_options", {"challenger_blend": "wide"}, "for 'challenger_blend' expects list"),
    ("generator_options", {"H": 500}, "has 'H', which is not an option of the instance generators"),
    ("generator_options", {"sharee": 0.5}, "(did you mean 'share'?)"),
    ("costs", {"arm a": "cheap"}, "for 'arm a' expects float, got str 'cheap'"),
    ("cure_params", {"init_pulls": "1"}, "for 'init_pulls' expects int, got str '1'"),
    ("cure_params", {"eps": 0.1}, "has 'eps', which is not a hyperparameter of CURE-UCB the notebook lets you set"),
])
def test_values_inside_mappings_are_checked(key, value, fragment):
    _, problems = wbk.check_overrides({key: value}, DICT_DEFAULTS, "f.yaml")
    assert len(problems) == 1 and fragment in problems[0], problems
    assert problems[0].startswith(f"f.yaml: key '{key}' ") and "\n" not in problems[0]


def test_values_inside_mappings_that_fit_are_accepted():
    overrides = {"policy_params": {"CURE-UCB": {"eps": 1, "init_pulls": 1}, "SW-UCB": {"tau": 200, "xi": 0.5}},
                 "generator_options": {"challenger_blend": [0.6, 0.6], "bloomer_rises_fastest": False, "K": 5},
                 "costs": {"a": 1e-4, "b": 0}, "cure_params": {"init_pulls": 1}}
    merged, problems = wbk.check_overrides(overrides, DICT_DEFAULTS, "f.yaml")
    assert problems == []
    assert merged["policy_params"]["SW-UCB"] == {"tau": 200, "xi": 0.5}


def test_the_notebooks_dict_parameters_are_all_covered():
    """Every mapping-valued parameter of the shipped notebooks is checked by name or by its default."""
    names = {k for nb in wbk.Workbook.locate().notebooks()
             for k, v in wbk.parameters_of(nbformat.read(nb.path, as_version=4), nb.name).items() if isinstance(v, dict)}
    from horizonbandits.workbook import params
    covered = (set(params.POLICY_OF_MAPPING) | set(params.KEYWORDS_OF_MAPPING) | params.NUMBERS_OF_MAPPING
               | params.CHECKED_BY_FAMILY | set(params.COMPUTE_MAPPING))
    assert names - covered == {"policy_params"}  # found by name (_is_policy_key)


COMPUTE_DEFAULTS = {"compute": {"backend": "loky", "n_jobs": -1, "cache": True, "address": None}, "output_dir": ""}


@pytest.mark.parametrize("value, fragment", [
    ({"n_job": 1}, "has 'n_job', which is not a compute option of run_grid (did you mean 'n_jobs'?); "
                   "valid: backend, n_jobs, cache, address"),
    ({"chunk_size": 25}, "has 'chunk_size', which is not a compute option of run_grid"),
    ({"cache": 1}, "for 'cache' expects bool"),
    ({"backend": 3}, "for 'backend' expects str"),
])
def test_compute_takes_only_run_grids_compute_keywords(value, fragment):
    """``compute`` is handed to run_grid as ``**compute``: a key run_grid would read as a model option (chunk_size)
    or not know is refused before anything runs, with one line naming the parameter."""
    _, problems = wbk.check_overrides({"compute": value}, COMPUTE_DEFAULTS, "f.yaml")
    assert len(problems) == 1 and problems[0].startswith("f.yaml: key 'compute' ") and fragment in problems[0]


def test_a_partial_compute_mapping_is_accepted():
    merged, problems = wbk.check_overrides({"compute": {"n_jobs": 1, "cache": False, "address": "tcp://10.0.0.1:8786"}},
                                           COMPUTE_DEFAULTS, "f.yaml")
    assert problems == [] and merged["compute"] == {"n_jobs": 1, "cache": False, "address": "tcp://10.0.0.1:8786"}


# ----------------------------------------------------------------------------- item 1: papermill's injected cell


def _plain():
    scalars = (st.none() | st.booleans() | st.integers(-literals.MAX_INT, literals.MAX_INT)
               | st.floats(allow_nan=False, allow_infinity=False)
               | st.text(st.characters(blacklist_categories=("Cs",)), max_size=40))
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(st.text(st.characters(blacklist_categories=("Cs",)), max_size=10),
                                          inner, max_size=4), max_leaves=12)


_NOTEBOOK = nbformat.writes(new_notebook(
    cells=[new_markdown_cell("# t"), new_code_cell("x = 1", metadata={"tags": ["parameters"]}), new_code_cell("x")],
    metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}))


def _injected(parameters: dict) -> str:
    """The cell papermill injects, as ``execute.execute_notebook`` has it do (load, parameterize, save)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "nb.ipynb"
        path.write_text(_NOTEBOOK)
        nb = parameterize_notebook(load_notebook_node(str(path)), parameters, kernel_name="python3",
                                   language="python")
    nb = nbformat.reads(nbformat.writes(nb), as_version=4)  # through the notebook's JSON, as the kernel gets it
    (cell,) = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    return cell.source


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(lambda n: not keyword.iskeyword(n)),
                       _plain(), min_size=1, max_size=4))
def test_no_plain_literal_changes_the_injected_cells_syntax(parameters):
    """Whatever plain literals a file holds, the injected cell is exactly one ``name = literal``
    per parameter, and each literal reads back as the value given. (The names are the parameters
    cell's own, identifiers that ``parameters_of`` parsed, so never keywords; the file chooses only
    the values.)"""
    assert all(literals.literal_problem(v) is None for v in parameters.values())
    tree = ast.parse(_injected(parameters))
    assert [type(s) for s in tree.body] == [ast.Assign] * len(parameters)
    for stmt, (name, value) in zip(tree.body, parameters.items()):
        assert [t.id for t in stmt.targets] == [name]
        assert _same(ast.literal_eval(stmt.value), value)


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(blacklist_categories=()), max_size=30) | st.binary(max_size=30).map(lambda b: b + b'"'))
def test_anything_the_check_lets_through_round_trips(value):
    """Strings of any code point (surrogates too) and bytes: the check refuses what papermill cannot write exactly."""
    if literals.literal_problem(value) is None:
        (stmt,) = ast.parse(_injected({"p": value})).body
        assert _same(ast.literal_eval(stmt.value), value)
    else:
        assert isinstance(value, bytes) or any(0xD800 <= ord(c) <= 0xDFFF for c in value)


# ----------------------------------------------------------------------------- items 3, 6, 7: the YAML itself


@pytest.mark.parametrize("text, fragment", [
    ("T_short: 05000\n", "line 1: invalid YAML: 05000 is a number with a leading zero (YAML 1.1 reads it as octal, "
                         "as 2560); write the number in plain decimal, or quote it if you mean text"),
    ("horizons: [5000, 1:20:00]\n", "1:20:00 is a number with colons (YAML 1.1 reads it in base 60, as 4800)"),
    ("n_seeds: 010\n", "010 is a number with a leading zero (YAML 1.1 reads it as octal, as 8)"),
    ("n_seeds: 0x10\n", "0x10 is a hexadecimal number (YAML 1.1 reads it, as 16)"),
    ("eps: -1:30.5\n", "base 60"),
    ("eps: !!set {a, b}\n", "could not determine a constructor for the tag 'tag:yaml.org,2002:set'"),
    ("start: !!timestamp 2026-01-01\n", "tag:yaml.org,2002:timestamp"),
    ("x: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 10 levels deep"),
])
def test_yaml_numbers_and_tags_that_would_change_silently_are_refused(tmp_path, text, fragment):
    path = tmp_path / "p.yaml"
    path.write_text(text)
    with pytest.raises(wbk.WorkbookError) as err:
        wbk.load_overrides(path, "params/smoke/p.yaml")
    message = str(err.value)
    assert message.startswith("params/smoke/p.yaml") and fragment in message and "\n" not in message


def test_yaml_numbers_read_as_written(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("a: 5000\nb: -3\nc: 1_000\nd: 0.5\ne: .5\nf: 1e-3\ng: 2.5E+4\nh: 0\ni: 05.5\nj: 2026-01-01\n"
                    "k: '05000'\nl: +7\nm: 0.0\n")
    assert wbk.load_overrides(path) == {"a": 5000, "b": -3, "c": 1000, "d": 0.5, "e": 0.5, "f": 0.001, "g": 25000.0,
                                        "h": 0, "i": 5.5, "j": "2026-01-01", "k": "05000", "l": 7, "m": 0.0}


def test_yaml_file_size_is_bounded_before_parsing(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("a: [" + ", ".join(["1"] * 400_000) + "]\n")  # about 1.2 MB (a 5 MB file took 55 s)
    start = time.process_time()
    with pytest.raises(wbk.WorkbookError, match=r"has 1,200,00\d bytes; a parameter file may have at most 65,536"):
        wbk.load_overrides(path, "p.yaml")
    assert time.process_time() - start < 1


def test_largest_allowed_file_is_checked_in_seconds(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("a: [" + ", ".join(["1"] * ((paramfile.MAX_FILE_BYTES - 10) // 3)) + "]\n")
    start = time.process_time()
    _, problems = wbk.check_overrides(wbk.load_overrides(path, "p.yaml"), {"a": [1], "output_dir": ""}, "p.yaml")
    assert time.process_time() - start < 10
    assert problems == ["p.yaml: key 'a' holds more than 10,000 values (counting every alias expanded)"]


@pytest.mark.parametrize("make, fragment", [
    (lambda p: p.mkdir(), "is a folder, not a file"),
    (lambda p: os.mkfifo(p), "is a named pipe (FIFO)"),
    (lambda p: p.symlink_to(p.with_name("gone.yaml")), "is a symbolic link to a missing file"),
])
def test_a_params_path_that_is_not_a_file_is_one_line(fixture_workbook, make, fragment):
    path = fixture_workbook / "params" / "smoke" / "alpha_demo.yaml"
    path.unlink()
    make(path)
    wb = wbk.Workbook.locate(fixture_workbook)
    with pytest.raises(wbk.ValidationError) as err:
        wbk.plan_run(wb, "smoke", ["alpha_demo"])
    assert err.value.problems == [f"params/smoke/alpha_demo.yaml {fragment}" + (
        "; a parameter file must be a regular file" if "FIFO" in fragment else "")]
