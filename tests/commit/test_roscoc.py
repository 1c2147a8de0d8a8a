"""ROSCOC and UCB-Portfolio: compiled UCB vs reference, Stage II vs its per-round reference, the stages."""
import cvxpy as cp
import numpy as np
import pytest

from horizonbandits.commit import CommitProblem, NoShiftElimination
from horizonbandits.commit.portfolio_model import PortfolioProblem, policy_stream_seed, run_seed
from horizonbandits.commit.portfolio import ConcaveReward, QuadraticReward, portfolio_solve_exact
from horizonbandits.commit.portfolio_instances import section73
from horizonbandits.commit.policies.roscoc import ROSCOC, eliminate_on_f, eliminate_on_f_reference, round_robin_fill
from horizonbandits.commit.policies.ucb_portfolio import UCBPortfolio, ucb_f_counts, ucb_f_reference


def test_ucb_kernel_picks_the_reference_arms():
    rng = np.random.default_rng(0)
    for k in range(30):
        K, N = int(rng.integers(2, 7)), int(rng.integers(1, 1500))
        F = (rng.random((K, N)) < rng.random((K, 1))).astype(float)
        if k % 5 == 0:
            F[:] = k % 2  # identical arms: ties every round
        counts, arms = ucb_f_counts(F, N, record_arms=True)
        assert np.array_equal(arms, ucb_f_reference(F, N))
        assert np.array_equal(counts, np.bincount(arms, minlength=K))


def test_round_robin_fill_is_a_round_robin():
    rng = np.random.default_rng(1)
    for _ in range(300):
        need = rng.integers(0, 12, size=int(rng.integers(1, 7)))
        budget = int(rng.integers(0, need.sum() + 3))
        got, left, give = need.copy(), budget, np.zeros_like(need)
        while left > 0 and got.any():
            for i in range(need.size):
                if got[i] > 0 and left > 0:
                    got[i] -= 1
                    give[i] += 1
                    left -= 1
        assert np.array_equal(round_robin_fill(need, budget), give)


def test_stage2_elimination_matches_its_per_round_reference():
    rng = np.random.default_rng(2)
    for _ in range(200):
        K, N = int(rng.integers(2, 7)), int(rng.integers(2, 3000))
        F = (rng.random((K, N)) < rng.random((K, 1))).astype(float)
        start = np.minimum(rng.integers(0, 6, size=K), N // K)
        rounds = int(rng.integers(0, N - start.sum() + 1))
        scale = float(rng.choice([0.05, 0.1, 1.0]))
        CF = np.concatenate([np.zeros((K, 1)), np.cumsum(F, axis=1)], axis=1)
        fast, epochs = eliminate_on_f(CF, start, rounds, N, scale)
        slow, epochs_ref = eliminate_on_f_reference(F, start, rounds, N, scale)
        assert np.array_equal(fast, slow) and epochs == epochs_ref
        assert fast.sum() == start.sum() + rounds


def test_stage2_is_raec_stage2_with_the_papers_elimination_test():
    """From no earlier pulls ROSCOC's Stage II is NoShiftElimination's run (RAEC's Stage II alone) on the same
    f-table. Small Bernoulli tables often put an arm exactly 2^-l below the best (e.g. means 2/3 and 5/12 in
    epoch 2), where the float forms best - mean > 2^-l (RAEC's, kept) and mean >= best - 2^-l (ROSCOC's old
    copy) can disagree: 9 of these 200 tables did before the two shared the code."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        K, N = int(rng.integers(2, 7)), int(rng.integers(2, 3000))
        F = (rng.random((K, N)) < rng.random((K, 1))).astype(float)
        scale = float(rng.choice([0.05, 0.1, 1.0]))
        padded = np.concatenate([np.zeros((K, 1)), F], axis=1)  # the commitment tables' layout (column 0 unused)
        problem = CommitProblem.bernoulli(np.full(K, 0.5), np.full(K, 0.5), N, N + 10)
        counts, _ = NoShiftElimination(stage_scale=scale).run_table(problem, padded, padded, 0)
        ours, _ = eliminate_on_f(np.cumsum(padded, axis=1), np.zeros(K, dtype=np.int64), N, N, scale)
        slow, _ = eliminate_on_f_reference(F, np.zeros(K, dtype=np.int64), N, N, scale)
        assert np.array_equal(ours, counts) and np.array_equal(slow, counts)


def test_stage2_concentrates_on_the_f_best_arm():
    F = np.zeros((3, 4000))
    F[0] = 1.0  # arm 0 always pays, the others never: both are eliminated after epoch 1
    counts, _ = eliminate_on_f(np.concatenate([np.zeros((3, 1)), np.cumsum(F, axis=1)], axis=1),
                               np.zeros(3, dtype=np.int64), 4000, 4000, 0.1)
    target = int(np.ceil(0.1 * 4 * np.log(4000) * 4))
    assert counts[1] == counts[2] == target and counts[0] == 4000 - 2 * target


@pytest.mark.parametrize("stage1", ["frank_wolfe", "convex_solve"])
@pytest.mark.parametrize("solve_every", ["round", "doubling"])
def test_roscoc_stages_and_path_commitment(solve_every, stage1):
    problem = section73(1200)
    policy = ROSCOC(solve_every=solve_every, stage1=stage1)
    run = policy.run(problem, problem.draw(0, 0), policy_stream_seed(0, 0), trace=True)
    n1 = policy.stage1_rounds(problem)
    L = problem.reward.lipschitz()
    tau = min(problem.N, (L * L * 5 * 3) ** (1 / 3) * (problem.T - problem.N) ** (2 / 3))
    assert n1 == round(0.3 * tau) and run.info["stage1_rounds"] == n1
    path = run.info["path"]
    assert np.array_equal(path[:5], np.arange(5))  # one pull per arm first
    assert np.allclose(run.portfolio, np.bincount(path, minlength=5) / n1)  # the path's empirical distribution
    assert run.pulls.sum() == problem.N and np.all(run.pulls >= np.bincount(path, minlength=5))
    expected_solves = n1 - 5 if solve_every == "round" else int(np.floor(np.log2((n1 - 1) / 5))) + 1
    assert run.info["solves"] == expected_solves
    xs = run.info["stage1_portfolios"]
    assert xs.shape == (n1 - 5, 5) and np.allclose(xs.sum(axis=1), 1)
    if stage1 == "frank_wolfe":  # a vertex each round: the arm pulled
        assert np.array_equal(xs.argmax(axis=1), path[5:]) and np.all(xs.max(axis=1) == 1)
    elif solve_every == "doubling":  # x changes only right after K, 2K, 4K, ... Stage-I pulls
        changes = {i for i in range(1, len(xs)) if not np.array_equal(xs[i], xs[i - 1])}
        assert changes <= {5 * 2 ** k - 5 for k in range(1, 20)}


@pytest.mark.parametrize("solve_every", ["round", "doubling"])
def test_frank_wolfe_kernel_picks_the_reference_arms(solve_every):
    rng = np.random.default_rng(7)
    for k in range(12):
        T = int(rng.integers(200, 6000))
        kw = dict(outcomes="gaussian", noise_sd=0.2) if k % 2 else {}
        problem = section73(T, delta_f=float(rng.uniform(0, 0.5)), a_scale=float(rng.choice([1.0, 2.0])),
                            a_shape=tuple(rng.uniform(0.5, 30, size=3)), **kw)
        policy = ROSCOC(solve_every=solve_every, radius_scale=float(rng.choice([0.0, 0.1, 1.0])),
                        stage1_scale=float(rng.choice([0.1, 0.3])))
        tables = problem.draw(k, 0)
        fast = policy.run(problem, tables)
        n1 = policy.stage1_rounds(problem)
        slow = policy.reference_run(problem, tables, n1, np.log(5 * 3 * n1), trace=True)
        assert np.array_equal(fast.pulls, slow.pulls) and np.array_equal(fast.portfolio, slow.portfolio)
        assert fast.info["solves"] == slow.info["solves"]


def test_frank_wolfe_path_concentrates_where_the_convex_solve_path_does_not():
    # The diagnosis on the inside-hull instance (A = I, Gaussian noise 0.1): the optimistic convex step's
    # optimal set is wide and its path stays near uniform; the Frank-Wolfe path moves towards x* = (0, 0, .4, .3, .3).
    problem = section73(20000, outcomes="gaussian", a_scale=1.0, a_shape=(1, 1, 1), target_z=None)
    weight12 = {}
    for stage1, every in (("frank_wolfe", "round"), ("convex_solve", "doubling")):
        runs = [run_seed(problem, ROSCOC(stage1=stage1, solve_every=every), seed=0, s=s) for s in range(3)]
        weight12[stage1] = np.mean([r.portfolio[:2].sum() for r in runs])
    assert weight12["convex_solve"] > 0.3 and weight12["frank_wolfe"] < 0.7 * weight12["convex_solve"]


def test_roscoc_path_tracks_the_optimum_without_noise_or_optimism():
    # With exact outcomes and zero radius every convex step returns x*: the path is a sample from x*.
    problem = section73(40000, outcomes="gaussian", noise_sd=0.0, a_scale=1.0, a_shape=(1, 1, 1), target_z=None)
    policy = ROSCOC(radius_scale=0.0, solve_every="doubling", stage1_scale=0.3, stage1="convex_solve")
    run = policy.run(problem, problem.draw(1, 0), policy_stream_seed(1, 0), trace=True)
    n1 = run.info["stage1_rounds"]
    assert n1 > 1000
    xs = run.info["stage1_portfolios"]
    assert np.allclose(xs, problem.optimal_portfolio, atol=1e-3)  # cvxpy's x* (interior point: ~1e-4 accurate)
    expected = (1.0 + xs.sum(axis=0)) / n1  # the K initial pulls, then one draw from x_t per round
    sd = np.sqrt((xs * (1 - xs)).sum(axis=0)) / n1
    assert np.all(np.abs(run.portfolio - expected) <= 4 * sd + 1e-12)
    # and its commitment loss is far below the uniform portfolio's
    assert problem.commitment_regret(run.portfolio)[0] < 0.05 * problem.commitment_regret(np.full(5, 0.2))[0]


@pytest.mark.parametrize("target_z", [None, 0.0])
def test_frank_wolfe_path_converges_to_the_optimum_without_noise_or_optimism(target_z):
    # Exact outcomes, zero radius: the path's empirical distribution is the averaged Frank-Wolfe iterate of
    # max g(M x), whose value approaches OPT_g (here within 1 % of the uniform portfolio's loss).
    problem = section73(40000, outcomes="gaussian", noise_sd=0.0, target_z=target_z)
    run = ROSCOC(radius_scale=0.0).run(problem, problem.draw(1, 0))
    assert run.info["stage1_rounds"] > 1000
    assert problem.commitment_regret(run.portfolio)[0] < 0.01 * problem.commitment_regret(np.full(5, 0.2))[0]
    assert np.abs(run.portfolio - problem.optimal_portfolio).max() < 0.05


def test_roscoc_plugin_commitment_solves_on_stage1_means():
    problem = section73(2000)
    tables = problem.draw(2, 0)
    run = ROSCOC(commit="plugin").run(problem, tables, policy_stream_seed(2, 0), trace=True)
    x, v = portfolio_solve_exact(run.info["stage1_means"], problem.reward.c, problem.reward.A)
    assert abs(problem.reward.value(run.info["stage1_means"] @ run.portfolio) - v) < 1e-6


def test_ucb_portfolio_commits_to_the_plug_in_optimum_of_its_pulls():
    problem = section73(3000)
    tables = problem.draw(5, 1)
    run = UCBPortfolio().run(problem, tables)
    assert np.array_equal(run.pulls, ucb_f_counts(tables.F, problem.N))
    O_hat = np.stack([tables.Y[i, :n].mean(axis=0) for i, n in enumerate(run.pulls)], axis=1)
    _, v = portfolio_solve_exact(O_hat, problem.reward.c, problem.reward.A)
    assert abs(problem.reward.value(O_hat @ run.portfolio) - v) < 1e-6
    assert run.pulls[0] == run.pulls.max()  # UCB spends most rounds on the f-best arm


class WorstCoordinate(ConcaveReward):
    """g(y) = min_i y_i: a user-defined concave reward (max-min balance of the outcome coordinates)."""

    d = 2

    def cvxpy(self, y):
        return cp.min(y)

    def value(self, y):
        return np.min(np.asarray(y, dtype=float), axis=-1)

    def lipschitz(self):
        return 1.0


def test_policies_run_with_a_user_defined_concave_reward():
    loc = np.array([[0.9, 0.1, 0.5, 0.2], [0.1, 0.9, 0.4, 0.2]])
    problem = PortfolioProblem([0.6, 0.5, 0.4, 0.3], loc, WorstCoordinate(), N=300, T=1200, noise_sd=0.05)
    # the optimum mixes arms 1 and 2 half and half: min(0.5, 0.5) beats arm 3's 0.4
    grid = np.random.default_rng(0).dirichlet(np.ones(4), size=20000)
    best = problem.reward.value(grid @ problem.outcome_mean.T).max()
    assert problem.optimal_value >= best - 1e-7 and problem.optimal_value > 0.45
    for policy in (ROSCOC(solve_every="doubling"), UCBPortfolio()):
        run = run_seed(problem, policy, seed=0, s=0)
        assert run.pulls.sum() == 300 and abs(run.portfolio.sum() - 1) < 1e-9
        assert problem.commitment_regret(run.portfolio)[0] >= 0


def test_roscoc_with_fewer_experiment_rounds_than_arms():
    # N smaller than K: Stage I is cut at N, so only some arms are tried and the path is the commitment.
    problem = PortfolioProblem([0.5, 0.4, 0.3, 0.2], np.full((2, 4), 0.5), QuadraticReward([0.5, 0.5]), N=3, T=50)
    run = run_seed(problem, ROSCOC(), seed=0, s=0)
    assert run.pulls.sum() == 3 and np.allclose(run.portfolio, [1 / 3, 1 / 3, 1 / 3, 0])


def test_parameter_validation():
    with pytest.raises(ValueError, match="stage1_scale=0"):
        ROSCOC(stage1_scale=0)
    with pytest.raises(ValueError, match="solve_every='weekly'"):
        ROSCOC(solve_every="weekly")
    with pytest.raises(ValueError, match="commit='best'"):
        ROSCOC(commit="best")
    with pytest.raises(ValueError, match="radius_scale=-1"):
        ROSCOC(radius_scale=-1)
    with pytest.raises(ValueError, match="gamma=0"):
        ROSCOC(gamma=0)
    with pytest.raises(ValueError, match="stage1='mirror'"):
        ROSCOC(stage1="mirror")
    assert ROSCOC(solve_every="doubling").label == "ROSCOC(solve_every='doubling')"
    assert ROSCOC().label == "ROSCOC" and UCBPortfolio().label == "UCB-Portfolio"


def test_portfolio_policies_are_registered():
    import horizonbandits.commit as commit
    from horizonbandits.commit.policies import roscoc as new_roscoc
    from horizonbandits.commit.policies import ucb_portfolio as new_ucb
    assert commit.PORTFOLIO_POLICIES == {"ROSCOC": new_roscoc.ROSCOC, "UCB-Portfolio": new_ucb.UCBPortfolio}
    assert commit.ROSCOC is new_roscoc.ROSCOC and commit.UCBPortfolio is new_ucb.UCBPortfolio
    from horizonbandits.workbook.params import POLICY_REGISTRIES
    assert ("portfolio", "horizonbandits.commit", "PORTFOLIO_POLICIES") in POLICY_REGISTRIES


def test_moved_modules_have_no_aliases_left():
    """Issue 30: the old module names and attribute redirects are gone, not kept as aliases."""
    import importlib

    import horizonbandits.commit.elimination as elimination
    import horizonbandits.commit.instances as instances
    for old in ("horizonbandits.commit.concave", "horizonbandits.commit.roscoc"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)
    assert not hasattr(elimination, "reference_elimination") and not hasattr(instances, "section73")
