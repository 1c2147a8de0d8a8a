"""A notebook's claims as it records them, and a profile's ledger as ``hb run`` merges them.

In a notebook::

    ledger = claims.Ledger("ltf_experiments", output_dir, settings={"noise": noise})
    ledger.check("A-fig2a-ltf-lowest-every-T", rules.ordering(differences))
    for w in (0.0, 0.5, 0.9):                       # a claim judged under several readings
        ledger.check("A-tab1-concave-values", outcome[w], reading={"w": w}, default=(w == 0.5))
    ledger.save()                                   # claims/<nb>.csv and readings/<nb>.csv

``hb run`` then merges every notebook's files into ``claims.csv`` and ``readings.csv`` of the profile
folder (:func:`write_ledger`): the catalogue supplies each row's paper, kind, place, statement and
paper's value; an id recorded by two notebooks or not catalogued is a problem reported in one line;
a catalogued claim its notebook did not record is a ``missing`` row.
"""
from __future__ import annotations

import csv
import html
import io
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..outputs import atomic_write, resolve_output_dir
from ..stats import fmt_number
from . import catalogue as cat
from .model import (COLUMNS, INCONCLUSIVE, KINDS, LEDGER_VERDICTS, MISSING, NOT_REPRODUCED, NOT_TESTABLE, PAPERS,
                    PARTLY, READING_COLUMNS, REPRODUCED, VERDICTS, ClaimsError, Outcome)

MAX_FIELD = 4000  # characters of one ledger field; longer text is a notebook's mistake, not a claim


def _value_text(value) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, (int, float)):
        return fmt_number(value, digits=4) if isinstance(value, float) else f"{value:,}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value_text(v) for v in value) + "]"
    return str(value)


def settings_text(settings: dict | None) -> str:
    """``{"noise": 0.01, "CURE-UCB eps": 0.5}`` as 'noise = 0.01; CURE-UCB eps = 0.5'."""
    return "; ".join(f"{k} = {_value_text(v)}" for k, v in (settings or {}).items())


def reading_parts(reading) -> tuple[str, str, str]:
    """A reading as (names, values, label): ``{"eps": 0.25, "sigma": 0.01}`` -> ('eps, sigma',
    '0.25, 0.01', 'eps = 0.25, sigma = 0.01'); None is the claim's only reading, 'default'."""
    if reading is None:
        return "default", "", "default"
    if isinstance(reading, dict):
        if not reading:
            raise ClaimsError("reading={} is not allowed: name at least one setting")
        values = [_value_text(v) for v in reading.values()]
        return (", ".join(map(str, reading)), "; ".join(values) if any("," in v for v in values) else ", ".join(values),
                ", ".join(f"{k} = {v}" for k, v in zip(reading, values)))
    return "reading", str(reading), str(reading)


@dataclass
class _Checked:
    entry: cat.Entry
    outcome: Outcome | None = None
    settings: dict = field(default_factory=dict)
    default_reading: tuple[str, str, str] = ("default", "", "default")
    readings: list[tuple[tuple[str, str, str], Outcome, bool]] = field(default_factory=list)


class Ledger:
    """The claims one notebook checks in one run.

    ``settings`` (the run's parameters a verdict rests on, with the values it actually used) go
    to every row's ``settings`` column; :meth:`check` adds a claim's own.
    """

    def __init__(self, notebook: str, output_dir="", settings: dict | None = None, profile: str | None = None):
        self.notebook = notebook
        self.output_dir = output_dir
        self.settings = dict(settings or {})
        self.profile = profile
        self._checked: dict[str, _Checked] = {}
        self._catalogue = cat.load()

    def check(self, claim_id: str, outcome: Outcome, *, reading=None, default: bool = True,
              settings: dict | None = None, ours: str | None = None) -> Outcome:
        """Record ``outcome`` (from a rule) for ``claim_id``.

        With ``reading`` (a dict of the swept settings, e.g. ``{"eps": 0.25}``) the outcome is the
        claim's verdict under that reading; exactly one call per claim has ``default=True``, and its
        outcome is the claim's verdict in the ledger. ``ours`` replaces the rule's wording of our number.
        """
        if not isinstance(outcome, Outcome):
            raise ClaimsError(f"claim {claim_id!r}: expected an Outcome from horizonbandits.claims.rules, "
                              f"got {type(outcome).__name__}")
        if ours is not None:
            outcome = outcome.with_ours(ours)
        entry = cat.lookup(claim_id, self.notebook, self._catalogue)
        item = self._checked.setdefault(entry.claim_id, _Checked(entry))
        parts = reading_parts(reading)
        if any(parts == p for p, _, _ in item.readings) or (default and item.outcome is not None):
            what = f"under the reading {parts[2]}" if reading is not None else "as its default"
            raise ClaimsError(f"claim {claim_id!r} is recorded twice {what} by {self.notebook}")
        if default:
            item.outcome, item.default_reading = outcome, parts
            item.settings = {**self.settings, **(settings or {})}
        item.readings.append((parts, outcome, default))
        return outcome

    def not_testable(self, claim_id: str, reason: str, **kw) -> Outcome:
        from .rules import not_testable
        return self.check(claim_id, not_testable(reason), **kw)

    def rows(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(claims, readings) as the tables :meth:`save` writes; catalogued claims of this notebook
        that were not checked are ``missing`` rows."""
        profile = self.profile if self.profile is not None else resolve_output_dir(self.output_dir).name
        claim_rows, reading_rows = [], []
        for cid, item in self._checked.items():
            if item.outcome is None:
                raise ClaimsError(f"claim {cid!r}: {len(item.readings)} reading(s) recorded but none with default=True")
            claim_rows.append(_claim_row(item, self.notebook, profile))
            if len(item.readings) > 1 or item.readings[0][0][0] != "default":
                for (names, values, _), outcome, is_default in item.readings:
                    reading_rows.append({"claim_id": cid, "reading": names, "value": values, "ours": outcome.ours,
                                         "verdict": outcome.verdict, "default": "yes" if is_default else "",
                                         "notebook": self.notebook, "profile": profile})
        for entry in cat.of_notebook(self.notebook, self._catalogue):
            if entry.claim_id not in self._checked:
                claim_rows.append(missing_row(entry, profile, "not recorded by this run"))
        return (pd.DataFrame(claim_rows, columns=COLUMNS), pd.DataFrame(reading_rows, columns=READING_COLUMNS))

    def save(self) -> LedgerView:
        """Write ``claims/<notebook>.csv`` and ``readings/<notebook>.csv`` (atomically) and return
        the claims for display."""
        claims_frame, readings_frame = self.rows()
        folder = resolve_output_dir(self.output_dir)
        write_csv(folder / "claims" / f"{self.notebook}.csv", claims_frame)
        write_csv(folder / "readings" / f"{self.notebook}.csv", readings_frame)
        return LedgerView(claims_frame, readings_frame)


def _claim_row(item: _Checked, notebook: str, profile: str) -> dict:
    e, out = item.entry, item.outcome
    readings = item.readings
    summary, depends = "", ""
    if len(readings) > 1:
        holds = sum(o.verdict == REPRODUCED for _, o, _ in readings)
        summary = f"holds under {holds} of {len(readings)} readings (default: {item.default_reading[2]})"
        flips = [f"{p[2]}: {o.verdict}" for p, o, d in readings if not d and o.verdict != out.verdict]
        if flips:
            depends = "; ".join(flips)
        elif out.verdict in (NOT_REPRODUCED, PARTLY):
            names = ", ".join(dict.fromkeys(n for (ns, _, _), _, _ in readings for n in ns.split(", ") if ns != "default"))
            depends = f"cause not identified; tried: {names}"
    elif out.verdict in (NOT_REPRODUCED, PARTLY) and e.kind == "test":
        depends = "cause not identified (no reading swept)"
    row = {"claim_id": e.claim_id, "paper": e.paper, "kind": e.kind, "where": e.where, "statement": e.statement,
           "paper_value": e.paper_value, "ours": out.ours, "verdict": out.verdict, "n": out.n,
           "interval": out.interval, "rule": out.rule, "to_decide": out.to_decide, "readings": summary,
           "settings": settings_text(item.settings), "depends_on": depends, "notebook": notebook, "profile": profile}
    for k, v in row.items():
        if len(v) > MAX_FIELD:
            raise ClaimsError(f"claim {e.claim_id!r}: field {k} has {len(v):,} characters (at most {MAX_FIELD:,})")
    return row


def missing_row(entry: cat.Entry, profile: str, why: str) -> dict:
    return {"claim_id": entry.claim_id, "paper": entry.paper, "kind": entry.kind, "where": entry.where,
            "statement": entry.statement, "paper_value": entry.paper_value, "ours": why, "verdict": MISSING,
            "n": "", "interval": "", "rule": "", "to_decide": "", "readings": "", "settings": "", "depends_on": "",
            "notebook": entry.notebook, "profile": profile}


def write_csv(path: Path, frame: pd.DataFrame) -> Path:
    return atomic_write(path, lambda tmp: frame.to_csv(tmp, index=False))


# --------------------------------------------------------------------------- reading and merging


def read_table(path, columns=COLUMNS, verdicts=LEDGER_VERDICTS, strict: bool = True) -> pd.DataFrame:
    """A claims (or readings) CSV, checked: the expected header, every row with every field, known
    papers, kinds and verdicts. ``strict=False`` reads a ledger of an older version (missing columns
    filled with ''), for comparisons."""
    path = Path(path)
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    if not rows:
        raise ClaimsError(f"{path.name}: empty file")
    header, body = rows[0], rows[1:]
    if strict and header != list(columns):
        raise ClaimsError(f"{path.name}: expected the columns {', '.join(columns)}")
    if not strict and not {"claim_id", "verdict"} <= set(header):
        raise ClaimsError(f"{path.name}: not a claims table (no claim_id and verdict columns)")
    for i, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise ClaimsError(f"{path.name}: line {i} has {len(row)} fields, expected {len(header)}")
    frame = pd.DataFrame(body, columns=header, dtype=str)
    for col in columns:
        if col not in frame:
            frame[col] = ""
    frame = frame[list(columns)]
    if strict:
        checks = [("verdict", verdicts)]
        if "paper" in columns:
            checks += [("paper", tuple(PAPERS)), ("kind", KINDS)]
        for col, allowed in checks:
            bad = sorted(set(frame[col]) - set(allowed))
            if bad:
                raise ClaimsError(f"{path.name}: unknown {col} {bad[:3]}; allowed: {', '.join(allowed)}")
    return frame


@dataclass
class Merged:
    """A profile's ledger: the claims, the readings, and the problems found while merging."""

    claims: pd.DataFrame
    readings: pd.DataFrame
    problems: list[str]


def merge(profile_dir, profile: str, notebooks=None, catalogue_path=None) -> Merged:
    """Every notebook's claims and readings in ``profile_dir`` as one ledger.

    ``notebooks`` limits the merge to those names (the manifest's). Rows take paper, kind, place,
    statement and paper's value from the catalogue. A damaged file, an id the catalogue does not
    know, or an id recorded by two notebooks is a problem (one line each); the notebook's catalogued
    claims that are not in the ledger then appear as ``missing``.
    """
    profile_dir = Path(profile_dir)
    catalogue = cat.load(catalogue_path)
    frames, reading_frames, problems = [], [], []
    seen: dict[str, str] = {}
    folder = profile_dir / "claims"
    names = sorted(p.stem for p in folder.glob("*.csv")) if folder.is_dir() else []
    if notebooks is not None:
        names = [n for n in names if n in set(notebooks)]
    for name in names:
        try:
            frame = read_table(folder / f"{name}.csv")
        except (ClaimsError, OSError, UnicodeDecodeError, csv.Error) as exc:
            problems.append(f"claims/{name}.csv is damaged ({' '.join(str(exc).split())}); its claims are shown as missing")
            continue
        keep = []
        for row in frame.to_dict("records"):
            entry = cat.resolve(row["claim_id"], catalogue)
            if entry is None:
                problems.append(f"claims/{name}.csv: claim {row['claim_id']!r} is not in the catalogue")
                continue
            if entry.notebook != name:
                problems.append(f"claims/{name}.csv: claim {row['claim_id']!r} belongs to notebook {entry.notebook}")
                continue
            if row["claim_id"] in seen:
                problems.append(f"claim {row['claim_id']!r} is recorded twice (by {seen[row['claim_id']]} and {name})")
                continue
            seen[row["claim_id"]] = name
            row.update(paper=entry.paper, kind=entry.kind, where=entry.where, statement=entry.statement,
                       paper_value=entry.paper_value, notebook=name, profile=profile)
            keep.append(row)
        frames.append(pd.DataFrame(keep, columns=COLUMNS))
        rpath = profile_dir / "readings" / f"{name}.csv"
        if rpath.is_file():
            try:
                readings = read_table(rpath, READING_COLUMNS, VERDICTS)
                readings["profile"] = profile
                reading_frames.append(readings[readings["claim_id"].isin(seen)])
            except (ClaimsError, OSError, UnicodeDecodeError, csv.Error) as exc:
                problems.append(f"readings/{name}.csv is damaged ({' '.join(str(exc).split())})")
    ran = set(notebooks) if notebooks is not None else set(names)
    missing = [missing_row(e, profile, "not recorded by the last run") for e in catalogue.values()
               if e.notebook in ran and e.claim_id not in seen]
    frames.append(pd.DataFrame(missing, columns=COLUMNS))
    claims = pd.concat([f for f in frames if len(f)], ignore_index=True) if any(len(f) for f in frames) \
        else pd.DataFrame(columns=COLUMNS)
    order = {k: i for i, k in enumerate(KINDS)}
    if len(claims):
        claims = claims.assign(_k=claims["kind"].map(order)).sort_values(["paper", "_k", "notebook"], kind="stable")
        claims = claims.drop(columns="_k").reset_index(drop=True)
    readings = (pd.concat(reading_frames, ignore_index=True) if reading_frames
                else pd.DataFrame(columns=READING_COLUMNS))
    return Merged(claims, readings, problems)


def write_merged(profile_dir, merged: Merged) -> None:
    """Write a merged ledger as the profile's ``claims.csv`` and ``readings.csv`` (each atomically)."""
    write_csv(Path(profile_dir) / "claims.csv", merged.claims)
    write_csv(Path(profile_dir) / "readings.csv", merged.readings)


def write_ledger(profile_dir, profile: str, notebooks=None, catalogue_path=None) -> Merged:
    """Merge (:func:`merge`) and write ``claims.csv`` and ``readings.csv`` of the profile (atomically)."""
    merged = merge(profile_dir, profile, notebooks, catalogue_path)
    write_merged(profile_dir, merged)
    return merged


# --------------------------------------------------------------------------- counts and comparisons


def counts(frame: pd.DataFrame, verdicts=LEDGER_VERDICTS) -> dict[str, int]:
    """How many rows have each verdict (verdicts with no row included, as 0)."""
    seen = Counter(frame["verdict"]) if len(frame) else Counter()
    return {v: int(seen.get(v, 0)) for v in verdicts}


def summary_line(frame: pd.DataFrame) -> str:
    """For example '27 reproduced, 5 partly, 4 not reproduced, 1 inconclusive' (verdicts with no row
    left out, except that an empty table reads '0 claims')."""
    parts = [f"{n} {v}" for v, n in counts(frame).items() if n]
    return ", ".join(parts) if parts else "0 claims"


def tally(frame: pd.DataFrame) -> pd.DataFrame:
    """Verdict counts per paper and kind (one row each, in the order of PAPERS and KINDS)."""
    rows = []
    for paper in PAPERS:
        for kind in KINDS:
            sub = frame[(frame["paper"] == paper) & (frame["kind"] == kind)] if len(frame) else frame
            if len(sub):
                rows.append({"paper": paper, "kind": kind, "claims": len(sub), **counts(sub)})
    return pd.DataFrame(rows, columns=["paper", "kind", "claims", *LEDGER_VERDICTS])


def paper_tallies(frame: pd.DataFrame) -> dict[str, str]:
    """The papers' tallies: per paper, the verdicts of its ``test`` claims only."""
    tests = frame[frame["kind"] == "test"] if len(frame) else frame
    return {p: summary_line(tests[tests["paper"] == p]) if len(tests) else "0 claims" for p in PAPERS}


DIFF_COLUMNS = ["claim_id", "change", "old", "new"]


def diff(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """What changed from ledger ``old`` to ``new``: claims added or removed, and per claim the
    verdict, the kind and our number (``ours``) when they differ (kinds only when ``old`` has them)."""
    old_rows = {r["claim_id"]: r for r in old.to_dict("records")}
    new_rows = {r["claim_id"]: r for r in new.to_dict("records")}
    # a ledger written before claims had kinds: every kind would read as changed, which says nothing
    fields = ("verdict", "kind", "ours") if any(r.get("kind") for r in old_rows.values()) else ("verdict", "ours")
    rows = []
    for cid in list(dict.fromkeys([*new_rows, *old_rows])):
        a, b = old_rows.get(cid), new_rows.get(cid)
        if a is None:
            rows.append({"claim_id": cid, "change": "added", "old": "", "new": f"{b.get('kind', '')}: {b['verdict']}"})
            continue
        if b is None:
            rows.append({"claim_id": cid, "change": "removed", "old": f"{a.get('kind', '')}: {a['verdict']}", "new": ""})
            continue
        for col in fields:
            if (a.get(col) or "") != (b.get(col) or ""):
                rows.append({"claim_id": cid, "change": col, "old": a.get(col) or "", "new": b.get(col) or ""})
    return pd.DataFrame(rows, columns=DIFF_COLUMNS)


# --------------------------------------------------------------------------- display in a notebook

_SHOW = ("claim_id", "kind", "where", "statement", "paper_value", "ours", "verdict", "interval", "readings",
         "depends_on")


class LedgerView:
    """A notebook's claims for display: an escaped HTML table in JupyterLab, text elsewhere."""

    def __init__(self, claims: pd.DataFrame, readings: pd.DataFrame | None = None):
        self.claims = claims
        self.readings = readings if readings is not None else pd.DataFrame(columns=READING_COLUMNS)

    def __len__(self):
        return len(self.claims)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in _SHOW)
        body = []
        for row in self.claims.to_dict("records"):
            body.append("<tr>" + "".join(f'<td style="text-align:left">{html.escape(str(row[c]))}</td>'
                                         for c in _SHOW) + "</tr>")
        return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"

    def __repr__(self) -> str:
        out = io.StringIO()
        for row in self.claims.to_dict("records"):
            out.write(f"{row['claim_id']} [{row['kind']}]: {row['verdict']} | ours: {row['ours']}\n")
        return out.getvalue() or "(no claims)"


def show(frame) -> LedgerView:
    """A claims table (or the view :meth:`Ledger.save` returns) for display, escaped."""
    return frame if isinstance(frame, LedgerView) else LedgerView(frame)


__all__ = ["Ledger", "Merged", "merge", "write_ledger", "write_merged", "read_table", "counts", "summary_line", "tally",
           "paper_tallies", "diff", "show", "LedgerView", "settings_text", "INCONCLUSIVE", "NOT_TESTABLE"]
