"""The seed layout: which random stream feeds what, for every model, in one place.

Everything random is drawn from ``numpy.random.SeedSequence(root, spawn_key=KEY)``, where ``root``
is a non-negative integer and KEY says what the stream is for. With s a seed index (one
replication) and i an arm:

===============  =========================================================================
KEY              stream
===============  =========================================================================
``(s, 0, i)``    the environment of arm i in replication s, read by pull number (common
                 random numbers): the rising rewards (its first word is the arm's key,
                 :func:`arm_reward_key`; pull n's reward is a pure function of (key, n), see
                 ``counter_rng`` and ``rising.observations``), the commitment outcome tables
                 (``commit.sampling.draw_tables``), the portfolio model's f-rewards
                 (``commit.portfolio_model``)
``(s, 1)``       the policy's own randomness (tie-breaks, random commitments), all models
``(s, 2)``       the commitment model's batch draws (``draws="batch"``, a splitmix64 stream)
``(s, 2, i)``    the portfolio model's outcome vectors of arm i
``(j,)``         instance j of a random instance set (``experiments.instance_set``), so the
                 first n instances do not depend on how many are drawn
``(w0, w1)``     the rising grid's root for an instance: two 32-bit words of the digest of its
                 mean table (:func:`grid_instance_seed`); the grid then runs seed indices
                 0..n-1 of that root, so ``simulate(inst, policy, T, n, seed=grid_instance_seed(...))``
                 gives the grid's rows
``(r,)``         run r of a learning-curve experiment (``rising.learning_curves``)
``()``           data construction from the root alone: the shuffle of a data set
                 (``rising.learning_curves``), the evaluation jitter of the LLM curves
                 (``rising.llm``)
===============  =========================================================================

Because a stream depends only on (root, KEY), results never depend on how the seeds are chunked,
on the number of workers or on the backend. The commitment and portfolio grids use ``seed`` itself
as the root of every problem (a problem's runs are paired across policies, and across horizons).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

ENVIRONMENT, POLICY, BATCH = 0, 1, 2


def seed_sequence(root: int, *key: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(root, spawn_key=tuple(key))


@lru_cache(maxsize=8192)
def stream_seed(root: int, *key: int) -> int:
    """A 64-bit seed for a compiled generator: the first word of ``SeedSequence(root, spawn_key=key)``.

    Memoised: a SeedSequence costs about 20 us, and the same (root, key) recurs across instances and
    runs (``uniform_dominance_ltf`` derives the keys of seed index s for each of 5,000 instances; it
    spent 0.3 of 4.7 CPU-s on them at 20 instances, 2026-12-01)."""
    return int(seed_sequence(root, *key).generate_state(1, np.uint64)[0])


def arm_stream(root: int, s: int, i: int) -> np.random.SeedSequence:
    """The environment stream of arm i in replication s (key (s, 0, i))."""
    return seed_sequence(root, s, ENVIRONMENT, i)


def arm_reward_key(root: int, s: int, i: int) -> int:
    """64-bit key of arm i's rising rewards in replication s: the first word of key (s, 0, i)."""
    return stream_seed(root, s, ENVIRONMENT, i)


def policy_stream_seed(root: int, s: int) -> int:
    """64-bit seed of the policy's own stream in replication s (key (s, 1))."""
    return stream_seed(root, s, POLICY)


def batch_stream_seed(root: int, s: int) -> int:
    """64-bit seed of the commitment model's batch-draw stream in replication s (key (s, 2))."""
    return stream_seed(root, s, BATCH)


def outcome_stream(root: int, s: int, i: int) -> np.random.SeedSequence:
    """The portfolio model's outcome-vector stream of arm i in replication s (key (s, 2, i))."""
    return seed_sequence(root, s, BATCH, i)


def instance_generator(root: int, j: int) -> np.random.Generator:
    """The generator that draws instance j of a random instance set (key (j,))."""
    return np.random.default_rng(seed_sequence(root, j))


def run_generator(root: int, r: int) -> np.random.Generator:
    """The generator of run r of a learning-curve experiment (key (r,))."""
    return np.random.default_rng(seed_sequence(root, r))


def data_generator(root: int) -> np.random.Generator:
    """The generator of a data construction from the root alone (key ()): a data set's shuffle, the
    LLM curves' evaluation jitter."""
    return np.random.default_rng(seed_sequence(root))


def grid_instance_seed(root: int, digest_hex: str) -> int:
    """The rising grid's root for an instance whose digest is ``digest_hex`` (63 bits, non-negative)."""
    words = (int(digest_hex[0:8], 16), int(digest_hex[8:16], 16))
    return int(seed_sequence(root, *words).generate_state(1, np.uint64)[0] >> np.uint64(1))
