"""Where a workbook's ``notebooks/``, ``params/`` and ``outputs/`` are, and what each notebook is called.

Notebooks are found by scanning ``notebooks/*.ipynb``, so a new notebook is registered by existing.
A notebook that cannot be read (invalid JSON, wrong schema) is still listed, with the reason in
``NotebookInfo.problem``, so one broken file never hides the others.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..outputs import REPO_ROOT
from .base import WorkbookError, did_you_mean, one_line


@dataclass(frozen=True)
class NotebookInfo:
    name: str
    path: Path
    title: str
    description: str
    problem: str | None = None  # one line when the notebook cannot be read


@dataclass(frozen=True)
class Workbook:
    """The folders of one workbook: ``root/notebooks``, ``root/params`` and the outputs root."""

    root: Path
    outputs_root: Path

    @classmethod
    def locate(cls, root: str | os.PathLike | None = None,
               outputs: str | os.PathLike | None = None) -> Workbook:
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

    @property
    def cache_dir(self) -> Path:
        """The result cache of the library grids run by ``hb run`` (unless ``$HB_CACHE_DIR`` is set)."""
        return self.outputs_root / "cache"

    @property
    def catalogue_file(self) -> Path | None:
        """The workbook's own claims catalogue (``<root>/catalogue.yaml``), None when it uses the package's."""
        path = self.root / "catalogue.yaml"
        return path if path.is_file() else None

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
        """Every notebook, readable or not (see ``NotebookInfo.problem``)."""
        return [self.info_or_problem(name) for name in self.names()]

    def info(self, name: str) -> NotebookInfo:
        """Title and description of a readable notebook; ``WorkbookError`` when it cannot be read."""
        path = self.notebook_path(name)
        title, description = title_and_description(read_notebook(path, self.rel(path)), name)
        return NotebookInfo(name, path, title, description)

    def info_or_problem(self, name: str) -> NotebookInfo:
        try:
            return self.info(name)
        except WorkbookError as exc:
            return NotebookInfo(name, self.notebook_path(name), name, "", problem=str(exc))

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
                raise WorkbookError(f"unknown notebook {raw!r}{did_you_mean(name, names)}; valid names: {valid}")
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


def read_notebook(path: Path, where: str | None = None):
    import nbformat

    where = where or str(path)
    try:
        return nbformat.read(str(path), as_version=4)
    except FileNotFoundError:
        raise WorkbookError(f"{where}: no such notebook") from None
    except Exception as exc:  # malformed JSON or schema: one line naming the file
        raise WorkbookError(f"{where}: not a readable notebook ({one_line(exc)})") from None


def title_line(nb):
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
    _, lines, i = title_line(nb)
    if i is None:
        return name, ""
    rest = [ln.strip() for ln in lines[i + 1:] if ln.strip()]
    return lines[i][2:].strip() or name, (rest[0] if rest else "")
