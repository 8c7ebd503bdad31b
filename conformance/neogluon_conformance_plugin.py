"""pytest plugin loaded into each conformance run (``-p neogluon_conformance_plugin``).

It marks the tests listed in conformance/skips.txt as skipped with their reason, and the tests
that MXNet 1.9.1 itself does not pass here (conformance/mxnet_baseline.json) as skipped with the
reason "outside the target", so that the run's outcomes are exactly the target's. The tests in
conformance/slow_tests.txt (slow on MXNet itself) are skipped too, unless NEOGLUON_CONFORMANCE_ALL
is 1 (``make conformance-all``, ``run.py --all``)."""
from __future__ import annotations

import json
import os

import pytest

from suite import ROOT

# MXNet 1.9.1's tests were written for NumPy 1.x; NumPy 2 removed some spellings they use
# (test_ndarray uses np.NaN). The conformance run is about neogluon, not about NumPy's renames,
# so the harness puts the old names back for the tests' own code. neogluon is not affected.
_NUMPY1_ALIASES = {"NaN": "nan", "Inf": "inf", "PINF": "inf", "infty": "inf", "NAN": "nan",
                   "float_": "float64", "complex_": "complex128", "string_": "bytes_",
                   "unicode_": "str_"}


def _restore_numpy1_names():
    import numpy as np
    for old, new in _NUMPY1_ALIASES.items():
        if not hasattr(np, old):
            setattr(np, old, getattr(np, new))
    if not hasattr(np, "NINF"):
        np.NINF = -np.inf


def _test_context():
    """NEOGLUON_TEST_CONTEXT=gpu (run.py --ctx gpu): run on mx.gpu(0) by default, as MXNet's
    own GPU suite (tests/python/gpu) runs the unit tests."""
    if os.environ.get("NEOGLUON_TEST_CONTEXT", "").strip().lower() != "gpu":
        return None
    import mxnet as mx
    return mx.gpu(0)


def pytest_configure(config):
    _restore_numpy1_names()
    ctx = _test_context()
    if ctx is not None:
        import mxnet as mx
        mx.test_utils.set_default_context(ctx)


def pytest_runtest_setup(item):
    ctx = _test_context()
    if ctx is not None:
        import mxnet as mx
        mx.test_utils.set_default_context(ctx)


def load_skips(path=None) -> dict:
    """{test id or file.py::name prefix: reason} from skips.txt (``ID  # reason`` a line)."""
    path = path or os.path.join(ROOT, "conformance", "skips.txt")
    skips = {}
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            test_id, sep, reason = line.partition("#")
            test_id, reason = test_id.strip(), reason.strip()
            if not sep or not reason:
                raise ValueError(f"{path}:{lineno}: every skip needs a '# reason'")
            skips[test_id] = reason
    return skips


SLOW_ENV = "NEOGLUON_CONFORMANCE_ALL"


def load_slow(path=None) -> dict:
    """{test id: seconds MXNet 1.9.1 took} from slow_tests.txt (``ID  # N s`` a line)."""
    path = path or os.path.join(ROOT, "conformance", "slow_tests.txt")
    if not os.path.exists(path):
        return {}
    slow = {}
    for test_id, note in load_skips(path).items():
        seconds = note.split()[0]
        try:
            slow[test_id] = float(seconds)
        except ValueError:
            raise ValueError(f"{path}: {test_id}: the note must start with the seconds MXNet "
                             f"took (e.g. '# 75 s'), got {note!r}") from None
    return slow


def slow_reason(test_id: str, slow: dict):
    """The skip reason of a test in the slow list, or None (also when the list is run)."""
    if os.environ.get(SLOW_ENV, "") == "1":
        return None
    seconds = skip_reason(test_id, slow)
    if seconds is None:
        return None
    return f"slow on MXNet itself ({seconds:.0f} s): make conformance-all"


def load_baseline() -> dict:
    with open(os.path.join(ROOT, "conformance", "mxnet_baseline.json")) as f:
        return json.load(f)


def test_id_of(item) -> str:
    """``file.py::name[param]``; a test of MXNet's train/ folder as ``train/file.py::...``."""
    path = str(item.path)
    file_name = os.path.basename(path)
    if os.path.basename(os.path.dirname(path)) == "train":
        file_name = "train/" + file_name
    parts = item.nodeid.split("::")[1:]
    return "::".join([file_name] + parts)


def skip_reason(test_id: str, skips: dict):
    if test_id in skips:
        return skips[test_id]
    base = test_id.split("[")[0]
    return skips.get(base)


def pytest_collection_modifyitems(config, items):
    skips = load_skips()
    slow = load_slow()
    baseline = load_baseline()
    for item in items:
        test_id = test_id_of(item)
        file_name = test_id.split("::")[0]
        reason = skip_reason(test_id, skips)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"neogluon skip: {reason}"))
            continue
        reason = slow_reason(test_id, slow)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=reason))
            continue
        passed_on_mxnet = set(baseline.get(file_name, {}).get("passed", ()))
        if test_id not in passed_on_mxnet:
            item.add_marker(pytest.mark.skip(reason="outside the target: fails or skips on "
                                                    "MXNet 1.9.1 here"))
