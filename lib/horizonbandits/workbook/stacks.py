"""Where a run is: ``kill -USR1 PID`` makes a process of ``hb run`` write the Python stack of each of its threads
(``faulthandler``), without stopping it.

Each process writes to its own standard error: ``hb run`` to the terminal, a worker to
``<profile>/.running/<name>.worker.log``, the kernel pool to ``pool.log`` in its folder, and a kernel forked by the
pool to ``<profile>/.running/<name>/kernel.log`` (the pool's handler is inherited by the fork and writes to the
descriptor 2 the kernel then has; the pool's client passes the signal on, so either pid will do). A kernel started
without the pool has no handler. The test suite uses it to say where a smoke run that does not end is stuck
(``tests/conftest.py``).
"""
from __future__ import annotations

import faulthandler
import signal
import sys

SIGNAL = getattr(signal, "SIGUSR1", None)  # None on Windows: no dump there


def dump_on_signal(file=None) -> None:
    """From now on, SIGUSR1 writes every thread's stack to ``file`` (default: standard error) and the process goes on."""
    if SIGNAL is None:
        return
    try:
        faulthandler.register(SIGNAL, file=file or sys.stderr, all_threads=True)
    except (AttributeError, ValueError, OSError):  # no usable descriptor (stderr closed or replaced): no dump
        pass
