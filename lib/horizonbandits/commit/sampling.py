"""Random draws of the commitment simulator: seeds, block sums, per-pull draws and outcome tables.

Two ways to feed a policy with outcomes (``simulate(..., draws=...)``):

- ``"batch"`` (default, fast): each seed index s has its own splitmix64 stream (``horizonbandits.rng``)
  seeded by ``SeedSequence(seed, spawn_key=(s, 2))``. An elimination epoch that pulls arm i c more
  times draws the f- and g-sums of those c pulls at once: for Bernoulli coordinates two binomials,
  for a general finite law the multinomial counts of the support points by conditional binomials.
  Round-by-round policies (UCB) draw one outcome per pull from the same stream.
- ``"table"`` (common random numbers, exact checks): the outcome of the n-th pull of arm i is
  pre-drawn with numpy from ``SeedSequence(seed, spawn_key=(s, 0, i))`` into tables F, G (K x (n+1),
  column 0 unused). Every policy run on seed s reads the same table, and the compiled paths and the
  per-round references agree pull for pull on it.

The policy's own randomness (uniform commitment, random tie-breaks) always comes from
``SeedSequence(seed, spawn_key=(s, 1))`` through ``nb_uniform`` (kernels) or ``PyStream`` (references).
Seeds depend only on (seed, s), so results do not depend on batching or on the number of workers.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import njit

from .. import seeds
from ..errors import check_memory
from ..rng import nb_uniform, nb_uniform_step
from .problem import BERNOULLI

# log(k!) minus its Stirling approximation 0.5 log(2 pi) + (k + 1/2) log(k + 1) - (k + 1), k = 0..9
_STIRLING_TAIL = np.array([math.lgamma(k + 1) - (0.5 * math.log(2 * math.pi) + (k + 0.5) * math.log(k + 1) - (k + 1))
                           for k in range(10)])


def _spawn_seed(seed: int, key: tuple) -> int:
    return seeds.stream_seed(seed, *key)  # the layout of the keys is in ``horizonbandits.seeds``


@lru_cache(maxsize=64)
def _stream_seeds(seed: int, n_seeds: int, branch: int) -> np.ndarray:
    out = np.array([_spawn_seed(seed, (s, branch)) for s in range(n_seeds)], dtype=np.uint64)
    out.setflags(write=False)
    return out


def policy_stream_seeds(seed: int, n_seeds: int) -> np.ndarray:
    """64-bit seeds of the policy's own stream for seed indices 0..n_seeds-1 (spawn key (s, 1)); read-only."""
    return _stream_seeds(int(seed), int(n_seeds), 1)


def environment_stream_seeds(seed: int, n_seeds: int) -> np.ndarray:
    """64-bit seeds of the outcome stream used by ``draws="batch"`` (spawn key (s, 2)); read-only."""
    return _stream_seeds(int(seed), int(n_seeds), 2)


@njit(cache=True)
def _stirling_tail(k):
    if k < 10:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1.0) * (k + 1.0)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1.0)


@njit(cache=True)
def _binomial_inversion(state, n, p):
    """Waiting-time method: count the geometric gaps between successes that fit in n trials (n p < 10)."""
    log_q = math.log1p(-p)
    total = 0
    k = 0
    while True:
        u = 1.0 - nb_uniform(state)  # in (0, 1]
        total += int(math.ceil(math.log(u) / log_q)) if u < 1.0 else 1
        if total > n:
            return k
        k += 1


@njit(cache=True)
def _binomial_btrd(state, n, p):
    """BTRD, transformed rejection with decomposition (Hoermann 1993), for n p >= 10 and p <= 1/2."""
    q = 1.0 - p
    spq = math.sqrt(n * p * q)
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    r = p / q
    alpha = (2.83 + 5.1 / b) * spq
    m = math.floor((n + 1) * p)
    while True:
        u = nb_uniform(state) - 0.5
        v = nb_uniform(state)
        us = 0.5 - abs(u)
        k = math.floor((2.0 * a / us + b) * u + c)
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:
            return int(k)
        # exact test: log(v * hat) <= log f(k) - log f(m), with Stirling's formula for the factorials
        v = math.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * math.log((m + 1) / (r * (n - m + 1)))
                 + (n + 1) * math.log((n - m + 1) / (n - k + 1))
                 + (k + 0.5) * math.log(r * (n - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(n - m) - _stirling_tail(k) - _stirling_tail(n - k))
        if v <= bound:
            return int(k)


@njit(cache=True)
def nb_binomial(state, n, p):
    """Binomial(n, p) from the splitmix64 stream, exact in distribution.

    p > 1/2 by symmetry; n p < 10 by the waiting-time (geometric) method; otherwise BTRD (Hoermann 1993,
    "The generation of binomial random variates"), a rejection method with a constant expected number of
    uniforms, so a block of thousands of pulls costs about as much as one pull.
    """
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    if p > 0.5:
        return n - nb_binomial(state, n, 1.0 - p)
    if n * p < 10.0:
        return _binomial_inversion(state, n, p)
    return _binomial_btrd(state, n, p)


@njit(cache=True)
def nb_block_sums(state, kind, i, c, mu_f, mu_g, probs, fv, gv):
    """(sum of f, sum of g) over c fresh pulls of arm i."""
    if c <= 0:
        return 0.0, 0.0
    if kind == BERNOULLI:
        return float(nb_binomial(state, c, mu_f[i])), float(nb_binomial(state, c, mu_g[i]))
    m = probs.shape[1]
    sf = 0.0
    sg = 0.0
    rem = c
    rest = 1.0  # probability mass of the support points not yet visited
    for j in range(m - 1):
        pj = probs[i, j]
        if pj > 0.0:
            q = pj / rest if rest > pj else 1.0
            kj = nb_binomial(state, rem, q)
            sf += kj * fv[j]
            sg += kj * gv[j]
            rem -= kj
            if rem == 0:
                break
        rest -= pj
    if rem > 0:
        sf += rem * fv[m - 1]
        sg += rem * gv[m - 1]
    return sf, sg


@njit(cache=True)
def nb_pull(state, kind, i, mu_f, mu_g, cdf, fv, gv):
    """(f, g) of one fresh pull of arm i."""
    if kind == BERNOULLI:
        x = 1.0 if nb_uniform(state) < mu_f[i] else 0.0
        y = 1.0 if nb_uniform(state) < mu_g[i] else 0.0
        return x, y
    u = nb_uniform(state)
    j = 0
    last = cdf.shape[1] - 1
    while j < last and u >= cdf[i, j]:
        j += 1
    return fv[j], gv[j]


@njit(cache=True, inline="always")
def nb_pull_step(s, kind, i, mu_f, mu_g, cdf, fv, gv):
    """``nb_pull`` with the stream's state as a plain uint64: returns (f, g, new state), the same draws.

    For hot per-round loops: the state stays in a register instead of a one-element array
    (see ``horizonbandits.rng``, "Scalar-state stream")."""
    if kind == BERNOULLI:
        u, s = nb_uniform_step(s)
        v, s = nb_uniform_step(s)
        return (1.0 if u < mu_f[i] else 0.0), (1.0 if v < mu_g[i] else 0.0), s
    u, s = nb_uniform_step(s)
    j = 0
    last = cdf.shape[1] - 1
    while j < last and u >= cdf[i, j]:
        j += 1
    return fv[j], gv[j], s


def py_pull(stream, problem, i: int) -> tuple[float, float]:
    """Plain-Python twin of ``nb_pull`` on a ``PyStream``: the same uniforms, compared the same way."""
    if problem.kind == BERNOULLI:
        u, v = stream.uniform(), stream.uniform()
        return (1.0 if u < problem.mu_f[i] else 0.0), (1.0 if v < problem.mu_g[i] else 0.0)
    u = stream.uniform()
    cdf = problem.cdf
    j = 0
    while j < problem.m - 1 and u >= cdf[i, j]:
        j += 1
    return float(problem.f_values[j]), float(problem.g_values[j])


def draw_tables(problem, n_pulls: int, seed: int = 0, s: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Tables F, G of shape (K, n_pulls + 1): f and g of the n-th pull of arm i at [i, n] (column 0 is 0)."""
    K = problem.K
    check_memory("N", n_pulls, 8.0 * (4 * K + 2) * (n_pulls + 1),
                 f"the table of draws='table' (f and g of every pull of each of K = {K} arms, with their prefix "
                 "sums)")
    F = np.zeros((K, n_pulls + 1))
    G = np.zeros((K, n_pulls + 1))
    cdf = problem.cdf
    for i in range(K):
        rng = np.random.default_rng(seeds.arm_stream(seed, s, i))
        if problem.kind == BERNOULLI:
            u = rng.random((2, n_pulls))
            F[i, 1:] = u[0] < problem.mu_f[i]
            G[i, 1:] = u[1] < problem.mu_g[i]
        else:
            j = np.minimum(np.searchsorted(cdf[i], rng.random(n_pulls), side="right"), problem.m - 1)
            F[i, 1:] = problem.f_values[j]
            G[i, 1:] = problem.g_values[j]
    return F, G


def prefix_sums(F: np.ndarray) -> np.ndarray:
    """C[i, n] = F[i, 1] + ... + F[i, n], accumulated left to right like the references' running sums."""
    C = np.zeros_like(F)
    np.cumsum(F[:, 1:], axis=1, out=C[:, 1:])
    return C
