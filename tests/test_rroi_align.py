"""contrib.RROIAlign (rotated ROI align) against MXNet 1.9.1's CPU numbers
(tests/fixtures/rroi_align, from tools/gen_rroi_align_fixtures.py): equal to the bit."""
import json
import os

import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError

DATA = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "rroi_align", "cases.npz"))
NAMES = sorted({k.split("/")[0] for k in DATA.files})


def _attrs(name):
    a = json.loads(str(DATA[f"{name}/attrs"]))
    return {k: tuple(v) if isinstance(v, list) else v for k, v in a.items()}


@pytest.mark.parametrize("name", NAMES)
def test_against_mxnet(name):
    d, r = DATA[f"{name}/data"], DATA[f"{name}/rois"]
    out = mx.nd.contrib.RROIAlign(mx.nd.array(d, dtype=d.dtype), mx.nd.array(r, dtype=r.dtype),
                                  **_attrs(name)).asnumpy()
    want = DATA[f"{name}/out"]
    assert out.dtype == want.dtype
    np.testing.assert_array_equal(out, want)


def test_symbol_form():
    name = "adaptive"
    d, r = DATA[f"{name}/data"], DATA[f"{name}/rois"]
    s = mx.sym.contrib.RROIAlign(mx.sym.var("data"), mx.sym.var("rois"), name="rr",
                                 **_attrs(name))
    assert s.list_arguments() == ["data", "rois"]
    assert s.list_outputs() == ["rr_output"]
    _, out_shapes, _ = s.infer_shape(data=d.shape, rois=r.shape)
    assert out_shapes == [(r.shape[0], d.shape[1], 3, 4)]
    ex = s.bind(mx.cpu(), {"data": mx.nd.array(d), "rois": mx.nd.array(r)})
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), DATA[f"{name}/out"])


def test_errors():
    d = mx.nd.zeros((1, 2, 4, 4))
    with pytest.raises(MXNetError, match="rois should be a 2D tensor"):
        mx.nd.contrib.RROIAlign(d, mx.nd.zeros((2, 5)), pooled_size=(2, 2), spatial_scale=1.0)
    with pytest.raises(MXNetError, match="data should be a 4D tensor"):
        mx.nd.contrib.RROIAlign(mx.nd.zeros((2, 4, 4)), mx.nd.zeros((1, 6)),
                                pooled_size=(2, 2), spatial_scale=1.0)
    with pytest.raises(MXNetError, match="batch index"):
        mx.nd.contrib.RROIAlign(d, mx.nd.array([[3, 1, 1, 2, 2, 0]]), pooled_size=(2, 2),
                                spatial_scale=1.0)
