"""Plain literals: the only values a parameter file may hand to a notebook.

papermill writes each parameter into the notebook's injected cell as Python source. Its translator
escapes strings, but a value of any other type falls through to ``f'"{value}"'`` unescaped, so a
``bytes`` value (``!!binary`` in YAML) holding a quote ends the string and runs code; dict keys
that are not strings become strings, tuples become their repr. So every value must be one of

    bool, int (64 bits), float (finite), str (valid Unicode), None, and lists and str-keyed dicts of them,

nested at most ``MAX_DEPTH`` deep, with at most ``MAX_NODES`` values in all (counted with every YAML
alias expanded: a 372-byte alias bomb names a billion values) and strings of at most ``MAX_STRING``
characters. Such values round-trip exactly through papermill's Python translator (the tests check
this with hypothesis) and through the manifest's JSON.
"""
from __future__ import annotations

import math
import reprlib

MAX_DEPTH = 10  # lists and mappings inside one another (a value at the top is depth 1)
MAX_NODES = 10_000  # values in one parameter file, aliases expanded
MAX_STRING = 10_000  # characters of one string
MAX_INT = 2**63 - 1  # larger integers are no size or seed the library takes

ALLOWED = ("true/false, integers, finite numbers, strings, null, and lists and mappings (with string keys) "
           "of them")

_SHORT = reprlib.Repr()
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = _SHORT.maxset = 6
_SHORT.maxstring = _SHORT.maxother = 60
_SHORT.maxlevel = 3


def short(value) -> str:
    """A repr of at most about a hundred characters, whatever the size of ``value``."""
    return _SHORT.repr(value)


class Budget:
    """How many more values a check may visit (shared by the keys of one file)."""

    def __init__(self, nodes: int = MAX_NODES):
        self.left = nodes


def literal_problem(value, budget: Budget | None = None, depth: int = 1) -> str | None:
    """Why ``value`` is not a plain literal within the bounds (one phrase), or None when it is.

    Visits at most ``budget.left`` values, so a shared structure that would expand to billions of
    values is refused after ``MAX_NODES`` steps."""
    budget = Budget() if budget is None else budget
    stack = [(value, depth)]
    while stack:
        item, level = stack.pop()
        budget.left -= 1
        if budget.left < 0:
            return f"holds more than {MAX_NODES:,} values (counting every alias expanded)"
        if level > MAX_DEPTH:
            return f"is nested more than {MAX_DEPTH} levels deep"
        if item is None or isinstance(item, bool):
            continue
        if type(item) is int:
            if not -MAX_INT <= item <= MAX_INT:
                return f"holds an integer beyond 64 bits ({short(item)})"
            continue
        if type(item) is float:
            if not math.isfinite(item):
                return f"holds {item!r}, which is not a finite number"
            continue
        if type(item) is str:
            if len(item) > MAX_STRING:
                return f"holds a string of {len(item):,} characters (at most {MAX_STRING:,})"
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate ("\ud800" in YAML): the notebook's JSON cannot hold it
                return f"holds the string {short(item)}, which is not valid Unicode"
            continue
        if type(item) is list:
            stack.extend((x, level + 1) for x in reversed(item))
            continue
        if type(item) is dict:
            for key, sub in reversed(list(item.items())):
                if type(key) is not str:
                    return (f"has the mapping key {short(key)} ({type(key).__name__}); keys must be strings "
                            "(quote them)")
                stack.append((sub, level + 1))
            continue
        return f"holds {short(item)} ({_kind(item)}), which is not a plain literal; allowed: {ALLOWED}"
    return None


def _kind(item) -> str:
    name = type(item).__name__
    hints = {"bytes": "bytes, from a !!binary tag", "set": "a set, from a !!set tag", "tuple": "a tuple",
             "date": "a date", "datetime": "a timestamp"}
    return hints.get(name, name)
