"""pytest plugin loaded into each conformance run (``-p neogluon_conformance_plugin``).

It marks the tests listed in conformance/skips.txt as skipped with their reason, and the tests
that MXNet 1.9.1 itself does not pass here (conformance/mxnet_baseline.json) as skipped with the
reason "outside the target", so that the run's outcomes are exactly the target's."""
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


def load_baseline() -> dict:
    with open(os.path.join(ROOT, "conformance", "mxnet_baseline.json")) as f:
        return json.load(f)


def test_id_of(item) -> str:
    file_name = os.path.basename(str(item.path))
    parts = item.nodeid.split("::")[1:]
    return "::".join([file_name] + parts)


def skip_reason(test_id: str, skips: dict):
    if test_id in skips:
        return skips[test_id]
    base = test_id.split("[")[0]
    return skips.get(base)


def pytest_collection_modifyitems(config, items):
    skips = load_skips()
    baseline = load_baseline()
    for item in items:
        test_id = test_id_of(item)
        file_name = test_id.split("::")[0]
        reason = skip_reason(test_id, skips)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"neogluon skip: {reason}"))
            continue
        passed_on_mxnet = set(baseline.get(file_name, {}).get("passed", ()))
        if test_id not in passed_on_mxnet:
            item.add_marker(pytest.mark.skip(reason="outside the target: fails or skips on "
                                                    "MXNet 1.9.1 here"))
