"""The seed layout of ``horizonbandits.seeds`` is the one every model draws from (a change here changes every number)."""
import numpy as np

from horizonbandits import seeds
from horizonbandits.commit import CommitProblem, sampling
from horizonbandits.commit.portfolio_model import policy_stream_seed as portfolio_policy_seed
from horizonbandits.experiments import instance_seed, instance_set
from horizonbandits.rising import ltf_random
from horizonbandits.rising.observations import arm_seed_sequence, draw_observations, policy_stream_seed


def first_word(ss):
    return int(ss.generate_state(1, np.uint64)[0])


def test_layout_is_the_documented_spawn_keys():
    for root, s, i in [(0, 0, 0), (7, 3, 2), (12345, 41, 5)]:
        assert seeds.arm_stream(root, s, i).spawn_key == (s, 0, i) and seeds.arm_stream(root, s, i).entropy == root
        assert seeds.outcome_stream(root, s, i).spawn_key == (s, 2, i)
        assert seeds.policy_stream_seed(root, s) == first_word(np.random.SeedSequence(root, spawn_key=(s, 1)))
        assert seeds.batch_stream_seed(root, s) == first_word(np.random.SeedSequence(root, spawn_key=(s, 2)))
        # The models read their streams from here.
        assert policy_stream_seed(root, s) == portfolio_policy_seed(root, s) == seeds.policy_stream_seed(root, s)
        assert arm_seed_sequence(root, s, i).spawn_key == (s, 0, i)
        assert int(sampling.policy_stream_seeds(root, s + 1)[s]) == seeds.policy_stream_seed(root, s)
        assert int(sampling.environment_stream_seeds(root, s + 1)[s]) == seeds.batch_stream_seed(root, s)


def test_rising_table_reads_the_arm_streams():
    inst = ltf_random(np.random.default_rng(0), K=2, T_ref=50, noise=0.1)
    obs = draw_observations(inst, 50, seed=9, s=4)
    again = draw_observations(inst, 50, seed=9, s=4)
    other = draw_observations(inst, 50, seed=9, s=5)
    assert np.array_equal(obs.X, again.X) and not np.array_equal(obs.X, other.X)


def test_commit_tables_read_the_arm_streams():
    problem = CommitProblem.bernoulli([0.2, 0.7], [0.6, 0.3], N=20, T=40)
    F, G = sampling.draw_tables(problem, 20, seed=5, s=3)
    u = np.random.default_rng(seeds.arm_stream(5, 3, 1)).random((2, 20))
    assert np.array_equal(F[1, 1:], u[0] < 0.7) and np.array_equal(G[1, 1:], u[1] < 0.3)


def test_instance_sets_and_grid_roots():
    insts = instance_set("ltf", 3, seed=4, H=500)
    for j, inst in enumerate(insts.values()):
        again = ltf_random(seeds.instance_generator(4, j), T_ref=500)
        assert np.array_equal(inst.means, again.means)
    inst = next(iter(insts.values()))
    root = instance_seed(4, inst)
    assert 0 <= root < 2 ** 63 and root != instance_seed(5, inst)


def test_stream_seeds_are_memoised_without_changing_them():
    import numpy as np
    from horizonbandits import seeds
    fresh = int(np.random.SeedSequence(11, spawn_key=(3, 0, 2)).generate_state(1, np.uint64)[0])
    assert seeds.stream_seed(11, 3, 0, 2) == fresh == seeds.stream_seed(np.int64(11), 3, 0, 2)
    assert seeds.arm_reward_key(11, 3, 2) == fresh
    assert seeds.stream_seed(11, 3, 0, 3) != fresh


def _seed_sequence_calls(path):
    import ast
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "SeedSequence":
                yield node.lineno


def test_every_seed_sequence_is_built_in_seeds_py():
    """The seed layout has one home: a stream built inline elsewhere escapes its table (issue 30)."""
    from pathlib import Path
    import horizonbandits
    package = Path(horizonbandits.__file__).parent
    found = [f"{p.relative_to(package)}:{line}" for p in sorted(package.rglob("*.py")) if p.name != "seeds.py"
             for line in _seed_sequence_calls(p)]
    assert not found, "SeedSequence( built outside seeds.py: " + ", ".join(found)


def test_the_data_and_run_generators_are_the_documented_keys():
    from horizonbandits import seeds
    assert seeds.data_generator(7).random() == np.random.default_rng(np.random.SeedSequence(7)).random()
    assert seeds.run_generator(7, 3).random() == np.random.default_rng(
        np.random.SeedSequence(7, spawn_key=(3,))).random()
    assert seeds.data_generator(7).random() != seeds.run_generator(7, 0).random()


def test_portfolio_tables_read_the_arm_and_outcome_streams():
    """Both outcome models draw arm i's f-rewards from key (s, 0, i) and its outcomes from (s, 2, i)."""
    from horizonbandits.commit.portfolio_instances import section73
    for outcome in ("bernoulli", "gaussian"):
        problem = section73(T=400, outcomes=outcome)
        tables = problem.draw(seed=3, s=1, n_max=30)
        for i in range(problem.K):
            u = np.random.default_rng(seeds.arm_stream(3, 1, i)).random(30)
            assert np.array_equal(tables.F[i], u < problem.mu_f[i])
            rng = np.random.default_rng(seeds.outcome_stream(3, 1, i))
            if outcome == "bernoulli":
                expected = rng.random((30, problem.d)) < problem.loc[:, i]
            else:
                expected = np.clip(problem.loc[:, i] + problem.noise_sd * rng.standard_normal((30, problem.d)), 0, 1)
            assert np.array_equal(tables.Y[i], expected)
