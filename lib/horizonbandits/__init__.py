"""horizonbandits: a research workbook for bandits where the known horizon changes the right decision.

Subpackages: ``horizonbandits.rising`` (rising rested bandits, CURE-UCB paper) and
``horizonbandits.commit`` (experimentation then commitment under a reward shift, RAEC paper).
``import horizonbandits as hb`` then ``hb.rising``, ``hb.commit``, ``hb.plotting``... (loaded on first use).
"""
import importlib

from . import _numba_cache

__version__ = "0.1.0"
_numba_cache.configure_when_numba_loads()  # before any kernel module decorates a function

_SUBMODULES = ("rising", "commit", "plotting", "experiments", "testing", "outputs", "errors", "rng", "workbook",
               "claims")


def __getattr__(name):
    if name == "NUMBA_CACHE":  # the folder numba caches in (None: $NUMBA_CACHE_DIR, or numba's default)
        return _numba_cache.configure_numba_cache()
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'horizonbandits' has no attribute {name!r}")
