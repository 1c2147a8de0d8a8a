"""SW-UCB against pymab's plain-Python SlidingWindowUCBPolicy: with the log term, the tie breaks and the
first K rounds aligned in the driver (``pymab_adapter``), the same arm in every round; with any of them
left as pymab has it, not."""
import pytest

pytest.importorskip("pymab", reason="pymab (an independent implementation, in the dev extras) does not import")

import pymab_adapter as A  # noqa: E402
from peer_cases import first_difference, instance, our_run  # noqa: E402

from horizonbandits.rising.policies.sw_ucb import SWUCB  # noqa: E402

T = 1500


def peer_arms(policy, X, **conventions):
    return A.pymab_sw_ucb(X, T, xi=policy.xi, tau=policy.window(T), B=policy.B, **conventions)


@pytest.mark.parametrize("policy", [SWUCB(), SWUCB(window_rule="horizon"), SWUCB(tau=40, xi=2.0, B=0.5), SWUCB(tau=3, xi=0.1)],
                         ids=repr)
@pytest.mark.parametrize("noise", [0.1, "bernoulli"])
def test_same_arm_in_every_round_once_aligned(policy, noise):
    inst = instance(T)
    for s in range(2):
        ours, X, _ = our_run(inst, policy, T, s, noise)
        assert first_difference(peer_arms(policy, X), ours) == "same", f"seed index {s}"


def test_each_alignment_is_needed():
    """pymab's own log(min(t - 1, tau)) moves the arms on Gaussian rewards; its random tie breaks move
    them on 0/1 rewards, where equal window means are common (with 0.1 noise no index ties)."""
    inst = instance(T)
    policy = SWUCB(window_rule="horizon")
    ours, X, _ = our_run(inst, policy, T, 0, 0.1)
    assert first_difference(peer_arms(policy, X, align_log=False), ours) != "same"
    assert first_difference(peer_arms(policy, X, align_ties=False), ours) == "same"
    ours, X, _ = our_run(inst, policy, T, 0, "bernoulli")
    assert first_difference(peer_arms(policy, X, align_ties=False, seed=1), ours) != "same"


def test_round_robin_start_is_needed_only_below_k():
    """A window of 3 rounds with K = 5: pymab's round 5 plays arm 0 (absent from rounds 2-4), ours arm 4."""
    inst = instance(T)
    short, long = SWUCB(tau=3, xi=0.1), SWUCB(tau=40)
    ours, X, _ = our_run(inst, short, T, 0, 0.1)
    assert first_difference(peer_arms(short, X, align_start=False), ours).startswith("round 5: ours 4, peer 0")
    ours, X, _ = our_run(inst, long, T, 0, 0.1)
    assert first_difference(peer_arms(long, X, align_start=False), ours) == "same"
