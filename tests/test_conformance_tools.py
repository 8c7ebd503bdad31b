"""The conformance suite's own bookkeeping: the skip file, the MXNet baseline, the junit reader."""
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "conformance"))

from suite import HANDED_FILES, outcomes_from_junit  # noqa: E402
from neogluon_conformance_plugin import load_baseline, load_skips, skip_reason  # noqa: E402


def _baseline_passed():
    baseline = load_baseline()
    return {t for entry in baseline.values() for t in entry.get("passed", ())}


def test_baseline_covers_every_handed_file():
    baseline = load_baseline()
    assert sorted(baseline) == sorted(HANDED_FILES)
    for name, entry in baseline.items():
        assert all(t.startswith(name + "::") for kind in entry.values() for t in kind), name


def test_skips_have_reasons_name_handed_tests_and_stay_under_ten_percent():
    skips = load_skips()
    passed = _baseline_passed()
    known = {t for entry in load_baseline().values() for kind in entry.values() for t in kind}
    bases = {t.split("[")[0] for t in known}
    for test_id, reason in skips.items():
        assert len(reason) > 10, test_id
        assert test_id in known or test_id in bases, f"{test_id} is not a handed test"
    skipped = {t for t in passed if skip_reason(t, skips) is not None}
    assert len(skipped) < 0.1 * len(passed), (len(skipped), len(passed))


def test_skip_file_refuses_an_entry_without_reason(tmp_path):
    path = tmp_path / "skips.txt"
    path.write_text("# comment\ntest_a.py::test_x   # needs the Module API\ntest_a.py::test_y\n")
    with pytest.raises(ValueError, match="skips.txt:3"):
        load_skips(str(path))


def test_skip_reason_matches_every_parametrisation():
    skips = {"test_a.py::test_x": "needs the Module API"}
    assert skip_reason("test_a.py::test_x[float16-2]", skips) == "needs the Module API"
    assert skip_reason("test_a.py::test_xy", skips) is None


def test_known_failures_are_target_tests():
    path = os.path.join(ROOT, "conformance", "known_failures.txt")
    if not os.path.exists(path):
        pytest.skip("no known failures listed")
    passed = _baseline_passed()
    with open(path) as f:
        ids = [line.split("#")[0].strip() for line in f if line.strip() and not line.startswith("#")]
    assert set(ids) <= passed


def test_junit_outcomes(tmp_path):
    xml = tmp_path / "r.xml"
    xml.write_text(
        '<testsuites><testsuite>'
        '<testcase classname="test_a" name="test_ok" />'
        '<testcase classname="test_a" name="test_bad"><failure message="x"/></testcase>'
        '<testcase classname="test_a.TestK" name="test_m[1]"><skipped/></testcase>'
        '<testcase classname="test_a" name="test_err" /><testcase classname="test_a" name="test_err">'
        '<error message="teardown"/></testcase>'
        '</testsuite></testsuites>')
    out = outcomes_from_junit(str(xml))
    assert out["passed"] == {"test_a.py::test_ok"}
    assert out["failed"] == {"test_a.py::test_bad", "test_a.py::test_err"}
    assert out["skipped"] == {"test_a.py::TestK::test_m[1]"}
