"""horizonbandits: a research workbook for bandits where the known horizon changes the right decision.

Subpackages: ``horizonbandits.rising`` (rising rested bandits, CURE-UCB paper) and
``horizonbandits.commit`` (experimentation then commitment under a reward shift, RAEC paper).
"""
__version__ = "0.1.0"
