"""Concave commitment rewards and the portfolio problems of section 6.2 (cvxpy, built once, re-solved).

The commitment reward of the generalised model (problem (6) of the RAEC/ROSCOC paper) is a concave
function g of the average outcome vector of the commitment phase. Committing to a portfolio x in
the simplex over the K arms, whose outcome means are the columns of O (d x K), yields the average
outcome O x in the fluid limit, so the best portfolio solves

    max_{x in simplex}  g(O x).                                                   (portfolio problem)

* :class:`ConcaveReward` is what a commitment reward provides (a cvxpy expression, a numpy value, a
  Lipschitz constant); :class:`QuadraticReward` is the built-in g(y) = -(y - c)^T A (y - c) of
  section 7.3.
* :class:`PortfolioSolver` is the portfolio problem for one reward and K arms, built once in cvxpy
  with O as a Parameter (disciplined parametrised programming, DPP) and re-solved for each new O;
  :func:`portfolio_solve` is the convenience entry point with a per-process cache.
* :class:`OptimisticPortfolioSolver` is the convex step of ROSCOC's Stage I, the optimistic
  problem of Agrawal and Devanur (2014): max over x and over outcome means in per-arm confidence
  boxes [lo_j, hi_j] of g(sum_j x_j v_j), which is the convex programme max g(z) s.t. x in the
  simplex and lo @ x <= z <= hi @ x, again with lo, hi as Parameters.
* :func:`portfolio_solve_exact` solves the quadratic case exactly by enumerating the active sets
  (supports) of the simplex; the tests compare it with the cvxpy solution.
"""
from __future__ import annotations

import itertools

import cvxpy as cp
import numpy as np

from ..errors import as_float_array

_SOLVER = "CLARABEL"  # interior point, accurate to ~1e-8 on these small problems
# Solves never start from the previous solution (warm_start=False): the built problems are shared by
# every policy of a process, so a warm start made a result depend on what ran before (1e-15 apart).


class ConcaveReward:
    """A concave commitment reward g on outcome vectors y in [0, 1]^d.

    Subclasses set ``d`` and implement ``cvxpy(y)`` (a concave cvxpy expression of the affine
    expression ``y``; it must not contain cvxpy Parameters, so that the portfolio problems stay
    DPP), ``value(y)`` (numpy, vectorised over leading axes) and ``lipschitz()`` (an l2 Lipschitz
    constant on [0, 1]^d, the L_g of Theorem 6.3). ``average_gap(cov)`` is g(m) - E[g(Y)] for a
    random average Y with mean m and covariance ``cov``: the Jensen gap that enters the
    commitment regret when the commitment is executed with randomness. The base class does not
    know it and returns 0 (the regret then counts only the fluid part); the quadratic reward
    computes it exactly. ``key()`` identifies the reward for caching built problems.
    """

    d: int

    def cvxpy(self, y):
        raise NotImplementedError

    def value(self, y):
        raise NotImplementedError

    def lipschitz(self) -> float:
        raise NotImplementedError

    def average_gap(self, cov) -> float:
        return 0.0

    def key(self):
        return id(self)


class QuadraticReward(ConcaveReward):
    """g(y) = -(y - c)^T A (y - c) with A symmetric positive semidefinite (section 7.3, A = I there).

    The cvxpy expression is -||R (y - c)||^2 with R^T R = A (R from an eigendecomposition, so a
    semidefinite A works too). ``lipschitz()`` is max over y in [0, 1]^d of ||grad g(y)||_2 =
    2 ||A (y - c)||_2; a convex function attains its maximum over the cube at a vertex, so the
    2^d vertices are enumerated. ``average_gap(cov) = tr(A cov)`` exactly, since
    E[(Y - c)^T A (Y - c)] = (m - c)^T A (m - c) + tr(A Cov Y).
    """

    def __init__(self, c, A=None):
        c = np.asarray(c, dtype=float)
        if c.ndim != 1 or c.size < 1 or not np.all(np.isfinite(c)):
            raise ValueError(f"c={c.tolist()!r} is not allowed: expected a finite vector of length d >= 1")
        d = c.size
        A = np.eye(d) if A is None else np.asarray(A, dtype=float)
        if A.shape != (d, d) or not np.all(np.isfinite(A)):
            raise ValueError(f"A of shape {A.shape} is not allowed: expected a finite {d} x {d} matrix (d = len(c))")
        if not np.allclose(A, A.T, atol=1e-12):
            raise ValueError("A is not allowed: expected a symmetric matrix")
        w, V = np.linalg.eigh(A)
        if w.min() < -1e-10 * max(1.0, abs(w).max()):
            raise ValueError(f"A is not allowed: expected positive semidefinite, smallest eigenvalue {w.min():.3g}")
        self.d = d
        self.c = c
        self.A = A
        self.R = (V * np.sqrt(np.clip(w, 0.0, None))).T  # R^T R = A

    def cvxpy(self, y):
        return -cp.sum_squares(self.R @ (y - self.c))

    def value(self, y):
        e = np.asarray(y, dtype=float) - self.c
        return -np.einsum("...i,ij,...j->...", e, self.A, e)

    def lipschitz(self) -> float:
        corners = np.array(list(itertools.product((0.0, 1.0), repeat=self.d)))
        return float(2.0 * np.max(np.linalg.norm((corners - self.c) @ self.A, axis=1)))

    def average_gap(self, cov) -> float:
        return float(np.trace(self.A @ np.asarray(cov, dtype=float)))

    def key(self):
        return ("quadratic", self.c.tobytes(), self.A.tobytes())

    def __repr__(self) -> str:
        return f"QuadraticReward(c={np.round(self.c, 4).tolist()}, A={'I' if np.array_equal(self.A, np.eye(self.d)) else 'A'})"


class AffineReward(ConcaveReward):
    """g(y) = w . y + b, the affine commitment reward of section 6.2's remark that committing to a single arm is
    then optimal (g(O x) is linear in x, so its maximum over the simplex is at a vertex). ``lipschitz()`` = ||w||_2."""

    def __init__(self, w, b: float = 0.0):
        w = np.asarray(w, dtype=float)
        if w.ndim != 1 or w.size < 1 or not np.all(np.isfinite(w)):
            raise ValueError(f"w={w.tolist()!r} is not allowed: expected a finite vector of length d >= 1")
        if not np.isfinite(b):
            raise ValueError(f"b={b!r} is not allowed: expected a finite number")
        self.d, self.w, self.b = w.size, w, float(b)

    def cvxpy(self, y):
        return self.w @ y + self.b

    def value(self, y):
        return np.asarray(y, dtype=float) @ self.w + self.b

    def lipschitz(self) -> float:
        return float(np.linalg.norm(self.w))

    def key(self):
        return ("affine", self.w.tobytes(), self.b)

    def __repr__(self) -> str:
        return f"AffineReward(w={np.round(self.w, 4).tolist()}, b={self.b:g})"


def _check_means(name: str, O, d: int | None = None, K: int | None = None) -> np.ndarray:
    O = as_float_array(name, O, "a finite d x K matrix of numbers")
    if O.ndim != 2 or not np.all(np.isfinite(O)):
        raise ValueError(f"{name} of shape {O.shape} is not allowed: expected a finite d x K matrix")
    if (d is not None and O.shape[0] != d) or (K is not None and O.shape[1] != K):
        raise ValueError(f"{name} of shape {O.shape} is not allowed: expected shape ({d}, {K})")
    return O


def _check_outcome_means(O) -> np.ndarray:
    """O as a d x K matrix of outcome means, each in [0, 1]: outcomes live in [0, 1]^d (section 7.3
    of paper B; ``ConcaveReward`` and its Lipschitz constant are defined on that cube)."""
    O = _check_means("O", O)
    if O.size and (O.min() < 0 or O.max() > 1):
        i, j = np.argwhere((O < 0) | (O > 1))[0]
        raise ValueError(f"O={O.tolist()!r} is not allowed: expected outcome means in [0, 1], "
                         f"got O[{i}, {j}]={float(O[i, j])!r}")
    return O


class PortfolioSolver:
    """max_{x in simplex} g(O x), built once in cvxpy with O a Parameter and re-solved (DPP).

    ``solve(O)`` returns (x, value) with x clipped at 0 and renormalised (the interior-point
    solution can be -1e-10), value = g(O x) recomputed in numpy. ``n_solves`` counts calls.
    """

    def __init__(self, reward: ConcaveReward, K: int):
        self.reward, self.K, self.d = reward, int(K), reward.d
        self._O = cp.Parameter((self.d, self.K))
        self._x = cp.Variable(self.K, nonneg=True)
        z = cp.Variable(self.d)  # z = O x keeps the objective parameter-free, hence DPP
        self._problem = cp.Problem(cp.Maximize(reward.cvxpy(z)), [z == self._O @ self._x, cp.sum(self._x) == 1])
        assert self._problem.is_dpp()
        self.n_solves = 0

    def solve(self, O):
        O = _check_means("O", O, self.d, self.K)
        self._O.value = O
        self._problem.solve(solver=_SOLVER, warm_start=False)
        self.n_solves += 1
        if self._x.value is None:
            raise RuntimeError(f"portfolio problem not solved: status {self._problem.status}")
        x = _to_simplex(self._x.value)
        return x, float(self.reward.value(O @ x))


class OptimisticPortfolioSolver:
    """The optimistic convex step of Agrawal and Devanur (2014) for concave rewards over the simplex.

    Given per-arm boxes lo[:, j] <= v_j <= hi[:, j] for the unknown outcome means, solve

        max_{x in simplex, v_j in [lo_j, hi_j]}  g(sum_j x_j v_j)

    For a fixed x, the attainable points sum_j x_j v_j fill exactly the box lo x <= z <= hi x
    (coordinate i ranges over [sum_j x_j lo[i, j], sum_j x_j hi[i, j]] because the boxes are
    products), so the problem is the convex programme max g(z) s.t. x in simplex,
    lo @ x <= z <= hi @ x: K + d variables, and lo and hi are Parameters, so it is canonicalised
    once (AD14 write it with y_j = x_j v_j; this is the same set, projected). Returns (x,
    optimistic value). When the
    boxes are wide, the optimal x is not unique; the interior-point solver then returns a point
    in the relative interior of the optimal set, which spreads the play over the candidates.
    """

    def __init__(self, reward: ConcaveReward, K: int):
        self.reward, self.K, self.d = reward, int(K), reward.d
        self._lo = cp.Parameter((self.d, self.K))
        self._hi = cp.Parameter((self.d, self.K))
        self._x = cp.Variable(self.K, nonneg=True)
        z = cp.Variable(self.d)
        self._problem = cp.Problem(cp.Maximize(reward.cvxpy(z)),
                                   [cp.sum(self._x) == 1, z >= self._lo @ self._x, z <= self._hi @ self._x])
        assert self._problem.is_dpp()
        self.n_solves = 0

    def solve(self, lo, hi):
        lo = _check_means("lo", lo, self.d, self.K)
        hi = _check_means("hi", hi, self.d, self.K)
        if np.any(lo > hi):
            raise ValueError("lo > hi is not allowed: every box needs lo <= hi")
        self._lo.value, self._hi.value = lo, hi
        self._problem.solve(solver=_SOLVER, warm_start=False)
        self.n_solves += 1
        if self._x.value is None:
            raise RuntimeError(f"optimistic problem not solved: status {self._problem.status}")
        return _to_simplex(self._x.value), float(self._problem.value)


def _to_simplex(x) -> np.ndarray:
    x = np.clip(np.asarray(x, dtype=float), 0.0, None)
    return x / x.sum()


_CACHE: dict = {}


def solver_for(reward: ConcaveReward, K: int, optimistic: bool = False):
    """The built problem for (reward, K), created on first use in this process and then re-used."""
    key = (reward.key(), int(K), optimistic)
    if key not in _CACHE:
        _CACHE[key] = (OptimisticPortfolioSolver if optimistic else PortfolioSolver)(reward, K)
    return _CACHE[key]


def portfolio_solve(O, c, A=None, return_value: bool = False):
    """Optimal portfolio for outcome means O (d x K) under g(y) = -(y - c)^T A (y - c) (A = I if None).

    cvxpy, with the problem for this (c, A, K) built once per process and re-solved with O as a
    Parameter. Returns x (K,), or (x, g(O x)) with ``return_value=True``. When d < K the optimal x
    need not be unique (the optimal value is). Every entry of O must lie in [0, 1]: outcomes are
    points of [0, 1]^d in paper B (section 7.3), and the reward's Lipschitz constant is taken there.
    """
    O = _check_outcome_means(O)
    reward = QuadraticReward(c, A)
    if O.shape[0] != reward.d:
        raise ValueError(f"O of shape {O.shape} is not allowed: expected {reward.d} rows (len(c))")
    x, value = solver_for(reward, O.shape[1]).solve(O)
    return (x, value) if return_value else x


def portfolio_solve_exact(O, c, A=None, tol: float = 1e-12):
    """Exact optimum of max_{x in simplex} -(O x - c)^T A (O x - c) by active-set enumeration.

    For every support S (a non-empty subset of arms) solve the equality-constrained problem on the
    affine hull, min (O_S z - c)^T A (O_S z - c) s.t. sum(z) = 1, from its KKT system
    [2 O_S^T A O_S, 1; 1^T, 0] [z; nu] = [2 O_S^T A c; 1] (least squares when singular), and keep
    the candidates with z >= 0. Each candidate is feasible, and by Caratheodory some optimal x has
    a support whose outcome vectors are affinely independent, where (for A positive definite) the
    affine-hull minimiser is unique and is that x: the best candidate is optimal. Cost: 2^K small
    solves, for tests only. Returns (x, value). As in :func:`portfolio_solve`, every entry of O
    must lie in [0, 1].
    """
    O = _check_outcome_means(O)
    reward = QuadraticReward(c, A)
    d, K = O.shape
    if d != reward.d:
        raise ValueError(f"O of shape {O.shape} is not allowed: expected {reward.d} rows (len(c))")
    best_x, best_v = None, -np.inf
    for size in range(1, K + 1):
        for S in itertools.combinations(range(K), size):
            OS = O[:, S]
            H = 2.0 * OS.T @ reward.A @ OS
            M = np.zeros((size + 1, size + 1))
            M[:size, :size], M[:size, size], M[size, :size] = H, 1.0, 1.0
            rhs = np.append(2.0 * OS.T @ reward.A @ reward.c, 1.0)
            sol = np.linalg.lstsq(M, rhs, rcond=None)[0]
            if not np.allclose(M @ sol, rhs, atol=1e-9):
                continue  # inconsistent KKT system: no stationary point on this affine hull
            z = sol[:size]
            if z.min() < -tol:
                continue
            x = np.zeros(K)
            x[list(S)] = np.clip(z, 0.0, None)
            x /= x.sum()
            v = float(reward.value(O @ x))
            if v > best_v:
                best_x, best_v = x, v
    return best_x, best_v
