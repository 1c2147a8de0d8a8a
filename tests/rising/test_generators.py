"""The concave instance generator of appendix B.1.2: roles, shapes, calibration, reproducibility."""
import numpy as np
import pytest

from horizonbandits.rising.generators import (FAMILIES, calibrate_rate, concave_arm_specs, concave_instance,
                                              concave_random, growth_shape)
from horizonbandits.rising.oracle import optimal_arm

H = 100_000


@pytest.fixture(scope="module")
def drawn():
    """30 random instances with their arm specifications."""
    rng = np.random.default_rng(2026)
    out = []
    for _ in range(30):
        arms = concave_arm_specs(rng, H=H)
        out.append((arms, concave_instance(arms, H=H)))
    return out


@pytest.mark.parametrize("family", FAMILIES)
def test_shapes_are_normalised_concave_and_calibrated(family):
    n = np.arange(H + 1, dtype=float)
    for checkpoint in (2_000.0, 14_000.0, 60_000.0):
        k = calibrate_rate(family, checkpoint, H, share=0.85)
        g = growth_shape(family, k, H, n)
        assert g[0] == 0.0 and g[-1] == pytest.approx(1.0, abs=1e-12)
        assert growth_shape(family, k, H, checkpoint) == pytest.approx(0.85, abs=1e-9)
        d = np.diff(g)
        assert d.min() >= 0.0 and np.diff(d).max() <= 1e-15


def test_calibration_rejects_unreachable_checkpoint():
    # A concave shape through (0, 0) and (H, 1) lies above the chord, so g(0.9 H) >= 0.9 > 0.85.
    with pytest.raises(ValueError, match="checkpoint"):
        calibrate_rate("exponential", 0.9 * H, H, share=0.85)


def test_reproducible_from_rng_and_varies_with_it():
    a = concave_random(np.random.default_rng(7))
    b = concave_random(np.random.default_rng(7))
    c = concave_random(np.random.default_rng(8))
    assert a.names == b.names and np.array_equal(a.means, b.means)
    assert a.means.shape != c.means.shape or not np.array_equal(a.means, c.means)


def test_roles_counts_and_random_order(drawn):
    Ks, bloomer_positions = set(), set()
    for arms, inst in drawn:
        K = inst.K
        Ks.add(K)
        roles = [a.role for a in arms]
        assert 3 <= K <= 15
        assert roles.count("late bloomer") == 1 and roles.count("early peaker") == 1
        assert roles.count("challenger") == K // 2
        assert roles.count("distractor") == K - 2 - K // 2
        bloomer_positions.add(roles.index("late bloomer"))
    assert len(Ks) > 4                 # K is drawn, not fixed
    assert len(bloomer_positions) > 3  # the optimal arm is not identified by its index


def test_every_curve_is_nondecreasing_concave_and_hits_s_and_L(drawn):
    for arms, inst in drawn:
        d = np.diff(inst.means, axis=1)
        assert d.min() >= 0.0
        assert np.diff(d, axis=1).max() <= 1e-12
        for i, arm in enumerate(arms):
            assert inst.means[i, 0] == pytest.approx(arm.s, abs=1e-12)
            assert inst.means[i, H] == pytest.approx(arm.L, abs=1e-12)


def test_stated_parameter_ranges(drawn):
    for arms, _ in drawn:
        for a in arms:
            if a.role == "late bloomer":
                assert (a.s, a.L, a.family, a.k) == (0.10, 0.95, "exponential", 4 / 30_000)
            elif a.role == "early peaker":
                assert 0.40 <= a.s <= 0.58 and a.s < a.L <= 0.60
            elif a.role == "challenger":
                assert 0.08 <= a.s <= 0.12 and 0.85 <= a.L <= 0.90 and 0 < a.blend < 1
            else:
                assert 0.05 <= a.s <= 0.50 and a.s < a.L <= 0.70
            if a.checkpoint is not None:
                ratio = a.k / calibrate_rate(a.family, a.checkpoint, H, 0.85)
                assert 0.95 <= ratio <= 1.05  # the +-5 % perturbation of the calibrated rate


def test_late_bloomer_optimal_at_long_horizons_early_peaker_better_at_short(drawn):
    for _, inst in drawn:
        lb, ep = inst.names.index("late bloomer"), inst.names.index("early peaker")
        for T in (30_000, 50_000, 100_000):
            assert optimal_arm(inst, T) == lb
        for T in (100, 1_000, 2_500, 5_000):
            c = inst.cumulative(T)
            assert c[ep] > c[lb]


def test_challengers_shadow_the_late_bloomer_from_below(drawn):
    for _, inst in drawn:
        lb = inst.names.index("late bloomer")
        for i, name in enumerate(inst.names):
            if name.startswith("challenger"):
                # Below the late bloomer once it has risen a little (the appendix's start range
                # [0.08, 0.12] straddles the late bloomer's 0.10), close to it at the end.
                assert np.all(inst.means[i, 2_600:] < inst.means[lb, 2_600:])
                assert inst.means[lb, H] - inst.means[i, H] <= 0.10 + 1e-12


def test_challengers_below_everywhere_when_starting_below():
    rng = np.random.default_rng(3)
    for _ in range(10):
        inst = concave_random(rng, K=8, challenger_start=(0.08, 0.10))
        lb = inst.names.index("late bloomer")
        for i, name in enumerate(inst.names):
            if name.startswith("challenger"):
                assert np.all(inst.means[i, 1:] < inst.means[lb, 1:])


def late_bloomer_point(arms):
    return next(a for a in arms if a.role == "late bloomer").share_point(H, 0.85)


def test_share_point_inverts_the_shape():
    arms = concave_arm_specs(np.random.default_rng(5), K=9, H=H)
    for a in arms:
        n = a.share_point(H, 0.85)
        assert a.shape(n, H) == pytest.approx(0.85, abs=1e-6)
    # the late bloomer's 85 % point in closed form: 1 - exp(-k n) = 0.85 (1 - exp(-k H))
    k = 4 / 30_000
    assert late_bloomer_point(arms) == pytest.approx(-np.log(1 - 0.85 * (1 - np.exp(-k * H))) / k, rel=1e-6)


def test_every_competitor_reaches_its_85_percent_point_no_earlier_than_the_late_bloomer():
    # Appendix B.1.2: the late bloomer "rises faster than its competitors"; the early peaker is the exception.
    # Checked on 300 instances drawn from the default options, at the paper's H and at a smoke-sized H.
    rng = np.random.default_rng(15)
    counts = {"challenger": 0, "distractor": 0}
    for j in range(300):
        h = H if j % 2 else 5_000
        arms = concave_arm_specs(rng, H=h)
        lb = next(a for a in arms if a.role == "late bloomer")
        n_lb = lb.share_point(h, 0.85)
        assert 0.14 * h < n_lb < 0.145 * h
        for a in arms:
            if a.role in counts:
                counts[a.role] += 1
                assert a.shape(n_lb, h) <= 0.85 + 1e-12, (j, a)
                assert a.share_point(h, 0.85) >= n_lb * (1 - 1e-6), (j, a)
    assert min(counts.values()) > 300


def test_the_earlier_reading_lets_distractors_finish_first():
    # The test above can fail: the earlier reading (distractor checkpoints from 0.05 H, no redraw)
    # gives distractors that complete 85 % of their rise before the late bloomer does.
    rng = np.random.default_rng(15)
    early = 0
    for _ in range(100):
        arms = concave_arm_specs(rng, H=H, distractor_checkpoint=(0.05, 0.8), bloomer_rises_fastest=False)
        n_lb = late_bloomer_point(arms)
        early += sum(a.role == "distractor" and a.shape(n_lb, H) > 0.85 for a in arms)
    assert early > 0


def test_T_max_and_noise_are_passed_through():
    inst = concave_random(np.random.default_rng(1), K=4, H=20_000, T_max=25_000, noise=0.05)
    assert inst.T_max == 25_000 and inst.noise == 0.05 and inst.K == 4


def test_shapes_scale_with_H():
    # The late bloomer's rate scales as 1/H, so its curve at n = x H is the same for every H.
    small = concave_arm_specs(np.random.default_rng(1), K=3, H=5_000)
    big = concave_arm_specs(np.random.default_rng(1), K=3, H=100_000)
    lb_small = next(a for a in small if a.role == "late bloomer")
    lb_big = next(a for a in big if a.role == "late bloomer")
    assert lb_small.k * 5_000 == pytest.approx(lb_big.k * 100_000)
    assert lb_small.curve(5_000, 5_000)[2_500] == pytest.approx(lb_big.curve(100_000, 100_000)[50_000])


@pytest.mark.parametrize("kwargs, match", [
    ({"K": 2}, "K=2"),
    ({"H": 10}, "H=10"),
    ({"challenger_start": (0.2, 0.1)}, "challenger_start"),
    ({"peaker_checkpoint": (0.5, 0.9)}, "peaker_checkpoint"),
    ({"share": 1.5}, "share"),
    ({"perturbation": -0.1}, "perturbation"),
    ({"distractor_checkpoint": (0.01, 0.02), "max_redraws": 5}, "max_redraws"),
])
def test_bad_parameters_raise_one_line_errors(kwargs, match):
    with pytest.raises(ValueError, match=match) as err:
        concave_random(np.random.default_rng(0), **kwargs)
    assert "\n" not in str(err.value)


def test_rng_must_be_a_generator():
    with pytest.raises(ValueError, match="rng="):
        concave_random(0)


def test_unconstrained_concave_arms_are_drawn_alike_and_within_bounds():
    from horizonbandits.rising.generators import concave_unconstrained
    for j in range(20):
        inst = concave_unconstrained(np.random.default_rng(j), H=2_000)
        assert 3 <= inst.K <= 15 and list(inst.names) == [f"arm {i}" for i in range(inst.K)]
        assert (np.diff(inst.means, axis=1) >= -1e-12).all() and inst.means.min() >= 0 and inst.means.max() <= 1 + 1e-12
    assert concave_unconstrained(np.random.default_rng(0), K=4, H=2_000).K == 4
    with pytest.raises(ValueError, match="^rng="):
        concave_unconstrained(0)
