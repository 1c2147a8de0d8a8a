"""Instances of the experiments (sections 7.1 and 7.2) and of the constructions behind the theory.

- ``SCHEDULES`` and ``experiment_length``: the five commitment schedules of section 7.1, with exact
  integer floors (floor(1000^(2/3)) is 100, not the 99 that float rounding gives).
- ``hard_instance``: section 7.1's mean vectors are missing from our copy; this family puts the gaps at
  the critical scale of each regime, s1 = sqrt(K/N) (short experiment) and s2 = (K/(T-N))^(1/3)
  (balanced): mu_f = 0.5 + c s1 on arm 1, mu_g = 0.5 + c max(s1, s2) on arm 2, every other mean 0.5.
- ``separable_instance``: a second Figure 3 family whose constant f-gap (delta_f = 0.45) lets the experiment
  phase separate the arms, so that RAEC's reserved exploration differs from uniform exploration.
- ``section71`` / ``section71_policy`` / ``section71_rate``: one cell of Figure 3 (problem of either family, the
  RAEC settings of section 7.1, the rate r_s(T) of its "scaled theory" curve).
- ``section72`` / ``section72_policy``: the instance of Figure 4 and RAEC's settings there.
- ``commitment_side_family`` / ``experiment_side_family``: the two kinds of instances behind the
  minimax lower bound (Theorem 5.3; the construction is not in our copy, this is our reading).
- ``no_shift_instance``, ``scaled_shift_instance``, ``reordered_shift_instance``: section 6.1 (f = g) and
  our reading of "ranking changes matter more than shift magnitudes".
- The family registry, one for both models, that a notebook names its instance family from
  (``family = "section72"``, ``family_options = {"c": 0.5}``): ``family_instance(family, T, options)`` builds
  the instance at horizon T, ``family_options`` fills in the defaults, ``family_experiment`` says how N follows
  from T, ``family_sweep`` reads a sweep of one option; ``register_family`` adds one, of the commitment model
  (a CommitProblem) or, with ``model="portfolio"``, of the portfolio model (a PortfolioProblem). The functions
  take ``model`` ("commitment" by default) and accept only that model's families. ``COMMIT_FAMILIES`` is the view
  of the commitment families: section72, bernoulli (fixed mean vectors), critical, separable, no_shift,
  scaled_shift, reordered_shift (the last five with ``schedule`` or ``N``); ``portfolio_instances`` registers
  section73 and random_quadratic (its ``PORTFOLIO_FAMILIES`` view) when it is imported. ``g_candidates`` and
  ``g_gap`` read an instance: the arms that beat the f-best arm on g, the g-gap of the g-best arm.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import check_choice, check_int, check_real
from .policies import RAEC
from .problem import CommitProblem

# ----------------------------------------------------------------------------------------- schedules
SCHEDULES = {
    "sqrt": "N = floor(T^(1/2))",
    "two_thirds": "N = floor(T^(2/3))",
    "quarter": "N = floor(T/4)",
    "late_3_4": "N = floor(T - T^(3/4))",
    "late_1_2": "N = floor(T - T^(1/2))",
}
# asymptotic exponent of r_s(T) for K fixed (section 7.1)
THEORY_SLOPES = {"sqrt": 3 / 4, "two_thirds": 2 / 3, "quarter": 2 / 3, "late_3_4": 1 / 2, "late_1_2": 1 / 2}
PAPER_GRID = (500, 1000, 2500, 5000, 10000, 15000, 20000)


def _iroot_floor(x: int, k: int) -> int:
    """Largest integer r with r^k <= x."""
    r = int(round(x ** (1.0 / k)))
    while r ** k > x:
        r -= 1
    while (r + 1) ** k <= x:
        r += 1
    return r


def _iroot_ceil(x: int, k: int) -> int:
    r = _iroot_floor(x, k)
    return r if r ** k == x else r + 1


def experiment_length(schedule: str, T: int) -> int:
    """N(T) for one of the five schedules of section 7.1 (exact integer arithmetic)."""
    check_choice("schedule", schedule, tuple(SCHEDULES))
    T = check_int("T", T, 4)
    if schedule == "sqrt":
        return _iroot_floor(T, 2)
    if schedule == "two_thirds":
        return _iroot_floor(T * T, 3)
    if schedule == "quarter":
        return T // 4
    if schedule == "late_3_4":
        return T - _iroot_ceil(T ** 3, 4)
    return T - _iroot_ceil(T, 2)


def section71_rate(schedule: str, K: int, T: int) -> float:
    """r_s(T) of section 7.1: sqrt(K T^2/N), K^(1/3) (T-N)^(2/3) or sqrt(K T) depending on the schedule."""
    N = experiment_length(schedule, T)
    if schedule == "sqrt":
        return math.sqrt(K * T * T / N)
    if schedule in ("two_thirds", "quarter"):
        return K ** (1 / 3) * (T - N) ** (2 / 3)
    return math.sqrt(K * T)


# ----------------------------------------------------------------------------------------- section 7.1
def hard_instance(K: int, N: int, T: int, c: float = 0.1) -> CommitProblem:
    """mu_f = 0.5 + c s1 on arm 1, mu_g = 0.5 + c max(s1, s2) on arm 2, 0.5 elsewhere (Bernoulli coordinates).

    s1 = sqrt(K/N) is the gap N experiment rounds cannot resolve (short-experiment scale), s2 = (K/(T-N))^(1/3)
    the gap where reserved exploration and commitment loss balance (balanced scale). Our stand-in for the
    missing mean vectors of section 7.1.
    """
    K = check_int("K", K, 2)
    c = check_real("c", c, 0.0, lo_open=True)
    s1 = math.sqrt(K / N)
    s2 = (K / (T - N)) ** (1 / 3)
    mu_f = np.full(K, 0.5)
    mu_g = np.full(K, 0.5)
    mu_f[0] += c * s1
    mu_g[1] += c * max(s1, s2)
    if mu_f.max() > 1 or mu_g.max() > 1:
        raise ValueError(f"c={c!r} is not allowed: the gaps c s1 = {c * s1:.3g}, c max(s1, s2) = "
                         f"{c * max(s1, s2):.3g} push a mean above 1 at N={N}, T={T}")
    return CommitProblem.bernoulli(mu_f, mu_g, N, T)


def separable_instance(K: int, N: int, T: int, c: float = 0.5, delta_f: float = 0.45) -> CommitProblem:
    """A hard instance the experiment phase can separate: arm 1 is f-best by the constant delta_f, arm 2 is
    g-best by delta_g = c max(sqrt(K/N), (K/(T-N))^(1/3)) (the first of ``commitment_side_family``).

    mu_f = (0.5 + delta_f, 0.5, ..., 0.5), mu_g = (0.5, 0.5 + delta_g, 0.5, ..., 0.5), Bernoulli coordinates.
    A constant f-gap lets Stage II eliminate arms 2..K early, so exploring them for g costs delta_f per pull:
    reserved exploration now differs from uniform exploration, which pays delta_f on (K-1)/K of the N rounds.
    """
    return commitment_side_family(K, N, T, c=c, delta_f=delta_f)[0]


#: Instance families of Figure 3: gaps at the critical scale (``hard_instance``) or a separable f-gap.
FAMILIES = {"critical": "f- and g-gaps at the critical scale (hard_instance)",
            "separable": "constant f-gap delta_f, g-gap at the critical scale (separable_instance)"}
FAMILY_DEFAULT_C = {"critical": 0.1, "separable": 0.5}


def section71(schedule: str, T: int, K: int = 4, c: float | None = None, family: str = "critical",
              delta_f: float = 0.45) -> CommitProblem:
    """The hard instance of one Figure 3 cell: N from the schedule; ``family`` "critical" (``hard_instance``,
    c = 0.1 by default) or "separable" (``separable_instance``, c = 0.5 and ``delta_f`` by default)."""
    check_choice("family", family, tuple(FAMILIES))
    N = experiment_length(schedule, T)
    c = FAMILY_DEFAULT_C[family] if c is None else c
    if family == "critical":
        return hard_instance(K, N, T, c)
    return separable_instance(K, N, T, c, delta_f)


def section71_policy(schedule: str, **overrides) -> RAEC:
    """RAEC as run in section 7.1: Stage I scaled by 1/10 (by 1 for N = floor(sqrt T)), Stage II by 1,
    commitment to the empirical g-best arm."""
    check_choice("schedule", schedule, tuple(SCHEDULES))
    params = dict(stage1_scale=1.0 if schedule == "sqrt" else 0.1, stage2_scale=1.0, commit="empirical")
    params.update(overrides)
    return RAEC(**params)


# ----------------------------------------------------------------------------------------- section 7.2
def section72_gap(T: int, c: float) -> float:
    """Delta_g(T) = c / sqrt(log N), N = floor(T/4)."""
    N = T // 4
    return c / math.sqrt(math.log(N))


def section72(T: int, c: float = 0.5) -> CommitProblem:
    """Figure 4's instance: mu_f = (0.8, 0.77, 0.2, 0.2), mu_g = (0.2, 0.2, 0.55 + Delta_g(T), 0.55), N = floor(T/4).

    Delta_g(T) = c / sqrt(log N). The paper does not give c: c = 0.5 is our default and the notebook sweeps it.
    It must keep 0.55 + Delta_g <= 1.
    """
    T = check_int("T", T, 12)
    c = check_real("c", c, 0.0, lo_open=True)
    N = T // 4
    gap = section72_gap(T, c)
    if 0.55 + gap > 1:
        raise ValueError(f"c={c!r} is not allowed at T={T}: 0.55 + c/sqrt(log N) = {0.55 + gap:.3f} exceeds 1 "
                         f"(need c <= {0.45 * math.sqrt(math.log(N)):.3f})")
    return CommitProblem.bernoulli([0.8, 0.77, 0.2, 0.2], [0.2, 0.2, 0.55 + gap, 0.55], N, T)


#: eps rules for section 7.2's RAEC: section 3.2's eps for the instance's region, or Theorem 3.1's max.
EPS_RULES = {"region": "by_region", "theorem3.1": None}


def section72_policy(eps_rule: str = "region", **overrides) -> RAEC:
    """RAEC as run in section 7.2: Stage I scaled by 1/25, Stage II by 1/10, empirical commitment.

    Section 7.2 calls its instance the balanced regime (Region II) and section 3.2 gives the eps of that
    region, eps = (K log(T-N) / (T-N))^(1/3); ``eps_rule="region"`` (default) takes section 3.2's eps for
    the region the instance is in (``theory.epsilon_by_region``, section 3.2's boundaries: every T of the
    paper's grid is Region II there). ``eps_rule="theorem3.1"`` takes Theorem 3.1's
    max{4 sqrt(K log(T-N)/N), (K log(T-N)/(T-N))^(1/3)}, whose first term dominates on this grid (for
    N = T/4 up to T of about 10^7) and reserves one or two epochs fewer. An ``eps`` override wins.
    """
    check_choice("eps_rule", eps_rule, tuple(EPS_RULES))
    params = dict(eps=EPS_RULES[eps_rule], stage1_scale=1 / 25, stage2_scale=1 / 10, commit="empirical")
    params.update(overrides)
    return RAEC(**params)


# ----------------------------------------------------------------------------------------- Theorem 5.3
def commitment_side_family(K: int, N: int, T: int, c: float = 0.5, delta_f: float = 0.25) -> list[CommitProblem]:
    """Instances where the g-best arm hides among the f-suboptimal arms (our reading of Theorem 5.3, regions I-II).

    Arm 1 is f-best by delta_f; every g-mean is 1/2 except arm j (j = 2..K) at 1/2 + delta_g, with
    delta_g = c max(sqrt(K/N), (K/(T-N))^(1/3)). Finding j takes about K / delta_g^2 pulls of arms that cost
    delta_f each; not finding it costs (T - N) delta_g. Returns the K - 1 instances, j = 2..K.
    """
    K = check_int("K", K, 2)
    delta_f = check_real("delta_f", delta_f, 0.0, 0.5, lo_open=True)
    delta_g = c * max(math.sqrt(K / N), (K / (T - N)) ** (1 / 3))
    if delta_g > 0.5:
        raise ValueError(f"c={c!r} is not allowed: delta_g = {delta_g:.3g} > 1/2 at N={N}, T={T}")
    out = []
    for j in range(1, K):
        mu_f = np.full(K, 0.5)
        mu_f[0] += delta_f
        mu_g = np.full(K, 0.5)
        mu_g[j] += delta_g
        out.append(CommitProblem.bernoulli(mu_f, mu_g, N, T))
    return out


def experiment_side_family(K: int, N: int, T: int, c: float = 0.5) -> list[CommitProblem]:
    """The classical K-armed instances (region III): arm a is f-best by c sqrt(K/N), g is flat (1/2)."""
    K = check_int("K", K, 2)
    delta = c * math.sqrt(K / N)
    if delta > 0.5:
        raise ValueError(f"c={c!r} is not allowed: c sqrt(K/N) = {delta:.3g} > 1/2 at N={N}")
    out = []
    for a in range(K):
        mu_f = np.full(K, 0.5)
        mu_f[a] += delta
        out.append(CommitProblem.bernoulli(mu_f, np.full(K, 0.5), N, T))
    return out


# ----------------------------------------------------------------------------------------- section 6.1
def no_shift_instance(K: int, N: int, T: int, delta: float, base: float = 0.5) -> CommitProblem:
    """f = g on a 0/1 outcome: arm 1 has mean base + delta, the others base (one outcome, two equal rewards)."""
    probs = _binary_probs(K, base, delta)
    return CommitProblem.discrete([0.0, 1.0], probs, lambda o: o[0], lambda o: o[0], N, T)


def scaled_shift_instance(K: int, N: int, T: int, delta: float, scale: float = 0.3, offset: float = 0.1,
                          base: float = 0.5) -> CommitProblem:
    """A known shift that keeps the ranking: g(o) = offset + scale f(o), f(o) = o (our reading of section 6.1)."""
    if not (0 < scale and 0 <= offset and offset + scale <= 1):
        raise ValueError(f"scale={scale!r}, offset={offset!r} is not allowed: need scale > 0, offset >= 0, "
                         f"offset + scale <= 1")
    probs = _binary_probs(K, base, delta)
    return CommitProblem.discrete([0.0, 1.0], probs, lambda o: o[0], lambda o: offset + scale * o[0], N, T)


def reordered_shift_instance(K: int, N: int, T: int, delta: float, base: float = 0.5) -> CommitProblem:
    """A shift that reorders the arms: arm 1 is f-best by delta, arm 2 is g-best by delta (Bernoulli coordinates)."""
    mu_f = np.full(K, base)
    mu_f[0] += delta
    mu_g = np.full(K, base)
    mu_g[1] += delta
    return CommitProblem.bernoulli(mu_f, mu_g, N, T)


def _binary_probs(K, base, delta):
    means = np.full(K, float(base))
    means[0] += delta
    if means.max() > 1 or means.min() < 0:
        raise ValueError(f"delta={delta!r} is not allowed: means must stay in [0, 1]")
    return np.stack([1 - means, means], axis=1)


# ----------------------------------------------------------------------------------------- family registry
#: The models a family can build an instance of, and what that instance is.
FAMILY_MODELS = {"commitment": "CommitProblem", "portfolio": "PortfolioProblem"}


@dataclass(frozen=True)
class InstanceFamily:
    """A registered family of instances: ``build(T, **options)`` is its instance at horizon T.

    ``defaults`` holds every option the family takes with its default (``REQUIRED`` for an option without
    one); ``experiment`` says how N follows from T under given options, for tables and ledgers; ``model`` is
    the model of the instances ("commitment": a CommitProblem, "portfolio": a PortfolioProblem).
    """

    name: str
    build: Callable
    defaults: Mapping
    description: str
    experiment: Callable[[Mapping], str]
    model: str = "commitment"


#: An option of a registered family that has no default.
REQUIRED = "<required>"
#: Every registered family, of either model: name -> InstanceFamily (one name space for both models).
_FAMILIES: dict[str, InstanceFamily] = {}


class FamilyView(Mapping):
    """The registered families of one model, read-only: name -> InstanceFamily, in the order of registration."""

    def __init__(self, model: str):
        self.model = check_choice("model", model, tuple(FAMILY_MODELS))

    def __getitem__(self, name: str) -> InstanceFamily:
        entry = _FAMILIES.get(name)
        if entry is None or entry.model != self.model:
            raise KeyError(name)
        return entry

    def __iter__(self) -> Iterator[str]:
        return iter([name for name, entry in _FAMILIES.items() if entry.model == self.model])

    def __len__(self) -> int:
        return sum(1 for entry in _FAMILIES.values() if entry.model == self.model)

    def __repr__(self) -> str:
        return f"FamilyView({self.model!r}: {', '.join(self)})"


#: The commitment instance families a notebook can name (``family = "section72"``), name -> InstanceFamily.
COMMIT_FAMILIES = FamilyView("commitment")


def register_family(name: str, description: str, experiment: Callable[[Mapping], str] | None = None,
                    model: str = "commitment", **defaults):
    """Register ``build(T, **options)`` under ``name`` for ``model``; ``defaults`` are its options. Families whose N
    follows a schedule take ``schedule`` (one of ``SCHEDULES``, default "quarter") and ``N`` (an explicit length
    that replaces the schedule): give them ``schedule`` and ``N`` among the defaults. Names are unique across
    the models."""
    check_choice("model", model, tuple(FAMILY_MODELS))

    def decorate(build):
        if name in _FAMILIES:
            raise ValueError(f"family name {name!r} is already registered")
        _FAMILIES[name] = InstanceFamily(name, build, dict(defaults), description, experiment or _schedule_text, model)
        return build
    return decorate


def family_options(family: str, options: Mapping | None = None, *, model: str = "commitment",
                   parameter: str = "family", options_parameter: str = "family_options") -> dict:
    """Every option of the registered ``family`` of ``model``: its defaults updated by ``options`` (checked by name).

    A one-line ValueError names ``parameter`` for an unknown family (or one of the other model) and
    ``options_parameter`` for an option the family does not take or a required one left out.
    """
    entry = _family(family, model, parameter)
    options = {} if options is None else options
    if not isinstance(options, Mapping):
        raise ValueError(f"{options_parameter}={options!r} is not allowed: expected a dict of options of family "
                         f"{family!r} ({_options_text(entry)})")
    unknown = [k for k in options if k not in entry.defaults]
    if unknown:
        raise ValueError(f"{options_parameter}={dict(options)!r} is not allowed: family {family!r} takes no option "
                         f"{', '.join(map(repr, unknown))}; its options: {_options_text(entry)}")
    merged = {**entry.defaults, **options}
    missing = [k for k, v in merged.items() if isinstance(v, str) and v == REQUIRED]
    if missing:
        raise ValueError(f"{options_parameter}={dict(options)!r} is not allowed: family {family!r} needs "
                         f"{', '.join(map(repr, missing))}; its options: {_options_text(entry)}")
    return merged


def family_instance(family: str, T: int, options: Mapping | None = None, *, model: str = "commitment",
                    parameter: str = "family", options_parameter: str = "family_options"):
    """The instance of the registered ``family`` of ``model`` at horizon ``T`` with ``options`` (the rest at their
    defaults): a CommitProblem, or a PortfolioProblem for ``model="portfolio"``.

    ``family_instance("section72", T, {"c": 0.5})`` is ``section72(T, 0.5)``. Errors are one line: an unknown
    family names ``parameter``, an unknown or invalid option ``options_parameter``.
    """
    merged = family_options(family, options, model=model, parameter=parameter, options_parameter=options_parameter)
    try:
        return _FAMILIES[family].build(T, **merged)
    except ValueError as exc:
        raise ValueError(f"{options_parameter} of family {family!r}: {exc}") from None


def family_experiment(family: str, options: Mapping | None = None, *, model: str = "commitment",
                      parameter: str = "family", options_parameter: str = "family_options") -> str:
    """The rule for N in the registered ``family`` under ``options``, e.g. "floor(T/4)" (or "5000" for a fixed N)."""
    merged = family_options(family, options, model=model, parameter=parameter, options_parameter=options_parameter)
    return _FAMILIES[family].experiment(merged)


def family_sweep(family: str, options: Mapping | None, sweep: Mapping | None, *, model: str = "commitment",
                 parameter: str = "family_sweep",
                 options_parameter: str = "family_options") -> tuple[str | None, list[tuple[object, dict]]]:
    """A sweep of one option of ``family``: ``sweep`` is ``{}`` (no sweep) or ``{option: [values]}``.

    Returns the option's name and, for each value, the family options with that value (the other options as in
    ``options``); ``(None, [])`` for no sweep. One-line errors name ``parameter``.
    """
    entry = _family(family, model, "family")
    sweep = {} if sweep is None else sweep
    if not isinstance(sweep, Mapping) or len(sweep) > 1:
        raise ValueError(f"{parameter}={sweep!r} is not allowed: expected {{}} or one option of family {family!r} "
                         f"with a list of values, e.g. {{'c': [0.25, 0.5]}}")
    if not sweep:
        return None, []
    [(name, values)] = sweep.items()
    if name not in entry.defaults:
        raise ValueError(f"{parameter}={dict(sweep)!r} is not allowed: family {family!r} takes no option {name!r}; its "
                         f"options: {_options_text(entry)}")
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__") or not list(values):
        raise ValueError(f"{parameter}={dict(sweep)!r} is not allowed: expected a non-empty list of values of {name!r}")
    given = dict(options or {})
    return name, [(v, {**given, name: v}) for v in values]


def g_candidates(problem: CommitProblem) -> list[int]:
    """The arms (0-based) whose g-mean beats the g-mean of the f-best arm: the arms a policy must explore for
    the commitment although the experiment's reward does not favour them (arms 3 and 4 of section 7.2's
    instance). Empty when the f-best arm is also g-best."""
    return [int(i) for i in np.flatnonzero(problem.mu_g > problem.mu_g[problem.best_f])]


def g_gap(problem: CommitProblem) -> float:
    """The g-mean of the g-best arm minus the second-best g-mean (0 under a tie)."""
    top = np.sort(problem.mu_g)
    return float(top[-1] - top[-2])


def _family(family, model, parameter):
    view = FamilyView(model)
    if isinstance(family, str) and family in view:
        return view[family]
    other = _FAMILIES.get(family) if isinstance(family, str) else None
    if other is not None:  # a family of the other model: say so, the names alone would not
        raise ValueError(f"{parameter}={family!r} is not allowed: {family!r} is a {other.model} family "
                         f"({FAMILY_MODELS[other.model]}), here a {model} family is needed: one of "
                         + ", ".join(map(repr, view)))
    return view[check_choice(parameter, family, tuple(view))]


def _options_text(entry: InstanceFamily) -> str:
    return ", ".join(f"{k}" + ("" if v == REQUIRED else f"={v!r}") for k, v in entry.defaults.items()) or "none"


def _schedule_text(options: Mapping) -> str:
    if options.get("N") is not None:
        return f"{options['N']}"
    return SCHEDULES[options["schedule"]].removeprefix("N = ")


def _length(T: int, schedule: str, N) -> int:
    return experiment_length(schedule, T) if N is None else check_int("N", N, 1)


@register_family("section72", "Figure 4's instance: mu_f = (0.8, 0.77, 0.2, 0.2), mu_g = (0.2, 0.2, 0.55 + c/sqrt(log N), "
                 "0.55), N = floor(T/4) (section72)", experiment=lambda options: "floor(T/4)", c=0.5)
def _section72_family(T, c):
    return section72(T, c)


@register_family("bernoulli", "fixed mean vectors mu_f and mu_g at every T, Bernoulli coordinates",
                 mu_f=REQUIRED, mu_g=REQUIRED, schedule="quarter", N=None)
def _bernoulli_family(T, mu_f, mu_g, schedule, N):
    return CommitProblem.bernoulli(mu_f, mu_g, _length(T, schedule, N), T)


@register_family("critical", "f- and g-gaps at the critical scale (hard_instance)", K=4, c=0.1, schedule="quarter",
                 N=None)
def _critical_family(T, K, c, schedule, N):
    return hard_instance(K, _length(T, schedule, N), T, c)


@register_family("separable", "constant f-gap delta_f, g-gap at the critical scale (separable_instance)", K=4, c=0.5,
                 delta_f=0.45, schedule="quarter", N=None)
def _separable_family(T, K, c, delta_f, schedule, N):
    return separable_instance(K, _length(T, schedule, N), T, c, delta_f)


@register_family("no_shift", "f = g on one 0/1 outcome, arm 1 better by delta (no_shift_instance)", K=4, delta=0.2,
                 base=0.5, schedule="quarter", N=None)
def _no_shift_family(T, K, delta, base, schedule, N):
    return no_shift_instance(K, _length(T, schedule, N), T, delta, base)


@register_family("scaled_shift", "a known shift that keeps the ranking, g = offset + scale f (scaled_shift_instance)",
                 K=4, delta=0.2, scale=0.3, offset=0.1, base=0.5, schedule="quarter", N=None)
def _scaled_shift_family(T, K, delta, scale, offset, base, schedule, N):
    return scaled_shift_instance(K, _length(T, schedule, N), T, delta, scale, offset, base)


@register_family("reordered_shift", "arm 1 f-best and arm 2 g-best, both by delta (reordered_shift_instance)", K=4,
                 delta=0.2, base=0.5, schedule="quarter", N=None)
def _reordered_shift_family(T, K, delta, base, schedule, N):
    return reordered_shift_instance(K, _length(T, schedule, N), T, delta, base)
