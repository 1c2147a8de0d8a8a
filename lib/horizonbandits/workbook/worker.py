"""The worker process of ``hb run``: executes one notebook (``execute.execute_notebook``); ``hb run`` renders
its page when the worker has ended (``execute.render_staged_page``).

    python -m horizonbandits.workbook.worker TASK.pickle RESULT.pickle PARENT_PID

It runs in its own session, so a Ctrl-C in the terminal reaches ``hb run`` only, which then stops
its workers with SIGTERM; a worker whose parent is gone stops by itself. Either way it kills its
kernel first. The result is written atomically, so ``hb run`` reads a whole one or none.
"""
from __future__ import annotations

import os
import pickle
import sys

from .. import timing
from .base import is_disk_full
from .execute import execute_notebook, stop_with_parent
from .stacks import dump_on_signal
from ..outputs import atomic_write

# The status of a worker that could not write for want of space (its result included): ``hb run``
# reports the disk as full instead of "ended without a result" (the log may be empty, for the same reason).
EXIT_DISK_FULL = 28


def main(argv: list[str]) -> int:
    try:
        return _main(argv)
    except OSError as exc:
        if is_disk_full(exc):
            os._exit(EXIT_DISK_FULL)
        raise


def leave(status: int) -> None:
    """End the process now, skipping the interpreter's shutdown (its modules' teardown): the result is
    written and closed, the kernel is gone, and nothing else of the process needs finishing."""
    timing.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _main(argv: list[str]) -> int:
    timing.begin("worker start")
    task_path, result_path, parent_pid = argv[0], argv[1], int(argv[2])
    stop_with_parent(parent_pid)
    dump_on_signal()  # kill -USR1: where this worker is, into its log
    with open(task_path, "rb") as fh:
        task = pickle.load(fh)
    # Quieter kernels: no jupyter path-migration notice, no debugger frozen-modules warning.
    os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    result = execute_notebook(task, render_page=False)  # hb run renders the page (execute.render_staged_page)

    def write(tmp):
        with open(tmp, "wb") as fh:
            pickle.dump(result, fh)

    atomic_write(result_path, write)
    timing.switch("worker exit")
    return 0


if __name__ == "__main__":
    leave(main(sys.argv[1:]))
