"""Ser4: successive elimination with randomised round-robin and random resets (Allesiardo, Feraud and
Maillard, "The non-stationary stochastic multi-armed bandit problem", IJDSA 3(4), 2017)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ...errors import check_real
from ...rng import PyStream, nb_uniform_step, new_state
from ..rewards import fill_x, kernel_args
from .base import RisingPolicy
from ._common import empty_trace


def default_delta(T: int) -> float:
    """delta = 1/T, the confidence Metelli et al. (2022) used for Ser4."""
    return 1.0 / T


def default_eps(T: int, K: int) -> float:
    """eps = 1/(T K), the elimination slack Metelli et al. (2022) used for Ser4."""
    return 1.0 / (T * K)


def default_phi(T: int, K: int) -> float:
    """phi = 1 / sqrt(K sqrt(K T)) = (K^3 T)^(-1/4); see :class:`Ser4` for why."""
    return 1.0 / math.sqrt(K * math.sqrt(K * T))


def elimination_threshold(K: int, tau: int, delta: float) -> float:
    """2 sqrt( log(4 K tau^2 / delta) / (2 tau) ): twice the Hoeffding radius after tau samples per arm."""
    return 2.0 * math.sqrt(math.log(4.0 * K * tau * tau / delta) / (2.0 * tau))


@dataclass(frozen=True)
class Ser4(RisingPolicy):
    """SER4 (Allesiardo et al. 2017, Algorithm SER4 = SER3 + random resets).

    The algorithm runs in rounds. A round pulls every arm of the active set S once, in a freshly
    shuffled order (the randomised round-robin of SER3). After round tau (every active arm now has
    tau rewards since the last reset, with empirical mean mu_k) every arm k with

        mu_max - mu_k + eps >= 2 sqrt( log(4 K tau^2 / delta) / (2 tau) )            (elimination test)

    leaves S. Then, with probability phi, the algorithm resets: S = all K arms, tau = 1 and every
    estimate is forgotten (SER4's answer to a switch of the best arm). In this rested setting an arm
    keeps its own pull count across resets (its n-th pull always reads X[i, n]); only the
    algorithm's statistics are reset. Unlike the public code of Metelli et al. (2022), which
    never removes an arm, arms really are eliminated here and brought back by a reset.

    Parameters (``None`` = the horizon-dependent default, so ``uses_horizon`` is True):

    - ``delta``: confidence, default 1/T (Metelli et al. 2022);
    - ``eps``: elimination slack (the epsilon of (eps, delta)-best arm identification), default
      1/(T K) (Metelli et al. 2022);
    - ``phi``: reset probability per round. The SER4 analysis trades the delay before a reset
      follows a best-arm switch (about N/phi for N switches) against phi times the exploration
      cost of a restart; its optimum needs N and the gaps, which a rising bandit does not
      provide. We use phi = 1/sqrt(K sqrt(K T)) = (K^3 T)^(-1/4), the balance for a single switch
      (N = 1) with a restart cost of K sqrt(K T). This is also the value in the public code of
      Metelli et al. 2022. We could not check it against the text of the paper's corollary (no copy
      of the full text was available to us), so it is a parameter.

    Conventions the paper leaves open (our choices):

    - rewards are used as observed (no Bernoulli trick): the test is a Hoeffding test on means;
    - the shuffle is a Fisher-Yates pass (one uniform per position, last to second) over the
      active arms in increasing index order, drawn from the policy's stream at the start of a round;
    - the reset coin is one uniform drawn at the end of every completed round, after elimination;
    - the empirical leader (lowest index among ties) is never eliminated, so S is never empty;
    - ``K`` in the threshold is the total number of arms (union bound over all arms).
    """

    delta: float | None = None
    eps: float | None = None
    phi: float | None = None

    name = "Ser4"
    uses_horizon = True
    randomised = True

    def __post_init__(self):
        if self.delta is not None:
            object.__setattr__(self, "delta", check_real("delta", self.delta, 0.0, 1.0, lo_open=True))
        if self.eps is not None:
            object.__setattr__(self, "eps", check_real("eps", self.eps, 0.0, 1.0, hi_open=True))
        if self.phi is not None:
            object.__setattr__(self, "phi", check_real("phi", self.phi, 0.0, 1.0))

    def resolved(self, T: int, K: int) -> tuple[float, float, float]:
        """(delta, eps, phi) for a run of horizon T with K arms."""
        delta = default_delta(T) if self.delta is None else self.delta
        eps = default_eps(T, K) if self.eps is None else self.eps
        phi = default_phi(T, K) if self.phi is None else self.phi
        return delta, eps, phi

    def run_kernel(self, obs, T, checkpoints, arms_out, stream_seed=0):
        delta, eps, phi = self.resolved(T, obs.K)
        return _ser4_kernel(*kernel_args(obs, T), T, delta, eps, phi, checkpoints, arms_out, new_state(stream_seed))

    def reference(self, X, T, stream_seed=0, trace=False):
        """Plain loop over rounds. ``trace`` gives, at every time step, the empirical mean of each
        active arm at the start of that step (NaN for eliminated arms and in the first round)."""
        K = X.shape[0]
        delta, eps, phi = self.resolved(T, K)
        stream = PyStream(stream_seed)
        N = [0] * K
        arms = np.empty(T, dtype=np.int64)
        index_trace = empty_trace(T, K) if trace else None
        active = list(range(K))
        sums = [0.0] * K
        means = [math.nan] * K
        tau = 1
        order: list[int] = []
        t = 0
        while t < T:
            # A new round: shuffle the active arms (Fisher-Yates), then pull each once.
            order = list(active)
            for j in range(len(order) - 1, 0, -1):
                r = int(stream.uniform() * (j + 1))
                order[j], order[r] = order[r], order[j]
            for arm in order:
                if t == T:
                    break
                if trace:
                    for k in active:
                        index_trace[t, k] = means[k]
                N[arm] += 1
                sums[arm] += X[arm, N[arm]]
                arms[t] = arm
                t += 1
            else:
                # The round is complete: eliminate, then maybe reset.
                for k in active:
                    means[k] = sums[k] / tau
                leader = active[0]
                for k in active:
                    if means[k] > means[leader]:
                        leader = k
                threshold = elimination_threshold(K, tau, delta)
                active = [k for k in active if k == leader or means[leader] - means[k] + eps < threshold]
                means = [means[k] if k in active else math.nan for k in range(K)]
                tau += 1
                if stream.uniform() < phi:
                    active = list(range(K))
                    sums = [0.0] * K
                    means = [math.nan] * K
                    tau = 1
        return (arms, index_trace) if trace else arms


@njit(cache=True)
def _ser4_kernel(mode, table, sigma_x, keys, work, T, delta, eps, phi, checkpoints, arms_out, state):
    K = table.shape[0]
    X = work[0]  # rewards X[i, n], filled from the reward source a block of pulls at a time
    filled = np.zeros(K, dtype=np.int64)  # last pull of each arm in X
    counts = np.zeros(K, dtype=np.int64)
    out = np.zeros((checkpoints.size, K), dtype=np.int64)
    active = np.arange(K)      # active arms in increasing index order, first m entries
    m = K
    order = np.empty(K, dtype=np.int64)
    sums = np.zeros(K)
    tau = 1
    pos = 0                    # position inside the current round; 0 = a round starts
    # The policy's stream travels as a plain uint64 (``rng.nb_uniform_step``, the same numbers as
    # ``nb_uniform`` on the state array): a call of ``nb_uniform(state)`` per shuffle step and coin paid
    # the array argument's reference counting every time (measured about 3 % of the kernel at K = 4-14,
    # 2026-12-01: the default reset rate phi keeps most arms active, so a pull costs about one uniform).
    s = state[0]
    # Bookkeeping written out inline: a helper call that takes arrays costs hundreds of ns per
    # round in our measurements, the inline form a few.
    keep_arms = arms_out.size > 0
    ci = 0
    next_cp = checkpoints[0] if checkpoints.size > 0 else -1
    for t in range(1, T + 1):
        if pos == 0:
            for j in range(m):
                order[j] = active[j]
            for j in range(m - 1, 0, -1):
                u, s = nb_uniform_step(s)
                r = int(u * (j + 1))
                tmp = order[j]
                order[j] = order[r]
                order[r] = tmp
        arm = order[pos]
        pos += 1
        counts[arm] += 1
        if counts[arm] > filled[arm]:
            filled[arm] = fill_x(X, mode, table, sigma_x, keys, arm, filled[arm] + 1, T)
        sums[arm] += X[arm, counts[arm]]
        if pos == m:
            # End of round tau: elimination test on the means of the active arms.
            leader = active[0]
            best = sums[leader] / tau
            for j in range(1, m):
                mu = sums[active[j]] / tau
                if mu > best:
                    best = mu
                    leader = active[j]
            threshold = 2.0 * math.sqrt(math.log(4.0 * K * tau * tau / delta) / (2.0 * tau))
            kept = 0
            for j in range(m):
                k = active[j]
                if k == leader or best - sums[k] / tau + eps < threshold:
                    active[kept] = k
                    kept += 1
            m = kept
            tau += 1
            pos = 0
            u, s = nb_uniform_step(s)
            if u < phi:
                m = K
                for k in range(K):
                    active[k] = k
                    sums[k] = 0.0
                tau = 1
        if keep_arms:
            arms_out[t - 1] = arm
        if t == next_cp:
            for k in range(K):
                out[ci, k] = counts[k]
            ci += 1
            next_cp = checkpoints[ci] if ci < checkpoints.size else -1
    state[0] = s
    return out
