"""nn layers against MXNet 1.9.1: names, shapes, outputs and gradients given the same weights."""
import json
import os

import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, nd
from neogluon.gluon import nn

from gluon_fixture_utils import det, fixture_json, fixture_path, reset_names

LAYERS = [
    ("dense", lambda: nn.Dense(5, activation="tanh"), (3, 4, 2)),
    ("dense_noflat", lambda: nn.Dense(5, flatten=False, use_bias=False), (3, 4, 2)),
    ("conv1d", lambda: nn.Conv1D(4, 3, strides=2, padding=1), (2, 3, 9)),
    ("conv2d", lambda: nn.Conv2D(4, (3, 2), strides=(1, 2), padding=(1, 0), dilation=(2, 1),
                                 activation="relu"), (2, 3, 7, 6)),
    ("conv2d_groups", lambda: nn.Conv2D(4, 3, groups=2, use_bias=False), (2, 4, 5, 5)),
    ("conv3d", lambda: nn.Conv3D(2, 2), (1, 2, 4, 4, 4)),
    ("conv1d_t", lambda: nn.Conv1DTranspose(3, 3, strides=2, padding=1, output_padding=1),
     (2, 2, 5)),
    ("conv2d_t", lambda: nn.Conv2DTranspose(3, 3, strides=2, padding=1), (2, 4, 4, 4)),
    ("conv3d_t", lambda: nn.Conv3DTranspose(2, 2), (1, 2, 3, 3, 3)),
    ("maxpool1d", lambda: nn.MaxPool1D(3, 2, 1), (2, 3, 9)),
    ("maxpool2d", lambda: nn.MaxPool2D(), (2, 3, 6, 6)),
    ("maxpool2d_ceil", lambda: nn.MaxPool2D(3, 2, ceil_mode=True), (2, 3, 8, 8)),
    ("maxpool3d", lambda: nn.MaxPool3D(2), (1, 2, 4, 4, 4)),
    ("avgpool1d", lambda: nn.AvgPool1D(2), (2, 3, 8)),
    ("avgpool2d", lambda: nn.AvgPool2D(3, 1, 1, count_include_pad=False), (2, 3, 5, 5)),
    ("avgpool2d_pad", lambda: nn.AvgPool2D(3, 2, 1), (2, 3, 6, 6)),
    ("avgpool3d", lambda: nn.AvgPool3D(2), (1, 2, 4, 4, 4)),
    ("gmaxpool1d", lambda: nn.GlobalMaxPool1D(), (2, 3, 5)),
    ("gmaxpool2d", lambda: nn.GlobalMaxPool2D(), (2, 3, 5, 4)),
    ("gmaxpool3d", lambda: nn.GlobalMaxPool3D(), (1, 2, 3, 3, 3)),
    ("gavgpool1d", lambda: nn.GlobalAvgPool1D(), (2, 3, 5)),
    ("gavgpool2d", lambda: nn.GlobalAvgPool2D(), (2, 3, 5, 4)),
    ("gavgpool3d", lambda: nn.GlobalAvgPool3D(), (1, 2, 3, 3, 3)),
    ("batchnorm", lambda: nn.BatchNorm(), (4, 3, 2, 2)),
    ("batchnorm_axis", lambda: nn.BatchNorm(axis=-1, momentum=0.5, scale=False), (4, 2, 3)),
    ("layernorm", lambda: nn.LayerNorm(), (3, 4, 5)),
    ("layernorm_axis", lambda: nn.LayerNorm(axis=1, epsilon=1e-3), (3, 4, 5)),
    ("instancenorm", lambda: nn.InstanceNorm(scale=True), (2, 3, 4, 4)),
    ("groupnorm", lambda: nn.GroupNorm(num_groups=2), (2, 4, 3, 3)),
    ("embedding", lambda: nn.Embedding(10, 4), None),
    ("flatten", lambda: nn.Flatten(), (2, 3, 4)),
    ("leakyrelu", lambda: nn.LeakyReLU(0.1), (3, 4)),
    ("prelu", lambda: nn.PReLU(), (3, 4)),
    ("prelu_ch", lambda: nn.PReLU(in_channels=3), (2, 3, 4)),
    ("elu", lambda: nn.ELU(0.7), (3, 4)),
    ("selu", lambda: nn.SELU(), (3, 4)),
    ("gelu", lambda: nn.GELU(), (3, 4)),
    ("swish", lambda: nn.Swish(1.5), (3, 4)),
    ("activation_sigmoid", lambda: nn.Activation("sigmoid"), (3, 4)),
    ("activation_softrelu", lambda: nn.Activation("softrelu"), (3, 4)),
    ("reflectionpad", lambda: nn.ReflectionPad2D(2), (1, 2, 4, 5)),
    ("dropout0", lambda: nn.Dropout(0.0), (3, 4)),
    ("hybridlambda", lambda: nn.HybridLambda(lambda F, x: F.LeakyReLU(x, slope=0.1)), (3, 4)),
]

META = fixture_json()["layers"]
ARR = np.load(fixture_path("layers.npz"))


def _run_layer(idx, name, make, shape, hybridize):
    reset_names()
    blk = make()
    blk.initialize()
    if shape is None:
        x = nd.array(np.array([[1, 3, 9], [0, 2, 2]], dtype=np.float32))
    else:
        x = nd.array(det(shape, idx))
    with autograd.predict_mode():
        blk(x)
    params = list(blk.collect_params().items())
    assert [[k, list(p.shape), p.grad_req] for k, p in params] == META[name]["params"]
    assert blk.name == META[name]["name"]
    assert repr(blk) == META[name]["repr"]
    for j, (pn, p) in enumerate(params):
        if p.grad_req != "null" or "running" in pn:
            v = det(p.shape, 100 + idx * 10 + j)
            if "running_var" in pn:
                v = np.abs(v) + 0.5
            p.set_data(nd.array(v))
        np.testing.assert_array_equal(p.data().asnumpy(), ARR[f"{name}|param|{pn}"])
    if hybridize:
        blk.hybridize()
    if shape is not None:
        x.attach_grad()
    with autograd.record():
        y = blk(x)
        head = nd.array(det(y.shape, 7 + idx))
        loss = (y * head).sum()
    loss.backward()
    tol = dict(rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(y.asnumpy(), ARR[f"{name}|y"], **tol)
    if shape is not None:
        np.testing.assert_allclose(x.grad.asnumpy(), ARR[f"{name}|dx"], **tol)
    for pn, p in params:
        if p.grad_req != "null":
            np.testing.assert_allclose(p.grad().asnumpy(), ARR[f"{name}|grad|{pn}"], **tol)
        if "running" in pn:
            np.testing.assert_allclose(p.data().asnumpy(), ARR[f"{name}|after|{pn}"], **tol)
    with autograd.predict_mode():
        np.testing.assert_allclose(blk(x).asnumpy(), ARR[f"{name}|y_pred"], **tol)


# MXNet 1.9.1's SELU backward computes lambda * (y + alpha) for negative inputs (instead of
# y + lambda * alpha); nd.LeakyReLU uses the exact derivative, so dx differs there.
_XFAIL = {"selu": pytest.mark.xfail(reason="MXNet's SELU gradient formula differs from the "
                                    "exact one nd.LeakyReLU uses", strict=True)}


@pytest.mark.parametrize("idx", [pytest.param(i, marks=_XFAIL.get(n, ()), id=n)
                                 for i, (n, _, _) in enumerate(LAYERS)])
def test_layer_matches_mxnet(idx):
    name, make, shape = LAYERS[idx]
    _run_layer(idx, name, make, shape, hybridize=False)


@pytest.mark.parametrize("idx", [0, 3, 7, 12, 23, 25, 28, 33], ids=lambda i: LAYERS[i][0])
def test_layer_hybridized_matches_mxnet(idx):
    name, make, shape = LAYERS[idx]
    _run_layer(idx, name, make, shape, hybridize=True)


def test_in_units_inferred_and_given_agree():
    a = nn.Dense(3)
    b = nn.Dense(3, in_units=8)
    a.initialize()
    b.initialize()
    x = nd.ones((2, 2, 4))
    a(x)
    assert a.weight.shape == b.weight.shape == (3, 8)
    c = nn.Conv2D(4, 3)
    c.initialize()
    c(nd.ones((1, 5, 6, 6)))
    assert c.weight.shape == (4, 5, 3, 3)
    t = nn.Conv2DTranspose(4, 3, groups=2)
    t.initialize()
    t(nd.ones((1, 6, 5, 5)))
    assert t.weight.shape == (6, 2, 3, 3)


def test_batchnorm_running_stats_train_vs_inference():
    bn = nn.BatchNorm(in_channels=2, momentum=0.9)
    bn.initialize()
    x = nd.array(np.arange(16, dtype=np.float32).reshape(4, 2, 2, 1))
    with autograd.predict_mode():
        y0 = bn(x).asnumpy()
    # inference with fresh stats (mean 0, var 1) is x / sqrt(1 + eps)
    np.testing.assert_allclose(y0, x.asnumpy() / np.sqrt(1 + 1e-5), rtol=1e-5)
    with autograd.record():
        y = bn(x)
    y.backward()
    xm = x.asnumpy().transpose(1, 0, 2, 3).reshape(2, -1)
    np.testing.assert_allclose(bn.running_mean.data().asnumpy(), 0.1 * xm.mean(1), rtol=1e-5)
    np.testing.assert_allclose(bn.running_var.data().asnumpy(), 0.9 + 0.1 * xm.var(1),
                               rtol=1e-5)


def test_dropout_training_and_inference():
    d = nn.Dropout(0.5)
    x = nd.ones((100, 100))
    with autograd.predict_mode():
        np.testing.assert_array_equal(d(x).asnumpy(), x.asnumpy())
    with autograd.record():
        y = d(x).asnumpy()
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert 0.4 < (y == 0).mean() < 0.6


def test_embedding_sparse_grad_param():
    e = nn.Embedding(10, 3, sparse_grad=True)
    assert e.weight._grad_stype == "row_sparse"


def test_lambda_and_identity():
    lam = nn.Lambda("tanh")
    x = nd.array([[0.5, -1.0]])
    np.testing.assert_allclose(lam(x).asnumpy(), np.tanh(x.asnumpy()), rtol=1e-6)
    with pytest.raises(AssertionError, match="not found in ndarray"):
        nn.Lambda("no_such_op")
    with pytest.raises(ValueError, match="Unrecognized function"):
        nn.HybridLambda(3)
    hl = nn.HybridLambda("relu")
    np.testing.assert_array_equal(hl(x).asnumpy(), np.maximum(x.asnumpy(), 0))
    assert repr(lam) == "Lambda(tanh)"
    np.testing.assert_array_equal(nn.Identity()(x).asnumpy(), x.asnumpy())


def test_pool_layout_error():
    with pytest.raises(AssertionError, match="layouts are valid"):
        nn.MaxPool2D(layout="NCW")


def test_batchnorm_relu_matches_mxnet():
    with open(os.path.join(os.path.dirname(__file__), "fixtures", "gluon", "extra.json")) as f:
        ref = json.load(f)["bn_relu"]
    with mx.name.NameManager():
        b = nn.BatchNormReLU(in_channels=2, momentum=0.8)
    assert b.name == ref["name"] and repr(b) == ref["repr"]
    assert list(b.collect_params().keys()) == ref["params"]
    b.initialize()
    x = nd.array(ref["x"])
    with autograd.record():
        y = b(x)
    y.backward(nd.array(np.arange(8, dtype=np.float32).reshape((4, 2, 1, 1))))
    for got, key in ((y, "y"), (b.gamma.grad(), "gamma_grad"), (b.beta.grad(), "beta_grad"),
                     (b.running_mean.data(), "running_mean"),
                     (b.running_var.data(), "running_var"), (b(x), "predict")):
        np.testing.assert_allclose(got.asnumpy(), np.array(ref[key], np.float32), rtol=1e-5,
                                   atol=1e-6, err_msg=key)
