"""Run a policy on an instance: many seeds, common random numbers, pseudo-regret."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import check_choice, check_int
from ..results import Result, run_seeds  # run_seeds: the seed loop behind the progress bar
from .instances import RisingInstance
from .observations import checked_reward_source, policy_stream_seed, resolve_noise
from .oracle import collected_value, optimal_arm, optimal_value, regret_curve
from .policies.base import POLICIES, RisingPolicy


@dataclass(repr=False)
class RunResult(Result):
    """Outcome of ``simulate``: one entry per seed.

    regret : (n_seeds,) pseudo-regret at T against the optimal fixed arm for this T (not clipped).
    pulls : (n_seeds, K) pull counts.
    curve : (n_seeds, T) cumulative pseudo-regret after each round, when requested.
    arms : (n_seeds, T) arm pulled at each round, when requested.
    """

    policy: str
    T: int
    regret: np.ndarray
    pulls: np.ndarray
    optimal_arm: int
    optimal_value: float
    curve: np.ndarray | None = None
    arms: np.ndarray | None = None
    names: tuple = field(default_factory=tuple)

    def _summary(self) -> list[str]:  # repr: RunResult(policy, T=.., seeds=.., mean regret=.., optimal arm=..)
        return [f"T={self.T}", *super()._summary(), f"optimal arm={self.optimal_arm}"]


def run_seed(inst: RisingInstance, policy: RisingPolicy, T: int, seed: int, s: int, noise=None,
             checkpoints=None, record_arms: bool = False, obs=None):
    """Pull counts at each checkpoint (default: only T) for seed index s, and the arms if asked.

    The kernel draws each reward when it pulls (``observations.reward_source``); ``obs`` lets a
    caller pass its own rewards instead (an ``Observations`` table or a ``RewardSource``).
    """
    if not isinstance(policy, RisingPolicy):
        raise ValueError(f"policy={policy!r} is not allowed: expected a RisingPolicy such as CureUCB()")
    if obs is None:
        obs = checked_reward_source(inst, resolve_noise(inst, noise), seed, s)
    cps = np.array([T] if checkpoints is None else checkpoints, dtype=np.int64)
    arms = np.empty(T if record_arms else 0, dtype=np.int64)
    pulls = policy.run_kernel(obs, T, cps, arms, policy_stream_seed(seed, s))
    return pulls, (arms if record_arms else None)


def simulate(inst: RisingInstance, policy: RisingPolicy | str, T: int, n_seeds: int = 1, seed: int = 0,
             noise=None, return_curve: bool = False, return_arms: bool = False,
             progress: bool | None = None) -> RunResult:
    """Simulate ``policy`` on ``inst`` for horizon T over ``n_seeds`` seeds.

    Seed index s uses ``SeedSequence(seed).spawn(n_seeds)[s]`` (its children give the per-arm reward
    streams and the policy's own stream), so results do not depend on how many seeds are run
    together or on the number of workers. ``noise=None`` uses the instance's observation model.
    ``policy`` is a policy object or a name registered in ``POLICIES`` (e.g. "CURE-UCB"), which
    stands for that policy with its default parameters.
    """
    if not isinstance(inst, RisingInstance):
        raise ValueError(f"inst={inst!r} is not allowed: expected a RisingInstance")
    policy = as_policy(policy)
    T = inst.check_horizon(T)
    n_seeds = check_int("n_seeds", n_seeds, 1)
    seed = check_int("seed", seed, 0)
    noise = resolve_noise(inst, noise)  # checked once here, not once per seed
    pulls = np.empty((n_seeds, inst.K), dtype=np.int64)
    want_arms = return_curve or return_arms
    arms = np.empty((n_seeds, T), dtype=np.int64) if want_arms else None
    show = progress if progress is not None else (n_seeds * T * inst.K > 5e7)
    runs = run_seeds(lambda s: run_seed(inst, policy, T, seed, s, record_arms=want_arms,
                                        obs=checked_reward_source(inst, noise, seed, s)),
                     range(n_seeds), desc=policy.name, progress=show)
    for s, (p, a) in enumerate(runs):
        pulls[s] = p[-1]
        if want_arms:
            arms[s] = a
    regret = optimal_value(inst, T) - collected_value(inst, pulls)
    return RunResult(
        policy=policy.name, T=T, regret=regret, pulls=pulls,
        optimal_arm=optimal_arm(inst, T), optimal_value=optimal_value(inst, T),
        curve=regret_curve(inst, arms, T) if return_curve else None,
        arms=arms if return_arms else None, names=inst.names,
    )


def as_policy(policy) -> RisingPolicy:
    """A policy object as is; a registered name as that policy with default parameters."""
    if isinstance(policy, str):
        return POLICIES[check_choice("policy", policy, sorted(POLICIES))]()
    if not isinstance(policy, RisingPolicy):
        raise ValueError(f"policy={policy!r} is not allowed: expected a RisingPolicy such as CureUCB() "
                         f"or a registered name such as 'CURE-UCB'")
    return policy
