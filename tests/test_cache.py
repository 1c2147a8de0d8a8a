"""The result cache: damaged entries are recomputed with one warning, the folder is chosen and may be read-only."""
import os
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

import horizonbandits.experiments.rising_grid as ex
from horizonbandits.compute import cache as cache_mod
from horizonbandits.experiments import run_grid
from horizonbandits.compute.cache import CacheWarning
from horizonbandits.rising import CureUCB, RedUCB, ltf_random

HORIZONS = [300, 600]
KW = dict(n_seeds=3, seed=4, backend="sequential", chunk_size=3, progress=False)


@pytest.fixture(scope="module")
def instances():
    rng = np.random.default_rng(11)
    return {"a": ltf_random(rng, K=3, T_ref=600), "b": ltf_random(rng, K=2, T_ref=600)}


@pytest.fixture(scope="module")
def policies():
    return {"CURE": CureUCB(), "Red": RedUCB(eps=0.5)}


@pytest.fixture(scope="module")
def fresh(instances, policies):
    return run_grid(instances, policies, HORIZONS, cache=False, **KW)


def numbers(df):
    return df.drop(columns="wall_time")


def entries(folder):
    return sorted(folder.rglob("*.hbc"))


def count_tasks(monkeypatch):
    calls = []
    real = ex.run_task
    monkeypatch.setattr(ex, "run_task", lambda *a: calls.append(a[4:]) or real(*a))
    return calls


def truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def flip_bit(path):
    data = bytearray(path.read_bytes())
    pulls = cache_mod.read_entry(path)[2]["pulls"].tobytes()  # flip a bit inside the stored pulls, not the header
    at = bytes(data).index(pulls) + len(pulls) // 2
    data[at] ^= 0x04
    path.write_bytes(bytes(data))


def rewrite(path, change):
    """Change the stored arrays and store them again with a matching digest, as a buggy writer would:
    only the grid's own check of the content can catch it."""
    key, _, arrays = cache_mod.read_entry(path)
    change(arrays)
    cache_mod.write_entry(path, key, cache_mod._content_digest(key, arrays), arrays)


def nan_pulls(path):
    def change(arrays):
        arrays["pulls"] = arrays["pulls"].astype(float)
        arrays["pulls"].flat[0] = np.nan
    rewrite(path, change)


def out_of_range_pulls(path):
    rewrite(path, lambda arrays: arrays.update(pulls=arrays["pulls"] * 2))


def wrong_shape(path):
    rewrite(path, lambda arrays: arrays.update(pulls=arrays["pulls"][:, :1]))


@pytest.mark.parametrize("damage", [truncate, flip_bit, nan_pulls, out_of_range_pulls, wrong_shape])
def test_a_damaged_entry_is_recomputed_with_one_warning(damage, instances, policies, fresh, tmp_path, monkeypatch):
    run_grid(instances, policies, HORIZONS, cache_dir=tmp_path, **KW)
    files = entries(tmp_path)
    victim = files[len(files) // 2]
    damage(victim)
    calls = count_tasks(monkeypatch)
    with pytest.warns(CacheWarning) as record:
        again = run_grid(instances, policies, HORIZONS, cache_dir=tmp_path, **KW)
    assert len(record) == 1 and "1 damaged cache entry recomputed" in str(record[0].message)
    assert str(victim) in str(record[0].message)
    assert len(calls) == 1  # only the task holding the damaged entry ran again
    pd.testing.assert_frame_equal(numbers(again), numbers(fresh))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the entry was rewritten: a third run is clean and computes nothing
        calls.clear()
        third = run_grid(instances, policies, HORIZONS, cache_dir=tmp_path, **KW)
    assert calls == []
    pd.testing.assert_frame_equal(numbers(third), numbers(fresh))


def test_an_entry_copied_over_another_key_is_not_used(instances, policies, fresh, tmp_path, monkeypatch):
    run_grid(instances, policies, HORIZONS, cache_dir=tmp_path, **KW)
    # Same shapes, different numbers: the CURE runs of one instance at two horizons would both
    # pass a shape check; only the stored key tells them apart.
    by_shape = {}
    for f in entries(tmp_path):
        by_shape.setdefault(cache_mod.read_entry(f)[2]["pulls"].shape, []).append(f)
    victim, other = next(group for group in by_shape.values() if len(group) >= 2)[:2]
    shutil.copyfile(other, victim)
    calls = count_tasks(monkeypatch)
    with pytest.warns(CacheWarning, match="stored for another key"):
        again = run_grid(instances, policies, HORIZONS, cache_dir=tmp_path, **KW)
    assert len(calls) == 1
    pd.testing.assert_frame_equal(numbers(again), numbers(fresh))


def test_cache_folder_argument_then_environment(instances, policies, tmp_path, monkeypatch):
    monkeypatch.setenv("HB_CACHE_DIR", str(tmp_path / "from-env"))
    run_grid(instances, policies, HORIZONS, **KW)
    assert entries(tmp_path / "from-env")
    run_grid(instances, policies, HORIZONS, cache_dir=tmp_path / "explicit", **KW)
    assert entries(tmp_path / "explicit")
    monkeypatch.setenv("HB_CACHE_DIR", "")
    assert cache_mod.default_cache_dir() == cache_mod.REPO_ROOT / "outputs" / "cache"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_cache_folder_computes_and_warns_once(instances, policies, fresh, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.warns(CacheWarning) as record:
            df = run_grid(instances, policies, HORIZONS, cache_dir=folder, **KW)
    finally:
        folder.chmod(0o755)
    assert len(record) == 1 and "cannot be written" in str(record[0].message) and str(folder) in str(record[0].message)
    pd.testing.assert_frame_equal(numbers(df), numbers(fresh))
    assert not entries(folder)


def test_cache_path_that_is_a_file_computes_and_warns(instances, policies, fresh, tmp_path):
    path = tmp_path / "a-file"
    path.write_text("not a folder")
    with pytest.warns(CacheWarning, match="cannot be written"):
        df = run_grid(instances, policies, HORIZONS, cache_dir=path, **KW)
    pd.testing.assert_frame_equal(numbers(df), numbers(fresh))


def test_permission_denied_on_write_computes_and_warns_once(instances, policies, fresh, tmp_path, monkeypatch):
    # The read-only test above is skipped for root; this one fails every write the way a read-only folder does.
    def refuse(path, write):
        raise PermissionError(13, "Permission denied", str(path))
    monkeypatch.setattr(cache_mod, "atomic_write", refuse)
    with pytest.warns(CacheWarning) as record:
        df = run_grid(instances, policies, HORIZONS, cache_dir=tmp_path, **KW)
    assert len(record) == 1 and "cannot be written (PermissionError: Permission denied)" in str(record[0].message)
    assert "results computed but not cached" in str(record[0].message)
    pd.testing.assert_frame_equal(numbers(df), numbers(fresh))


def test_cache_key_ignores_edits_outside_the_numerical_code(tmp_path):
    pkg = tmp_path / "horizonbandits"
    shutil.copytree(cache_mod.PACKAGE_DIR, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    before = cache_mod.code_digest(package_dir=pkg)

    def edit(rel, change):
        path = pkg / rel
        path.write_text(change(path.read_text()))
        return cache_mod.code_digest(package_dir=pkg)

    # The command line, the plotting helpers and the statistics cannot change a grid's numbers.
    assert edit("cli.py", lambda s: s + "\n\ndef an_added_command():\n    return 0\n") == before
    assert edit("plotting.py", lambda s: s.replace("def setup(", "def setup_renamed(")) == before
    assert edit("stats.py", lambda s: s + "\nEXTRA = 1\n") == before
    # Docstrings and comments in the numerical code do not either.
    sim = "rising/simulate.py"
    assert edit(sim, lambda s: s.replace('"""', '"""Reworded. ', 1)) == before
    assert edit(sim, lambda s: s.replace("\nimport", "\n# a new comment\nimport", 1)) == before
    # Code in the model's package does.
    assert edit(sim, lambda s: s + "\nEXTRA = 1\n") != before
    after_model = cache_mod.code_digest(package_dir=pkg)
    assert edit("rng.py", lambda s: s + "\nMORE = 2\n") != after_model


def test_an_entry_reads_back_what_was_written_and_rejects_a_partial_file(tmp_path):
    arrays = {"pulls": np.arange(24, dtype=np.int64).reshape(2, 3, 4), "wall": np.array([0.5, 1.25]),
              "empty": np.zeros((0, 3))}
    path = tmp_path / "entry.hbc"
    cache_mod.write_entry(path, "k", "c", arrays)
    key, check, back = cache_mod.read_entry(path)
    assert (key, check) == ("k", "c") and list(back) == list(arrays)
    for name, a in arrays.items():
        assert back[name].dtype == a.dtype and back[name].shape == a.shape and np.array_equal(back[name], a)
    with pytest.raises(ValueError, match="Python objects"):
        cache_mod.write_entry(tmp_path / "objects.hbc", "k", "c", {"names": np.array(["a", None], dtype=object)})
    data = path.read_bytes()
    for bad in (data[:-1], data + b"x", b"PK" + data[2:]):
        path.write_bytes(bad)
        with pytest.raises(ValueError):
            cache_mod.read_entry(path)


def test_each_model_keeps_its_cache_when_the_other_model_changes(tmp_path):
    pkg = tmp_path / "horizonbandits"
    shutil.copytree(cache_mod.PACKAGE_DIR, pkg, ignore=shutil.ignore_patterns("__pycache__"))

    def digests():
        return {m: cache_mod.code_digest(m, package_dir=pkg) for m in ("rising", "commit", None)}

    before = digests()
    (pkg / "commit/elimination.py").write_text((pkg / "commit/elimination.py").read_text() + "\nEXTRA = 1\n")
    after_commit = digests()
    assert after_commit["rising"] == before["rising"]
    assert after_commit["commit"] != before["commit"] and after_commit[None] != before[None]
    (pkg / "rising/policies/cure_ucb.py").write_text((pkg / "rising/policies/cure_ucb.py").read_text() + "\nEXTRA = 1\n")
    after_rising = digests()
    assert after_rising["commit"] == after_commit["commit"] and after_rising["rising"] != after_commit["rising"]
    # shared code (the generators, the seeds) is in both
    (pkg / "rng.py").write_text((pkg / "rng.py").read_text() + "\nEXTRA = 1\n")
    assert all(v != after_rising[k] for k, v in digests().items())
    with pytest.raises(ValueError, match="model="):
        cache_mod.code_digest("imdb")


def _imports(path):
    """The horizonbandits modules a file imports (relative imports resolved), anywhere in the file."""
    import ast
    rel = path.relative_to(cache_mod.PACKAGE_DIR).with_suffix("").parts
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel[:-node.level]) if node.level <= len(rel) else []
                mod = base + (node.module.split(".") if node.module else [])
            else:
                mod = node.module.split(".")[1:] if node.module and node.module.startswith("horizonbandits") else None
            if mod is not None:
                out |= {"/".join(mod + [a.name]) for a in node.names} | {"/".join(mod)}
        elif isinstance(node, ast.Import):
            out |= {"/".join(a.name.split(".")[1:]) for a in node.names if a.name.startswith("horizonbandits")}
    return out


def test_the_models_do_not_import_each_other():
    # What lets each model's cache key leave the other model's files out (cache.MODEL_ONLY).
    for model, others in (("commit", cache_mod.MODEL_ONLY["rising"]), ("rising", cache_mod.MODEL_ONLY["commit"])):
        for path in cache_mod.numerical_files(model=model):
            bad = {m for m in _imports(path) if any(m == o.removesuffix(".py").removesuffix("/__init__")
                                                     or m.startswith(o.removesuffix(".py") + "/") for o in others)}
            assert not bad, f"{path.relative_to(cache_mod.PACKAGE_DIR)} imports {sorted(bad)}"
    # and the code both keys hold (generators, seeds, errors...) imports neither model
    shared = set(cache_mod.numerical_files(model="rising")) & set(cache_mod.numerical_files(model="commit"))
    for path in shared:
        bad = {m for m in _imports(path) if m.split("/")[0] in ("rising", "commit")}
        assert not bad, f"{path.relative_to(cache_mod.PACKAGE_DIR)} imports {sorted(bad)}"
