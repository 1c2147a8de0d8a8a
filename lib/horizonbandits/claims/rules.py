"""The verdict rules: each reads an interval against a threshold and returns an :class:`Outcome`.

A rule never decides on a point alone. Where the interval lies wholly on the claim's side the claim
is ``reproduced``, wholly on the other side ``not reproduced`` (or ``partly``, when a weaker threshold
the rule was given is met with the same confidence), and where it straddles the threshold the
verdict is ``inconclusive``, with an estimate of how much more data would decide it: the interval
shrinks as 1 / sqrt(n), so with the effect unchanged about ``n * (width / distance)^2`` units would
put it on one side.

- :func:`compare`: an estimate against a threshold (win rates, shares, levels, ratios).
- :func:`ordering`: one policy against others at each of several horizons, from paired differences.
- :func:`matches`: a value against a paper's value, within a stated relative tolerance (and the
  paper's own sampling error when it gives one).
- :func:`slope_matches`: a scaling exponent against theory, stable across both halves of the grid.
- :func:`bound_holds`: a bound holds, counting only the cases where it is below the trivial bound.
- :func:`exact`: a deterministic check (a noise-free construction, a closed form): no interval.
- :func:`combine`: several outcomes as one (every part must hold; ``partly`` when enough do).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..stats import Estimate, fmt_number, log_slope
from .model import INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTABLE, PARTLY, REPRODUCED, Outcome

_SIDES = (">", "<")


def _to_decide(est: Estimate, distance: float, spread: float, what: str = "") -> str:
    """About how many units would decide a straddling interval, if the effect stays the same."""
    if not distance > 0 or not math.isfinite(distance):
        return (f"undecidable at any size while the estimate sits on the threshold{what}"
                if est.n > 0 else "")
    if est.n <= 1 or spread <= 0:
        return ""
    need = math.ceil(est.n * (spread / distance) ** 2)
    return f"about {need:,} {est.unit} (now {est.n:,}) if the effect stays at {est.fmt(est.value)}{what}"


def exact(holds: bool, partly: bool = False, ours: str = "", rule: str = "exact check (no sampling)") -> Outcome:
    """A deterministic check: ``reproduced`` when ``holds``, else ``partly`` when ``partly``, else
    ``not reproduced``. For noise-free constructions and formulas only: a check on random data goes
    through a rule that reads its interval."""
    verdict = REPRODUCED if bool(holds) else PARTLY if bool(partly) else NOT_REPRODUCED
    return Outcome(verdict, ours, rule=rule)


def not_testable(reason: str) -> Outcome:
    """A claim the workbook cannot test; ``reason`` says why (it becomes the ``ours`` text)."""
    return Outcome(NOT_TESTABLE, f"not testable: {reason}", rule="none")


def compare(est: Estimate, threshold: float, side: str = ">", partly: float | None = None,
            ours: str | None = None, label: str = "") -> Outcome:
    """The claim "the quantity is ``side`` ``threshold``" judged by ``est``'s interval.

    ``reproduced`` when the whole interval is on the claim's side; ``not reproduced`` when it is all
    on the other side, or ``partly`` when it is then wholly on the claim's side of the weaker
    threshold ``partly``; ``inconclusive`` when the interval contains the threshold.
    """
    if side not in _SIDES:
        raise ValueError(f"side={side!r} is not allowed: expected '>' or '<'")
    sign = 1.0 if side == ">" else -1.0
    lo, hi = (est.low, est.high) if sign > 0 else (-est.high, -est.low)
    value, thr = sign * est.value, sign * threshold
    rule = f"{label + ' ' if label else ''}{est.level:.0%} interval {side} {est.fmt(threshold)}"
    to_decide = ""
    if lo > thr:
        verdict = REPRODUCED
    elif hi < thr:
        verdict = NOT_REPRODUCED
        if partly is not None and (lo > sign * partly):
            verdict = PARTLY
        if partly is not None:
            rule += f" (partly: {side} {est.fmt(partly)})"
    else:
        verdict = INCONCLUSIVE
        # distance from the estimate to the threshold, and from the estimate to the interval's end on that side
        spread = (hi - value) if value < thr else (value - lo)
        to_decide = _to_decide(est, abs(value - thr), spread)
    text = ours if ours is not None else f"{label + ' ' if label else ''}{est} over {est.n_text}"
    return Outcome(verdict, text, est.n_text, est.interval, rule, to_decide)


def combine(outcomes: Sequence[Outcome] | Mapping[object, Outcome], partly_above: float = 0.5, ours: str = "",
            rule: str = "") -> Outcome:
    """Several parts of one claim: ``reproduced`` when every part is; ``inconclusive`` when none fails
    but some are undecided; ``partly`` when some fail and more than ``partly_above`` of the parts hold
    (a part that is itself ``partly`` counts half); else ``not reproduced``. Parts that are not
    testable are left out (all of them: not testable)."""
    parts = list(outcomes.values()) if isinstance(outcomes, Mapping) else list(outcomes)
    parts = [p for p in parts if p.verdict != NOT_TESTABLE]
    if not parts:
        return Outcome(NOT_TESTABLE, ours or "not testable: no part of the claim could be tested", rule=rule or "all parts")
    holds = sum(p.verdict == REPRODUCED for p in parts) + 0.5 * sum(p.verdict == PARTLY for p in parts)
    fails = sum(p.verdict in (NOT_REPRODUCED, PARTLY) for p in parts)
    if holds == len(parts):
        verdict = REPRODUCED
    elif fails == 0:
        verdict = INCONCLUSIVE
    elif holds > partly_above * len(parts):
        verdict = PARTLY
    else:
        verdict = NOT_REPRODUCED
    n = "; ".join(dict.fromkeys(p.n for p in parts if p.n))
    undecided = [p.to_decide for p in parts if p.verdict == INCONCLUSIVE and p.to_decide]
    to_decide = max(undecided, key=_needed, default="") if verdict == INCONCLUSIVE else ""
    rule = rule or (f"every part holds (partly: more than {partly_above:.0%} of {len(parts)} parts)")
    return Outcome(verdict, ours, n, "", rule, to_decide)


def _some(items, shown: int = 3, sep: str = ", ") -> str:
    """The first ``shown`` items and how many more (our number stays readable; the tables have all)."""
    items = list(items)
    more = f"{sep}and {len(items) - shown} more" if len(items) > shown else ""
    return sep.join(items[:shown]) + more


def _needed(text: str) -> int:
    """The number in a to_decide text ('about 1,234 seeds ...'), to pick the largest."""
    try:
        return int(text.split()[1].replace(",", ""))
    except (IndexError, ValueError):
        return 0


def ordering(differences: Mapping[object, Mapping[str, Estimate]], subject: str = "CURE-UCB",
             partly_above: float = 0.5, where_label: str = "T") -> Outcome:
    """``subject`` is lower (better) than every other policy at every horizon.

    ``differences[T][other]`` is the paired difference other - subject (positive: the subject is
    lower), with its interval. At a horizon the subject is lowest when every interval is above 0,
    not lowest when some interval is below 0, undecided otherwise; the horizons are then combined
    (:func:`combine`: ``partly`` when more than ``partly_above`` of them hold).
    """
    per_T, notes = {}, []
    for T, row in differences.items():
        parts = {other: compare(est, 0.0, ">") for other, est in row.items()}
        per_T[T] = combine(parts, partly_above=1.0)
        lower = [o for o, p in parts.items() if p.verdict == NOT_REPRODUCED]
        tied = [o for o, p in parts.items() if p.verdict == INCONCLUSIVE]
        shown = f"{T:,}" if isinstance(T, (int, np.integer)) else ", ".join(map(str, T)) if isinstance(T, tuple) else str(T)
        label = f"{where_label} = {shown}" if where_label else shown
        if lower:
            notes.append(f"{label}: lower " + _some(f"{o} ({row[o]})" for o in lower))
        elif tied:
            notes.append(f"{label}: undecided against " + _some(f"{o} ({row[o]})" for o in tied))
    n_hold = sum(p.verdict == REPRODUCED for p in per_T.values())
    out = combine(per_T, partly_above=partly_above,
                  rule=f"paired {next(iter(next(iter(differences.values())).values())).level:.0%} intervals of "
                       f"other - {subject} above 0 against every policy at every {where_label or 'cell'}"
                       f" (partly: at more than {partly_above:.0%} of them)")
    ests = [e for row in differences.values() for e in row.values()]
    closest = min(ests, key=lambda e: e.low / max(e.half_width, 1e-300)) if ests else None
    ours = (f"{subject} significantly lowest at {n_hold} of {len(per_T)} "
            f"{'horizons' if where_label == 'T' else 'cells'}"
            + ("; " + _some(notes, 4, "; ") if notes else ""))
    return Outcome(out.verdict, ours, ests[0].n_text + " (paired)" if ests else "",
                   f"closest: {closest}" if closest is not None else "", out.rule, out.to_decide)


def matches(est: Estimate, paper_value: float, rel_tol: float | None = None, partly_tol: float | None = None,
            paper_half_width: float = 0.0, basis: str = "stated relative tolerance", label: str = "",
            abs_tol: float | None = None) -> Outcome:
    """Our value agrees with the paper's within ``rel_tol`` (relative to the paper's value), or
    within ``abs_tol`` in the value's own units (for shares and win rates: percentage points).

    The interval of (ours - paper) / paper (or ours - paper), widened by the paper's own half-width
    when it can be known (``paper_half_width``, from its sample size and spread), is compared with
    [-tol, tol]: inside, ``reproduced``; disjoint, ``not reproduced`` (``partly`` when inside
    [-partly_tol, partly_tol]); overlapping its edge, ``inconclusive``. ``basis`` says where the
    tolerance comes from; the row's rule names it.
    """
    if (rel_tol is None) == (abs_tol is None):
        raise ValueError("give exactly one of rel_tol and abs_tol")
    absolute = abs_tol is not None
    rel_tol = abs_tol if absolute else rel_tol
    if not rel_tol > 0:
        raise ValueError(f"{'abs_tol' if absolute else 'rel_tol'}={rel_tol!r} is not allowed: expected a positive number")
    if not absolute and not paper_value:
        raise ValueError("paper_value=0 is not allowed: a relative tolerance needs a non-zero paper value")
    scale = 1.0 if absolute else abs(paper_value)
    r = (est.value - paper_value) / scale
    below = math.hypot(est.value - est.low, paper_half_width) / scale
    above = math.hypot(est.high - est.value, paper_half_width) / scale
    r_lo, r_hi = r - below, r + above
    tol_text = est.fmt(rel_tol) if absolute else f"{rel_tol:.0%}"
    rule = (f"{label + ' ' if label else ''}{'ours - paper' if absolute else '(ours - paper) / paper'} within "
            f"+-{tol_text} ({basis}{'; paper half-width ' + est.fmt(paper_half_width) if paper_half_width else ''})")
    to_decide = ""
    if -rel_tol <= r_lo and r_hi <= rel_tol:
        verdict = REPRODUCED
    elif r_lo > rel_tol or r_hi < -rel_tol:
        verdict = NOT_REPRODUCED
        if partly_tol is not None and -partly_tol <= r_lo and r_hi <= partly_tol:
            verdict = PARTLY
        if partly_tol is not None:
            rule += f", partly within +-{est.fmt(partly_tol) if absolute else f'{partly_tol:.0%}'}"
    else:
        verdict = INCONCLUSIVE
        spread = max(below, above)
        paper_only = paper_half_width / scale
        if paper_only >= abs(rel_tol - abs(r)):
            to_decide = "undecidable by more runs of ours: the paper's own sampling error is wider than the margin"
        else:
            ours_needed = math.sqrt(max(abs(rel_tol - abs(r)) ** 2 - paper_only ** 2, 1e-300))
            ours_spread = math.sqrt(max(spread ** 2 - paper_only ** 2, 0.0))
            to_decide = _to_decide(est, ours_needed, ours_spread)
    ratio = f" (ours / paper {fmt_number(est.value / paper_value)})" if paper_value else ""
    ours = f"{label + ': ' if label else ''}ours {est} vs paper {est.fmt(paper_value)}{ratio}"
    interval = (f"ours - paper in [{est.fmt(r_lo)}, {est.fmt(r_hi)}]" if absolute
                else f"[{fmt_number(1 + r_lo)}, {fmt_number(1 + r_hi)}] x paper")
    return Outcome(verdict, ours, est.n_text, interval, rule, to_decide)


def slope_matches(x, y, theory: float, tol: float, y_se=None, level: float = 0.95, label: str = "") -> Outcome:
    """The exponent of y ~ x^b is ``theory`` within ``tol``, over the whole grid and stably.

    Two parts, both needed: the slope's interval (:func:`horizonbandits.stats.log_slope`) lies in
    [theory - tol, theory + tol]; and the slopes of the lower and upper half of the grid agree, the
    interval of their difference lying in [-tol, tol]. A part whose interval lies outside fails; one
    that overlaps an edge is undecided. A wrong slope is ``not reproduced``; a right one whose halves
    disagree is ``partly``.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    y_se = None if y_se is None else np.asarray(y_se, float)
    full = log_slope(x, y, y_se, level)
    part_full = _within(full, theory, tol, "slope")
    n = x.size
    mid = n // 2
    lower = slice(0, mid + 1) if n % 2 else slice(0, mid)
    upper = slice(mid, n)
    halves = []
    for part in (lower, upper):
        xs, ys = x[part], y[part]
        ses = None if y_se is None else y_se[part]
        halves.append(log_slope(xs, ys, ses, level, fit_error=False) if xs.size >= 3 or ses is not None else None)
    if halves[0] is None or halves[1] is None:
        part_halves = Outcome(NOT_TESTABLE, "halves too short for an interval")
        half_text = "halves not compared (too few points and no standard errors)"
    else:
        d = halves[1].value - halves[0].value
        half = math.hypot(halves[0].half_width, halves[1].half_width)
        diff = Estimate(d, d - half, d + half, n, "horizons", level)
        part_halves = _within(diff, 0.0, tol, "halves' difference")
        half_text = f"halves {fmt_number(halves[0].value)} and {fmt_number(halves[1].value)}"
    if part_full.verdict == NOT_REPRODUCED:
        verdict = NOT_REPRODUCED
    elif part_halves.verdict == NOT_REPRODUCED:  # the exponent fits overall but changes along the grid
        verdict = PARTLY if part_full.verdict == REPRODUCED else NOT_REPRODUCED
    else:
        verdict = combine([part_full, part_halves]).verdict
    ours = f"{label + ': ' if label else ''}slope {full} (theory {fmt_number(theory)}); {half_text}"
    rule = (f"slope's {level:.0%} interval within {fmt_number(theory)} +- {fmt_number(tol)}, and the two halves' "
            f"slopes within +- {fmt_number(tol)} of each other")
    to_decide = (part_full.to_decide or part_halves.to_decide) if verdict == INCONCLUSIVE else ""
    return Outcome(verdict, ours, full.n_text, full.interval, rule, to_decide)


def _within(est: Estimate, centre: float, tol: float, what: str) -> Outcome:
    lo, hi = centre - tol, centre + tol
    if lo <= est.low and est.high <= hi:
        return Outcome(REPRODUCED, what)
    if est.low > hi or est.high < lo:
        return Outcome(NOT_REPRODUCED, what)
    margin = min(abs(est.value - lo), abs(hi - est.value))
    outside = not (lo <= est.value <= hi)
    distance = abs(est.value - (hi if est.value > hi else lo)) if outside else margin
    if not distance > 0:
        return Outcome(INCONCLUSIVE, what, to_decide=f"undecidable while the {what} sits on the tolerance's edge")
    factor = est.half_width / distance
    return Outcome(INCONCLUSIVE, what, to_decide=f"the {what}'s interval about {factor:.1f} times narrower "
                                                 "(more seeds per point, or a longer grid)")


def bound_holds(values, bounds, trivial, lows=None, unit: str = "cases") -> Outcome:
    """A bound holds: each value is at most its bound, counted where the bound says something.

    Only the cases whose ``bounds`` are below ``trivial`` (for regret, T times the largest gap) are
    informative; if none is, the claim is ``not testable`` at these sizes. ``lows`` are the lower
    ends of the values' intervals (the values themselves when they are exact): a case whose
    interval lies above its bound refutes it (``not reproduced``); a value above its bound whose
    interval reaches below it leaves the verdict ``inconclusive``.
    """
    values, bounds, trivial = (np.asarray(a, float).ravel() for a in (values, bounds, trivial))
    lows = values if lows is None else np.asarray(lows, float).ravel()
    if not (values.size == bounds.size == trivial.size == lows.size):
        raise ValueError("values, bounds, trivial and lows must have the same length")
    informative = bounds < trivial
    k = int(informative.sum())
    rule = "value <= bound in every case where the bound is below the trivial one"
    if k == 0:
        return Outcome(NOT_TESTABLE, f"not testable: the bound is at or above the trivial one in all {values.size} "
                                     f"{unit}", f"0 of {values.size} {unit}", rule=rule)
    v, b, lo = values[informative], bounds[informative], lows[informative]
    sure, point = int(np.sum(lo > b)), int(np.sum(v > b))
    margin = float(np.min(b - v))
    verdict = NOT_REPRODUCED if sure else INCONCLUSIVE if point else REPRODUCED
    ours = (f"value <= bound in {k - point} of {k} informative {unit} ({values.size - k} of {values.size} left out: "
            f"bound at or above the trivial one); smallest margin {fmt_number(margin)}")
    to_decide = "more seeds in the cases above their bound" if verdict == INCONCLUSIVE else ""
    return Outcome(verdict, ours, f"{k} of {values.size} {unit}", "", rule, to_decide)
