"""``hb new``: start a notebook from an existing one, with its parameter files."""
from __future__ import annotations

import re
from pathlib import Path

from ..outputs import atomic_write_text
from .base import PROFILES, WorkbookError, did_you_mean, readable
from .locate import Workbook, read_notebook, title_line

# Notebook names double as figure-name prefixes and Python-ish identifiers.
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")


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
        raise WorkbookError(f"unknown notebook {source!r}{did_you_mean(source, names)}; valid names: {valid}")
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
        written.append(readable(atomic_write_text(target, nbformat.writes(nb) + "\n")))
        for profile, dest in zip(PROFILES, params_targets):
            src = wb.params_path(profile, source)
            text = src.read_text(encoding="utf-8") if src.exists() else "{}\n"
            written.append(readable(atomic_write_text(dest, text)))
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    return written


def _retitle(nb, title: str) -> None:
    cell, lines, i = title_line(nb)
    if cell is None:
        import nbformat

        nb.cells.insert(0, nbformat.v4.new_markdown_cell(f"# {title}"))
    elif i is None:
        cell.source = f"# {title}\n\n" + cell.source
    else:
        lines[i] = f"# {title}"
        cell.source = "\n".join(lines)
