"""Experiment-then-commit policies: RAEC (Algorithm 1), its baselines, the section 6.1 policy and AdaptiveRAEC (ours)."""
from .adaptive_raec import AdaptiveRAEC
from .base import COMMIT_POLICIES, CommitPolicy, PortfolioPolicy, make_commit_policy
from .raec import RAEC, NoShiftElimination, stage2_targets
from .ucb import UCBCommit
from .uniform import UniformCommit, round_robin_counts

__all__ = ["COMMIT_POLICIES", "CommitPolicy", "PortfolioPolicy", "make_commit_policy", "RAEC", "NoShiftElimination", "UCBCommit",
           "UniformCommit", "stage2_targets", "round_robin_counts", "AdaptiveRAEC"]
