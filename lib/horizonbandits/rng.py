"""A tiny seeded random stream shared by compiled kernels and their reference implementations.

Randomised policies (Thompson sampling, Exp3, ...) must make the same draws in the numba kernel
and in the plain-Python reference so that a test can compare them pull for pull. Both sides use
the splitmix64 generator (Steele, Lea and Flood 2014): the kernel through the ``nb_*`` functions,
which keep the state in a one-element ``uint64`` array, the reference through :class:`PyStream`,
which does the same integer arithmetic on Python ints masked to 64 bits. Derived draws (normal,
exponential, gamma, beta) are built from the 64-bit outputs with the same operations in the same
order on both sides, so the floats agree bit for bit (``tests/test_rng.py`` checks it).

Hot loops use the scalar-state variants (``nb_*_step``): the state travels as a plain uint64 rather
than in an array, and normals and exponentials come from ziggurats, which makes a Gaussian, gamma
or Beta draw several times cheaper than through Box-Muller.

Numba's on-disk cache keys a kernel on its own source file only, so a kernel that inlines these
samplers would not notice an edit here; ``horizonbandits._numba_cache`` gives every version of the
package's source its own cache folder, so an edit here recompiles them.

Environment noise does not come from here: a rising reward is a pure function of its arm's key and
its pull number (``counter_rng``, ``horizonbandits.rising.observations``), the keys coming from
:mod:`horizonbandits.seeds`. This stream is only the policy's own randomness.
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


# --- Scalar-state stream for hot loops ------------------------------------------------------------
#
# The ``nb_*`` functions above take the state array, and a compiled call with an array argument pays
# reference-count updates on every call (tens to hundreds of ns in a kernel's inner loop). The
# ``*_step`` functions below thread the splitmix64 state through as a plain uint64 instead: they take
# it and return ``(draw, new_state)``, so a kernel keeps it in a local variable
# (``s = state[0]`` ... ``state[0] = s``) and LLVM inlines the arithmetic. ``nb_u64_step`` makes the
# same numbers as ``nb_next_u64`` and ``nb_uniform_step`` as ``nb_uniform``; the normal, gamma and
# beta built on them are different (faster) samplers than ``nb_normal``/``nb_gamma``/``nb_beta``,
# which stay as they were for their users. Python twins (``PyStream``): ``next_u64``, ``uniform``,
# ``normal_zig``, ``exponential_zig``, ``gamma_mt``, ``gamma_int`` and ``beta_int``.


@njit(cache=True, inline="always")
def nb_u64_step(s):
    """Next 64-bit output of splitmix64 from state ``s``: returns (output, new state)."""
    s = s + _U_GOLDEN
    z = (s ^ (s >> _U30)) * _U_MIX1
    z = (z ^ (z >> _U27)) * _U_MIX2
    return z ^ (z >> _U31), s


@njit(cache=True, inline="always")
def nb_uniform_step(s):
    """Uniform double in [0, 1) with 53 random bits: returns (u, new state)."""
    z, s = nb_u64_step(s)
    return float(np.int64(z >> _U11)) * _INV_2_53, s  # via int64: fits, and converts in one instruction


# Ziggurats (Marsaglia and Tsang, "The ziggurat method for generating random variables", J. Stat.
# Softw. 5(8), 2000) for the standard normal and the standard exponential: 256 layers of equal area v
# under the density's decreasing half f(x), x >= 0 (normal: f = exp(-x^2 / 2), then a random sign).
# Layer 0 is the base strip [0, r] x [0, f(r)] plus the tail x > r, seen as one rectangle of width
# x_0 = v / f(r); layer i >= 1 is [0, x_i] x [f(x_i), f(x_{i+1})], with x_1 = r and x_256 = 0. A draw
# picks a layer (8 bits) and x = U x_i (52 bits). If x < x_{i+1} the point is under the curve whatever
# its height: accept (about 99% of draws, no transcendental call). Otherwise layer 0 samples the tail
# exactly and the others test the point's height against f(x). r is solved (bisection, see
# ``_solve_ziggurat_r``) so that the top layer's rectangle reaches at least f(0) = 1, by a few 1e-15:
# every layer has area v and together they cover the curve, so the method is exact up to the
# tables' rounding.

_ZIG_LAYERS = 256
_ZIG_R = 3.654152885361009       # normal
_ZIG_EXP_R = 7.697117470131049   # exponential


def _normal_half(x):
    return math.exp(-0.5 * x * x)


def _normal_half_inverse(y):
    return math.sqrt(-2.0 * math.log(y))


def _normal_tail(r):
    return math.sqrt(0.5 * math.pi) * math.erfc(r / math.sqrt(2.0))


def _exp_half(x):
    return math.exp(-x)


def _exp_inverse(y):
    return -math.log(y)


def _exp_tail(r):
    return math.exp(-r)


def _ziggurat_edges(f, f_inverse, tail, r, layers=_ZIG_LAYERS):
    """Abscissae x_0 .. x_layers and the top of the last layer (None if the layers overflow f(0))."""
    v = r * f(r) + tail(r)  # area of each layer
    x = [0.0] * (layers + 1)
    x[0] = v / f(r)
    x[1] = r
    for i in range(1, layers - 1):
        y = f(x[i]) + v / x[i]
        if y >= 1.0:
            return x, None
        x[i + 1] = f_inverse(y)
    return x, f(x[layers - 1]) + v / x[layers - 1]


def _solve_ziggurat_r(f, f_inverse, tail, lo, hi):
    """Largest double r in [lo, hi] whose layers still cover f(0) = 1 (how the constants were found)."""
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            return lo
        _, top = _ziggurat_edges(f, f_inverse, tail, mid)
        if top is None or top > 1.0:
            lo = mid
        else:
            hi = mid


def _ziggurat_tables(f, f_inverse, tail, r, layers=_ZIG_LAYERS):
    """(width per 52-bit unit, fast-accept thresholds, heights) of a ziggurat with base r."""
    x, top = _ziggurat_edges(f, f_inverse, tail, r, layers)
    if top is None or top < 1.0:
        raise RuntimeError("ziggurat tables do not cover the density")  # would be a bug in r
    heights = [f(xi) for xi in x]
    heights[0] = 0.0  # unused: layer 0 has no wedge
    heights[layers] = top
    width = np.array([xi * 2.0 ** -52 for xi in x[:layers]])
    accept = np.array([math.floor(x[i + 1] / x[i] * 2.0 ** 52) for i in range(layers)], dtype=np.uint64)
    return width, accept, np.array(heights)


_ZIG_WIDTH, _ZIG_ACCEPT, _ZIG_HEIGHT = _ziggurat_tables(_normal_half, _normal_half_inverse, _normal_tail, _ZIG_R)
_ZIG_EXP_WIDTH, _ZIG_EXP_ACCEPT, _ZIG_EXP_HEIGHT = _ziggurat_tables(_exp_half, _exp_inverse, _exp_tail, _ZIG_EXP_R)
_ZIG_INV_R = 1.0 / _ZIG_R
# Python-int/float copies for PyStream (same doubles, no numpy scalars in the twin).
_PY_ZIG_WIDTH = [float(w) for w in _ZIG_WIDTH]
_PY_ZIG_ACCEPT = [int(k) for k in _ZIG_ACCEPT]
_PY_ZIG_HEIGHT = [float(h) for h in _ZIG_HEIGHT]
_PY_ZIG_EXP_WIDTH = [float(w) for w in _ZIG_EXP_WIDTH]
_PY_ZIG_EXP_ACCEPT = [int(k) for k in _ZIG_EXP_ACCEPT]
_PY_ZIG_EXP_HEIGHT = [float(h) for h in _ZIG_EXP_HEIGHT]
_U255 = np.uint64(255)
_U8 = np.uint64(8)
_U12 = np.uint64(12)
_U1 = np.uint64(1)
_U0 = np.uint64(0)


# Each sampler below is split in two: an inlined fast path (the first word's ziggurat test, or the
# gamma's squeeze) and a rare rest that is a separate compiled function, so that kernels inline only
# the fast path. Inlined whole, the rest (log and exp calls, nested rejection loops) made LLVM keep
# SW-TS's loop values in memory: 18-20 -> 15.5-17 ns per round and arm on the Figure 2 instances
# (K = 4 to 14, T = 100,000); the counter-based reward normal 5.1 -> 4.0 ns, ET-SWGTS 9.2 -> 8.1
# (K = 5) and 5.8 -> 5.2 (K = 13) ns per round and arm; same draws (2026-12-01). The rest continues
# from the state the fast path reached, so the words are consumed in the same order as in one loop.


@njit(cache=True, inline="always")
def _normal_try(z):
    """The ziggurat's fast path on the 64-bit word z: (signed x, accepted). Layer from the low 8
    bits, sign from bit 8, abscissa from the top 52 bits."""
    i = np.int64(z & _U255)
    bits = z >> _U12
    x = float(np.int64(bits)) * _ZIG_WIDTH[i]
    if ((z >> _U8) & _U1) != _U0:
        x = -x
    return x, bits < _ZIG_ACCEPT[i]


@njit(cache=True)
def _normal_rest(s, z):
    """``nb_normal_step`` after its word z failed the fast test (about 1% of draws)."""
    while True:
        i = np.int64(z & _U255)
        negative = ((z >> _U8) & _U1) != _U0
        x = float(np.int64(z >> _U12)) * _ZIG_WIDTH[i]
        if i == 0:
            # Tail x > r: r + a with a = Exp / r, accepted with probability exp(-a^2 / 2).
            while True:
                u1, s = nb_uniform_step(s)
                u2, s = nb_uniform_step(s)
                a = -math.log(1.0 - u1) * _ZIG_INV_R
                b = -math.log(1.0 - u2)
                if b + b > a * a:
                    x = _ZIG_R + a
                    return (-x if negative else x), s
        u, s = nb_uniform_step(s)
        if _ZIG_HEIGHT[i] + u * (_ZIG_HEIGHT[i + 1] - _ZIG_HEIGHT[i]) < math.exp(-0.5 * x * x):
            return (-x if negative else x), s
        z, s = nb_u64_step(s)  # outside the wedge: a fresh word
        x, accepted = _normal_try(z)
        if accepted:
            return x, s


@njit(cache=True, inline="always")
def nb_normal_step(s):
    """Standard normal by the 256-layer ziggurat: returns (z, new state). One 64-bit draw for about
    99% of the outputs (layer, sign and abscissa from its bits); the rest in ``_normal_rest``."""
    z, s = nb_u64_step(s)
    x, accepted = _normal_try(z)
    if accepted:
        return x, s
    return _normal_rest(s, z)


@njit(cache=True, inline="always")
def _exponential_try(z):
    """The exponential ziggurat's fast path on the word z: (x, accepted)."""
    i = np.int64(z & _U255)
    bits = z >> _U12
    return float(np.int64(bits)) * _ZIG_EXP_WIDTH[i], bits < _ZIG_EXP_ACCEPT[i]


@njit(cache=True)
def _exponential_rest(s, z):
    """``nb_exponential_step`` after its word z failed the fast test (about 1% of draws)."""
    offset = 0.0
    while True:
        i = np.int64(z & _U255)
        x = float(np.int64(z >> _U12)) * _ZIG_EXP_WIDTH[i]
        if i == 0:
            offset += _ZIG_EXP_R  # the tail beyond r is r plus a fresh exponential
        else:
            u, s = nb_uniform_step(s)
            if _ZIG_EXP_HEIGHT[i] + u * (_ZIG_EXP_HEIGHT[i + 1] - _ZIG_EXP_HEIGHT[i]) < math.exp(-x):
                return offset + x, s
        z, s = nb_u64_step(s)
        x, accepted = _exponential_try(z)
        if accepted:
            return offset + x, s


@njit(cache=True, inline="always")
def nb_exponential_step(s):
    """Standard exponential by the 256-layer ziggurat: returns (x, new state). The tail beyond r is
    r plus a fresh exponential (memorylessness); rare paths in ``_exponential_rest``."""
    z, s = nb_u64_step(s)
    x, accepted = _exponential_try(z)
    if accepted:
        return x, s
    return _exponential_rest(s, z)


def gamma_constants(shape):
    """(d, c) = (shape - 1/3, 1 / sqrt(9 d)) of Marsaglia and Tsang's gamma sampler, shape >= 1.
    Kernels may tabulate them; the expression is the same on both sides, so are the doubles."""
    d = shape - 1.0 / 3.0
    return d, 1.0 / math.sqrt(9.0 * d)


nb_gamma_constants = njit(cache=True, inline="always")(gamma_constants)


@njit(cache=True, inline="always")
def _gamma_try(s, d, c):
    """One proposal of ``nb_gamma_step`` up to its squeeze: (g, new state, accepted, x, v1, e); g is
    meaningful only if accepted, e = 0 if v1 <= 0 (no uniform drawn then)."""
    x, s = nb_normal_step(s)
    v1 = 1.0 + c * x
    if v1 <= 0.0:
        return 0.0, s, False, x, v1, 0.0
    e, s = nb_uniform_step(s)
    x2 = x * x
    if e * min(v1, 1.0) * (108.0 * d) > x2 * x2:
        return d * (v1 * v1 * v1), s, True, x, v1, e
    return 0.0, s, False, x, v1, e


@njit(cache=True)
def _gamma_rest(s, d, c, x, v1, e):
    """``nb_gamma_step`` after a proposal (x, v1, e) failed the squeeze: Marsaglia and Tsang's exact
    test on it, then fresh proposals."""
    while True:
        if v1 > 0.0:
            v = v1 * v1 * v1
            if math.log(1.0 - e) < 0.5 * (x * x) + d * (1.0 - v + math.log(v)):
                return d * v, s
        g, s, accepted, x, v1, e = _gamma_try(s, d, c)
        if accepted:
            return g, s


@njit(cache=True, inline="always")
def nb_gamma_step(s, d, c):
    """Gamma(d + 1/3, 1) for shape >= 1 by Marsaglia and Tsang (2000) on ziggurat normals; (d, c)
    from ``gamma_constants``. Returns (g, new state).

    Their method proposes d v with v = (1 + c x)^3, x standard normal, and accepts when
    log(1 - e) < h(x) = x^2 / 2 + d (1 - v + log v), e uniform in [0, 1). Instead of their squeeze
    (1 - e < 1 - 0.0331 x^4) we use a tighter one that improves with the shape, so that the
    logarithms are needed only for about the rejected fraction (5% at shape 1, under 1% from
    shape 5): with w = c x, h = d phi(w) where phi(w) = 3w^2/2 - 3w - w^3 + 3 log(1 + w) has
    phi'(w) = -3 w^3 / (1 + w), hence phi(w) >= -3 w^4 / (4 (1 + min(w, 0))) on w > -1, and since
    exp(h) >= 1 + h and 9 d c^2 = 1, every e with e (1 + min(w, 0)) 108 d > x^4 is accepted by
    the exact test too. The squeeze only skips logarithms: the accepted set, and so the output's
    law, is Marsaglia and Tsang's. The squeeze is inlined (``_gamma_try``), the logarithms and the
    retries are not (``_gamma_rest``)."""
    g, s, accepted, x, v1, e = _gamma_try(s, d, c)
    if accepted:
        return g, s
    return _gamma_rest(s, d, c, x, v1, e)


# Integer shapes up to this are drawn as sums of exponentials (cheaper than Marsaglia-Tsang there).
ERLANG_MAX = 2


@njit(cache=True, inline="always")
def nb_gamma_int_step(s, n, d, c):
    """Gamma(n, 1) for an integer n >= 1: the sum of n standard exponentials (ziggurat) when
    n <= ERLANG_MAX, else ``nb_gamma_step`` with (d, c) = ``gamma_constants(n)`` (unused otherwise).
    Returns (g, new state)."""
    if n <= ERLANG_MAX:
        g, s = nb_exponential_step(s)
        for _ in range(n - 1):
            e, s = nb_exponential_step(s)
            g += e
        return g, s
    return nb_gamma_step(s, d, c)


@njit(cache=True, inline="always")
def nb_beta_int_step(s, a, b, da, ca, db, cb):
    """Beta(a, b) for integers a, b >= 1 as X / (X + Y), X ~ Gamma(a) drawn before Y ~ Gamma(b)
    (``nb_gamma_int_step``; (da, ca), (db, cb) = ``gamma_constants`` of a and b, which a kernel
    can tabulate). Returns (theta, new state)."""
    x, s = nb_gamma_int_step(s, a, da, ca)
    y, s = nb_gamma_int_step(s, b, db, cb)
    return x / (x + y), s


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

    # Twins of the scalar-state samplers (``nb_*_step``): uniform() above is also nb_uniform_step's.

    def normal_zig(self) -> float:
        """Twin of ``nb_normal_step``."""
        while True:
            z = self.next_u64()
            i = z & 255
            negative = (z >> 8) & 1 == 1
            bits = z >> 12
            x = float(bits) * _PY_ZIG_WIDTH[i]
            if bits < _PY_ZIG_ACCEPT[i]:
                return -x if negative else x
            if i == 0:
                while True:
                    u1 = self.uniform()
                    u2 = self.uniform()
                    a = -math.log(1.0 - u1) * _ZIG_INV_R
                    b = -math.log(1.0 - u2)
                    if b + b > a * a:
                        x = _ZIG_R + a
                        return -x if negative else x
            u = self.uniform()
            if _PY_ZIG_HEIGHT[i] + u * (_PY_ZIG_HEIGHT[i + 1] - _PY_ZIG_HEIGHT[i]) < math.exp(-0.5 * x * x):
                return -x if negative else x

    def exponential_zig(self) -> float:
        """Twin of ``nb_exponential_step``."""
        offset = 0.0
        while True:
            z = self.next_u64()
            i = z & 255
            bits = z >> 12
            x = float(bits) * _PY_ZIG_EXP_WIDTH[i]
            if bits < _PY_ZIG_EXP_ACCEPT[i]:
                return offset + x
            if i == 0:
                offset += _ZIG_EXP_R
                continue
            u = self.uniform()
            if _PY_ZIG_EXP_HEIGHT[i] + u * (_PY_ZIG_EXP_HEIGHT[i + 1] - _PY_ZIG_EXP_HEIGHT[i]) < math.exp(-x):
                return offset + x

    def gamma_mt(self, d: float, c: float) -> float:
        """Twin of ``nb_gamma_step``: Gamma(d + 1/3), (d, c) from ``gamma_constants``."""
        while True:
            x = self.normal_zig()
            v1 = 1.0 + c * x
            if v1 <= 0.0:
                continue
            v = v1 * v1 * v1
            e = self.uniform()
            x2 = x * x
            if e * min(v1, 1.0) * (108.0 * d) > x2 * x2:
                return d * v
            if math.log(1.0 - e) < 0.5 * x2 + d * (1.0 - v + math.log(v)):
                return d * v

    def gamma_int(self, n: int) -> float:
        """Twin of ``nb_gamma_int_step``: Gamma(n) for an integer n >= 1."""
        if n <= ERLANG_MAX:
            g = self.exponential_zig()
            for _ in range(n - 1):
                g += self.exponential_zig()
            return g
        d, c = gamma_constants(float(n))
        return self.gamma_mt(d, c)

    def beta_int(self, a: int, b: int) -> float:
        """Twin of ``nb_beta_int_step``: Beta(a, b) for integers a, b >= 1."""
        x = self.gamma_int(a)
        y = self.gamma_int(b)
        return x / (x + y)
