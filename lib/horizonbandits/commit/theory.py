"""Rates and bounds of the experiment-then-commit paper (Jiang, Tang and Zhang 2026, sections 1.1, 3-5).

Everything here is a formula, returned without the constants the theorems hide (O, Omega, O-tilde).

- ``raec_epsilon``: the accuracy of Theorem 3.1, eps = max{4 sqrt(K log(T-N)/N), (K log(T-N)/(T-N))^(1/3)},
  and ``raec_epochs`` = ceil(log2(1/eps)), the number L of reserved epochs (<= 0 when eps >= 1, infinite
  when eps = 0, i.e. T - N = 1).
- ``regime``: Region I (short experiment), II (balanced) or III (short commitment), with the boundaries
  of section 1.1 (which carry logs and use T^(3/4)) or of section 3.2 (no logs, N^(3/4)).
- ``upper_bound_rate`` (Theorem 3.1) and ``minimax_lower_bound`` (Theorem 5.3): both equal
  sqrt( K (T-N)^(2/3) max{(T-N)^(4/3), K^(1/3) N} / min{N, K^(1/3) (T-N)^(2/3)} ) up to logs
  (section 6.2 restates Theorem 3.1 in this form); region by region it is T sqrt(K/N),
  K^(1/3) (T-N)^(2/3) and sqrt(K N).
- ``region_rate``: the region-wise rates of section 1.1 (sqrt(K T^2/N), K^(1/3)(T-N)^(2/3), sqrt(K T)).
- exponents for the phase diagrams (Figures 1 and 2): with N = T^a, the regret grows as T^(1 - a/2) for
  a <= 2/3 and T^(2/3) above; with T - N = T^b (late commitment) as T^(2b/3) for b >= 3/4 and T^(1/2) below.
- instance-dependent: ``proposition41_bound`` (RAEC's upper bound; ``proposition41_terms`` from any means),
  ``asymptotic_instance_bound`` (equation 5) and ``instance_lower_bound`` (section 5).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize_scalar

from ..errors import check_choice, check_int
from .problem import check_horizons


def _check(K, N, T):
    K = check_int("K", K, 2)
    N, T = check_horizons(N, T)
    return K, N, T


# ------------------------------------------------------------------------------- Theorem 3.1
def raec_epsilon(K, N, T) -> float:
    """eps of Theorem 3.1: max{4 sqrt(K log(T-N) / N), (K log(T-N) / (T-N))^(1/3)} (0 when T - N = 1)."""
    K, N, T = _check(K, N, T)
    lg = math.log(T - N)
    return max(4.0 * math.sqrt(K * lg / N), (K * lg / (T - N)) ** (1.0 / 3.0))


def epsilon_by_region(K, N, T) -> float:
    """eps as section 3.2 states it region by region: 4 sqrt(K log(T-N) / N) in region I, (K log(T-N) / (T-N))^(1/3)
    in regions II and III (``regime(..., boundaries="section3")``).

    At finite T the two terms of Theorem 3.1's max are not ordered like the regions (the constant 4 moves the
    crossing by a factor 16 in N), so this choice reserves more exploration than ``raec_epsilon`` in much of region II.
    """
    K, N, T = _check(K, N, T)
    lg = math.log(T - N)
    if regime(K, N, T, "section3") == "I":
        return 4.0 * math.sqrt(K * lg / N)
    return (K * lg / (T - N)) ** (1.0 / 3.0)


def raec_epochs(K, N, T) -> float:
    """L = ceil(log2(1/eps)) with Theorem 3.1's eps: may be <= 0 (eps >= 1) or inf (eps = 0)."""
    return epochs_for(raec_epsilon(K, N, T))


def epochs_for(eps: float) -> float:
    """ceil(log2(1/eps)); inf for eps = 0."""
    if eps <= 0:
        return math.inf
    return float(math.ceil(math.log2(1.0 / eps)))


def upper_bound_rate(K, N, T, logs: bool = False) -> float:
    """Theorem 3.1's rate, sqrt(K (T-N)^(2/3) max{(T-N)^(4/3), K^(1/3) N} / min{N, K^(1/3) (T-N)^(2/3)}).

    With ``logs=True`` (our reading of where the logs go) the sum of RAEC's three costs at Theorem 3.1's eps:
    reserved exploration min{N, K log(T-N) / eps^2} + commitment (T-N) eps + Stage II sqrt(K N log N).
    """
    K, N, T = _check(K, N, T)
    if not logs:
        return _combined_rate(K, N, T)
    eps = raec_epsilon(K, N, T)
    reserve = N if eps == 0 else min(N, K * math.log(T - N) / eps ** 2)
    return reserve + (T - N) * eps + math.sqrt(K * N * math.log(N)) if N > 1 else reserve + (T - N) * eps


def minimax_lower_bound(K, N, T) -> float:
    """Theorem 5.3: inf_pi sup_I REG >= c sqrt(K (T-N)^(2/3) max{(T-N)^(4/3), K^(1/3) N} / min{N, K^(1/3)(T-N)^(2/3)})."""
    K, N, T = _check(K, N, T)
    return _combined_rate(K, N, T)


def _combined_rate(K, N, T) -> float:
    return combined_rate_real(K, N, T - N)


# ------------------------------------------------------------------------------- regions
def regime(K, N, T, boundaries: str = "intro") -> str:
    """'I', 'II' or 'III'.

    ``boundaries="intro"`` (section 1.1, with logs): I if N <= (T-N)^(2/3) (K log(T-N))^(1/3); else III if
    T - N < K^(1/4) T^(3/4) / sqrt(log(T-N)); else II.
    ``boundaries="section3"`` (section 3.2, no logs): I if N <= K^(1/3) (T-N)^(2/3); else III if
    T - N <= K^(1/4) N^(3/4); else II. The two differ near N = T - T^(3/4), where the late-commitment
    schedule of section 7.1 sits. Region I takes precedence where both conditions hold (tiny T).
    """
    K, N, T = _check(K, N, T)
    check_choice("boundaries", boundaries, ("intro", "section3"))
    c = T - N
    if boundaries == "intro":
        lg = math.log(c)
        if N <= c ** (2 / 3) * (K * lg) ** (1 / 3):
            return "I"
        if lg == 0 or c < K ** 0.25 * T ** 0.75 / math.sqrt(lg):
            return "III"
        return "II"
    if N <= K ** (1 / 3) * c ** (2 / 3):
        return "I"
    if c <= K ** 0.25 * N ** 0.75:
        return "III"
    return "II"


def region_rate(K, N, T, boundaries: str = "intro") -> float:
    """Section 1.1's rate for the region of (K, N, T): sqrt(K T^2/N), K^(1/3)(T-N)^(2/3) or sqrt(K T)."""
    r = regime(K, N, T, boundaries)
    if r == "I":
        return math.sqrt(K * T * T / N)
    if r == "II":
        return K ** (1 / 3) * (T - N) ** (2 / 3)
    return math.sqrt(K * T)


def exponent_vs_experiment(a) -> np.ndarray:
    """Regret exponent (log REG / log T as T grows, K fixed) when N = T^a, a in [0, 1): upper = lower bound."""
    a = np.asarray(a, dtype=float)
    return np.where(a <= 2 / 3, 1 - a / 2, 2 / 3)


def exponent_vs_commitment(b) -> np.ndarray:
    """Regret exponent when T - N = T^b (late commitment, N ~ T), b in [0, 1)."""
    b = np.asarray(b, dtype=float)
    return np.where(b >= 3 / 4, 2 * b / 3, 1 / 2)


def numeric_exponent(rate, K: int, split, T_lo: float = 1e20, T_hi: float = 1e24) -> float:
    """(log rate(T_hi) - log rate(T_lo)) / (log T_hi - log T_lo) along a schedule.

    ``split(T)`` returns (N, T - N) as real numbers (giving the commitment length directly avoids the
    cancellation of T - N at huge T) and ``rate(K, N, C)`` takes the commitment length C = T - N. Used to
    read the asymptotic exponent off a formula and check the closed forms above.
    """
    vals = []
    for T in (T_lo, T_hi):
        n, c = split(T)
        vals.append(math.log(rate(K, n, c)))
    return (vals[1] - vals[0]) / (math.log(T_hi) - math.log(T_lo))


def combined_rate_real(K, N, C) -> float:
    """Theorems 3.1 / 5.3's rate from N and the commitment length C = T - N, reals allowed (for exponents)."""
    return math.sqrt(K * C ** (2 / 3) * max(C ** (4 / 3), K ** (1 / 3) * N) / min(N, K ** (1 / 3) * C ** (2 / 3)))


# ------------------------------------------------------------------------------- instance-dependent
def gammas_g(mu_g) -> np.ndarray:
    """gamma_g,i = Delta_g,i for i != I*_g and min_{j != I*_g} Delta_g,j for I*_g (Proposition 4.1)."""
    mu_g = np.asarray(mu_g, dtype=float)
    gaps = mu_g.max() - mu_g
    star = int(np.argmax(mu_g))
    out = gaps.copy()
    out[star] = np.min(np.delete(gaps, star))
    return out


def proposition41_bound(problem, eps: float | None = None) -> dict:
    """The terms of Proposition 4.1 (RAEC's instance-dependent upper bound), constants dropped.

    sum_{i in S_f} Delta_f,i max{log(T-N) / max(gamma_g,i, eps)^2, log N / Delta_f,i^2}   (experiment)
    + (T-N) max_{i: Delta_g,i <= 2 eps} Delta_g,i                                         (commitment)
    + K L / (T-N) + K B_eps L / (T-N)^2, B_eps = min{N, K m_g,L}                          (failure terms)
    Returns the three parts and their sum; eps defaults to Theorem 3.1's.
    """
    K, N, T = problem.K, problem.N, problem.T
    eps = raec_epsilon(K, N, T) if eps is None else float(eps)
    return proposition41_terms(problem.mu_f, problem.mu_g, N, T, eps)


def proposition41_terms(mu_f, mu_g, N: int, T: int, eps: float) -> dict:
    """``proposition41_bound`` from the arms' means (f-gaps and g-gaps are read off them): the same formula for
    any means, true or estimated (``AdaptiveRAEC`` evaluates it at its empirical means)."""
    mu_f, mu_g = np.asarray(mu_f, dtype=float), np.asarray(mu_g, dtype=float)
    K = mu_f.size
    L = max(epochs_for(eps), 1.0)
    c = T - N
    df, dg = mu_f.max() - mu_f, mu_g.max() - mu_g
    gam = gammas_g(mu_g)
    experiment = 0.0
    for i in range(K):
        if df[i] > 0:
            experiment += df[i] * max(math.log(c) / max(gam[i], eps) ** 2, math.log(N) / df[i] ** 2)
    commitment = c * float(np.max(dg[dg <= 2 * eps]))
    m_gL = 4 * math.log(c) * 4.0 ** min(L, 60)
    B = min(N, K * m_gL)
    failure = K * L / c + K * B * L / c ** 2
    return dict(experiment=experiment, commitment=commitment, failure=failure,
                total=experiment + commitment + failure)


def asymptotic_instance_bound(problem) -> float:
    """Equation (5): sum_{i in S_f} Delta_f,i max{log(T-N) / gamma_g,i^2, log N / Delta_f,i^2}."""
    N, T = problem.N, problem.T
    df = problem.gaps_f
    gam = gammas_g(problem.mu_g)
    total = 0.0
    for i in range(problem.K):
        if df[i] > 0:
            total += df[i] * max(math.log(T - N) / gam[i] ** 2, math.log(N) / df[i] ** 2)
    return total


def k_inf_above(probs_row, values, level: float) -> float:
    """inf { KL(p, q) : q on the same support, E_q[values] > level } (Honda and Takemura 2010 dual).

    K_inf = max_{0 <= lam <= 1/(max v - level)} E_p log(1 - lam (v - level)); inf if no q can exceed level.
    """
    p = np.asarray(probs_row, dtype=float)
    v = np.asarray(values, dtype=float)
    if v[p > 0].size and np.dot(p, v) > level:
        return 0.0
    vmax = v.max()
    if vmax <= level:
        return math.inf
    hi = 1.0 / (vmax - level)

    def neg(lam):
        with np.errstate(divide="ignore"):
            return -float(np.sum(p * np.log(np.maximum(1.0 - lam * (v - level), 0.0))))

    res = minimize_scalar(neg, bounds=(0.0, hi), method="bounded", options={"xatol": 1e-12 * hi})
    best = min(neg(hi * (1 - 1e-12)), res.fun, neg(0.0))
    return -best


def divergences(problem) -> tuple[np.ndarray, np.ndarray]:
    """d_f,i and d_g,i of section 5 on the problem's support.

    d_f,i: smallest KL change of arm i's law that lifts its f-mean above mu_f*. d_g,i likewise for g; for the
    g-optimal arm (where the paper's definition is 0) we use the change that pushes its g-mean below the
    runner-up (our reading; it is Theta(gamma_g^2) as the matching statement of section 5 requires).
    For Bernoulli coordinates these are the Bernoulli kl(mu_i, mu*) of the relevant coordinate.
    """
    K = problem.K
    d_f = np.array([k_inf_above(problem.probs[i], problem.f_values, problem.mu_f.max()) for i in range(K)])
    d_g = np.empty(K)
    star = problem.best_g
    second = np.max(np.delete(problem.mu_g, star))
    for i in range(K):
        if i == star:  # lower g below the runner-up: lift 1 - g above 1 - second
            d_g[i] = k_inf_above(problem.probs[i], 1.0 - problem.g_values, 1.0 - second)
        else:
            d_g[i] = k_inf_above(problem.probs[i], problem.g_values, problem.mu_g.max())
    return d_f, d_g


def instance_lower_bound(problem) -> float:
    """Section 5: sum_{i in S_f} max{log N / d_f,i, log(T-N) / d_g,i} Delta_f,i (constants dropped)."""
    d_f, d_g = divergences(problem)
    N, T = problem.N, problem.T
    total = 0.0
    for i in range(problem.K):
        if problem.gaps_f[i] > 0:
            total += max(math.log(N) / d_f[i], math.log(T - N) / d_g[i]) * problem.gaps_f[i]
    return total


def bernoulli_kl(p: float, q: float) -> float:
    """kl(p, q) between Bernoulli laws."""
    out = 0.0
    if p > 0:
        out += p * math.log(p / q)
    if p < 1:
        out += (1 - p) * math.log((1 - p) / (1 - q))
    return out
