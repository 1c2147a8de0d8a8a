"""Least-squares fits of a learning curve by a linear-then-flat curve and by a concave exponential one.

The CURE-UCB paper says (section 5, pointing to its appendix C, which our copy lacks) that LTF "closely
approximates" real training curves. These fits measure it on a curve mu(1..n):

- ``fit_ltf(curve, offset=False)``: Definition 5.1's mu(n) = min(b, a n), i.e. a min(n, t_sat);
- ``fit_ltf(curve, offset=True)``: the same with a start level, mu(n) = c + a min(n, t_sat) (accuracy curves
  start near 1/2, not at 0; our reading of what a regression on real curves would fit);
- ``fit_exponential(curve)``: the concave comparator s + (L - s)(1 - exp(-k n)), the late bloomer's shape of
  appendix B.1.2, with the same number of free parameters as the LTF with a start level.

Each model is linear in its coefficients once its one shape parameter (t_sat or k) is fixed, so the fit is
exact linear least squares over a log-spaced grid of that parameter, refined once around the best point
(no local optimiser, no starting values). R^2 = 1 - SSE / SST over every point of the curve.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import check_int


@dataclass(frozen=True)
class CurveFit:
    """One fitted model: its name, shape parameter, coefficients, R^2 and root mean squared error."""
    model: str
    shape: float
    coefficients: tuple
    r2: float
    rmse: float

    def predict(self, n) -> np.ndarray:
        return _predict(self.model, self.shape, self.coefficients, np.asarray(n, dtype=float))


def _regressors(model: str, shape: float, n: np.ndarray) -> np.ndarray:
    if model == "ltf":
        return np.minimum(n, shape)[:, None]
    if model == "ltf+start":
        return np.column_stack([np.ones_like(n), np.minimum(n, shape)])
    return np.column_stack([np.ones_like(n), 1.0 - np.exp(-shape * n)])  # "exponential"


def _predict(model, shape, coefficients, n):
    return _regressors(model, shape, n) @ np.asarray(coefficients)


def _as_curve(curve) -> np.ndarray:
    y = np.asarray(curve, dtype=float)
    if y.ndim != 1 or y.size < 3 or not np.isfinite(y).all():
        raise ValueError(f"curve of shape {y.shape} is not allowed: expected a finite 1-d array of at least 3 values")
    return y


def _best(model: str, y: np.ndarray, grid: np.ndarray, grid_points: int) -> CurveFit:
    n = np.arange(1, y.size + 1, dtype=float)
    sst = float(np.sum((y - y.mean()) ** 2))

    def sse_of(shape):
        X = _regressors(model, shape, n)
        coef = np.linalg.solve(X.T @ X, X.T @ y)  # normal equations: 1 or 2 coefficients, well scaled
        return float(np.sum((y - X @ coef) ** 2)), coef

    for _ in range(2):  # the grid, then a finer grid between the best point's neighbours
        scores = [sse_of(s)[0] for s in grid]
        j = int(np.argmin(scores))
        lo, hi = grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]
        best = grid[j]
        grid = np.geomspace(lo, hi, grid_points)
    sse, coef = sse_of(best)
    return CurveFit(model, float(best), tuple(float(c) for c in coef), 1.0 - sse / sst if sst > 0 else float("nan"),
                    float(np.sqrt(sse / y.size)))


def fit_ltf(curve, offset: bool = True, grid_points: int = 60) -> CurveFit:
    """Least-squares LTF fit of ``curve`` (entry n - 1 is mu(n)); ``offset`` adds a start level c."""
    y = _as_curve(curve)
    grid_points = check_int("grid_points", grid_points, 10)
    return _best("ltf+start" if offset else "ltf", y, np.geomspace(2.0, float(y.size), grid_points), grid_points)


def fit_exponential(curve, grid_points: int = 60) -> CurveFit:
    """Least-squares fit of s + (L - s)(1 - exp(-k n)) to ``curve``, k on a log grid from 0.01 / T to 100 / T."""
    y = _as_curve(curve)
    grid_points = check_int("grid_points", grid_points, 10)
    T = float(y.size)
    return _best("exponential", y, np.geomspace(0.01 / T, 100.0 / T, grid_points), grid_points)
