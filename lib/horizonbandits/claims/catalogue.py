"""The catalogue: every claim the workbook checks, listed once (``catalogue.yaml`` beside this file).

An entry gives the claim's paper, kind, the notebook that records it, where the paper says it, the
statement and the paper's value. A notebook records only the id and our numbers; the ledger takes
the rest from here, so a statement cannot drift between runs or notebooks.

A notebook copied with ``hb new`` records the claims of the notebook it was copied from; those rows
are the copy's own: id ``<copy>.<id>``, kind ``ours`` (a copy with other parameters or another family
is not a test of the paper), statement and paper's value kept from the source for reference.
"""
from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from .model import KINDS, PAPERS, ClaimsError

CATALOGUE_FILE = Path(__file__).with_name("catalogue.yaml")
# A workbook with a catalogue of its own (``<root>/catalogue.yaml``: another project built on this
# package, the tests' fixture workbook) points its kernels and ``hb run`` at it through this variable.
CATALOGUE_ENV = "HB_CATALOGUE"
_ID = re.compile(r"[AB]-[A-Za-z0-9][A-Za-z0-9.-]*")
_NOTEBOOK = re.compile(r"[a-z][a-z0-9_]*")
FIELDS = ("paper", "kind", "notebook", "where", "statement", "paper_value")


@dataclass(frozen=True)
class Entry:
    """One catalogued claim."""

    claim_id: str
    paper: str
    kind: str
    notebook: str
    where: str
    statement: str
    paper_value: str = ""

    def copied_to(self, notebook: str) -> Entry:
        """The entry as a copy ``notebook`` records it: its own id, kind ``ours``."""
        return replace(self, claim_id=f"{notebook}.{self.claim_id}", kind="ours", notebook=notebook,
                       statement=f"(copy of {self.notebook}) {self.statement}")


def parse(data, source: str = "catalogue") -> dict[str, Entry]:
    """Entries from the mapping read from a catalogue file, checked field by field (one-line errors)."""
    if not isinstance(data, dict):
        raise ClaimsError(f"{source}: expected a mapping of claim ids to entries")
    entries = {}
    for claim_id, fields in data.items():
        where = f"{source}: {claim_id!r}"
        if not isinstance(claim_id, str) or not _ID.fullmatch(claim_id):
            raise ClaimsError(f"{where}: a claim id is the paper's letter, a dash, then letters, digits, dots "
                              "and dashes (e.g. A-fig2a-ltf-lowest-every-T)")
        if not isinstance(fields, dict):
            raise ClaimsError(f"{where}: expected the fields {', '.join(FIELDS)}")
        unknown = sorted(set(fields) - set(FIELDS))
        missing = [f for f in FIELDS if f not in fields and f != "paper_value"]
        if unknown or missing:
            raise ClaimsError(f"{where}: " + "; ".join(
                ([f"unknown fields {unknown}"] if unknown else []) + ([f"missing fields {missing}"] if missing else []))
                + f" (fields: {', '.join(FIELDS)})")
        values = {k: "" if fields.get(k) is None else str(fields.get(k)) for k in FIELDS}
        if values["paper"] not in PAPERS or not claim_id.startswith(values["paper"] + "-"):
            raise ClaimsError(f"{where}: paper must be {' or '.join(PAPERS)} and the id's first letter")
        if values["kind"] not in KINDS:
            raise ClaimsError(f"{where}: kind {values['kind']!r} is not allowed; expected one of {', '.join(KINDS)}")
        if not _NOTEBOOK.fullmatch(values["notebook"]):
            raise ClaimsError(f"{where}: notebook {values['notebook']!r} is not a notebook name")
        entries[claim_id] = Entry(claim_id, **values)
    return entries


@lru_cache(maxsize=4)
def _load(path: str, mtime_ns: int) -> dict[str, Entry]:
    import yaml

    text = Path(path).read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ClaimsError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
    return parse(data, Path(path).name)


def default_path() -> Path:
    """``$HB_CATALOGUE`` when set, else the package's ``catalogue.yaml``."""
    env = os.environ.get(CATALOGUE_ENV)
    return Path(env).expanduser() if env else CATALOGUE_FILE


def load(path: str | Path | None = None) -> dict[str, Entry]:
    """The catalogue's entries by id (:func:`default_path` unless ``path``; read again when the file
    changes). A catalogue that cannot be read is a one-line error naming it."""
    path = Path(path) if path is not None else default_path()
    try:
        mtime = path.stat().st_mtime_ns
    except OSError as exc:
        raise ClaimsError(f"claims catalogue {path} cannot be read ({exc.strerror or exc})") from None
    return _load(str(path), mtime)


def lookup(claim_id: str, notebook: str, catalogue: dict[str, Entry] | None = None) -> Entry:
    """The entry ``notebook`` records under ``claim_id``: the catalogued one when the notebook owns
    it, its copy (``<notebook>.<id>``, kind ``ours``) when another notebook does. An id the catalogue
    does not know is a one-line error with the closest ids."""
    catalogue = load() if catalogue is None else catalogue
    entry = catalogue.get(claim_id)
    if entry is None:
        close = difflib.get_close_matches(str(claim_id), list(catalogue), n=2)
        hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
        raise ClaimsError(f"claim {claim_id!r} recorded by {notebook} is not in the catalogue "
                          f"({default_path().name}){hint}; add an entry there first")
    return entry if entry.notebook == notebook else entry.copied_to(notebook)


def of_notebook(notebook: str, catalogue: dict[str, Entry] | None = None) -> list[Entry]:
    """The catalogued claims ``notebook`` owns, in catalogue order."""
    catalogue = load() if catalogue is None else catalogue
    return [e for e in catalogue.values() if e.notebook == notebook]


def resolve(claim_id: str, catalogue: dict[str, Entry] | None = None) -> Entry | None:
    """The entry of a ledger id: a catalogued id, or a copy's ``<notebook>.<id>``; None if neither."""
    catalogue = load() if catalogue is None else catalogue
    if claim_id in catalogue:
        return catalogue[claim_id]
    notebook, dot, rest = claim_id.partition(".")
    if dot and _NOTEBOOK.fullmatch(notebook) and rest in catalogue:
        return catalogue[rest].copied_to(notebook)
    return None
