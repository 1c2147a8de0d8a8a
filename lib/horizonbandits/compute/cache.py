"""The grids' on-disk result cache: one ``.hbc`` file per key, checked on load, written atomically.

Where: the ``cache_dir`` argument, else ``$HB_CACHE_DIR`` (``hb run`` sets it to the cache folder
of the outputs it writes to), else ``<repo>/outputs/cache``.

An entry holds the arrays of one task's result, the key it was computed for and a digest of the key
and the arrays (format: :func:`write_entry` / :func:`read_entry`, a one-line JSON header then the
arrays' raw bytes; an ``.npz`` took 0.4 ms of CPU to write and 0.7 ms to read, so a Figure 2
notebook's 22,000 entries cost ~25 CPU-s, measured 2026-12-01). On load, an entry that cannot be
read (truncated file, flipped bit, missing array), whose stored key is not the key asked for (a file
copied over another), whose digest does not match, or whose arrays fail the grid's own check (shape,
NaN, pulls out of range) counts as missing: it is recomputed and rewritten, and the grid prints one
warning line for all of them. A folder that cannot be written (read-only, a path that is a file)
does not stop a grid: the results are computed and returned, with one warning that they were not
cached.

The key includes :func:`code_digest`, a hash of the code that determines the numbers (see there),
so editing a simulator invalidates the old entries and editing the CLI does not.

The cache is trusted input. Its digest catches damage (a truncated file, a flipped bit, a file
copied over another), not a deliberate edit: an entry rewritten with other numbers and a digest
recomputed for them is read as computed. Whoever can write the folder can change the results.
:class:`Verifier` checks a sample instead: with ``HB_CACHE_VERIFY=N`` (``hb cache verify`` sets it)
each grid recomputes N of the entries it reads, compares them with what the cache holds and
appends what it found to ``$HB_CACHE_VERIFY_LOG``; in that mode nothing is written to the cache.
"""
from __future__ import annotations

import ast
import hashlib
import json
import os
import warnings
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..outputs import REPO_ROOT, atomic_write

PACKAGE_DIR = Path(__file__).resolve().parents[1]

# Files and folders of the package that cannot change a grid's numbers: the command line, the
# workbook runner, figures, progress bars, claims, statistics over finished tables, and the runner's own
# bookkeeping (cache, executor, the cached task loop, ``experiments.run_grid``'s dispatch and reshaping
# of finished tables, the package's re-exports), and Figure 2's tables and figures over a finished grid.
# Everything else (models, policies, rng, seeds, the task functions) is in the key, so a new
# numerical module is covered without touching this list.
NOT_NUMERICAL = ("cli.py", "workbook", "plotting.py", "progress.py", "claims", "outputs.py", "testing.py",
                 "stats.py", "_numba_cache.py", "timing.py", "compute", "experiments/__init__.py", "experiments/grid.py",
                 "experiments/figure2.py", "experiments/ablations.py")


class CacheWarning(UserWarning):
    """A cache entry was damaged (and recomputed) or the cache folder could not be written."""


def digest(*parts) -> str:
    """Hash of a sequence of parts (bytes as they are, a memoryview as the bytes it shows, anything
    else through its repr). A memoryview hashes like its ``tobytes()`` without the copy."""
    h = hashlib.blake2b(digest_size=20)
    for part in parts:
        if isinstance(part, memoryview):
            data = part.cast("B") if part.c_contiguous else part.tobytes()
        else:
            data = part if isinstance(part, bytes) else repr(part).encode()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def default_cache_dir() -> Path:
    """``$HB_CACHE_DIR`` if set and not empty, else ``<repo>/outputs/cache``."""
    env = os.environ.get("HB_CACHE_DIR")
    return Path(env) if env else REPO_ROOT / "outputs" / "cache"


# The two models' code, each left out of the other's digest: the rising grids (``experiments.rising_grid``,
# ``learning_curves``, ``experiments.dominance``) never run commit/ code, and the commitment and
# portfolio grids never run rising/ code or the rising grid's tasks (tests/test_cache.py checks the
# imports), so an edit to RAEC keeps the Figure 2 runs and an edit to CURE-UCB keeps the commitment runs.
MODEL_ONLY = {"rising": ("rising", "experiments/rising_grid.py", "experiments/dominance.py"), "commit": ("commit",)}


def _left_out(rel: str, names) -> bool:
    return any(rel == x or rel.startswith(x + "/") for x in names)


def numerical_files(package_dir: Path = PACKAGE_DIR, model: str | None = None) -> list[Path]:
    """The package's .py files that can change a grid's numbers (all but :data:`NOT_NUMERICAL`); with
    ``model`` ("rising" or "commit"), without the other model's own files (:data:`MODEL_ONLY`)."""
    skip = tuple(NOT_NUMERICAL)
    if model is not None:
        skip += tuple(x for other, files in MODEL_ONLY.items() if other != model for x in files)
    return [path for path in sorted(package_dir.rglob("*.py"))
            if not _left_out(path.relative_to(package_dir).as_posix(), skip)]


def code_digest(model: str | None = None, package_dir: Path = PACKAGE_DIR) -> str:
    """Hash of the code that determines the numbers: the numerical files, docstrings and comments left out.

    ``model`` ("rising" or "commit") leaves the other model's files out (see :data:`MODEL_ONLY`).
    Each file is hashed through its syntax tree without docstrings (comments are not in the
    tree), so rewording a docstring or a comment keeps the cache; any change to code does not.
    Memoised on the files' (path, mtime, size), so repeated calls are cheap.
    """
    if model is not None and model not in MODEL_ONLY:
        raise ValueError(f"model={model!r} is not allowed: expected one of {sorted(MODEL_ONLY)} or None")
    files = numerical_files(Path(package_dir), model)
    listing = tuple((p.as_posix(), p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    return _code_digest(str(package_dir), listing)


@lru_cache(maxsize=16)
def _code_digest(package_dir: str, listing) -> str:
    h = hashlib.blake2b(digest_size=20)
    for name, _, _ in listing:
        path = Path(name)
        rel = path.relative_to(package_dir).as_posix().encode()
        tree = _strip_docstrings(ast.parse(path.read_bytes(), filename=name))
        body = ast.dump(tree, annotate_fields=False).encode()
        h.update(len(rel).to_bytes(8, "little") + rel + len(body).to_bytes(8, "little") + body)
    return h.hexdigest()


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


MAGIC = b"HBCACHE1\n"


def write_entry(path, key: str, check: str, arrays: dict) -> None:
    """Write one entry: MAGIC, a JSON line {key, check, arrays: [[name, dtype, shape, nbytes], ...]}, the bytes."""
    parts = [(name, np.ascontiguousarray(a)) for name, a in arrays.items()]
    for name, a in parts:
        if a.dtype.hasobject:  # their bytes are pointers (np.savez without pickles refused them too)
            raise ValueError(f"arrays[{name!r}] holds Python objects: a cache entry stores numbers and text only")
    header = {"key": key, "check": check, "arrays": [[n, a.dtype.str, list(a.shape), a.nbytes] for n, a in parts]}
    with open(path, "wb") as fh:
        fh.write(MAGIC + json.dumps(header).encode() + b"\n")
        for _, a in parts:
            fh.write(a.tobytes())


def read_entry(path) -> tuple[str, str, dict]:
    """(key, check, arrays) of an entry; raises ValueError (or OSError) for a file that is not a whole entry."""
    with open(path, "rb") as fh:
        data = fh.read()
    if not data.startswith(MAGIC):
        raise ValueError("not a cache entry")
    end = data.index(b"\n", len(MAGIC))
    header = json.loads(data[len(MAGIC):end])
    at, arrays = end + 1, {}
    for name, dtype, shape, nbytes in header["arrays"]:
        if at + nbytes > len(data):
            raise ValueError("truncated")
        arrays[name] = np.frombuffer(data, dtype=np.dtype(dtype), count=nbytes // np.dtype(dtype).itemsize,
                                     offset=at).reshape(shape).copy()
        at += nbytes
    if at != len(data):
        raise ValueError(f"{len(data) - at} bytes after the arrays")
    return str(header["key"]), str(header["check"]), arrays


def _content_digest(key: str, arrays: dict) -> str:
    parts = [key]
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        parts += [name, a.dtype.str, a.shape, a.tobytes()]
    return digest(*parts)


class ResultCache:
    """Load and save task results by key under ``folder`` (``None``: no caching).

    ``load(key, check)`` returns the stored arrays, or None when the entry is missing or damaged;
    ``check(arrays)`` is the grid's own test of the content and returns a reason or None.
    Problems are collected and reported by :meth:`report` as one warning line each kind.
    """

    def __init__(self, folder, what: str = "run_grid"):
        self.folder = Path(folder) if folder is not None else None
        self.what = what
        self.verifier = Verifier.from_environment(what) if self.folder is not None else None
        self.damaged: list[tuple[Path, str]] = []
        self.unwritable: str | None = None
        self.unsaved = 0

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.hbc"

    def load(self, key: str, check=None) -> dict | None:
        if self.folder is None:
            return None
        path = self.path(key)
        try:
            if not path.is_file():
                return None
        except OSError:
            return None
        try:
            stored_key, stored_check, arrays = read_entry(path)
        except Exception as exc:  # noqa: BLE001 - any unreadable file is a cache miss
            self.damaged.append((path, f"unreadable ({type(exc).__name__}: {exc})"))
            return None
        if stored_key != key:
            reason = "stored for another key"
        elif stored_check != _content_digest(key, arrays):
            reason = "content does not match its digest"
        else:
            reason = check(arrays) if check is not None else None
        if reason:
            self.damaged.append((path, reason))
            return None
        return arrays

    def save(self, key: str, arrays: dict) -> None:
        if self.verifier is not None:  # verifying reads the cache, never writes it
            return
        if self.folder is None or self.unwritable is not None:
            self.unsaved += self.unwritable is not None
            return
        check = _content_digest(key, arrays)
        try:
            atomic_write(self.path(key), lambda tmp: write_entry(tmp, key, check, arrays))
        except OSError as exc:
            self.unwritable = f"{type(exc).__name__}: {exc.strerror or exc}"
            self.unsaved += 1

    def report(self) -> None:
        """One warning line for damaged entries (recomputed), one for an unwritable folder."""
        if self.damaged:
            path, reason = self.damaged[0]
            more = f" and {len(self.damaged) - 1} more" if len(self.damaged) > 1 else ""
            warnings.warn(f"{self.what}: {len(self.damaged)} damaged cache entr{'y' if len(self.damaged) == 1 else 'ies'}"
                          f" recomputed and rewritten ({path}: {reason}{more})", CacheWarning, stacklevel=3)
        if self.unwritable is not None:
            warnings.warn(f"{self.what}: cache folder {self.folder} cannot be written ({self.unwritable}); "
                          f"{self.unsaved} results computed but not cached", CacheWarning, stacklevel=3)
        self.damaged = []
        self.unwritable = None
        self.unsaved = 0


# --------------------------------------------------------------------------------------------
# Verifying a sample of entries by recomputing them
# --------------------------------------------------------------------------------------------

VERIFY_ENV = "HB_CACHE_VERIFY"
VERIFY_LOG_ENV = "HB_CACHE_VERIFY_LOG"
# Arrays of wall-clock seconds: a recomputation never gives the same ones.
VOLATILE = ("wall", "seconds")
# Floating-point results (a portfolio's weights from cvxpy) may differ in their last bits between
# machines; counts and arms must be equal.
FLOAT_RTOL = 1e-9


class Verifier:
    """Which cache hits of one grid call to recompute, and the record of what the comparison found."""

    def __init__(self, sample: int, log: Path | None, what: str):
        self.sample, self.log, self.what = sample, log, what

    @classmethod
    def from_environment(cls, what: str) -> Verifier | None:
        text = os.environ.get(VERIFY_ENV, "").strip()
        if not text:
            return None
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"{VERIFY_ENV}={text!r} is not allowed: expected a number of entries >= 1")
        log = os.environ.get(VERIFY_LOG_ENV, "").strip()
        return cls(int(text), Path(log) if log else None, what)

    def pick(self, keys) -> set:
        """Up to ``sample`` of ``keys``, chosen by a hash of each key: the same entries on every run
        of the same grid, spread over it without a pattern."""
        keys = list(keys)
        self._write({"what": self.what, "read": len(keys)})
        return set(sorted(keys, key=lambda k: digest("verify", k))[:self.sample])

    def compare(self, path, cached: dict, fresh: dict) -> bool:
        """Whether the recomputed ``fresh`` arrays equal the ``cached`` ones (timings left out); recorded."""
        names = sorted((set(cached) | set(fresh)) - set(VOLATILE))
        differ = [n for n in names if n not in cached or n not in fresh or not _same(cached[n], fresh[n])]
        self._write({"what": self.what, "entry": str(path), "differs": differ})
        return not differ

    def _write(self, record: dict) -> None:
        if self.log is None:
            return
        line = (json.dumps(record) + "\n").encode()
        fd = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)  # one append per line: notebooks
        try:                                                                   # running side by side interleave whole lines
            os.write(fd, line)
        finally:
            os.close(fd)


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        return bool(np.allclose(a, b, rtol=FLOAT_RTOL, atol=0.0, equal_nan=True))
    return bool(np.array_equal(a, b))
