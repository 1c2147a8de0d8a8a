"""Random concave rising instances of the CURE-UCB paper (appendix B.1.2) and their growth families.

Every arm follows mu(n) = s + (L - s) g(n) for n = 0..T_max, where g is one of three concave
nondecreasing shapes normalised so that g(0) = 0 and g(H) = 1 (so mu(0) = s and mu(H) = L):

- exponential  g(n) = (1 - exp(-k n)) / (1 - exp(-k H))
- rational     g(n) = [k n / (1 + k n)] / [k H / (1 + k H)]
- arctangent   g(n) = arctan(k n) / arctan(k H)

The rate k is calibrated per arm so that a share (85 %) of the rise from s to L is done by a target
checkpoint n*: closed form for the rational family, bisection on log k for the other two (g(n*) is
increasing in k for all three), then multiplied by a uniform +-5 % perturbation.

``concave_random`` builds the role-based instance of appendix B.1.2 (one optimal late bloomer, one
early peaker, floor(K/2) near-optimal challengers, the rest distractors, arms in random order).
The appendix leaves several numbers out or states them inconsistently; our resolutions are listed
in the docstring of :func:`concave_arm_specs` and are all keyword parameters.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import check_choice, check_int, check_real, check_table_memory
from .instances import RisingInstance

FAMILIES = ("exponential", "rational", "arctangent")


# --------------------------------------------------------------------------------------------
# Normalised growth shapes g(n; k, H) with g(0) = 0 and g(H) = 1
# --------------------------------------------------------------------------------------------

def growth_shape(family: str, k: float, H: float, n) -> np.ndarray:
    """g(n) of ``family`` with rate ``k``, normalised to g(0) = 0 and g(H) = 1 (concave, nondecreasing)."""
    check_choice("family", family, FAMILIES)
    k = check_real("k", k, 0.0, lo_open=True)
    n = np.asarray(n, dtype=float)
    if family == "exponential":
        # expm1 keeps the ratio accurate when k n is tiny.
        return np.expm1(-k * n) / math.expm1(-k * H)
    if family == "rational":
        return n * (1.0 + k * H) / (H * (1.0 + k * n))
    return np.arctan(k * n) / math.atan(k * H)


def calibrate_rate(family: str, checkpoint: float, H: float, share: float = 0.85) -> float:
    """The rate k with g(checkpoint) = share: ``share`` of the rise is done by the checkpoint.

    Every concave shape with g(0) = 0 and g(H) = 1 lies above the chord n / H, and each family tends
    to that chord as k -> 0, so a solution exists exactly when checkpoint / H < share.
    """
    check_choice("family", family, FAMILIES)
    H = check_real("H", H, 0.0, lo_open=True)
    share = check_real("share", share, 0.0, 1.0, lo_open=True, hi_open=True)
    checkpoint = check_real("checkpoint", checkpoint, 0.0, share * H, lo_open=True, hi_open=True)
    if family == "rational":
        # n (1 + k H) / (H (1 + k n)) = share  <=>  k = (share H - n) / ((1 - share) n H)
        return (share * H - checkpoint) / ((1.0 - share) * checkpoint * H)
    # Bisection on log k: g(checkpoint; k) increases from checkpoint/H (k -> 0) to 1 (k -> inf).
    lo, hi = math.log(1e-6 / H), math.log(1e6 / H)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if growth_shape(family, math.exp(mid), H, checkpoint) < share:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13:
            break
    return math.exp(0.5 * (lo + hi))


# --------------------------------------------------------------------------------------------
# Arms and the role-based instance
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ConcaveArm:
    """One arm mu(n) = s + (L - s) [w g_fast(n) + (1 - w) g(n)].

    ``g`` is ``family`` with rate ``k``; ``g_fast`` is the late bloomer's exponential shape with
    rate ``fast_k`` and ``blend`` = w is its weight (0 for every role but the challengers).
    ``checkpoint`` is the target n* used to calibrate k (None when k was fixed directly).
    """

    role: str
    name: str
    family: str
    s: float
    L: float
    k: float
    checkpoint: float | None = None
    blend: float = 0.0
    fast_k: float = 0.0

    def shape(self, n, H: float) -> np.ndarray:
        g = growth_shape(self.family, self.k, H, n)
        if self.blend > 0.0:
            g = self.blend * growth_shape("exponential", self.fast_k, H, n) + (1.0 - self.blend) * g
        return g

    def curve(self, T_max: int, H: float) -> np.ndarray:
        """mu(n) for n = 0..T_max."""
        n = np.arange(T_max + 1, dtype=float)
        return self.s + (self.L - self.s) * self.shape(n, H)

    def share_point(self, H: float, share: float = 0.85) -> float:
        """The (real) pull count n at which ``share`` of the rise from s to L is done: shape(n) = share."""
        lo, hi = 0.0, float(H)  # shape is nondecreasing with shape(0) = 0 and shape(H) = 1
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if self.shape(mid, H) < share:
                lo = mid
            else:
                hi = mid
            if hi - lo < 1e-9 * H:
                break
        return 0.5 * (lo + hi)


def _check_range(name: str, value, lo: float = 0.0, hi: float = 1.0) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}={value!r} is not allowed: expected a pair (low, high)") from None
    if not (lo <= a <= b <= hi):
        raise ValueError(f"{name}={value!r} is not allowed: expected {lo} <= low <= high <= {hi}")
    return a, b


def concave_arm_specs(rng: np.random.Generator, K: int | None = None, H: int = 100_000, *,
                      share: float = 0.85, perturbation: float = 0.05,
                      bloomer_start: float = 0.10, bloomer_level: float = 0.95, bloomer_rate: float | None = None,
                      peaker_start=(0.40, 0.58), peaker_level_max: float = 0.60, peaker_checkpoint=(0.02, 0.10),
                      challenger_start=(0.08, 0.12), challenger_level=(0.85, 0.90),
                      challenger_blend=(0.5, 0.8), challenger_checkpoint=(0.3, 0.8),
                      distractor_start=(0.05, 0.50), distractor_level_max: float = 0.70,
                      distractor_checkpoint=None, min_rise: float = 0.01,
                      bloomer_rises_fastest: bool = True, max_redraws: int = 1000) -> list[ConcaveArm]:
    """The arms of one random concave instance (appendix B.1.2), in random order.

    Stated in the appendix and followed: K ~ U{3..15}; one late bloomer with s = 0.10, L = 0.95 and
    the exponential family with the fixed rate k = 4/30,000 (no calibration, no perturbation); one
    early peaker with s ~ U[0.40, 0.58] and L <= 0.60; floor(K/2) challengers with s ~ U[0.08, 0.12],
    L ~ U[0.85, 0.90] whose shape blends the late bloomer's exponential with a slower sampled curve;
    K - 2 - floor(K/2) distractors with s ~ U[0.05, 0.50] and L <= 0.70; a uniformly drawn family
    per arm (other than the late bloomer); k calibrated so that 85 % of the rise is done by a target
    checkpoint n*, times U[0.95, 1.05]; a random arm order.

    The late bloomer's rate ``bloomer_rate`` defaults to 4/30,000 scaled by 100,000 / H (k H = 40/3), which is
    the appendix's value at its H = 100,000 and keeps the same shape for smaller H (smoke runs).

    Not given, our choices (fractions of H, all parameters):

    - checkpoints n* ~ U[0.02 H, 0.10 H] for the early peaker (it saturates early), U[0.3 H, 0.8 H]
      for the challengers' slower curve and U[n_LB, 0.8 H] for distractors, where n_LB (about 0.142 H)
      is the late bloomer's own 85 % point (``distractor_checkpoint=None``);
    - "rises faster than its competitors" (the rate k = 4/30,000 "front-loads its growth so that it
      rises faster than its competitors"), with the early peaker the exception the text itself makes
      ("saturates low", attractive early): with ``bloomer_rises_fastest`` (default) every challenger
      and distractor reaches 85 % of its own rise no earlier than the late bloomer, i.e.
      shape(n_LB) <= 0.85. A draw that breaks it (the +-5 % perturbation can move a checkpoint drawn
      near n_LB slightly earlier) is redrawn, at most ``max_redraws`` times. An earlier reading
      drew distractors' checkpoints from U[0.05 H, 0.8 H], so they could finish their rise at
      0.05 H, well before the late bloomer (``distractor_checkpoint=(0.05, 0.8),
      bloomer_rises_fastest=False`` gives that reading back);
    - the early peaker's level L ~ U[s + 0.01, 0.60] and a distractor's L ~ U[s + 0.01, 0.70]
      (the appendix only gives the upper bounds; every curve rises by at least ``min_rise``);
    - the challenger's blend weight on the late bloomer's shape w ~ U[0.5, 0.8]. The text: the
      challenger's growth "blends the optimal late bloomer's fast exponential shape with a slower
      sampled curve, so that it shadows the optimal late bloomer while keeping a small tail that
      improves up to H". "Shadows" asks that the late bloomer's shape carry at least half the weight
      (w >= 1/2: with less, the slower curve sets the pace and the challenger no longer tracks the late
      bloomer); "a small tail" asks that some weight stay on the slower curve (w < 1: w = 1 is the late
      bloomer's shape itself, no tail). The text gives no number inside (1/2, 1); U[0.5, 0.8] keeps a
      tail of 20 to 50 % of the weight, the interior of that range, and it is the reading this workbook
      has used since the family was written (it changes no number). The notebooks sweep fixed w
      (``challenger_blend=(w, w)``) because w drives CURE-UCB's long-horizon regret.

    Inconsistency: the late bloomer is said to have "the lowest start" (0.10) while challengers
    start in [0.08, 0.12] and distractors in [0.05, 0.50]. We keep the stated ranges: the roles that
    matter hold anyway. A challenger that starts above 0.10 lies above the late bloomer only for its
    first pulls (while g_LB < (s - 0.10) / (0.85 - (L - s)), at most about 2,600 pulls) and strictly
    below it afterwards, and the late bloomer has the largest cumulative reward at every horizon from
    about 26,000 on. ``challenger_start=(0.08, 0.10)`` makes challengers strictly below at every n.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng={rng!r} is not allowed: expected a numpy.random.Generator")
    if K is None:
        K = int(rng.integers(3, 16))
    K = check_int("K", K, 3)
    H = check_int("H", H, 100)
    share = check_real("share", share, 0.0, 1.0, lo_open=True, hi_open=True)
    perturbation = check_real("perturbation", perturbation, 0.0, 1.0, hi_open=True)
    if bloomer_rate is None:
        bloomer_rate = 4 / 30_000 * (100_000 / H)
    bloomer_rate = check_real("bloomer_rate", bloomer_rate, 0.0, lo_open=True)
    min_rise = check_real("min_rise", min_rise, 0.0)
    bloomer = ConcaveArm("late bloomer", "late bloomer", "exponential", bloomer_start, bloomer_level, bloomer_rate)
    bloomer_point = bloomer.share_point(H, share)  # the late bloomer's own 85 % checkpoint
    if distractor_checkpoint is None:
        distractor_checkpoint = (min(bloomer_point / H, 0.8), 0.8)
    max_redraws = check_int("max_redraws", max_redraws, 1)
    ranges = {name: _check_range(name, value) for name, value in [
        ("peaker_start", peaker_start), ("peaker_checkpoint", peaker_checkpoint),
        ("challenger_start", challenger_start), ("challenger_level", challenger_level),
        ("challenger_blend", challenger_blend), ("challenger_checkpoint", challenger_checkpoint),
        ("distractor_start", distractor_start), ("distractor_checkpoint", distractor_checkpoint)]}
    for name in ("peaker_checkpoint", "challenger_checkpoint", "distractor_checkpoint"):
        if ranges[name][1] >= share or ranges[name][0] <= 0:
            raise ValueError(f"{name}={ranges[name]!r} is not allowed: checkpoints are fractions of H in (0, share={share})")
    if peaker_level_max < ranges["peaker_start"][1] + min_rise:
        raise ValueError(f"peaker_level_max={peaker_level_max!r} is not allowed: it must exceed the largest start + min_rise")
    if distractor_level_max < ranges["distractor_start"][1] + min_rise:
        raise ValueError(f"distractor_level_max={distractor_level_max!r} is not allowed: "
                         "it must exceed the largest start + min_rise")

    def uniform(pair):
        return float(rng.uniform(pair[0], pair[1]))

    def calibrated(family, frac):
        n_star = frac * H
        return calibrate_rate(family, n_star, H, share) * uniform((1 - perturbation, 1 + perturbation)), n_star

    def competitor(draw):
        """One challenger or distractor from ``draw()``, redrawn while it would finish its rise first."""
        for _ in range(max_redraws):
            arm = draw()
            if not bloomer_rises_fastest or arm.shape(bloomer_point, H) <= share:
                return arm
        raise ValueError(f"max_redraws={max_redraws!r} is not allowed: no {arm.role} reaching {share:.0%} of its "
                         "rise after the late bloomer was drawn; widen its checkpoint range")

    n_challengers = K // 2
    n_distractors = K - 2 - n_challengers
    arms = [bloomer]

    s = uniform(ranges["peaker_start"])
    L = uniform((s + min_rise, peaker_level_max))
    family = FAMILIES[int(rng.integers(len(FAMILIES)))]
    k, n_star = calibrated(family, uniform(ranges["peaker_checkpoint"]))
    arms.append(ConcaveArm("early peaker", "early peaker", family, s, L, k, n_star))

    def challenger(j):
        s = uniform(ranges["challenger_start"])
        L = uniform(ranges["challenger_level"])
        w = uniform(ranges["challenger_blend"])
        family = FAMILIES[int(rng.integers(len(FAMILIES)))]
        k, n_star = calibrated(family, uniform(ranges["challenger_checkpoint"]))
        return ConcaveArm("challenger", f"challenger {j + 1}", family, s, L, k, n_star, w, bloomer_rate)

    def distractor(j):
        s = uniform(ranges["distractor_start"])
        L = uniform((s + min_rise, distractor_level_max))
        family = FAMILIES[int(rng.integers(len(FAMILIES)))]
        k, n_star = calibrated(family, uniform(ranges["distractor_checkpoint"]))
        return ConcaveArm("distractor", f"distractor {j + 1}", family, s, L, k, n_star)

    arms += [competitor(lambda j=j: challenger(j)) for j in range(n_challengers)]
    arms += [competitor(lambda j=j: distractor(j)) for j in range(n_distractors)]

    order = rng.permutation(K)
    return [arms[i] for i in order]


def concave_instance(arms: list[ConcaveArm], H: int = 100_000, T_max: int | None = None,
                     noise: float | str = 0.01) -> RisingInstance:
    """The RisingInstance of a list of :class:`ConcaveArm` (mean curves on n = 0..T_max, T_max = H by default)."""
    H = check_int("H", H, 1)
    T_max = H if T_max is None else check_int("T_max", T_max, 1)
    check_table_memory("T_max", T_max, len(arms), T_max, copies=4)  # the curves, their stack, the copy, the prefix
    means = np.vstack([arm.curve(T_max, H) for arm in arms])
    return RisingInstance(means, [arm.name for arm in arms], noise)


def concave_random(rng: np.random.Generator, K: int | None = None, H: int = 100_000, T_max: int | None = None,
                   noise: float | str = 0.01, **choices) -> RisingInstance:
    """A random concave instance following appendix B.1.2 (see :func:`concave_arm_specs` for every choice).

    Arms are named by role ("late bloomer", "early peaker", "challenger j", "distractor j") and
    appear in random order. ``choices`` are forwarded to :func:`concave_arm_specs`.
    """
    arms = concave_arm_specs(rng, K, H, **choices)
    return concave_instance(arms, H, T_max, noise)


def concave_unconstrained(rng: np.random.Generator, K: int | None = None, H: int = 100_000, T_max: int | None = None,
                          noise: float | str = 0.01) -> RisingInstance:
    """A concave instance drawn with none of appendix B.1.2's roles or constraints: the baseline its premise
    ("fully unconstrained random generation often produces trivial instances in which one arm dominates")
    is about.

    Our reading of "unconstrained" (the appendix does not define it): K ~ U{3..15} as in B.1.2, and every arm
    drawn alike and independently: a family uniform over ``FAMILIES``, a start s ~ U[0, 1], a level
    L ~ U[s, 1] (nondecreasing, rewards in [0, 1]) and a rate calibrated, as in B.1.2, so that 85 % of the
    rise is done at a checkpoint ~ U[0.05 H, 0.8 H] (the calibration needs it below 0.85 H). No late
    bloomer, early peaker or challenger is placed.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng={rng!r} is not allowed: expected a numpy.random.Generator")
    K = int(rng.integers(3, 16)) if K is None else check_int("K", K, 1)
    H = check_int("H", H, 1)
    arms = []
    for j in range(K):
        family = FAMILIES[int(rng.integers(len(FAMILIES)))]
        start = float(rng.uniform(0.0, 1.0))
        level = float(rng.uniform(start, 1.0))
        checkpoint = float(rng.uniform(0.05 * H, 0.8 * H))
        arms.append(ConcaveArm("arm", f"arm {j}", family, start, level, calibrate_rate(family, checkpoint, H), checkpoint))
    return concave_instance(arms, H, T_max, noise)


def arm_table(arms: list[ConcaveArm]):
    """The arms of an instance as a pandas table (role, family, s, L, k, checkpoint, blend)."""
    import pandas as pd
    return pd.DataFrame([{"arm": i, "name": a.name, "role": a.role, "family": a.family, "s": a.s, "L": a.L,
                          "k": a.k, "checkpoint": a.checkpoint, "blend": a.blend} for i, a in enumerate(arms)])
