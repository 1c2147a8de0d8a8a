"""``hb run``'s kernel pool: the notebooks' kernels forked from one process that has already imported what they import.

A fresh kernel (``python -m ipykernel_launcher``) spent about 1.9 CPU-s on its start and imports (ipykernel, numpy,
pandas, matplotlib, numba, seaborn, the package), paid once per notebook; forked from the pool, 0.5 with its share of
the pool (measured 2026-12-04, docs/performance.md: the fixed cost per warm notebook 4.04 -> 2.71 CPU-s). With two
or more notebooks to run, ``hb run`` starts one pool process (``python -m horizonbandits.workbook.kernel_pool``, see
:class:`KernelPool`) that imports :data:`PRELOAD` once and forks a kernel for each notebook that asks.

How a kernel is asked for. The worker's kernel manager (``execute``) launches, instead of the kernel spec's
command, ``python -S -I kernel_client.py SOCKET <that command>`` (:func:`client_command`). The client sends the
command, its working folder, its environment, its standard streams and the read end of a *lifeline* pipe over
the pool's Unix socket. The pool forks; the child becomes the kernel: a session of its own, the client's folder,
environment and streams, then ipykernel's application with the command's arguments. The client stays as the
kernel's stand-in for jupyter_client: it passes signals on (an interrupt), exits with the kernel's status, and
when it is killed (``shutdown_kernel="immediate"``, a stop, its worker gone) the kernel sees the lifeline close and
kills its process group. When the pool cannot serve (not running, or another interpreter or interpreter options in
the command), the client executes the command itself and the kernel is an ordinary one.

The same numbers: the modules a notebook imports are the same modules, imported before its first cell instead of
during it; nothing is computed in the pool. ``MPLBACKEND`` is set before matplotlib is imported, to the inline
backend ipykernel sets, and the backend itself is only resolved in the kernel (matplotlib does it at the first
figure), so the inline display hooks are installed in the kernel's own shell. The test suite runs two notebooks
both ways, compares their tables and checks that each shows its figure inline (``tests/test_kernel_pool.py``).

Linux only (forking a process that has loaded numpy or matplotlib is not safe on macOS); ``HB_KERNEL_POOL=0``
turns it off. The socket lies in a folder only this user can enter (``mkdtemp``: mode 0700) and the pool serves
only a peer of its own user id (``SO_PEERCRED``): forking a kernel runs code of the requester's choice.
"""
from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from .. import timing
from . import stacks

SWITCH_ENV = "HB_KERNEL_POOL"  # "0": no pool (every kernel a fresh process)
SOCKET_ENV = "HB_KERNEL_POOL_SOCKET"  # set by hb run for its workers: where the pool listens
CLIENT = Path(__file__).with_name("kernel_client.py")
LAUNCHER = "ipykernel_launcher"
# The interpreter options of ipykernel's kernel spec (ipykernel >= 6.22 writes -Xfrozen_modules=off, for its
# debugger); the pool runs with them, and serves only a command that has exactly these.
POOL_OPTIONS = ("-Xfrozen_modules=off",)
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"  # what ipykernel sets MPLBACKEND to
# What the notebooks import (counted over notebooks/*.ipynb, 2026-12-04), heaviest first. A module missing here
# costs the notebook that imports it its own import, as before.
PRELOAD = ("ipykernel.kernelapp", "numpy", "pandas", "matplotlib.pyplot", "numba", "scipy.special", "scipy.stats",
           "seaborn", "IPython.display", "horizonbandits.plotting", "horizonbandits.stats", "horizonbandits.claims",
           "horizonbandits.experiments", "horizonbandits.rising", "horizonbandits.commit",
           "horizonbandits.workbook.params")
MIN_NOTEBOOKS = 2  # a run of one notebook gains nothing: the pool's imports are the kernel's
REQUEST_TIMEOUT_S = 10.0  # how long the pool waits for a connected client's whole request


def wanted(env: dict, n_notebooks: int) -> bool:
    """Whether ``hb run`` should start a pool for ``n_notebooks`` notebooks in the environment ``env``."""
    return sys.platform.startswith("linux") and env.get(SWITCH_ENV, "1") != "0" and n_notebooks >= MIN_NOTEBOOKS


def client_command(cmd: list[str], env=os.environ) -> list[str]:
    """The command the worker launches for the kernel ``cmd``: through the pool's client when ``hb run`` has a
    pool (``$HB_KERNEL_POOL_SOCKET``) and ``cmd`` is an ipykernel one, else ``cmd`` itself."""
    path = env.get(SOCKET_ENV)
    if not path or LAUNCHER not in cmd:
        return cmd
    return [sys.executable, "-S", "-I", str(CLIENT), path, *cmd]


def kernel_arguments(cmd: list[str]) -> list[str] | None:
    """The kernel's arguments if this pool can serve ``cmd`` (this interpreter, :data:`POOL_OPTIONS`,
    ``-m ipykernel_launcher``), else None."""
    try:
        at = cmd.index("-m")
    except ValueError:
        return None
    if at + 1 >= len(cmd) or cmd[at + 1] != LAUNCHER or os.path.abspath(cmd[0]) != os.path.abspath(sys.executable):
        return None
    if tuple(cmd[1:at]) != POOL_OPTIONS:
        return None
    return cmd[at + 2:]


# --------------------------------------------------------------------------- in hb run


class KernelPool:
    """The pool process of one ``hb run``: started with the workers' environment in the notebooks' folder; its
    socket goes to the workers as ``$HB_KERNEL_POOL_SOCKET``; :meth:`close` stops it and its kernels."""

    def __init__(self, env: dict, cwd: str | Path):
        self.dir = tempfile.mkdtemp(prefix="hb-kernels-")  # mode 0700: nobody else reaches the socket
        self.socket = os.path.join(self.dir, "pool.sock")
        self.log_path = os.path.join(self.dir, "pool.log")
        # Bound and listening here, before the pool process exists: a worker that asks before the pool has
        # started waits in the backlog instead of finding no socket (and silently getting an ordinary kernel).
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(self.socket)
            listener.listen(64)
            with open(self.log_path, "wb") as log:
                self.proc = subprocess.Popen(
                    [sys.executable, *POOL_OPTIONS, "-m", "horizonbandits.workbook.kernel_pool",
                     str(listener.fileno()), str(os.getpid())],
                    env=env, cwd=str(cwd), start_new_session=True, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                    pass_fds=(listener.fileno(),))
        finally:
            listener.close()  # the pool's copy only: once it is gone, a client is refused and runs its own kernel

    def close(self) -> str | None:
        """Stop the pool (its kernels are killed with it) and remove its folder; a line saying why the pool
        ended by itself, if it did (its kernels were then ordinary ones), else None."""
        problem = None
        if self.proc.poll() is not None and self.proc.returncode != 0:
            tail = Path(self.log_path).read_text(errors="replace").strip().splitlines()[-1:] or [""]
            problem = f"the kernel pool ended with status {self.proc.returncode} ({tail[0][:200]})"
        else:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
        return problem


# --------------------------------------------------------------------------- the pool process


def preload(names=PRELOAD, log=sys.stderr) -> None:
    """Import ``names``; one that fails is left to the notebook (its error is the notebook's to show)."""
    import importlib

    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - the kernel imports it again and reports what it finds
            print(f"kernel pool: not preloaded: {name}: {type(exc).__name__}: {exc}", file=log, flush=True)


def _peer_uid(conn: socket.socket) -> int:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def _read_request(conn: socket.socket) -> tuple[dict, list[int]]:
    """A client's request: one JSON line, the file descriptors (stdin, stdout, stderr, lifeline) with its first
    bytes."""
    conn.settimeout(REQUEST_TIMEOUT_S)
    data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 4)
    while not data.endswith(b"\n"):
        more = conn.recv(1 << 20)
        if not more:
            raise ConnectionError("the client closed before its request ended")
        data += more
    conn.settimeout(None)
    return json.loads(data), list(fds)


class _Pool:
    def __init__(self, listener_fd: int, parent_pid: int):
        self.parent_pid = parent_pid
        self.children: dict[int, socket.socket] = {}  # kernel pid -> its client's connection
        self.listener = socket.socket(fileno=listener_fd)  # bound and listening (KernelPool): early clients wait
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake the loop (the wakeup fd)
        signal.signal(signal.SIGTERM, self._terminate)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.selector.register(self.wake_r, selectors.EVENT_READ)

    @staticmethod
    def _terminate(*_):
        raise SystemExit(0)

    def serve(self) -> None:
        try:
            while os.getppid() == self.parent_pid:
                for key, _ in self.selector.select(timeout=0.5):
                    if key.fileobj is self.listener:
                        self._accept()
                    else:
                        while True:
                            try:
                                if not os.read(self.wake_r, 512):
                                    break
                            except BlockingIOError:
                                break
                self._reap()
        finally:
            for pid in list(self.children):
                try:
                    os.killpg(pid, signal.SIGKILL)  # each kernel leads its own process group
                except OSError:
                    pass
            timing.flush()

    def _accept(self) -> None:
        conn, _ = self.listener.accept()
        fds: list[int] = []
        try:
            if _peer_uid(conn) != os.getuid():
                raise PermissionError("a client of another user")
            request, fds = _read_request(conn)
            args = kernel_arguments(request.get("cmd", []))
            if args is None or len(fds) != 4:
                conn.sendall(b"exec\n")  # not ours to serve: the client runs the command itself
                raise ConnectionAbortedError
        except (OSError, ValueError):  # ConnectionAbortedError, PermissionError, a broken request
            for fd in fds:
                os.close(fd)
            conn.close()
            return
        timing.flush()  # so nothing of the pool's own time is left for the child to inherit
        pid = os.fork()
        if pid == 0:
            self._become_kernel(conn, request, args, fds)  # never returns
        for fd in fds:
            os.close(fd)
        try:
            conn.sendall(f"pid {pid}\n".encode())
        except OSError:
            pass
        self.children[pid] = conn

    def _reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            if conn is not None:
                try:
                    conn.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
                except OSError:
                    pass
                conn.close()

    def _become_kernel(self, conn: socket.socket, request: dict, args: list[str], fds: list[int]) -> None:
        code = 1
        try:
            signal.set_wakeup_fd(-1)
            for sig in (signal.SIGCHLD, signal.SIGTERM):
                signal.signal(sig, signal.SIG_DFL)
            self.selector.close()
            self.listener.close()
            os.close(self.wake_r)
            os.close(self.wake_w)
            for other in self.children.values():
                other.close()
            conn.close()
            os.setsid()  # its own process group, which it kills when its client is gone
            stdin, stdout, stderr, lifeline = fds
            for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
                os.dup2(fd, target)
                os.close(fd)
            threading.Thread(target=_die_with_client, args=(lifeline,), daemon=True, name="hb-lifeline").start()
            os.chdir(request["cwd"])
            os.environ.clear()
            os.environ.update(request["env"])
            sys.path[0] = request["cwd"]  # as for ``python -m ipykernel_launcher`` started there
            timing.forked()
            import importlib.util

            from ipykernel import kernelapp

            # The kernel's parent is this pool, not the worker that asked: ipykernel exits if the pool goes.
            sys.argv = [importlib.util.find_spec(LAUNCHER).origin, *args,
                        f"--IPKernelApp.parent_handle={os.getppid()}"]
            kernelapp.launch_new_instance()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # noqa: BLE001 - said on the kernel's stderr (the worker's kernel log)
            import traceback

            traceback.print_exc()
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:  # noqa: BLE001
                    pass
            os._exit(code)


def _die_with_client(lifeline: int) -> None:
    """In a forked kernel: block on the lifeline; when the client is gone (the read sees the pipe's end), kill this
    kernel's process group (itself and any worker processes of its own)."""
    while True:
        try:
            if not os.read(lifeline, 64):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    os.killpg(0, signal.SIGKILL)


def main(argv: list[str]) -> None:
    timing.begin("kernel pool")
    listener_fd, parent_pid = int(argv[0]), int(argv[1])
    pool = _Pool(listener_fd, parent_pid)
    stacks.dump_on_signal()  # kill -USR1: where the pool is, into pool.log; its forked kernels inherit it
    os.environ.pop("JPY_PARENT_PID", None)
    os.environ.setdefault("MPLBACKEND", INLINE_BACKEND)
    preload()
    pool.serve()


if __name__ == "__main__":
    status = 1
    try:
        main(sys.argv[1:])
        status = 0
    except SystemExit as stop:  # SIGTERM from hb run
        status = stop.code if isinstance(stop.code, int) else 0
    except BaseException:  # noqa: BLE001 - into the pool's log; hb run says the pool ended
        import traceback

        traceback.print_exc()
    finally:  # in the pool only (a kernel ends in _become_kernel): nothing to tear down, so skip the teardown
        timing.flush()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
