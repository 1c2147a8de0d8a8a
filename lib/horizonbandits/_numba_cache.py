"""Keep numba's on-disk cache honest: one cache folder per version of the package's source.

numba's ``cache=True`` notices an edit only in the file that defines a kernel, not in the helpers
it calls from other files, so after such an edit it can silently load a stale compiled kernel. We
point numba at ``<cache>/horizonbandits/numba/<digest>``, where the digest covers every .py file of
the package but those no compiled kernel can reach (:data:`NO_KERNEL_CODE`: the command line, the notebook
runner, figures and claims; none defines a kernel and no module that defines one imports them, directly or
through others, which tests/test_numba_cache.py checks): any other edit gives a fresh folder, and an edit to the runner
no longer recompiles every kernel (~80 s). Setting ``NUMBA_CACHE_DIR`` yourself turns this
off. Folders beyond the newest few are removed once unused for a day (a younger one may belong to
another checkout of the package compiling right now).

Inside that folder a kernel's files go to ``src/<its module's folder within the package>`` (the locator
:class:`PackageCacheLocator`, put first in numba's list), not to numba's usual sub-folder named after a hash
of the source file's absolute path. numba's index already checks the source by content (a hash of the
file, not its modification time), so a second checkout or clone of the same commit, anywhere on disk,
loads the kernels the first one compiled (``hb warmup`` in a fresh clone: 147 compiles, ~110 s, before;
none, ~5 s, after; 2026-12-02).

The folder is set when numba is first imported (:func:`configure_when_numba_loads`, called by the
package's ``__init__``): right after numba's own module has run, before any kernel module of the
package can decorate a function. A process that never imports numba (``hb run`` itself, its worker
processes, a notebook that uses no kernel) no longer pays numba's import (~0.4 CPU-s) for it.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
from contextlib import contextmanager
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
KEEP = 4
# Package files (or folders) that no compiled kernel can depend on: they define no kernel and are not imported,
# directly or through other modules, by any module that defines one (tests/test_numba_cache.py).
NO_KERNEL_CODE = ("cli.py", "workbook", "plotting.py", "claims")
STALE_AFTER_S = 24 * 3600


def source_digest(package_dir: Path = PACKAGE_DIR) -> str:
    """Hash of the relative paths and contents of the package's .py files, but :data:`NO_KERNEL_CODE`."""
    h = hashlib.blake2b(digest_size=16)
    for path in sorted(package_dir.rglob("*.py")):
        rel_path = path.relative_to(package_dir).as_posix()
        if any(rel_path == x or rel_path.startswith(x + "/") for x in NO_KERNEL_CODE):
            continue
        rel = str(path.relative_to(package_dir)).encode()
        data = path.read_bytes()
        h.update(len(rel).to_bytes(8, "little") + rel + len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


_UNSET = object()
FOLDER = _UNSET  # what configure_numba_cache returned, once it ran


def configure_numba_cache() -> Path | None:
    """Point numba at this source version's folder (once per process); the folder, or None when
    ``NUMBA_CACHE_DIR`` is set or the folder cannot be made (numba's own default then)."""
    global FOLDER
    if FOLDER is _UNSET:
        FOLDER = _configure()
    return FOLDER


class _AfterNumba:
    """A meta path finder that lets the other finders find ``numba`` and has its loader call
    :func:`configure_numba_cache` right after numba's ``__init__`` ran; it leaves once that happened.
    A look-up that does not import (``importlib.util.find_spec``) configures nothing."""

    def find_spec(self, name, path=None, target=None):
        if name != "numba":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_then_configure(module):
            run(module)
            if self in sys.meta_path:
                sys.meta_path.remove(self)
            configure_numba_cache()

        loader.exec_module = exec_then_configure
        return spec


def configure_when_numba_loads() -> None:
    """Configure numba's cache now if numba is loaded, else the first time it is imported."""
    if "numba" in sys.modules:
        configure_numba_cache()
    elif not any(isinstance(f, _AfterNumba) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterNumba())


def _configure() -> Path | None:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "horizonbandits" / "numba"
    folder = base / source_digest()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        os.utime(folder)
        old = sorted((p for p in base.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True)
        now = time.time()
        for stale in old[KEEP:]:
            if now - stale.stat().st_mtime > STALE_AFTER_S:
                shutil.rmtree(stale, ignore_errors=True)
    except OSError:
        return None  # read-only home: numba falls back to its own default locations
    from numba.core import config
    config.CACHE_DIR = str(folder)
    install_locator()
    _time_cache_loads()
    return folder


def _time_cache_loads() -> None:
    """With ``$HB_TIMINGS`` set (``horizonbandits.timing``), charge loading a compiled kernel from the cache to
    ``numba load``."""
    from . import timing

    if not timing.enabled():
        return
    from numba.core import caching

    caching.Cache.load_overload = timing.charged("numba load")(caching.Cache.load_overload)


def _package_relative(py_file: str) -> Path | None:
    try:
        return Path(py_file).resolve().parent.relative_to(PACKAGE_DIR)
    except (ValueError, OSError):
        return None


_LOCATOR = None


def install_locator():
    """Put :class:`PackageCacheLocator` first in numba's locator list (once); the class."""
    global _LOCATOR
    if _LOCATOR is not None:
        return _LOCATOR
    from numba.core import caching, config

    base = getattr(caching, "UserProvidedCacheLocator", None) or caching._UserProvidedCacheLocator

    class PackageCacheLocator(base):
        """The kernels of this package's files: ``CACHE_DIR/src/<folder within the package>``, whatever
        the checkout's path (numba's own locator hashes the absolute path of the source folder)."""

        def __init__(self, py_func, py_file):
            super().__init__(py_func, py_file)
            rel = _package_relative(py_file)
            self._cache_path = os.path.join(config.CACHE_DIR, "src", *rel.parts)

        @classmethod
        def from_function(cls, py_func, py_file):
            if _package_relative(py_file) is None:
                return None  # not our source: numba's own locators
            return super().from_function(py_func, py_file)

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    impl._locator_classes.insert(0, PackageCacheLocator)
    _LOCATOR = PackageCacheLocator
    return _LOCATOR


@contextmanager
def watch_compiles(on_compile):
    """Call ``on_compile()`` each time numba starts compiling a kernel in this process, inside the block.
    numba's ``numba:compile`` event fires for real compiles only, never for a kernel loaded from the cache."""
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev):
            on_compile()

        def on_end(self, ev):
            pass

    listener = _Listener()
    event.register("numba:compile", listener)
    try:
        yield
    finally:
        event.unregister("numba:compile", listener)
