"""Run the workbook's notebooks with papermill and build ``outputs/<profile>/``.

The pieces, in the order ``hb run`` uses them:

- ``Workbook``: where ``notebooks/``, ``params/`` and ``outputs/`` live (overridable, so tests and
  users can run a copy of the workbook or write outputs elsewhere).
- ``Workbook.notebooks()``: every ``notebooks/*.ipynb``, found by scanning the folder, so a new
  notebook is registered by existing; each with its title and one-line description.
- ``parameters_of``: the defaults of a notebook's ``parameters`` cell, parsed with ``ast`` (plain
  literal assignments only; nothing is executed).
- ``load_overrides`` / ``check_overrides``: ``params/<profile>/<name>.yaml`` checked key by key and
  type by type against those defaults, for every selected notebook, before anything runs.
- ``execute_notebook``: one notebook through papermill into a temporary file that is then renamed to
  ``notebooks/<name>.ipynb`` (success) or ``failed/<name>.ipynb`` (failure), and rendered to HTML.
- ``build_manifest`` / ``render_index``: ``manifest.json`` and ``index.html``, written atomically.

User mistakes raise ``WorkbookError`` whose message is one line (``ValidationError`` carries one line
per problem); the CLI prints them without a traceback.
"""
from __future__ import annotations

import ast
import datetime as _dt
import difflib
import html
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .outputs import REPO_ROOT, atomic_write_text

PROFILES = ("smoke", "default", "paper")
# Notebook names double as figure-name prefixes and Python-ish identifiers.
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")
# Versions recorded in the manifest.
MANIFEST_PACKAGES = ("horizonbandits", "numpy", "scipy", "numba", "pandas", "matplotlib", "seaborn",
                     "papermill", "cvxpy", "dask")
PACKAGE_DIR = Path(__file__).resolve().parent
KERNEL_NAME = "python3"


class WorkbookError(Exception):
    """A user mistake, reported as one line (no traceback)."""


class ValidationError(WorkbookError):
    """Several one-line problems found while checking parameter files."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


# --------------------------------------------------------------------------- where things are


@dataclass(frozen=True)
class NotebookInfo:
    name: str
    path: Path
    title: str
    description: str


@dataclass(frozen=True)
class Workbook:
    """The folders of one workbook: ``root/notebooks``, ``root/params`` and the outputs root."""

    root: Path
    outputs_root: Path

    @classmethod
    def locate(cls, root: str | os.PathLike | None = None,
               outputs: str | os.PathLike | None = None) -> "Workbook":
        """``root`` if given, else ``$HB_ROOT``, else the nearest folder upward from the current one
        holding ``notebooks/`` and ``params/``, else the repository this package lives in."""
        root = root or os.environ.get("HB_ROOT")
        if root:
            found = Path(root).expanduser().resolve()
            if not (found / "notebooks").is_dir():
                raise WorkbookError(f"workbook root {found} has no notebooks/ folder")
        else:
            found = _search_root()
        outputs = outputs or os.environ.get("HB_OUTPUTS")
        out = Path(outputs).expanduser().resolve() if outputs else found / "outputs"
        return cls(found, out)

    @property
    def notebooks_dir(self) -> Path:
        return self.root / "notebooks"

    @property
    def params_dir(self) -> Path:
        return self.root / "params"

    def notebook_path(self, name: str) -> Path:
        return self.notebooks_dir / f"{name}.ipynb"

    def params_path(self, profile: str, name: str) -> Path:
        return self.params_dir / profile / f"{name}.yaml"

    def profile_dir(self, profile: str) -> Path:
        return self.outputs_root / profile

    def rel(self, path: Path) -> str:
        """``path`` relative to the root when inside it (for messages)."""
        try:
            return str(Path(path).relative_to(self.root))
        except ValueError:
            return str(path)

    def names(self) -> list[str]:
        return sorted(p.stem for p in self.notebooks_dir.glob("*.ipynb") if not p.name.startswith("."))

    def notebooks(self) -> list[NotebookInfo]:
        return [self.info(name) for name in self.names()]

    def info(self, name: str) -> NotebookInfo:
        path = self.notebook_path(name)
        title, description = title_and_description(read_notebook(path, self.rel(path)), name)
        return NotebookInfo(name, path, title, description)

    def select(self, only: list[str] | None) -> list[str]:
        """The notebook names to run: all, or ``only`` (checked, duplicates dropped, order kept)."""
        names = self.names()
        if not only:
            return names
        chosen = []
        for raw in only:
            name = Path(raw).stem if raw.endswith(".ipynb") else raw
            if name not in names:
                valid = ", ".join(names) if names else "(none: the notebooks/ folder is empty)"
                raise WorkbookError(f"unknown notebook {raw!r}{_did_you_mean(name, names)}; valid names: {valid}")
            if name not in chosen:
                chosen.append(name)
        return chosen


def _search_root() -> Path:
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "notebooks").is_dir() and (folder / "params").is_dir():
            return folder
    if (REPO_ROOT / "notebooks").is_dir():
        return REPO_ROOT
    raise WorkbookError("cannot find the workbook (a folder with notebooks/ and params/); "
                        "run hb inside it, or pass --root DIR or set HB_ROOT")


def _did_you_mean(word: str, options) -> str:
    close = difflib.get_close_matches(word, list(options), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


# --------------------------------------------------------------------------- reading notebooks


def read_notebook(path: Path, where: str | None = None):
    import nbformat

    where = where or str(path)
    try:
        return nbformat.read(str(path), as_version=4)
    except FileNotFoundError:
        raise WorkbookError(f"{where}: no such notebook") from None
    except Exception as exc:  # malformed JSON or schema: one line naming the file
        raise WorkbookError(f"{where}: not a readable notebook ({_one_line(exc)})") from None


def _title_line(nb):
    """(first markdown cell, its lines, index of its ``# Title`` line or None); (None, [], None)
    when the notebook has no markdown cell."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            lines = cell.source.splitlines()
            return cell, lines, next((i for i, line in enumerate(lines) if line.startswith("# ")), None)
    return None, [], None


def title_and_description(nb, name: str) -> tuple[str, str]:
    """Title = the ``# Title`` line of the first markdown cell; description = the first non-empty
    line after it. Missing pieces fall back to the notebook name and ""."""
    _, lines, i = _title_line(nb)
    if i is None:
        return name, ""
    rest = [ln.strip() for ln in lines[i + 1:] if ln.strip()]
    return lines[i][2:].strip() or name, (rest[0] if rest else "")


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
        raise WorkbookError(f"{where}: invalid YAML: {_one_line(exc)}") from None
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


def _type_matches(default, value) -> bool:
    """Whether a parameter file's ``value`` may replace the cell's literal ``default``."""
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


def check_overrides(overrides: dict, defaults: dict, where: str) -> tuple[dict, list[str]]:
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
            problems.append(f"{where}: unknown key {key!r}{_did_you_mean(key, settable)}; valid keys: {valid}")
        elif not _type_matches(defaults[key], value):
            expected = _type_name(defaults[key])
            if expected == "float":
                expected = "float (or int)"
            problems.append(f"{where}: key {key!r} expects {expected} (the notebook's default is "
                            f"{defaults[key]!r}), got {_type_name(value)} {value!r}")
        else:
            merged[key] = float(value) if isinstance(defaults[key], float) else value
    return merged, problems


@dataclass
class Plan:
    """What ``hb run`` will do for one notebook, after validation."""

    name: str
    title: str
    description: str
    params_file: str | None  # relative to root; None when the profile has no file for it
    overrides: dict
    parameters: dict  # merged defaults + overrides (without output_dir)


def plan_run(wb: Workbook, profile: str, names: list[str]) -> list[Plan]:
    """Read and validate every selected notebook and its parameter file; raise ``ValidationError``
    listing every problem found (nothing has run at that point)."""
    if profile not in PROFILES:
        raise WorkbookError(f"unknown profile {profile!r}; valid profiles: {', '.join(PROFILES)}")
    plans, problems = [], []
    for name in names:
        path = wb.notebook_path(name)
        params_path = wb.params_path(profile, name)
        try:
            nb = read_notebook(path, wb.rel(path))
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


# --------------------------------------------------------------------------- executing one notebook


@dataclass
class Task:
    """Everything a (possibly separate) process needs to run one notebook; picklable."""

    name: str
    notebook: str
    cwd: str
    profile_dir: str
    overrides: dict
    all_names: list[str]
    progress_bar: bool = False


@dataclass
class Result:
    name: str
    status: str  # "ok" or "failed"
    wall_time_s: float
    started: str
    error: str | None = None  # one line: "ValueError: n_arms=1 is not allowed: ..."
    library_error: bool = False  # a ValueError raised inside horizonbandits (a user's bad value)
    failed_cell: int | None = None
    traceback_tail: list[str] = field(default_factory=list)
    executed: str | None = None  # relative to the profile folder
    html: str | None = None
    html_error: str | None = None


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_FRAME = re.compile(r"^File (.+?):\d+", re.MULTILINE)


def _one_line(exc) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _raised_in_library(traceback_text: str) -> bool:
    """Whether the innermost frame of an IPython traceback lies in the horizonbandits package."""
    frames = _FRAME.findall(traceback_text)
    if not frames:
        return False
    innermost = frames[-1].strip()
    try:
        return Path(innermost).resolve().is_relative_to(PACKAGE_DIR)
    except (OSError, ValueError):
        return False


def owner_of(stem: str, names) -> str | None:
    """The notebook a figure or table belongs to: the longest name ``N`` with ``stem == N`` or
    ``stem`` starting with ``N_`` (notebooks save ``<notebook>_<what>``)."""
    best = None
    for name in names:
        if (stem == name or stem.startswith(name + "_")) and (best is None or len(name) > len(best)):
            best = name
    return best


def _clear_owned(profile_dir: Path, name: str, all_names) -> None:
    """Remove the figures and tables a previous run of ``name`` left, so the folder shows this run."""
    for sub in ("figures", "tables"):
        folder = profile_dir / sub
        if folder.is_dir():
            for path in folder.iterdir():
                if path.is_file() and owner_of(path.stem, all_names) == name:
                    path.unlink(missing_ok=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()


def _readable(path: Path) -> Path:
    """Temporary files are created private (0600); results are ordinary files (umask applies)."""
    os.chmod(path, _FILE_MODE)
    return path


def _unlink(*paths: Path) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def execute_notebook(task: Task) -> Result:
    """Run one notebook with papermill (kernel python3, cwd = notebooks/, ``output_dir`` = the
    profile folder), then render it to HTML. Never raises for a failing notebook: the failure is
    described in the returned ``Result``."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    profile_dir = Path(task.profile_dir)
    good = profile_dir / "notebooks" / f"{task.name}.ipynb"
    bad = profile_dir / "failed" / f"{task.name}.ipynb"
    running = profile_dir / ".running"
    running.mkdir(parents=True, exist_ok=True)
    _clear_owned(profile_dir, task.name, task.all_names)
    fd, tmp_name = tempfile.mkstemp(prefix=f"{task.name}.", suffix=".ipynb", dir=running)
    os.close(fd)
    tmp = Path(tmp_name)
    kernel_log = tmp.with_suffix(".kernel.log")
    started = _now()
    result = Result(task.name, "ok", 0.0, started)
    t0 = time.perf_counter()
    try:
        with open(kernel_log, "wb") as log:
            try:
                papermill.execute_notebook(
                    task.notebook, str(tmp), parameters=dict(task.overrides, output_dir=str(profile_dir)),
                    kernel_name=KERNEL_NAME, cwd=task.cwd, progress_bar=task.progress_bar,
                    log_output=False, request_save_on_cell_execute=True,
                    kernel_manager_class=_kernel_manager_logging_to(log),
                    extra_arguments=["--IPKernelApp.log_level=ERROR"])  # no TCP notice in the log
            except PapermillExecutionError as exc:
                tail = _ANSI.sub("", "\n".join(exc.traceback or []))
                result.status = "failed"
                result.error = f"{exc.ename}: {' '.join(str(exc.evalue).split())}"
                result.failed_cell = exc.exec_count
                result.library_error = exc.ename == "ValueError" and _raised_in_library(tail)
                # drop blank context lines ("      3 ") so the tail shows code and messages
                result.traceback_tail = [ln for ln in tail.splitlines() if not re.fullmatch(r"\s*\d*\s*", ln)][-8:]
            except Exception as exc:  # the kernel died, could not start, timed out...
                result.status = "failed"
                result.error = f"{type(exc).__name__}: {_one_line(exc)}"
                log.flush()
                lines = kernel_log.read_text(encoding="utf-8", errors="replace").splitlines()
                result.traceback_tail = [f"kernel: {ln}" for ln in lines if ln.strip()][-8:]
        result.wall_time_s = round(time.perf_counter() - t0, 3)
        if result.status == "ok":
            good.parent.mkdir(exist_ok=True)
            os.replace(_readable(tmp), good)
            _unlink(bad, profile_dir / "failed" / f"{task.name}.html")
            final, html_path = good, profile_dir / "html" / f"{task.name}.html"
        else:
            _unlink(good, profile_dir / "html" / f"{task.name}.html")
            if tmp.exists() and tmp.stat().st_size > 0:
                bad.parent.mkdir(exist_ok=True)
                os.replace(_readable(tmp), bad)
                final, html_path = bad, bad.with_suffix(".html")
            else:
                final = html_path = None
                _unlink(bad, bad.with_suffix(".html"))
    finally:
        _unlink(tmp, kernel_log)
    if final is not None:
        result.executed = final.relative_to(profile_dir).as_posix()
        try:
            render_html(final, html_path, Path(task.cwd))
            result.html = html_path.relative_to(profile_dir).as_posix()
        except Exception as exc:  # a rendering problem must not hide the run's own result
            result.html_error = f"{type(exc).__name__}: {_one_line(exc)}"
    return result


def _kernel_manager_logging_to(log):
    """A kernel manager whose kernels write their stderr (ipykernel's own log: TCP notices,
    shutdown chatter, crash reports) to ``log`` instead of the terminal ``hb`` draws on."""
    from jupyter_client.manager import AsyncKernelManager

    class KernelManagerWithLog(AsyncKernelManager):
        async def start_kernel(self, **kw):
            kw.setdefault("stderr", log)
            return await super().start_kernel(**kw)

    return KernelManagerWithLog


def render_html(ipynb: Path, html_path: Path, resources_dir: Path) -> Path:
    """Convert an executed notebook to HTML with its images embedded."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(ipynb), as_version=4)
    exporter = HTMLExporter(embed_images=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"path": str(resources_dir)}})
    return _readable(atomic_write_text(html_path, body))


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


# --------------------------------------------------------------------------- manifest and index


def git_state(root: Path) -> dict:
    """Commit hash and whether the working tree differs from it (None outside a git repository)."""
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)

    try:
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return {"commit": None, "dirty": None}
        status = git("status", "--porcelain")
        dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
        return {"commit": head.stdout.strip(), "dirty": dirty}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def package_versions() -> dict:
    from importlib import metadata

    versions = {}
    for name in MANIFEST_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def read_manifest(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def outputs_by_notebook(profile_dir: Path, names) -> dict[str | None, dict[str, list[str]]]:
    """Figures (PNG) and tables (CSV) of the profile folder grouped by owning notebook
    (``None`` for files no notebook name prefixes)."""
    groups: dict[str | None, dict[str, list[str]]] = {}
    for sub, pattern in (("figures", "*.png"), ("tables", "*.csv")):
        folder = profile_dir / sub
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob(pattern)):
            if path.name.startswith("."):
                continue
            owner = owner_of(path.stem, names)
            groups.setdefault(owner, {"figures": [], "tables": []})[sub].append(f"{sub}/{path.name}")
    return groups


def build_manifest(wb: Workbook, profile: str, plans: list[Plan], results: list[Result],
                   merge: bool, argv: list[str] | None = None) -> dict:
    """The manifest of this run; with ``merge`` the entries of notebooks not run this time are
    kept from the previous manifest (when those notebooks still exist)."""
    profile_dir = wb.profile_dir(profile)
    git = git_state(wb.root)
    entries: dict[str, dict] = {}
    existing = set(wb.names())
    previous = read_manifest(profile_dir / "manifest.json") if merge else None
    if previous and previous.get("profile") == profile:
        for name, entry in previous.get("notebooks", {}).items():
            if name in existing:
                entries[name] = entry
    by_name = {r.name: r for r in results}
    for plan in plans:
        res = by_name.get(plan.name)
        if res is None:
            continue
        entries[plan.name] = {
            "title": plan.title,
            "description": plan.description,
            "status": res.status,
            "wall_time_s": res.wall_time_s,
            "started": res.started,
            "git_commit": git["commit"],
            "git_dirty": git["dirty"],
            "params_file": plan.params_file,
            "overrides": plan.overrides,
            "parameters": dict(plan.parameters, output_dir=str(profile_dir)),
            "executed": res.executed,
            "html": res.html,
            "error": res.error,
            "failed_cell": res.failed_cell,
        }
    groups = outputs_by_notebook(profile_dir, existing)
    for name, entry in entries.items():
        entry["figures"] = groups.get(name, {}).get("figures", [])
        entry["tables"] = groups.get(name, {}).get("tables", [])
    return {
        "profile": profile,
        "generated": _now(),
        "command": argv,
        "git": git,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": package_versions(),
        "notebooks": {name: entries[name] for name in sorted(entries)},
    }


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1200px;
padding:0 1rem;color:#222;line-height:1.45}
h1{margin-bottom:.2rem} .meta{color:#555;font-size:.9rem}
table.summary{border-collapse:collapse;margin:1rem 0;width:100%}
table.summary th,table.summary td{border-bottom:1px solid #ddd;padding:.35rem .6rem;text-align:left}
.status{font-weight:600;padding:.05rem .45rem;border-radius:.3rem;font-size:.85rem}
.ok{background:#d8f3dc;color:#1b5e20} .failed{background:#ffd6d6;color:#8b0000}
.notrun{background:#eee;color:#555}
section.nb{border-top:2px solid #ccc;margin-top:2rem;padding-top:.5rem}
.gallery{display:flex;flex-wrap:wrap;gap:1rem}
figure{margin:0;max-width:360px} figure img{max-width:360px;max-height:280px;border:1px solid #ddd}
figcaption{font-size:.8rem;word-break:break-all} pre{background:#f6f6f6;padding:.5rem;overflow-x:auto}
code{background:#f3f3f3;padding:0 .2rem}
"""


def _e(text) -> str:
    return html.escape("" if text is None else str(text), quote=True)


def _status_badge(status: str | None) -> str:
    cls = {"ok": "ok", "failed": "failed"}.get(status or "", "notrun")
    return f'<span class="status {cls}">{_e(status or "not run")}</span>'


def _gallery(files: dict[str, list[str]]) -> str:
    parts = []
    if files.get("figures"):
        items = []
        for png in files["figures"]:
            pdf = png[:-4] + ".pdf"
            items.append(f'<figure><a href="{_e(png)}"><img src="{_e(png)}" alt="{_e(png)}" loading="lazy"></a>'
                         f'<figcaption>{_e(Path(png).stem)} (<a href="{_e(pdf)}">pdf</a>)</figcaption></figure>')
        parts.append('<div class="gallery">' + "".join(items) + "</div>")
    if files.get("tables"):
        links = ", ".join(f'<a href="{_e(csv)}">{_e(Path(csv).name)}</a>' for csv in files["tables"])
        parts.append(f"<p>Tables: {links}</p>")
    return "\n".join(parts) if parts else "<p><em>No figures or tables.</em></p>"


def render_index(wb: Workbook, manifest: dict, infos: list[NotebookInfo]) -> str:
    """A self-contained page (inline CSS, relative links) showing every notebook of the workbook:
    title, description, status, wall time, its rendered HTML and its figures and tables."""
    profile = manifest["profile"]
    profile_dir = wb.profile_dir(profile)
    entries = manifest.get("notebooks", {})
    names = [i.name for i in infos]
    groups = outputs_by_notebook(profile_dir, names)
    git = manifest.get("git", {})
    commit = git.get("commit") or "unknown"
    dirty = {True: " (with uncommitted changes)", False: "", None: ""}[git.get("dirty")]
    counts = {s: sum(1 for e in entries.values() if e.get("status") == s) for s in ("ok", "failed")}

    rows, sections = [], []
    for info in infos:
        entry = entries.get(info.name, {})
        title = entry.get("title") or info.title
        wall = f"{entry['wall_time_s']:.1f} s" if entry.get("wall_time_s") is not None else ""
        rendered = (f'<a href="{_e(entry["html"])}">rendered notebook</a>' if entry.get("html") else "")
        rows.append(f'<tr><td><a href="#{_e(info.name)}">{_e(title)}</a></td><td><code>{_e(info.name)}</code></td>'
                    f"<td>{_status_badge(entry.get('status'))}</td><td>{wall}</td><td>{rendered}</td></tr>")
        links = []
        if entry.get("html"):
            links.append(rendered)
        if entry.get("executed"):
            links.append(f'<a href="{_e(entry["executed"])}">executed .ipynb</a>')
        error = (f"<pre>{_e(entry['error'])}</pre>" if entry.get("error") else "")
        params = json.dumps(entry.get("parameters", {}), indent=1, sort_keys=True, default=str)
        run_info = f" &middot; run {_e(entry['started'])}" if entry.get("started") else ""
        if entry.get("git_commit"):
            run_info += f", commit {_e(entry['git_commit'][:10])}{'+' if entry.get('git_dirty') else ''}"
        sections.append(
            f'<section class="nb" id="{_e(info.name)}"><h2>{_e(title)}</h2>'
            f"<p>{_e(info.description)}</p>"
            f'<p class="meta"><code>{_e(info.name)}</code> &middot; {_status_badge(entry.get("status"))}'
            f"{' &middot; ' + wall if wall else ''}{run_info}"
            f"{' &middot; ' + ' &middot; '.join(links) if links else ''}</p>{error}"
            f"<details><summary>Parameters</summary><pre>{_e(params)}</pre></details>"
            f"{_gallery(groups.get(info.name, {}))}</section>")
    if None in groups:
        sections.append('<section class="nb" id="other-files"><h2>Other figures and tables</h2>'
                        "<p>Files whose name starts with no notebook's name.</p>"
                        f"{_gallery(groups[None])}</section>")
    versions = ", ".join(f"{k} {v}" for k, v in manifest.get("packages", {}).items() if v)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>horizonbandits: {_e(profile)} profile</title><style>{_CSS}</style></head>
<body>
<h1>horizonbandits workbook: <code>{_e(profile)}</code> profile</h1>
<p class="meta">Generated {_e(manifest.get("generated"))} &middot; commit <code>{_e(commit)}</code>{_e(dirty)}
&middot; {counts['ok']} ok, {counts['failed']} failed, {len(infos) - counts['ok'] - counts['failed']} not run
&middot; <a href="manifest.json">manifest.json</a></p>
<table class="summary"><thead><tr><th>Notebook</th><th>Name</th><th>Status</th><th>Wall time</th><th></th></tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table>
{chr(10).join(sections)}
<p class="meta">Python {_e(manifest.get("python"))} &middot; {_e(versions)}</p>
</body></html>
"""


def write_reports(wb: Workbook, profile: str, plans: list[Plan], results: list[Result], merge: bool,
                  argv: list[str] | None = None) -> tuple[Path, Path]:
    profile_dir = wb.profile_dir(profile)
    manifest = build_manifest(wb, profile, plans, results, merge, argv)
    infos = [wb.info(name) for name in wb.names()]
    manifest_path = _readable(atomic_write_text(profile_dir / "manifest.json",
                                                json.dumps(manifest, indent=2, default=str) + "\n"))
    index_path = _readable(atomic_write_text(profile_dir / "index.html", render_index(wb, manifest, infos)))
    return manifest_path, index_path


# --------------------------------------------------------------------------- running many


def describe_failure(res: Result) -> list[str]:
    """The lines ``hb run`` prints for a failed notebook: one line for a library ValueError (a
    user's out-of-range parameter), else the failing cell's error and a short traceback tail."""
    if res.library_error:
        return [f"{res.name}: {res.error}"]
    cell = f" in cell [{res.failed_cell}]" if res.failed_cell is not None else ""
    lines = [f"{res.name}: failed{cell}: {res.error}"]
    lines += [f"    | {ln}" for ln in res.traceback_tail]
    if res.executed:
        lines.append(f"    (partial output: {res.executed})")
    return lines


@contextmanager
def exclusive_profile_dir(wb: Workbook, profile_dir: Path):
    """Hold an exclusive lock on ``profile_dir`` while a run writes into it.

    Two runs writing the same figures, tables and manifest would interleave their files; the second
    one stops with a one-line error instead. The lock is an advisory ``flock`` on a hidden file, so
    the operating system releases it when the process ends, even after a crash (no stale locks)."""
    try:
        import fcntl
    except ImportError:  # no flock on this platform: run unguarded
        yield
        return
    path = profile_dir / ".hb-run.lock"
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise WorkbookError(f"another hb run (pid {holder}) is writing to {wb.rel(profile_dir)}; wait for it "
                                f"to finish or give this run its own folder with --outputs DIR") from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)


def run(wb: Workbook, profile: str, only: list[str] | None = None, jobs: int = 1,
        argv: list[str] | None = None, out=None) -> int:
    """Validate, execute, and write the reports. Returns the exit status: 0 when every notebook
    succeeded, 1 when some failed. Raises ``WorkbookError`` (nothing run) on user mistakes, and when
    another run is writing into the same profile folder."""
    if jobs < 1:
        raise WorkbookError(f"--jobs={jobs} is not allowed: expected an integer >= 1")
    names = wb.select(only)
    plans = plan_run(wb, profile, names)
    if not plans:
        print(f"no notebooks in {wb.notebooks_dir}; nothing to run", file=out or sys.stdout)
        return 0
    profile_dir = wb.profile_dir(profile)
    profile_dir.mkdir(parents=True, exist_ok=True)
    with exclusive_profile_dir(wb, profile_dir):
        return _run_locked(wb, profile, names, plans, profile_dir, only, jobs, argv, out)


def _run_locked(wb: Workbook, profile: str, names: list[str], plans: list[Plan], profile_dir: Path,
                only: list[str] | None, jobs: int, argv: list[str] | None, out) -> int:
    from tqdm.auto import tqdm

    out = out or sys.stdout
    # Quieter kernels: no jupyter path-migration notice, no debugger frozen-modules warning.
    os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    all_names = wb.names()
    show_cells = jobs == 1 and sys.stderr.isatty()
    tasks = [Task(p.name, str(wb.notebook_path(p.name)), str(wb.notebooks_dir), str(profile_dir),
                  p.overrides, all_names, show_cells) for p in plans]
    results: list[Result] = []
    t0 = time.perf_counter()
    with tqdm(total=len(tasks), desc=f"hb run {profile}", unit="notebook", file=sys.stderr) as bar:
        def report(res: Result):
            results.append(res)
            if res.status == "ok":
                bar.write(f"ok      {res.name} ({res.wall_time_s:.1f} s)", file=out)
            else:
                bar.write("\n".join(describe_failure(res)), file=out)
            if res.html_error:
                bar.write(f"{res.name}: could not render HTML: {res.html_error}", file=out)
            bar.update(1)

        if jobs == 1 or len(tasks) == 1:
            for task in tasks:
                bar.set_postfix_str(task.name)
                report(execute_notebook(task))
        else:
            _run_parallel(tasks, jobs, report)
    shutil.rmtree(profile_dir / ".running", ignore_errors=True)
    results.sort(key=lambda r: names.index(r.name))
    _, index_path = write_reports(wb, profile, plans, results, merge=bool(only), argv=argv)
    failed = [r.name for r in results if r.status != "ok"]
    summary = (f"{profile}: {len(results)} notebook(s), {len(results) - len(failed)} ok, {len(failed)} failed"
               f"{' (' + ', '.join(failed) + ')' if failed else ''} in {time.perf_counter() - t0:.1f} s; "
               f"see {index_path}")
    print(summary, file=out)
    return 1 if failed else 0


def _run_parallel(tasks: list[Task], jobs: int, report) -> None:
    """Each notebook in its own worker process (spawned: no forked kernel-manager state); every
    notebook is independent and seeded, so the results do not depend on ``jobs``."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)),
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(execute_notebook, task): task for task in tasks}
        try:
            for future in as_completed(futures):
                task = futures[future]
                try:
                    res = future.result()
                except Exception as exc:  # the worker process itself broke
                    res = Result(task.name, "failed", 0.0, _now(), error=f"{type(exc).__name__}: {_one_line(exc)}")
                report(res)
        except BaseException:
            for future in futures:
                future.cancel()
            raise


# --------------------------------------------------------------------------- hb new


def _humanise(name: str) -> str:
    text = name.replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def new_notebook(wb: Workbook, name: str, source: str, title: str | None = None) -> list[Path]:
    """Copy ``notebooks/<source>.ipynb`` to ``notebooks/<name>.ipynb`` (outputs stripped, title
    line replaced, figure/table name prefixes ``"<source>_`` renamed to ``"<name>_``) and its
    three parameter files (``{}`` where the source has none). Refuses to overwrite anything."""
    import nbformat

    if not NAME_PATTERN.match(name or ""):
        raise WorkbookError(f"notebook name {name!r} is not allowed: expected lowercase letters, digits and "
                            "underscores, starting with a letter (it prefixes the figure names)")
    source = Path(source).stem if source.endswith(".ipynb") else source
    names = wb.names()
    if source not in names:
        valid = ", ".join(names) if names else "(none)"
        raise WorkbookError(f"unknown notebook {source!r}{_did_you_mean(source, names)}; valid names: {valid}")
    target = wb.notebook_path(name)
    params_targets = [wb.params_path(p, name) for p in PROFILES]
    for path in (target, *params_targets):
        if path.exists():
            raise WorkbookError(f"{wb.rel(path)} already exists; choose another name")
    nb = read_notebook(wb.notebook_path(source), wb.rel(wb.notebook_path(source)))
    title = title or _humanise(name)
    if "\n" in title:
        raise WorkbookError("--title must be one line")
    _retitle(nb, title)
    prefix = re.compile(r"""(["'])""" + re.escape(source) + r"(?=_|\1)")
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        cell.metadata.pop("papermill", None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            cell.source = prefix.sub(lambda m: m.group(1) + name, cell.source)
    nb.metadata.pop("papermill", None)
    written = []
    try:
        written.append(_readable(atomic_write_text(target, nbformat.writes(nb) + "\n")))
        for profile, dest in zip(PROFILES, params_targets):
            src = wb.params_path(profile, source)
            text = src.read_text(encoding="utf-8") if src.exists() else "{}\n"
            written.append(_readable(atomic_write_text(dest, text)))
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    return written


def _retitle(nb, title: str) -> None:
    cell, lines, i = _title_line(nb)
    if cell is None:
        import nbformat

        nb.cells.insert(0, nbformat.v4.new_markdown_cell(f"# {title}"))
    elif i is None:
        cell.source = f"# {title}\n\n" + cell.source
    else:
        lines[i] = f"# {title}"
        cell.source = "\n".join(lines)
