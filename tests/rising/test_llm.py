"""The reward pipeline of appendix B.2, one step at a time on hand-made inputs, then end to end;
the CSV input; and the illustrative example file."""
import numpy as np
import pandas as pd
import pytest

from horizonbandits.rising import llm as L
from horizonbandits.rising import optimal_arm


def test_moving_average_modes():
    x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    np.testing.assert_allclose(L.moving_average(x, 5, "trailing"), [1, 1.5, 2, 2.5, 3, 4])
    np.testing.assert_allclose(L.moving_average(x, 5, "centered"), [2, 2.5, 3, 4, 4.5, 5])
    np.testing.assert_allclose(L.moving_average(x, 5, "valid"), [3, 4])
    np.testing.assert_allclose(L.moving_average(x, 1, "trailing"), x)
    with pytest.raises(ValueError, match="smoothing="):
        L.moving_average(x, 5, "gaussian")
    with pytest.raises(ValueError, match="window=7"):
        L.moving_average(x, 7, "valid")


def test_cost_penalty_and_peak_cap():
    np.testing.assert_allclose(L.cost_penalty([1.0, 1.0, 1.0], 0.1, [1, 2, 3]), [0.9, 0.8, 0.7])
    capped, peak = L.peak_cap([0.1, 0.5, 0.3, 0.6, 0.2, 0.4])
    assert peak == 3
    np.testing.assert_allclose(capped, [0.1, 0.5, 0.3, 0.6, 0.6, 0.6])  # values before the peak untouched
    capped, peak = L.peak_cap([0.2, 0.7, 0.7, 0.1])
    assert peak == 1  # the first maximum
    np.testing.assert_allclose(capped, [0.2, 0.7, 0.7, 0.7])


def test_fixed_perturbation_is_drawn_once_from_the_seed():
    a = L.fixed_perturbation([3, 2], sd=0.005, seed=4)
    b = L.fixed_perturbation([3, 2], sd=0.005, seed=4)
    assert [x.size for x in a] == [3, 2]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    z = np.random.default_rng(np.random.SeedSequence(4)).normal(0.0, 1.0, 5)
    np.testing.assert_allclose(np.concatenate(a), 0.005 * z)  # arm after arm, checkpoint after checkpoint
    big = np.concatenate(L.fixed_perturbation([20_000], sd=0.005, seed=1))
    assert abs(big.std() - 0.005) < 0.0002 and abs(big.mean()) < 0.0001
    assert all(np.all(x == 0) for x in L.fixed_perturbation([4, 4], sd=0.0))


def test_zero_clip_and_global_rescaling():
    np.testing.assert_array_equal(L.zero_clip([-0.2, 0.0, 0.3]), [0.0, 0.0, 0.3])
    scaled, lo, hi = L.global_minmax([np.array([0.2, 0.4]), np.array([0.3, 0.6, 0.5])])
    assert (lo, hi) == (0.2, 0.6)
    np.testing.assert_allclose(scaled[0], [0.0, 0.5])
    np.testing.assert_allclose(scaled[1], [0.25, 1.0, 0.75])  # one scale for all arms: order kept
    with pytest.raises(ValueError, match="max > min"):
        L.global_minmax([np.array([0.3, 0.3]), np.array([0.3])])


def test_replay_table_and_means():
    # checkpoints at steps 10 and 20 of 20 on a 5-point grid sit at positions 2 and 4
    table = L.replay_table([0.0, 1.0], [10, 20], max_step=20, length=5)
    np.testing.assert_allclose(table, [0.0, 0.0, 0.0, 0.5, 1.0])  # first value held before the range
    means = L.replay_means(table, T_max=8)
    # the n-th pull has local count N = n - 1 and reads table[N]; the last value is held
    np.testing.assert_allclose(means, [0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 1.0, 1.0, 1.0])
    # two pulls per table entry: count N reads the table at N / 2, between entries by interpolation
    stretched = L.replay_means(table, T_max=10, pulls_per_entry=2.0)
    np.testing.assert_allclose(stretched, [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.0])


def _hand_trajectories():
    return pd.DataFrame({
        "arm": ["big"] * 4 + ["flat"] * 4,
        "step": [100, 200, 300, 400, 100, 200, 300, 400],
        "score": [0.2, 0.5, 0.6, 0.62, 0.5, 0.5, 0.5, 0.5],
    })


def test_pipeline_end_to_end_by_hand():
    r = L.llm_rewards(_hand_trajectories(), {"big": 0.05, "flat": 0.0}, window=1, perturbation_sd=0.0, length=9)
    # net = score - m t with t = 1..4: big 0.15, 0.40, 0.45, 0.42 -> capped at t* = 3
    np.testing.assert_allclose(r.net[0], [0.15, 0.40, 0.45, 0.42])
    assert r.peak.tolist() == [2, 0]
    np.testing.assert_allclose(r.capped[0], [0.15, 0.40, 0.45, 0.45])
    # global rescaling over both arms: min 0.15, max 0.5
    assert (r.lo, r.hi) == pytest.approx((0.15, 0.5))
    np.testing.assert_allclose(r.rewards[0], (np.array([0.15, 0.40, 0.45, 0.45]) - 0.15) / 0.35)
    np.testing.assert_allclose(r.rewards[1], 1.0)
    # steps 100..400 of 400 on a 9-point grid: positions 2, 4, 6, 8
    np.testing.assert_allclose(r.table[0, [0, 2, 3, 4, 8]], [0.0, 0.0, 0.5 * 0.25 / 0.35, 0.25 / 0.35, 0.3 / 0.35])
    inst = r.instance(T_max=20, sigma_obs=0.02)
    assert inst.names == ("big", "flat") and inst.noise == 0.02 and inst.T_max == 20
    np.testing.assert_allclose(inst.means[0, 1:10], r.table[0])
    assert np.all(inst.means[0, 10:] == r.table[0, -1])


def test_pipeline_smoothing_perturbation_and_cost_index():
    df = _hand_trajectories()
    costs = {"big": 0.01, "flat": 0.0}
    base = L.llm_rewards(df, costs, window=2, perturbation_sd=0.0)
    np.testing.assert_allclose(base.smoothed[0], [0.2, 0.35, 0.55, 0.61])
    noisy = L.llm_rewards(df, costs, window=2, perturbation_sd=0.005, seed=3)
    eta = L.fixed_perturbation([4, 4], 0.005, 3)
    np.testing.assert_allclose(noisy.clipped[0], np.maximum(base.capped[0] + eta[0], 0))
    assert np.all(noisy.table == L.llm_rewards(df, costs, window=2, perturbation_sd=0.005, seed=3).table)
    valid = L.llm_rewards(df, costs, window=2, smoothing="valid", perturbation_sd=0.0)
    np.testing.assert_allclose(valid.smoothed[0], [0.35, 0.55, 0.61])
    np.testing.assert_allclose(valid.net[0], [0.35 - 0.02, 0.55 - 0.03, 0.61 - 0.04])  # t keeps the input index
    by_step = L.llm_rewards(df, costs, window=1, cost_index="step", perturbation_sd=0.0)
    np.testing.assert_allclose(by_step.net[0], [0.2 - 1.0, 0.5 - 2.0, 0.6 - 3.0, 0.62 - 4.0])
    stages = base.stages()
    assert set(stages["stage"]) == {"raw score", "smoothed", "net of cost", "peak-capped", "perturbed, clipped", "reward"}


def test_trajectory_input_validation(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("# a comment line\narm,step,score\nb,2,0.4\nb,1,0.3\na,1,0.5\na,2,0.5\n")
    df = L.read_trajectories(path)
    assert df["arm"].tolist() == ["b", "b", "a", "a"] and df["step"].tolist() == [1, 2, 1, 2]
    bad = {
        "arm,step\na,1\n": "lacks column",
        "arm,step,score\na,1,0.5\na,1,0.6\nb,1,0.5\n": "twice",
        "arm,step,score\na,1,x\nb,1,0.5\n": "score='x'",
        "arm,step,score\na,1,0.5\na,2,0.6\n": "at least 2 arms",
        "arm,step,score\na,-1,0.5\nb,1,0.5\n": "step=",
    }
    for text, message in bad.items():
        path.write_text(text)
        with pytest.raises(ValueError, match=message):
            L.read_trajectories(path)
    with pytest.raises(ValueError, match="no such file"):
        L.read_trajectories(tmp_path / "none.csv")
    with pytest.raises(ValueError, match="missing"):
        L.llm_rewards(_hand_trajectories(), {"big": 0.1})
    with pytest.raises(ValueError, match=r"costs\['flat'\]=-1"):
        L.llm_rewards(_hand_trajectories(), [0.1, -1])
    with pytest.raises(ValueError, match="expected 2 coefficients"):
        L.llm_rewards(_hand_trajectories(), [0.1])


def test_illustrative_file_is_the_generator_output_and_says_so():
    text = L.ILLUSTRATIVE_CSV.read_text()
    assert text.startswith("# ILLUSTRATIVE") and "NOT measurements" in text
    pd.testing.assert_frame_equal(L.read_trajectories(L.ILLUSTRATIVE_CSV), L.read_trajectories(L.illustrative_trajectories()))
    assert list(L.ILLUSTRATIVE_COSTS.values()) == [5e-5, 7.5e-5, 1.05e-4, 1.6e-4, 0.0]


def test_illustrative_example_has_the_described_shapes():
    r = L.llm_rewards(L.ILLUSTRATIVE_CSV, L.ILLUSTRATIVE_COSTS)
    inst = r.instance(T_max=10_000)
    flat = inst.names.index("Max-ICL")
    rewards = r.rewards[flat]
    assert rewards.mean() > 0.7 and abs(rewards[-50:].mean() - rewards[:50].mean()) < 0.03  # high and flat
    for k in range(4):  # the fine-tuned arms rise
        assert r.table[k, -1] > r.table[k, 0] + 0.3
    # the best arm depends on the horizon: the off-the-shelf arm for short budgets, a fine-tuned one for long
    assert optimal_arm(inst, 300) == flat
    assert optimal_arm(inst, 10_000) != flat


def test_pull_unit_one_pull_per_training_step():
    r = L.llm_rewards(_hand_trajectories(), {"big": 0.05, "flat": 0.0}, window=1, perturbation_sd=0.0, length=9)
    assert r.max_step == 400 and r.pulls_per_entry("entry") == 1.0 and r.pulls_per_entry("step") == 50.0
    by_step = r.instance(T_max=500, pull_unit="step")
    # the n-th pull reads the table at (n - 1) / 50: checkpoint step 200 sits at entry 4, read by pull 201
    np.testing.assert_allclose(by_step.means[0, 201], r.table[0, 4])
    np.testing.assert_allclose(by_step.means[0, 226], 0.5 * (r.table[0, 4] + r.table[0, 5]))
    assert np.array_equal(r.instance(T_max=500).means, r.instance(T_max=500, pulls_per_entry=1.0).means)
    assert np.array_equal(by_step.means, r.instance(T_max=500, pulls_per_entry=50.0).means)
    with pytest.raises(ValueError, match="pull_unit"):
        r.instance(T_max=10, pull_unit="checkpoint")
