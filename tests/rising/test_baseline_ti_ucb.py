"""TI-UCB (Xia et al. 2024): kernel equals reference, parameter checks, and convergence detection."""
import math

import numpy as np
import pytest

import horizonbandits.rising as R
from horizonbandits.rising.policies import POLICIES
from horizonbandits.rising.policies.ti_ucb import TIUCB
from horizonbandits.testing import assert_kernel_matches_reference

T = 2000
POLICY_CASES = [TIUCB(), TIUCB(window=40, threshold=1e-3), TIUCB(window=20, threshold=5e-3, xi=0.5),
                TIUCB(window=40, threshold=1e-3, width="mean")]


def instances():
    """Random LTF instances that saturate inside the run, and a concave pair."""
    out = [R.ltf_random(np.random.default_rng(seed), K=2 + seed, T_ref=T) for seed in range(3)]
    out.append(R.figure1(T_max=30_000))
    return out


def test_registered_under_its_display_name():
    assert POLICIES["TI-UCB"] is TIUCB
    assert TIUCB.uses_horizon is False


@pytest.mark.parametrize("policy", POLICY_CASES, ids=lambda p: p.label)
@pytest.mark.parametrize("noise", [None, 0.05, "bernoulli"])
def test_kernel_matches_reference(policy, noise):
    for seed, inst in enumerate(instances()):
        assert_kernel_matches_reference(policy, inst, T=T, n_seeds=2, seed=seed, noise=noise)


@pytest.mark.parametrize("noise", [0.0, 0.01, "bernoulli"])
def test_kernel_matches_reference_through_detections(noise):
    # Same check on runs where the detector fires, so that both phases are compared.
    policy = TIUCB(window=40, threshold=1e-3)
    fired = 0
    for seed in range(3):
        inst = R.ltf_random(np.random.default_rng(10 + seed), K=3, T_ref=T)
        assert_kernel_matches_reference(policy, inst, T=T, n_seeds=1, seed=seed, noise=noise)
        obs = R.draw_observations(inst, T, seed, 0, noise)
        fired += int(np.sum(policy.convergence_points(obs.X, T) >= 0))
    assert fired >= 2


def test_kernel_matches_reference_on_exact_ties():
    inst = R.ltf([0.001, 0.001, 0.002], [0.5, 0.5, 0.4], T_max=800, noise=0.0)
    assert_kernel_matches_reference(TIUCB(window=20, threshold=1e-4), inst, T=800, n_seeds=1)


@pytest.mark.parametrize("kwargs,name", [
    (dict(window=41), "window"), (dict(window=2), "window"), (dict(window=10.0), "window"),
    (dict(threshold=0.0), "threshold"), (dict(threshold=-1e-3), "threshold"), (dict(threshold=math.nan), "threshold"),
    (dict(xi=0.0), "xi"), (dict(xi="2"), "xi"), (dict(width="wide"), "width"),
])
def test_bad_parameters_raise_one_line_errors(kwargs, name):
    with pytest.raises(ValueError) as err:
        TIUCB(**kwargs)
    msg = str(err.value)
    assert msg.startswith(f"{name}=") and "\n" not in msg


def kinked_instance(T_max):
    """Arm 0 rises with slope 1/600 and is flat from pull 300; arm 1 rises linearly; arm 2 is flat."""
    n = np.arange(T_max + 1)
    means = np.vstack([np.minimum(0.5, n / 600), 0.1 + 1e-4 * n, np.full(T_max + 1, 0.2)])
    return R.RisingInstance(means, noise=0.0)


def first_slope_change(curve, window, threshold, n_max):
    """Independent check: first pull n at which the least-squares slopes of the two half-windows of
    curve[n-w+1..n] differ by more than the threshold (numpy's polyfit)."""
    half = window // 2
    for n in range(window, n_max + 1):
        older = np.arange(n - window + 1, n - half + 1)
        newer = np.arange(n - half + 1, n + 1)
        diff = np.polyfit(older, curve[older], 1)[0] - np.polyfit(newer, curve[newer], 1)[0]
        if abs(diff) > threshold:
            return n
    return -1


def test_detects_convergence_exactly_where_the_slopes_part():
    T_run = 3000
    inst = kinked_instance(T_run)
    policy = TIUCB(window=40, threshold=(1 / 600) / 2)
    obs = R.draw_observations(inst, T_run)
    points = policy.convergence_points(obs.X, T_run)
    pulls = np.bincount(policy.reference(obs.X, T_run), minlength=3)
    assert pulls.min() >= 40  # every arm was tested at least once
    expected = first_slope_change(inst.means[0], 40, policy.threshold, pulls[0])
    assert 300 < expected <= 340
    # The saturating arm converges exactly there; the linear and the flat arm never do.
    assert points.tolist() == [expected, -1, -1]


def test_a_threshold_above_the_slope_change_never_fires():
    T_run = 3000
    inst = kinked_instance(T_run)
    obs = R.draw_observations(inst, T_run)
    points = TIUCB(window=40, threshold=2 / 600).convergence_points(obs.X, T_run)
    assert points.tolist() == [-1, -1, -1]


def test_converged_arm_is_scored_by_its_post_detection_mean():
    T_run = 3000
    inst = kinked_instance(T_run)
    policy = TIUCB(window=40, threshold=(1 / 600) / 2)
    obs = R.draw_observations(inst, T_run)
    arms, trace = policy.reference(obs.X, T_run, trace=True)
    point = policy.convergence_points(obs.X, T_run)[0]
    pulls_of_0 = np.cumsum(arms == 0)
    # Right after the detection the arm is explored at once (infinite index) ...
    next_round = int(np.searchsorted(pulls_of_0, point)) + 1  # 0-based: the round after the detecting pull
    assert trace[next_round, 0] == math.inf and arms[next_round] == 0
    # ... and later its index is the plain mean of what it gave since, plus the UCB bonus:
    # no growth is extrapolated any more (the rewards are flat at 0.5).
    t = T_run
    n_post = pulls_of_0[t - 2] - point
    bonus = math.sqrt(policy.xi * math.log(t)) / math.sqrt(n_post)
    assert trace[t - 1, 0] == pytest.approx(0.5 + bonus, rel=1e-12)


@pytest.mark.parametrize("seed", range(2))
def test_default_detector_finds_an_ltf_kink_in_noise_and_not_a_straight_line(seed):
    # Paper scale of noise (Gaussian 0.01) and slopes (1e-4 per pull): the default window of 1000
    # pulls finds the kink at pull 5000 within one window, and raises no alarm on a straight line.
    T_run = 12_000
    n = np.arange(T_run + 1)
    kinked = R.RisingInstance(np.vstack([np.minimum(0.5, 1e-4 * n), np.full(T_run + 1, 0.1)]), noise=0.01)
    straight = R.RisingInstance(np.vstack([0.1 + 2e-5 * n, np.full(T_run + 1, 0.05)]), noise=0.01)
    policy = TIUCB()
    obs = R.draw_observations(kinked, T_run, seed=seed)
    point = policy.convergence_points(obs.X, T_run)
    assert 5000 < point[0] <= 5000 + policy.window and point[1] == -1
    obs = R.draw_observations(straight, T_run, seed=seed)
    assert policy.convergence_points(obs.X, T_run).tolist() == [-1, -1]


@pytest.mark.parametrize("n", [2, 3, 10, 500, 10_000])
def test_prediction_width_is_the_standard_deviation_of_the_least_squares_prediction(n):
    # Independent check with the design matrix: Var(prediction at x = n + 1) / sigma^2 = a (A^T A)^-1 a^T.
    from horizonbandits.rising.policies.ti_ucb import py_prediction_width
    A = np.column_stack([np.ones(n), np.arange(1, n + 1, dtype=float)])
    a = np.array([1.0, n + 1.0])
    assert py_prediction_width(n) == pytest.approx(math.sqrt(a @ np.linalg.solve(A.T @ A, a)), rel=1e-9)
    if n >= 500:
        assert py_prediction_width(n) == pytest.approx(2 / math.sqrt(n), rel=0.01)


@pytest.mark.parametrize("width", ["prediction", "mean"])
def test_traced_index_is_the_least_squares_prediction_plus_the_chosen_width(width):
    # Independent of the running sums: numpy's polyfit through the arm's rewards 1..n, read at n + 1,
    # plus sqrt(xi log t) times the width factor; the detector never fires (window longer than the run).
    from horizonbandits.rising.policies.ti_ucb import py_prediction_width
    inst = R.ltf([0.002, 0.001, 0.0005], [0.5, 0.45, 0.4], T_max=400, noise=0.05)
    obs = R.draw_observations(inst, 300, 3, 0, 0.05)
    policy = TIUCB(window=1000, xi=1.5, width=width)
    arms, trace = policy.reference(obs.X, 300, trace=True)
    checked = 0
    for t in range(2, 301):
        for i in range(3):
            n = int(np.sum(arms[: t - 1] == i))
            if n < 2:
                assert trace[t - 1, i] == math.inf
                continue
            slope, intercept = np.polyfit(np.arange(1, n + 1), obs.X[i, 1:n + 1], 1)
            c = py_prediction_width(n) if width == "prediction" else 1 / math.sqrt(n)
            assert trace[t - 1, i] == pytest.approx(intercept + slope * (n + 1) + math.sqrt(1.5 * math.log(t)) * c,
                                                    rel=1e-9, abs=1e-9)
            checked += 1
    assert checked > 500
