"""The last names of MXNet 1.9.1's surface (issue 31), against MXNet's results.

Numbers come from tests/fixtures/surface/tail.json, written on MXNet 1.9.1 by
tools/gen_surface_tail_fixtures.py; the same ``case_*`` functions run here through the alias.
"""
import json
import math
import os
import sys
import tempfile

import pytest

import neogluon.mxnet_alias  # noqa: F401
import mxnet as mx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import gen_surface_tail_fixtures as gen  # noqa: E402

with open(os.path.join(ROOT, "tests", "fixtures", "surface", "tail.json")) as _f:
    EXPECTED = json.load(_f)["results"]


def _close(a, b, tol=1e-5):
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_close(x, y, tol)
                                                                for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_close(a[k], b[k], tol)
                                                                    for k in a)
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        if math.isnan(a) and math.isnan(b):
            return True
        return math.isclose(a, b, rel_tol=tol, abs_tol=tol)
    return a == b


@pytest.mark.parametrize("case", gen.CASES, ids=lambda c: c.__name__[5:])
def test_matches_mxnet(case):
    with tempfile.TemporaryDirectory() as folder:
        got = json.loads(json.dumps(case(mx, folder)))
    want = EXPECTED[case.__name__[5:]]
    if isinstance(want, dict):
        for key in want:
            assert _close(want[key], got.get(key)), (key, want[key], got.get(key))
    assert _close(want, got)


def test_module_reexports():
    import mxnet.autograd as ag
    from mxnet.contrib.svrg_optimization import svrg_module, svrg_optimizer
    assert ag.NDArray is mx.nd.NDArray and ag.Symbol is mx.sym.Symbol
    assert ag.string_types == (str,)
    import neogluon
    assert svrg_module.mx is neogluon and svrg_optimizer.mx is neogluon
    assert svrg_module.mx.nd is mx.nd
    with pytest.raises(AttributeError):
        ag.no_such_name  # noqa: B018
