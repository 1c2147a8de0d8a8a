"""Keep numba's on-disk cache honest: one cache folder per version of the package's source.

numba's ``cache=True`` notices an edit only in the file that defines a kernel, not in the helpers
it calls from other files, so after such an edit it can silently load a stale compiled kernel. We
point numba at ``<cache>/horizonbandits/numba/<digest>``, where the digest covers every .py file of
the package: any edit anywhere gives a fresh folder. Setting ``NUMBA_CACHE_DIR`` yourself turns this
off. Folders beyond the newest few are removed once unused for a day (a younger one may belong to
another checkout of the package compiling right now).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
KEEP = 4
STALE_AFTER_S = 24 * 3600


def source_digest(package_dir: Path = PACKAGE_DIR) -> str:
    """Hash of the relative paths and contents of every .py file of the package."""
    h = hashlib.blake2b(digest_size=16)
    for path in sorted(package_dir.rglob("*.py")):
        rel = str(path.relative_to(package_dir)).encode()
        data = path.read_bytes()
        h.update(len(rel).to_bytes(8, "little") + rel + len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


def configure_numba_cache() -> Path | None:
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
    return folder
