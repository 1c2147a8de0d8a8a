"""Drive pymab's plain-Python policies on our reward tables, with each convention that differs from ours
aligned here, in the driver, and nowhere in our policies.

pymab (PyPI ``pymab``, MIT) ships each policy twice: a Rust one behind ``pymab.policies`` and a "behavioral
reference" in plain Python, ``pymab._reference.policies`` (a private module: the names below are those
of pymab 2.0.1, the version in requirements.lock). We compare our kernels with the Python reference,
because it draws its randomness from the ``rng`` object it is handed at every ``select_action``, so the
uniforms and Beta draws it uses can be ours; the Rust one takes only a seed from that object.

pymab's policies are stationary bandits: ``select_action(rng=...)`` then ``update(action=..., reward=...)``.
Rested rewards are ours to serve: the n-th pull of arm i gets ``X[i, n]``, the number our kernels read.

The conventions that differ, each a switch of the drivers below (``aligned=False`` gives pymab as
published for that convention):

SW-UCB (``SlidingWindowUCBPolicy``; c = our xi, reward_scale = our B, window_size = our tau)
- log term: pymab uses log(max(min(t - 1, tau), 2)) at round t (it counts the rounds already played);
  Garivier and Moulines, and we, use log(min(t, tau)). ``AlignedLogSWUCB`` advances pymab's round
  counter by one while the bonus is computed, and only then;
- ties: pymab draws among the tied arms at random (``rng.choice``); we take the lowest index.
  ``LowestTie`` answers that draw with the first tied arm;
- the first K rounds: Garivier and Moulines, and we, play arms 1..K in turn; pymab plays the first arm
  absent from the window. The same arms unless tau < K (then arms pulled in rounds 1..K leave the
  window before round K). ``RoundRobinStart`` plays arm t - 1 in rounds t <= K.
EXP3 with restarts (``EXP3Policy``; learning_rate = gamma, pymab's default, is our update)
- restarts: pymab's EXP3 has none; Besbes et al.'s Rexp3 restarts every Delta rounds. The driver
  calls ``reset()`` at the first round of every batch;
- rewards: pymab refuses a reward outside [0, 1]; we clip it to [0, 1] (Exp3's range) before the update.
  The driver clips (this one is not a switch: pymab raises otherwise);
- the arm draw: pymab calls ``rng.choice(K, p=p)``, numpy's inversion (cdf = cumsum(p) / its last
  entry, the first arm whose cdf exceeds a uniform u). ``OurStream`` makes that draw with u from our
  policy's stream, the uniform our kernel uses in that round.
SW-TS (``SlidingWindowBernoulliThompsonSamplingPolicy``; window_size = our tau, priors Beta(1, 1))
- the Beta draws: pymab calls ``rng.beta(1 + S, 1 + F)`` (numpy's Generator: its own gamma sampler on
  its own bit stream); ours come from ``PyStream.beta_int`` (splitmix64, our ziggurats). No choice of
  seeds makes the two equal, they are different algorithms on different generators. ``OurStream``
  answers ``rng.beta`` with our draws, arm by arm in index order, as our kernel makes them;
- rewards: pymab's SW-TS accepts only 0/1 rewards; we apply the Bernoulli trick (y = 1{u < clip(x)}) to
  any reward. The driver applies it, with u from the same stream after the round's Beta draws (our
  order). On Bernoulli rewards y = x and no u is needed by pymab.
"""
from __future__ import annotations

import numpy as np
from pymab._reference.policies.adversarial import EXP3Policy
from pymab._reference.policies.nonstationary import SlidingWindowBernoulliThompsonSamplingPolicy, SlidingWindowUCBPolicy

from horizonbandits.rng import PyStream


class AlignedLogSWUCB(SlidingWindowUCBPolicy):
    """pymab's SW-UCB with the round counter of its log term advanced by one: log(min(t, tau)) at round t."""

    def _confidence_bonus(self):
        self.step += 1
        try:
            return super()._confidence_bonus()
        finally:
            self.step -= 1


class RoundRobinStart:
    """Mixed in before a pymab policy: rounds t = 1..K play arm t - 1, then the policy chooses."""

    def select_action(self, *, rng):
        if self.step < self.n_arms:
            return self.step
        return super().select_action(rng=rng)


class LowestTie:
    """Stands for numpy's Generator where pymab breaks a tie with ``rng.choice(candidates)``: the lowest arm."""

    def choice(self, a, p=None):
        if p is not None:
            raise AssertionError("LowestTie only answers tie breaks")
        return a[0]


class OurStream:
    """Stands for numpy's Generator in pymab's ``select_action``, drawing from our policy's stream."""

    def __init__(self, stream_seed: int):
        self.stream = PyStream(stream_seed)

    def uniform(self) -> float:
        return self.stream.uniform()

    def choice(self, a, p=None):
        """numpy's ``Generator.choice(a, p=p)`` for an integer a, by inversion with our uniform."""
        if p is None:
            raise AssertionError("OurStream.choice only draws arms from probabilities")
        cdf = np.cumsum(p)
        cdf /= cdf[-1]
        return int(np.searchsorted(cdf, self.stream.uniform(), side="right"))

    def beta(self, a, b):
        """One Beta(a_i, b_i) per arm, in index order, from our stream (integer parameters, as in SW-TS)."""
        out = np.empty(len(a))
        for i, (ai, bi) in enumerate(zip(a, b)):
            if ai != int(ai) or bi != int(bi):
                raise AssertionError(f"non-integer Beta parameters {ai}, {bi}: our SW-TS only draws integer ones")
            out[i] = self.stream.beta_int(int(ai), int(bi))
        return out


def serve(policy, X: np.ndarray, T: int, rng, reward=None, restart_every: int | None = None) -> np.ndarray:
    """Play ``policy`` (pymab's protocol) for T rounds on the rested rewards X (K x (T + 1), the n-th pull
    of arm i reads X[i, n]); ``reward(x, rng)`` turns a reward into what pymab is given; ``restart_every``
    resets the policy at the first round of every batch of that many rounds. Returns the arms (0-based)."""
    pulls = np.zeros(X.shape[0], dtype=np.int64)
    arms = np.empty(T, dtype=np.int64)
    for t in range(T):
        if restart_every is not None and t % restart_every == 0:
            policy.reset()
        arm = int(policy.select_action(rng=rng))
        pulls[arm] += 1
        x = float(X[arm, pulls[arm]])
        policy.update(action=arm, reward=x if reward is None else reward(x, rng))
        arms[t] = arm
    return arms


def clip01(x: float, rng=None) -> float:
    return min(max(x, 0.0), 1.0)


def bernoulli_trick(x: float, rng) -> float:
    """y = 1{u < clip(x)} with u the next uniform of ``rng`` (ours or numpy's)."""
    u = rng.uniform() if isinstance(rng, OurStream) else float(rng.random())
    return 1.0 if u < clip01(x) else 0.0


def pymab_sw_ucb(X, T: int, xi: float, tau: int, B: float = 1.0, align_log: bool = True,
                 align_ties: bool = True, align_start: bool = True, seed: int = 0) -> np.ndarray:
    """Arms of pymab's SW-UCB; ``seed`` feeds numpy's tie breaks when they are not aligned."""
    cls = AlignedLogSWUCB if align_log else SlidingWindowUCBPolicy
    if align_start:
        cls = type(f"RoundRobinStart{cls.__name__}", (RoundRobinStart, cls), {})
    policy = cls(n_arms=X.shape[0], c=xi, reward_scale=B, window_size=tau)
    rng = LowestTie() if align_ties else np.random.default_rng(seed)
    return serve(policy, X, T, rng)


def pymab_rexp3(X, T: int, gamma: float, batch: int, stream_seed: int, align_restarts: bool = True,
                align_draws: bool = True, seed: int = 0) -> np.ndarray:
    """Arms of pymab's EXP3, restarted every ``batch`` rounds when aligned; the arm draws use our stream
    (``stream_seed``) when aligned, numpy's default_rng(seed) otherwise."""
    policy = EXP3Policy(n_arms=X.shape[0], gamma=gamma)
    rng = OurStream(stream_seed) if align_draws else np.random.default_rng(seed)
    return serve(policy, X, T, rng, reward=clip01, restart_every=batch if align_restarts else None)


def pymab_sw_ts(X, T: int, tau: int, stream_seed: int | None = None, seed: int = 0, binary: bool = False,
                window: int | None = None) -> np.ndarray:
    """Arms of pymab's SW-TS. With ``stream_seed`` the Beta draws and the Bernoulli trick's uniforms are
    ours (the trick is applied even to 0/1 rewards, where it changes nothing, because our kernel draws
    that uniform in every round); without, numpy's default_rng(seed) makes them, as pymab does, and
    ``binary`` (the rewards are 0/1 already) hands the rewards to pymab as they are. ``window``
    overrides tau for pymab alone (power checks)."""
    policy = SlidingWindowBernoulliThompsonSamplingPolicy(n_arms=X.shape[0], window_size=tau if window is None else window)
    if stream_seed is not None:
        return serve(policy, X, T, OurStream(stream_seed), reward=bernoulli_trick)
    rng = np.random.default_rng(seed)
    return serve(policy, X, T, rng, reward=None if binary else bernoulli_trick)
