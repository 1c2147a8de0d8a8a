"""The concave-commitment instance of section 7.3 (Figure 5 of the RAEC/ROSCOC paper)."""
from __future__ import annotations

import numpy as np

from ..errors import check_int, check_real
from .concave import PortfolioProblem, clipped_normal_moments
from .portfolio import QuadraticReward

#: Outcome locations o_1..o_5 of section 7.3, one column per arm (d = 3).
SECTION73_OUTCOMES = np.array([
    [0.90, 0.08, 0.08, 0.60, 0.28],
    [0.18, 0.90, 0.64, 0.10, 0.72],
    [0.34, 0.32, 0.18, 0.18, 0.18],
])

#: Weights of the target c on arms 3, 4, 5 (our choice; c is not in our copy of the paper).
SECTION73_TARGET_WEIGHTS = np.array([0.0, 0.0, 0.4, 0.3, 0.3])


def section73(T: int, delta_f: float = 0.1, noise_sd: float = 0.1, N: int | None = None,
              execution: str = "sampled") -> PortfolioProblem:
    """Section 7.3: K = 5, d = 3, N = floor(T/4), g(y) = -(y - c)^T A (y - c).

    mu_f = (0.55 + delta_f/2, 0.55 - delta_f/2, 0.16, 0.08, 0.02); outcome locations o_1..o_5 as
    printed in section 7.3; Gaussian outcome noise with standard deviation ``noise_sd`` clipped to
    [0, 1]. Our copy of the paper gives neither c, A nor Delta_f, so (as the issue decides):

    * A = I;
    * c = 0.4 m_3 + 0.3 m_4 + 0.3 m_5 with m_i the true (clipped-noise) outcome means. With
      noise_sd = 0 this is 0.4 o_3 + 0.3 o_4 + 0.3 o_5 = (0.296, 0.502, 0.18); taking the means
      rather than the locations keeps the optimum where the paper puts it when clipping moves a
      mean: OPT_g = 0, attained only by x* = (0, 0, 0.4, 0.3, 0.3) (the tests check uniqueness).
      Arms 3, 4 and 5 are the worst under f, so the optimal portfolio is made of f-bad arms;
    * delta_f = 0.1 by default: the f-gap between the two f-good arms, a fixed constant (section
      7.2's Delta_g shrinks with T; nothing in section 7.3 says Delta_f does).

    ``N`` overrides floor(T/4).
    """
    T = check_int("T", T, 8)
    delta_f = check_real("delta_f", delta_f, 0.0, 0.9)
    noise_sd = check_real("noise_sd", noise_sd, 0.0)
    N = T // 4 if N is None else check_int("N", N, 1, T - 1)
    mu_f = np.array([0.55 + delta_f / 2, 0.55 - delta_f / 2, 0.16, 0.08, 0.02])
    means, _ = clipped_normal_moments(SECTION73_OUTCOMES, noise_sd)
    c = means @ SECTION73_TARGET_WEIGHTS
    return PortfolioProblem(mu_f, SECTION73_OUTCOMES, QuadraticReward(c, np.eye(3)), N, T, noise_sd=noise_sd,
                            execution=execution, names=[f"arm {i}" for i in range(1, 6)])
