"""Run the workbook's notebooks with papermill and build ``outputs/<profile>/``.

The modules, along the data path of ``hb run``:

- ``locate``: where ``notebooks/``, ``params/`` and ``outputs/`` live; every notebook's title and
  one-line description (a notebook that cannot be read is listed with the reason).
- ``params``: the defaults of a notebook's ``parameters`` cell and the parameter files checked
  against them (keys, types, list elements, policy names, files that belong to no notebook).
- ``execute`` and ``worker``: one notebook through papermill in a worker process, into a staging
  folder whose files replace the previous run's only when the run succeeds.
- ``runner``: the profile lock, the worker processes, Ctrl-C, the kernels' environment; ``cluster``: the
  check that a dask scheduler answers at ``--cluster ADDRESS`` before anything runs.
- ``report`` and ``pages``: ``manifest.json``, ``claims.csv`` and ``readings.csv``, ``index.html`` (CSS in
  ``index.css``) and the rendered notebook pages, none of which loads anything from the network.
- ``new``: ``hb new``; ``verify``: ``hb cache verify``.

User mistakes raise ``WorkbookError`` whose message is one line (``ValidationError`` carries one line
per problem); the CLI prints them without a traceback.
"""
from .base import KERNEL_NAME, PACKAGE_DIR, PROFILES, ValidationError, WorkbookError
from .cluster import check_scheduler
from .execute import Result, Task, adopt_outputs, describe_failure, execute_notebook, owner_of, render_html
from .locate import NotebookInfo, Workbook, read_notebook, title_and_description
from .new import NAME_PATTERN, new_notebook, placeholder_description
from .params import (Plan, check_overrides, check_policy_names, load_overrides, parameters_cells, parameters_of,
                     plan_run, policy_registries, profile_parameters, stray_parameter_files)
from .report import (MANIFEST_PACKAGES, build_manifest, git_state, outputs_by_notebook, package_versions,
                     read_manifest, recorded_outputs, render_index, write_reports)
from .runner import CACHE_ENV, CLUSTER_ENV, check_writable, exclusive_profile_dir, kernel_environment, run
from .verify import verify_cache

__all__ = ["KERNEL_NAME", "PACKAGE_DIR", "PROFILES", "ValidationError", "WorkbookError", "check_scheduler", "Result", "Task",
           "adopt_outputs", "describe_failure", "execute_notebook", "owner_of", "render_html", "NotebookInfo",
           "Workbook", "read_notebook", "title_and_description", "NAME_PATTERN", "new_notebook",
           "placeholder_description", "Plan",
           "check_overrides", "check_policy_names", "load_overrides", "parameters_cells", "parameters_of",
           "plan_run", "policy_registries", "profile_parameters", "stray_parameter_files", "MANIFEST_PACKAGES", "build_manifest",
           "git_state", "outputs_by_notebook", "package_versions", "read_manifest", "recorded_outputs", "render_index",
           "write_reports", "CACHE_ENV", "CLUSTER_ENV", "check_writable", "exclusive_profile_dir",
           "kernel_environment", "run", "verify_cache"]
