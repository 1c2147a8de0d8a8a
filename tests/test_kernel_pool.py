"""hb run's kernel pool (``workbook.kernel_pool``): kernels forked from a process that has imported what the
notebooks import, in the asking client's folder and environment, gone with their client, and the same results."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from conftest import REPO, gone_within
from horizonbandits.workbook import kernel_pool
from horizonbandits.workbook.execute import _kernel_manager_logging_to

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel pool is Linux only")


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    env = {**os.environ, "PYTHONPATH": str(REPO / "lib")}
    pool = kernel_pool.KernelPool(env, tmp_path_factory.mktemp("cwd"))
    yield pool
    assert pool.close() is None  # it ran until told to stop
    assert not os.path.exists(pool.dir)


def test_client_command_wraps_only_ipykernel_commands_and_only_with_a_pool():
    cmd = [sys.executable, "-Xfrozen_modules=off", "-m", "ipykernel_launcher", "-f", "c.json"]
    assert kernel_pool.client_command(cmd, env={}) == cmd
    wrapped = kernel_pool.client_command(cmd, env={kernel_pool.SOCKET_ENV: "/x/pool.sock"})
    assert wrapped == [sys.executable, "-S", "-I", str(kernel_pool.CLIENT), "/x/pool.sock", *cmd]
    other = ["/usr/bin/R", "--slave", "-e", "IRkernel::main()"]
    assert kernel_pool.client_command(other, env={kernel_pool.SOCKET_ENV: "/x/pool.sock"}) == other


def test_the_pool_serves_only_its_own_interpreter_and_options():
    args = ["-f", "c.json", "--IPKernelApp.log_level=ERROR"]
    assert kernel_pool.kernel_arguments([sys.executable, *kernel_pool.POOL_OPTIONS, "-m", "ipykernel_launcher",
                                         *args]) == args
    assert kernel_pool.kernel_arguments(["/usr/bin/python3.9", *kernel_pool.POOL_OPTIONS, "-m",
                                         "ipykernel_launcher", *args]) is None
    assert kernel_pool.kernel_arguments([sys.executable, "-m", "ipykernel_launcher", *args]) is None  # options differ
    assert kernel_pool.kernel_arguments([sys.executable, *kernel_pool.POOL_OPTIONS, "-m", "http.server"]) is None
    assert kernel_pool.kernel_arguments([sys.executable, "-c", "pass"]) is None


def test_a_run_never_hands_on_another_runs_pool(tmp_path):
    from horizonbandits import workbook as wbk

    wb = wbk.Workbook(tmp_path / "wb", tmp_path / "out")
    env = wbk.kernel_environment(wb, None, base={kernel_pool.SOCKET_ENV: "/tmp/hb-kernels-x/pool.sock", "PATH": "/bin"})
    assert kernel_pool.SOCKET_ENV not in env and env["PATH"] == "/bin"


def test_wanted_needs_two_notebooks_and_not_the_switch():
    assert kernel_pool.wanted({}, 2) == sys.platform.startswith("linux")
    assert not kernel_pool.wanted({}, 1)
    assert not kernel_pool.wanted({kernel_pool.SWITCH_ENV: "0"}, 19)


def test_the_socket_lies_in_a_folder_only_this_user_enters(pool):
    assert stat.S_IMODE(os.stat(pool.dir).st_mode) == 0o700
    a, b = socket.socketpair(socket.AF_UNIX)
    with a, b:
        assert kernel_pool._peer_uid(a) == os.getuid()


def test_the_socket_listens_before_the_pool_process_has_started(tmp_path):
    """A worker may ask before the pool's interpreter is up (a loaded machine): it must wait in the backlog, not
    find no socket and get an ordinary kernel (CI failure of stop 40)."""
    early = kernel_pool.KernelPool({**os.environ, "PYTHONPATH": str(REPO / "lib")}, tmp_path)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(early.socket)  # at once: no FileNotFoundError, no ConnectionRefusedError
    finally:
        assert early.close() is None


def client(path: str, cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-S", "-I", str(kernel_pool.CLIENT), path, *cmd], capture_output=True,
                          text=True, timeout=120)


def test_a_command_the_pool_declines_runs_by_itself(pool, tmp_path):
    said = client(pool.socket, [sys.executable, "-c", "import sys; print('on its own', 'numpy' in sys.modules)"])
    assert said.returncode == 0 and said.stdout.split() == ["on", "its", "own", "False"]
    said = client(str(tmp_path / "no-pool.sock"), [sys.executable, "-c", "print('no pool')"])
    assert said.returncode == 0 and said.stdout.strip() == "no pool"


CODE = """
import os, subprocess, sys
child = subprocess.Popen(["sleep", "120"])
print(json.dumps({"pid": os.getpid(), "ppid": os.getppid(), "cwd": os.getcwd(), "mark": os.environ.get("HB_MARK"),
                  "preloaded": all(m in sys.modules for m in ("numpy", "pandas", "matplotlib.pyplot")),
                  "sleeper": child.pid, "inline_loaded": "matplotlib_inline.backend_inline" in sys.modules}))
"""


async def in_kernel(cwd: Path, env: dict, code: str, then=None):
    """Start a kernel with the worker's kernel manager, run ``code`` (``json`` imported), print's text back; then
    ``then(km, kc)`` and an immediate shutdown, as papermill does."""
    with open(cwd / "kernel.log", "wb") as log:
        km = _kernel_manager_logging_to(log)(kernel_name="python3")
        await km.start_kernel(cwd=str(cwd), env=env)
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=120)
            out = []

            def hook(msg):
                if msg["msg_type"] == "stream":
                    out.append(msg["content"]["text"])

            await kc.execute_interactive("import json\n" + code, timeout=120, output_hook=hook)
            extra = await then(km, kc) if then else None
        finally:
            kc.stop_channels()
            client_pid = km.provisioner.pid
            await km.shutdown_kernel(now=True)
    return json.loads("".join(out)), client_pid, extra


def test_a_kernel_is_forked_in_the_clients_folder_and_environment_and_dies_with_it(pool, tmp_path, monkeypatch):
    monkeypatch.setenv(kernel_pool.SOCKET_ENV, pool.socket)
    env = {**os.environ, "HB_MARK": "from the worker"}
    seen, client_pid, _ = asyncio.run(in_kernel(tmp_path, env, CODE))
    assert seen["ppid"] == pool.proc.pid and seen["pid"] != client_pid
    assert seen["cwd"] == str(tmp_path) and seen["mark"] == "from the worker"
    assert seen["preloaded"]
    assert not seen["inline_loaded"]  # the backend is loaded at the notebook's first figure, inside its shell
    # The shutdown killed the client; the kernel saw its lifeline close and killed its process group.
    assert gone_within([client_pid, seen["pid"], seen["sleeper"]]), "the kernel or its child outlived its client"


def test_without_the_socket_the_kernel_is_an_ordinary_one(tmp_path, monkeypatch):
    monkeypatch.delenv(kernel_pool.SOCKET_ENV, raising=False)
    seen, client_pid, _ = asyncio.run(in_kernel(tmp_path, dict(os.environ), CODE))
    assert seen["pid"] == client_pid and not seen["preloaded"]
    assert gone_within([seen["pid"], seen["sleeper"]])


def test_an_interrupt_reaches_a_forked_kernel(pool, tmp_path, monkeypatch):
    monkeypatch.setenv(kernel_pool.SOCKET_ENV, pool.socket)

    async def interrupted(km, kc):
        msg_id = kc.execute("import time; time.sleep(60)")
        await asyncio.sleep(1.0)
        t0 = time.monotonic()
        await km.interrupt_kernel()
        while True:
            reply = await kc.get_shell_msg(timeout=30)
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply["content"].get("ename"), time.monotonic() - t0

    seen, _, (ename, waited) = asyncio.run(in_kernel(tmp_path, dict(os.environ), CODE, then=interrupted))
    assert seen["ppid"] == pool.proc.pid
    assert ename == "KeyboardInterrupt" and waited < 20


NOTEBOOK = '''import json, os, sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from horizonbandits.outputs import atomic_write_text, resolve_output_dir

folder = resolve_output_dir(output_dir)
draws = np.random.default_rng(seed).normal(size=(200, 3))
table = pd.DataFrame(draws.cumsum(axis=0), columns=["a", "b", "c"]).describe()
atomic_write_text(folder / "tables" / f"{NAME}_summary.csv", table.to_csv())
parent = Path(f"/proc/{os.getppid()}/cmdline").read_bytes().replace(b"\\0", b" ").decode()
atomic_write_text(folder / "tables" / f"{NAME}_parent.txt", parent)
fig, ax = plt.subplots()
ax.plot(draws.cumsum(axis=0))
plt.show()'''


def write_notebook(root: Path, name: str, seed: int) -> None:
    cells = [nbformat.v4.new_markdown_cell(f"# {name}\n\nA table and a figure."),
             nbformat.v4.new_code_cell(f'output_dir = ""\nseed = {seed}', metadata={"tags": ["parameters"]}),
             nbformat.v4.new_code_cell(f"NAME = {name!r}\n" + NOTEBOOK)]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "language": "python",
                                                                        "display_name": "Python 3"}})
    nbformat.write(nb, root / "notebooks" / f"{name}.ipynb")


def test_hb_run_gives_the_same_tables_and_figures_with_and_without_the_pool(copy_workbook, tmp_path):
    root = copy_workbook(tmp_path / "wb")
    names = ["pool_a", "pool_b"]
    for seed, name in enumerate(names, start=3):
        write_notebook(root, name, seed)
        (root / "params" / "smoke" / f"{name}.yaml").write_text("{}\n")
    runs = {}
    for switch in ("1", "0"):
        env = {k: v for k, v in os.environ.items() if k not in ("HB_ROOT", "HB_OUTPUTS", "HB_CACHE_DIR")}
        env.update({kernel_pool.SWITCH_ENV: switch, "PYTHONPATH": str(REPO / "lib")})
        out = tmp_path / f"out{switch}"
        done = subprocess.run([sys.executable, "-m", "horizonbandits.cli", "--root", str(root), "--outputs", str(out),
                               "run", "--profile", "smoke", "--only", *names], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        runs[switch] = out / "smoke"
    for name in names:
        tables = [(runs[s] / "tables" / f"{name}_summary.csv").read_text() for s in ("1", "0")]
        assert tables[0] == tables[1]
        parents = [(runs[s] / "tables" / f"{name}_parent.txt").read_text() for s in ("1", "0")]
        assert "horizonbandits.workbook.kernel_pool" in parents[0]
        assert "horizonbandits.workbook.worker" in parents[1]  # launched by its worker, as always
        for s in ("1", "0"):
            nb = json.loads((runs[s] / "notebooks" / f"{name}.ipynb").read_text())
            images = [o for c in nb["cells"] for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
            assert len(images) == 1, f"{name} ({kernel_pool.SWITCH_ENV}={s}): the figure was not shown inline"


def test_a_pool_that_cannot_start_leaves_ordinary_kernels(tmp_path, monkeypatch):
    """A pool that has died (here: killed) leaves every kernel an ordinary one, and close() says why."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "lib")}
    pool = kernel_pool.KernelPool(env, tmp_path)
    try:
        pool.proc.send_signal(signal.SIGKILL)
        pool.proc.wait(timeout=30)
        monkeypatch.setenv(kernel_pool.SOCKET_ENV, pool.socket)
        seen, client_pid, _ = asyncio.run(in_kernel(tmp_path, dict(os.environ), CODE))
        assert seen["pid"] == client_pid and not seen["preloaded"]
    finally:
        problem = pool.close()
    assert problem is not None and "status -9" in problem


def test_a_kernel_talks_over_unix_sockets_in_a_folder_removed_at_its_shutdown(tmp_path, monkeypatch):
    """No TCP port to race for: two kernels started at once were once handed the same free port and one died
    ("Address already in use"); its channels are Unix sockets in a folder of its own, gone after the shutdown."""
    monkeypatch.delenv(kernel_pool.SOCKET_ENV, raising=False)

    async def channels(km, kc):
        ports = [km.shell_port, km.iopub_port, km.stdin_port, km.control_port, km.hb_port]
        return km.transport, km.ip, [stat.S_ISSOCK(os.stat(f"{km.ip}-{p}").st_mode) for p in ports], \
            os.path.dirname(km.ip), json.loads(Path(km.connection_file).read_text())

    seen, _, (transport, ip, sockets, folder, written) = asyncio.run(in_kernel(tmp_path, dict(os.environ), CODE,
                                                                              then=channels))
    assert transport == "ipc" and all(sockets) and len(sockets) == 5
    assert written["transport"] == "ipc" and written["ip"] == ip  # what the kernel was told to bind
    assert not os.path.exists(folder), "the kernel's socket folder outlived it"
    assert gone_within([seen["pid"], seen["sleeper"]])
