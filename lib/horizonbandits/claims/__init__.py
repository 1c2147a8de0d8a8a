"""The papers' claims as data: kinds, interval-aware verdict rules, the catalogue and the ledger.

A notebook checks its claims with a rule of :mod:`~horizonbandits.claims.rules` and records them in
a :class:`Ledger`::

    from horizonbandits import claims
    from horizonbandits.claims import rules
    ledger = claims.Ledger("ltf_experiments", output_dir, settings={"noise": noise})
    ledger.check("A-sec6.1-ltf-winrate-89", rules.compare(win_rate, 0.75, ">"))
    ledger.save()

What each claim says, where the paper says it, the paper's value and the claim's **kind** (``test``,
``illustration``, ``formula``, ``ours``) are in the catalogue (``claims/catalogue.yaml``), never in the
notebook. ``hb run`` merges the notebooks' files into ``outputs/<profile>/claims.csv`` and
``readings.csv`` (:func:`write_ledger`); ``hb claims`` prints them and ``hb claims --diff OTHER``
compares two ledgers. Only ``test`` claims count in the papers' tallies.

Papers: ``A`` is the CURE-UCB paper (rising bandits with known horizons, arXiv 2602.10727), ``B``
the experimentation-and-commitment paper (RAEC, ROSCOC, arXiv 2607.23432).
"""
from __future__ import annotations

from ..outputs import resolve_output_dir
from ..stats import Estimate
from . import catalogue, rules
from .catalogue import Entry
from .ledger import (DIFF_COLUMNS, Ledger, LedgerView, Merged, counts, diff, merge, paper_tallies, read_table, show,
                     summary_line, tally, write_ledger, write_merged)
from .model import (COLUMNS, INCONCLUSIVE, KIND_TITLES, KINDS, LEDGER_VERDICTS, MISSING, NOT_REPRODUCED, NOT_TESTABLE,
                    PAPERS, PARTLY, READING_COLUMNS, REPRODUCED, VERDICTS, ClaimsError, Outcome)


def read(path):
    """A profile's ``claims.csv``, checked (columns, fields, papers, kinds, verdicts)."""
    return read_table(path)


__all__ = ["Ledger", "LedgerView", "Merged", "Outcome", "Estimate", "Entry", "ClaimsError", "rules", "catalogue",
           "COLUMNS", "READING_COLUMNS", "DIFF_COLUMNS", "KINDS", "KIND_TITLES", "PAPERS", "VERDICTS",
           "LEDGER_VERDICTS", "REPRODUCED", "PARTLY", "NOT_REPRODUCED", "INCONCLUSIVE", "NOT_TESTABLE", "MISSING",
           "read", "read_table", "merge", "write_ledger", "write_merged", "counts", "summary_line", "tally",
           "paper_tallies", "diff",
           "show", "resolve_output_dir"]
