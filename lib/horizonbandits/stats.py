"""Statistics over finished grid tables: intervals, win rates, paired differences, slopes.

- :func:`normal_interval` (also ``plotting.mean_ci``): mean and normal-approximation half-width.
- :func:`regret_summary`, :func:`win_rates`, :func:`win_rate_matrix`, :func:`paired_differences`:
  the rising grid's summaries over instances, with percentile-bootstrap intervals over instances
  (resampling indices from ``numpy.random.default_rng(seed)``, so the same table and seed give
  the same interval).
- :func:`slope`, :func:`half_slopes`: least-squares slopes of log y on log x (scaling exponents).
- :func:`bootstrap_band`: a seeded, vectorised percentile-bootstrap interval of a mean, for seaborn's
  ``errorbar=`` (seaborn's own bootstrap is unseeded and loops in Python).

Nothing here changes a grid's numbers, so editing this file keeps the result cache.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .errors import check_real


def normal_interval(values, axis=0, level: float = 0.95):
    """Mean and normal-approximation confidence half-width along ``axis`` (half-width 0 for one value)."""
    from scipy.stats import norm
    values = np.asarray(values, dtype=float)
    n = values.shape[axis]
    mean = values.mean(axis=axis)
    half = norm.ppf(0.5 + level / 2) * values.std(axis=axis, ddof=1) / np.sqrt(n) if n > 1 else np.zeros_like(mean)
    return mean, half


mean_ci = normal_interval



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
    return sub.groupby(["instance", "policy"], observed=True)["regret"].mean().unstack("policy")


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
    from scipy.stats import norm
    level = check_real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    if baseline not in set(df["policy"]):
        raise ValueError(f"baseline={baseline!r} is not allowed: expected one of {sorted(set(df['policy']))}")
    wide = df.pivot_table(index=["T", "instance", "seed"], columns="policy", values="regret", observed=True)
    diffs = wide.drop(columns=baseline).sub(wide[baseline], axis=0)
    rows = []
    z = norm.ppf(0.5 + level / 2)
    for T, sub in diffs.groupby(level="T"):
        per_inst = sub.groupby(level="instance")
        means = per_inst.mean()
        if by_instance:
            sd = per_inst.std(ddof=1)
            count = per_inst.count()
            for policy in means.columns:
                for inst in means.index:
                    half = z * sd.loc[inst, policy] / np.sqrt(count.loc[inst, policy]) if count.loc[inst, policy] > 1 else np.nan
                    rows.append({"policy": policy, "baseline": baseline, "T": T, "instance": inst,
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
