"""Tools for proving that a policy's compiled kernel and its plain reference agree (public API).

    from horizonbandits.testing import assert_kernel_matches_reference
    assert_kernel_matches_reference(MyPolicy(), inst, T=2000, n_seeds=3)

For each seed index the kernel draws its rewards lazily (``reward_source``, as in ``simulate``) and the
reference reads the same numbers from the table ``draw_observations`` fills; both get the same stream
seed. The check fails with the first round at which they choose different arms.
"""
from __future__ import annotations

import numpy as np

from .rising.instances import RisingInstance
from .rising.observations import draw_observations, policy_stream_seed, reward_source
from .rising.policies.base import RisingPolicy


def kernel_arms(policy: RisingPolicy, X, T: int, stream_seed: int = 0) -> np.ndarray:
    """The compiled kernel's arm sequence on a hand-made reward table ``X`` (K x (T + 1), column 0 = mu(0))."""
    from .rising.observations import Observations
    arms = np.empty(T, dtype=np.int64)
    policy.run_kernel(Observations(np.asarray(X, dtype=float)), T, np.array([T], dtype=np.int64), arms, stream_seed)
    return arms


def kernel_and_reference_arms(policy: RisingPolicy, inst: RisingInstance, T: int, seed: int = 0, s: int = 0,
                              noise=None):
    """Arm sequences (kernel on the lazy rewards, reference on their table) of one seed index."""
    obs = draw_observations(inst, T, seed, s, noise)
    stream = policy_stream_seed(seed, s)
    checkpoints = np.array([T], dtype=np.int64)
    arms = np.empty(T, dtype=np.int64)
    pulls = policy.run_kernel(reward_source(inst, seed, s, noise), T, checkpoints, arms, stream)
    counted = np.bincount(arms, minlength=inst.K)
    if not np.array_equal(counted, pulls[-1]):
        raise AssertionError(f"{policy.label}: kernel pull counts {pulls[-1].tolist()} disagree with its own "
                             f"arm sequence {counted.tolist()}")
    ref = np.asarray(policy.reference(obs.X, T, stream), dtype=np.int64)
    return arms, ref


def assert_kernel_matches_reference(policy: RisingPolicy, inst: RisingInstance | None = None, T: int = 2000,
                                    n_seeds: int = 3, seed: int = 0, noise=None) -> None:
    """Raise AssertionError unless kernel and reference choose the same arm at every round of every seed."""
    if inst is None:
        from .rising.instances import ltf_random
        inst = ltf_random(np.random.default_rng(seed), K=4, T_ref=max(T, 20))
    for s in range(n_seeds):
        kern, ref = kernel_and_reference_arms(policy, inst, T, seed, s, noise)
        if ref.shape != kern.shape:
            raise AssertionError(f"{policy.label}: reference returned {ref.shape[0]} arms, expected {T}")
        diff = np.flatnonzero(kern != ref)
        if diff.size:
            t = int(diff[0]) + 1
            raise AssertionError(
                f"{policy.label}: kernel and reference diverge at round t={t} of seed index {s} "
                f"(kernel pulled arm {kern[t - 1]}, reference arm {ref[t - 1]}; {diff.size} rounds differ)")
