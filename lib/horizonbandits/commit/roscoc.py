"""Old import path of ROSCOC and UCB-Portfolio: they live in ``commit.policies.roscoc`` and
``commit.policies.ucb_portfolio``; every name this module provided is re-exported here."""
from .policies.roscoc import (STAGE1_STEPS, ROSCOC, _draw, _frank_wolfe_kernel, eliminate_on_f,
                              eliminate_on_f_reference, frank_wolfe_arm, reward_gradient, round_robin_fill)
from .policies.ucb_portfolio import UCBPortfolio, _ucb_kernel, ucb_f_counts, ucb_f_reference

__all__ = ["ROSCOC", "UCBPortfolio", "STAGE1_STEPS", "eliminate_on_f", "eliminate_on_f_reference", "frank_wolfe_arm",
           "reward_gradient", "round_robin_fill", "ucb_f_counts", "ucb_f_reference", "_draw", "_frank_wolfe_kernel",
           "_ucb_kernel"]
