"""The progress bar of the workbook's loops: tqdm's widget bar in a notebook open in JupyterLab, the
text bar everywhere else.

The rule: a Jupyter server (JupyterLab, Notebook) sets ``JPY_SESSION_NAME`` in the environment of
every kernel it starts for a notebook; papermill, nbconvert, scripts and terminals start none with
it. Only there does a front end draw widgets. Elsewhere a widget bar would leave a frozen "0%" text
and the widgets' state in the executed notebook (and the rendered page would try to load a widget
renderer), so those runs get the plain text bar. A kernel of `hb run` started from inside a notebook
inherits the variable; that case gets widget bars in its executed notebooks.
"""
from __future__ import annotations

import functools
import os

from tqdm.std import tqdm as text_bar


def _in_ipython_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and "IPKernelApp" in shell.config


def choose_bar(environ=None, in_kernel: bool | None = None):
    """The tqdm class to use: ``tqdm.notebook.tqdm`` when a Jupyter server started this kernel and
    ipywidgets is installed, else ``tqdm.std.tqdm`` (the arguments are for tests)."""
    environ = os.environ if environ is None else environ
    in_kernel = _in_ipython_kernel() if in_kernel is None else in_kernel
    if not (environ.get("JPY_SESSION_NAME") and in_kernel):
        return text_bar
    from tqdm import notebook
    return notebook.tqdm if notebook.IProgress is not None else text_bar  # IProgress is None without ipywidgets


@functools.cache
def chosen_bar():
    """:func:`choose_bar` for this process, asked at its first bar and then kept."""
    return choose_bar()


def tqdm(*args, **kwargs):
    """What ``from horizonbandits.progress import tqdm`` gives: a bar of :func:`chosen_bar`'s class. The class is
    chosen at the first bar, not when this module is imported: ``hb run``'s kernel pool imports it before a
    kernel's shell exists (``workbook.kernel_pool``)."""
    return chosen_bar()(*args, **kwargs)
