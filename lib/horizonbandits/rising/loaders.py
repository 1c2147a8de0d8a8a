"""Mean tables from functions, CSV files or numpy files, with clear errors.

Each returns ``(means, names)``; ``RisingInstance.from_callables``, ``.from_csv`` and ``.from_npy``
build the instance from them (so this module does not import ``instances``, which imports it).
"""
from __future__ import annotations

from pathlib import Path
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import check_int, check_table_memory


def callables_table(funcs: Sequence[Callable], T_max: int, names=None) -> tuple[np.ndarray, list | None]:
    """mu_i(n) = funcs[i](n) for n = 0..T_max. Each function is called once on the integer array
    n = 0..T_max; a function that only takes scalars is called once per n instead."""
    T_max = check_int("T_max", T_max, 1)
    funcs = list(funcs)
    if len(funcs) < 2:
        raise ValueError(f"funcs has {len(funcs)} function(s): at least 2 arms are needed")
    check_table_memory("T_max", T_max, len(funcs), T_max, copies=4)
    n = np.arange(T_max + 1)
    rows = []
    for i, f in enumerate(funcs):
        if not callable(f):
            raise ValueError(f"funcs[{i}]={f!r} is not callable: expected a function of the pull count n")
        try:
            values = np.asarray(f(n), dtype=float)
            if values.shape != n.shape:
                raise TypeError
        except (TypeError, ValueError):
            values = np.array([float(f(int(k))) for k in n])
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise ValueError(f"funcs[{i}] returned {float(values[bad[0]])!r} at n={int(bad[0])}: every mean must be finite")
        rows.append(values)
    if names is None:
        names = [getattr(f, "__name__", f"arm {i}") for i, f in enumerate(funcs)]
        if len(set(names)) < len(names) or "<lambda>" in names:
            names = None
    return np.vstack(rows), names


def read_csv_exactly(path, what: str, **options):
    """A CSV file as a DataFrame of strings, every cell as written, or a one-line ValueError naming it.

    pandas' defaults change what a file says: "NA", "nan", "null" or an empty cell become NaN (an
    arm named NA vanished from a grouping, and arms "NA" and "nan" were merged), a header given
    twice (``a,a``) is renamed ``a.1``. Here cells stay text (the caller converts the numeric
    columns and names the first bad cell), and the header must name each column once."""
    import csv

    import pandas as pd
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            lines = (line for line in fh if not (options.get("comment") and line.startswith(options["comment"])))
            header = next(csv.reader(lines), None)
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is not a readable CSV file ({_first_line(exc)})") from None
    if not header:
        raise ValueError(f"{path} is empty: expected a CSV file of {what} (a header row, then the rows)")
    names = [h.strip() for h in header]
    if "" in names:
        raise ValueError(f"{path.name}: column {names.index('') + 1} of the header has no name")
    twice = sorted({h for h in names if names.count(h) > 1})
    if twice:
        raise ValueError(f"{path.name}: the header names {', '.join(repr(h) for h in twice)} more than once: "
                         "every column needs its own name")
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False, **options)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path} is empty: expected a CSV file of {what} (a header row, then the rows)") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{path} is not a readable CSV file ({_first_line(exc)})") from None
    if len(df.columns) == len(names):
        df.columns = names  # stripped, as the checks above saw them
    return df


def _numbers(column) -> np.ndarray:
    """A column of text as floats; an empty or non-numeric cell is NaN (the callers name it)."""
    import pandas as pd
    return pd.to_numeric(column.str.strip(), errors="coerce").to_numpy(dtype=float)


def csv_table(path, names=None) -> tuple[np.ndarray, list | None]:
    """Read mean curves from a CSV file in one of two layouts:

    - long: columns ``arm``, ``n``, ``mean``, one row per arm and pull count n = 0..T_max;
    - wide: one column per arm (its header is the arm's name), row k holding mu(k); an optional
      column ``n`` gives the pull counts explicitly and must then run 0, 1, ..., T_max.

    Every cell is read as written (``read_csv_exactly``): an arm named ``NA`` is an arm, an empty
    arm name, a header naming a column twice, a pull count that is not a whole number, gaps in n,
    missing or non-numeric values and arms of different lengths are errors naming the file, the arm
    and the first offending n.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path={str(path)!r} is not a file")
    df = read_csv_exactly(path, "mean curves")
    if len(df) == 0:
        raise ValueError(f"{path} has a header but no rows: expected one row per pull count n = 0..T_max")
    cols = [c.lower() for c in df.columns]
    if {"arm", "n", "mean"} <= set(cols):
        df.columns = cols
        arms = df["arm"].str.strip()
        if (arms == "").any():
            raise ValueError(f"{path.name}: line {int(np.flatnonzero(arms == '')[0]) + 2} has no arm name: every row "
                             "needs the name of its arm")
        df = df.assign(arm=arms, n=_numbers(df["n"]), mean=_numbers(df["mean"]))
        curves, arm_names = [], []
        for arm, group in df.groupby("arm", sort=False):
            group = group.sort_values("n", kind="stable")
            n, mean = group["n"].to_numpy(), group["mean"].to_numpy(dtype=float)
            _check_column(f"{path.name}: arm {arm!r}", n, mean)
            curves.append(mean)
            arm_names.append(str(arm))
    else:
        if "n" in cols:
            n = _numbers(df.iloc[:, cols.index("n")])
            df = df.drop(columns=df.columns[cols.index("n")])
        else:
            n = np.arange(len(df))
        curves, arm_names = [], []
        for col in df.columns:
            mean = _numbers(df[col])
            last = np.flatnonzero(~np.isnan(mean))
            # A shorter arm shows as trailing empty cells: that is a ragged file, not a NaN value.
            if last.size and last[-1] < len(mean) - 1 and np.all(np.isnan(mean[last[-1] + 1:])):
                raise ValueError(f"{path.name}: arm {col!r} has {last[-1] + 1} values but other arms have "
                                 f"{len(mean)}: every arm needs a mean for each n = 0..T_max")
            _check_column(f"{path.name}: arm {col!r}", n, mean)
            curves.append(mean)
            arm_names.append(str(col))
    lengths = {len(c) for c in curves}
    if len(lengths) > 1:
        detail = ", ".join(f"{a}: {len(c)}" for a, c in zip(arm_names, curves))
        raise ValueError(f"{path.name}: arms have different lengths ({detail}): every arm needs n = 0..T_max")
    return np.vstack(curves), names or arm_names


def read_npy(path) -> np.ndarray:
    """``np.load(path)`` without pickles, as an array of numbers; a truncated or corrupt file, an
    ``.npz`` archive, and an array of strings or records are each a one-line ValueError naming it."""
    try:
        array = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise ValueError(f"{path} is not a readable .npy file ({_first_line(exc)}): "
                         f"replace it with a complete copy") from None
    if not isinstance(array, np.ndarray):  # np.load opens an .npz archive as a mapping of arrays
        array.close()
        raise ValueError(f"{path} is an .npz archive, not an .npy array: save each curve with np.save")
    if array.dtype.kind not in "biuf" or array.dtype.names is not None:
        raise ValueError(f"{path} holds values of type {array.dtype} ({array.dtype.str}): expected numbers")
    return array


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _check_column(label: str, n: np.ndarray, mean: np.ndarray) -> None:
    n = n.astype(float)
    if np.any(np.isnan(n)):
        raise ValueError(f"{label}: a pull count n is missing or not a number")
    fractional = np.flatnonzero(n != np.floor(n))
    if fractional.size:  # astype(int64) truncated 1.5 and 2.7 to 1 and 2
        raise ValueError(f"{label}: pull count n={n[fractional[0]]:g} is not a whole number")
    expected = np.arange(len(n))
    if not np.array_equal(n.astype(np.int64), expected):
        k = int(np.flatnonzero(n.astype(np.int64) != expected)[0])
        raise ValueError(f"{label}: pull counts must run 0, 1, 2, ... without gaps; found n={n[k]:g} where n={k} was expected")
    bad = np.flatnonzero(~np.isfinite(mean))
    if bad.size:
        raise ValueError(f"{label}: mean at n={bad[0]} is missing or not a finite number")


def npy_table(paths, names=None, prepend_first: bool = False) -> tuple[np.ndarray, list | None]:
    """Read mean curves from numpy files: one 2-D file (K x (T_max+1)), or several 1-D files (one
    per arm, named after the file). ``prepend_first=True`` treats entry k of a 1-D file as mu(k+1)
    and sets mu(0) = mu(1) (the layout of the IMDB learning curves)."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    paths = [Path(p) for p in paths]
    for p in paths:
        if not p.is_file():
            raise ValueError(f"path={str(p)!r} is not a file")
    arrays = [read_npy(p) for p in paths]
    if len(arrays) == 1 and arrays[0].ndim == 2:
        means = arrays[0].astype(float)
        arm_names = names
    else:
        for p, a in zip(paths, arrays):
            if a.ndim != 1:
                raise ValueError(f"{p.name}: expected a 1-D curve per file, got shape {a.shape}")
        lengths = {a.size for a in arrays}
        if len(lengths) > 1:
            detail = ", ".join(f"{p.name}: {a.size}" for p, a in zip(paths, arrays))
            raise ValueError(f"curves have different lengths ({detail}): every arm needs the same n range")
        means = np.vstack(arrays).astype(float)
        arm_names = names or [p.stem for p in paths]
    if prepend_first:
        means = np.hstack([means[:, :1], means])
    bad = np.argwhere(~np.isfinite(means))
    if bad.size:
        i, n = bad[0]
        raise ValueError(f"arm {i} has a non-finite mean at column {n}: every mean must be finite")
    return means, arm_names
