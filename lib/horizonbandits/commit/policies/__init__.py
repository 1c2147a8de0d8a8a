"""Experiment-then-commit policies: RAEC (Algorithm 1), its baselines, the section 6.1 policy, Successive Rejects
(the fixed-budget best-arm identification baseline for section 2.1's f = 0 reduction) and AdaptiveRAEC (ours)."""
from .adaptive_raec import AdaptiveRAEC
from .base import COMMIT_POLICIES, CommitPolicy, PortfolioPolicy, make_commit_policy
from .raec import RAEC, NoShiftElimination, stage2_targets
from .successive_rejects import SuccessiveRejects
from .ucb import UCBCommit
from .uniform import UniformCommit, round_robin_counts

__all__ = ["COMMIT_POLICIES", "CommitPolicy", "PortfolioPolicy", "make_commit_policy", "RAEC", "NoShiftElimination",
           "SuccessiveRejects", "UCBCommit", "UniformCommit", "stage2_targets", "round_robin_counts", "AdaptiveRAEC"]
