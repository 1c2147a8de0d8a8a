"""TI-UCB (Xia et al. 2024): kernel equals reference, parameter checks, and convergence detection."""
import math

import numpy as np
import pytest

import horizonbandits.rising as R
from horizonbandits.rising.policies import POLICIES
from horizonbandits.rising.policies.ti_ucb import TIUCB
from horizonbandits.testing import assert_kernel_matches_reference

T = 2000
FIXED = dict(threshold_rule="fixed")
POLICY_CASES = [TIUCB(), TIUCB(threshold_rule="fixed"), TIUCB(window=40), TIUCB(window=20, z=3.0, xi=0.5),
                TIUCB(window=40, z=2.0, width="mean"),
                TIUCB(window=40, threshold=1e-3, **FIXED), TIUCB(window=20, threshold=5e-3, xi=0.5, **FIXED),
                TIUCB(window=40, threshold=1e-3, width="mean", **FIXED)]


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


@pytest.mark.parametrize("policy", [TIUCB(window=40, threshold=1e-3, **FIXED), TIUCB(window=40, z=3.0)],
                         ids=lambda p: p.threshold_rule)
@pytest.mark.parametrize("noise", [0.0, 0.01, "bernoulli"])
def test_kernel_matches_reference_through_detections(policy, noise):
    # Same check on runs where the detector fires, so that both phases are compared.
    fired = 0
    for seed in range(3):
        inst = R.ltf_random(np.random.default_rng(10 + seed), K=3, T_ref=T)
        assert_kernel_matches_reference(policy, inst, T=T, n_seeds=1, seed=seed, noise=noise)
        obs = R.draw_observations(inst, T, seed, 0, noise)
        fired += int(np.sum(policy.convergence_points(obs.X, T) >= 0))
    assert fired >= 2


@pytest.mark.parametrize("rule", ["estimated", "fixed"])
def test_kernel_matches_reference_on_exact_ties(rule):
    inst = R.ltf([0.001, 0.001, 0.002], [0.5, 0.5, 0.4], T_max=800, noise=0.0)
    assert_kernel_matches_reference(TIUCB(window=20, threshold=1e-4, threshold_rule=rule), inst, T=800, n_seeds=1)


@pytest.mark.parametrize("noise", [0.01, "bernoulli"])
def test_kernel_matches_reference_at_the_default_window_on_long_runs(noise):
    # The running sums of squares are updated some 10^4 times per arm here: kernel and reference must
    # still round them identically (the estimated threshold is compared with the slope difference at
    # every check).
    for seed in range(2):
        inst = R.ltf_random(np.random.default_rng(20 + seed), K=3, T_ref=30_000)
        for policy in (TIUCB(), TIUCB(z=2.0), TIUCB(**FIXED)):
            assert_kernel_matches_reference(policy, inst, T=30_000, n_seeds=1, seed=seed, noise=noise)


@pytest.mark.parametrize("kwargs,name", [
    (dict(window=41), "window"), (dict(window=2), "window"), (dict(window=10.0), "window"),
    (dict(threshold=0.0), "threshold"), (dict(threshold=-1e-3), "threshold"), (dict(threshold=math.nan), "threshold"),
    (dict(xi=0.0), "xi"), (dict(xi="2"), "xi"), (dict(width="wide"), "width"),
    (dict(threshold_rule="estimate"), "threshold_rule"), (dict(threshold_rule=None), "threshold_rule"),
    (dict(z=0.0), "z"), (dict(z=-1.0), "z"), (dict(z=math.inf), "z"), (dict(z="4.5"), "z"),
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
    policy = TIUCB(window=40, threshold=(1 / 600) / 2, **FIXED)
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
    points = TIUCB(window=40, threshold=2 / 600, **FIXED).convergence_points(obs.X, T_run)
    assert points.tolist() == [-1, -1, -1]


def test_converged_arm_is_scored_by_its_post_detection_mean():
    T_run = 3000
    inst = kinked_instance(T_run)
    policy = TIUCB(window=40, threshold=(1 / 600) / 2, **FIXED)
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


@pytest.mark.parametrize("rule", ["estimated", "fixed"])
@pytest.mark.parametrize("seed", range(2))
def test_default_detector_finds_an_ltf_kink_in_noise_and_not_a_straight_line(seed, rule):
    # Paper scale of noise (Gaussian 0.01) and slopes (1e-4 per pull): the default window of 1000
    # pulls finds the kink at pull 5000 within one window, and raises no alarm on a straight line,
    # under both rules (the fixed 2e-5 is 4.5 standard deviations at this noise level).
    T_run = 12_000
    n = np.arange(T_run + 1)
    kinked = R.RisingInstance(np.vstack([np.minimum(0.5, 1e-4 * n), np.full(T_run + 1, 0.1)]), noise=0.01)
    straight = R.RisingInstance(np.vstack([0.1 + 2e-5 * n, np.full(T_run + 1, 0.05)]), noise=0.01)
    policy = TIUCB(threshold_rule=rule)
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


# Estimated threshold (threshold_rule="estimated", the default).

def independent_threshold(x, z):
    """z sigma_hat sd(slope difference) of one window of rewards x (pull order), from numpy's polyfit residuals
    and the design's own S_xx: sigma_hat^2 = RSS / (w - 4), Var(difference) = 2 sigma^2 / S_xx."""
    w = x.size
    half = w // 2
    rss = 0.0
    for part in (np.arange(half), np.arange(half, w)):
        coef = np.polyfit(part, x[part], 1)
        rss += float(np.sum((x[part] - np.polyval(coef, part)) ** 2))
    sxx = float(np.sum((np.arange(half) - (half - 1) / 2) ** 2))
    return z * math.sqrt(rss / (w - 4)) * math.sqrt(2 / sxx)


def slope_difference(x):
    half = x.size // 2
    return np.polyfit(np.arange(half), x[:half], 1)[0] - np.polyfit(np.arange(half), x[half:], 1)[0]


@pytest.mark.parametrize("window,z", [(1000, 4.5), (40, 3.0), (20, 1.0)])
@pytest.mark.parametrize("noise", [0.01, "bernoulli"])
def test_detection_threshold_is_z_standard_deviations_of_the_slope_difference(window, z, noise):
    inst = R.ltf_random(np.random.default_rng(3), K=2, T_ref=3000)
    obs = R.draw_observations(inst, 3000, 1, 0, noise)
    policy = TIUCB(window=window, z=z)
    for start in (1, 777, 3000 - window + 1):
        x = obs.X[0, start:start + window]
        assert policy.detection_threshold(x) == pytest.approx(independent_threshold(x, z), rel=1e-7)
        assert policy.noise_estimate(x) == pytest.approx(independent_threshold(x, 1.0) / math.sqrt(
            24 / (window // 2 * ((window // 2) ** 2 - 1))), rel=1e-7)
        assert TIUCB(window=window, threshold=3e-4, **FIXED).detection_threshold(x) == 3e-4


def test_the_old_constant_is_four_and_a_half_standard_deviations_at_noise_0_01():
    from horizonbandits.rising.policies.ti_ucb import py_slope_difference_sd
    assert 2e-5 / (0.01 * py_slope_difference_sd(500)) == pytest.approx(4.56, abs=0.01)
    assert TIUCB().z == 4.5 and TIUCB().threshold_rule == "estimated" and TIUCB().threshold == 2e-5


def first_estimated_detection(x, window, z, n_max, floor=0.0):
    """Independent check of the detection pull under the estimated rule: first n at which the two
    half-window slopes of the arm's rewards x[n-w+1..n] differ by more than independent_threshold
    (and than ``floor``, for noise-free rewards, where polyfit's own rounding differs from the policy's)."""
    for n in range(window, n_max + 1):
        win = x[n - window + 1:n + 1]
        if abs(slope_difference(win)) > max(independent_threshold(win, z), floor):
            return n
    return -1


@pytest.mark.parametrize("noise,window,z", [(0.01, 1000, 4.5), (0.05, 200, 3.0), ("bernoulli", 200, 2.0)])
def test_estimated_detection_pull_is_where_the_formula_first_fires(noise, window, z):
    # The run's detection pulls, from the running sums of squares, against a scan of every window with
    # polyfit: a different constant than 24 in the slope-difference deviation, or a different z, or a
    # drifting running sum of squares, moves the detection pull (or it would fire nowhere).
    T_run = 12_000
    n = np.arange(T_run + 1)
    inst = R.RisingInstance(np.vstack([np.minimum(0.6, 0.1 + 1e-4 * n), np.full(T_run + 1, 0.3)]), noise=0.01)
    policy = TIUCB(window=window, z=z)
    obs = R.draw_observations(inst, T_run, 0, 0, noise)
    points = policy.convergence_points(obs.X, T_run)
    pulls = np.bincount(policy.reference(obs.X, T_run), minlength=2)
    assert points[0] > 0
    for i in range(2):
        n_max = points[i] if points[i] > 0 else pulls[i]
        assert first_estimated_detection(obs.X[i], window, z, n_max) == points[i]


def test_noise_free_line_never_fires_and_any_slope_change_does():
    # sigma_hat is 0 up to rounding on an exact line: the estimated threshold fires on any slope change
    # (the kinked arm, as soon as its newer half holds a flat reward) and never on a straight line
    # (rounding of the running sums stays below the threshold's floor).
    T_run = 3000
    n = np.arange(T_run + 1)
    inst = R.RisingInstance(np.vstack([np.minimum(0.5, n / 600), 0.1 + 1e-4 * n, 0.2 + 2e-5 * n,
                                       np.full(T_run + 1, 0.3)]), noise=0.0)
    policy = TIUCB(window=40)
    obs = R.draw_observations(inst, T_run)
    pulls = np.bincount(policy.reference(obs.X, T_run), minlength=4)
    assert pulls.min() >= 40
    points = policy.convergence_points(obs.X, T_run)
    assert points.tolist() == [first_estimated_detection(obs.X[0], 40, policy.z, pulls[0], 1e-12), -1, -1, -1]
    assert 300 < points[0] <= 320
    assert_kernel_matches_reference(policy, inst, T=T_run, n_seeds=1)


@pytest.mark.parametrize("seed", range(3))
def test_noise_estimate_on_pure_gaussian_noise_and_false_alarms(seed):
    # Constant mean, Gaussian noise sigma: sigma_hat over a window of 1000 is within 10 % of sigma,
    # whatever sigma, and the default detector raises no alarm in 20,000 rounds.
    T_run = 20_000
    for sigma in (0.01, 0.2):
        inst = R.RisingInstance(np.vstack([np.full(T_run + 1, 0.5), np.full(T_run + 1, 0.4)]), noise=sigma)
        obs = R.draw_observations(inst, T_run, seed)
        for start in (1, 5001):
            assert TIUCB().noise_estimate(obs.X[0, start:start + 1000]) == pytest.approx(sigma, rel=0.1)
        assert TIUCB().convergence_points(obs.X, T_run).tolist() == [-1, -1]


def test_bernoulli_flat_arm_does_not_fire_at_the_first_check_where_the_fixed_constant_does():
    # The IMDB failure mode: 0/1 rewards of a flat arm at p = 0.5 (sigma 0.5). The fixed 2e-5 is under
    # 0.1 standard deviations (2.2e-4) of the slope difference, so it fires at the first check unless
    # the difference happens to fall within 0.09 standard deviations of 0 (7 % of windows); the
    # estimated threshold is 4.5 of them (about 1e-3) and never fires on this flat arm.
    T_run = 6000
    inst = R.RisingInstance(np.full((2, T_run + 1), 0.5), noise=0.0)
    estimated, fixed = TIUCB(), TIUCB(**FIXED)
    fixed_at_first_check = 0
    for seed in range(8):
        obs = R.draw_observations(inst, T_run, seed, 0, "bernoulli")
        first = obs.X[0, 1:1001]
        assert estimated.noise_estimate(first) == pytest.approx(0.5, rel=0.05)
        assert estimated.detection_threshold(first) == pytest.approx(4.5 * 0.5 * 4.38e-4, rel=0.05)
        assert abs(slope_difference(first)) < estimated.detection_threshold(first)
        fires = abs(slope_difference(first)) > fixed.detection_threshold(first)
        assert (fixed.convergence_points(obs.X, T_run)[0] == 1000) == fires
        fixed_at_first_check += fires
        assert estimated.convergence_points(obs.X, T_run).tolist() == [-1, -1]
    assert fixed_at_first_check >= 6
