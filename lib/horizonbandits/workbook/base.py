"""What every part of the workbook machinery shares: the one-line user errors and small helpers."""
from __future__ import annotations

import datetime as _dt
import difflib
import os
import sys
from pathlib import Path

# jsonschema, which nbformat (so papermill and nbconvert) imports, adds an optional "iri" format check
# when rfc3987_syntax is installed (jupyter-events pulls it in), and importing that module builds a
# Lark grammar: 2.9 CPU-s in every process that reads a notebook (hb run, each notebook's worker,
# the tests), measured 2026-12-01. No notebook schema uses that format, so the workbook's processes
# leave it out: a None entry makes the import fail, and jsonschema skips the check.
sys.modules.setdefault("rfc3987_syntax", None)

PROFILES = ("smoke", "default", "paper")
PACKAGE_DIR = Path(__file__).resolve().parents[1]  # lib/horizonbandits: where "the library" lives
KERNEL_NAME = "python3"


class WorkbookError(Exception):
    """A user mistake, reported as one line (no traceback)."""


class ValidationError(WorkbookError):
    """Several one-line problems found while checking parameter files."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def did_you_mean(word: str, options) -> str:
    close = difflib.get_close_matches(word, list(options), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def one_line(exc) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()


def readable(path: Path) -> Path:
    """Temporary files are created private (0600); results are ordinary files (umask applies)."""
    os.chmod(path, _FILE_MODE)
    return path


def unlink(*paths: Path) -> None:
    for path in paths:
        Path(path).unlink(missing_ok=True)
