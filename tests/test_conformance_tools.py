"""The conformance suite's own bookkeeping: the skip file, the MXNet baseline, the junit reader."""
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "conformance"))

import suite  # noqa: E402
from suite import ALL_FILES, outcomes_from_junit, prepare_run_dir, split_name  # noqa: E402
from neogluon_conformance_plugin import (SLOW_ENV, load_baseline, load_skips,  # noqa: E402
                                         load_slow, skip_reason, slow_reason)
from neogluon_conformance_plugin import test_id_of as id_of_item  # noqa: E402  (not a test)


def _baseline_passed():
    baseline = load_baseline()
    return {t for entry in baseline.values() for t in entry.get("passed", ())}


def test_baseline_covers_every_handed_file():
    baseline = load_baseline()
    assert sorted(baseline) == sorted(ALL_FILES)
    assert len(set(ALL_FILES)) == len(ALL_FILES)
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


def test_junit_outcomes_prefix_the_folder(tmp_path):
    xml = tmp_path / "r.xml"
    xml.write_text('<testsuites><testsuite><testcase classname="test_mlp" name="test_mlp" />'
                   '</testsuite></testsuites>')
    assert outcomes_from_junit(str(xml), "train/")["passed"] == {"train/test_mlp.py::test_mlp"}


def test_split_name_tells_train_tests_from_unit_tests():
    assert split_name("train/test_autograd.py") == ("train", "test_autograd.py")
    assert split_name("test_autograd.py") == ("unittest", "test_autograd.py")
    # unittest/ and train/ both have a test_autograd.py: the ids must not collide.
    assert "train/test_autograd.py" in ALL_FILES and "test_autograd.py" in ALL_FILES


def test_plugin_names_train_tests_by_folder(tmp_path):
    class Item:
        def __init__(self, path, nodeid):
            self.path, self.nodeid = path, nodeid
    train = tmp_path / "suite" / "train" / "test_mlp.py"
    unit = tmp_path / "suite" / "unittest" / "test_mlp.py"
    assert id_of_item(Item(train, "test_mlp.py::test_mlp")) == "train/test_mlp.py::test_mlp"
    assert id_of_item(Item(unit, "test_mlp.py::TestK::test_a[1]")) == "test_mlp.py::TestK::test_a[1]"


def test_slow_list_names_target_tests_with_their_seconds():
    slow = load_slow()
    passed = _baseline_passed()
    skips = load_skips()
    for test_id, seconds in slow.items():
        assert test_id in passed, f"{test_id} is not a target test"
        assert seconds > 60, test_id
        assert skip_reason(test_id, skips) is None, f"{test_id} is both skipped and slow"


def test_slow_reason_says_where_the_test_runs(monkeypatch):
    slow = {"test_a.py::test_big": 75.4}
    monkeypatch.delenv(SLOW_ENV, raising=False)
    assert slow_reason("test_a.py::test_big[1]", slow) == \
        "slow on MXNet itself (75 s): make conformance-all"
    assert slow_reason("test_a.py::test_small", slow) is None
    monkeypatch.setenv(SLOW_ENV, "1")
    assert slow_reason("test_a.py::test_big", slow) is None


def test_slow_list_refuses_a_note_without_seconds(tmp_path):
    path = tmp_path / "slow_tests.txt"
    path.write_text("test_a.py::test_x   # 61 s\ntest_a.py::test_y   # slow\n")
    with pytest.raises(ValueError, match="test_y"):
        load_slow(str(path))
    assert load_slow(str(tmp_path / "absent.txt")) == {}


def test_run_dir_of_a_train_test_links_the_data_file_by_file(tmp_path):
    data = tmp_path / "made" / "data"
    (data / "cifar").mkdir(parents=True)
    (data / "train-images-idx3-ubyte").write_bytes(b"x")
    (data / "cifar" / "train.rec").write_bytes(b"y")
    (data / ".recipe-mnist.json").write_text("{}")
    suite_dir = tmp_path / "suite"
    (suite_dir / "train").mkdir(parents=True)
    (suite_dir / "unittest").mkdir()
    run_dir = prepare_run_dir(str(suite_dir), "train/test_mlp.py", str(tmp_path / "made"))
    assert run_dir == str(suite_dir / "train")
    linked = suite_dir / "train" / "data"
    assert (linked / "train-images-idx3-ubyte").read_bytes() == b"x"
    assert (linked / "cifar" / "train.rec").read_bytes() == b"y"
    assert not (linked / ".recipe-mnist.json").exists()
    # A file a test writes (ImageRecordIter's mean.bin) stays in this run's folder.
    assert not (linked / "cifar").is_symlink()
    assert prepare_run_dir(str(suite_dir), "test_module.py", None) == str(suite_dir / "unittest")


def test_copy_suite_brings_common_and_train(tmp_path):
    if not os.path.isdir(suite.UNITTEST_DIR):
        pytest.skip("MXNet's test suite is not on this machine")
    unittest_dir = suite.copy_suite(str(tmp_path / "suite"))
    assert os.path.exists(os.path.join(unittest_dir, "test_module.py"))
    assert os.path.exists(tmp_path / "suite" / "common" / "models.py")
    # test_module.py imports train/test_bucketing.py
    assert os.path.exists(tmp_path / "suite" / "train" / "test_bucketing.py")
