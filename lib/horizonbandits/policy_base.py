"""What every policy shares, whatever its model: a registry entry, a label and checked hyperparameters.

A policy is a frozen dataclass of hyperparameters. Each family derives one base class from
:class:`Policy` and names its registry there::

    COMMIT_POLICIES: dict[str, type] = {}

    @dataclass(frozen=True)
    class CommitPolicy(Policy, registry=COMMIT_POLICIES, kind="commitment policy"):
        ...

Every subclass of that family base that sets a non-empty ``name`` is then filed under it when its
module is imported (a second class with the same name is an error; re-importing the same class,
as a notebook reload does, is not). ``make(registry, name, **params)`` builds one by name with a
one-line error for an unknown name, and ``label`` is the display name with the hyperparameters
that differ from their defaults: labels are grid keys, so their format never changes.

The families: rising bandits (``rising.policies.base.RisingPolicy``, registry ``POLICIES``),
experiment-then-commit (``commit.policies.base.CommitPolicy``, ``COMMIT_POLICIES``) and portfolios
(``commit.policies.base.PortfolioPolicy``, ``PORTFOLIO_POLICIES``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from typing import ClassVar


def register(registry: dict, cls: type, kind: str = "policy") -> type:
    """File ``cls`` under its display ``name`` in ``registry``; two different classes may not share a name."""
    if not getattr(cls, "name", ""):
        raise RuntimeError(f"{kind} {cls.__qualname__} has no display name")
    if cls.name in registry and registry[cls.name].__qualname__ != cls.__qualname__:
        raise RuntimeError(f"two {kind.replace('policy', 'policies')} are named {cls.name!r}")
    registry[cls.name] = cls
    return cls


def make(registry: dict, name: str, **params):
    """``registry[name](**params)`` with a one-line error naming the allowed names when ``name`` is unknown."""
    if name not in registry:
        raise ValueError(f"policy={name!r} is not allowed: expected one of {', '.join(sorted(registry))}")
    return registry[name](**params)


@dataclass(frozen=True)
class Policy:
    """Base of every policy: the display ``name``, registration into the family's registry, ``label``.

    A family base passes ``registry=`` (the dict its policies are filed in) and ``kind=`` (how the
    duplicate-name error calls them) as class keywords; its subclasses inherit both.
    """

    name: ClassVar[str] = ""
    _registry: ClassVar[dict | None] = None
    _kind: ClassVar[str] = "policy"

    def __init_subclass__(cls, registry: dict | None = None, kind: str | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if registry is not None:
            cls._registry = registry
        if kind is not None:
            cls._kind = kind
        if cls.__dict__.get("name") and cls._registry is not None:
            register(cls._registry, cls, cls._kind)

    @property
    def label(self) -> str:
        """Display name with the hyperparameters that differ from their defaults (and those without a
        default), e.g. 'CURE-UCB(eps=0.5)' or "RAEC(commit='empirical')"; the bare name when none does."""
        changed = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)
                   if f.default is MISSING or getattr(self, f.name) != f.default]
        return self.name + (f"({', '.join(changed)})" if changed else "")

    def _check(self, field: str, check: Callable, *args, optional: bool = False, **kwargs) -> None:
        """Replace hyperparameter ``field`` by ``check(field, value, *args, **kwargs)`` (an ``errors.check_*``
        helper: it raises the one-line error or returns the normalised value); ``optional`` lets None through."""
        value = getattr(self, field)
        if optional and value is None:
            return
        object.__setattr__(self, field, check(field, value, *args, **kwargs))
