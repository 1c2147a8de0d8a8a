"""``hb cache verify``: recompute a sample of the result cache's entries and compare.

The cache is trusted input (``compute.cache``): its digest catches damage, not an entry rewritten
with other numbers and a fresh digest. Entries hold results, not the recipe that made them, so the
recipes are the notebooks themselves: the profile's notebooks run into a scratch folder (the
profile's outputs are not touched) against the cache to check, with ``HB_CACHE_VERIFY=N``, so each
grid they call recomputes N of the entries it reads (chosen by a hash of their keys) and records
whether the cache held the same numbers. Nothing is written to the cache.
"""
from __future__ import annotations

import io
import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

from .base import WorkbookError
from .locate import Workbook
from .report import read_manifest
from .runner import CACHE_ENV, run

VERIFY_ENV = "HB_CACHE_VERIFY"
VERIFY_LOG_ENV = "HB_CACHE_VERIFY_LOG"


@contextmanager
def _environment(**values):
    before = {k: os.environ.get(k) for k in values}
    os.environ.update({k: str(v) for k, v in values.items()})
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def verify_cache(wb: Workbook, profile: str, sample: int = 5, only: list[str] | None = None,
                 cache_dir: str | os.PathLike | None = None, out=None) -> int:
    """Run the notebooks with ``HB_CACHE_VERIFY=sample`` and report. Returns 0 when every entry
    recomputed equals the cache's, 1 when one differs, a notebook failed, or nothing was read."""
    import sys

    out = out or sys.stdout
    if sample < 1:
        raise WorkbookError(f"--sample={sample} is not allowed: expected a number of entries >= 1")
    given = cache_dir or os.environ.get(CACHE_ENV)
    cache = Path(given).expanduser().resolve() if given else wb.cache_dir
    if not cache.is_dir():
        raise WorkbookError(f"no result cache at {cache}: nothing to verify (give the folder with --cache DIR)")
    with tempfile.TemporaryDirectory(prefix="hb-cache-verify-") as scratch:
        log = Path(scratch) / "verify.jsonl"
        scratch_wb = Workbook(wb.root, Path(scratch) / "outputs")
        with _environment(**{CACHE_ENV: cache, VERIFY_ENV: sample, VERIFY_LOG_ENV: log}):
            status = run(scratch_wb, profile, only=only, out=io.StringIO())
        manifest = read_manifest(scratch_wb.profile_dir(profile) / "manifest.json") or {}
        records = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    failed = sorted(name for name, e in manifest.get("notebooks", {}).items() if e.get("status") != "ok")
    read = sum(r.get("read", 0) for r in records)
    checked = [r for r in records if "entry" in r]
    wrong = [r for r in checked if r["differs"]]
    print(f"cache {cache}: {len(checked)} of the {read:,} entries the {profile} notebooks read were recomputed "
          f"(at most {sample} per grid call)", file=out)
    for r in wrong:
        print(f"differs: {r['entry']} ({r['what']}: {', '.join(r['differs'])})", file=out)
    if failed:
        print(f"not verified: {', '.join(failed)} failed (hb run --profile {profile} --only {' '.join(failed)} "
              "shows why)", file=out)
    if wrong:
        print(f"{len(wrong)} of {len(checked)} recomputed entries differ from the cache: do not trust it; delete the "
              f"folder (or the entries above) and run again", file=out)
        return 1
    if not checked:
        print("nothing was verified: the notebooks read no entry of this cache (run them first, or name the "
              "folder with --cache DIR)", file=out)
        return 1
    print(f"all {len(checked)} recomputed entries equal the cache's", file=out)
    if status > 1:  # interrupted: the run said so
        return status
    return 1 if failed else 0
