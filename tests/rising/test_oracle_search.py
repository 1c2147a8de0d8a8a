"""The compiled exhaustive search (oracle.exhaustive_best_allocation) against its plain-Python reference."""
import numpy as np
import pytest

import horizonbandits.rising as R
from horizonbandits.rising.oracle import allocations, exhaustive_best_allocation, exhaustive_best_allocation_reference


@pytest.mark.parametrize("kind", ["ties", "rising", "equal arms", "rise-fall"])
def test_compiled_search_gives_the_reference_value_and_allocation(kind):
    rng = np.random.default_rng(["ties", "rising", "equal arms", "rise-fall"].index(kind))
    for _ in range(40):
        K, T = int(rng.integers(2, 6)), int(rng.integers(1, 13))
        if kind == "ties":  # coarse values: many allocations share the best value
            means = np.round(rng.random((K, T + 1)), 1)
        elif kind == "rising":
            means = np.cumsum(rng.exponential(size=(K, T + 1)), axis=1)
        elif kind == "equal arms":
            means = np.tile(rng.random((1, T + 1)), (K, 1))
        else:
            means = rng.normal(size=(K, T + 1))
        inst = R.RisingInstance(means, noise=0.0)
        value, alloc = exhaustive_best_allocation(inst, T)
        ref_value, ref_alloc = exhaustive_best_allocation_reference(inst, T)
        assert value == ref_value
        np.testing.assert_array_equal(alloc, ref_alloc)
        assert alloc.sum() == T


def test_search_visits_every_allocation():
    # each arm pays only at the pull count of one allocation near the end of the enumeration order,
    # so only that allocation collects every arm's payment
    K, T = 3, 6
    target = list(allocations(T, K))[-2]
    means = np.zeros((K, T + 1))
    for i, n in enumerate(target):
        if n > 0:
            means[i, n] = 1.0
    value, alloc = exhaustive_best_allocation(R.RisingInstance(means, noise=0.0), T)
    np.testing.assert_array_equal(alloc, target)
    assert value == sum(1.0 for n in target if n > 0)


def test_search_refuses_too_many_allocations():
    inst = R.RisingInstance(np.ones((5, 101)), noise=0.0)
    with pytest.raises(ValueError, match="exceed limit"):
        exhaustive_best_allocation(inst, 100, limit=1000)
