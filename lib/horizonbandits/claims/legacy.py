"""The notebooks' former way of recording claims, kept only while they move to :class:`Ledger` and
the rules: a ``Claim`` carries a verdict computed in the notebook from points. Its rows say so in
their ``rule`` column, and the catalogue still supplies paper, kind, statement and paper's value."""
from __future__ import annotations

from dataclasses import dataclass, field

from .ledger import Ledger
from .model import NOT_REPRODUCED, NOT_TESTABLE, PARTLY, REPRODUCED, Outcome

POINT_RULE = "point verdict computed in the notebook (not yet through an interval rule)"


@dataclass(frozen=True)
class Claim:
    claim_id: str
    paper: str
    where: str
    statement: str
    paper_value: str = ""
    ours: str = ""
    verdict: str = NOT_TESTABLE
    depends_on: tuple[str, ...] | list[str] = field(default_factory=tuple)


def verdict_of(holds: bool, partly: bool = False) -> str:
    if bool(holds):
        return REPRODUCED
    return PARTLY if bool(partly) else NOT_REPRODUCED


def not_testable(claim_id: str, paper: str, where: str, statement: str, reason: str, paper_value: str = "",
                 depends_on=()) -> Claim:
    return Claim(claim_id, paper, where, statement, paper_value=paper_value, ours=f"not testable: {reason}",
                 verdict=NOT_TESTABLE, depends_on=depends_on)


def record(notebook: str, output_dir, claims, profile: str | None = None):
    ledger = Ledger(notebook, output_dir, profile=profile)
    for c in claims:
        deps = [c.depends_on] if isinstance(c.depends_on, str) else list(c.depends_on)
        ledger.check(c.claim_id, Outcome(c.verdict, c.ours, rule=POINT_RULE),
                     settings={"choices": "; ".join(deps)} if deps else None)
    return ledger.save()
