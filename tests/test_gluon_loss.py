"""gluon.loss: values and gradients against MXNet 1.9.1 (tools/gen_loss_fixtures.py)."""
import json
import os
import warnings

import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, gluon, nd
from neogluon.gluon import loss as gloss

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "loss")
with open(os.path.join(FIX, "loss.json")) as _f:
    META = json.load(_f)
ARR = np.load(os.path.join(FIX, "loss.npz"))
CASES = META["cases"]


def _tol(case):
    # torch's CTC and MXNet's warp-ctc sum the alignments in different orders.
    return (2e-5, 2e-5) if case["cls"] == "CTCLoss" else (1e-4, 1e-5)


def _run(case, hybridize):
    loss = getattr(gloss, case["cls"])(**case["kwargs"])
    if hybridize:
        loss.hybridize()
    name = case["name"]
    arrays = []
    for i, spec in enumerate(case["inputs"]):
        if spec is None:
            arrays.append(None)
            continue
        a = nd.array(ARR[f"{name}/in{i}"], dtype=ARR[f"{name}/in{i}"].dtype)
        if spec["grad"]:
            a.attach_grad()
        arrays.append(a)
    any_grad = any(s is not None and s["grad"] for s in case["inputs"])
    if any_grad:
        with autograd.record():
            out = loss(*arrays)
        head = ARR[f"{name}/head"]
        out.backward(nd.array(head, dtype=head.dtype))
    else:
        out = loss(*arrays)
    return out, arrays


@pytest.mark.parametrize("hybridize", [False, True], ids=["imperative", "hybridized"])
@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_loss_matches_mxnet(case, hybridize):
    rtol, atol = _tol(case)
    with warnings.catch_warnings():
        # a loss that hybridize could not capture would warn here
        warnings.simplefilter("error")
        out, arrays = _run(case, hybridize)
    name = case["name"]
    ref = ARR[f"{name}/out"]
    assert out.shape == ref.shape
    assert out.dtype == ref.dtype
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=rtol, atol=atol)
    for i, spec in enumerate(case["inputs"]):
        if spec is not None and spec["grad"]:
            want = ARR[f"{name}/grad{i}"]
            # float32 sums with cancellation: the absolute error scales with the largest entry
            scale = max(1.0, float(np.abs(want).max()))
            np.testing.assert_allclose(arrays[i].grad.asnumpy(), want, rtol=rtol,
                                       atol=atol * scale, err_msg=f"gradient of input {i}")


def test_hybridized_loss_replays_and_recaptures_on_new_shape():
    loss = gloss.SoftmaxCrossEntropyLoss()
    loss.hybridize()
    case = next(c for c in CASES if c["name"] == "sce_basic")
    ref = ARR["sce_basic/out"]
    for _ in range(2):  # the second call replays the captured graph
        out, _ = _run(case, hybridize=True)
        np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5)
    p = nd.array(ARR["sce_basic/in0"][:3])
    np.testing.assert_allclose(loss(p, nd.array(ARR["sce_basic/in1"][:3])).asnumpy(), ref[:3],
                               rtol=1e-5)


def test_repr_matches_mxnet():
    for key, ref in META["repr"].items():
        if key == "L1Loss_w":
            obj = gloss.L1Loss(weight=0.5, batch_axis=1)
        elif key == "CTCLoss_TN":
            obj = gloss.CTCLoss(label_layout="TN")
        else:
            obj = getattr(gloss, key)()
        assert repr(obj) == ref, key


def test_aliases_and_all():
    assert gloss.SigmoidBCELoss is gloss.SigmoidBinaryCrossEntropyLoss
    assert gloss.SoftmaxCELoss is gloss.SoftmaxCrossEntropyLoss
    assert gluon.loss.L2Loss is gloss.L2Loss
    assert isinstance(gloss.L2Loss(), gluon.HybridBlock)
    for name in gloss.__all__:
        assert hasattr(gloss, name)


def _check_err(key, fn, exc):
    ref = META["errors"][key]
    with pytest.raises(exc) as err:
        fn()
    return ref, str(err.value)


def test_errors_match_mxnet():
    ref, msg = _check_err("logistic_format", lambda: gloss.LogisticLoss(label_format="x"),
                          ValueError)
    assert msg == ref["message"]
    ref, msg = _check_err("ctc_layout", lambda: gloss.CTCLoss(layout="NCT"), AssertionError)
    assert msg == ref["message"]
    ref, msg = _check_err("ctc_label_layout", lambda: gloss.CTCLoss(label_layout="NN"),
                          AssertionError)
    assert msg == ref["message"]
    ref, msg = _check_err("weight_not_number",
                          lambda: gloss.L1Loss(weight="a")(nd.ones((2, 2)), nd.ones((2, 2))),
                          AssertionError)
    assert msg == ref["message"]
    ref, msg = _check_err("reshape_mismatch",
                          lambda: gloss.L2Loss()(nd.ones((3, 4)), nd.ones((4, 4))), ValueError)
    assert msg == ref["message"]
    ref, msg = _check_err("ctc_too_long",
                          lambda: gloss.CTCLoss()(nd.ones((2, 3, 4)), nd.ones((2, 5))),
                          mx.MXNetError)
    assert "The max number of labels cannot exceed the maximum sequence length" in ref["message"]
    assert "The max number of labels cannot exceed the maximum sequence length" in msg


def test_sparse_label_of_wrong_size_is_rejected():
    # MXNet: "Shape inconsistent, Provided = [3], inferred shape=[4]"
    for hybridize in (False, True):
        loss = gloss.SoftmaxCrossEntropyLoss()
        if hybridize:
            loss.hybridize()
        with pytest.raises(mx.MXNetError, match="Shape inconsistent.*\\(3,\\)"):
            loss(nd.ones((4, 5)), nd.ones((3,)))


def test_poisson_full_trains_under_record():
    """MXNet 1.9.1 cannot record compute_full (it updates in place); neogluon can, and the
    gradient is the analytic one: d/dpred of exp(pred) - target * pred."""
    pred = nd.array(ARR["poisson_full/in0"])
    target = nd.array(ARR["poisson_full/in1"])
    pred.attach_grad()
    with autograd.record():
        out = gloss.PoissonNLLLoss(compute_full=True, weight=2.0)(pred, target)
    out.backward()
    np.testing.assert_allclose(out.asnumpy(), ARR["poisson_full/out"], rtol=1e-5)
    expect = 2.0 * (np.exp(pred.asnumpy()) - target.asnumpy()) / pred.size
    np.testing.assert_allclose(pred.grad.asnumpy(), expect, rtol=1e-5)


def test_loss_no_graph_outside_record():
    pred = nd.array(ARR["L2Loss_basic/in0"])
    pred.attach_grad()
    out = gloss.L2Loss()(pred, nd.array(ARR["L2Loss_basic/in1"]))
    assert not nd.to_torch(out).requires_grad


@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs a CUDA GPU")
@pytest.mark.parametrize("name", ["sce_basic", "sce_3d_weighted", "bce_pos_weight", "ctc_ntc",
                                  "sdml_basic", "cos_margin"])
def test_loss_on_gpu_matches_mxnet(name):
    case = next(c for c in CASES if c["name"] == name)
    loss = getattr(gloss, case["cls"])(**case["kwargs"])
    ctx = mx.gpu(0)
    arrays = []
    for i, spec in enumerate(case["inputs"]):
        if spec is None:
            arrays.append(None)
            continue
        a = nd.array(ARR[f"{name}/in{i}"], ctx=ctx, dtype=ARR[f"{name}/in{i}"].dtype)
        if spec["grad"]:
            a.attach_grad()
        arrays.append(a)
    with autograd.record():
        out = loss(*arrays)
    out.backward(nd.array(ARR[f"{name}/head"], ctx=ctx))
    assert out.context == ctx
    np.testing.assert_allclose(out.asnumpy(), ARR[f"{name}/out"], rtol=1e-4, atol=1e-4)
    for i, spec in enumerate(case["inputs"]):
        if spec is not None and spec["grad"]:
            np.testing.assert_allclose(arrays[i].grad.asnumpy(), ARR[f"{name}/grad{i}"],
                                       rtol=1e-4, atol=1e-4)


def test_loss_inside_hybridized_block_is_captured():
    """A loss used inside a hybridized HybridBlock runs as F operators in the capture (no
    fallback warning) and gives the imperative numbers and gradients."""
    class Net(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.loss = gloss.SoftmaxCrossEntropyLoss()

        def hybrid_forward(self, F, x, y):
            return self.loss(x * 1.0, y)

    net = Net()
    net.hybridize()
    for _ in range(2):  # capture, then replay
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            pred = nd.array(ARR["sce_basic/in0"])
            pred.attach_grad()
            with autograd.record():
                out = net(pred, nd.array(ARR["sce_basic/in1"]))
            out.backward(nd.array(ARR["sce_basic/head"]))
        np.testing.assert_allclose(out.asnumpy(), ARR["sce_basic/out"], rtol=1e-5)
        np.testing.assert_allclose(pred.grad.asnumpy(), ARR["sce_basic/grad0"], rtol=1e-4,
                                   atol=1e-5)
    assert net._cached_graph


def test_cosine_embedding_loss_as_mxnet_test_computes_it():
    # MXNet's own check passes axis= to broadcast_maximum, which (parameterless, like every
    # elementwise binary operator) ignores keyword arguments it does not know.
    a = mx.nd.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])
    b = mx.nd.array([[2.0, 1.0], [1.0, 1.0], [-1.0, 2.0]])
    label = mx.nd.array([1, -1, -1])
    loss = mx.gluon.loss.CosineEmbeddingLoss()(a, b, label)
    num = mx.nd.sum(a * b, axis=1, keepdims=True)
    den = mx.nd.sqrt(mx.nd.sum(a ** 2, axis=1, keepdims=True)) * \
        mx.nd.sqrt(mx.nd.sum(b ** 2, axis=1, keepdims=True))
    ref = mx.nd.where(label == 1, 1 - num / den,
                      mx.nd.broadcast_maximum(mx.nd.array([0]), num / den, axis=1))
    assert loss.shape == (3, 1)  # as MXNet 1.9.1
    np.testing.assert_allclose(loss.asnumpy(), ref.asnumpy(), rtol=1e-5, atol=1e-6)
    assert mx.nd.elemwise_add(a, b, foo=1).shape == (3, 2)
