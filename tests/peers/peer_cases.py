"""What the peer tests share: the instances they run on and our side of each comparison."""
from __future__ import annotations

import numpy as np

import horizonbandits.rising as R
from horizonbandits.rising.observations import policy_stream_seed

SEED = 0  # the root seed of every comparison: seed index s gets its rewards and policy stream from it


def instance(T: int, K: int = 5) -> R.RisingInstance:
    """A random linear-then-flat instance (appendix B.1.1 of the CURE-UCB paper), the same for every test."""
    return R.ltf_random(np.random.default_rng(5), K=K, T_ref=T, noise=0.1)


def our_run(inst, policy, T: int, s: int, noise):
    """(arms of ``simulate`` at seed index s, the reward table they were read from, our policy's stream seed)."""
    arms = R.simulate(inst, policy, T, n_seeds=s + 1, seed=SEED, noise=noise, return_arms=True).arms[s]
    X = R.draw_observations(inst, T, seed=SEED, s=s, noise=noise).X
    return arms, X, policy_stream_seed(SEED, s)


def first_difference(a, b) -> str:
    """'same' or the first round (1-based) where two arm sequences differ, and how many rounds do."""
    diff = np.flatnonzero(np.asarray(a) != np.asarray(b))
    if diff.size == 0:
        return "same"
    t = int(diff[0])
    return f"round {t + 1}: ours {b[t]}, peer {a[t]} ({diff.size} of {len(a)} rounds differ)"
