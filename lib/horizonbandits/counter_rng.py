"""Counter-based draws: the random number of "pull n of an arm" as a pure function of (arm key, n).

The rising environment draws its rewards at the moment a policy pulls an arm, inside the compiled
kernels, instead of pre-drawing a K x T table of which only T entries are read. To keep common random
numbers (the n-th pull of arm i is the same number for every policy, and a shorter horizon is a
prefix of a longer one) the draw cannot come from a sequential stream; it is computed from the arm's
64-bit key (``seeds.arm_reward_key``) and the pull number alone:

    state(key, n) = mix(key + n * GOLDEN)        mix = splitmix64's output function

and the draw is the first output of the ``rng`` splitmix64 stream started at that state: a Gaussian
by the 256-layer ziggurat (``rng.nb_normal_step``; its rare rejections keep drawing from the same
private stream, so pull n never shares a word with pull n + 1), a uniform by ``rng.nb_uniform_step``.
The extra ``mix`` makes the starting states of consecutive pulls unrelated 64-bit words, rather than
neighbours GOLDEN apart on the same splitmix64 sequence (which would make pull n's second word pull
n + 1's first).

``pull_normal`` / ``pull_uniform`` are the plain-Python twins (integer arithmetic masked to 64 bits,
through ``rng.PyStream``): the same floats bit for bit (``tests/test_rng.py``).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .rng import (  # splitmix64's constants, as Python ints (the twin) and as uint64 (the kernels)
    _GOLDEN,
    _MASK,
    _MIX1,
    _MIX2,
    _U27,
    _U30,
    _U31,
    _U_GOLDEN,
    _U_MIX1,
    _U_MIX2,
    PyStream,
    nb_normal_step,
    nb_uniform_step,
)


@njit(cache=True, inline="always")
def nb_pull_state(key, n):
    """Starting state of pull n (int) of the arm with 64-bit ``key`` (uint64)."""
    z = key + np.uint64(n) * _U_GOLDEN
    z = (z ^ (z >> _U30)) * _U_MIX1
    z = (z ^ (z >> _U27)) * _U_MIX2
    return z ^ (z >> _U31)


@njit(cache=True, inline="always")
def nb_pull_normal(key, n):
    """Standard normal of pull n of the arm with ``key``."""
    z, _ = nb_normal_step(nb_pull_state(key, n))
    return z


@njit(cache=True, inline="always")
def nb_pull_uniform(key, n):
    """Uniform in [0, 1) (53 bits) of pull n of the arm with ``key``."""
    u, _ = nb_uniform_step(nb_pull_state(key, n))
    return u


def pull_state(key: int, n: int) -> int:
    """Twin of ``nb_pull_state``."""
    z = (int(key) + int(n) * _GOLDEN) & _MASK
    z = ((z ^ (z >> 30)) * _MIX1) & _MASK
    z = ((z ^ (z >> 27)) * _MIX2) & _MASK
    return z ^ (z >> 31)


def pull_normal(key: int, n: int) -> float:
    """Twin of ``nb_pull_normal``."""
    return PyStream(pull_state(key, n)).normal_zig()


def pull_uniform(key: int, n: int) -> float:
    """Twin of ``nb_pull_uniform``."""
    return PyStream(pull_state(key, n)).uniform()
