"""Data files are read exactly as written, or refused in one line naming the file (issue 29, items 3 and 7)."""
from __future__ import annotations

import numpy as np
import pytest

from horizonbandits.rising import RisingInstance
from horizonbandits.rising.llm import read_trajectories
from horizonbandits.rising.loaders import read_npy


def _long(rows) -> str:
    return "arm,n,mean\n" + "".join(f"{arm},{n},{mean}\n" for arm, n, mean in rows)


def test_an_arm_named_na_is_an_arm(tmp_path):
    """The trial: a three-arm long file with an arm named NA gave K = 2."""
    path = tmp_path / "c.csv"
    path.write_text(_long([(arm, n, 0.1 * (i + 1) + 0.01 * n) for i, arm in enumerate(["a", "NA", "nan"])
                           for n in range(4)]))
    inst = RisingInstance.from_csv(path)
    assert inst.K == 3 and inst.names == ("a", "NA", "nan")
    assert inst.means[1].tolist() == pytest.approx([0.2, 0.21, 0.22, 0.23])


@pytest.mark.parametrize("text, fragment", [
    (_long([("a", 0, 0.1), ("a", 1, 0.2), ("", 0, 0.1), ("", 1, 0.3)]), "c.csv: line 4 has no arm name"),
    (_long([("a", 0, 0.1), ("a", 1.5, 0.2), ("b", 0, 0.1), ("b", 1, 0.2)]), "arm 'a': pull count n=1.5 is not a whole"),
    (_long([("a", 0, 0.1), ("a", 2.7, 0.2), ("b", 0, 0.1), ("b", 1, 0.2)]), "pull count n=2.7 is not a whole number"),
    ("a,a\n0.1,0.2\n0.2,0.3\n", "c.csv: the header names 'a' more than once"),
    ("a,,b\n0.1,0.2,0.3\n0.2,0.3,0.4\n", "c.csv: column 2 of the header has no name"),
    ("a,b\n0.1,NA\n0.2,0.3\n", "arm 'b': mean at n=0 is missing or not a finite number"),
])
def test_csv_cells_that_would_change_silently_are_refused(tmp_path, text, fragment):
    path = tmp_path / "c.csv"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        RisingInstance.from_csv(path)
    assert fragment in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("save, fragment", [
    (lambda p: np.savez(p, a=np.zeros(3)), "is an .npz archive, not an .npy array: save each curve with np.save"),
    (lambda p: np.save(p, np.array(["0.1", "0.2"])), "holds values of type <U3 (<U3): expected numbers"),
    (lambda p: np.save(p, np.zeros(3, dtype=[("x", "f8"), ("y", "i4")])), "expected numbers"),
])
def test_npy_files_that_are_not_arrays_of_numbers_are_one_line(tmp_path, save, fragment):
    path = tmp_path / "curve.npy"
    with open(path, "wb") as fh:
        save(fh)
    for load in (read_npy, lambda p: RisingInstance.from_npy([p, p])):
        with pytest.raises(ValueError) as err:
            load(path)
        assert str(err.value).startswith(str(path)) and fragment in str(err.value) and "\n" not in str(err.value)


def test_an_empty_trajectory_file_is_one_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("")
    with pytest.raises(ValueError, match=r"t.csv is empty: expected a CSV file of trajectories"):
        read_trajectories(path)


def test_trajectory_arms_na_and_nan_stay_apart(tmp_path):
    """The trial: arms NA and nan were merged into one arm "nan"."""
    path = tmp_path / "t.csv"
    path.write_text("arm,step,score\nNA,0,0.1\nNA,10,0.2\nnan,0,0.3\nnan,10,0.4\n")
    df = read_trajectories(path)
    assert list(dict.fromkeys(df["arm"])) == ["NA", "nan"]
    assert df.groupby("arm")["score"].apply(list).to_dict() == {"NA": [0.1, 0.2], "nan": [0.3, 0.4]}
    path.write_text("arm,step,score\nNA,0,0.1\n,10,0.2\n")
    with pytest.raises(ValueError, match=r"t.csv: row 1 has no arm name"):
        read_trajectories(path)
