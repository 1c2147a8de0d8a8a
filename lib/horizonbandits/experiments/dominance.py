"""Theorem 5.2 of the CURE-UCB paper (uniform dominance on linear-then-flat instances), probed on many random instances.

Theorem 5.2: on every deterministic LTF instance and every horizon T, CURE-UCB with a unit window
(eps = 0), no bonus (sigma = 0) and one initialisation pull has pseudo-regret at most R-ed-UCB's
with the same settings. :func:`dominance_table` measures Reg(R-ed-UCB, T) - Reg(CURE-UCB, T) on
``n_instances`` random instances per probe at every horizon; the notebook ``uniform_dominance_ltf``
turns it into violations and claims. The probes (:data:`PROBES`):

- ``"theorem"``: the theorem's setting, saturation on integer pull counts (``ltf_random``'s default);
- ``"real-valued saturation"``: a_i = b_i / t_sat with t_sat real (appendix B.1.1 as written);
- ``"ties"``: plateaus and saturation counts on coarse grids, so that arms tie exactly;
- ``"eps > 0"`` (outside the theorem): windows eps = 1/4 with two initialisation pulls, noise-free;
- ``"noise"`` (outside the theorem): Gaussian noise ``noise_sigma`` and both policies' defaults,
  the regrets averaged over ``noise_seeds`` seeds (common random numbers) before they are compared.

How the work is organised: the instances of a probe are drawn one after the other from one
generator, ``default_rng([seed, position of the probe in probes])``. The caller walks that sequence
cheaply (each instance's draws, with a mean table of one column) and hands each task the
generator's state at the first instance of its chunk; the task draws the chunk's instances in full
from there, so every instance is the one a single loop over the probe would draw. A task runs
R-ed-UCB (horizon-agnostic) once to the largest horizon, read off at every horizon, and CURE-UCB
(horizon-aware) once per horizon, for each seed index, and returns the regrets. Tasks go through
``runner.run_cached``: cached on disk (the key holds the code digest and every input that sets the
numbers), resumable, on loky, dask or in process; the numbers depend neither on the chunking nor on
the backend.
"""
from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from .. import seeds
from ..errors import check_choice, check_int, check_real
from ..rising.instances import RisingInstance, ltf_random, ltf_saturating
from ..rising.observations import checked_reward_source
from ..rising.oracle import collected_value
from ..rising.policies import CureUCB, RedUCB
from ..compute.cache import code_digest, digest
from ..compute.executor import workers_for
from ..compute.tasks import Task, fingerprint, run_cached

PROBES = ("theorem", "real-valued saturation", "ties", "eps > 0", "noise")
# The probes outside the theorem's hypotheses: each asks whether CURE-UCB ever loses there, which one violation decides.
OUTSIDE = ("eps > 0", "noise")
# A pair (instance, T) violates dominance when Reg(R-ed) - Reg(CURE) is below minus this (float round-off).
VIOLATION_TOL = 1e-9
COLUMNS = ["probe", "instance", "K", "T", "cure", "red", "diff", "plateaus", "saturation", "slopes"]
# The deterministic setting of the proofs: unit window, no bonus, X_i(0) := mu_i(0).
DETERMINISTIC = dict(eps=0.0, sigma=0.0, init_pulls=1)


# --------------------------------------------------------------------------------------------
# The probes
# --------------------------------------------------------------------------------------------

def probe_instance(probe: str, rng: np.random.Generator, T_ref: int, T_max: int | None = None) -> RisingInstance:
    """The next random noise-free LTF instance of ``probe`` from ``rng`` (mean tables to ``T_max``, default T_ref).

    The draws taken from ``rng`` do not depend on ``T_max``: a table of one column (``T_max=1``) is a
    cheap way to step over an instance.
    """
    T_max = T_ref if T_max is None else T_max
    if probe == "real-valued saturation":
        return ltf_random(rng, T_ref=T_ref, integer_saturation=False, T_max=T_max, noise=0.0)
    if probe == "ties":
        K = int(rng.integers(2, 6))
        b = rng.choice([0.25, 0.5, 0.75, 1.0], size=K)
        c = rng.choice(np.arange(1, 11) * (T_ref // 10), size=K)
        return ltf_saturating(b, c, T_max=T_max, noise=0.0)
    return ltf_random(rng, T_ref=T_ref, T_max=T_max, noise=0.0)


def probe_policies(probe: str, noise_sigma: float) -> tuple[CureUCB, RedUCB]:
    """(CURE-UCB, R-ed-UCB) as the probe runs them."""
    if probe == "eps > 0":
        return CureUCB(eps=0.25, sigma=0.0, init_pulls=2), RedUCB(eps=0.25, sigma=0.0, init_pulls=2)
    if probe == "noise":
        return CureUCB(sigma=noise_sigma), RedUCB(sigma=noise_sigma)
    return CureUCB(**DETERMINISTIC), RedUCB(**DETERMINISTIC)


def probe_noise(probe: str, noise_sigma: float, noise_seeds: int) -> tuple[float, int]:
    """(Gaussian noise of the rewards, number of seeds): only the noise probe has noise and several seeds."""
    return (noise_sigma, noise_seeds) if probe == "noise" else (0.0, 1)


def horizons_of(T_ref: int, horizon_fractions) -> list[int]:
    """The horizons: each fraction of T_ref rounded down, at least 2, sorted, without repeats."""
    return sorted({max(int(f * T_ref), 2) for f in horizon_fractions})


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------

def dominance_table(probes=PROBES, n_instances: int = 200, T_ref: int = 20_000,
                    horizon_fractions=(0.002, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0), noise_sigma: float = 0.01,
                    noise_seeds: int = 10, seed: int = 0, *, stop_when_decided=(), backend: str = "loky",
                    n_jobs: int = -1, cache: bool = True, cache_dir=None, chunk_size: int = 25, progress: bool = True,
                    address: str | None = None) -> pd.DataFrame:
    """One row per (probe, instance, T): the regrets of CURE-UCB (``cure``) and R-ed-UCB (``red``),
    ``diff`` = red - cure, and the instance (K; plateaus b_i, saturation counts c_i = the first n with
    mu_i(n) >= b_i, slopes mu_i(1), as text).

    ``chunk_size`` instances of a probe make one task. ``backend``, ``n_jobs``, ``address``, ``cache``,
    ``cache_dir`` and ``progress`` are those of ``experiments.run_grid``; the numbers depend on none of them.

    ``stop_when_decided``: probes (of :data:`OUTSIDE`) that ask only whether CURE-UCB ever loses. Their chunks
    run in instance order, and a probe stops after the first chunk at which the 95 % Wilson interval of the
    share of its instances with a violation (:data:`VIOLATION_TOL`) excludes 0, that is at its first
    violation; a probe without one runs all ``n_instances``. The rule is read at chunk boundaries, so the
    table does not depend on the backend or the workers (chunks run past the stop are cached, not shown).
    """
    probes = [str(check_choice("probes", p, PROBES)) for p in ([probes] if isinstance(probes, str) else list(probes))]
    if not probes or len(set(probes)) != len(probes):
        raise ValueError(f"probes={probes!r} is not allowed: expected distinct probes among {list(PROBES)!r}")
    n_instances = check_int("n_instances", n_instances, 1)
    T_ref = check_int("T_ref", T_ref, 20)
    fractions = [check_real("horizon_fractions", f, 0.0, 1.0) for f in horizon_fractions]
    if not fractions:
        raise ValueError("horizon_fractions=[] is not allowed: expected at least one fraction of T_ref")
    horizons = horizons_of(T_ref, fractions)
    noise_sigma = check_real("noise_sigma", noise_sigma, 0.0)
    noise_seeds = check_int("noise_seeds", noise_seeds, 1)
    seed = check_int("seed", seed, 0)
    chunk_size = check_int("chunk_size", chunk_size, 1)
    sequential = [str(check_choice("stop_when_decided", p, OUTSIDE)) for p in
                  ([stop_when_decided] if isinstance(stop_when_decided, str) else list(stop_when_decided))]
    plan, tasks = plan_tasks(probes, n_instances, T_ref, horizons, noise_sigma, noise_seeds, seed, chunk_size)
    run = dict(backend=backend, n_jobs=n_jobs, address=address, cache=cache, cache_dir=cache_dir, progress=progress)
    at_once = [i for i, (probe, _, _) in enumerate(plan) if probe not in sequential]
    outs = dict(zip(at_once, run_cached([tasks[i] for i in at_once], what="uniform dominance", **run)))
    kept = list(at_once)
    for probe in sequential:
        if probe in probes:
            chunks = [i for i, (p, _, _) in enumerate(plan) if p == probe]
            kept += _run_until_decided(chunks, tasks, outs, run, max(2, workers_for(n_jobs)))
    kept.sort()
    return assemble([plan[i] for i in kept], [outs[i] for i in kept], horizons)


def _run_until_decided(chunks: list, tasks: list, outs: dict, run: dict, per_round: int) -> list:
    """Run ``chunks`` (indices into ``tasks``, in instance order) ``per_round`` at a time until one holds a
    violation; return the chunks kept (those up to and including it). ``outs`` receives their arrays."""
    for start in range(0, len(chunks), per_round):
        batch = chunks[start:start + per_round]
        outs.update(zip(batch, run_cached([tasks[i] for i in batch], what="uniform dominance (until decided)", **run)))
        for j, i in enumerate(batch):
            if np.any(outs[i]["red"] - outs[i]["cure"] < -VIOLATION_TOL):
                return chunks[:start + j + 1]
    return chunks


def plan_tasks(probes: list, n_instances: int, T_ref: int, horizons: list, noise_sigma: float, noise_seeds: int,
               seed: int, chunk_size: int) -> tuple[list, list[Task]]:
    """The chunks ((probe, first instance, end) each) and their tasks. A task's cache key holds the code digest
    and all that sets its numbers: the probe and its position (its generator), the seed, T_ref, the chunk, the
    horizons, both policies, the noise and the number of seeds."""
    code = code_digest("rising")
    plan, tasks = [], []
    for index, probe in enumerate(probes):
        cure, red = probe_policies(probe, noise_sigma)
        noise, n_seeds = probe_noise(probe, noise_sigma, noise_seeds)
        for k0, state in chunk_states(probe, index, n_instances, T_ref, seed, chunk_size):
            k1 = min(k0 + chunk_size, n_instances)
            plan.append((probe, k0, k1))
            tasks.append(Task(
                key=digest("dominance/1", code, probe, index, seed, T_ref, k0, k1, horizons, fingerprint(cure),
                           fingerprint(red), noise, n_seeds),
                fn=probe_chunk, args=(probe, state, k1 - k0, T_ref, horizons, cure, red, noise, n_seeds, seed),
                cost=float((k1 - k0) * n_seeds * (sum(horizons) + max(horizons))),
                check=partial(check_chunk, n=k1 - k0, n_horizons=len(horizons))))
    return plan, tasks


def chunk_states(probe: str, index: int, n_instances: int, T_ref: int, seed: int, chunk_size: int):
    """(first instance, generator state there) for each chunk of the probe's instance sequence."""
    rng = np.random.default_rng([seed, index])
    out = []
    for k in range(n_instances):
        if k % chunk_size == 0:
            out.append((k, rng.bit_generator.state))
        probe_instance(probe, rng, T_ref, T_max=1)  # the draws of instance k, without its table
    return out


def probe_chunk(probe: str, state: dict, n: int, T_ref: int, horizons: list, cure: CureUCB, red: RedUCB,
                noise: float, n_seeds: int, seed: int) -> dict:
    """A task: the next ``n`` instances of the probe from the generator state ``state``, their regrets
    (``cure``, ``red``: n x len(horizons)) and what the table shows of them (K; plateaus, saturation
    counts and slopes of every arm, the instances' arms one after the other)."""
    rng = np.random.default_rng()
    rng.bit_generator.state = state
    out = {"cure": np.empty((n, len(horizons))), "red": np.empty((n, len(horizons))), "K": np.empty(n, dtype=np.int64)}
    plateaus, saturation, slopes = [], [], []
    for k in range(n):
        inst = probe_instance(probe, rng, T_ref)
        reg = instance_regrets(inst, cure, red, horizons, noise, n_seeds, seed)
        out["cure"][k], out["red"][k] = reg[:, 0], reg[:, 1]
        out["K"][k] = inst.K
        b = inst.means[:, -1]
        plateaus.append(b)
        saturation.append(np.argmax(inst.means >= b[:, None] - 1e-15, axis=1))
        slopes.append(inst.means[:, 1])
    out["plateaus"] = np.concatenate(plateaus)
    out["saturation"] = np.concatenate(saturation).astype(np.int64)
    out["slopes"] = np.concatenate(slopes)
    return out


def instance_regrets(inst: RisingInstance, cure: CureUCB, red: RedUCB, horizons: list, noise: float, n_seeds: int,
                     seed: int) -> np.ndarray:
    """Regret of CURE-UCB (column 0) and R-ed-UCB (column 1) at every horizon, averaged over seed indices 0..n_seeds-1.

    Seed index s draws the rewards of its own pulls (``reward_source(inst, seed, s, noise)``: the same
    numbers for both policies and every T) and R-ed-UCB is read off one run to the largest horizon.
    """
    best = inst.prefix[:, horizons].max(axis=0)  # optimal_value at each T: a max, exact
    checkpoints = np.array(horizons, dtype=np.int64)
    no_arms = np.empty(0, dtype=np.int64)
    out = np.zeros((len(horizons), 2))
    for s in range(n_seeds):
        obs = checked_reward_source(inst, noise, seed, s)
        stream = seeds.policy_stream_seed(seed, s)
        red_pulls = red.run_kernel(obs, horizons[-1], checkpoints, no_arms, stream)
        for j, T in enumerate(horizons):
            cure_pulls = cure.run_kernel(obs, T, checkpoints[j:j + 1], no_arms, stream)
            out[j, 0] += best[j] - collected_value(inst, cure_pulls[-1])
            out[j, 1] += best[j] - collected_value(inst, red_pulls[j])
    return out / n_seeds


def check_chunk(arrays: dict, n: int, n_horizons: int) -> str | None:
    """Why a cached chunk cannot be right (None when it can)."""
    names = {"cure", "red", "K", "plateaus", "saturation", "slopes"}
    if set(arrays) != names:
        return f"arrays {sorted(arrays)} instead of {sorted(names)}"
    for name in ("cure", "red"):
        a = arrays[name]
        if a.shape != (n, n_horizons) or a.dtype.kind != "f" or not np.all(np.isfinite(a)):
            return f"{name} of shape {a.shape} and type {a.dtype}, expected {(n, n_horizons)} finite floats"
    K = arrays["K"]
    if K.shape != (n,) or K.dtype.kind not in "iu" or K.min(initial=2) < 2:
        return f"K of shape {K.shape} and type {K.dtype}, expected {n} integers >= 2"
    for name in ("plateaus", "saturation", "slopes"):
        if arrays[name].shape != (int(K.sum()),):
            return f"{name} of shape {arrays[name].shape}, expected one entry per arm ({int(K.sum())},)"
    return None


def assemble(plan: list, outs: list, horizons: list) -> pd.DataFrame:
    """The table from the chunks' arrays, rows in (probe, instance, T) order."""
    frames = []
    n_h = len(horizons)
    for (probe, k0, k1), out in zip(plan, outs):
        n = k1 - k0
        K = out["K"]
        ends = np.cumsum(K)[:-1]
        plateaus = [" ".join(f"{x:.4f}" for x in b) for b in np.split(out["plateaus"], ends)]
        saturation = [" ".join(str(int(x)) for x in c) for c in np.split(out["saturation"], ends)]
        slopes = [" ".join(f"{x:.3e}" for x in a) for a in np.split(out["slopes"], ends)]
        cure, red = out["cure"].ravel(), out["red"].ravel()
        frames.append(pd.DataFrame({
            "probe": probe, "instance": np.repeat(np.arange(k0, k1, dtype=np.int64), n_h),
            "K": np.repeat(K.astype(np.int64), n_h), "T": np.tile(np.array(horizons, dtype=np.int64), n),
            "cure": cure, "red": red, "diff": red - cure,
            "plateaus": np.repeat(np.array(plateaus, dtype=object), n_h),
            "saturation": np.repeat(np.array(saturation, dtype=object), n_h),
            "slopes": np.repeat(np.array(slopes, dtype=object), n_h)}))
    return pd.concat(frames, ignore_index=True)[COLUMNS]
