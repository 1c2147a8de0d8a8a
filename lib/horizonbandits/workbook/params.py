"""A notebook's parameters and the parameter files that override them, checked before anything runs.

- ``parameters_of``: the defaults of a notebook's ``parameters`` cell, parsed with ``ast`` (plain
  literal assignments only; nothing is executed).
- ``load_overrides`` / ``check_overrides``: ``params/<profile>/<name>.yaml`` checked key by key
  against those defaults: the type of each value, the type of each element of a list (and of each
  value of a dict), and the policy names in ``policies``-like keys against the library's registries.
- ``plan_run``: every selected notebook and its file checked, plus the profile's folder checked for
  files that belong to no notebook; every problem is one line, all reported together.
"""
from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from .base import PROFILES, ValidationError, WorkbookError, did_you_mean, one_line
from .locate import Workbook, read_notebook, title_and_description

# (label, module, attribute) of the policy registries a ``policies`` parameter may draw from.
POLICY_REGISTRIES = (("rising", "horizonbandits.rising", "POLICIES"),
                     ("commitment", "horizonbandits.commit", "COMMIT_POLICIES"),
                     ("portfolio", "horizonbandits.commit", "PORTFOLIO_POLICIES"))


# --------------------------------------------------------------------------- the parameters cell


def parameters_cells(nb) -> list[int]:
    return [i for i, cell in enumerate(nb.cells)
            if cell.cell_type == "code" and "parameters" in cell.get("metadata", {}).get("tags", [])]


def parameters_of(nb, where: str) -> dict:
    """The defaults of the notebook's single ``parameters`` cell, as Python values.

    The cell is parsed with ``ast``, never executed: every statement must be ``name = literal``
    (numbers, strings, bools, None, lists, tuples, dicts of literals), so that a parameter file
    can be checked against it without starting a kernel."""
    cells = parameters_cells(nb)
    if len(cells) != 1:
        raise WorkbookError(f"{where}: expected exactly one code cell tagged 'parameters', found {len(cells)}")
    source = nb.cells[cells[0]].source
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise WorkbookError(f"{where}: parameters cell line {exc.lineno}: {exc.msg}") from None
    values: dict = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target, node = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            target, node = stmt.target.id, stmt.value
        else:
            raise WorkbookError(f"{where}: parameters cell line {stmt.lineno}: only `name = literal` "
                                "assignments are allowed")
        try:
            values[target] = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise WorkbookError(f"{where}: parameters cell line {stmt.lineno}: the value of {target!r} "
                                "is not a plain literal (numbers, strings, bools, None, lists, dicts)") from None
    return values


# --------------------------------------------------------------------------- parameter files


class _ParamsLoader(yaml.SafeLoader):
    """Safe YAML with two fixes for parameter files: ``1e-3`` is a float (YAML 1.1 reads it as a
    string) and a key given twice is an error instead of silently keeping the last value."""


_ParamsLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."))


def _construct_mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"key {key!r} is given twice",
                                                    key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_ParamsLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_overrides(path: Path, where: str | None = None) -> dict:
    """The mapping in a parameter file; a missing file or an empty one means no overrides."""
    where = where or str(path)
    if not path.exists():
        return {}
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_ParamsLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise WorkbookError(f"{where}{line}: invalid YAML: {exc.problem or exc.context}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise WorkbookError(f"{where}: invalid YAML: {one_line(exc)}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise WorkbookError(f"{where}: expected a mapping of parameter names to values, "
                            f"got {_type_name(data)}")
    return data


def _type_name(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, tuple):
        return "list"
    return type(value).__name__


def _expected_name(default) -> str:
    name = _type_name(default)
    return "float (or int)" if name == "float" else name


def _type_matches(default, value) -> bool:
    """Whether a parameter file's ``value`` may replace the cell's literal ``default`` (the outer
    type only; the elements of lists and dicts are checked by ``_element_problem``)."""
    if default is None:  # None in the cell: any type
        return True
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, float):  # an int is accepted where a float is expected
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(default, (list, tuple)):
        return isinstance(value, (list, tuple))
    return type(value) is type(default)


def _fits(template, value) -> bool:
    """``value`` may stand where the cell has ``template``, elements of nested lists included."""
    return _type_matches(template, value) and _element_problem(template, value, top=False) is None


def _element_problem(default, value, top: bool = True) -> str | None:
    """Why an element of the list (or a value of the dict) ``value`` does not fit the elements of
    the cell's ``default``; None when every element fits one of the default's elements. An empty
    default says nothing about its elements, so anything is accepted. Dicts are checked one level
    deep only: their inner mappings (a policy's hyperparameters) legitimately differ in keys and types."""
    if isinstance(default, (list, tuple)) and default and isinstance(value, (list, tuple)):
        templates, items, what = list(default), list(enumerate(value)), "a list of"
    elif top and isinstance(default, dict) and default and isinstance(value, dict):
        templates, items, what = list(default.values()), list(value.items()), "a mapping to"
    else:
        return None
    kinds = " or ".join(sorted({_expected_name(t) for t in templates}))
    for position, item in items:
        if not any(_fits(t, item) for t in templates):
            at = f"at position {position}" if what == "a list of" else f"for {position!r}"
            return f"expects {what} {kinds} (the notebook's default is {default!r}), got {item!r} " \
                   f"({_type_name(item)}) {at}"
    return None


# --------------------------------------------------------------------------- policy names


def _is_policy_key(key: str, default) -> str | None:
    """'list', 'mapping' or 'one' when the parameter holds policy names (by its name), else None."""
    if (key == "policies" or key.endswith("_policies")) and isinstance(default, (list, tuple)):
        return "list"
    if (key == "policy_params" or key.endswith("_policy_params")) and isinstance(default, dict):
        return "mapping"
    if (key == "policy" or key.endswith("_policy")) and isinstance(default, str):
        return "one"
    return None


def _policy_names(kind: str, value) -> list:
    if kind == "list":
        return list(value) if isinstance(value, (list, tuple)) else []
    if kind == "mapping":
        return list(value) if isinstance(value, dict) else []
    return [value]


_registries_cache: dict | None = None


def policy_registries() -> dict[str, list[str]]:
    """Registered policy names by model, imported on first use (the import compiles nothing)."""
    global _registries_cache
    if _registries_cache is None:
        found = {}
        for label, module, attribute in POLICY_REGISTRIES:
            try:
                registry = getattr(importlib.import_module(module), attribute)
            except (ImportError, AttributeError):
                continue
            found[label] = sorted(registry)
        _registries_cache = found
    return _registries_cache


def check_policy_names(overrides: dict, defaults: dict, where: str, registries=None) -> list[str]:
    """Problems with the policy names in ``policies``, ``*_policies``, ``policy_params`` and similar
    keys. The registry is the one holding every policy name of the notebook's own defaults (rising
    or commitment policies); a notebook whose defaults name no registered policy is not checked."""
    keys = {k: kind for k, d in defaults.items() if (kind := _is_policy_key(k, d))}
    if not any(k in overrides for k in keys):
        return []
    own = {n for k, kind in keys.items() for n in _policy_names(kind, defaults[k])}
    if not own:
        return []
    registries = policy_registries() if registries is None else registries
    valid = next((names for names in registries.values() if own <= set(names)), None)
    if valid is None:
        return []
    problems = []
    for key, kind in keys.items():
        if key not in overrides:
            continue
        for name in _policy_names(kind, overrides[key]):
            if name not in valid:
                problems.append(f"{where}: key {key!r} names unknown policy {name!r}{did_you_mean(str(name), valid)}; "
                                f"valid policies: {', '.join(valid)}")
    return problems


def check_overrides(overrides: dict, defaults: dict, where: str, registries=None) -> tuple[dict, list[str]]:
    """Check every key of ``overrides`` against the parameters cell ``defaults``.

    Returns the merged parameters (defaults updated by the overrides, ints promoted to float where
    the cell holds a float) and the list of one-line problems."""
    problems: list[str] = []
    settable = sorted(k for k in defaults if k != "output_dir")
    valid = ", ".join(settable) if settable else "(none)"
    merged = dict(defaults)
    for key, value in overrides.items():
        if not isinstance(key, str):
            problems.append(f"{where}: key {key!r} is not a parameter name; valid keys: {valid}")
        elif key == "output_dir":
            problems.append(f"{where}: key 'output_dir' is set by hb run; remove it from the file")
        elif key not in defaults:
            problems.append(f"{where}: unknown key {key!r}{did_you_mean(key, settable)}; valid keys: {valid}")
        elif not _type_matches(defaults[key], value):
            problems.append(f"{where}: key {key!r} expects {_expected_name(defaults[key])} (the notebook's default is "
                            f"{defaults[key]!r}), got {_type_name(value)} {value!r}")
        elif (element := _element_problem(defaults[key], value)) is not None:
            problems.append(f"{where}: key {key!r} {element}")
        else:
            merged[key] = float(value) if isinstance(defaults[key], float) else value
    if not problems:
        problems.extend(check_policy_names(overrides, defaults, where, registries))
    return merged, problems


def stray_parameter_files(wb: Workbook, profile: str) -> list[str]:
    """One line for each file of ``params/<profile>/`` that no notebook reads (a misspelt name)."""
    folder = wb.params_dir / profile
    names = wb.names()
    problems = []
    for path in sorted(folder.glob("*.y*ml")) if folder.is_dir() else []:
        if path.suffix == ".yml":
            problems.append(f"{wb.rel(path)}: parameter files end in .yaml; rename it to {path.stem}.yaml")
        elif path.stem not in names:
            problems.append(f"{wb.rel(path)}: no notebook named {path.stem!r}{did_you_mean(path.stem, names)}; "
                            "rename or delete the file")
    return problems


# --------------------------------------------------------------------------- the plan


@dataclass
class Plan:
    """What ``hb run`` will do for one notebook, after validation."""

    name: str
    title: str
    description: str
    params_file: str | None  # relative to root; None when the profile has no file for it
    overrides: dict
    parameters: dict  # merged defaults + overrides (without output_dir)
    problem: str | None = None  # the notebook cannot be read: it is reported as failed, the others run


def plan_run(wb: Workbook, profile: str, names: list[str]) -> list[Plan]:
    """Read and validate every selected notebook and its parameter file; raise ``ValidationError``
    listing every problem found (nothing has run at that point). A notebook that is not readable
    JSON gets a plan with ``problem`` set instead, so the others still run."""
    if profile not in PROFILES:
        raise WorkbookError(f"unknown profile {profile!r}; valid profiles: {', '.join(PROFILES)}")
    plans, problems = [], stray_parameter_files(wb, profile)
    for name in names:
        path = wb.notebook_path(name)
        params_path = wb.params_path(profile, name)
        try:
            nb = read_notebook(path, wb.rel(path))
        except WorkbookError as exc:
            plans.append(Plan(name, name, "", None, {}, {}, problem=str(exc)))
            continue
        try:
            defaults = parameters_of(nb, wb.rel(path))
            overrides = load_overrides(params_path, wb.rel(params_path))
        except WorkbookError as exc:
            problems.append(str(exc))
            continue
        if "output_dir" not in defaults:
            problems.append(f"{wb.rel(path)}: the parameters cell has no output_dir = \"\" "
                            "(hb run passes the output folder through it)")
        merged, found = check_overrides(overrides, defaults, wb.rel(params_path))
        problems.extend(found)
        merged.pop("output_dir", None)
        title, description = title_and_description(nb, name)
        plans.append(Plan(name, title, description, wb.rel(params_path) if params_path.exists() else None,
                          {k: merged[k] for k in overrides if k in merged}, merged))
    if problems:
        raise ValidationError(problems)
    return plans
