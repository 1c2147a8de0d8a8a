"""What the commitment policies' tests share: a problem with discrete outcomes, and the two-sample z statistic
their in-distribution comparisons of a compiled path against its per-round reference use."""
import math

import numpy as np

from horizonbandits.commit import CommitProblem


def discrete_problem() -> CommitProblem:
    """Four outcomes (f, g) and three arms with their own outcome probabilities; N = 200, T = 900."""
    return CommitProblem.discrete([[0, 0], [0.3, 1], [1, 0.2], [0.7, 0.9]],
                                  [[.1, .2, .3, .4], [.4, .3, .2, .1], [.25, .25, .25, .25]],
                                  lambda o: o[0], lambda o: o[1], 200, 900)


def z(a, b) -> float:
    """(mean a - mean b) over the standard error of the difference (unpaired). Both samples constant: 0 when
    they are the same constant, infinite when not (two constants that differ are not the same distribution)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    if se == 0:
        return 0.0 if a.mean() == b.mean() else math.inf
    return (a.mean() - b.mean()) / se


def assert_same_commitment_shares(ref_committed, fast_committed, K: int, bound: float = 4.0) -> None:
    """Each arm's share of the runs that commit to it agrees between the reference and the compiled path
    within ``bound`` standard errors."""
    for i in range(K):
        assert abs(z(ref_committed == i, fast_committed == i)) < bound, f"arm {i}"
