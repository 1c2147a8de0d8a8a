"""The cumulative increment Upsilon(M, q) and the regret bound of Theorem 5.5 (CURE-UCB paper, section 5.2).

With gamma_i(n) = mu_i(n + 1) - mu_i(n) and gamma_max(n) = max_i gamma_i(n),

    Upsilon(M, q) = sum_{n=1}^{M} gamma_max(n)^q                      (cumulative increment, Metelli et al. 2022)

    Reg(CURE-UCB_eps, T) <= K (1 + 2^-q) T^q / (1 - 2 eps) * Upsilon(ceil((1 - 2 eps) T / K), q)   (Theorem 5.5)

for q in [0, 1]. Our copy of the paper states only this growth-dependent term (no term for the
observation noise), so the bound is compared with noise-free runs; it holds for every q, so the
smallest value over a grid of q is also a bound. At eps = 1/2 the factor 1 / (1 - 2 eps) is
infinite and the bound says nothing.

Conventions: increments below zero (curves that are not nondecreasing) count as 0, and a zero
increment contributes 0 also at q = 0 (0^0 := 0), so Upsilon(M, 0) counts the pulls with growth.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import check_int, check_real
from .instances import RisingInstance


def max_increments(inst: RisingInstance) -> np.ndarray:
    """gamma_max(n) for n = 1..T_max-1 (entry n-1), clipped at 0."""
    if not isinstance(inst, RisingInstance):
        raise ValueError(f"inst={inst!r} is not allowed: expected a RisingInstance")
    gamma = np.diff(inst.means[:, 1:], axis=1)  # gamma_i(n) = mu_i(n+1) - mu_i(n), n = 1..T_max-1
    return np.maximum(gamma.max(axis=0), 0.0)


def _powered(gmax: np.ndarray, q: float) -> np.ndarray:
    out = np.zeros_like(gmax)
    positive = gmax > 0
    out[positive] = gmax[positive] ** q
    return out


def cumulative_increment_curve(inst: RisingInstance, q: float) -> np.ndarray:
    """Upsilon(M, q) for M = 0..T_max-1 (entry M); Upsilon(0, q) = 0."""
    q = check_real("q", q, 0.0, 1.0)
    terms = _powered(max_increments(inst), q)
    out = np.zeros(terms.size + 1)
    np.cumsum(terms, out=out[1:])
    return out


def cumulative_increment(inst: RisingInstance, M: int, q: float) -> float:
    """Upsilon(M, q) = sum_{n=1}^{M} gamma_max(n)^q (needs mu up to M + 1, so M <= T_max - 1)."""
    M = check_int("M", M, 0, inst.T_max - 1)
    return float(cumulative_increment_curve(inst, q)[M])


def bound_argument(T: int, K: int, eps: float) -> int:
    """M = ceil((1 - 2 eps) T / K), the number of pulls at which Theorem 5.5 evaluates Upsilon."""
    return int(math.ceil((1.0 - 2.0 * eps) * T / K))


def theorem55_bound(inst: RisingInstance, T: int, eps: float, q: float) -> float:
    """K (1 + 2^-q) T^q / (1 - 2 eps) * Upsilon(ceil((1 - 2 eps) T / K), q); infinite at eps = 1/2."""
    T = check_int("T", T, 1, inst.T_max)
    eps = check_real("eps", eps, 0.0, 0.5)
    q = check_real("q", q, 0.0, 1.0)
    if eps == 0.5:
        return math.inf
    M = bound_argument(T, inst.K, eps)
    return inst.K * (1.0 + 2.0 ** -q) * T ** q / (1.0 - 2.0 * eps) * cumulative_increment(inst, M, q)


def best_bound(inst: RisingInstance, T: int, eps: float, qs=None) -> tuple[float, float]:
    """(smallest bound, its q) over a grid of q in [0, 1] (101 points by default)."""
    T = check_int("T", T, 1, inst.T_max)
    eps = check_real("eps", eps, 0.0, 0.5)
    qs = np.linspace(0.0, 1.0, 101) if qs is None else np.asarray(qs, dtype=float)
    if qs.size == 0 or qs.min() < 0 or qs.max() > 1:
        raise ValueError(f"qs={qs.tolist()!r} is not allowed: expected a non-empty grid of q in [0, 1]")
    if eps == 0.5:
        return math.inf, float(qs[0])
    gmax = max_increments(inst)
    M = bound_argument(T, inst.K, eps)
    if M > gmax.size:
        raise ValueError(f"T={T} is not allowed for this instance: "
                         f"Upsilon needs mu up to M + 1 = {M + 1} <= T_max = {inst.T_max}")
    head = gmax[:M]
    bounds = np.array([inst.K * (1.0 + 2.0 ** -q) * T ** q / (1.0 - 2.0 * eps) * _powered(head, q).sum() for q in qs])
    j = int(np.argmin(bounds))
    return float(bounds[j]), float(qs[j])
