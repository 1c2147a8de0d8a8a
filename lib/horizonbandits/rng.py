"""A tiny seeded random stream shared by compiled kernels and their reference implementations.

Randomised policies (Thompson sampling, Exp3, ...) must make the same draws in the numba kernel
and in the plain-Python reference so that a test can compare them pull for pull. Both sides use
the splitmix64 generator (Steele, Lea and Flood 2014): the kernel through the ``nb_*`` functions,
which keep the state in a one-element ``uint64`` array, the reference through :class:`PyStream`,
which does the same integer arithmetic on Python ints masked to 64 bits. Derived draws (normal,
gamma, beta) are built from uniforms with the same operations in the same order on both sides,
so the floats agree bit for bit (``tests/test_rng.py`` checks it).

Environment noise does not come from here: it is pre-drawn per seed with numpy (see
``horizonbandits.rising.simulate``). This stream is only the policy's own randomness.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB
_TWO_PI = 2.0 * math.pi
_INV_2_53 = 1.0 / 9007199254740992.0

_U_GOLDEN = np.uint64(_GOLDEN)
_U_MIX1 = np.uint64(_MIX1)
_U_MIX2 = np.uint64(_MIX2)
_U30 = np.uint64(30)
_U27 = np.uint64(27)
_U31 = np.uint64(31)
_U11 = np.uint64(11)


def new_state(seed: int) -> np.ndarray:
    """State array for the ``nb_*`` functions, seeded with a 64-bit integer."""
    return np.array([int(seed) & _MASK], dtype=np.uint64)


@njit(cache=True)
def nb_next_u64(state):
    z = state[0] + _U_GOLDEN
    state[0] = z
    z = (z ^ (z >> _U30)) * _U_MIX1
    z = (z ^ (z >> _U27)) * _U_MIX2
    return z ^ (z >> _U31)


@njit(cache=True)
def nb_uniform(state):
    """Uniform double in [0, 1) with 53 random bits."""
    return float(nb_next_u64(state) >> _U11) * _INV_2_53


@njit(cache=True)
def nb_normal(state):
    """Standard normal by Box-Muller (two uniforms, one output)."""
    u1 = 1.0 - nb_uniform(state)  # in (0, 1]: log is finite
    u2 = nb_uniform(state)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(_TWO_PI * u2)


@njit(cache=True)
def nb_gamma(state, shape):
    """Gamma(shape, 1) by Marsaglia and Tsang (2000); shape < 1 via the u^(1/shape) boost."""
    boost = 1.0
    a = shape
    if a < 1.0:
        boost = (1.0 - nb_uniform(state)) ** (1.0 / a)
        a = a + 1.0
    d = a - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = nb_normal(state)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = 1.0 - nb_uniform(state)
        if math.log(u) < 0.5 * x * x + d - d * v + d * math.log(v):
            return d * v * boost


@njit(cache=True)
def nb_beta(state, a, b):
    """Beta(a, b) as X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b)."""
    x = nb_gamma(state, a)
    y = nb_gamma(state, b)
    return x / (x + y)


class PyStream:
    """Plain-Python twin of the ``nb_*`` functions: same seed, same draws, bit for bit."""

    def __init__(self, seed: int):
        self.state = int(seed) & _MASK

    def next_u64(self) -> int:
        self.state = (self.state + _GOLDEN) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * _MIX1) & _MASK
        z = ((z ^ (z >> 27)) * _MIX2) & _MASK
        return z ^ (z >> 31)

    def uniform(self) -> float:
        return float(self.next_u64() >> 11) * _INV_2_53

    def normal(self) -> float:
        u1 = 1.0 - self.uniform()
        u2 = self.uniform()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(_TWO_PI * u2)

    def gamma(self, shape: float) -> float:
        boost = 1.0
        a = shape
        if a < 1.0:
            boost = (1.0 - self.uniform()) ** (1.0 / a)
            a = a + 1.0
        d = a - 1.0 / 3.0
        c = 1.0 / math.sqrt(9.0 * d)
        while True:
            x = self.normal()
            v = 1.0 + c * x
            if v <= 0.0:
                continue
            v = v * v * v
            u = 1.0 - self.uniform()
            if math.log(u) < 0.5 * x * x + d - d * v + d * math.log(v):
                return d * v * boost

    def beta(self, a: float, b: float) -> float:
        x = self.gamma(a)
        y = self.gamma(b)
        return x / (x + y)
