"""Run an experiment-then-commit policy on a problem over many seeds: regret per run and its two parts."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import check_choice, check_int
from ..results import CommitmentResult
from .policies.base import CommitPolicy
from .problem import CommitProblem
from .sampling import draw_tables, environment_stream_seeds, policy_stream_seeds


@dataclass(repr=False)
class CommitResult(CommitmentResult):
    """Outcome of ``simulate``: one entry per run (seed index).

    regret = experiment_regret + commitment_regret (equation 2 of the paper, pseudo-regret with the means):
    experiment_regret = sum_t (mu_f* - mu_f(I_t)) = pulls @ gaps_f, commitment_regret = (T - N)(mu_g* - mu_g(J)).
    pulls : (n_seeds, K) experiment pulls per arm; committed : (n_seeds,) committed arm J (0-based).
    The first six fields (policy, N, T and the regrets) are ``results.CommitmentResult``'s.
    """

    committed: np.ndarray
    pulls: np.ndarray
    best_f: int
    best_g: int

    def commit_rate(self) -> np.ndarray:
        """Share of runs committing to each arm."""
        return np.bincount(self.committed, minlength=self.pulls.shape[1]) / self.n_seeds

    def _summary(self) -> list[str]:
        return [f"N={self.N}", f"T={self.T}", f"runs={self.n_seeds}",
                f"mean regret={self.mean_regret:.4g} = {self.experiment_regret.mean():.4g} (experiment) + "
                f"{self.commitment_regret.mean():.4g} (commitment)"]


def simulate(problem: CommitProblem, policy: CommitPolicy, n_seeds: int = 1, seed: int = 0,
             draws: str = "batch") -> CommitResult:
    """Simulate ``policy`` on ``problem`` for ``n_seeds`` independent runs.

    Run s uses seeds spawned from ``SeedSequence(seed)`` with key s (see ``sampling``), so its result does
    not depend on how many runs are made together. ``draws="batch"`` (default) draws elimination epochs as
    block sums and is the fast path; ``draws="table"`` pre-draws every pull's outcome (common random
    numbers across policies, exact agreement with the references; slower, memory K x N per run).

    A portfolio problem (``portfolio_instances.section73``, ``portfolio_model.PortfolioProblem``) is handed to
    ``portfolio_model.simulate`` with its ROSCOC / UCBPortfolio policies, so one entry point serves both models.
    """
    if type(problem).__name__ == "PortfolioProblem":
        from .portfolio_model import simulate as simulate_portfolio
        return simulate_portfolio(problem, policy, n_seeds=n_seeds, seed=seed)
    if not isinstance(problem, CommitProblem):
        raise ValueError(f"problem={problem!r} is not allowed: expected a CommitProblem")
    if not isinstance(policy, CommitPolicy):
        raise ValueError(f"policy={policy!r} is not allowed: expected a CommitPolicy such as RAEC()")
    n_seeds = check_int("n_seeds", n_seeds, 1)
    seed = check_int("seed", seed, 0)
    check_choice("draws", draws, ("batch", "table"))
    pol_seeds = policy_stream_seeds(seed, n_seeds)
    if draws == "batch":
        pulls, committed = policy.run_batch(problem, environment_stream_seeds(seed, n_seeds), pol_seeds)
    else:
        pulls = np.zeros((n_seeds, problem.K), dtype=np.int64)
        committed = np.zeros(n_seeds, dtype=np.int64)
        for s in range(n_seeds):
            F, G = draw_tables(problem, problem.N, seed, s)
            pulls[s], committed[s] = policy.run_table(problem, F, G, int(pol_seeds[s]))
    experiment, commitment = problem.regret_parts(pulls, committed)
    return CommitResult(policy=policy.label, N=problem.N, T=problem.T, regret=experiment + commitment,
                        experiment_regret=experiment, commitment_regret=commitment, committed=committed,
                        pulls=pulls, best_f=problem.best_f, best_g=problem.best_g)


def reference_runs(problem: CommitProblem, policy: CommitPolicy, n_seeds: int = 1, seed: int = 0):
    """The per-round reference on the ``draws="table"`` inputs: (pulls (n, K), committed (n,))."""
    n_seeds = check_int("n_seeds", n_seeds, 1)
    pol_seeds = policy_stream_seeds(seed, n_seeds)
    pulls = np.zeros((n_seeds, problem.K), dtype=np.int64)
    committed = np.zeros(n_seeds, dtype=np.int64)
    for s in range(n_seeds):
        F, G = draw_tables(problem, problem.N, seed, s)
        arms, committed[s] = policy.reference(problem, F, G, int(pol_seeds[s]))[:2]
        pulls[s] = np.bincount(arms, minlength=problem.K)
    return pulls, committed


def stage1_survivors(problem: CommitProblem, policy: CommitPolicy, n_seeds: int = 1, seed: int = 0,
                     draws: str = "batch") -> np.ndarray:
    """The g-set A_g of each run when Stage I ends, for the very runs ``simulate`` makes with the same
    arguments: (n_seeds, K) booleans (row s is run s; RAEC's commitment is drawn from it).

    For the elimination policies (``RAEC``; ``NoShiftElimination`` has no Stage I, so every arm survives).
    Section 3.1's guarantee is about this set: the g-best arm stays in it, and every arm in it is within
    2 eps of the g-best with high probability (our reading of Lemma 4.5's commitment term).
    """
    if not hasattr(policy, "run_batch_sets"):
        raise ValueError(f"policy={policy!r} is not allowed: expected an elimination policy such as RAEC() "
                         f"(it has a Stage I whose surviving set can be read)")
    n_seeds = check_int("n_seeds", n_seeds, 1)
    seed = check_int("seed", seed, 0)
    check_choice("draws", draws, ("batch", "table"))
    pol_seeds = policy_stream_seeds(seed, n_seeds)
    if draws == "batch":
        return policy.run_batch_sets(problem, environment_stream_seeds(seed, n_seeds), pol_seeds)[2]
    out = np.zeros((n_seeds, problem.K), dtype=bool)
    for s in range(n_seeds):
        F, G = draw_tables(problem, problem.N, seed, s)
        out[s] = policy.run_table_sets(problem, F, G, int(pol_seeds[s]))[2]
    return out
