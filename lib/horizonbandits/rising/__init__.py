"""Rising rested bandits with a known horizon (CURE-UCB paper, arXiv 2602.10727)."""
from .instances import RisingInstance, figure1, ltf, ltf_random, ltf_saturating, prop53
from .diagnostics import THEOREMS, DiagnosisReport, diagnose
from .observations import Observations, draw_observations, policy_stream_seed, reward_source
from .oracle import (collected_value, exhaustive_best_allocation, optimal_arm, optimal_value, pseudo_regret,
                     regret_curve, switch_horizons)
from .policies import POLICIES, CureUCB, RedUCB, RisingPolicy, make_policy
from .simulate import RunResult, run_seed, simulate
from .generators import concave_random
from .imdb import PAPER_ARMS  # the loader is rising.imdb.imdb: a function named like its module would hide the module
from .llm import llm_rewards

__all__ = [
    "RisingInstance", "figure1", "ltf", "ltf_random", "ltf_saturating", "prop53",
    "THEOREMS", "DiagnosisReport", "diagnose", "Observations", "draw_observations", "reward_source", "policy_stream_seed",
    "collected_value", "exhaustive_best_allocation", "switch_horizons", "optimal_arm", "optimal_value", "pseudo_regret",
    "regret_curve",
    "POLICIES", "CureUCB", "RedUCB", "RisingPolicy", "make_policy",
    "RunResult", "run_seed", "simulate",
    "concave_random", "PAPER_ARMS", "llm_rewards",
]
