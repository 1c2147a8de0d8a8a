"""Where a notebook run writes its figures and tables, written atomically.

Every notebook has a parameter ``output_dir``. ``hb run`` sets it to ``outputs/<profile>``; when a
person runs the notebook by hand it is "" and resolves to ``outputs/interactive`` in the
repository. Files are written to a temporary name in the same folder and renamed, so a crash never
leaves a half-written figure or table behind.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
FIGURE_FORMATS_ENV = "HB_FIGURE_FORMATS"
FIGURE_FORMATS = ("png", "pdf")  # what plotting.save_figure can write, in the order it writes them
PDF_PROFILES = ("paper",)  # output folders (profiles) whose figures a paper takes: PDF as well as PNG
_UMASK = os.umask(0)
os.umask(_UMASK)


def resolve_output_dir(output_dir: str | os.PathLike = "") -> Path:
    """The run's output folder (created): ``output_dir`` or ``<repo>/outputs/interactive`` when empty."""
    path = Path(output_dir) if str(output_dir) else REPO_ROOT / "outputs" / "interactive"
    path.mkdir(parents=True, exist_ok=True)
    return path


def requested_figure_formats(value: str | None = None) -> tuple[str, ...]:
    """The figure formats ``$HB_FIGURE_FORMATS`` (or ``value``) asks for: a comma-separated list of
    ``FIGURE_FORMATS`` (case and spaces ignored; unset or empty asks for none). A format it does not know
    is a one-line ValueError naming the variable and the allowed formats."""
    text = os.environ.get(FIGURE_FORMATS_ENV, "") if value is None else value
    asked = [item.strip().lower() for item in text.split(",")]
    asked = [item for item in asked if item]
    unknown = [item for item in asked if item not in FIGURE_FORMATS]
    if unknown:
        raise ValueError(f"{FIGURE_FORMATS_ENV}={text!r} is not allowed: unknown figure format {unknown[0]!r}; "
                         f"expected a comma-separated list of {', '.join(FIGURE_FORMATS)}")
    return tuple(dict.fromkeys(asked))


def figure_formats(output_dir: str | os.PathLike = "") -> tuple[str, ...]:
    """The formats a figure saved into ``output_dir`` is written in: PNG always (the pages show it), PDF when
    the output folder is a paper profile's (its name, as ``claims.Ledger`` reads the profile, is in
    ``PDF_PROFILES``), and whatever ``$HB_FIGURE_FORMATS`` adds."""
    wanted = {"png", *requested_figure_formats()}
    if resolve_output_dir(output_dir).name in PDF_PROFILES:
        wanted.add("pdf")
    return tuple(f for f in FIGURE_FORMATS if f in wanted)


def atomic_write(path: str | os.PathLike, write) -> Path:
    """Call ``write(tmp_path)`` on a temporary file beside ``path``, then rename it to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix + ".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600 files; give results the usual permissions
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    def write(tmp):
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
    return atomic_write(path, write)


def atomic_write_together(texts: dict, before_commit=None) -> list[Path]:
    """Write several text files so that they change together: every one goes to a temporary file beside
    it first, then ``before_commit()`` runs, then all are renamed. If a write fails (a full disk) or
    ``before_commit`` raises, the temporary files are removed and every file keeps its previous
    content, so files that describe one state (a manifest and its index page) never disagree. A
    rename needs no space, so once the writes succeeded the renames do too."""
    staged: list[tuple[str, Path]] = []
    try:
        for path, text in texts.items():
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix + ".tmp", dir=path.parent)
            staged.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.chmod(tmp, 0o666 & ~_UMASK)
        if before_commit is not None:
            before_commit()
        for tmp, path in staged:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)
        raise
    return [path for _, path in staged]
