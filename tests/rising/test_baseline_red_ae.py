"""R-ed-AE (Amichay and Mansour 2025): kernel equals reference, parameter checks, and elimination on
linear-drift estimates that depends on the horizon."""
import math

import numpy as np
import pytest

import horizonbandits.rising as R
from horizonbandits.rising.policies import POLICIES
from horizonbandits.rising.policies.red_ae import RedAE
from horizonbandits.testing import assert_kernel_matches_reference

T = 3000
POLICY_CASES = [RedAE(), RedAE(sigma=0.05, target="horizon"), RedAE(sigma=0.002, delta=0.1), RedAE(sigma=0.0)]


def instances():
    """Random LTF instances that saturate inside the run, and a concave pair."""
    out = [R.ltf_random(np.random.default_rng(seed), K=2 + seed, T_ref=T) for seed in range(3)]
    out.append(R.figure1(T_max=30_000))
    return out


def test_registered_under_its_display_name():
    assert POLICIES["R-ed-AE"] is RedAE
    assert RedAE.uses_horizon is True


@pytest.mark.parametrize("policy", POLICY_CASES, ids=lambda p: p.label)
@pytest.mark.parametrize("noise", [None, 0.05, "bernoulli"])
def test_kernel_matches_reference(policy, noise):
    eliminated = 0
    for seed, inst in enumerate(instances()):
        assert_kernel_matches_reference(policy, inst, T=T, n_seeds=2, seed=seed, noise=noise)
        obs = R.draw_observations(inst, T, seed, 0, noise)
        eliminated += int(np.sum(policy.elimination_rounds(obs.X, T) >= 0))
    assert eliminated >= 1  # the runs compared do go through eliminations


def test_rounds_after_the_last_elimination_are_counted_as_pulls_of_the_survivor():
    # A small sigma commits early; the kernel then skips the rounds left. Its pull counts at every
    # checkpoint (read without the arms) must be those of the reference's arms.
    inst = R.ltf_random(np.random.default_rng(5), K=4, T_ref=T)
    policy = RedAE(sigma=0.002)
    obs = R.draw_observations(inst, T, 0, 0)
    arms = policy.reference(obs.X, T)
    assert np.all(arms[-T // 2:] == arms[-1])  # committed for at least the second half
    checkpoints = np.array([1, 7, T // 3, T - 1, T], dtype=np.int64)
    counts = policy.run_kernel(R.reward_source(inst, 0, 0), T, checkpoints, np.empty(0, dtype=np.int64))
    for row, cp in zip(counts, checkpoints):
        assert np.array_equal(row, np.bincount(arms[:cp], minlength=inst.K))


def test_kernel_matches_reference_on_exact_ties():
    # Identical arms tie at every test: the lowest index leads and nothing is eliminated.
    inst = R.ltf([0.001, 0.001, 0.002], [0.5, 0.5, 0.4], T_max=900, noise=0.0)
    assert_kernel_matches_reference(RedAE(sigma=0.0), inst, T=900, n_seeds=1)


@pytest.mark.parametrize("kwargs,name", [
    (dict(sigma=-0.1), "sigma"), (dict(sigma=math.inf), "sigma"),
    (dict(delta=0.0), "delta"), (dict(delta=1.0), "delta"), (dict(delta="0.1"), "delta"),
    (dict(target="final"), "target"),
])
def test_bad_parameters_raise_one_line_errors(kwargs, name):
    with pytest.raises(ValueError) as err:
        RedAE(**kwargs)
    msg = str(err.value)
    assert msg.startswith(f"{name}=") and "\n" not in msg


def drift_against_flat(T_max):
    """Arm 0 starts low and drifts up linearly (0.2 + 2e-4 n); arm 1 is flat at 0.5."""
    n = np.arange(T_max + 1)
    return R.RisingInstance(np.vstack([0.2 + 2e-4 * n, np.full(T_max + 1, 0.5)]), noise=0.0)


def expected_elimination(means, T, sigma):
    """Independent check with numpy's polyfit: the first sweep end t = 2m at which the two arms'
    extrapolated per-round values for the remaining T - t rounds differ by more than twice the
    radius; returns (t, loser)."""
    log_term = math.log(2 * 2 * T * T)  # delta = 1/T, K = 2
    for m in range(2, T // 2):
        t = 2 * m
        x_star = m + (T - t + 1) / 2
        x = np.arange(1, m + 1)
        values = [np.polyval(np.polyfit(x, means[i, 1:m + 1], 1), x_star) for i in range(2)]
        sxx = np.sum((x - x.mean()) ** 2)
        radius = sigma * math.sqrt(2 * (1 / m + (x_star - x.mean()) ** 2 / sxx) * log_term)
        if abs(values[0] - values[1]) > 2 * radius:
            return t, int(np.argmin(values))
    return -1, -1


@pytest.mark.parametrize("T_run,optimal,loser", [(5000, 0, 1), (1000, 1, 0)])
def test_eliminates_on_extrapolated_drift_and_the_verdict_depends_on_the_horizon(T_run, optimal, loser):
    # Over 5000 rounds the drifting arm is worth more than the flat one although it looks worse at
    # first; over 1000 rounds it is not. R-ed-AE removes the flat arm in the first case and the
    # drifting arm in the second, at the sweep an independent computation predicts.
    inst = drift_against_flat(T_run)
    assert R.optimal_arm(inst, T_run) == optimal
    policy = RedAE(sigma=0.01)  # a small noise scale, so that the elimination happens inside the run
    obs = R.draw_observations(inst, T_run)
    t_expected, loser_expected = expected_elimination(inst.means, T_run, policy.sigma)
    assert loser_expected == loser and 0 < t_expected < T_run
    rounds = policy.elimination_rounds(obs.X, T_run)
    assert rounds[loser] == t_expected and rounds[optimal] == -1
    arms = policy.reference(obs.X, T_run)
    # Round-robin sweeps until the elimination, then only the survivor.
    assert np.array_equal(arms[:t_expected], np.arange(t_expected) % 2)
    assert np.all(arms[t_expected:] == optimal)
    res = R.simulate(inst, policy, T_run)
    assert res.pulls[0, loser] == t_expected // 2


def test_flat_arms_are_not_eliminated_by_a_mean_test():
    # A drift estimate, not a mean: arm 0's current rewards are lower all along the elimination
    # sweeps (0.2 + 2e-4 n < 0.5 for n < 1500), yet it is the one kept over a long horizon.
    T_run = 5000
    inst = drift_against_flat(T_run)
    rounds = RedAE(sigma=0.01).elimination_rounds(R.draw_observations(inst, T_run).X, T_run)
    t_elim = int(rounds[1])
    assert inst.means[0, t_elim // 2] < inst.means[1, t_elim // 2]


def test_horizon_target_extrapolates_to_the_middle_of_the_horizon():
    # target="horizon" values b + L (T + 1)/2 whatever the round. The remaining-horizon target uses
    # x* = m + (T - K m + 1)/2, the same point when K = 2 arms share the sweeps, and a nearer one
    # for K = 3, where the drifting arm's lead therefore shows later.
    T_run = 5000
    obs = R.draw_observations(drift_against_flat(T_run), T_run)
    assert np.array_equal(RedAE(sigma=0.01).elimination_rounds(obs.X, T_run),
                          RedAE(sigma=0.01, target="horizon").elimination_rounds(obs.X, T_run))
    arms, trace = RedAE(sigma=0.01, target="horizon").reference(obs.X, T_run, trace=True)
    row = trace[3]  # end of the second sweep (m = 2): values at x* = (T + 1)/2
    assert row[0] == pytest.approx(0.2 + 2e-4 * (T_run + 1) / 2, rel=1e-9)
    assert row[1] == pytest.approx(0.5, rel=1e-9)
    n = np.arange(T_run + 1)
    three = R.RisingInstance(np.vstack([0.2 + 2e-4 * n, np.full(T_run + 1, 0.5), np.full(T_run + 1, 0.45)]),
                             noise=0.0)
    obs = R.draw_observations(three, T_run)
    remaining = RedAE(sigma=0.01).elimination_rounds(obs.X, T_run)
    whole = RedAE(sigma=0.01, target="horizon").elimination_rounds(obs.X, T_run)
    assert remaining[0] == whole[0] == -1
    assert np.all(whole[1:] > 0) and np.all(whole[1:] < remaining[1:])


def test_default_noise_scale_is_that_of_rewards_in_the_unit_interval():
    # Amichay and Mansour state R-ed-AE for rewards in [0, 1] (1/2-sub-Gaussian); it takes no noise level.
    assert RedAE().sigma == 0.5 and RedAE.takes_noise_scale is False
