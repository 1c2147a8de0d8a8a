"""The claims machinery: each rule driven to each of its verdicts, the catalogue, the ledger, merge, diff."""
import math

import numpy as np
import pandas as pd
import pytest

from horizonbandits import claims, stats
from horizonbandits.claims import rules
from horizonbandits.stats import Estimate

CATALOGUE = """
A-one:
  paper: A
  kind: test
  notebook: nb_a
  where: Figure 1
  statement: the first claim
  paper_value: 'yes'
A-two:
  paper: A
  kind: illustration
  notebook: nb_a
  where: Figure 2
  statement: the second claim
B-three:
  paper: B
  kind: formula
  notebook: nb_b
  where: Theorem 3
  statement: the third claim
  paper_value: '1/2'
B-four:
  paper: B
  kind: test
  notebook: nb_b
  where: Figure 4
  statement: the fourth claim
"""


@pytest.fixture
def catalogue(tmp_path, monkeypatch):
    path = tmp_path / "catalogue.yaml"
    path.write_text(CATALOGUE)
    monkeypatch.setenv("HB_CATALOGUE", str(path))
    return path


def est(value, low, high, n=30, unit="instances", percent=False):
    return Estimate(value, low, high, n, unit, percent=percent)


# ----------------------------------------------------------------------------- estimates


def test_proportion_estimate_is_wilson():
    e = stats.proportion_estimate(28, 30)
    assert e.value == pytest.approx(28 / 30)
    z = 1.959963984540054
    p, n = 28 / 30, 30
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (e.low, e.high) == pytest.approx((centre - half, centre + half))
    assert stats.proportion_estimate(30, 30).high == 1.0 and stats.proportion_estimate(30, 30).low < 1.0


def test_mean_estimate_uses_student_t():
    e = stats.mean_estimate([1.0, 2.0, 3.0, 4.0])
    assert e.high - e.value == pytest.approx(3.182446305284263 * np.std([1, 2, 3, 4], ddof=1) / 2)
    assert stats.mean_estimate([5.0]).half_width == 0


def test_estimate_refuses_a_point_outside_its_interval():
    with pytest.raises(ValueError, match="low <= value <= high"):
        Estimate(2.0, 0.0, 1.0, 3)


def test_log_slope_recovers_an_exponent_and_widens_with_noise():
    x = np.array([1e3, 2e3, 5e3, 1e4, 2e4])
    exact = stats.log_slope(x, 3 * x ** 0.5)
    assert exact.value == pytest.approx(0.5) and exact.half_width == pytest.approx(0, abs=1e-9)
    noisy = stats.log_slope(x, 3 * x ** 0.5, y_se=0.05 * 3 * x ** 0.5)
    dx = np.log(x) - np.log(x).mean()
    assert noisy.half_width == pytest.approx(1.959963984540054 * 0.05 / np.sqrt(np.sum(dx * dx)))


# ----------------------------------------------------------------------------- compare


def test_compare_reaches_every_verdict():
    assert rules.compare(est(0.9, 0.8, 0.97), 0.5).verdict == claims.REPRODUCED
    assert rules.compare(est(0.3, 0.2, 0.4), 0.5).verdict == claims.NOT_REPRODUCED
    assert rules.compare(est(0.7, 0.6, 0.8), 0.95, partly=0.5).verdict == claims.PARTLY
    assert rules.compare(est(0.7, 0.45, 0.8), 0.95, partly=0.5).verdict == claims.NOT_REPRODUCED
    undecided = rules.compare(est(0.93, 0.83, 1.0, percent=True), 0.95)
    assert undecided.verdict == claims.INCONCLUSIVE
    # the estimate is 0.02 below the threshold and 0.07 from the interval's top: (0.07 / 0.02)^2 = 12.25 times more
    assert undecided.to_decide.startswith(f"about {math.ceil(30 * (0.07 / 0.02) ** 2):,} instances (now 30)")
    assert rules.compare(est(-3, -4, -2), 0, side="<").verdict == claims.REPRODUCED
    with pytest.raises(ValueError, match="side"):
        rules.compare(est(1, 0, 2), 0, side=">=")


def test_compare_on_the_threshold_cannot_be_decided():
    out = rules.compare(est(0.5, 0.4, 0.6), 0.5)
    assert out.verdict == claims.INCONCLUSIVE and "undecidable" in out.to_decide


# ----------------------------------------------------------------------------- combine and ordering


def test_combine():
    R, N, I, P = (claims.Outcome(v) for v in (claims.REPRODUCED, claims.NOT_REPRODUCED, claims.INCONCLUSIVE,
                                              claims.PARTLY))
    T = claims.Outcome(claims.NOT_TESTABLE)
    assert rules.combine([R, R, T]).verdict == claims.REPRODUCED
    assert rules.combine([R, I]).verdict == claims.INCONCLUSIVE
    assert rules.combine([R, R, N]).verdict == claims.PARTLY
    assert rules.combine([R, N]).verdict == claims.NOT_REPRODUCED  # half is not more than half
    assert rules.combine([R, N], partly_above=0.4).verdict == claims.PARTLY
    assert rules.combine([P, P, R]).verdict == claims.PARTLY
    assert rules.combine([T]).verdict == claims.NOT_TESTABLE


def test_ordering_reads_paired_intervals():
    up, tie, down = est(100, 50, 150), est(10, -5, 25), est(-80, -120, -40)
    assert rules.ordering({1000: {"a": up, "b": up}, 2000: {"a": up, "b": up}}).verdict == claims.REPRODUCED
    undecided = rules.ordering({1000: {"a": up, "b": tie}, 2000: {"a": up, "b": up}})
    assert undecided.verdict == claims.INCONCLUSIVE and "undecided against b" in undecided.ours
    part = rules.ordering({1000: {"a": up}, 2000: {"a": up}, 5000: {"a": down}})
    assert part.verdict == claims.PARTLY and "T = 5,000: lower a" in part.ours
    assert rules.ordering({1000: {"a": down}, 2000: {"a": up}}).verdict == claims.NOT_REPRODUCED


# ----------------------------------------------------------------------------- matches


def test_matches_reaches_every_verdict():
    assert rules.matches(est(2050, 1900, 2200), 2057, 0.2).verdict == claims.REPRODUCED
    far = rules.matches(est(4751, 4500, 5000), 2057, 0.2)
    assert far.verdict == claims.NOT_REPRODUCED and "ours / paper 2.31" in far.ours
    assert rules.matches(est(4751, 4500, 5000), 2057, 0.2, partly_tol=1.5).verdict == claims.PARTLY
    edge = rules.matches(est(2400, 2000, 2800), 2057, 0.2)
    assert edge.verdict == claims.INCONCLUSIVE and edge.to_decide.startswith("about")
    # the paper's own sampling error can make the comparison undecidable whatever we run
    wide_paper = rules.matches(est(2400, 2390, 2410), 2057, 0.2, paper_half_width=500)
    assert wide_paper.verdict == claims.INCONCLUSIVE and "paper's own sampling error" in wide_paper.to_decide
    with pytest.raises(ValueError, match="paper_value"):
        rules.matches(est(1, 0, 2), 0, 0.1)


def test_matches_tolerance_is_relative_to_the_paper():
    # 1.19 x paper with a tight interval is inside +-20 % and outside +-15 %
    assert rules.matches(est(119, 118.5, 119.5), 100, 0.20).verdict == claims.REPRODUCED
    assert rules.matches(est(119, 118.5, 119.5), 100, 0.15).verdict == claims.NOT_REPRODUCED


# ----------------------------------------------------------------------------- slopes


def test_slope_matches():
    x = np.array([1e3, 2e3, 5e3, 1e4, 2e4, 5e4])
    y = 2 * x ** 0.74
    se = 0.002 * y
    assert rules.slope_matches(x, y, 0.75, 0.05, y_se=se).verdict == claims.REPRODUCED
    assert rules.slope_matches(x, y, 0.5, 0.05, y_se=se).verdict == claims.NOT_REPRODUCED
    wide = rules.slope_matches(x, y, 0.77, 0.05, y_se=0.2 * y)
    assert wide.verdict == claims.INCONCLUSIVE
    # a kink: slope 1 on the lower half, 0.5 on the upper; the overall slope may look right, the halves disagree
    kinked = np.where(x <= 5e3, x, np.sqrt(5e3 * x))
    out = rules.slope_matches(x, kinked, 0.75, 0.1, y_se=0.001 * kinked)
    assert out.verdict in (claims.PARTLY, claims.NOT_REPRODUCED) and "halves" in out.ours


# ----------------------------------------------------------------------------- bounds


def test_bound_holds():
    trivial = np.array([100.0, 100.0, 100.0])
    assert rules.bound_holds([10, 20, 30], [50, 60, 200], trivial).verdict == claims.REPRODUCED
    counted = rules.bound_holds([10, 20, 300], [50, 60, 200], trivial)
    assert counted.verdict == claims.REPRODUCED and counted.n == "2 of 3 cases"  # the vacuous case is left out
    assert rules.bound_holds([10, 70], [50, 60], trivial[:2], lows=[5, 65]).verdict == claims.NOT_REPRODUCED
    assert rules.bound_holds([10, 70], [50, 60], trivial[:2], lows=[5, 55]).verdict == claims.INCONCLUSIVE
    assert rules.bound_holds([10], [500], [100]).verdict == claims.NOT_TESTABLE


# ----------------------------------------------------------------------------- catalogue


def test_catalogue_of_the_package_is_valid_and_owns_every_id_once():
    entries = claims.catalogue.load(claims.catalogue.CATALOGUE_FILE)
    assert len(entries) > 50
    assert {e.kind for e in entries.values()} <= set(claims.KINDS)
    assert all(e.claim_id.startswith(e.paper + "-") for e in entries.values())


@pytest.mark.parametrize("text, word", [
    ("A-x: {paper: A, kind: proof, notebook: nb, where: w, statement: s}", "kind"),
    ("A-x: {paper: B, kind: test, notebook: nb, where: w, statement: s}", "paper"),
    ("A x: {paper: A, kind: test, notebook: nb, where: w, statement: s}", "claim id"),
    ("A-x: {paper: A, kind: test, notebook: nb, where: w}", "missing fields"),
    ("A-x: {paper: A, kind: test, notebook: nb, where: w, statement: s, colour: red}", "unknown fields"),
    ("A-x: {paper: A, kind: test, notebook: ../nb, where: w, statement: s}", "notebook"),
])
def test_catalogue_entries_are_checked(tmp_path, text, word):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(claims.ClaimsError, match=word):
        claims.catalogue.load(path)


def test_unknown_id_is_one_line_with_a_hint(catalogue, tmp_path):
    ledger = claims.Ledger("nb_a", tmp_path)
    with pytest.raises(claims.ClaimsError, match=r"'A-onw' recorded by nb_a is not in the catalogue .*did you mean 'A-one'"):
        ledger.check("A-onw", rules.exact(True))


# ----------------------------------------------------------------------------- a notebook's ledger


def test_ledger_rows_take_the_catalogue_and_mark_missing(catalogue, tmp_path):
    ledger = claims.Ledger("nb_a", tmp_path / "smoke", settings={"noise": 0.01, "eps": 0.5})
    ledger.check("A-one", rules.compare(est(0.9, 0.8, 0.97), 0.5))
    view = ledger.save()
    frame = claims.read(tmp_path / "smoke" / "claims" / "nb_a.csv")
    assert list(frame.columns) == claims.COLUMNS
    one = frame.set_index("claim_id").loc["A-one"]
    assert (one.kind, one.statement, one.paper_value, one.verdict) == ("test", "the first claim", "yes", "reproduced")
    assert one.settings == "noise = 0.01; eps = 0.5" and one.interval == "[0.8, 0.97]" and one.n == "30 instances"
    assert one.profile == "smoke"
    assert frame.set_index("claim_id").loc["A-two", "verdict"] == claims.MISSING
    assert "<table>" in view._repr_html_()


def test_ledger_refuses_a_claim_recorded_twice(catalogue, tmp_path):
    ledger = claims.Ledger("nb_a", tmp_path)
    ledger.check("A-one", rules.exact(True))
    with pytest.raises(claims.ClaimsError, match="recorded twice as its default"):
        ledger.check("A-one", rules.exact(False))
    ledger.check("A-two", rules.exact(True), reading={"w": 0.5})
    with pytest.raises(claims.ClaimsError, match=r"recorded twice under the reading w = 0.5"):
        ledger.check("A-two", rules.exact(True), reading={"w": 0.5}, default=False)


def test_readings_give_counts_and_depends_on(catalogue, tmp_path):
    ledger = claims.Ledger("nb_a", tmp_path / "default")
    for w, holds in ((0.5, False), (0.0, True), (0.9, False)):
        ledger.check("A-one", rules.exact(holds), reading={"w": w}, default=(w == 0.5))
    for eps in (0.5, 0.25):
        ledger.check("A-two", rules.exact(False), reading={"eps": eps}, default=(eps == 0.5))
    ledger.save()
    frame = claims.read(tmp_path / "default" / "claims" / "nb_a.csv").set_index("claim_id")
    assert frame.loc["A-one", "readings"] == "holds under 1 of 3 readings (default: w = 0.5)"
    assert frame.loc["A-one", "depends_on"] == "w = 0: reproduced"
    assert frame.loc["A-two", "depends_on"] == "cause not identified; tried: eps"
    readings = claims.read_table(tmp_path / "default" / "readings" / "nb_a.csv", claims.READING_COLUMNS,
                                 claims.VERDICTS)
    assert list(readings.columns[:5]) == ["claim_id", "reading", "value", "ours", "verdict"]
    assert len(readings) == 5 and list(readings["default"]).count("yes") == 2


def test_a_reading_without_a_default_is_refused(catalogue, tmp_path):
    ledger = claims.Ledger("nb_a", tmp_path)
    ledger.check("A-one", rules.exact(True), reading={"w": 0.1}, default=False)
    with pytest.raises(claims.ClaimsError, match="none with default=True"):
        ledger.save()


def test_a_failing_test_without_readings_says_so(catalogue, tmp_path):
    ledger = claims.Ledger("nb_b", tmp_path)
    ledger.check("B-four", rules.exact(False))
    ledger.check("B-three", rules.exact(False))
    ledger.save()
    frame = claims.read(tmp_path / "claims" / "nb_b.csv").set_index("claim_id")
    assert frame.loc["B-four", "depends_on"] == "cause not identified (no reading swept)"
    assert frame.loc["B-three", "depends_on"] == ""  # a formula, not a test


def test_a_copy_records_its_own_ids_of_kind_ours(catalogue, tmp_path):
    ledger = claims.Ledger("my_study", tmp_path)
    ledger.check("A-one", rules.exact(True))
    ledger.save()
    merged = claims.merge(tmp_path, "interactive")
    row = merged.claims.set_index("claim_id").loc["my_study.A-one"]
    assert (row.kind, row.notebook) == ("ours", "my_study") and not merged.problems
    assert claims.paper_tallies(merged.claims)["A"] == "0 claims"


# ----------------------------------------------------------------------------- merge


def _write(tmp_path, notebook, ids_verdicts):
    ledger = claims.Ledger(notebook, tmp_path)
    for cid, verdict in ids_verdicts:
        ledger.check(cid, claims.Outcome(verdict))
    ledger.save()


def test_merge_orders_marks_missing_and_tallies_tests_only(catalogue, tmp_path):
    _write(tmp_path, "nb_a", [("A-one", claims.REPRODUCED), ("A-two", claims.REPRODUCED)])
    merged = claims.write_ledger(tmp_path, "smoke", notebooks={"nb_a", "nb_b"})
    ledger = merged.claims
    assert list(ledger["claim_id"]) == ["A-one", "A-two", "B-four", "B-three"]  # paper, then kind order
    assert list(ledger["verdict"]) == ["reproduced", "reproduced", "missing", "missing"]
    assert claims.paper_tallies(ledger) == {"A": "1 reproduced", "B": "1 missing"}
    assert claims.tally(ledger)[["paper", "kind", "claims"]].values.tolist() == [
        ["A", "test", 1], ["A", "illustration", 1], ["B", "test", 1], ["B", "formula", 1]]
    assert pd.read_csv(tmp_path / "claims.csv").shape == (4, len(claims.COLUMNS))
    assert (tmp_path / "readings.csv").is_file()


def test_merge_reports_unknown_foreign_and_repeated_ids(catalogue, tmp_path):
    _write(tmp_path, "nb_a", [("A-one", claims.REPRODUCED)])
    folder = tmp_path / "claims"
    good = (folder / "nb_a.csv").read_text()
    # another notebook's file claiming nb_a's id, and an id no catalogue knows
    (folder / "nb_b.csv").write_text(good.replace(",nb_a,", ",nb_b,"))
    (folder / "nb_c.csv").write_text(good.replace("A-one,", "A-zero,"))
    merged = claims.merge(tmp_path, "smoke")
    assert any("'A-one' belongs to notebook nb_a" in p for p in merged.problems)
    assert any("'A-zero' is not in the catalogue" in p for p in merged.problems)
    (folder / "nb_a2.csv").write_text(good)
    again = claims.merge(tmp_path, "smoke")
    assert any("belongs to notebook nb_a" in p for p in again.problems)


def test_merge_survives_a_damaged_file(catalogue, tmp_path):
    _write(tmp_path, "nb_a", [("A-one", claims.REPRODUCED)])
    _write(tmp_path, "nb_b", [("B-four", claims.PARTLY), ("B-three", claims.REPRODUCED)])
    path = tmp_path / "claims" / "nb_b.csv"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], ",".join(lines[1].split(",")[:7])]) + "\n")  # a row cut short
    merged = claims.write_ledger(tmp_path, "smoke")
    assert any("claims/nb_b.csv is damaged" in p and "fields" in p for p in merged.problems)
    by_id = merged.claims.set_index("claim_id")["verdict"]
    assert by_id["A-one"] == "reproduced" and by_id["B-four"] == "missing" and by_id["B-three"] == "missing"
    assert "B-four" in (tmp_path / "claims.csv").read_text()  # claims.csv rewritten, not left stale


@pytest.mark.parametrize("edit, word", [(("A,test", "C,test"), "paper"), (("A,test", "A,proof"), "kind"),
                                        ((",reproduced,", ",maybe,"), "verdict")])
def test_read_refuses_unknown_vocabulary(catalogue, tmp_path, edit, word):
    _write(tmp_path, "nb_a", [("A-one", claims.REPRODUCED)])
    path = tmp_path / "claims" / "nb_a.csv"
    path.write_text(path.read_text().replace(*edit, 1))
    with pytest.raises(claims.ClaimsError, match=f"unknown {word}"):
        claims.read(path)


# ----------------------------------------------------------------------------- diff


def test_diff_lists_verdicts_kinds_numbers_and_membership():
    old = pd.DataFrame([{"claim_id": "A-1", "verdict": "reproduced", "ours": "1"},
                        {"claim_id": "A-2", "verdict": "partly", "ours": "2"},
                        {"claim_id": "A-3", "verdict": "partly", "ours": "3"}])
    new = pd.DataFrame([{"claim_id": "A-1", "kind": "test", "verdict": "reproduced", "ours": "1"},
                        {"claim_id": "A-2", "kind": "test", "verdict": "inconclusive", "ours": "2.5"},
                        {"claim_id": "A-4", "kind": "ours", "verdict": "reproduced", "ours": "4"}])
    d = claims.diff(old, new)
    got = {(r.claim_id, r.change): (r.old, r.new) for r in d.itertuples()}
    assert got[("A-2", "verdict")] == ("partly", "inconclusive")
    assert got[("A-2", "ours")] == ("2", "2.5")
    assert ("A-1", "kind") not in got  # the old ledger has no kinds at all
    assert got[("A-4", "added")] == ("", "ours: reproduced")
    assert got[("A-3", "removed")] == (": partly", "")
    assert claims.diff(new, new).empty
    retyped = new.assign(kind=["test", "illustration", "ours"])
    assert claims.diff(new, retyped)[["claim_id", "change", "old", "new"]].values.tolist() == [
        ["A-2", "kind", "test", "illustration"]]


def test_matches_in_absolute_units_with_the_papers_sampling_error():
    ours = est(0.93, 0.83, 1.0, percent=True)
    paper_half = stats.binomial_half_width(0.89, 100)
    assert paper_half == pytest.approx(1.959963984540054 * math.sqrt(0.89 * 0.11 / 100))
    out = rules.matches(ours, 0.89, abs_tol=0.10, paper_half_width=paper_half)
    # the difference 0.04 with half-widths sqrt(0.10^2 + 0.061^2) and sqrt(0.07^2 + 0.061^2) reaches past +-0.10
    assert out.verdict == claims.INCONCLUSIVE and "ours - paper" in out.interval
    tight = est(0.90, 0.88, 0.92, n=2000, percent=True)
    assert rules.matches(tight, 0.89, abs_tol=0.10, paper_half_width=paper_half).verdict == claims.REPRODUCED
    with pytest.raises(ValueError, match="exactly one"):
        rules.matches(ours, 0.89)
