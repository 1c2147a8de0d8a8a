"""Rexp3 against pymab's plain-Python EXP3Policy restarted by the driver every Delta rounds, its arm draws
made with our policy's uniforms and the rewards clipped to [0, 1] (``pymab_adapter``): the same arm in
every round. Without the restarts the two agree up to the first restart and then part; with numpy's
uniforms they part at once."""
import numpy as np
import pytest

pytest.importorskip("pymab", reason="pymab (an independent implementation, in the dev extras) does not import")

import pymab_adapter as A  # noqa: E402
from peer_cases import first_difference, instance, our_run  # noqa: E402
from pymab._reference.policies.adversarial import EXP3Policy  # noqa: E402

from horizonbandits.rising.policies.rexp3 import Rexp3  # noqa: E402

T = 2000
K = 5


def peer_arms(policy, X, stream_seed, **conventions):
    return A.pymab_rexp3(X, T, gamma=policy.exploration(K), batch=policy.batch_size(K), stream_seed=stream_seed,
                         **conventions)


@pytest.mark.parametrize("policy", [Rexp3(), Rexp3(batch=37, gamma=0.3), Rexp3(batch=10 * T, gamma=0.9)], ids=repr)
@pytest.mark.parametrize("noise", [0.1, "bernoulli"])
def test_same_arm_in_every_round_once_aligned(policy, noise):
    inst = instance(T, K)
    for s in range(3):
        ours, X, stream = our_run(inst, policy, T, s, noise)
        assert first_difference(peer_arms(policy, X, stream), ours) == "same", f"seed index {s}"


def test_each_alignment_is_needed():
    inst = instance(T, K)
    policy = Rexp3()  # Delta = 201 at K = 5
    batch = policy.batch_size(K)
    ours, X, stream = our_run(inst, policy, T, 0, 0.1)
    unrestarted = peer_arms(policy, X, stream, align_restarts=False)
    parted = np.flatnonzero(unrestarted != ours)
    assert parted.size > 0 and parted[0] >= batch  # identical through the first batch, then apart
    numpy_draws = peer_arms(policy, X, stream, align_draws=False)
    assert (numpy_draws != ours).mean() > 0.5
    with pytest.raises(ValueError, match="reward"):  # pymab refuses the unclipped Gaussian rewards
        A.serve(EXP3Policy(n_arms=K, gamma=policy.exploration(K)), X, T, A.OurStream(stream))
