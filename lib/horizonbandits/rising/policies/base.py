"""What every rising-bandit policy provides, and the registry ``POLICIES``.

A policy is a frozen dataclass of hyperparameters with:

- ``name`` (display name, the key in ``POLICIES``) and ``uses_horizon`` (does it read T?);
- ``takes_noise_scale``: does the policy's own index take the noise scale sigma as an input? Only then
  does ``experiments.make_policies(..., sigma=...)`` hand it the environment's sigma (fair baselines);
- ``run_kernel(obs, T, checkpoints, arms_out, stream_seed)``: the compiled simulation on the rewards
  ``obs`` (a lazy ``rewards.RewardSource``, as ``simulate`` passes, or an ``Observations`` table; the
  kernel gets ``kernel_args(obs, T)``, draws or copies the rewards of its own pulls into the work
  array there, and allocates no K x T table of its own). It returns the
  pull counts (len(checkpoints) x K, int64) after each checkpoint round and, when ``arms_out`` has
  length T, writes the arm pulled at each round into it (0-based arms);
- ``reference(X, T, stream_seed, trace=False)``: a plain per-step Python implementation that
  follows the paper's formula line by line and returns the arm sequence (and, with ``trace``, the
  index of every arm at every round: a T x K array, NaN where no index is computed).

Kernel and reference receive the same rewards (the reference as the table ``draw_observations``
fills with the numbers the kernel draws lazily) and, for randomised policies, the same stream seed
(``horizonbandits.rng``); tests check that they pick the same arms. Subclasses with a non-empty
``name`` register themselves in ``POLICIES`` when imported (``horizonbandits.policy_base.Policy``,
the base shared with the commitment and portfolio policies, does the registration, the ``label``
and the ``_check`` helper for hyperparameters).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...policy_base import Policy, make

POLICIES: dict[str, type] = {}


@dataclass(frozen=True)
class RisingPolicy(Policy, registry=POLICIES, kind="policy"):
    uses_horizon: ClassVar[bool] = False
    takes_noise_scale: ClassVar[bool] = False
    randomised: ClassVar[bool] = False

    def run_kernel(self, obs, T: int, checkpoints: np.ndarray, arms_out: np.ndarray, stream_seed: int) -> np.ndarray:
        raise NotImplementedError

    def reference(self, X: np.ndarray, T: int, stream_seed: int = 0, trace: bool = False):
        raise NotImplementedError


def make_policy(name: str, **params) -> RisingPolicy:
    """``POLICIES[name](**params)`` with a one-line error for an unknown name."""
    return make(POLICIES, name, **params)


def round_robin_arm(t: int, K: int) -> int:
    """Arm pulled at initialisation round t (1-based): arms in index order, cyclically."""
    return (t - 1) % K
