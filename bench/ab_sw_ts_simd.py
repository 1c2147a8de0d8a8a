"""Tried and not kept: SW-TS's K posterior draws of a round computed for all arms at once (prints figures).

    .venv/bin/python bench/ab_sw_ts_simd.py [--T 100000] [--reps 5]

SW-TS draws theta_i ~ Beta(S_i + 1, F_i + 1) for every arm every round (``rng.nb_beta_int_step``). On the
sampler's fast path (the ziggurat's first word accepted, Marsaglia and Tsang's squeeze passed) a gamma of
integer shape n uses exactly min(n, 2) words of the splitmix64 stream, and word j after state s is a function
of s + j * golden alone. So the words of every arm of a round are known in advance from (S, F), and the round
can be computed speculatively, then checked. Two ways, each against ``_sw_ts_kernel`` as it is:

- ``spec``: one branch-free loop over the arms (no calls, no early exit, so that LLVM vectorizes it: 64-bit
  multiplies, gathers from the ziggurat tables) computes every arm's theta and a flag "fast path held"; then a
  scalar loop takes the argmax (lowest index on ties, ``theta > best``) up to the first arm whose flag failed,
  and from that arm on the round is drawn by the existing serial code (later arms' words have shifted).
- ``words``: only the stream is vectorized: 64 words at a time into a buffer (one vectorized loop); each arm's
  fast path reads its words from the buffer with the serial code's branches; an arm whose fast path fails is
  redrawn exactly from its first word and the buffer position follows the state.

Both choose the same arms and leave the stream in the same state as the kernel (checked first, on the
notebooks' instances and on short windows, where shapes 1 and 2 and the slow paths are frequent; a difference
is printed and makes the exit status 1). Then CPU time, old and new alternated (A, B, A, B ...).

Measured 2026-12-01 08:28 UTC (T = 100,000, 7 repetitions, load 1.5, minimum ns per round and arm): the kernel
13.9 to 15.9; ``spec`` 22.3 to 27.1 at K = 4-5 and 16.7 to 19.2 at K = 11-14 (20 to 80 % slower); ``words`` 1 to
9 % slower. Speculating per arm instead (branch-free fast path of one arm, exact redraw of that arm only) was
20 to 40 % slower. Not kept: the bar was 15 % faster. Why, measured the same day:

- The shapes are not mostly Marsaglia-Tsang: on these instances a = S_i + 1 is 1 or 2 in 43 to 78 % of the
  draws (one or two exponentials), b = F_i + 1 is 3 or more in over 99.9 % (95 % on "ltf 001"). So the
  branch-free pass computes both readings of a's words, and always four words per arm (8 multiplies).
- A draw leaves the fast path in 4.0 to 4.5 % of the arms, so the whole round holds in 81 to 85 % of the
  rounds at K = 4-5 and in 53 to 63 % at K = 11-14; the rest of such a round is redrawn serially. (Redrawing
  only the failed arm and speculating the rest again was slower still.)
- numba checks every float division for zero and raises ``ZeroDivisionError`` (an early exit), and LLVM cannot
  prove the gamma constants' table apart from the outputs: either keeps the loop scalar. Without both
  (``error_model="numpy"``, the constants kept per arm in rows of P) it vectorizes, in 256-bit registers (LLVM's
  choice on this CPU), behind runtime alias checks; the vector body runs from 8 arms when the loop starts at a
  constant 0 (16 to 20 otherwise), hence the padding. The pass then costs 8 to 10 ns per arm against 11.6 to 12
  for the serial draws in a microbenchmark (K = 8 to 32; in 512-bit registers, which only a process-wide
  ``NUMBA_CPU_FEATURES`` override gives, about 5): four gathers per gamma, two 64-bit multiplies per word.
- The serial draws are already parallel across arms (only s += golden chains them): the out-of-order core
  overlaps one arm's words and table reads with the next arm's. Buffering the words saves the mixing but adds
  a load, an index and a refill test per arm. (An inlined helper taking the buffer array made it 5x slower:
  numba updates the array's reference count at every call.)
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time

import numpy as np
from numba import njit

import horizonbandits.rising as R
from horizonbandits import rng
from horizonbandits.experiments import instance_set
from horizonbandits.rising.policies.sw_ts import SWTS, _sw_ts_kernel
from horizonbandits.rising.rewards import fill_x, kernel_args
from horizonbandits.rng import _exponential_try, _normal_try, nb_beta_int_step, nb_gamma_constants, new_state

_G = rng._U_GOLDEN
_G2 = np.uint64((2 * rng._GOLDEN) & rng._MASK)
_G_INVERSE = np.uint64(pow(rng._GOLDEN, -1, 1 << 64))  # word count from a state difference: (s1 - s0) * this
# The two ziggurats' tables end to end, so that one gather serves the first word of a gamma of either kind:
# rows 0..255 the normal's, 256..511 the exponential's.
_BOTH_WIDTH = np.concatenate([rng._ZIG_WIDTH, rng._ZIG_EXP_WIDTH])
_BOTH_ACCEPT = np.concatenate([rng._ZIG_ACCEPT, rng._ZIG_EXP_ACCEPT])
_EXP_WIDTH = rng._ZIG_EXP_WIDTH
_EXP_ACCEPT = rng._ZIG_EXP_ACCEPT
_U256 = np.uint64(256)
_WORDS = 64  # words per refill of the ``words`` buffer


@njit(inline="always")
def _mix(c):
    """splitmix64's output for counter value c (``rng.nb_u64_step`` without the state update)."""
    z = (c ^ (c >> rng._U30)) * rng._U_MIX1
    z = (z ^ (z >> rng._U27)) * rng._U_MIX2
    return z ^ (z >> rng._U31)


@njit(inline="always")
def _spec_gamma(z0, z1, n, d, c):
    """Gamma(n) from the words z0, z1 if ``nb_gamma_int_step`` would take its fast path on them, branch-free:
    (g, held). Both readings are computed: n <= 2, the sum of n ziggurat exponentials; n >= 3, Marsaglia and
    Tsang on the ziggurat normal of z0 with the uniform of z1 and the same squeeze, same operations in the same
    order as the serial code, so the same doubles."""
    erlang = n <= 2
    row = (z0 & rng._U255) + (_U256 if erlang else rng._U0)
    bits0 = z0 >> rng._U12
    x0 = float(np.int64(bits0)) * _BOTH_WIDTH[row]
    held0 = bits0 < _BOTH_ACCEPT[row]
    row1 = z1 & rng._U255
    bits1 = z1 >> rng._U12
    e1 = float(np.int64(bits1)) * _EXP_WIDTH[row1]
    g_erlang = x0 + e1 if n == 2 else x0
    held_erlang = held0 & ((bits1 < _EXP_ACCEPT[row1]) | (n == 1))
    x = -x0 if ((z0 >> rng._U8) & rng._U1) != rng._U0 else x0
    v1 = 1.0 + c * x
    u = float(np.int64(z1 >> rng._U11)) * rng._INV_2_53
    x2 = x * x
    held_mt = held0 & (v1 > 0.0) & (u * min(v1, 1.0) * (108.0 * d) > x2 * x2)
    g_mt = d * (v1 * v1 * v1)
    return (g_erlang if erlang else g_mt), (held_erlang if erlang else held_mt)


@njit(error_model="numpy")
def _spec_pass(s, lo, hi, offset, S, F, P, theta, held):
    """Arms lo .. hi - 1 of a round whose arm i starts at state s + offset[i]: theta[i] and held[i]. No
    division check (numpy error model): a zero denominator clears the flag instead, and the serial redraw
    then raises as the kernel does."""
    for i in range(lo, hi):
        c0 = s + offset[i]
        c1 = c0 + (_G if S[i] == 0 else _G2)  # b's first word follows a's one or two
        ga, held_a = _spec_gamma(_mix(c0 + _G), _mix(c0 + _G2), S[i] + 1, P[0, i], P[1, i])
        gb, held_b = _spec_gamma(_mix(c1 + _G), _mix(c1 + _G2), F[i] + 1, P[2, i], P[3, i])
        total = ga + gb
        theta[i] = ga / total
        held[i] = held_a & held_b & (total != 0.0)


@njit
def _spec_kernel(mode, table, sigma_x, keys, work, T, tau, checkpoints, arms_out, state, padded):
    """``_sw_ts_kernel`` with the round's draws speculated by ``_spec_pass`` over ``padded`` >= K arms."""
    K = table.shape[0]
    X = work[0]
    filled = np.zeros(K, dtype=np.int64)
    counts = np.zeros(K, dtype=np.int64)
    S = np.zeros(padded, dtype=np.int64)  # padding arms stay at Beta(1, 1) and are never read
    F = np.zeros(padded, dtype=np.int64)
    size = min(tau, T)
    ring_arm = np.zeros(size, dtype=np.int64)
    ring_y = np.zeros(size, dtype=np.int64)
    out = np.zeros((checkpoints.size, K), dtype=np.int64)
    g = np.empty((size + 1, 2))
    for n in range(size + 1):
        g[n, 0], g[n, 1] = nb_gamma_constants(float(n + 1))
    P = np.empty((4, padded))  # (d, c) of a, then of b, per arm: rows, so that the pass reads them in order
    for i in range(padded):
        P[0, i], P[1, i], P[2, i], P[3, i] = g[0, 0], g[0, 1], g[0, 0], g[0, 1]
    offset = np.zeros(padded + 1, dtype=np.uint64)  # golden * (fast-path words before arm i)
    theta = np.empty(padded)
    held = np.empty(padded, dtype=np.bool_)
    words_changed = True
    s = state[0]
    pos = 0
    keep_arms = arms_out.size > 0
    next_cp = checkpoints[0] if checkpoints.size > 0 else -1
    ci = 0
    for t in range(1, T + 1):
        if words_changed:  # an arm's S or F moved between 0 and 1: its word count changed
            c = np.uint64(0)
            for i in range(K):
                offset[i] = c
                c += np.uint64((1 if S[i] == 0 else 2) + (1 if F[i] == 0 else 2)) * _G
            offset[K] = c
            words_changed = False
        _spec_pass(s, 0, padded, offset, S, F, P, theta, held)
        arm = 0
        best = -np.inf
        i = 0
        while i < K and held[i]:
            better = theta[i] > best
            best = theta[i] if better else best
            arm = i if better else arm
            i += 1
        if i == K:
            s = s + offset[K]
        else:  # arm i left the fast path: from it on, the serial draws
            s = s + offset[i]
            for j in range(i, K):
                a = S[j]
                b = F[j]
                ra = np.uint64(a)
                rb = np.uint64(b)
                th, s = nb_beta_int_step(s, a + 1, b + 1, g[ra, 0], g[ra, 1], g[rb, 0], g[rb, 1])
                better = th > best
                best = th if better else best
                arm = j if better else arm
        counts[arm] += 1
        if counts[arm] > filled[arm]:
            filled[arm] = fill_x(X, mode, table, sigma_x, keys, arm, filled[arm] + 1, T)
        reward = min(max(X[arm, counts[arm]], 0.0), 1.0)
        u, s = rng.nb_uniform_step(s)
        y = 1 if u < reward else 0
        if t > tau:
            old = ring_arm[pos]
            if ring_y[pos] == 1:
                S[old] -= 1
                P[0, old], P[1, old] = g[S[old], 0], g[S[old], 1]
                words_changed |= S[old] == 0
            else:
                F[old] -= 1
                P[2, old], P[3, old] = g[F[old], 0], g[F[old], 1]
                words_changed |= F[old] == 0
        ring_arm[pos] = arm
        ring_y[pos] = y
        if y == 1:
            S[arm] += 1
            P[0, arm], P[1, arm] = g[S[arm], 0], g[S[arm], 1]
            words_changed |= S[arm] == 1
        else:
            F[arm] += 1
            P[2, arm], P[3, arm] = g[F[arm], 0], g[F[arm], 1]
            words_changed |= F[arm] == 1
        pos += 1
        if pos == size:
            pos = 0
        if keep_arms:
            arms_out[t - 1] = arm
        if t == next_cp:
            for k in range(K):
                out[ci, k] = counts[k]
            ci += 1
            next_cp = checkpoints[ci] if ci < checkpoints.size else -1
    state[0] = s
    return out


@njit(inline="always")
def _gamma_int_words(z0, z1, n, d, c):
    """``nb_gamma_int_step``'s fast path on its next two words, with its branches: (g, words used, held)."""
    if n <= 2:
        x, held = _exponential_try(z0)
        if n == 1:
            return x, 1, held
        e, held1 = _exponential_try(z1)
        return x + e, 2, held & held1
    x, held = _normal_try(z0)
    v1 = 1.0 + c * x
    u = float(np.int64(z1 >> rng._U11)) * rng._INV_2_53
    x2 = x * x
    return d * (v1 * v1 * v1), 2, held & (v1 > 0.0) & (u * min(v1, 1.0) * (108.0 * d) > x2 * x2)


@njit
def _words_kernel(mode, table, sigma_x, keys, work, T, tau, checkpoints, arms_out, state):
    """``_sw_ts_kernel`` with the stream's words made ``_WORDS`` at a time by a vectorized loop. The state is
    base + k golden: buf[j] is the word after base + j golden. The refill is written out here, not in a
    helper: an inlined function taking the buffer costs a reference-count update per call (5x slower)."""
    K = table.shape[0]
    X = work[0]
    filled = np.zeros(K, dtype=np.int64)
    counts = np.zeros(K, dtype=np.int64)
    S = np.zeros(K, dtype=np.int64)
    F = np.zeros(K, dtype=np.int64)
    size = min(tau, T)
    ring_arm = np.zeros(size, dtype=np.int64)
    ring_y = np.zeros(size, dtype=np.int64)
    out = np.zeros((checkpoints.size, K), dtype=np.int64)
    g = np.empty((size + 1, 2))
    for n in range(size + 1):
        g[n, 0], g[n, 1] = nb_gamma_constants(float(n + 1))
    buf = np.empty(_WORDS, dtype=np.uint64)
    k = _WORDS  # empty: the first test refills
    base = state[0] - np.uint64(_WORDS) * _G
    pos = 0
    keep_arms = arms_out.size > 0
    next_cp = checkpoints[0] if checkpoints.size > 0 else -1
    ci = 0
    for t in range(1, T + 1):
        arm = 0
        best = -np.inf
        for i in range(K + 1):  # K arms, then the Bernoulli trick's uniform
            if k > _WORDS - 4:  # an arm's fast path reads up to 4 words
                base = base + np.uint64(k) * _G
                k = 0
                for j in range(_WORDS):
                    buf[j] = _mix(base + np.uint64(j + 1) * _G)
            if i == K:
                break
            a = S[i]
            b = F[i]
            ra = np.uint64(a)
            rb = np.uint64(b)
            uk = np.uint64(k)
            z0, z1, z2, z3 = buf[uk], buf[uk + rng._U1], buf[uk + np.uint64(2)], buf[uk + np.uint64(3)]
            x, used_a, held_a = _gamma_int_words(z0, z1, a + 1, g[ra, 0], g[ra, 1])
            if used_a == 1:
                y, used_b, held_b = _gamma_int_words(z1, z2, b + 1, g[rb, 0], g[rb, 1])
            else:
                y, used_b, held_b = _gamma_int_words(z2, z3, b + 1, g[rb, 0], g[rb, 1])
            if held_a & held_b:
                th = x / (x + y)
                k += used_a + used_b
            else:  # redrawn exactly from the arm's first word; the buffer position follows the state
                s = base + uk * _G
                th, s = nb_beta_int_step(s, a + 1, b + 1, g[ra, 0], g[ra, 1], g[rb, 0], g[rb, 1])
                k = np.int64((s - base) * _G_INVERSE)
            better = th > best
            best = th if better else best
            arm = i if better else arm
        counts[arm] += 1
        if counts[arm] > filled[arm]:
            filled[arm] = fill_x(X, mode, table, sigma_x, keys, arm, filled[arm] + 1, T)
        reward = min(max(X[arm, counts[arm]], 0.0), 1.0)
        u = float(np.int64(buf[np.uint64(k)] >> rng._U11)) * rng._INV_2_53
        k += 1
        y = 1 if u < reward else 0
        if t > tau:
            old = ring_arm[pos]
            S[old] -= ring_y[pos]
            F[old] -= 1 - ring_y[pos]
        ring_arm[pos] = arm
        ring_y[pos] = y
        S[arm] += y
        F[arm] += 1 - y
        pos += 1
        if pos == size:
            pos = 0
        if keep_arms:
            arms_out[t - 1] = arm
        if t == next_cp:
            for kk in range(K):
                out[ci, kk] = counts[kk]
            ci += 1
            next_cp = checkpoints[ci] if ci < checkpoints.size else -1
    state[0] = base + np.uint64(k) * _G
    return out


def _padded(K: int) -> int:
    return (K + 7) // 8 * 8


def run(which: str, source, T: int, tau: int, arms_out, seed: int):
    """(CPU seconds, pull counts at T, final stream state) of one run of the kernel ``which``."""
    args = (*kernel_args(source, T), T, tau, np.array([T], dtype=np.int64), arms_out, new_state(seed))
    state = args[-1]
    t0 = time.process_time()
    if which == "kernel":
        out = _sw_ts_kernel(*args)
    elif which == "spec":
        out = _spec_kernel(*args, _padded(source.K))
    else:
        out = _words_kernel(*args)
    return time.process_time() - t0, out, int(state[0])


def check(cases, T: int, tau: int) -> bool:
    """Same arm every round and same final state as the kernel, on every case and window."""
    ok = True
    for name, _, source in cases:
        for window in (tau, 3, 12):  # short windows: small shapes, Erlang draws, frequent slow paths
            ref = np.empty(T, dtype=np.int64)
            _, counts, state = run("kernel", source, T, window, ref, 7)
            for which in ("spec", "words"):
                arms = np.empty(T, dtype=np.int64)
                _, c2, s2 = run(which, source, T, window, arms, 7)
                if not (np.array_equal(arms, ref) and np.array_equal(counts, c2) and state == s2):
                    print(f"DIFFERENT: {which} on {name}, window {window}")
                    ok = False
    return ok


def vector_report() -> str:
    """What LLVM made of ``_spec_pass``: vector instructions, and the trip count below which it runs scalar."""
    asm = next(iter(_spec_pass.inspect_asm().values()))
    counts = {name: len(re.findall(pattern, asm)) for name, pattern in
              (("ymm", "ymm"), ("zmm", "zmm"), ("gathers", "gather"), ("64-bit multiplies", "vpmullq"))}
    floor = re.search(r"cmpq\s+\$(\d+), %\w+\n\s+jae", asm)
    return (", ".join(f"{n} {c}" for n, c in counts.items())
            + (f"; vector body from {floor.group(1)} iterations" if floor else ""))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--T", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    T = args.T
    tau = SWTS(window_rule="horizon").window(T)
    seed = R.policy_stream_seed(0, 0)
    cases = [(name, inst, R.reward_source(inst, 0, 0))
             for family in ("ltf", "concave")
             for name, inst in instance_set(family, 4, seed=0, H=T, noise=0.01).items()]
    if not check(cases, min(T, 20_000), tau):
        sys.exit(1)
    print("same arms and final stream state as the kernel on every case (windows tau, 3, 12)")
    print("_spec_pass:", vector_report())
    kinds = ("kernel", "spec", "words")
    times = {(name, w): [] for name, _, _ in cases for w in kinds}
    for _ in range(args.reps):
        for name, inst, source in cases:
            for w in kinds:
                times[(name, w)].append(run(w, source, T, tau, np.empty(0, dtype=np.int64), seed)[0] / (T * inst.K) * 1e9)
    print(f"SW-TS, T = {T:,}, window {tau}, {args.reps} repetitions interleaved, load {os.getloadavg()[0]:.2f}; "
          "ns per round and arm, min / median")
    print(f"{'instance':<12} {'K':>3} " + " ".join(f"{w:>15}" for w in kinds))
    for name, inst, _ in cases:
        cells = [f"{min(times[(name, w)]):6.2f} / {np.median(times[(name, w)]):6.2f}" for w in kinds]
        print(f"{name:<12} {inst.K:>3} " + " ".join(f"{c:>15}" for c in cells))


if __name__ == "__main__":
    main()
