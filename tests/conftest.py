"""Shared test helpers: a throwaway copy of the fixture workbook and a way to run ``hb``."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURE_WORKBOOK = Path(__file__).resolve().parent / "fixtures" / "workbook"


def run_hb(*args, timeout: float = 1800) -> subprocess.CompletedProcess:
    """Run ``hb ARGS`` in a fresh interpreter, as a user would, and capture its output."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HB_ROOT", "HB_OUTPUTS", "HB_CACHE_DIR", "HB_DASK_ADDRESS")}
    return subprocess.run([sys.executable, "-m", "horizonbandits.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)


def copy_fixture_workbook(dest: Path) -> Path:
    """A private copy of tests/fixtures/workbook (notebooks/ and params/) at ``dest``."""
    shutil.copytree(FIXTURE_WORKBOOK, dest)
    return dest


@pytest.fixture
def fixture_workbook(tmp_path) -> Path:
    return copy_fixture_workbook(tmp_path / "workbook")


@pytest.fixture(scope="session")
def hb_subprocess():
    """``run_hb``: run the hb command in a subprocess."""
    return run_hb


@pytest.fixture(scope="session")
def copy_workbook():
    """``copy_fixture_workbook``: for fixtures of wider scope than ``tmp_path``."""
    return copy_fixture_workbook
