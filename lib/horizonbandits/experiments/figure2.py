"""Figure 2 of paper A (sections 6.1 and 6.2) for any set of rising instances and policies.

``ltf_experiments`` and ``concave_experiments`` differ only in their instance family and the claims
they check; everything else is here, so that a user's own family goes through the same steps:

- :func:`describe` - how many instances, their K, and how often the optimal arm changes between the
  shortest and the longest horizon (the instances are interesting only if it does);
- :func:`plot_instances` - the mean curves of the first few instances, late bloomer and early
  peaker in black;
- :func:`run` - the grid (:func:`~horizonbandits.experiments.run_grid`), the per-instance means,
  the kernel seconds per policy, the mean regret against the horizon with bootstrap intervals
  (panel a / d), the pairwise win rates at ``win_rate_horizons`` (panels b, c / e, f) with the whole matrix
  summarised per policy (:func:`win_rate_summary`) and the paired
  differences against CURE-UCB; every table is saved as ``tables/<name>_<part>.csv`` and every
  figure as ``figures/<name>_<part>.png``. Returns a :class:`Figure2`.

The sliding-window readings (issue 27): :func:`window_params` sets the ``window_rule`` of every policy that
takes one (SW-UCB and SW-TS) in a notebook's ``policy_params``, and :func:`under_window_rule` reruns only
those under the other rule and puts their rows in place of the main grid's, on the same reward tables, so
that every claim can be judged under both rules (SW-KL-UCB's window, 252 rounds, never reads T under either).

The intervals: bootstrap over instances (``horizonbandits.stats``), seed 0, ``n_boot`` resamples.

For the ledger, on any grid table (the main run or a sweep's): :func:`instance_differences` (each
policy's regret minus the subject's, per instance, with a bootstrap interval over instances),
:func:`ordering_outcome` ("the subject is lowest at every horizon", read from those intervals) and
:func:`wins_outcome` ("the subject beats every other policy on most instances", from win rates with
their intervals).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..claims import rules
from ..rising.policies.sw_ucb import check_window_rule
from ..plotting import mean_band, policy_palette, save_figure, save_table, win_rate_heatmap
from .rising_grid import instance_set, make_policies, policy_settings
from ..stats import (Estimate, bootstrap_estimate, paired_differences, paired_gaps, regret_summary, win_rate_matrix,
                     win_rates)

REFERENCE = "CURE-UCB"


def has_window_rule(policy_class) -> bool:
    """Does the policy class take a ``window_rule`` (SW-UCB and SW-TS today; any sliding-window policy that
    gains the field is picked up without a list to keep)?"""
    from dataclasses import fields
    return any(f.name == "window_rule" for f in fields(policy_class))


def window_params(policies, policy_params, window_rule: str, reference_horizon: int | None = None) -> dict:
    """``policy_params`` with ``window_rule`` (and ``reference_horizon``, the horizon a fixed window is sized
    for: a notebook passes its family's reference horizon H) set for every policy of ``policies`` that takes
    one (:func:`has_window_rule`)."""
    from ..errors import check_choice
    from ..rising.policies import POLICIES
    from ..rising.policies.sw_ucb import WINDOW_RULES
    check_choice("window_rule", window_rule, WINDOW_RULES)
    out = {name: dict(kw) for name, kw in (policy_params or {}).items()}
    for name in policies:
        if name in POLICIES and has_window_rule(POLICIES[name]):
            out[name] = {**out.get(name, {}), "window_rule": window_rule}
            if reference_horizon is not None:
                out[name]["reference_horizon"] = reference_horizon
    return out


def under_window_rule(df: pd.DataFrame, instances, policies, horizons, n_seeds: int, rule: str, *, seed: int = 0,
                      **grid_options) -> pd.DataFrame:
    """The grid table ``df`` with the rows of SW-UCB and SW-TS replaced by runs under window rule ``rule``
    (the other policies' rows are kept: the reward tables depend only on instance and seed, so the pairing
    holds). ``df`` itself if neither policy is in the grid."""
    from . import run_grid
    swapped = {name: replace(pol, window_rule=rule) for name, pol in policies.items() if has_window_rule(type(pol))}
    if not swapped:
        return df
    extra = run_grid(instances, swapped, horizons, n_seeds, seed=seed, **grid_options)
    out = pd.concat([df[~df["policy"].isin(list(swapped))], extra], ignore_index=True)
    out["policy"] = pd.Categorical(out["policy"].astype(str), categories=list(policies),
                                   ordered=df["policy"].cat.ordered)
    return out.sort_values(["problem", "policy", "T", "seed_index"], kind="stable", ignore_index=True)


FAMILY_WORDS = {"ltf": "LTF"}  # how the closing lines name a family, where not by its registered name


@dataclass
class Study:
    """What a Figure 2 notebook runs: its instances, policies and horizons (see :func:`study`)."""
    family: str
    instances: dict
    policies: dict
    horizons: list
    win_rate_horizons: list
    switching: float
    noise: float = 0.0
    generator_options: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return describe(self.instances, self.policies, self.horizons)

    def plot_instances(self, name: str, output_dir="", n_shown: int = 4):
        """:func:`plot_instances` of this study's instances."""
        return plot_instances(self.instances, name, output_dir, n_shown)

    def run(self, name: str, n_seeds: int, **options) -> Figure2:
        """:func:`run` on this study's instances, policies and horizons; ``options`` as there. The run's
        closing lines begin with the study's own (how many instances, how often the optimal arm switches)."""
        out = run(name, self.instances, self.policies, self.horizons, self.win_rate_horizons, n_seeds, **options)
        out.opening = (f"- {len(self.instances)} {FAMILY_WORDS.get(self.family, self.family)} instances x {n_seeds} "
                       f"seeds; the optimal arm changes between T = {min(self.horizons):,} and "
                       f"T = {max(self.horizons):,} on {self.switching:.0%} of them.")
        return out

    def ledger_settings(self, n_seeds: int, noise, generator_options: dict, default_options: str = "defaults") -> dict:
        """The settings a Figure 2 claim rests on: sizes, noise, horizons, each policy's label and who was told the noise."""
        return {"instances": len(self.instances), "seeds": n_seeds, "noise": noise, "horizons": self.horizons,
                **policy_settings(self.policies), "generator options": generator_options or default_options}

    def ledger(self, notebook: str, output_dir, n_seeds: int, default_options: str = "defaults"):
        """The claims ledger of ``notebook``, its settings from this study (:meth:`ledger_settings`; ``default_options``
        describes the generator's options when the notebook passes none)."""
        from ..claims import Ledger
        return Ledger(notebook, output_dir, settings=self.ledger_settings(n_seeds, self.noise, self.generator_options,
                                                                         default_options))


def study(family: str, n_instances: int, policies, policy_params, window_rule: str, horizons, win_rate_horizons, *,
          H: int, noise, generator_seed: int = 0, generator_options: dict | None = None) -> Study:
    """The instances of ``family`` (``experiments.instance_set``), the policies (``make_policies`` with the
    sliding windows set by :func:`window_params`, CURE-UCB and R-ed-UCB told ``noise``) and the horizons
    (``horizons`` and ``win_rate_horizons`` together, sorted) of a Figure 2 notebook, with the share of
    instances whose optimal arm switches between the shortest and the longest horizon. Its repr is
    :func:`describe`'s text; ``study.run(name, n_seeds, ...)`` is :func:`run` on it."""
    horizons = sorted(set(horizons) | set(win_rate_horizons))
    instances = instance_set(family, n_instances, seed=generator_seed, H=H, noise=noise, **(generator_options or {}))
    pols = make_policies(policies, window_params(policies, policy_params, window_rule, H), sigma=noise)
    return Study(family, instances, pols, horizons, sorted(win_rate_horizons), switching_share(instances, horizons),
                 noise, dict(generator_options or {}))


def other_window_rule(window_rule: str) -> str:
    """The sliding-window rule that is not ``window_rule`` (the reading a Figure 2 claim is also judged under)."""
    return "horizon" if check_window_rule(window_rule) == "fixed" else "fixed"


def switching_share(instances, horizons) -> float:
    """Share of the instances whose optimal arm (largest cumulative mean) differs between the
    shortest and the longest of ``horizons``."""
    short, long = min(horizons), max(horizons)
    return float(np.mean([int(np.argmax(inst.cumulative(short))) != int(np.argmax(inst.cumulative(long)))
                          for inst in instances.values()]))


def switches_within(instances, horizons) -> int:
    """How many of ``instances`` have an optimal arm (largest cumulative mean) that is not the same at every
    horizon of ``horizons``."""
    return int(sum(len({int(np.argmax(inst.cumulative(T))) for T in horizons}) > 1 for inst in instances.values()))


def describe(instances, policies, horizons) -> str:
    """A few lines on the instances (K, how often the optimal arm switches) and the policies."""
    Ks = pd.Series({key: inst.K for key, inst in instances.items()})
    lines = [f"{len(instances)} instances, K = {Ks.min()}..{Ks.max()} (mean {Ks.mean():.1f}); "
             f"optimal arm differs between T = {min(horizons):,} and T = {max(horizons):,} on "
             f"{switching_share(instances, horizons):.0%} of them"]
    lines += [f"  {label:10s} horizon-aware={pol.uses_horizon!s:5s} {pol!r}" for label, pol in policies.items()]
    return "\n".join(lines)


def plot_instances(instances, name: str, output_dir="", n_shown: int = 4):
    """The mean curves mu_i(n) of the first ``n_shown`` instances; saved as ``figures/<name>.png``."""
    if n_shown < 1:
        raise ValueError(f"n_shown must be a positive integer, got {n_shown!r}")
    shown = min(n_shown, len(instances))
    fig, axes = plt.subplots(1, shown, figsize=(3.3 * shown, 2.8), squeeze=False)
    style = {"late bloomer": dict(color="black", lw=2.2), "early peaker": dict(color="black", lw=1.6, ls="--")}
    for ax, (key, inst) in zip(axes[0], instances.items()):
        n = np.arange(inst.T_max + 1)
        for i, arm in enumerate(inst.names):
            ax.plot(n[::100], inst.means[i, ::100], **style.get(arm, dict(lw=1.0, alpha=0.8)),
                    label=arm if arm in style else None)
        ax.set_title(f"{key} (K={inst.K})", fontsize=9)
        ax.set_xlabel("pull count n")
        ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda x, _: f"{x / 1000:g}K"))
    axes[0][0].set_ylabel("mu_i(n)")
    if axes[0][0].get_legend_handles_labels()[0]:
        axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, name, output_dir)
    return fig


def _instance_means(df: pd.DataFrame) -> pd.DataFrame:
    return df.groupby(["T", "problem", "policy"], observed=True)["regret"].mean().unstack("policy")


def instance_differences(df: pd.DataFrame, subject: str = REFERENCE, n_boot: int = 2000,
                         seed: int = 0) -> dict[int, dict[str, Estimate]]:
    """Per horizon and other policy: the mean over instances of (other - subject) mean regret, the
    seeds averaged per instance first, with a percentile-bootstrap interval over instances (positive:
    the subject is lower). The pairing is by instance and seed: every policy sees the same rewards."""
    means = _instance_means(df)
    if subject not in means.columns:
        raise ValueError(f"subject={subject!r} is not allowed: the table has the policies {list(means.columns)}")
    out = {}
    for T, m in means.groupby(level="T"):
        out[int(T)] = {p: bootstrap_estimate((m[p] - m[subject]).to_numpy(), "instances", n_boot=n_boot, seed=seed)
                       for p in m.columns if p != subject}
    return out


def run_differences(df: pd.DataFrame, subject: str = REFERENCE, by=("T",)) -> dict:
    """Per group of ``by`` (a horizon, or an (instance, horizon) cell) and other policy: the mean of
    (other - subject) regret over the group's runs, paired by instance and seed, with a Student-t
    interval over those runs (:func:`~horizonbandits.stats.paired_gaps` with ``interval="student"``), as the
    Estimates :func:`horizonbandits.claims.rules.ordering` reads: ``{group: {policy: Estimate}}``. For grids of
    one or a few fixed instances, where the runs are the only replication (a bootstrap over instances needs
    many instances: :func:`instance_differences`)."""
    by = list(by)
    policies = list(df.groupby("policy", observed=True).size().index)  # sorted, in category order if categorical
    if subject not in policies:
        raise ValueError(f"subject={subject!r} is not allowed: the table has the policies {policies}")
    pair = [c for c in ("problem", "seed_index") if c not in by]
    instances_in = df.groupby(by, observed=True)["problem"].nunique()
    out = {}
    for policy in (p for p in policies if p != subject):
        gaps = paired_gaps(df, policy, subject, by=by, pair=pair, interval="student")
        for row in gaps.to_dict("records"):
            key = tuple(row[b] for b in by) if len(by) > 1 else row[by[0]]
            unit = "seeds" if instances_in.loc[key] == 1 else "(instance, seed) runs"
            label = key if len(by) > 1 else (int(key) if by == ["T"] else key)
            out.setdefault(label, {})[policy] = Estimate(row["mean"], row["ci_low"], row["ci_high"], int(row["n"]), unit)
    return out


def ordering_outcome(df: pd.DataFrame, subject: str = REFERENCE, n_boot: int = 2000, seed: int = 0,
                     partly_above: float = 0.5):
    """The claim "``subject`` has the lowest mean regret at every horizon" judged by
    :func:`horizonbandits.claims.rules.ordering` on :func:`instance_differences`."""
    return rules.ordering(instance_differences(df, subject, n_boot, seed), subject=subject, partly_above=partly_above)


def win_rate_estimates(df: pd.DataFrame, T: int, subject: str = REFERENCE, n_boot: int = 2000,
                       seed: int = 0) -> dict[str, Estimate]:
    """The subject's win rate over each other policy at T (per instance the mean regret over seeds;
    lower wins, a tie counts one half), with the bootstrap interval :func:`~horizonbandits.stats.win_rates`
    gives."""
    m = _instance_means(df[df["T"] == T]).droplevel("T")
    a = m[subject].to_numpy()
    return {p: bootstrap_estimate((a < m[p].to_numpy()) + 0.5 * (a == m[p].to_numpy()), "instances", n_boot=n_boot,
                                  seed=seed, percent=True) for p in m.columns if p != subject}


def wins_outcome(df: pd.DataFrame, T: int, threshold: float, partly: float | None = None, subject: str = REFERENCE,
                 n_boot: int = 2000, seed: int = 0):
    """The claim "``subject`` beats every other policy on more than ``threshold`` of the instances at T":
    each win rate's interval against ``threshold`` (``partly``: against a weaker one), combined over
    the other policies; our number names the smallest win rate."""
    rates = win_rate_estimates(df, T, subject, n_boot, seed)
    parts = {p: rules.compare(e, threshold, ">", partly=partly) for p, e in rates.items()}
    out = rules.combine(parts, rule=f"every win rate's interval > {threshold:.0%}"
                                    + (f" (partly: > {partly:.0%})" if partly is not None else ""))
    worst = min(rates, key=lambda p: rates[p].value)
    undecided = [p for p, o in parts.items() if o.verdict == rules.INCONCLUSIVE]
    ours = (f"smallest win rate {rates[worst]} over {rates[worst].n_text}, against {worst}"
            + (f"; undecided against {', '.join(undecided)}" if undecided else ""))
    return rules.Outcome(out.verdict, ours, rates[worst].n_text, rates[worst].interval, out.rule, out.to_decide)


def win_rate_summary(rates: pd.DataFrame) -> pd.DataFrame:
    """The whole pairwise win-rate matrix in one row per (T, policy): its mean win rate over the other policies,
    how many it beats on most instances with confidence (interval above 50 %), how many beat it so (the other
    side's interval above 50 %), and its rank by mean win rate (1 = best)."""
    rows = []
    for T, at in rates.groupby("T"):
        for policy, r in at.groupby("row", sort=False):
            against = at[at["col"] == policy]
            rows.append({"T": T, "policy": policy, "mean_win_rate": float(r["win_rate"].mean()),
                         "beats": int((r["ci_low"] > 0.5).sum()), "beaten_by": int((against["ci_low"] > 0.5).sum()),
                         "others": int(len(r))})
    out = pd.DataFrame(rows, columns=["T", "policy", "mean_win_rate", "beats", "beaten_by", "others"])
    out["rank"] = out.groupby("T")["mean_win_rate"].rank(ascending=False, method="min").astype(int)
    return out.sort_values(["T", "rank"], ignore_index=True)


def headline(df: pd.DataFrame, subject: str = REFERENCE) -> pd.DataFrame:
    """Per horizon: the subject's mean regret, the policy with the lowest mean regret, the subject's
    smallest win rate (per instance the mean over seeds; ties one half) and the policy it is against."""
    rows = []
    for T in sorted(df["T"].unique()):
        rates = win_rate_estimates(df, T, subject, n_boot=1)
        means = df[df["T"] == T].groupby("policy", observed=True)["regret"].mean()
        worst = min(rates, key=lambda p: rates[p].value)
        rows.append({"T": int(T), "cure_mean_regret" if subject == REFERENCE else "subject_mean_regret": means[subject],
                     "lowest": means.idxmin(), "smallest_win_rate": rates[worst].value, "against": worst})
    return pd.DataFrame(rows)


@dataclass
class Figure2:
    """The tables of one Figure 2 run (see :func:`run`); ``diffs`` is None without CURE-UCB."""
    policies: dict
    horizons: list
    win_rate_horizons: list
    df: pd.DataFrame
    per_instance: pd.DataFrame
    compute: pd.Series
    summary: pd.DataFrame
    rates: pd.DataFrame
    diffs: pd.DataFrame | None
    instances: dict | None = None
    n_seeds: int = 0
    seed: int = 0
    opening: str | None = None  # the first closing line (set by ``Study.run``)
    seed_cut: tuple | None = None  # (seeds, verdicts that differ) of ``check_claims(fewer_seeds=...)``

    def compute_report(self) -> str:
        """The grid's size and each policy's kernel seconds, summed over workers (as first computed, possibly cached)."""
        return (f"{len(self.df):,} rows; kernel time {self.compute.sum():,.1f} s summed over workers "
                "(as first computed, possibly cached):\n" + self.compute.map("{:,.1f} s".format).to_string())

    def regret_table(self) -> pd.DataFrame:
        """Mean regret, one row per policy (in the policies' order), one column per horizon."""
        return self.summary.pivot(index="policy", columns="T", values="mean_regret").reindex(list(self.policies))

    def differences_table(self) -> pd.DataFrame:
        """Mean paired difference to CURE-UCB, one row per other policy, one column per win-rate horizon."""
        return (self.diffs.pivot(index="policy", columns="T", values="mean_difference")
                .reindex([p for p in self.policies if p != REFERENCE]))

    def show(self) -> None:
        """For a notebook: the compute report, the mean regret table and (with CURE-UCB) the paired differences."""
        from IPython.display import display
        print(self.compute_report())
        display(self.regret_table().style.format("{:,.0f}"))
        if self.diffs is not None:
            display(self.differences_table().style.format("{:,.0f}"))

    def under_window_rule(self, rule: str, n_seeds: int | None = None, **grid_options) -> pd.DataFrame:
        """This run's grid with SW-UCB's and SW-TS's rows rerun under window rule ``rule`` (same instances,
        seeds and reward tables; :func:`under_window_rule`); ``grid_options`` go to ``run_grid``. With ``n_seeds``
        (at most this run's), the grid is this run's first ``n_seeds`` seeds, the rerun on those seeds only."""
        if n_seeds is None:
            n_seeds = self.n_seeds
        if not 1 <= n_seeds <= self.n_seeds:
            raise ValueError(f"n_seeds={n_seeds!r} is not allowed: expected 1 to this run's {self.n_seeds} seeds")
        df = self.df if n_seeds == self.n_seeds else self.df[self.df["seed_index"] < n_seeds]
        return under_window_rule(df, self.instances, self.policies, self.horizons, n_seeds, rule, seed=self.seed,
                                 **grid_options)

    def check_claims(self, ledger, grids, ordering_id: str, short: tuple, long: tuple, *, n_boot: int = 2000,
                     fewer_seeds: int | None = None) -> list[str]:
        """Record Figure 2's claims in ``ledger`` on every grid of ``grids``, a list of ``(grid, reading, default)``
        (the reading a grid stands for, and whether it is the claim's default): the ordering claim ``ordering_id``
        (:func:`ordering_outcome`), then the win-rate claims ``short`` and ``long``, each ``(claim id, threshold,
        partly)`` (:func:`wins_outcome` at the shortest and the longest win-rate horizon, recorded with the setting T).

        ``fewer_seeds`` (below this run's seeds; a reading run on fewer seeds than the main grid): each claim is also
        judged on the first grid's first ``fewer_seeds`` seeds, not recorded; returns one line per claim whose verdict
        differs there from the full grid's (an empty list: the cut changes no verdict of the default reading)."""
        judges = [(ordering_id, lambda d: ordering_outcome(d, n_boot=n_boot), None)]
        for T, (claim_id, threshold, partly) in zip((min(self.win_rate_horizons), max(self.win_rate_horizons)),
                                                    (short, long)):
            judges.append((claim_id, lambda d, T=T, t=threshold, p=partly: wins_outcome(d, T, t, partly=p, n_boot=n_boot),
                           {"T": T}))
        flips = []
        for claim_id, judge, settings in judges:
            for grid, reading, default in grids:
                outcome = ledger.check(claim_id, judge(grid), reading=reading, default=default, settings=settings)
                if default and fewer_seeds is not None and fewer_seeds < self.n_seeds:
                    cut = judge(grid[grid["seed_index"] < fewer_seeds])
                    if cut.verdict != outcome.verdict:
                        flips.append(f"{claim_id}: {outcome.verdict} on {self.n_seeds} seeds, {cut.verdict} on "
                                     f"{fewer_seeds} ({cut.ours})")
        if fewer_seeds is not None and fewer_seeds < self.n_seeds:
            self.seed_cut = (fewer_seeds, flips)
        return flips

    def win_rate(self, row: str, col: str, T: int) -> tuple[float, float, float]:
        """(win rate of ``row`` over ``col`` at T, interval low, interval high)."""
        r = self.rates[(self.rates["row"] == row) & (self.rates["col"] == col) & (self.rates["T"] == T)].iloc[0]
        return r["win_rate"], r["ci_low"], r["ci_high"]

    def win_rate_estimate(self, row: str, col: str, T: int) -> Estimate:
        """The win rate of ``row`` over ``col`` at T with its bootstrap interval over instances."""
        w, lo, hi = self.win_rate(row, col, T)
        n = int(self.rates["n_instances"].iloc[0])
        return Estimate(w, min(lo, w), max(hi, w), n, "instances", percent=True)

    def lowest(self) -> dict:
        """The policy with the lowest mean regret, per horizon."""
        return {T: self.summary[self.summary["T"] == T].sort_values("mean_regret")["policy"].iloc[0]
                for T in self.horizons}

    def closing_lines(self) -> list[str]:
        """Sentences computed from the tables: the ranking at each win-rate horizon, and how many
        baselines CURE-UCB's paired difference beats (or loses to) significantly."""
        lines = [self.opening] if self.opening else []
        board = win_rate_summary(self.rates)
        for T in self.win_rate_horizons:
            b = board[board["T"] == T]
            lines.append(f"- T = {T:,}, the whole win-rate matrix: " + ", ".join(
                f"{r.policy} beats {r.beats} and is beaten by {r.beaten_by} of {r.others}" for r in b.itertuples()) + ".")
            s = self.summary[self.summary["T"] == T].sort_values("mean_regret")
            lines.append(f"- T = {T:,}: mean regret "
                         + ", ".join(f"{p} {v:,.0f}" for p, v in zip(s["policy"], s["mean_regret"])) + ".")
        if self.diffs is not None:
            for T in self.win_rate_horizons:
                d = self.diffs[self.diffs["T"] == T]
                better = d[d["ci_high"] < 0]["policy"].tolist()
                lines.append(f"- T = {T:,}: CURE-UCB's mean regret is significantly lower than "
                             f"{int((d['ci_low'] > 0).sum())} of {len(d)} baselines (paired)"
                             + (f", significantly higher than {', '.join(better)}" if better else "") + ".")
        if self.seed_cut is not None:
            k, flips = self.seed_cut
            lines.append(f"- A reading ran on the first {k} of the {self.n_seeds} seeds; judged on its first {k} seeds, the "
                         "main grid gives " + (f"the same verdicts as on all {self.n_seeds}." if not flips else
                                               "other verdicts: " + "; ".join(flips) + "."))
        return lines


def run(name: str, instances, policies, horizons, win_rate_horizons, n_seeds: int, *, title: str, seed: int = 0,
        n_boot: int = 2000, output_dir="", **grid_options) -> Figure2:
    """Run Figure 2's grid on ``instances`` and make its tables and figures (``<name>_regret``,
    ``<name>_win_rates``, ``<name>_instance_means``, ``<name>_compute``, ``<name>_paired_differences``).

    ``horizons`` must contain ``win_rate_horizons``; ``title`` heads the regret panel (for example
    "LTF (Figure 2 a): mean regret"); ``grid_options`` go to ``run_grid`` (backend, cache, n_jobs,
    address). The kernel seconds count a horizon-agnostic policy's run once (its rows at the
    smaller horizons are read off the same run).
    """
    from . import run_grid

    missing = sorted(set(win_rate_horizons) - set(horizons))
    if missing:
        raise ValueError(f"win_rate_horizons must be among horizons; missing {missing}")
    df = run_grid(instances, policies, horizons, n_seeds, seed=seed, **grid_options)
    per_instance = df.groupby(["problem", "policy", "T"], observed=True)["regret"].mean().reset_index()
    save_table(per_instance, f"{name}_instance_means", output_dir)
    own_run = df["policy"].map(lambda p: policies[p].uses_horizon).astype(bool) | (df["T"] == max(horizons))
    compute = df[own_run].groupby("policy", observed=True)["wall_time"].sum()
    save_table(compute.rename("kernel_seconds").reset_index(), f"{name}_compute", output_dir)

    # Panel a / d: mean regret against the horizon, linear and logarithmic
    summary = regret_summary(df, n_boot=n_boot)
    save_table(summary, f"{name}_regret", output_dir)
    palette = policy_palette(list(policies))
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.6))
    for ax, log in zip(axes, (False, True)):
        for policy in policies:
            s = summary[summary["policy"] == policy].sort_values("T")
            mean_band(ax, s["T"], s["mean_regret"], s["ci_low"], s["ci_high"], color=palette[policy], label=policy,
                      alpha=0.15, band_lw=0, marker="o", ms=4)
        ax.set_xlabel("horizon T")
        ax.set_ylabel("mean cumulative pseudo-regret")
        if log:
            ax.set_yscale("log")
    axes[0].set_title(title)
    axes[1].set_title("same, logarithmic scale")
    axes[0].legend(fontsize=8, ncol=2)
    fig.tight_layout()
    save_figure(fig, f"{name}_regret", output_dir)

    # Panels b, c / e, f: pairwise win rates (row beats column)
    rates = pd.concat([win_rates(df, T, n_boot=n_boot) for T in win_rate_horizons], ignore_index=True)
    save_table(rates, f"{name}_win_rates", output_dir)
    save_table(win_rate_summary(rates), f"{name}_win_rate_summary", output_dir)
    fig, axes = plt.subplots(1, len(win_rate_horizons), figsize=(6.2 * len(win_rate_horizons), 5.2), squeeze=False)
    for ax, T in zip(axes[0], win_rate_horizons):
        win_rate_heatmap(win_rate_matrix(rates[rates["T"] == T]), ax=ax, title=f"win rate (%), T = {T:,}")
    fig.tight_layout()
    save_figure(fig, f"{name}_win_rates", output_dir)

    # Paired differences to CURE-UCB (same instance and seed; positive = CURE-UCB better)
    diffs = None
    if REFERENCE in policies:
        diffs = paired_differences(df[df["T"].isin(win_rate_horizons)], REFERENCE, n_boot=n_boot)
        save_table(diffs, f"{name}_paired_differences", output_dir)
    return Figure2(dict(policies), list(horizons), list(win_rate_horizons), df, per_instance, compute, summary,
                   rates, diffs, instances=instances, n_seeds=n_seeds, seed=seed)

