"""Portfolio instance families: section 7.3's (Figure 5 of the RAEC/ROSCOC paper) and a random one built the same way.

Our copy of the paper prints mu_f and the outcome locations o_1..o_5 but not the target c, the
matrix A, Delta_f or the outcome distribution. :func:`section73` makes each of them a parameter;
the defaults are chosen so that the instance behaves as section 7.3 describes it:
UCB-Portfolio's regret is mostly commitment loss and grows nearly linearly in T.
:func:`random_quadratic` applies the same construction to random outcome locations, with K and d free.

Both are registered, with every option and its default, in the one family registry of
``commit.instances`` for the portfolio model (``PORTFOLIO_FAMILIES`` is its view of the portfolio
families); a notebook names one in its parameters cell (``family`` and ``family_options``) and builds
it with the registry's functions, which check the name and the options in one line::

    options = instances.family_options("section73", {"a_scale": 2.0}, model="portfolio")
    problem = instances.family_instance("section73", 20000, {"a_scale": 2.0}, model="portfolio")
"""
from __future__ import annotations

from functools import cached_property
from numbers import Real

import numpy as np

from .. import seeds
from ..errors import check_choice, check_int, check_real
from .instances import FamilyView, register_family
from .portfolio import QuadraticReward
from .portfolio_model import PortfolioProblem, clipped_normal_moments

#: Outcome locations o_1..o_5 of section 7.3, one column per arm (d = 3).
SECTION73_OUTCOMES = np.array([
    [0.90, 0.08, 0.08, 0.60, 0.28],
    [0.18, 0.90, 0.64, 0.10, 0.72],
    [0.34, 0.32, 0.18, 0.18, 0.18],
])

#: Weights of the target c on arms 3, 4, 5 (our choice; c is not in our copy of the paper).
SECTION73_TARGET_WEIGHTS = np.array([0.0, 0.0, 0.4, 0.3, 0.3])

#: A = a_scale diag(SECTION73_A_SHAPE) (our choice, see :func:`section73`).
SECTION73_A_SHAPE = np.array([1.0, 1.0, 25.0])
SECTION73_A_SCALE = 2.0
#: The target's third coordinate (our choice): 0, below every arm's (arms 3, 4, 5 all have 0.18).
SECTION73_TARGET_Z = 0.0

OUTCOME_MODELS = ("bernoulli", "gaussian")


class BernoulliPortfolioProblem(PortfolioProblem):
    """A portfolio problem whose outcome coordinates are independent Bernoulli variables.

    Coordinate k of a pull of arm i is 1 with probability loc[k, i]: the outcome lies in {0, 1}^d,
    its mean is loc exactly and its variance loc (1 - loc). Section 5 of the paper uses such
    "Bernoulli coordinates" for its lower bounds; for outcomes in [0, 1] it is the natural reading.
    The f-rewards and the seed keys are those of :class:`PortfolioProblem` (outcomes from spawn key
    (s, 2, i)), so the two outcome models differ only in how an outcome is drawn.
    """

    def __init__(self, mu_f, loc, reward, N: int, T: int, execution: str = "sampled", names=None):
        super().__init__(mu_f, loc, reward, N, T, noise_sd=0.0, execution=execution, names=names)

    @cached_property
    def _moments(self):
        return self.loc.copy(), self.loc * (1.0 - self.loc)

    def _draw_outcomes(self, rng: np.random.Generator, i: int, n_max: int) -> np.ndarray:
        return rng.random((n_max, self.d)) < self.loc[:, i]

    def __repr__(self) -> str:
        return (f"BernoulliPortfolioProblem(K={self.K}, d={self.d}, N={self.N}, T={self.T}, "
                f"reward={self.reward!r})")


def section73(T: int, delta_f: float = 0.1, outcomes: str = "bernoulli", noise_sd: float = 0.1,
              a_scale: float = SECTION73_A_SCALE, a_shape=tuple(SECTION73_A_SHAPE),
              target_z: float | None = SECTION73_TARGET_Z, N: int | None = None,
              execution: str = "sampled") -> PortfolioProblem:
    """Section 7.3: K = 5, d = 3, N = floor(T/4), g(y) = -(y - c)^T A (y - c).

    mu_f = (0.55 + delta_f/2, 0.55 - delta_f/2, 0.16, 0.08, 0.02) and the outcome locations o_1..o_5
    as printed in section 7.3. Our copy gives neither c, A, Delta_f nor the outcome distribution;
    chosen here so that the instance behaves as section 7.3 describes it: the optimal
    portfolio is made of the three f-worst arms, and UCB-Portfolio's regret is mostly commitment loss
    and grows nearly linearly (log-log slope >= 0.8 over T = 2,000..20,000):

    * ``outcomes="bernoulli"`` (default): independent Bernoulli coordinates with means o_i
      (:class:`BernoulliPortfolioProblem`), the reading of outcomes in [0, 1] that section 5 uses.
      ``"gaussian"``: o_i + Gaussian noise of standard deviation ``noise_sd``, clipped to [0, 1]
      (``noise_sd`` is ignored for Bernoulli outcomes).
    * c = (first two coordinates of 0.4 m_3 + 0.3 m_4 + 0.3 m_5, ``target_z``), m_i the true outcome
      means (o_i for Bernoulli outcomes, the clipped-normal means otherwise). With target_z = 0 the
      target asks for a third coordinate (say, emissions) below every arm's; arms 3, 4 and 5 share
      the lowest one (0.18), so the best portfolio is still x* = (0, 0, 0.4, 0.3, 0.3), unique (the
      tests check it), now with OPT_g < 0. ``target_z=None`` keeps the third coordinate of the
      mixture (c inside the hull of m_3, m_4, m_5, OPT_g = 0: the earlier default).
    * A = ``a_scale`` diag(``a_shape``) = diag(2, 2, 50) by default (``a_shape``: 3 positive weights, or one
      number w for diag(1, 1, w), so ``a_shape=1`` is A = ``a_scale`` I). The third coordinate weighs 25
      times the others: since its true value is the same for arms 3, 4 and 5, the differences a
      plug-in rule sees between them are pure noise, and the weight makes chasing that noise costly.
      The scale sets what a commitment error costs against an experiment round (g's values leave
      [0, 1]; section 6.2 only asks g to be concave and L_g-Lipschitz, and ROSCOC's Stage-I budget
      grows with L_g). Measured (UCB-Portfolio, Bernoulli outcomes, 150 runs): with
      A = I and c inside the hull its commitment loss is about a sixth of its regret at T = 2,000 and
      its slope about 0.6; with this A and c the commitment loss is most of its regret from
      T = 2,000 on and its slope is above 0.8 (the notebook reports both numbers).
    * delta_f = 0.1 by default: a constant f-gap between the two f-good arms (section 7.2's
      Delta_g shrinks with T; nothing in section 7.3 says Delta_f does).

    ``N`` overrides floor(T/4).
    """
    T = check_int("T", T, 8)
    delta_f = check_real("delta_f", delta_f, 0.0, 0.9)
    check_choice("outcomes", outcomes, OUTCOME_MODELS)
    noise_sd = check_real("noise_sd", noise_sd, 0.0)
    a_scale = check_real("a_scale", a_scale, 0.0, lo_open=True)
    a_shape = quadratic_weights(a_shape, SECTION73_OUTCOMES.shape[0])
    if target_z is not None:
        target_z = check_real("target_z", target_z, 0.0, 1.0)
    N = T // 4 if N is None else check_int("N", N, 1, T - 1)
    mu_f = np.array([0.55 + delta_f / 2, 0.55 - delta_f / 2, 0.16, 0.08, 0.02])
    names = [f"arm {i}" for i in range(1, 6)]
    means = SECTION73_OUTCOMES if outcomes == "bernoulli" else clipped_normal_moments(SECTION73_OUTCOMES, noise_sd)[0]
    c = means @ SECTION73_TARGET_WEIGHTS
    if target_z is not None:
        c[2] = target_z
    reward = QuadraticReward(c, a_scale * np.diag(a_shape))
    if outcomes == "bernoulli":
        return BernoulliPortfolioProblem(mu_f, SECTION73_OUTCOMES, reward, N, T, execution=execution, names=names)
    return PortfolioProblem(mu_f, SECTION73_OUTCOMES, reward, N, T, noise_sd=noise_sd, execution=execution,
                            names=names)


def quadratic_weights(a_shape, d: int) -> np.ndarray:
    """The diagonal of A / a_scale: ``a_shape`` as d positive weights, or one positive number w for (1, ..., 1, w).

    One number keeps a reading of A's shape independent of d: w = 1 is A proportional to the identity, w = 25
    the weight section 7.3's instance (our choice) puts on its last coordinate.
    """
    if isinstance(a_shape, Real) and not isinstance(a_shape, bool):
        w = check_real("a_shape", a_shape, 0.0, lo_open=True)
        return np.r_[np.ones(d - 1), w]
    weights = np.asarray(a_shape, dtype=float) if np.ndim(a_shape) == 1 else np.full(0, np.nan)
    if weights.shape != (d,) or not np.all(weights > 0):
        raise ValueError(f"a_shape={a_shape!r} is not allowed: expected {d} positive weights or one positive number "
                         "(the last coordinate's weight, the others 1)")
    return weights


def random_quadratic(T: int, K: int = 5, d: int = 3, n_good: int = 2, instance_seed: int = 0, delta_f: float = 0.1,
                     outcomes: str = "bernoulli", noise_sd: float = 0.1, a_scale: float = SECTION73_A_SCALE,
                     a_shape=25.0, target_z: float | None = SECTION73_TARGET_Z, N: int | None = None,
                     execution: str = "sampled") -> PortfolioProblem:
    """Section 7.3's construction on random outcome locations: K arms, d outcome coordinates, N = floor(T/4).

    Ours, not the paper's: a second family for the concave-commitment notebook, with the features that
    make section 7.3's instance what it is and everything else drawn at random.

    * f: ``n_good`` f-good arms with means spread evenly over 0.55 +- ``delta_f`` / 2 (two arms: 0.55 + delta_f/2
      and 0.55 - delta_f/2, as section 7.3), then K - n_good f-poor arms with means drawn uniformly in
      [0.02, 0.2], in decreasing order.
    * Outcome locations: the first d - 1 coordinates of every arm uniform in [0.05, 0.95]; the last one
      uniform in [0.3, 0.4] for the f-good arms and 0.18 for every f-poor arm (in section 7.3 arms 3, 4, 5
      share 0.18, so the differences a plug-in rule sees there are noise).
    * Target c: the first d - 1 coordinates of the mixture of the f-poor arms' true means with weights drawn
      from a Dirichlet(2, ..., 2) (no tiny weights), and ``target_z`` (None: the mixture's own last
      coordinate) as the last. With K - n_good <= d the best portfolio is that mixture (unique when the
      f-poor arms' locations are affinely independent, as random draws are); with more f-poor arms it may
      not be unique.
    * g(y) = -(y - c)^T A (y - c), A = ``a_scale`` diag(``a_shape``) (:func:`quadratic_weights`).
    * Outcomes as :func:`section73`: ``"bernoulli"`` coordinates or ``"gaussian"`` noise (``noise_sd``)
      clipped to [0, 1].

    The draws come from ``seeds.instance_generator(instance_seed, 0)``: the same ``instance_seed`` gives the
    same instance at every T (the grid's runs over T are of one instance).
    """
    T = check_int("T", T, 8)
    K = check_int("K", K, 2)
    d = check_int("d", d, 1)
    n_good = check_int("n_good", n_good, 1, K - 1)
    instance_seed = check_int("instance_seed", instance_seed, 0)
    delta_f = check_real("delta_f", delta_f, 0.0, 0.9)
    check_choice("outcomes", outcomes, OUTCOME_MODELS)
    noise_sd = check_real("noise_sd", noise_sd, 0.0)
    a_scale = check_real("a_scale", a_scale, 0.0, lo_open=True)
    weights = quadratic_weights(a_shape, d)
    if target_z is not None:
        target_z = check_real("target_z", target_z, 0.0, 1.0)
    N = T // 4 if N is None else check_int("N", N, 1, T - 1)
    rng = seeds.instance_generator(instance_seed, 0)
    poor = K - n_good
    good_f = np.linspace(0.55 + delta_f / 2, 0.55 - delta_f / 2, n_good) if n_good > 1 else np.array([0.55])
    mu_f = np.r_[good_f, np.sort(rng.uniform(0.02, 0.2, poor))[::-1]]
    loc = np.empty((d, K))
    loc[:d - 1] = rng.uniform(0.05, 0.95, (d - 1, K))
    loc[d - 1, :n_good] = rng.uniform(0.3, 0.4, n_good)
    loc[d - 1, n_good:] = 0.18
    mix = np.r_[np.zeros(n_good), rng.dirichlet(np.full(poor, 2.0))]
    means = loc if outcomes == "bernoulli" else clipped_normal_moments(loc, noise_sd)[0]
    c = means @ mix
    if target_z is not None:
        c[d - 1] = target_z
    reward = QuadraticReward(c, a_scale * np.diag(weights))
    names = [f"arm {i}" for i in range(1, K + 1)]
    if outcomes == "bernoulli":
        return BernoulliPortfolioProblem(mu_f, loc, reward, N, T, execution=execution, names=names)
    return PortfolioProblem(mu_f, loc, reward, N, T, noise_sd=noise_sd, execution=execution, names=names)


# ----------------------------------------------------------------------------------------- the registry
def _quarter_or_n(options) -> str:
    return "floor(T/4)" if options.get("N") is None else f"{options['N']}"


# The options and defaults of section73 and random_quadratic (tests/commit/test_portfolio_families.py checks that
# they are the functions' own keyword defaults).
register_family("section73", "section 7.3's instance: K = 5, d = 3, g(y) = -(y - c)^T A (y - c), N = floor(T/4) "
                "(section73)", experiment=_quarter_or_n, model="portfolio", delta_f=0.1, outcomes="bernoulli",
                noise_sd=0.1, a_scale=SECTION73_A_SCALE, a_shape=tuple(SECTION73_A_SHAPE), target_z=SECTION73_TARGET_Z,
                N=None, execution="sampled")(section73)
register_family("random_quadratic", "section 7.3's construction on random outcome locations, K and d free "
                "(random_quadratic)", experiment=_quarter_or_n, model="portfolio", K=5, d=3, n_good=2, instance_seed=0,
                delta_f=0.1, outcomes="bernoulli", noise_sd=0.1, a_scale=SECTION73_A_SCALE, a_shape=25.0,
                target_z=SECTION73_TARGET_Z, N=None, execution="sampled")(random_quadratic)

#: The registered portfolio families (the registry's view of them): name -> ``instances.InstanceFamily``.
PORTFOLIO_FAMILIES = FamilyView("portfolio")
