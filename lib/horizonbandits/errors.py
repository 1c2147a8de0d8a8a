"""Parameter checks that raise one-line ValueErrors naming the parameter, the value and what is allowed."""
from __future__ import annotations

import difflib
import functools
import math
import os
import reprlib
from numbers import Integral, Real

import numpy as np

_SHORT = reprlib.Repr()
_SHORT.maxlist = _SHORT.maxtuple = 6
_SHORT.maxstring = _SHORT.maxother = 60


def _fail(name: str, value, allowed: str):
    raise ValueError(f"{name}={value!r} is not allowed: {allowed}")


def check_int(name: str, value, lo: int | None = None, hi: int | None = None) -> int:
    """Return value as int if it is an integer in [lo, hi]; otherwise raise a one-line ValueError."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        _fail(name, value, f"expected an integer{_range_text(lo, hi)}")
    value = int(value)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        _fail(name, value, f"expected an integer{_range_text(lo, hi)}")
    return value


def check_real(name: str, value, lo: float | None = None, hi: float | None = None,
               lo_open: bool = False, hi_open: bool = False) -> float:
    """Return value as float if it is a finite real in the interval; otherwise raise."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(float(value)):
        _fail(name, value, f"expected a finite number{_range_text(lo, hi, lo_open, hi_open)}")
    v = float(value)
    bad = (lo is not None and (v < lo or (lo_open and v == lo))) or (
        hi is not None and (v > hi or (hi_open and v == hi)))
    if bad:
        _fail(name, value, f"expected a number{_range_text(lo, hi, lo_open, hi_open)}")
    return v


def as_float_array(name: str, value, what: str = "an array of numbers", dtype=np.float64) -> np.ndarray:
    """``np.array(value, dtype)`` (a copy), or a one-line ValueError naming the parameter when
    numpy cannot convert it (strings, ragged nested lists); ``what`` says what is allowed."""
    try:
        return np.array(value, dtype=dtype, copy=True)
    except (TypeError, ValueError) as exc:
        why = "it is ragged" if "inhomogeneous" in str(exc) or "sequence" in str(exc) else "not every entry is a number"
        raise ValueError(f"{name}={_SHORT.repr(value)} is not allowed: expected {what} ({why})") from None


def check_choice(name: str, value, choices) -> object:
    """Return value if it is one of ``choices``; otherwise raise, suggesting the closest string choice."""
    if value not in choices:
        hint = ""
        if isinstance(value, str):
            close = difflib.get_close_matches(value, [c for c in choices if isinstance(c, str)], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
        _fail(name, value, "expected one of " + ", ".join(repr(c) for c in choices) + hint)
    return value


def _range_text(lo, hi, lo_open=False, hi_open=False) -> str:
    if lo is None and hi is None:
        return ""
    if hi is None:
        return f" {'>' if lo_open else '>='} {lo}"
    if lo is None:
        return f" {'<' if hi_open else '<='} {hi}"
    return f" in {'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"


# --------------------------------------------------------------------------------------------
# Memory: refuse sizes that cannot fit before numpy tries (and the machine swaps or dies)
# --------------------------------------------------------------------------------------------

_CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


@functools.lru_cache(maxsize=1)
def machine_memory() -> int | None:
    """Bytes of memory this process may use: the physical memory, or the container's (cgroup) limit
    when smaller; None when neither can be read. Read once per process (uniform_dominance_ltf builds
    5,000 instances)."""
    found = []
    try:
        found.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        pass
    for path in _CGROUP_LIMITS:
        try:
            with open(path) as fh:
                text = fh.read().strip()
        except OSError:
            continue
        if text.isdigit():
            found.append(int(text))
    found = [n for n in found if n > 0]
    return min(found) if found else None


def bytes_text(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} PB"


def check_memory(name: str, value, nbytes: float, what: str) -> None:
    """A one-line ValueError naming the parameter when ``what`` (for example "the mean table of K = 2
    arms x 1,000,001 pull counts") needs more than this machine's memory.

    ``nbytes`` is an estimate of the arrays the call allocates at once, made from the sizes before
    anything is allocated: ``figure1(T_max=10**9)`` asked for 32 GB on a 24 GB machine and used 8 GB
    before numpy failed."""
    memory = machine_memory()
    if memory is not None and nbytes > memory:
        raise ValueError(f"{name}={_SHORT.repr(value)} is not allowed: {what} needs about {bytes_text(nbytes)}, more "
                         f"than this machine's {bytes_text(memory)} of memory")


def check_table_memory(name: str, value, K: int, T_max: int, copies: int = 3) -> None:
    """``check_memory`` for a K x (T_max + 1) table of float64 built ``copies`` times over (a rising
    instance holds its means and their prefix sums, and its family builds the means once more)."""
    check_memory(name, value, 8.0 * (copies * K + 1) * (T_max + 1),
                 f"the mean table of K = {K:,} arms x T_max + 1 = {T_max + 1:,} pull counts, with its prefix sums and "
                 "the copies made while building it,")
