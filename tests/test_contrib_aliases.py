"""nd.contrib.BatchNormWithReLU, SparseEmbedding and CTCLoss/ctc_loss against MXNet 1.9.1
(tools/gen_contrib_alias_fixtures.py)."""
import os

import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, nd

FIX = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "contrib_alias",
                           "contrib_alias.npz"))


def _inputs():
    return tuple(FIX[f"in_{n}"] for n in ("x", "gamma", "beta", "head", "mean", "var"))


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("fix_gamma", [False, True])
def test_batchnorm_with_relu_matches_mxnet(train, fix_gamma):
    x, gamma, beta, head, mean, var = _inputs()
    tag = f"{'train' if train else 'predict'}_{'fix' if fix_gamma else 'free'}"
    a = [nd.array(v) for v in (x, gamma, beta)]
    for v in a:
        v.attach_grad()
    m, s = nd.array(mean), nd.array(var)
    with autograd.record(train_mode=train):
        y = nd.contrib.BatchNormWithReLU(*a, m, s, fix_gamma=fix_gamma, eps=1e-3, momentum=0.8)
    y.backward(nd.array(head))
    assert (y.asnumpy() >= 0).all()
    np.testing.assert_allclose(y.asnumpy(), FIX[tag + "_out"], rtol=1e-5, atol=1e-6)
    if train:
        for n, v in zip(("x", "gamma", "beta"), a):
            np.testing.assert_allclose(v.grad.asnumpy(), FIX[f"{tag}_grad_{n}"], rtol=1e-4,
                                       atol=1e-5, err_msg=n)
    else:
        # MXNet 1.9.1's fused operator gives predict-mode gradients that are neither
        # BatchNorm's nor relu(BatchNorm)'s (a bug of its oneDNN backward); neogluon gives
        # relu(BatchNorm)'s, computed here with the separate operators.
        b = [nd.array(v) for v in (x, gamma, beta)]
        for v in b:
            v.attach_grad()
        with autograd.record(train_mode=False):
            z = nd.relu(nd.BatchNorm(*b, nd.array(mean), nd.array(var), fix_gamma=fix_gamma,
                                     eps=1e-3, momentum=0.8))
        z.backward(nd.array(head))
        for n, v, w in zip(("x", "gamma", "beta"), a, b):
            np.testing.assert_allclose(v.grad.asnumpy(), w.grad.asnumpy(), rtol=1e-6,
                                       atol=1e-7, err_msg=n)
        mask = FIX[tag + "_out"] > 0
        assert 0 < mask.sum() < mask.size
        assert np.all(a[0].grad.asnumpy()[~mask] == 0)
    np.testing.assert_allclose(m.asnumpy(), FIX[tag + "_mean"], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(s.asnumpy(), FIX[tag + "_var"], rtol=1e-5, atol=1e-7)


def test_sparse_embedding_gives_a_row_sparse_gradient():
    w = nd.array(np.random.RandomState(4).randn(6, 3).astype("float32"))
    w.attach_grad(stype="row_sparse")
    idx = nd.array([[1, 4], [4, 0]])
    with autograd.record():
        e = nd.contrib.SparseEmbedding(idx, w, input_dim=6, output_dim=3)
    e.backward(nd.array(np.arange(12, dtype="float32").reshape(2, 2, 3)))
    np.testing.assert_array_equal(e.asnumpy(), FIX["emb_out"])
    assert w.grad.stype == str(FIX["emb_grad_stype"])
    np.testing.assert_array_equal(np.sort(w.grad.indices.asnumpy()), FIX["emb_grad_rows"])
    np.testing.assert_allclose(w.grad.asnumpy(), FIX["emb_grad"])


def test_contrib_ctc_loss_is_nd_ctc_loss():
    rs = np.random.RandomState(0)
    data = nd.array(rs.randn(6, 2, 5).astype("float32"))
    label = nd.array([[1, 2, 0], [3, 3, 4]])
    ref = nd.CTCLoss(data, label).asnumpy()
    np.testing.assert_array_equal(nd.contrib.CTCLoss(data, label).asnumpy(), ref)
    np.testing.assert_array_equal(nd.contrib.ctc_loss(data, label).asnumpy(), ref)
    assert mx.sym.contrib.BatchNormWithReLU is not None


V1 = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "contrib_alias",
                          "batchnorm_v1.npz"))


@pytest.mark.parametrize("train", [True, False])
def test_batchnorm_v1_graph_matches_mxnet(train):
    tag = "v1_train" if train else "v1_predict"
    sym = mx.sym.load_json(str(V1["v1_json"]))
    assert sym.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    blk = mx.gluon.SymbolBlock(sym, [mx.sym.var("data")])
    blk.collect_params().initialize()
    vals = {"bn_gamma": V1["v1_in_gamma"], "bn_beta": V1["v1_in_beta"],
            "bn_moving_mean": np.array([.5, 0, 0], "f"), "bn_moving_var": np.array([2, 1, 1], "f")}
    params = blk.collect_params()
    for k, v in vals.items():
        params[k].set_data(nd.array(v))
    x = nd.array(V1["v1_in_x"])
    x.attach_grad()
    with autograd.record(train_mode=train):
        y = blk(x)
    y.backward(nd.array(V1["v1_in_head"]))
    np.testing.assert_allclose(y.asnumpy(), V1[tag + "_out"], rtol=1e-5, atol=1e-5)
    for k in ("bn_gamma", "bn_beta"):
        np.testing.assert_allclose(params[k].grad().asnumpy(), V1[f"{tag}_grad_{k}"],
                                   rtol=1e-4, atol=1e-5, err_msg=k)
    for k in ("bn_moving_mean", "bn_moving_var"):
        np.testing.assert_allclose(params[k].data().asnumpy(), V1[f"{tag}_{k}"], rtol=1e-5,
                                   atol=1e-6, err_msg=k)
    if train:
        np.testing.assert_allclose(x.grad.asnumpy(), V1[tag + "_grad_data"], rtol=1e-4,
                                   atol=1e-5)
    else:
        # MXNet's v1 backward uses batch statistics here (its bug); the computed function's
        # gradient is gamma / sqrt(moving_var + eps) times the head gradient
        scale = V1["v1_in_gamma"] / np.sqrt(vals["bn_moving_var"] + 1e-3)
        want = V1["v1_in_head"] * scale[None, :, None, None]
        np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-5, atol=1e-6)
        assert not np.allclose(want, V1[tag + "_grad_data"], atol=1e-3)
