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


def test_selfatt_nodes_compute_the_interleaved_matmuls():
    import numpy as np
    want = EXPECTED["selfatt"]
    rng = np.random.RandomState(0)
    qkv = mx.nd.array(rng.randn(4, 2, 3 * 2 * 5))
    qk = mx.nd._internal._sg_mkldnn_selfatt_qk(qkv, heads=2)
    assert _close(want["qk"], qk.asnumpy().tolist())
    val = mx.nd._internal._sg_mkldnn_selfatt_valatt(qkv, mx.nd.softmax(qk, axis=-1), heads=2)
    assert _close(want["valatt"], val.asnumpy().tolist())
    x, att = mx.sym.var("x"), mx.sym.var("att")
    s = mx.sym._internal._sg_mkldnn_selfatt_valatt(
        x, mx.sym.softmax(mx.sym._internal._sg_mkldnn_selfatt_qk(x, heads=2), axis=-1),
        heads=2)
    assert s.infer_shape(x=(4, 2, 30))[1] == [(4, 2, 10)]
    assert _close(want["valatt"], s.eval(x=qkv)[0].asnumpy().tolist())
    with pytest.raises(mx.base.MXNetError, match="int8"):
        mx.nd._internal._sg_mkldnn_selfatt_qk(qkv, heads=2, quantized=True)


@pytest.mark.parametrize("name,public", [("_foreach", "foreach"), ("_while_loop", "while_loop"),
                                         ("_cond", "cond")])
def test_control_flow_nodes_point_to_contrib(name, public):
    with pytest.raises(mx.base.MXNetError, match=f"contrib.{public}"):
        getattr(mx.nd._internal, name)(mx.nd.ones(2), num_outputs=1)


def test_imdecode():
    """MXNet 1.9.1's nd.imdecode fails on every call on Python 3 (the fixture records it);
    neogluon's does what the operator documents: (c, h, w) float32 in OpenCV's BGR order,
    clip_rect (x0, y0, x1, y1), mean subtracted, written at out[index]."""
    import numpy as np
    assert EXPECTED["imdecode"]["result"] == "MXNetError"
    img = gen._images(1)[0]                      # (40, 50, 3) RGB
    buf = gen._png(img)
    bgr_chw = img[:, :, ::-1].transpose(2, 0, 1).astype(np.float32)
    r = mx.nd.imdecode(buf)
    assert r.shape == (3, 40, 50) and r.dtype == np.float32
    np.testing.assert_array_equal(r.asnumpy(), bgr_chw)
    r = mx.nd.imdecode(buf, clip_rect=(5, 2, 25, 12))
    np.testing.assert_array_equal(r.asnumpy(), bgr_chw[:, 2:12, 5:25])
    mean = mx.nd.ones((3, 10, 20)) * 7
    r = mx.nd.imdecode(buf, clip_rect=(5, 2, 25, 12), mean=mean)
    np.testing.assert_allclose(r.asnumpy(), bgr_chw[:, 2:12, 5:25] - 7)
    out = mx.nd.zeros((2, 3, 40, 50))
    assert mx.nd.imdecode(buf, out=out, index=1) is out
    np.testing.assert_array_equal(out.asnumpy()[1], bgr_chw)
    assert not out.asnumpy()[0].any()
    gray = mx.nd.imdecode(buf, channels=1)
    assert gray.shape == (1, 40, 50)
    from mxnet.ndarray.ndarray import imdecode
    assert imdecode is mx.nd.imdecode
    with pytest.raises(mx.base.MXNetError):
        mx.nd.imdecode(buf, clip_rect=(0, 0, 60, 10))
    with pytest.raises(mx.base.MXNetError):
        mx.nd.imdecode(buf, out=mx.nd.zeros((3, 4, 4)))


def test_internal_ops_errors():
    w = mx.nd.ones((2,))
    with pytest.raises(mx.base.MXNetError, match="input arrays"):
        mx.nd._internal._multi_adamw_update(w, w, w, w, w, mx.nd.ones(1), lrs=(1,), wds=(0,),
                                            etas=(1,), num_weights=1)
    with pytest.raises(mx.base.MXNetError, match="lr"):
        mx.nd._internal._adamw_update(w, w, w, w, mx.nd.ones(1), eta=1.0)
    with pytest.raises(mx.base.MXNetError, match="shape"):
        mx.nd._internal._scatter_set_nd(lhs=w, rhs=w, indices=mx.nd.array([[0, 1]]), out=w)
