"""CPU seconds per part of a notebook run, for ``bench/bench_fixed_cost.py``; off unless ``$HB_TIMINGS`` is set.

With ``HB_TIMINGS=FILE`` every process of a run (``hb run``, its worker, the notebook's kernel) charges
its own CPU time (``time.process_time``: every thread of the process) to the part it is in and appends
``<pid>\t<part>\t<seconds>`` lines to FILE (one ``write`` of a few lines at a time, in append mode, so the
processes' lines do not mix). A process is always in one part: its base part (:func:`switch`), or the
innermost :func:`part` block around it; time spent in a nested block is charged to that block only.
In the kernel, :func:`kernel_ready` (run by the kernel before the first cell, see
``workbook.execute``) also charges every import (the outermost one, wherever it happens) to
``imports``, and the cells' figure display (matplotlib's inline flush after a cell) to ``display``.

Unset, :func:`part` returns one shared null context and :func:`switch` and :func:`flush` return at
once: the markers cost nothing. This module imports nothing of the package (the kernel loads it
before anything else, so its own start is not charged to the package's imports).
"""
from __future__ import annotations

import atexit
import contextlib
import functools
import os
import time

ENV = "HB_TIMINGS"
_NULL = contextlib.nullcontext()
_FILE = os.environ.get(ENV) or None
_acc: dict[str, float] = {}
_stack: list[str] = ["start"]
_last = 0.0  # process_time() counts from the start of the process: the first part gets the interpreter's start


def enabled() -> bool:
    return _FILE is not None


def _charge() -> None:
    global _last
    now = time.process_time()
    _acc[_stack[-1]] = _acc.get(_stack[-1], 0.0) + now - _last
    _last = now


class _Part:
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        _charge()
        _stack.append(self.name)

    def __exit__(self, *exc):
        _charge()
        _stack.pop()
        return False


def part(name: str):
    """A ``with`` block whose CPU time is charged to ``name`` (a null context when timing is off)."""
    return _Part(name) if _FILE is not None else _NULL


def begin(name: str) -> None:
    """Name this process's first part (everything since the process started, until the next :func:`switch`)."""
    if _FILE is not None and len(_stack) == 1:
        _stack[0] = name


def charged(name: str):
    """Decorator: the function's CPU time is charged to ``name``; with timing off, the function itself."""
    def wrap(fn):
        if _FILE is None:
            return fn

        @functools.wraps(fn)
        def timed(*args, **kwargs):
            with _Part(name):
                return fn(*args, **kwargs)
        return timed
    return wrap


def switch(name: str) -> None:
    """Charge the time so far to the current base part; from now on the base part is ``name``."""
    if _FILE is None:
        return
    _charge()
    _stack[0] = name


def flush() -> None:
    """Append this process's parts charged since the last flush to ``$HB_TIMINGS``."""
    if _FILE is None:
        return
    _charge()
    lines = "".join(f"{os.getpid()}\t{name}\t{sec:.6f}\n" for name, sec in _acc.items() if sec > 0)
    _acc.clear()
    if lines:
        fd = os.open(_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, lines.encode())
        finally:
            os.close(fd)


def forked() -> None:
    """In a process just forked (``workbook.kernel_pool``): forget the parent's parts; its CPU time is the
    parent's, and this process's own count starts again from zero."""
    global _last
    _acc.clear()
    _stack[:] = ["start"]
    _last = 0.0


if _FILE is not None:
    atexit.register(flush)


def read(path) -> dict[int, dict[str, float]]:
    """The lines of a timings file summed: pid -> part -> CPU seconds."""
    out: dict[int, dict[str, float]] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            pid, name, sec = line.rstrip("\n").split("\t")
            parts = out.setdefault(int(pid), {})
            parts[name] = parts.get(name, 0.0) + float(sec)
    return out


# --------------------------------------------------------------------------- in the notebook's kernel

_depth = 0


def _timed_imports() -> None:
    """Charge every outermost import of this process to ``imports``: ``import`` calls the import system's
    ``_find_and_load`` through the module attribute, for modules not yet loaded only."""
    import importlib._bootstrap as bootstrap

    inner = bootstrap._find_and_load

    def find_and_load(name, import_):
        global _depth
        if _depth:
            return inner(name, import_)
        _depth += 1
        try:
            with _Part("imports"):
                return inner(name, import_)
        finally:
            _depth -= 1

    bootstrap._find_and_load = find_and_load


def kernel_ready(shell=None) -> None:
    """In the kernel, before the first cell: what came before is ``kernel start``; then imports are timed
    and each cell is ``cells`` (its figures' inline display ``display``), between cells ``kernel idle``."""
    if _FILE is None:
        return
    begin("kernel start")
    switch("kernel idle")
    _timed_imports()
    if shell is None:
        from IPython import get_ipython
        shell = get_ipython()
    # pre_run_cell, the cell, post_execute (ours first: matplotlib's inline flush is registered later, when
    # pyplot is imported), post_run_cell.
    shell.events.register("pre_run_cell", lambda *a: switch("cells"))
    shell.events.register("post_execute", lambda *a: switch("display"))

    def after_cell(*a):
        switch("kernel idle")
        flush()  # the kernel may be killed after its last cell

    shell.events.register("post_run_cell", after_cell)
