"""The numba cache folder follows the package source that kernels can reach, so such an edit compiles afresh."""
import subprocess
import sys

from horizonbandits._numba_cache import PACKAGE_DIR, source_digest

LIB = str(PACKAGE_DIR.parent)  # the subprocesses import this checkout's package, not the venv's install


def test_digest_changes_with_any_source_file(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("x = 1\n")
    (pkg / "sub" / "b.py").write_text("y = 2\n")
    first = source_digest(pkg)
    assert source_digest(pkg) == first
    (pkg / "sub" / "b.py").write_text("y = 3\n")
    assert source_digest(pkg) != first


def test_numba_is_pointed_at_the_digest_folder_unless_the_user_chose_one(tmp_path):
    code = "import horizonbandits as hb, numba.core.config as c; print(hb.NUMBA_CACHE, c.CACHE_DIR)"
    env = {"PATH": "", "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": LIB}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == out[1] and out[0].startswith(str(tmp_path / "cache" / "horizonbandits" / "numba"))
    assert out[0].endswith(source_digest())
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "mine")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "None" and out[1] == str(tmp_path / "mine")


def test_only_old_unused_folders_beyond_the_newest_few_are_pruned(tmp_path):
    import os
    import time

    from horizonbandits._numba_cache import KEEP, STALE_AFTER_S
    base = tmp_path / "cache" / "horizonbandits" / "numba"
    now = time.time()
    for i in range(KEEP + 3):
        folder = base / f"f{i}"
        folder.mkdir(parents=True)
        age = 10 * i if i < KEEP + 2 else STALE_AFTER_S + 100  # the last one is a day old
        os.utime(folder, (now - age, now - age))
    code = "import horizonbandits, numba"  # the folder is set, and old ones pruned, when numba is first imported
    env = {"PATH": "", "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": LIB}
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    left = {p.name for p in base.iterdir()}
    assert f"f{KEEP + 2}" not in left           # old and beyond the newest few: removed
    assert {f"f{i}" for i in range(KEEP + 2)} <= left   # recent ones stay, even beyond KEEP (another checkout)


KERNEL_RUN = """
import horizonbandits as hb
from horizonbandits.workbook.warmup import count_compiles
from horizonbandits.rng import nb_uniform, new_state
with count_compiles() as c:
    u = nb_uniform(new_state(7))
print(c.count, hb.NUMBA_CACHE, repr(u))
"""


def test_a_second_checkout_of_the_same_source_loads_the_kernels_the_first_compiled(tmp_path):
    """Two copies of the package at different paths, with different modification times: the second
    compiles nothing (numba's own locator would give it a folder of its own, named by its path)."""
    import os
    import shutil
    from pathlib import Path

    src = PACKAGE_DIR
    env = {"PATH": "", "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    outs = []
    for i, name in enumerate(["first", "second"]):
        copy = tmp_path / name / "horizonbandits"
        shutil.copytree(src, copy, ignore=shutil.ignore_patterns("__pycache__"))
        when = 1_000_000_000 + 1000 * i
        for path in copy.rglob("*.py"):
            os.utime(path, (when, when))
        run = subprocess.run([sys.executable, "-c", KERNEL_RUN], env={**env, "PYTHONPATH": str(tmp_path / name)},
                             capture_output=True, text=True, check=True)
        outs.append(run.stdout.split())
    (first_compiles, first_folder, first_u), (second_compiles, second_folder, second_u) = outs
    assert int(first_compiles) >= 1           # a cold cache: the kernel (and the one it calls) compiled
    assert second_folder == first_folder      # same source, same digest folder
    assert int(second_compiles) == 0          # loaded from the first checkout's files
    assert second_u == first_u
    assert list(Path(first_folder).glob("src/rng.nb_uniform-*.nbi"))


LAZY = """
import importlib.util, sys
import horizonbandits as hb
assert "numba" not in sys.modules                     # hb run and its workers never import numba for it
assert importlib.util.find_spec("numba") is not None  # a look-up imports nothing, configures nothing
assert "numba" not in sys.modules and hb._numba_cache.FOLDER is hb._numba_cache._UNSET
from horizonbandits.rng import nb_uniform             # a kernel module: numba comes in, configured first
import numba.core.config as c
print(hb._numba_cache.FOLDER, c.CACHE_DIR)
"""


def test_numba_is_configured_when_first_imported_not_when_the_package_is(tmp_path):
    env = {"PATH": "", "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": LIB}
    out = subprocess.run([sys.executable, "-c", LAZY], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    folder, cache_dir = out.stdout.split()
    assert folder == cache_dir and folder.endswith(source_digest())


def _package_imports(path, package_dir):
    """The package files ``path`` imports (``import``/``from`` statements at any depth, relative or absolute)."""
    import ast

    rel = path.relative_to(package_dir)
    here = list(rel.parent.parts)
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1] if node.level > 1 else list(here)
            elif node.module and node.module.split(".")[0] == "horizonbandits":
                base = []
            else:
                continue
            mod = base + (node.module.split(".")[1:] if not node.level and node.module else
                          (node.module.split(".") if node.module else []))
            targets = [mod] + [mod + [alias.name] for alias in node.names]
        elif isinstance(node, ast.Import):
            targets = [n.name.split(".")[1:] for n in node.names if n.name.split(".")[0] == "horizonbandits"]
        else:
            continue
        for parts in targets:
            for candidate in (package_dir.joinpath(*parts).with_suffix(".py"), package_dir.joinpath(*parts, "__init__.py")):
                if parts and candidate.is_file():
                    found.add(candidate)
    return found


def test_no_module_that_defines_a_kernel_reaches_the_code_left_out_of_the_digest():
    from horizonbandits._numba_cache import NO_KERNEL_CODE

    def left_out(p):
        rel = p.relative_to(PACKAGE_DIR).as_posix()
        return any(rel == x or rel.startswith(x + "/") for x in NO_KERNEL_CODE)

    kernels = [p for p in PACKAGE_DIR.rglob("*.py") if "njit" in p.read_text() and not left_out(p)]
    assert len(kernels) >= 20  # the policies of both papers, the models, the generators
    for kernel in kernels:
        seen, todo = set(), [kernel]
        while todo:
            for dep in _package_imports(todo.pop(), PACKAGE_DIR) - seen:
                seen.add(dep)
                todo.append(dep)
        reached = sorted(p.relative_to(PACKAGE_DIR).as_posix() for p in seen if left_out(p))
        assert not reached, f"{kernel.relative_to(PACKAGE_DIR)} reaches {reached}: drop them from NO_KERNEL_CODE"
    assert not any("njit" in p.read_text() for p in PACKAGE_DIR.rglob("*.py") if left_out(p))


def test_an_edit_to_the_runner_keeps_the_digest_and_one_to_a_kernel_changes_it(tmp_path):
    import shutil

    pkg = tmp_path / "pkg"
    shutil.copytree(PACKAGE_DIR, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    first = source_digest(pkg)
    (pkg / "workbook" / "runner.py").write_text((pkg / "workbook" / "runner.py").read_text() + "\n# edited\n")
    assert source_digest(pkg) == first
    (pkg / "rising" / "policies" / "_common.py").write_text((pkg / "rising" / "policies" / "_common.py").read_text() + "\n")
    assert source_digest(pkg) != first
