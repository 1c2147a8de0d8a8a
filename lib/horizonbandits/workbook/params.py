"""A notebook's parameters and the parameter files that override them, checked before anything runs.

- ``parameters_of``: the defaults of a notebook's ``parameters`` cell, parsed with ``ast`` (plain
  literal assignments only; nothing is executed).
- ``load_overrides`` (``paramfile``) / ``check_overrides``: ``params/<profile>/<name>.yaml`` read as
  safe, bounded YAML and checked key by key against those defaults: every value a plain literal
  (``literals``: nothing papermill could write into the injected cell as code), the type of each
  value at every depth of its lists and mappings, the hyperparameters in ``policy_params``-like
  mappings and the generator options against the library's own signatures, and the policy names in
  ``policies``-like keys against the library's registries.
- ``plan_run``: every selected notebook and its file checked, plus the profile's folder checked for
  files that belong to no notebook; every problem is one line, all reported together.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
from dataclasses import dataclass

from .base import PROFILES, ValidationError, WorkbookError, did_you_mean
from .literals import Budget, literal_problem, short
from .locate import Workbook, read_notebook, title_and_description
from .paramfile import load_overrides

__all__ = ["Plan", "check_overrides", "check_policy_names", "load_overrides", "parameters_cells", "parameters_of",
           "plan_run", "policy_registries", "stray_parameter_files"]

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


# --------------------------------------------------------------------------- values against the defaults


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
    type only; what lists and mappings hold is checked by ``_value_problem``)."""
    if default is None:  # None in the cell: any plain literal (``literal_problem`` has checked it)
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


def _value_problem(default, value, top: bool = True) -> str | None:
    """Why ``value`` cannot stand where the cell has ``default`` (None when it can), at every depth.

    A list's elements must each fit one of the default's elements (an empty default says nothing
    about them). A mapping's key that the default has is checked against the default's value for it;
    at the parameter's own level a key it does not have must fit one of its values; deeper, new keys
    are free (a policy's hyperparameters differ from policy to policy: ``_schema_problems`` checks
    those against the policy itself)."""
    if not _type_matches(default, value):
        return (f"expects {_expected_name(default)} (the notebook's default is {short(default)}), got "
                f"{_type_name(value)} {short(value)}")
    if isinstance(default, (list, tuple)) and default:
        kinds = " or ".join(sorted({_expected_name(t) for t in default}))
        for position, item in enumerate(value):
            if not any(_value_problem(t, item, top=False) is None for t in default):
                return (f"expects a list of {kinds} (the notebook's default is {short(default)}), got "
                        f"{short(item)} ({_type_name(item)}) at position {position}")
    elif isinstance(default, dict) and default:
        kinds = " or ".join(sorted({_expected_name(t) for t in default.values()}))
        for key, item in value.items():
            if key in default:
                inner = _value_problem(default[key], item, top=False)
                if inner is not None:
                    return f"for {key!r} {inner}"
            elif top and not any(_value_problem(t, item, top=False) is None for t in default.values()):
                return (f"expects a mapping to {kinds} (the notebook's default is {short(default)}), got "
                        f"{short(item)} ({_type_name(item)}) for {key!r}")
    return None


# --------------------------------------------------------------------------- mappings of keywords

# Mapping parameters whose keys an empty default ({} in the cell) cannot show, by name: what they hold.
# ``policy_params`` and ``*_policy_params`` (policy name -> its hyperparameters) are found by name too.
# the hyperparameters of one policy, without those the notebook sets itself (window_ablation sweeps eps)
POLICY_OF_MAPPING = {"cure_params": ("CURE-UCB", ("eps",))}
KEYWORDS_OF_MAPPING = {  # keyword arguments of the functions the notebook hands the mapping to
    "generator_options": (("horizonbandits.rising.instances", "ltf_random"),
                          ("horizonbandits.rising.generators", "concave_arm_specs"))}
SET_BY_THE_NOTEBOOK = {"rng", "T_ref", "H", "noise", "T_max"}  # ``instance_set`` passes these itself
NUMBERS_OF_MAPPING = {"costs"}  # name -> a number (an arm's cost coefficient)
# How a notebook's grids run: ``compute`` holds keyword arguments of ``experiments.run_grid`` that change no
# number (the notebook hands the mapping on with ``**compute``).
COMPUTE_MAPPING = {"compute": ("horizonbandits.experiments.grid", "run_grid", ("backend", "n_jobs", "cache", "address"))}
# Options of the instance family the notebook names in ``family``: which keys are allowed depends on that family,
# so the family registry (commit.instances, both models) checks them when the notebook builds it, with a one-line
# error that names the parameter. ``prop41_families`` (regret_phase_diagram) maps family names to their options and
# is checked the same way, family by family.
CHECKED_BY_FAMILY = {"family_options", "family_sweep", "prop41_families"}

_ANNOTATION_TYPES = {"float": (int, float), "int": (int,), "bool": (bool,), "str": (str,), "None": (type(None),),
                     "list": (list,), "tuple": (list,), "Sequence": (list,), "dict": (dict,), "Mapping": (dict,)}


class _Keyword:
    """What one keyword takes: its annotation's types, else its default's type (None: anything plain)."""

    def __init__(self, annotation, default):
        self.types, self.default = None, default
        if isinstance(annotation, str) and annotation:
            kinds = [part.strip().split("[")[0] for part in annotation.split("|")]
            if all(k in _ANNOTATION_TYPES for k in kinds):
                self.types = tuple(t for k in kinds for t in _ANNOTATION_TYPES[k])
                self.text = " or ".join(kinds)

    def problem(self, value) -> str | None:
        if self.types is not None:
            if isinstance(value, bool) and bool not in self.types:
                return f"expects {self.text}, got bool {value!r}"
            if not isinstance(value, self.types):
                return f"expects {self.text}, got {_type_name(value)} {short(value)}"
            return None
        if self.default is None or self.default is inspect.Parameter.empty:
            return None
        return _value_problem(self.default, value, top=False)


def _keywords_of(function) -> dict[str, _Keyword]:
    return {p.name: _Keyword(p.annotation, p.default) for p in inspect.signature(function).parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _policy_class(name: str):
    for _, module, attribute in POLICY_REGISTRIES:
        try:
            registry = getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError):
            continue
        if name in registry:
            return registry[name]
    return None


def _hyperparameters(name: str) -> dict[str, _Keyword] | None:
    """The hyperparameters of the registered policy ``name`` (its dataclass fields), None if unknown."""
    cls = _policy_class(name)
    if cls is None or not dataclasses.is_dataclass(cls):
        return None
    return {f.name: _Keyword(f.type if isinstance(f.type, str) else getattr(f.type, "__name__", ""),
                             None if f.default is dataclasses.MISSING else f.default)
            for f in dataclasses.fields(cls)}


def _keyword_problem(keywords: dict[str, _Keyword], mapping: dict, what: str) -> str | None:
    for key, value in mapping.items():
        if key not in keywords:
            valid = ", ".join(keywords) or "(none)"
            return f"has {key!r}, which is not {what}{did_you_mean(key, keywords)}; valid: {valid}"
        inner = keywords[key].problem(value)
        if inner is not None:
            return f"for {key!r} {inner}"
    return None


def _schema_problems(key: str, value, defaults: dict) -> str | None:
    """What the mapping parameter ``key`` holds, checked against the library (see the tables above)."""
    if not isinstance(value, dict):
        return None
    if _is_policy_key(key, defaults[key]) == "mapping":
        for policy, params in value.items():
            keywords = _hyperparameters(policy)
            if keywords is None:  # an unknown name: check_policy_names says so
                continue
            if not isinstance(params, dict):
                return f"for {policy!r} expects a mapping of its hyperparameters, got {_type_name(params)} {short(params)}"
            inner = _keyword_problem(keywords, params, f"a hyperparameter of {policy}")
            if inner is not None:
                return f"for {policy!r} {inner}"
    elif key in POLICY_OF_MAPPING:
        policy, swept = POLICY_OF_MAPPING[key]
        keywords = _hyperparameters(policy) or {}
        return _keyword_problem({k: v for k, v in keywords.items() if k not in swept}, value,
                                f"a hyperparameter of {policy} the notebook lets you set")
    elif key in KEYWORDS_OF_MAPPING:
        keywords: dict[str, _Keyword] = {}
        for module, name in KEYWORDS_OF_MAPPING[key]:
            keywords.update(_keywords_of(getattr(importlib.import_module(module), name)))
        keywords = {k: v for k, v in keywords.items() if k not in SET_BY_THE_NOTEBOOK}
        return _keyword_problem(keywords, value, "an option of the instance generators")
    elif key in COMPUTE_MAPPING:
        module, name, allowed = COMPUTE_MAPPING[key]
        keywords = _keywords_of(getattr(importlib.import_module(module), name))
        return _keyword_problem({k: keywords[k] for k in allowed}, value, "a compute option of run_grid")
    elif key in NUMBERS_OF_MAPPING:
        number = _Keyword("float", None)
        for name, item in value.items():
            if (inner := number.problem(item)) is not None:
                return f"for {name!r} {inner}"
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
                problems.append(f"{where}: key {key!r} names unknown policy {short(name)}{did_you_mean(str(name), valid)}; "
                                f"valid policies: {', '.join(valid)}")
    return problems


def check_overrides(overrides: dict, defaults: dict, where: str, registries=None) -> tuple[dict, list[str]]:
    """Check every key of ``overrides`` against the parameters cell ``defaults``.

    Each value must first be a plain literal within bounds (``literals``: anything else could change
    the injected cell's code), then fit the cell's default at every depth, then, for the mappings of
    policy hyperparameters and generator options, fit what the library takes. Returns the merged
    parameters (defaults updated by the overrides, ints promoted to float where the cell holds a
    float) and the list of one-line problems."""
    problems: list[str] = []
    settable = sorted(k for k in defaults if k != "output_dir")
    valid = ", ".join(settable) if settable else "(none)"
    merged = dict(defaults)
    budget = Budget()
    for key, value in overrides.items():
        if not isinstance(key, str):
            problems.append(f"{where}: key {short(key)} is not a parameter name; valid keys: {valid}")
        elif key == "output_dir":
            problems.append(f"{where}: key 'output_dir' is set by hb run; remove it from the file")
        elif key not in defaults:
            problems.append(f"{where}: unknown key {short(key)}{did_you_mean(key, settable)}; valid keys: {valid}")
        elif (bad := literal_problem(value, budget)) is not None:
            problems.append(f"{where}: key {key!r} {bad}")
            if budget.left < 0:  # the rest of the file is not looked at: it could be as large
                break
        elif (wrong := _value_problem(defaults[key], value)) is not None:
            problems.append(f"{where}: key {key!r} {wrong}")
        elif (wrong := _schema_problems(key, value, defaults)) is not None:
            problems.append(f"{where}: key {key!r} {wrong}")
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


def require_policy_names(names, registry, parameter: str = "policies", required=()) -> list[str]:
    """``names`` as a list, or a one-line ``ValueError`` naming the first that is not in ``registry`` (a
    typo is never dropped; the closest name is suggested) or a ``required`` name that is missing.

    For a notebook's own policy list at run time (``check_policy_names`` checks parameter files)."""
    names = list(names)
    for name in names:
        if name not in registry:
            raise ValueError(f"{parameter}={names!r} is not allowed: {name!r} is not a registered policy"
                             f"{did_you_mean(str(name), list(registry))}; expected names from {', '.join(registry)}")
    missing = [p for p in required if p not in names]
    if missing:
        raise ValueError(f"{parameter}={names!r} is not allowed: it must include {', '.join(map(repr, missing))}")
    return names


def profile_parameters(name: str, profile: str, root=None) -> dict:
    """The parameter values ``hb run --profile PROFILE`` gives notebook ``name`` beyond its parameters cell
    (``params/<profile>/<name>.yaml``, checked as ``hb run`` checks it), for trying a notebook at another size
    inside JupyterLab: run, in a cell right after the parameters cell,
    ``globals().update(profile_parameters("ltf_experiments", "smoke"))``, then the rest of the notebook.
    ``output_dir`` is never set here, so the figures and tables still go to ``outputs/interactive/``."""
    wb = Workbook.locate(root)
    if name not in wb.names():
        raise WorkbookError(f"name={name!r} is not allowed: expected one of the notebooks in {wb.notebooks_dir}")
    plan = plan_run(wb, profile, [name])[0]
    if plan.problem:
        raise WorkbookError(plan.problem)
    return {k: v for k, v in plan.overrides.items() if k != "output_dir"}
