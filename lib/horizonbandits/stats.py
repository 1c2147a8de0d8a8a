"""Statistics over finished grid tables: intervals, win rates, paired differences, slopes.

- :func:`normal_interval`: mean and normal-approximation half-width.
- :func:`regret_summary`, :func:`win_rates`, :func:`win_rate_matrix`, :func:`paired_differences`:
  the rising grid's summaries over instances, with percentile-bootstrap intervals over instances
  (resampling indices from ``numpy.random.default_rng(seed)``, so the same table and seed give
  the same interval).
- :func:`difference`: the difference of two independent estimates with its interval.
- :func:`ratio`: the ratio of two independent positive estimates (log-scale interval); :func:`summary_estimate`,
  :func:`worst_rows`: read the commitment grid's summary rows; :func:`log_line`: a log-log line.
- :func:`slope`, :func:`half_slopes`: least-squares slopes of log y on log x (scaling exponents).
- :func:`bootstrap_band`: a seeded, vectorised percentile-bootstrap interval of a mean, for seaborn's
  ``errorbar=`` (seaborn's own bootstrap is unseeded and loops in Python).

Nothing here changes a grid's numbers, so editing this file keeps the result cache.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import check_choice, check_real


def normal_quantile(q):
    """The standard normal's quantile at ``q``: ``scipy.stats.norm.ppf(q)`` bit for bit (scipy.stats computes it
    with ``scipy.special.ndtri``; ``tests/test_stats.py`` checks the equality), without importing scipy.stats,
    which costs a notebook about 1 CPU-s of imports."""
    from scipy.special import ndtri
    return ndtri(q)


def student_t_quantile(q, df):
    """Student's t quantile at ``q`` with ``df`` degrees of freedom: ``scipy.stats.t.ppf(q, df)`` bit for bit
    (``scipy.special.stdtrit``, as scipy.stats computes it, which also gives -inf at ``q = 0`` where stdtrit
    says +inf), without importing scipy.stats."""
    from scipy.special import stdtrit
    return np.where(np.asarray(q) == 0, -np.inf, stdtrit(df, q))[()]


def normal_interval(values, axis=0, level: float = 0.95):
    """Mean and normal-approximation confidence half-width along ``axis`` (half-width 0 for one value)."""
    values = np.asarray(values, dtype=float)
    n = values.shape[axis]
    mean = values.mean(axis=axis)
    half = normal_quantile(0.5 + level / 2) * values.std(axis=axis, ddof=1) / np.sqrt(n) if n > 1 else np.zeros_like(mean)
    return mean, half



def fmt_number(x: float, digits: int = 3) -> str:
    """A number in few characters, for ledger text: 0.932, 1,460, 2.10e-05, 12.5."""
    if x is None or math.isnan(float(x)):
        return "nan"
    x = float(x)
    ax = abs(x)
    if ax != 0 and (ax < 1e-3 or ax >= 1e7):
        return f"{x:.{digits - 1}e}"
    if ax >= 100:
        return f"{x:,.0f}"
    if ax >= 1:
        return f"{x:.{max(digits - 1, 1)}f}".rstrip("0").rstrip(".")
    return f"{x:.{digits}g}"


@dataclass(frozen=True)
class Estimate:
    """A number with its interval: ``value`` in ``[low, high]`` at ``level``, over ``n`` ``unit``.

    ``percent=True`` prints it as a percentage (win rates, shares). The verdict rules of
    :mod:`horizonbandits.claims.rules` read the interval, never the point alone. Build one with
    :func:`mean_estimate`, :func:`bootstrap_estimate`, :func:`proportion_estimate` or directly from
    a bootstrap interval computed elsewhere.
    """

    value: float
    low: float
    high: float
    n: int
    unit: str = "seeds"
    level: float = 0.95
    percent: bool = False

    def __post_init__(self):
        for name in ("value", "low", "high"):
            object.__setattr__(self, name, float(getattr(self, name)))
        object.__setattr__(self, "n", int(self.n))
        vals = (self.low, self.value, self.high)
        if not any(map(math.isnan, vals)) and not (self.low <= self.value <= self.high):
            raise ValueError(f"Estimate needs low <= value <= high, got low={self.low!r}, value={self.value!r}, "
                             f"high={self.high!r}")

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def fmt(self, x: float) -> str:
        return f"{x:.0%}" if self.percent else fmt_number(x)

    @property
    def interval(self) -> str:
        return f"[{self.fmt(self.low)}, {self.fmt(self.high)}]"

    @property
    def n_text(self) -> str:
        return f"{self.n:,} {self.unit}"

    def __str__(self) -> str:
        return f"{self.fmt(self.value)} {self.interval}"

    def scaled(self, factor: float) -> Estimate:
        """The same estimate times a positive ``factor`` (for example divided by a paper's value)."""
        if not factor > 0:
            raise ValueError(f"factor={factor!r} is not allowed: expected a positive number")
        return Estimate(self.value * factor, self.low * factor, self.high * factor, self.n, self.unit, self.level,
                        self.percent)


def mean_estimate(values, unit: str = "seeds", level: float = 0.95, percent: bool = False) -> Estimate:
    """Mean of ``values`` with a Student-t interval (degenerate interval for one value or no spread)."""
    level = check_real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("values=[] is not allowed: an estimate needs at least one value")
    m = float(x.mean())
    half = float(student_t_quantile(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else 0.0
    return Estimate(m, m - half, m + half, x.size, unit, level, percent)


def bootstrap_estimate(values, unit: str = "instances", n_boot: int = 2000, level: float = 0.95, seed: int = 0,
                       percent: bool = False) -> Estimate:
    """Mean of ``values`` with a seeded percentile-bootstrap interval (as :func:`regret_summary` uses)."""
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("values=[] is not allowed: an estimate needs at least one value")
    lo, hi = bootstrap_band(x, n_boot=n_boot, level=level, seed=seed)
    m = float(x.mean())
    return Estimate(m, min(lo, m), max(hi, m), x.size, unit, level, percent)


def binomial_half_width(p: float, n: int, level: float = 0.95) -> float:
    """Normal-approximation half-width of a share ``p`` measured on ``n`` units: the sampling error a
    paper's reported share carries when the paper gives its sample size but no interval."""
    return float(normal_quantile(0.5 + level / 2) * math.sqrt(p * (1 - p) / n))


def proportion_estimate(successes: int, n: int, unit: str = "runs", level: float = 0.95) -> Estimate:
    """Share ``successes / n`` with a Wilson score interval (sensible at 0 % and 100 %)."""
    n = int(n)
    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(f"successes={successes!r}, n={n!r} is not allowed: expected 0 <= successes <= n and n >= 1")
    z = normal_quantile(0.5 + level / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return Estimate(p, max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)), n, unit, level, percent=True)



def difference(a: Estimate, b: Estimate) -> Estimate:
    """``a - b`` for two independent estimates at the same level, with an interval.

    Each end adds in quadrature the distances of ``a`` and ``b`` to the ends of their intervals that
    move the difference that way: for two Wilson intervals (:func:`proportion_estimate`) this is
    Newcombe's hybrid score interval of a difference of shares, for two symmetric intervals of means
    the usual half-width sqrt(h_a^2 + h_b^2). ``n`` is the smaller of the two sample sizes.
    """
    if a.level != b.level:
        raise ValueError(f"a.level={a.level!r}, b.level={b.level!r} is not allowed: the intervals must have the same level")
    d = a.value - b.value
    below = math.hypot(a.value - a.low, b.high - b.value)
    above = math.hypot(a.high - a.value, b.value - b.low)
    return Estimate(d, d - below, d + above, min(a.n, b.n), a.unit, a.level, a.percent and b.percent)


def _bootstrap_index(n: int, n_boot: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


def bootstrap_band(values, n_boot: int = 1000, level: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """(low, high) percentile-bootstrap interval of the mean of ``values``: the interval seaborn draws
    with ``errorbar=("ci", 95)``, but the same at every run (resampling from ``default_rng(seed)``) and
    computed in one array operation. seaborn's version took 13 of new_instance_family's 22 s with a
    warm cache (500 bands, 2026-12-01); pass this function as ``errorbar=bootstrap_band``."""
    x = np.asarray(values, dtype=float)
    if x.size < 2:
        return (float(x.mean()), float(x.mean())) if x.size else (np.nan, np.nan)
    boot = x[_bootstrap_index(x.size, n_boot, seed)].mean(axis=1)
    return float(np.quantile(boot, (1 - level) / 2)), float(np.quantile(boot, (1 + level) / 2))


def _per_instance_means(df: pd.DataFrame, T=None) -> pd.DataFrame:
    sub = df if T is None else df[df["T"] == T]
    if sub.empty:
        raise ValueError(f"T={T!r} is not allowed: the table has horizons {sorted(df['T'].unique().tolist())}")
    return sub.groupby(["problem", "policy"], observed=True)["regret"].mean().unstack("policy")


def regret_summary(df: pd.DataFrame, n_boot: int = 2000, level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Mean regret per (policy, T) over instances and seeds, with a bootstrap interval over instances."""
    level = check_real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    rows = []
    for T, sub in df.groupby("T"):
        means = _per_instance_means(sub)
        idx = _bootstrap_index(len(means), n_boot, seed)
        for policy in means.columns:
            m = means[policy].to_numpy()
            boot = m[idx].mean(axis=1)
            rows.append({"policy": policy, "T": T, "mean_regret": m.mean(),
                         "ci_low": np.quantile(boot, (1 - level) / 2), "ci_high": np.quantile(boot, (1 + level) / 2),
                         "n_instances": m.size})
    return pd.DataFrame(rows)


def win_rates(df: pd.DataFrame, T: int, n_boot: int = 2000, level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Pairwise win rates at horizon T as in Figure 2 (b, c, e, f).

    Per instance, each policy's mean regret over seeds; the win rate of ``row`` over ``col`` is the
    share of instances on which row's mean regret is lower (a tie counts one half). The interval
    is a percentile bootstrap over instances. Returns one row per ordered pair (row != col).
    """
    level = check_real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    means = _per_instance_means(df, T)
    names = list(means.columns)
    m = means.to_numpy()
    idx = _bootstrap_index(m.shape[0], n_boot, seed)
    rows = []
    for a, row in enumerate(names):
        for b, col in enumerate(names):
            if a == b:
                continue
            score = (m[:, a] < m[:, b]) + 0.5 * (m[:, a] == m[:, b])
            boot = score[idx].mean(axis=1)
            rows.append({"row": row, "col": col, "T": T, "win_rate": score.mean(),
                         "ci_low": np.quantile(boot, (1 - level) / 2), "ci_high": np.quantile(boot, (1 + level) / 2),
                         "n_instances": m.shape[0]})
    return pd.DataFrame(rows)


def win_rate_matrix(rates: pd.DataFrame, value: str = "win_rate") -> pd.DataFrame:
    """Square matrix (row beats column) from :func:`win_rates`, in the row order given there; NaN on the diagonal."""
    order = list(dict.fromkeys(rates["row"]))
    return rates.pivot(index="row", columns="col", values=value).reindex(index=order, columns=order)


def paired_differences(df: pd.DataFrame, baseline: str, by_instance: bool = False, n_boot: int = 2000,
                       level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Regret of each policy minus ``baseline``'s, paired by (instance, T, seed).

    Common random numbers make the per-seed differences far less noisy than either regret. With
    ``by_instance=False``: per (policy, T), the mean difference over instances with a bootstrap
    interval over instances, and the share of instances where the policy is worse than the
    baseline. With ``by_instance=True``: per (policy, T, instance), the mean difference over seeds
    with a normal-approximation interval over seeds.
    """
    level = check_real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    if baseline not in set(df["policy"]):
        raise ValueError(f"baseline={baseline!r} is not allowed: expected one of {sorted(set(df['policy']))}")
    wide = df.pivot_table(index=["T", "problem", "seed_index"], columns="policy", values="regret", observed=True)
    diffs = wide.drop(columns=baseline).sub(wide[baseline], axis=0)
    rows = []
    z = normal_quantile(0.5 + level / 2)
    for T, sub in diffs.groupby(level="T"):
        per_inst = sub.groupby(level="problem")
        means = per_inst.mean()
        if by_instance:
            sd = per_inst.std(ddof=1)
            count = per_inst.count()
            for policy in means.columns:
                for inst in means.index:
                    half = z * sd.loc[inst, policy] / np.sqrt(count.loc[inst, policy]) if count.loc[inst, policy] > 1 else np.nan
                    rows.append({"policy": policy, "baseline": baseline, "T": T, "problem": inst,
                                 "mean_difference": means.loc[inst, policy],
                                 "ci_low": means.loc[inst, policy] - half, "ci_high": means.loc[inst, policy] + half})
            continue
        idx = _bootstrap_index(len(means), n_boot, seed)
        for policy in means.columns:
            m = means[policy].to_numpy()
            boot = m[idx].mean(axis=1)
            rows.append({"policy": policy, "baseline": baseline, "T": T, "mean_difference": m.mean(),
                         "ci_low": np.quantile(boot, (1 - level) / 2), "ci_high": np.quantile(boot, (1 + level) / 2),
                         "share_worse": float(np.mean(m > 0)), "n_instances": m.size})
    return pd.DataFrame(rows)


def slope(x, y) -> float:
    """Least-squares slope of log y on log x (the empirical scaling exponent)."""
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    return float(np.polyfit(lx, ly, 1)[0])


def half_slopes(x, y) -> tuple[float, float]:
    """Slopes over the lower and the upper half of the grid (the middle point belongs to both when odd)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    n = x.size
    mid = n // 2
    low = slice(0, mid + 1) if n % 2 else slice(0, mid)
    high = slice(mid, n)
    return slope(x[low], y[low]), slope(x[high], y[high])


def log_slope(x, y, y_se=None, level: float = 0.95, fit_error: bool = True) -> Estimate:
    """Least-squares slope of log y on log x with its interval.

    The standard error is the larger of the residual one (lack of fit, Student-t with n - 2 degrees
    of freedom) and the one propagated from ``y_se`` (standard errors of the points, through
    var(log y) = (se / y)^2), so a straight line through noisy points is not read as exact.
    ``n`` counts the grid points. ``fit_error=False`` (with ``y_se``) leaves the lack of fit out,
    for a part of a grid whose curvature is judged otherwise (the halves of
    :func:`horizonbandits.claims.rules.slope_matches`).
    """
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    if lx.size < 3 and (y_se is None or lx.size < 2):
        raise ValueError(f"x has {lx.size} points: a slope with an interval needs at least 3 (2 with y_se)")
    dx = lx - lx.mean()
    weights = dx / np.sum(dx * dx)
    b = float(np.sum(weights * (ly - ly.mean())))
    resid = ly - ly.mean() - b * dx
    use_fit = lx.size > 2 and (fit_error or y_se is None)
    se_fit = math.sqrt(float(np.sum(resid ** 2)) / (lx.size - 2) / float(np.sum(dx * dx))) if use_fit else 0.0
    se_points = 0.0
    if y_se is not None:
        rel = np.asarray(y_se, float) / np.asarray(y, float)
        se_points = math.sqrt(float(np.sum((weights * rel) ** 2)))
    if se_fit >= se_points:
        half = student_t_quantile(0.5 + level / 2, lx.size - 2) * se_fit
    else:  # the points' own errors dominate: a normal quantile
        half = normal_quantile(0.5 + level / 2) * se_points
    return Estimate(b, b - half, b + half, lx.size, "horizons", level)


# ----------------------------------------------------------------------------- summary rows (commitment grids)
def summary_estimate(row, unit: str = "runs", level: float = 0.95) -> Estimate:
    """The mean regret of one summary row (``commit.summary_table``: ``mean_regret`` in ``[ci_low, ci_high]``, a
    normal interval at ``level`` over ``n_seeds`` runs) as an :class:`Estimate`."""
    return Estimate(row["mean_regret"], row["ci_low"], row["ci_high"], int(row["n_seeds"]), unit, level)


def worst_rows(summary: pd.DataFrame, by, value: str = "mean_regret") -> pd.DataFrame:
    """The row with the largest ``value`` in each group of ``by`` (the worst case over a family's members), in the
    groups' sorted order, with a fresh index."""
    return summary.loc[summary.groupby(list(by))[value].idxmax()].reset_index(drop=True)


def ratio(a: Estimate, b: Estimate) -> Estimate:
    """``a / b`` for two independent positive estimates at the same level, with an interval on the log scale.

    The half-width of log(a / b) adds in quadrature the relative half-widths of ``a`` and ``b`` (the delta method
    for log a - log b), so the interval is ``[q e^-w, q e^w]``; ``n`` is the smaller sample, ``unit`` ``a``'s.
    """
    if a.level != b.level:
        raise ValueError(f"a.level={a.level!r}, b.level={b.level!r} is not allowed: the intervals must have the same level")
    if not (a.value > 0 and b.value > 0):
        raise ValueError(f"a.value={a.value!r}, b.value={b.value!r} is not allowed: a ratio's log interval needs "
                         "positive values")
    q = a.value / b.value
    w = math.hypot(a.half_width / a.value, b.half_width / b.value)
    return Estimate(q, q * math.exp(-w), q * math.exp(w), min(a.n, b.n), a.unit, a.level)


def log_line(x, y, slope: float | None = None) -> tuple[float, float]:
    """(intercept, slope) of the least-squares line of log y on log x, ``log y ~ intercept + slope log x``.

    With ``slope`` given, the least-squares intercept for that slope: mean(log y) - slope mean(log x);
    ``log_line(x, y / reference, 0)[0]`` is the vertical log-shift that best fits a reference curve to y.
    """
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    b = float(np.polyfit(lx, ly, 1)[0]) if slope is None else float(slope)
    return float(np.mean(ly) - b * np.mean(lx)), b
# --------------------------------------------------------------------------- tidy grid tables: means, pairs, crossings


def _group_items(df: pd.DataFrame, by):
    by = [by] if isinstance(by, str) else list(by)
    if not by:
        return by, [((), df)]
    return by, [((key,) if len(by) == 1 and not isinstance(key, tuple) else key, sub)
                for key, sub in df.groupby(by, sort=True, observed=True)]


INTERVALS = ("normal", "student")  # the intervals of a mean: normal approximation, or Student-t with n - 1 d.o.f.


def mean_intervals(df: pd.DataFrame, by=("T", "policy"), value: str = "regret", level: float = 0.95,
                   name: str | None = None, interval: str = "normal") -> pd.DataFrame:
    """Mean of ``value`` per group of ``by`` with its interval at ``level``.

    ``interval="normal"`` (default): the normal approximation of :func:`normal_interval`, the "mean with 95 %
    interval" of every figure and table of the commitment notebooks; ``"student"``: the Student-t interval of
    :func:`mean_estimate` (n - 1 degrees of freedom), for groups of few values. One value: a zero half-width.

    Columns: the ``by`` columns, ``name`` (default ``mean_<value>``), ci_low, ci_high, half_width, se (the standard
    error of the mean, sd / sqrt(n), 0 for one value), n; one row per group in sorted order.
    """
    level = check_real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    check_choice("interval", interval, INTERVALS)
    if value not in df:
        raise ValueError(f"value={value!r} is not allowed: expected a column of the table ({', '.join(map(str, df.columns))})")
    by, groups = _group_items(df, by)
    name = name or f"mean_{value}"
    rows = []
    for key, sub in groups:
        values = sub[value].to_numpy(dtype=float)
        n = values.size
        if interval == "normal":
            mean, half = normal_interval(values, level=level)
        else:  # as mean_estimate computes it
            mean = float(values.mean())
            half = float(student_t_quantile(0.5 + level / 2, n - 1) * values.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0
        se = values.std(ddof=1) / np.sqrt(n) if n > 1 else 0.0
        rows.append({**dict(zip(by, key)), name: mean, "ci_low": mean - half, "ci_high": mean + half,
                     "half_width": half, "se": se, "n": len(sub)})
    return pd.DataFrame(rows, columns=[*by, name, "ci_low", "ci_high", "half_width", "se", "n"])


def paired_gaps(df: pd.DataFrame, first: str, second: str, by=("T",), pair="seed_index",
                value: str = "regret", column: str = "policy", level: float = 0.95,
                interval: str = "normal") -> pd.DataFrame:
    """Per group of ``by``: the mean over pairs of ``first``'s ``value`` minus ``second``'s, with its interval.

    Rows of the table are paired by ``pair``, a column or a list of columns: the seed index (under common random
    numbers both policies saw the same draws), or ``["problem", "seed_index"]`` when a group holds several
    instances; ``first`` and ``second`` are values of ``column`` (policy labels). Only pairs present for both
    enter. ``interval`` as in :func:`mean_intervals`: "normal" (default) or "student". Columns: the ``by``
    columns, mean, ci_low, ci_high, half_width, se, n (pairs).
    """
    level = check_real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    check_choice("interval", interval, INTERVALS)
    for who in (first, second):
        if who not in set(df[column]):
            raise ValueError(f"{who!r} is not allowed: expected one of the table's {column} values "
                             f"{sorted(map(str, set(df[column])))}")
    by = [by] if isinstance(by, str) else list(by)
    index = [*by, *([pair] if isinstance(pair, str) else pair)]
    a = df[df[column] == first].set_index(index)[value]
    b = df[df[column] == second].set_index(index)[value]
    diff = (a - b).dropna().rename(value).reset_index()
    return mean_intervals(diff, by, value, level=level, name="mean", interval=interval)


def estimates(table: pd.DataFrame, key: str, mean: str = "mean", unit: str = "paired runs",
              level: float = 0.95) -> dict:
    """The rows of a :func:`mean_intervals` or :func:`paired_gaps` table as Estimates, keyed by column ``key``."""
    return {k: Estimate(r[mean], r["ci_low"], r["ci_high"], int(r["n"]), unit, level)
            for k, r in zip(table[key], table.to_dict("records"))}


def first_crossing(x, y, log_x: bool = True) -> float:
    """The first x at which the piecewise-linear curve y(x) (linear in log x with ``log_x``) changes sign from y[0]'s.

    NaN when it keeps y[0]'s sign over the whole grid (or y[0] is 0). ``x`` increasing.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size != y.size or x.size == 0 or np.any(np.diff(x) <= 0):
        raise ValueError(f"x={x.tolist()!r} is not allowed: expected increasing values, as many as y")
    start = np.sign(y[0])
    if start == 0:
        return math.nan
    for i in range(1, x.size):
        if np.sign(y[i]) != start:
            u0, u1 = (np.log(x[i - 1]), np.log(x[i])) if log_x else (x[i - 1], x[i])
            u = u0 + (u1 - u0) * y[i - 1] / (y[i - 1] - y[i])
            return float(np.exp(u)) if log_x else float(u)
    return math.nan


def crossing_estimate(x, value, low, high, n: int, unit: str = "paired runs", level: float = 0.95,
                      log_x: bool = True) -> Estimate:
    """Where a curve known with a pointwise interval [low, high] at each x first changes sign, with an interval.

    The value is :func:`first_crossing` of ``value``. The interval runs from the first x where the interval
    stops excluding the crossing (the end nearer 0 crosses) to the first x where the far end has crossed too,
    the band read pointwise, with the same interpolation: below the low end the curve has y[0]'s sign at the
    given level, above the high end the other sign. A far end that does not cross within the grid gives an
    infinite high end; a near end that does not cross gives NaN for the value and [x[-1], inf] (no crossing
    within the grid).
    """
    value, low, high = (np.asarray(v, dtype=float) for v in (value, low, high))
    if value[0] < 0:
        near, far = high, low
    else:
        near, far = low, high
    x = np.asarray(x, dtype=float)
    start = first_crossing(x, near, log_x) if np.sign(near[0]) == np.sign(value[0]) else float(x[0])
    mid = first_crossing(x, value, log_x)
    end = first_crossing(x, far, log_x)
    if math.isnan(start):
        return Estimate(math.nan, float(x[-1]), math.inf, n, unit, level)
    end = math.inf if math.isnan(end) else end
    if math.isnan(mid):
        return Estimate(math.nan, start, end, n, unit, level)
    return Estimate(mid, min(start, mid), max(end, mid), n, unit, level)
