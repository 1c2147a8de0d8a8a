"""What a claim is made of: papers, kinds, verdicts, an estimate with its interval, a rule's outcome.

A claim of the ledger has a **kind** (from the catalogue, never from the notebook):

- ``test``: a claim of the paper that our numbers could refute. Only these count in the papers'
  tallies (README, index, ``hb claims``).
- ``illustration``: our construction shows the paper's point and cannot fail by design.
- ``formula``: a closed form or identity evaluated and checked; not a reproduction.
- ``ours``: a claim beyond the paper (our data, our families, our sweeps, a copy made by ``hb new``).

and a **verdict**, computed by a rule of :mod:`horizonbandits.claims.rules` from intervals:
``reproduced``, ``partly``, ``not reproduced``, ``inconclusive`` (the interval straddles the threshold
at this size), ``not testable``. The ledger adds ``missing`` for a catalogued claim whose notebook ran
without recording it.
"""
from __future__ import annotations

from dataclasses import dataclass


PAPERS = {"A": "CURE-UCB, arXiv 2602.10727", "B": "experimentation and commitment, arXiv 2607.23432"}
KINDS = ("test", "illustration", "formula", "ours")
KIND_TITLES = {"test": "Tests of the papers' claims", "illustration": "Illustrations (our constructions; cannot fail)",
               "formula": "Formulas evaluated", "ours": "Ours (beyond the papers)"}
REPRODUCED, PARTLY, NOT_REPRODUCED = "reproduced", "partly", "not reproduced"
INCONCLUSIVE, NOT_TESTABLE, MISSING = "inconclusive", "not testable", "missing"
VERDICTS = (REPRODUCED, PARTLY, NOT_REPRODUCED, INCONCLUSIVE, NOT_TESTABLE)
LEDGER_VERDICTS = VERDICTS + (MISSING,)

# claims.csv and readings.csv (kind, n, interval and readings.csv's first five columns are public).
COLUMNS = ["claim_id", "paper", "kind", "where", "statement", "paper_value", "ours", "verdict", "n", "interval",
           "rule", "to_decide", "readings", "settings", "depends_on", "notebook", "profile"]
READING_COLUMNS = ["claim_id", "reading", "value", "ours", "verdict", "default", "notebook", "profile"]


class ClaimsError(ValueError):
    """A claim that cannot enter the ledger (unknown id, recorded twice, damaged file): one line."""


@dataclass(frozen=True)
class Outcome:
    """What a rule says of a claim: the verdict and what it was computed from.

    ``ours`` is our number in words; ``n`` what the interval is over; ``interval`` the interval the
    verdict reads; ``rule`` the rule with its threshold; ``to_decide`` (inconclusive rows) about how
    much more data would decide it.
    """

    verdict: str
    ours: str = ""
    n: str = ""
    interval: str = ""
    rule: str = ""
    to_decide: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ClaimsError(f"Outcome.verdict must be one of {', '.join(VERDICTS)}, got {self.verdict!r}")

    @property
    def holds(self) -> bool:
        return self.verdict == REPRODUCED

    def with_ours(self, ours: str) -> Outcome:
        """The same outcome described by another text (a notebook's wording of the number)."""
        return Outcome(self.verdict, ours, self.n, self.interval, self.rule, self.to_decide)
