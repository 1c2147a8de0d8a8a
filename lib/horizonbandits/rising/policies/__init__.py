"""Rising-bandit policies. Every module in this folder is imported so that each policy registers
itself in ``POLICIES`` (display name -> class); adding a policy is adding one module."""
from __future__ import annotations

import importlib
import pkgutil

from .base import POLICIES, RisingPolicy, make_policy

for _mod in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if not _mod.startswith("_") and _mod != "base":
        importlib.import_module(f"{__name__}.{_mod}")

from .cure_ucb import CureUCB  # noqa: E402
from .red_ucb import RedUCB  # noqa: E402

__all__ = ["POLICIES", "RisingPolicy", "make_policy", "CureUCB", "RedUCB"]
