"""The stand-in jupyter_client launches for a kernel of ``hb run``'s kernel pool (see ``kernel_pool``).

    python -S -I kernel_client.py SOCKET KERNEL_COMMAND...

Standard library only, run by its path (``-S -I``: no site, no package import; it starts in about 10 ms). It asks
the pool at SOCKET for a kernel running KERNEL_COMMAND in this process's folder, environment and standard streams,
then waits: it passes the signals it gets on to the kernel, exits when the kernel has exited (with its status),
and if its own parent (the worker) goes, it exits, which the kernel sees as its lifeline closing. If the pool
cannot be reached or declines, it executes KERNEL_COMMAND itself.
"""
import json
import os
import signal
import socket
import sys

CONNECT_TIMEOUT_S = 60.0  # the pool accepts once its imports are done (a few seconds)
POLL_S = 1.0  # how often the worker's presence is checked while the kernel runs
RELAYED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")


def ask_pool(path, cmd, lifeline):
    """The pool's reply (``pid N``) to a request for a kernel, with the connection; (None, None) when the pool
    cannot be reached or declines."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(CONNECT_TIMEOUT_S)
        conn.connect(path)
        request = json.dumps({"cmd": cmd, "cwd": os.getcwd(), "env": dict(os.environ)}).encode() + b"\n"
        socket.send_fds(conn, [request], [0, 1, 2, lifeline])
        buffer = b""
        while not buffer.endswith(b"\n"):
            more = conn.recv(256)
            if not more:
                break
            buffer += more
    except OSError:
        conn.close()
        return None, None
    reply = buffer.decode(errors="replace").strip()
    if not reply.startswith("pid "):
        conn.close()
        return None, None
    return reply, conn


def wait_for_kernel(conn, pid):
    """Wait for the pool's ``exit N`` line; the kernel's exit code (negative: killed by that signal)."""
    parent = os.getppid()
    conn.settimeout(POLL_S)
    buffer = b""
    while not buffer.endswith(b"\n"):
        try:
            more = conn.recv(256)
        except TimeoutError:
            if os.getppid() != parent:  # the worker is gone: go too (the kernel follows its lifeline)
                os._exit(1)
            continue
        except InterruptedError:
            continue
        if not more:  # the pool is gone, without saying how the kernel ended
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            return 1
        buffer += more
    return int(buffer.decode().split()[1])


def main(argv):
    path, cmd = argv[0], argv[1:]
    lifeline_r, lifeline_w = os.pipe()  # the write end stays here only: the kernel sees its end when we go
    reply, conn = ask_pool(path, cmd, lifeline_r)
    os.close(lifeline_r)
    if reply is None:
        os.close(lifeline_w)
        os.execv(cmd[0], cmd)  # no pool: an ordinary kernel, in this process
    pid = int(reply.split()[1])

    def relay(signum, _frame):
        try:
            os.kill(pid, signum)
        except OSError:
            pass

    for name in RELAYED:
        signal.signal(getattr(signal, name), relay)
    code = wait_for_kernel(conn, pid)
    if code < 0:  # end the way the kernel ended, so jupyter_client sees the same status
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)


if __name__ == "__main__":
    main(sys.argv[1:])
