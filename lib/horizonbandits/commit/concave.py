"""Old name of ``commit.portfolio_model`` (the portfolio problem of section 6.2, its simulate and grid).

``import horizonbandits.commit.concave`` gives that very module (aliased in ``sys.modules``), so every
name it provides keeps working here, and a patch of an attribute here reaches the code that uses it.
"""
import sys

from . import portfolio_model

sys.modules[__name__] = portfolio_model
