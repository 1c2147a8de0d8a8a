"""``hb new``: start a notebook from an existing one, with its parameter files."""
from __future__ import annotations

import re
from pathlib import Path

from ..outputs import atomic_write_text
from .base import PROFILES, WorkbookError, did_you_mean, readable
from .locate import Workbook, read_notebook, title_line

# Notebook names double as figure-name prefixes and Python-ish identifiers; checked with fullmatch
# (``$`` also matches before a final newline, so "x\n" passed). Short enough that every file name a
# notebook writes (``<name>_<what>.png``) stays far below the 255 bytes a file name may have.
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]*")
MAX_NAME = 64
MAX_TITLE = 200
# Characters a title may not hold: the title becomes the notebook's first markdown line, which the
# pages render as HTML: "<" starts a tag (a <script> would run in html/<name>.html), "&" an entity,
# "[" and "]" a link (javascript: URLs), "`" and "\" change what follows.
TITLE_REFUSED = "<>&[]`\\"


def _humanise(name: str) -> str:
    text = name.replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def new_notebook(wb: Workbook, name: str, source: str, title: str | None = None) -> list[Path]:
    """Copy ``notebooks/<source>.ipynb`` to ``notebooks/<name>.ipynb`` (outputs stripped, title
    line replaced, figure/table name prefixes ``"<source>_`` renamed to ``"<name>_``) and its
    three parameter files (``{}`` where the source has none). Refuses to overwrite anything."""
    import nbformat

    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name) or len(name) > MAX_NAME:
        shown = name if len(name or "") <= 80 else name[:40] + "..."
        raise WorkbookError(f"notebook name {shown!r} is not allowed: expected at most {MAX_NAME} lowercase letters, "
                            "digits and underscores, starting with a letter (it prefixes the figure names)")
    source = Path(source).stem if source.endswith(".ipynb") else source
    names = wb.names()
    if source not in names:
        valid = ", ".join(names) if names else "(none)"
        raise WorkbookError(f"unknown notebook {source!r}{did_you_mean(source, names)}; valid names: {valid}")
    for other in names:
        if name.startswith(other + "_") or other.startswith(name + "_"):
            short, long = sorted((name, other), key=len)
            raise WorkbookError(f"notebook name {name!r} is not allowed: {long!r} starts with {short + '_'!r}, the "
                                f"prefix of notebook {short!r}'s files (notebooks name their files "
                                "<notebook>_<what>), so the two could write the same file; choose another name")
    target = wb.notebook_path(name)
    params_targets = [wb.params_path(p, name) for p in PROFILES]
    for path in (target, *params_targets):
        if path.exists():
            raise WorkbookError(f"{wb.rel(path)} already exists; choose another name")
    nb = read_notebook(wb.notebook_path(source), wb.rel(wb.notebook_path(source)))
    title = _humanise(name) if title is None else title
    check_title(title)
    _retitle(nb, title, source)
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


def check_title(title: str) -> None:
    """A one-line ``WorkbookError`` unless ``title`` is one line of plain text (see ``TITLE_REFUSED``)."""
    bad = sorted({c for c in title if c in TITLE_REFUSED or (not c.isprintable() and c != " ")})
    if not title.strip() or len(title) > MAX_TITLE or bad:
        why = (f"it holds {', '.join(repr(c) for c in bad)}" if bad else
               "it is empty" if not title.strip() else f"it has {len(title)} characters")
        raise WorkbookError(f"--title is not allowed: {why}; expected one line of plain text, at most {MAX_TITLE} "
                            f"characters, without {' '.join(TITLE_REFUSED)} (the title is rendered as markdown)")


def placeholder_description(source: str) -> str:
    return (f"A copy of `{source}`: replace this line with what this study shows (its claims are recorded as "
            "ours, not as tests of the papers).")


def _retitle(nb, title: str, source: str) -> None:
    """The copy's title, and a placeholder where the source's one-line description was (``hb list``
    shows it until the author writes one); the rest of the source's text stays for reference."""
    cell, lines, i = title_line(nb)
    placeholder = placeholder_description(source)
    if cell is None:
        import nbformat

        nb.cells.insert(0, nbformat.v4.new_markdown_cell(f"# {title}\n\n{placeholder}"))
        return
    if i is None:
        cell.source = f"# {title}\n\n{placeholder}\n\n" + cell.source
        return
    lines[i] = f"# {title}"
    first = next((j for j in range(i + 1, len(lines)) if lines[j].strip()), None)
    if first is None:
        lines += ["", placeholder]
    else:
        lines[first:first] = [placeholder, ""]
    cell.source = "\n".join(lines)
