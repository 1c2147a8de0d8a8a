"""``hb run --cluster ADDRESS``: make sure a dask scheduler answers there before any notebook starts.

Pointed at the wrong port, dask's own client misbehaves: at the dashboard's HTTP port (8787 for
8786) it reads "HTTP/1.1" as the length of a message and asks for 3.07 EiB, or waits past its
timeout. So the address is first probed with a plain socket: a dask endpoint speaks first (its
handshake, an 8-byte length then a small message), an HTTP server waits for a request. Only an
answer that looks like dask goes on to a real ``distributed.Client``, which must connect within the
timeout and find a scheduler (a worker's port also speaks dask). Every failure is one line.
"""
from __future__ import annotations

import asyncio
import socket
import struct
from urllib.parse import urlsplit

from .base import WorkbookError, one_line

PROBE_TIMEOUT_S = 10.0
MAX_HANDSHAKE_BYTES = 1 << 20  # dask's handshake is a few hundred bytes
HINT = "start one with `dask scheduler` (it prints its address, by default tcp://HOST:8786)"


def _host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of a tcp address ("tcp://h:p" or "h:p"); None for other protocols (tls, ucx...)."""
    text = address if "://" in address else f"tcp://{address}"
    parts = urlsplit(text)
    if parts.scheme != "tcp":
        return None
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or port is None:
        raise WorkbookError(f"--cluster={address!r} is not allowed: expected a scheduler address such as "
                            "tcp://127.0.0.1:8786")
    return parts.hostname, port


def probe(address: str, timeout: float = PROBE_TIMEOUT_S) -> None:
    """Raise a one-line ``WorkbookError`` unless something at ``address`` speaks dask's protocol."""
    where = _host_port(address)
    if where is None:
        return
    refuse = f"no dask scheduler at {address}"
    try:
        sock = socket.create_connection(where, timeout=timeout)
    except socket.gaierror as exc:
        raise WorkbookError(f"{refuse}: cannot resolve {where[0]!r} ({one_line(exc)}); {HINT}") from None
    except TimeoutError:
        raise WorkbookError(f"{refuse}: the connection was not accepted within {timeout:g} s; {HINT}") from None
    except OSError as exc:
        raise WorkbookError(f"{refuse}: {(exc.strerror or one_line(exc)).lower()}; {HINT}") from None
    with sock:
        try:
            head = _read(sock, 8)
        except TimeoutError:
            raise WorkbookError(f"{refuse}: it accepted the connection but sent nothing within {timeout:g} s, as a "
                                "web server does (the dashboard's port is usually 8787, the scheduler's 8786); "
                                f"{HINT}") from None
        except OSError as exc:
            raise WorkbookError(f"{refuse}: the connection closed at once ({one_line(exc)}); {HINT}") from None
    (size,) = struct.unpack("<Q", head) if len(head) == 8 else (None,)
    if size is None or not 0 < size <= MAX_HANDSHAKE_BYTES:
        shown = head.decode("latin-1").encode("unicode_escape").decode()
        raise WorkbookError(f"{refuse}: it answered {shown!r}, which is not dask's protocol (the dashboard's port is "
                            f"usually 8787, the scheduler's 8786); {HINT}")


def _read(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def check_scheduler(address: str, timeout: float = PROBE_TIMEOUT_S) -> int:
    """The number of workers of the dask scheduler at ``address``; a one-line ``WorkbookError``
    when none answers within ``timeout`` seconds. Asks for the endpoint's identity over dask's own
    RPC (a ``Client`` that fails half-way leaves an object whose clean-up prints a traceback at exit)."""
    probe(address, timeout)
    try:
        from distributed.core import rpc
    except ImportError as exc:
        raise WorkbookError(f"--cluster needs the dask.distributed package ({exc})") from None

    async def identity():
        async with rpc(address, timeout=timeout) as remote:
            return await asyncio.wait_for(remote.identity(), timeout)

    try:
        info = asyncio.run(identity())
    except Exception as exc:  # noqa: BLE001 - whatever dask raises, the user gets one line
        raise WorkbookError(f"no dask scheduler at {address}: {type(exc).__name__}: {one_line(exc)[:200]}; "
                            f"{HINT}") from None
    kind = info.get("type") if isinstance(info, dict) else None
    if kind != "Scheduler":
        raise WorkbookError(f"no dask scheduler at {address}: it is a dask {kind or 'endpoint'} (a worker's port?); "
                            f"{HINT}")
    return len(info.get("workers", {}))
