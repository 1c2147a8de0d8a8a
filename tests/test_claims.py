"""The claims ledger: columns, vocabulary, one file per notebook, merge across notebooks."""
import pandas as pd
import pytest

from horizonbandits import claims


def _claim(cid="A-fig2-test", verdict="reproduced", **kw):
    return claims.Claim(cid, cid[0], "Figure 2", "a statement", paper_value="yes", ours="1.0", verdict=verdict, **kw)


def test_record_writes_exact_columns_and_profile(tmp_path):
    out = tmp_path / "default"
    frame = claims.record("nb_one", out, [_claim(depends_on=["w", "sigma rule"])])
    assert list(frame.columns) == claims.COLUMNS
    on_disk = claims.read(out / "claims" / "nb_one.csv")
    assert on_disk.loc[0, "profile"] == "default"
    assert on_disk.loc[0, "depends_on"] == "w; sigma rule"
    assert on_disk.loc[0, "notebook"] == "nb_one"


@pytest.mark.parametrize("kw, word", [(dict(verdict="maybe"), "verdict"), (dict(cid="C-x"), "paper"),
                                      (dict(cid="A x"), "claim_id")])
def test_bad_claims_name_the_field(kw, word):
    with pytest.raises(ValueError, match=word):
        _claim(**kw)


def test_repeated_ids_refused(tmp_path):
    with pytest.raises(ValueError, match="repeated"):
        claims.record("nb", tmp_path, [_claim(), _claim()])


def test_merge_counts_and_line(tmp_path):
    claims.record("nb_b", tmp_path, [_claim("B-fig4-x", "partly")])
    claims.record("nb_a", tmp_path, [_claim("A-fig1-x"), _claim("A-fig2-y", claims.not_testable(
        "A-fig3d", "A", "Figure 3 (d)", "s", "logs not public").verdict)])
    ledger = claims.write_ledger(tmp_path, "smoke")
    assert list(ledger["paper"]) == ["A", "A", "B"]
    assert set(ledger["profile"]) == {"smoke"}
    assert claims.counts(ledger) == {"reproduced": 1, "partly": 1, "not reproduced": 0, "not testable": 1}
    assert claims.summary_line(ledger) == "1 reproduced, 1 partly, 0 not reproduced, 1 not testable"
    assert pd.read_csv(tmp_path / "claims.csv").shape == (3, len(claims.COLUMNS))
    assert len(claims.merge(tmp_path, "smoke", notebooks={"nb_a"})) == 2


def test_verdict_of():
    assert claims.verdict_of(True) == "reproduced"
    assert claims.verdict_of(False, partly=True) == "partly"
    assert claims.verdict_of(False) == "not reproduced"
