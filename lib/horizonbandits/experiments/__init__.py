"""Grids over the models and the figure builders of the notebooks.

``run_grid`` (module ``grid``) is the one public grid: rising instances, commitment problems or
portfolio problems, policies, horizons and seeds in; one tidy table out (``model, problem, policy, T,
seed_index, regret, root_seed`` and the model's own columns), cached on disk and run on loky, dask or
in process (``horizonbandits.compute``). The model grids it calls are private: the rising one in
``rising_grid`` (with the helpers ``make_policies``, ``policy_settings`` and ``instance_set``), the
commitment one in ``commit.grid`` (with ``summary_table``), the portfolio one in ``commit.portfolio_model``.

``figure2``, ``ablations`` and ``dominance`` build the rising paper's figures and probes on top of it.
The statistics over finished tables are in ``horizonbandits.stats`` (``regret_summary``, ``win_rates``,
``win_rate_matrix``, ``paired_differences``).
"""
from __future__ import annotations

from .grid import MODELS, TIDY_COLUMNS, model_of, run_grid  # noqa: F401
from .rising_grid import (INSTANCE_FAMILIES, instance_digest, instance_seed, instance_set,  # noqa: F401
                          make_policies, policy_identity, policy_settings)
