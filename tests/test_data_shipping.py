"""The data that ships with the workbook: the seven IMDB curves of the paper's arm set, exact bytes,
with the source's licence and an attribution, found by the loader with nothing beside the clone.

The comparison with ../shared/data runs only where that folder exists (skipped in a bare clone).
"""
import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

from horizonbandits.rising import imdb as I

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "data" / I.SUBDIR
SHARED = REPO.parent / "shared" / "data" / I.SUBDIR


def test_exactly_the_paper_arms_ship_with_licence_and_attribution():
    assert I.REPO_DATA / I.SUBDIR == SHIPPED
    assert sorted(p.stem for p in SHIPPED.glob("*.npy")) == sorted(I.PAPER_ARMS)
    assert sum(p.stat().st_size for p in SHIPPED.iterdir()) < 4_000_000  # a few MB at most
    licence = (SHIPPED / "LICENSE.source").read_text()
    assert licence.startswith("MIT License") and "Alberto Maria Metelli" in licence
    readme = (SHIPPED / "README.md").read_text()
    assert I.UPSTREAM_REPO in readme and I.UPSTREAM_COMMIT in readme and "LICENSE.source" in readme
    for arm in I.PAPER_ARMS:
        assert f"`{arm}.npy` | `{I.upstream_filename(arm)}`" in readme  # the source file of each


def test_shipped_curves_match_the_hashes_in_their_readme():
    listed = dict(re.findall(r"^\| `([^`]+\.npy)` \| `[^`]+` \| `([0-9a-f]{64})` \|$",
                             (SHIPPED / "README.md").read_text(), flags=re.M))
    assert sorted(listed) == sorted(f"{a}.npy" for a in I.PAPER_ARMS)
    for name, digest in listed.items():
        assert hashlib.sha256((SHIPPED / name).read_bytes()).hexdigest() == digest, name


def test_shipped_curves_are_curves():
    for arm in I.PAPER_ARMS:
        c = np.load(SHIPPED / f"{arm}.npy", allow_pickle=False)
        assert c.dtype == np.float64 and c.shape == (I.T_IMDB,)
        assert np.all((c >= 0) & (c <= 1))


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"{SHARED} is not beside this clone: nothing to compare with")
def test_shipped_files_equal_the_shared_copy_bit_for_bit():
    for name in [f"{a}.npy" for a in I.PAPER_ARMS] + ["LICENSE.source"]:
        assert (SHIPPED / name).read_bytes() == (SHARED / name).read_bytes(), name


def test_a_bare_clone_loads_the_paper_arms_from_data(monkeypatch, tmp_path):
    monkeypatch.delenv("HB_DATA_DIR", raising=False)
    monkeypatch.setattr(I, "SHARED_DATA", tmp_path / "nothing-beside")
    curves = I.load_curves()
    assert list(curves.columns) == list(I.PAPER_ARMS)
    assert all(I.find_curve(a) == SHIPPED / f"{a}.npy" for a in I.PAPER_ARMS)
