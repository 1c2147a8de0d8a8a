"""What every part of the workbook machinery shares: the one-line user errors and small helpers."""
from __future__ import annotations

import datetime as _dt
import difflib
import errno
import os
import shutil
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


# --------------------------------------------------------------------------- a full disk

_DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
_DISK_FULL_TEXTS = ("No space left on device", "Disk quota exceeded", "[Errno 28]", "[Errno 122]")


def is_disk_full(exc: BaseException) -> bool:
    """An ``OSError`` saying the disk (or the user's quota) is full."""
    return isinstance(exc, OSError) and exc.errno in _DISK_FULL_ERRNOS


def mentions_disk_full(*texts) -> bool:
    """Whether an error text (from a kernel's traceback or a worker's log) says the disk is full."""
    return any(marker in str(text) for text in texts if text for marker in _DISK_FULL_TEXTS)


def _size(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def disk_full_text(folder: Path, shown: str | None = None) -> str:
    """'the disk holding outputs/smoke ran out of space (4.0 KB free now, of 800.0 MB)'."""
    try:
        usage = shutil.disk_usage(folder)
        room = f" ({_size(usage.free)} free now, of {_size(usage.total)})"
    except OSError:
        room = ""
    return f"the disk holding {shown or folder} ran out of space{room}"
