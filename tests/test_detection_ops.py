"""nd.contrib's detection operators (box_nms, box_iou, box_encode/decode, bipartite_matching,
MultiBoxPrior/Target/Detection, ROIAlign) and nd.ROIPooling against MXNet 1.9.1 fixtures
(tools/gen_detection_ops_fixtures.py): outputs and, for the differentiable ones, gradients."""
import json
import os

import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "detection_ops")
with open(os.path.join(HERE, "cases.json")) as _f:
    CASES = json.load(_f)
DATA = np.load(os.path.join(HERE, "cases.npz"))

# Outputs that hold indices, ids, masks or -1 fillers are compared exactly.
EXACT = {"contrib.bipartite_matching", "contrib.MultiBoxPrior"}


def _case(name):
    return next(c for c in CASES if c["name"] == name)


def _fn(op):
    f = mx.nd
    for p in op.split("."):
        f = getattr(f, p)
    return f


def _run(case):
    ins = [mx.nd.array(DATA[k], dtype=DATA[k].dtype) for k in case["inputs"]]
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}
    if case["grad"]:
        for a in ins:
            a.attach_grad()
        with mx.autograd.record():
            res = _fn(case["op"])(*ins, **kw)
        outs = res if isinstance(res, (list, tuple)) else [res]
        heads = [mx.nd.array(DATA[f"{case['name']}/head{j}"]) for j in range(len(outs))]
        mx.autograd.backward(outs, heads)
    else:
        res = _fn(case["op"])(*ins, **kw)
        outs = res if isinstance(res, (list, tuple)) else [res]
    return ins, outs


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_against_mxnet(case):
    ins, outs = _run(case)
    assert len(outs) == case["n_out"]
    for j, o in enumerate(outs):
        want = DATA[f"{case['name']}/out{j}"]
        got = o.asnumpy()
        assert got.shape == want.shape and got.dtype == want.dtype, (j, got.shape, want.shape)
        if case["op"] in EXACT:
            np.testing.assert_array_equal(got, want)
        else:
            # the -1 filler rows / ignore labels and the positions of kept rows are exact
            np.testing.assert_array_equal(got == -1, want == -1)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    if case["grad"]:
        for i, a in enumerate(ins):
            np.testing.assert_allclose(a.grad.asnumpy(), DATA[f"{case['name']}/grad{i}"],
                                       rtol=1e-5, atol=1e-6)


def test_box_nms_manual_case():
    # MXNet's own test case: compacted rows, -1 filler, grads to the kept rows
    boxes = mx.nd.array([[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],
                         [0, 0.3, 0.1, 0.1, 0.14, 0.14], [2, 0.6, 0.5, 0.5, 0.7, 0.8]])
    boxes.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.box_nms(boxes, overlap_thresh=0.1, id_index=0, force_suppress=True)
    g = np.arange(24, dtype="f").reshape(4, 6)
    out.backward(mx.nd.array(g))
    np.testing.assert_allclose(out.asnumpy(), [[2, 0.6, 0.5, 0.5, 0.7, 0.8],
                                               [0, 0.5, 0.1, 0.1, 0.2, 0.2],
                                               [-1] * 6, [-1] * 6], rtol=1e-6)
    want = np.zeros((4, 6), "f")
    want[3], want[0] = g[0], g[1]
    np.testing.assert_array_equal(boxes.grad.asnumpy(), want)


def test_symbolic_box_nms_and_roialign():
    d = DATA[_case("nms_ids")["inputs"][0]]
    s = mx.sym.contrib.box_nms(mx.sym.var("data"), id_index=0)
    got = s.eval(data=mx.nd.array(d))[0].asnumpy()
    np.testing.assert_allclose(got, DATA["nms_ids/out0"], rtol=1e-6)
    r = mx.sym.contrib.ROIAlign(mx.sym.var("x"), mx.sym.var("r"), pooled_size=(3, 3),
                                spatial_scale=0.5)
    got = r.eval(x=mx.nd.array(DATA[_case("ra_default")["inputs"][0]]),
                 r=mx.nd.array(DATA[_case("ra_default")["inputs"][1]]))
    np.testing.assert_allclose(got[0].asnumpy(), DATA["ra_default/out0"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call, words", [
    (lambda: mx.nd.contrib.box_nms(mx.nd.zeros((2, 4, 4))), ["box_nms", "width"]),
    (lambda: mx.nd.contrib.box_nms(mx.nd.zeros((4, 6)), in_format="xywh"),
     ["box_nms", "in_format"]),
    (lambda: mx.nd.contrib.box_nms(mx.nd.zeros((4, 6)), score_index=3),
     ["box_nms", "score_index"]),
    (lambda: mx.nd.contrib.box_nms(mx.nd.zeros((4, 6)), id_index=1), ["box_nms", "id_index"]),
    (lambda: mx.nd.contrib.box_iou(mx.nd.zeros((3, 5)), mx.nd.zeros((2, 4))),
     ["box_iou", "lhs"]),
    (lambda: mx.nd.contrib.box_iou(mx.nd.zeros((3, 4)), mx.nd.zeros((2, 4)), format="ltrb"),
     ["box_iou", "format"]),
    (lambda: mx.nd.contrib.bipartite_matching(mx.nd.zeros((3, 4))),
     ["bipartite_matching", "threshold"]),
    (lambda: mx.nd.contrib.box_decode(mx.nd.zeros((1, 3, 4)), mx.nd.zeros((1, 3, 4)),
                                      format="bad"), ["box_decode", "format"]),
    (lambda: mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 4, 4))), ["MultiBoxPrior", "data"]),
    (lambda: mx.nd.contrib.ROIAlign(mx.nd.zeros((1, 2, 4, 4)), mx.nd.zeros((3, 4)),
                                    pooled_size=(2, 2), spatial_scale=1.0),
     ["ROIAlign", "rois"]),
    (lambda: mx.nd.ROIPooling(mx.nd.zeros((1, 2, 4, 4)), mx.nd.zeros((3, 5)),
                              spatial_scale=1.0), ["ROIPooling", "pooled_size"]),
    (lambda: mx.nd.contrib.ROIAlign(mx.nd.zeros((1, 6, 4, 4)), mx.nd.zeros((3, 5)),
                                    pooled_size=(2, 2), spatial_scale=1.0,
                                    position_sensitive=True), ["ROIAlign", "channels"]),
    (lambda: mx.nd.contrib.ROIAlign(mx.nd.zeros((1, 1, 5, 5)),
                                    mx.nd.array([[0, 1, 1, 3, 3], [0, 2.5, 2.5, 2.5, 4]]),
                                    pooled_size=(2, 2), spatial_scale=1.0, aligned=True),
     ["ROIAlign", "roi 1", "aligned"]),
    (lambda: mx.nd.contrib.MultiBoxDetection(mx.nd.zeros((1, 3, 5)), mx.nd.zeros((1, 16)),
                                             mx.nd.zeros((1, 5, 4))),
     ["MultiBoxDetection", "loc_pred"]),
])
def test_bad_input_names_op_and_argument(call, words):
    with pytest.raises(MXNetError) as e:
        call()
    for w in words:
        assert w in str(e.value)


def test_symbolic_multi_output_and_hybridized_grads():
    s = mx.sym.contrib.bipartite_matching(mx.sym.var("x"), threshold=0.3)
    assert len(s.list_outputs()) == 2
    got = s.eval(x=mx.nd.array(DATA[_case("bm_desc")["inputs"][0]]))
    for j in range(2):
        np.testing.assert_array_equal(got[j].asnumpy(), DATA[f"bm_desc/out{j}"])
    t = mx.sym.contrib.MultiBoxTarget(mx.sym.var("a"), mx.sym.var("l"), mx.sym.var("c"))
    assert len(t.list_outputs()) == 3
    p = mx.sym.contrib.Proposal(mx.sym.var("c"), mx.sym.var("b"), mx.sym.var("i"),
                                output_score=True)
    assert len(p.list_outputs()) == 2

    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x, rois):
            return F.contrib.ROIAlign(x, rois, pooled_size=(3, 3), spatial_scale=0.5)

    case = next(c for c in CASES if c["name"] == "ra_default")
    net = Net()
    net.hybridize()
    x = mx.nd.array(DATA[case["inputs"][0]])
    x.attach_grad()
    with mx.autograd.record():
        y = net(x, mx.nd.array(DATA[case["inputs"][1]]))
    y.backward(mx.nd.array(DATA["ra_default/head0"]))
    assert case["grad"]
    np.testing.assert_allclose(y.asnumpy(), DATA["ra_default/out0"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), DATA["ra_default/grad0"], rtol=1e-5, atol=1e-6)


def test_mxnet_symbol_file_with_detection_ops():
    # a graph MXNet 1.9.1 wrote (box_nms, ROIAlign, ROIPooling, MultiBoxPrior, box_iou,
    # bipartite_matching's second output) loads and evaluates to MXNet's outputs
    with open(os.path.join(HERE, "symbol.json")) as f:
        sym = mx.sym.load_json(f.read())
    ins = {k: mx.nd.array(DATA[f"symbol/in/{k}"]) for k in ("data", "x", "rois")}
    outs = sym.eval(**ins)
    assert len(outs) == 5
    for j, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), DATA[f"symbol/out{j}"], rtol=1e-5, atol=1e-6)


def test_box_nms_drops_the_background_id_even_when_negative():
    # MXNet 1.9.1: with id_index >= 0, rows whose id equals background_id (default -1) go
    d = mx.nd.array([[[0, 0.9, 0, 0, 10, 10], [-1, 0.95, 0, 0, 1, 1], [0, 0.3, 20, 20, 30, 30],
                      [-2, 0.8, 50, 50, 60, 60], [1, 0.7, 70, 70, 80, 80]]])
    kw = dict(overlap_thresh=0.5, coord_start=2, score_index=1, id_index=0)
    ids = lambda r: r.asnumpy()[0, :, 0].tolist()     # noqa: E731
    assert ids(mx.nd.contrib.box_nms(d, **kw)) == [0, -2, 1, 0, -1]
    assert ids(mx.nd.contrib.box_nms(d, background_id=-2, **kw)) == [-1, 0, 1, 0, -1]
    assert ids(mx.nd.contrib.box_nms(d, background_id=0, **kw)) == [-1, -2, 1, -1, -1]
    assert ids(mx.nd.contrib.box_nms(d, overlap_thresh=0.5, coord_start=2, score_index=1,
                                     id_index=-1)) == [-1, 0, -2, 1, 0]
