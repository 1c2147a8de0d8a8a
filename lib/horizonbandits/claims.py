"""A claim of a paper as data, and the ledger of claims a notebook checks.

A claim is one checkable statement of one of the two papers: where it stands (figure, table,
theorem, section), what the paper says or reports, our number from the notebook's own results, a
verdict computed from that number, and the modelling choices of ours the verdict hinges on.

A notebook records its claims with one call::

    from horizonbandits import claims
    claims.record("concave_experiments", output_dir, [
        claims.Claim("A-fig2-concave-lowest-every-T", "A", "Figure 2 (d)",
                     "CURE-UCB has the lowest mean regret at every horizon",
                     paper_value="yes", ours=f"lowest at {n} of {m} horizons",
                     verdict=claims.verdict_of(n == m, partly=n > m / 2),
                     depends_on=["concave challenger blend w"]),
    ])

which writes ``claims/<notebook>.csv`` under the run's output folder (atomically) and returns the
rows as a table to display. ``hb run`` merges the files of every notebook run in a profile into
``outputs/<profile>/claims.csv`` (:func:`merge`), puts them at the top of ``index.html`` and
``hb claims`` prints them.

Papers: ``A`` is the CURE-UCB paper (rising bandits with known horizons, arXiv 2602.10727), ``B``
the experimentation-and-commitment paper (RAEC, ROSCOC, arXiv 2607.23432).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from .outputs import atomic_write, resolve_output_dir

PAPERS = {"A": "CURE-UCB, arXiv 2602.10727", "B": "experimentation and commitment, arXiv 2607.23432"}
REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_TESTABLE = "reproduced", "partly", "not reproduced", "not testable"
VERDICTS = (REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_TESTABLE)
COLUMNS = ["claim_id", "paper", "where", "statement", "paper_value", "ours", "verdict", "depends_on", "notebook",
           "profile"]
_ID = re.compile(r"^[AB]-[A-Za-z0-9][A-Za-z0-9.-]*$")


@dataclass(frozen=True)
class Claim:
    """One checkable statement of a paper and our verdict on it.

    ``claim_id`` is stable across runs (``A-...`` or ``B-...``, letters, digits, dots and dashes);
    ``depends_on`` lists our own modelling choices that could flip the verdict (empty when none);
    ``verdict`` is one of :data:`VERDICTS` and must be computed from the notebook's numbers.
    """

    claim_id: str
    paper: str
    where: str
    statement: str
    paper_value: str = ""
    ours: str = ""
    verdict: str = NOT_TESTABLE
    depends_on: tuple[str, ...] | list[str] = field(default_factory=tuple)

    def __post_init__(self):
        if self.paper not in PAPERS:
            raise ValueError(f"Claim.paper must be one of {sorted(PAPERS)}, got {self.paper!r}")
        if not _ID.match(self.claim_id) or not self.claim_id.startswith(self.paper + "-"):
            raise ValueError(f"Claim.claim_id must look like '{self.paper}-fig2-something' "
                             f"(paper letter, dash, letters/digits/dots/dashes), got {self.claim_id!r}")
        if self.verdict not in VERDICTS:
            raise ValueError(f"Claim.verdict must be one of {', '.join(VERDICTS)}, got {self.verdict!r}")
        if isinstance(self.depends_on, str):
            object.__setattr__(self, "depends_on", (self.depends_on,) if self.depends_on else ())
        else:
            object.__setattr__(self, "depends_on", tuple(str(d) for d in self.depends_on))


def verdict_of(holds: bool, partly: bool = False) -> str:
    """``reproduced`` when ``holds``, else ``partly`` when ``partly``, else ``not reproduced``."""
    if bool(holds):
        return REPRODUCED
    return PARTLY if bool(partly) else NOT_REPRODUCED


def not_testable(claim_id: str, paper: str, where: str, statement: str, reason: str, paper_value: str = "",
                 depends_on=()) -> Claim:
    """A claim the workbook cannot test; ``reason`` goes in the ``ours`` column."""
    return Claim(claim_id, paper, where, statement, paper_value=paper_value, ours=f"not testable: {reason}",
                 verdict=NOT_TESTABLE, depends_on=depends_on)


def to_frame(claims, notebook: str = "", profile: str = "") -> pd.DataFrame:
    """The claims as a table with exactly :data:`COLUMNS` (``depends_on`` joined by '; ')."""
    rows = []
    for c in claims:
        row = asdict(c)
        row["depends_on"] = "; ".join(c.depends_on)
        row["notebook"], row["profile"] = notebook, profile
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def record(notebook: str, output_dir, claims, profile: str | None = None) -> pd.DataFrame:
    """Write a notebook's claims to ``claims/<notebook>.csv`` in the run's folder and return them.

    ``profile`` defaults to the name of the output folder (``outputs/<profile>``; ``interactive`` when
    the notebook runs by hand). Claim ids must be unique within a notebook.
    """
    claims = list(claims)
    ids = Counter(c.claim_id for c in claims)
    repeated = sorted(i for i, n in ids.items() if n > 1)
    if repeated:
        raise ValueError(f"claims: each claim_id must appear once, repeated: {', '.join(repeated)}")
    folder = resolve_output_dir(output_dir)
    if profile is None:
        profile = folder.name
    frame = to_frame(claims, notebook=notebook, profile=profile)
    atomic_write(folder / "claims" / f"{notebook}.csv", lambda tmp: frame.to_csv(tmp, index=False))
    return frame


def show(frame: pd.DataFrame):
    """The claims of one notebook as a compact table for display (statement, paper, ours, verdict)."""
    cols = ["claim_id", "where", "statement", "paper_value", "ours", "verdict", "depends_on"]
    return frame[cols].style.hide(axis="index").set_properties(**{"text-align": "left"})


def read(path) -> pd.DataFrame:
    """A claims CSV, checked: exactly :data:`COLUMNS` and verdicts from :data:`VERDICTS`."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    if list(frame.columns) != COLUMNS:
        raise ValueError(f"{path}: claims table must have the columns {', '.join(COLUMNS)}")
    bad = sorted(set(frame["verdict"]) - set(VERDICTS))
    if bad:
        raise ValueError(f"{path}: unknown verdicts {bad}; allowed: {', '.join(VERDICTS)}")
    return frame


def merge(profile_dir, profile: str, notebooks=None) -> pd.DataFrame:
    """Every notebook's claims in ``profile_dir/claims/`` as one table (sorted by paper, then notebook).

    ``notebooks`` limits the merge to those names (for example the notebooks the manifest knows).
    """
    folder = Path(profile_dir) / "claims"
    frames = []
    for path in sorted(folder.glob("*.csv")) if folder.is_dir() else []:
        if notebooks is not None and path.stem not in notebooks:
            continue
        frame = read(path)
        frame["notebook"], frame["profile"] = path.stem, profile
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    out = pd.concat(frames, ignore_index=True)
    return out.sort_values(["paper", "notebook"], kind="stable").reset_index(drop=True)


def counts(frame: pd.DataFrame) -> dict[str, int]:
    """How many claims have each verdict, in the order of :data:`VERDICTS`."""
    seen = Counter(frame["verdict"]) if len(frame) else Counter()
    return {v: int(seen.get(v, 0)) for v in VERDICTS}


def summary_line(frame: pd.DataFrame) -> str:
    """For example '27 reproduced, 5 partly, 4 not reproduced, 2 not testable'."""
    return ", ".join(f"{n} {v}" for v, n in counts(frame).items())


def write_ledger(profile_dir, profile: str, notebooks=None) -> pd.DataFrame:
    """Merge the notebooks' claims and write ``profile_dir/claims.csv`` (atomically); returns the table."""
    frame = merge(profile_dir, profile, notebooks)
    atomic_write(Path(profile_dir) / "claims.csv", lambda tmp: frame.to_csv(tmp, index=False))
    return frame


__all__ = ["Claim", "COLUMNS", "VERDICTS", "REPRODUCED", "PARTLY", "NOT_REPRODUCED", "NOT_TESTABLE", "PAPERS",
           "verdict_of", "not_testable", "record", "show", "read", "merge", "counts", "summary_line",
           "write_ledger", "to_frame", "resolve_output_dir"]
