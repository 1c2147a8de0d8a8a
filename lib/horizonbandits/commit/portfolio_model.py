"""The concave-commitment model of section 6.2: a portfolio problem, its regret, its simulator and grid.


Model (problem (6) of the paper). K arms, experiment length N, horizon T. A pull of arm i yields an
outcome with d + 1 coordinates: an experiment-phase reward f in {0, 1}, Bernoulli(mu_f[i]), and an
outcome vector in [0, 1]^d, ``clip(loc[:, i] + noise_sd * Z, 0, 1)`` with Z standard normal and
independent coordinates (our choice; the paper does not state its own). The
experiment phase is scored by f; the commitment phase by a concave g of the average outcome vector
of rounds N+1..T (:class:`~horizonbandits.commit.portfolio.ConcaveReward`).

Clipping moves the mean of a coordinate whose location is within a few noise_sd of 0 or 1, so the
true outcome means are the clipped-normal means (:func:`clipped_normal_moments`, closed form), and
every benchmark (optimal portfolio, regret) uses them, never the locations.

Regret (the paper's definition for this model, section 6.2), with M the true outcome means,
OPT_g = max_x g(M x) and x the committed portfolio:

    REG = sum_{t<=N} (mu_f* - mu_f(I_t)) + (T - N) (OPT_g - E[g(average commitment outcome)])
        = experiment_regret + commitment_regret + sampling_cost,

    commitment_regret = (T - N) (OPT_g - g(M x))            (the fluid loss of the portfolio)
    sampling_cost     = (T - N) (g(M x) - E[g(Y_bar)])      (Jensen gap of executing it)

Y_bar, the average commitment outcome, has mean M x and covariance Sigma_x / (T - N): with
``execution="sampled"`` (the paper's ROSCOC: every commitment round draws an arm from x)
Sigma_x = sum_i x_i E[o o^T | i] - (M x)(M x)^T; with ``execution="proportional"`` (a fixed share
x_i of the rounds to arm i) Sigma_x = sum_i x_i diag(var_i). For the quadratic reward the gap is
tr(A Sigma_x) exactly, a constant (at most d / 4 when A = I) that no policy can avoid; ``sampling_cost`` keeps it
apart so that the commitment loss is visible on its own. Everything is pseudo-regret (expectations
given the policy's choices), so the commitment phase is never simulated round by round.

Simulation. Per seed index s, arm i's f-draws come from ``SeedSequence(seed, spawn_key=(s, 0, i))``
and its outcome vectors from ``spawn_key=(s, 2, i)``, indexed by pull number (common random
numbers: every policy sees the same n-th pull of arm i); the policy's own stream has spawn key
(s, 1). Seeds run in chunks with joblib; results do not depend on ``n_jobs``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, partial

import numpy as np
from scipy.stats import norm

from .. import seeds
from ..errors import check_choice, check_int, check_real
from ..results import CommitmentResult, run_seeds
from .portfolio import ConcaveReward, QuadraticReward, portfolio_solve_exact, solver_for


def clipped_normal_moments(loc, sd):
    """Mean and variance of clip(loc + sd Z, 0, 1), Z standard normal, elementwise (closed form).

    With a = -loc/sd, b = (1 - loc)/sd and P = Phi(b) - Phi(a): E = (1 - Phi(b)) + loc P +
    sd (phi(a) - phi(b)) and E[X^2] = (1 - Phi(b)) + loc^2 P + 2 loc sd (phi(a) - phi(b)) +
    sd^2 (P + a phi(a) - b phi(b)). sd = 0 gives clip(loc, 0, 1) and variance 0.
    """
    loc = np.asarray(loc, dtype=float)
    if sd == 0:
        return np.clip(loc, 0.0, 1.0), np.zeros_like(loc)
    a, b = -loc / sd, (1.0 - loc) / sd
    upper = norm.sf(b)
    inside = norm.cdf(b) - norm.cdf(a)
    dphi = norm.pdf(a) - norm.pdf(b)
    mean = upper + loc * inside + sd * dphi
    second = upper + loc ** 2 * inside + 2 * loc * sd * dphi + sd ** 2 * (inside + a * norm.pdf(a) - b * norm.pdf(b))
    return mean, np.clip(second - mean ** 2, 0.0, None)


class PortfolioProblem:
    """A concave-commitment problem: arms' f-means and outcome locations, a concave g, N and T.

    mu_f : (K,) Bernoulli means of the experiment-phase reward f, in [0, 1].
    loc : (d, K) outcome locations (the paper's o_i, before noise and clipping), in [0, 1].
    reward : the commitment reward g (``QuadraticReward(c, A)`` for section 7.3).
    noise_sd : standard deviation of the Gaussian outcome noise before clipping to [0, 1].
    execution : "sampled" (each commitment round draws an arm from the portfolio, as ROSCOC's
        "uniform sampling from the execution path") or "proportional" (fixed shares).
    """

    def __init__(self, mu_f, loc, reward: ConcaveReward, N: int, T: int, noise_sd: float = 0.1,
                 execution: str = "sampled", names=None):
        mu_f = np.asarray(mu_f, dtype=float)
        if mu_f.ndim != 1 or mu_f.size < 2 or not np.all((mu_f >= 0) & (mu_f <= 1)):
            raise ValueError(f"mu_f={mu_f.tolist()!r} is not allowed: expected K >= 2 means in [0, 1]")
        loc = np.asarray(loc, dtype=float)
        if loc.ndim != 2 or loc.shape[1] != mu_f.size or not np.all((loc >= 0) & (loc <= 1)):
            raise ValueError(f"loc of shape {loc.shape} is not allowed: expected a d x {mu_f.size} matrix "
                             "with entries in [0, 1] (one column per arm)")
        if not isinstance(reward, ConcaveReward) or reward.d != loc.shape[0]:
            raise ValueError(f"reward={reward!r} is not allowed: expected a ConcaveReward on {loc.shape[0]} "
                             "coordinates (d = rows of loc)")
        self.T = check_int("T", T, 2)
        self.N = check_int("N", N, 1, self.T - 1)
        self.noise_sd = check_real("noise_sd", noise_sd, 0.0)
        self.execution = check_choice("execution", execution, ("sampled", "proportional"))
        self.mu_f, self.loc, self.reward = mu_f, loc, reward
        self.names = tuple(names) if names is not None else tuple(f"arm {i + 1}" for i in range(mu_f.size))
        if len(self.names) != mu_f.size:
            raise ValueError(f"names={names!r} is not allowed: expected {mu_f.size} names")

    K = property(lambda self: self.mu_f.size)
    d = property(lambda self: self.loc.shape[0])

    @cached_property
    def _moments(self):
        return clipped_normal_moments(self.loc, self.noise_sd)

    @property
    def outcome_mean(self) -> np.ndarray:
        """(d, K) true outcome means M (clipped-normal means)."""
        return self._moments[0]

    @property
    def outcome_var(self) -> np.ndarray:
        """(d, K) outcome variances per coordinate."""
        return self._moments[1]

    @cached_property
    def _optimum(self):
        # The exact active-set solver when it applies (quadratic g with A positive definite, few
        # arms): the optimum then has exact zeros instead of the interior point's 1e-4 weights.
        r = self.reward
        if isinstance(r, QuadraticReward) and self.K <= 12 and np.linalg.eigvalsh(r.A).min() > 1e-9:
            return portfolio_solve_exact(self.outcome_mean, r.c, r.A)
        return solver_for(r, self.K).solve(self.outcome_mean)

    @property
    def optimal_portfolio(self) -> np.ndarray:
        return self._optimum[0]

    @property
    def optimal_value(self) -> float:
        """OPT_g = max over the simplex of g(M x)."""
        return self._optimum[1]

    def experiment_regret(self, pulls) -> np.ndarray:
        pulls = np.asarray(pulls, dtype=float)
        return pulls @ (self.mu_f.max() - self.mu_f)

    def commitment_regret(self, x) -> np.ndarray:
        x = np.atleast_2d(np.asarray(x, dtype=float))
        value = self.reward.value(x @ self.outcome_mean.T)
        return np.maximum((self.T - self.N) * (self.optimal_value - value), 0.0).reshape(-1)

    def execution_covariance(self, x) -> np.ndarray:
        """Sigma_x: (T - N) times the covariance of the average commitment outcome under x."""
        x = np.asarray(x, dtype=float)
        M, V = self.outcome_mean, self.outcome_var
        if self.execution == "proportional":
            return np.diag(V @ x)
        second = np.diag(V @ x) + (M * x) @ M.T
        m = M @ x
        return second - np.outer(m, m)

    def sampling_cost(self, x) -> np.ndarray:
        x = np.atleast_2d(np.asarray(x, dtype=float))
        n = self.T - self.N
        return np.array([n * self.reward.average_gap(self.execution_covariance(xi) / n) for xi in x])

    def regret_parts(self, pulls, x) -> dict:
        pulls, x = np.atleast_2d(pulls), np.atleast_2d(x)
        parts = dict(experiment=self.experiment_regret(pulls), commitment=self.commitment_regret(x),
                     sampling=self.sampling_cost(x))
        parts["total"] = parts["experiment"] + parts["commitment"] + parts["sampling"]
        return parts

    def draw(self, seed: int = 0, s: int = 0, n_max: int | None = None) -> PortfolioTables:
        """Observation tables of seed index s, ``n_max`` pulls per arm (default N)."""
        n_max = self.N if n_max is None else check_int("n_max", n_max, 1)
        F = np.empty((self.K, n_max))
        Y = np.empty((self.K, n_max, self.d))
        for i in range(self.K):
            u = np.random.default_rng(seeds.arm_stream(seed, s, i)).random(n_max)
            F[i] = u < self.mu_f[i]
            Y[i] = self._draw_outcomes(np.random.default_rng(seeds.outcome_stream(seed, s, i)), i, n_max)
        return PortfolioTables(F, Y)

    def _draw_outcomes(self, rng: np.random.Generator, i: int, n_max: int) -> np.ndarray:
        """``n_max`` outcome vectors of arm i: loc plus Gaussian noise, clipped to [0, 1]."""
        z = rng.standard_normal((n_max, self.d))
        return np.clip(self.loc[:, i] + self.noise_sd * z, 0.0, 1.0)

    def __repr__(self) -> str:
        return (f"PortfolioProblem(K={self.K}, d={self.d}, N={self.N}, T={self.T}, noise_sd={self.noise_sd}, "
                f"reward={self.reward!r})")


class PortfolioTables:
    """One seed's draws: ``F[i, n]`` the f-reward and ``Y[i, n]`` the outcome vector of arm i's (n+1)-th pull.

    ``CF[i, n]`` = sum of the first n f-rewards of arm i (leading 0), for O(1) empirical means.
    """

    def __init__(self, F, Y):
        self.F = np.ascontiguousarray(F, dtype=np.float64)
        self.Y = np.ascontiguousarray(Y, dtype=np.float64)

    @cached_property
    def CF(self) -> np.ndarray:
        out = np.zeros((self.F.shape[0], self.F.shape[1] + 1))
        np.cumsum(self.F, axis=1, out=out[:, 1:])
        return out

    def outcome_means(self, pulls) -> np.ndarray:
        """(d, K) empirical outcome means of the first pulls[i] pulls of each arm (0.5 when unpulled)."""
        return np.stack([self.Y[i, :n].mean(axis=0) if n > 0 else np.full(self.Y.shape[2], 0.5)
                         for i, n in enumerate(pulls)], axis=1)


@dataclass
class PolicyRun:
    """What a portfolio policy returns for one seed: pulls per arm over the N experiment rounds,
    the committed portfolio, and policy-specific details (e.g. Stage-I length, number of solves)."""

    pulls: np.ndarray
    portfolio: np.ndarray
    info: dict = field(default_factory=dict)


def policy_stream_seed(seed: int, s: int) -> int:
    """64-bit seed of the policy's own random stream for seed index s (spawn key (s, 1))."""
    return seeds.policy_stream_seed(seed, s)


def run_seed(problem: PortfolioProblem, policy, seed: int = 0, s: int = 0, trace: bool = False) -> PolicyRun:
    run = policy.run(problem, problem.draw(seed, s), policy_stream_seed(seed, s), trace=trace)
    if run.pulls.sum() != problem.N:
        raise RuntimeError(f"{policy!r} made {run.pulls.sum()} pulls, expected N = {problem.N}")
    return run


@dataclass(repr=False)
class PortfolioRunResult(CommitmentResult):
    """Outcome of :func:`simulate`, one entry per seed (regret split as in the module docstring).

    The first six fields (policy, N, T, regret, experiment_regret, commitment_regret) are
    ``results.CommitmentResult``'s; regret = experiment_regret + commitment_regret + sampling_cost.
    """

    sampling_cost: np.ndarray
    pulls: np.ndarray
    portfolios: np.ndarray
    info: list


def _run_chunk(problem, policy, seed, indices, progress=False):
    return run_seeds(lambda s: run_seed(problem, policy, seed, s), indices, desc=getattr(policy, "name", ""),
                     progress=progress)


def simulate(problem: PortfolioProblem, policy, n_seeds: int = 1, seed: int = 0, n_jobs: int = 1,
             progress: bool = False) -> PortfolioRunResult:
    """Run ``policy`` on ``problem`` for ``n_seeds`` seed indices 0..n_seeds-1 (joblib with ``n_jobs`` > 1).

    Seed index s always gets the same tables and policy stream, so the result does not depend on
    ``n_jobs`` or on how the seeds are chunked. ``progress`` shows a bar over the seeds (with ``n_jobs`` = 1).
    """
    if not isinstance(problem, PortfolioProblem):
        raise ValueError(f"problem={problem!r} is not allowed: expected a PortfolioProblem")
    if not callable(getattr(policy, "run", None)):
        raise ValueError(f"policy={policy!r} is not allowed: expected a portfolio policy such as ROSCOC() or UCBPortfolio()")
    n_seeds = check_int("n_seeds", n_seeds, 1)
    seed = check_int("seed", seed, 0)
    n_jobs = check_int("n_jobs", n_jobs, 1)
    if n_jobs == 1 or n_seeds == 1:
        runs = _run_chunk(problem, policy, seed, range(n_seeds), progress)
    else:
        from joblib import Parallel, delayed
        chunks = [c for c in np.array_split(np.arange(n_seeds), min(n_seeds, 4 * n_jobs)) if c.size]
        parts = Parallel(n_jobs=n_jobs)(delayed(_run_chunk)(problem, policy, seed, c.tolist()) for c in chunks)
        runs = [r for part in parts for r in part]
    pulls = np.array([r.pulls for r in runs])
    portfolios = np.array([r.portfolio for r in runs])
    parts = problem.regret_parts(pulls, portfolios)
    return PortfolioRunResult(
        policy=getattr(policy, "label", type(policy).__name__), N=problem.N, T=problem.T,
        regret=parts["total"], experiment_regret=parts["experiment"], commitment_regret=parts["commitment"],
        sampling_cost=parts["sampling"], pulls=pulls, portfolios=portfolios, info=[r.info for r in runs])


def _portfolio_grid(problems, policies, n_seeds: int, seed: int = 0, n_jobs: int = 1,
                    progress: bool = True, *, backend: str | None = None, address: str | None = None,
                    cache: bool = True, cache_dir=None, chunk_size: int = 10):
    """The portfolio model's grid (called through ``experiments.run_grid``): one row per (problem, policy,
    seed index) for each of ``problems``, in that order.

    Columns: T, N, policy, s, regret, experiment, commitment, sampling, x_1..x_K (the committed
    portfolio), n_1..n_K (experiment pulls), loss_per_round (OPT_g - g(M x)), stage1_rounds (NaN for policies without Stage I),
    seconds (wall time of the (problem, policy)'s runs, summed over its seeds and repeated on its rows). Every
    policy sees the same tables for a given (problem, s): comparisons are paired.

    One task per (problem, policy, ``chunk_size`` seeds), on ``backend`` ("sequential", "loky" or "dask";
    default: sequential when ``n_jobs`` is 1, loky with ``n_jobs`` processes otherwise; ``$HB_DASK_ADDRESS``
    sends it to a cluster), with the resumable on-disk cache of the rising grid (``cache``, ``cache_dir``). A
    task returns each seed's pulls and portfolio; the regret is computed here over all the seeds at once,
    as :func:`simulate` does, so the numbers do not depend on the backend, the chunks or the cache.
    ``progress`` (on by default): the grid's bar over its tasks, then one line per (problem, policy) with its mean regret.
    """
    import pandas as pd

    from ..compute.cache import code_digest, digest
    from ..compute.tasks import Task, fingerprint, run_cached
    n_seeds = check_int("n_seeds", n_seeds, 1)
    seed = check_int("seed", seed, 0)
    chunk_size = check_int("chunk_size", chunk_size, 1)
    n_jobs = check_int("n_jobs", n_jobs)
    backend = backend if backend is not None else ("sequential" if n_jobs == 1 else "loky")
    policies = list(policies)
    for policy in policies:
        if not callable(getattr(policy, "run", None)):
            raise ValueError(f"policy={policy!r} is not allowed: expected a portfolio policy such as ROSCOC() or UCBPortfolio()")
    problems = list(problems)
    for i, problem in enumerate(problems):
        if not isinstance(problem, PortfolioProblem):
            raise ValueError(f"problems[{i}]={problem!r} is not allowed: expected a PortfolioProblem")
    chunks = [(s0, min(s0 + chunk_size, n_seeds)) for s0 in range(0, n_seeds, chunk_size)]
    code = code_digest("commit")
    plan, tasks = [], []
    for problem in problems:
        problem_id = fingerprint(problem)
        for policy in policies:
            plan.append((problem, policy))
            policy_id = fingerprint(policy)
            for s0, s1 in chunks:
                tasks.append(Task(key=digest("portfolio_grid/1", code, problem_id, policy_id, seed, (s0, s1)),
                                  fn=_portfolio_task, args=(problem, policy, seed, s0, s1),
                                  cost=float(s1 - s0) * problem.T * problem.K,
                                  check=partial(_check_entry, n=s1 - s0, K=problem.K, N=problem.N)))
    outs = run_cached(tasks, backend=backend, n_jobs=n_jobs, address=address, cache=cache, cache_dir=cache_dir,
                      progress=progress, what="portfolio_grid")
    frames = []
    for j, (problem, policy) in enumerate(plan):
        parts_of = outs[j * len(chunks):(j + 1) * len(chunks)]
        pulls = np.concatenate([o["pulls"] for o in parts_of])
        portfolios = np.concatenate([o["portfolios"] for o in parts_of])
        parts = problem.regret_parts(pulls, portfolios)
        seconds = float(sum(o["seconds"].sum() for o in parts_of))
        label = getattr(policy, "label", type(policy).__name__)
        frame = pd.DataFrame(dict(
            T=problem.T, N=problem.N, policy=label, s=np.arange(n_seeds), regret=parts["total"],
            experiment=parts["experiment"], commitment=parts["commitment"], sampling=parts["sampling"],
            loss_per_round=parts["commitment"] / (problem.T - problem.N),
            stage1_rounds=np.concatenate([o["stage1_rounds"] for o in parts_of]), seconds=seconds))
        for i in range(problem.K):
            frame[f"x_{i + 1}"] = portfolios[:, i]
        for i in range(problem.K):
            frame[f"n_{i + 1}"] = pulls[:, i]
        frames.append(frame)
        if progress:
            print(f"T={problem.T:6d} {label:32s} mean regret {float(np.mean(parts['total'])):9.2f}  ({seconds:.1f} s)",
                  flush=True)
    return pd.concat(frames, ignore_index=True)


def _portfolio_task(problem: PortfolioProblem, policy, seed: int, s0: int, s1: int) -> dict:
    """Seeds s0..s1-1 of one (problem, policy): pulls, portfolios, Stage-I lengths, seconds per seed."""
    import time
    runs, seconds = [], []
    for s in range(s0, s1):
        t0 = time.perf_counter()
        runs.append(run_seed(problem, policy, seed, s))
        seconds.append(time.perf_counter() - t0)
    return {"pulls": np.array([r.pulls for r in runs]), "portfolios": np.array([r.portfolio for r in runs]),
            "stage1_rounds": np.array([r.info.get("stage1_rounds", np.nan) for r in runs], dtype=float),
            "seconds": np.array(seconds)}


def _check_entry(arrays: dict, n: int, K: int, N: int) -> str | None:
    """Why a cached chunk cannot be runs of this problem, or None."""
    if set(arrays) != {"pulls", "portfolios", "stage1_rounds", "seconds"}:
        return f"arrays {sorted(arrays)} instead of pulls, portfolios, stage1_rounds, seconds"
    pulls, x = arrays["pulls"], arrays["portfolios"]
    if pulls.shape != (n, K) or pulls.dtype.kind not in "iu" or x.shape != (n, K) or x.dtype.kind != "f":
        return f"pulls {pulls.shape} {pulls.dtype} / portfolios {x.shape} {x.dtype}, expected ({n}, {K}) integers / floats"
    if pulls.min(initial=0) < 0 or not np.all(pulls.sum(axis=1) == N):
        return "pulls out of range"
    if not np.all(np.isfinite(x)) or arrays["stage1_rounds"].shape != (n,) or arrays["seconds"].shape != (n,):
        return "portfolios or per-seed values damaged"
    return None


def theorem63_rate(K: int, d: int, N, T, L: float):
    """The regret rate of Theorem 6.3 without logs: T L sqrt(K d / N) + sqrt(K N) + L^(2/3) (K d)^(1/3) (T - N)^(2/3)."""
    N, T = np.asarray(N, dtype=float), np.asarray(T, dtype=float)
    return T * L * np.sqrt(K * d / N) + np.sqrt(K * N) + L ** (2 / 3) * (K * d) ** (1 / 3) * (T - N) ** (2 / 3)


def theorem63_stage1_budget(K: int, d: int, N: int, T: int, L: float) -> float:
    """tau = min{N, (L^2 K d)^(1/3) (T - N)^(2/3)}: the Stage-I length that balances Theorem 6.3's terms.

    Our copy of the paper does not print the budget. Stage I of tau rounds costs at most tau in
    experiment regret and leaves a commitment loss of order (T - N) L sqrt(K d / tau) (the
    Agrawal-Devanur rate for the average outcome of tau rounds); equating the two gives
    tau = (L^2 K d)^(1/3) (T - N)^(2/3), and with that tau both are L^(2/3) (K d)^(1/3) (T - N)^(2/3),
    the last term of Theorem 6.3; capping at N gives its first term T L sqrt(K d / N).
    """
    return float(min(N, (L * L * K * d) ** (1 / 3) * (T - N) ** (2 / 3)))
