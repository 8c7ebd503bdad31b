"""Shared facts about the conformance suite: where it lives, which files it has, how a junit
report becomes per-test outcomes. Used by conformance/run.py and tools/gen_conformance_baseline.py."""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("NEOGLUON_MXNET_TESTS",
                        os.path.join(os.path.dirname(ROOT), "shared", "mxnet-tests"))
UNITTEST_DIR = os.path.join(SHARED, "unittest")

HANDED_FILES = [
    "test_autograd.py", "test_contrib_autograd.py", "test_contrib_optimizer.py",
    "test_exc_handling.py", "test_gluon.py", "test_gluon_batch_processor.py",
    "test_gluon_contrib.py", "test_gluon_data.py", "test_gluon_data_vision.py",
    "test_gluon_estimator.py", "test_gluon_event_handler.py", "test_gluon_model_zoo.py",
    "test_gluon_rnn.py", "test_gluon_save.py", "test_gluon_trainer.py", "test_gluon_utils.py",
    "test_image.py", "test_init.py", "test_kvstore.py", "test_kvstore_custom.py", "test_loss.py",
    "test_metric.py", "test_ndarray.py", "test_optimizer.py", "test_random.py",
    "test_sparse_ndarray.py", "test_test_utils.py",
]


def outcomes_from_junit(path: str) -> dict:
    """Map a pytest junit XML report to {"passed"|"failed"|"skipped": set(test ids)}.

    A test id is ``file.py::name[param]`` (the class, if any, as ``file.py::Class::name``)."""
    out = {"passed": set(), "failed": set(), "skipped": set()}
    tree = ET.parse(path)
    for case in tree.iter("testcase"):
        classname = case.get("classname", "")
        name = case.get("name", "")
        parts = classname.split(".")
        # classname is "test_file" or "test_file.Class"
        file_part = parts[0] + ".py"
        test_id = "::".join([file_part] + parts[1:] + [name])
        if case.find("skipped") is not None:
            out["skipped"].add(test_id)
        elif case.find("failure") is not None or case.find("error") is not None:
            out["failed"].add(test_id)
        else:
            out["passed"].add(test_id)
    # A test that errored in teardown after passing shows twice; failure wins.
    out["passed"] -= out["failed"]
    return out
