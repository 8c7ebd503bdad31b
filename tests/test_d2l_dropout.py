"""Issue 33: the d2l Transformer's validation loss. The same weights (an MXNet 1.9.1 .params
file) give MXNet's validation loss and logits to float rounding (dropout is off outside
``autograd.record``, the book's decoder drops its causal mask there), and over many training
passes the loss and every parameter's gradient have MXNet's mean within the Monte Carlo error
(the dropout masks themselves come from a different generator). Fixtures:
tools/gen_d2l_dropout_fixtures.py."""
import json
import os

import numpy as onp
import pytest

import neogluon as mx
from neogluon import autograd, np, npx

import d2l_dropout_cases as cases

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "d2l_dropout")


@pytest.fixture(scope="module")
def model():
    npx.set_np()
    try:
        Transformer, loss = cases.build(mx)
        net = Transformer()
        net.load_parameters(os.path.join(FIX, "transformer.params"))
        with open(os.path.join(FIX, "d2l_dropout.json")) as f:
            ref = json.load(f)
        ref.update(onp.load(os.path.join(FIX, "d2l_dropout.npz")))
        data = tuple(np.array(a) for a in cases.inputs(onp))
        yield net, loss, data, ref
    finally:
        npx.reset_np()


def test_validation_pass_matches_mxnet(model):
    net, loss, (src, tgt, valid, label), ref = model
    assert not autograd.is_training()
    onp.testing.assert_allclose(net(src, tgt, valid).asnumpy(), ref["logits"], rtol=1e-5,
                                atol=1e-5)
    # two validation passes: no dropout anywhere, so the same numbers
    assert float(loss(net, src, tgt, valid, label)) == float(loss(net, src, tgt, valid, label))
    onp.testing.assert_allclose(float(loss(net, src, tgt, valid, label)), ref["val_loss"],
                                rtol=1e-5)
    with autograd.record(train_mode=False):
        onp.testing.assert_allclose(float(loss(net, src, tgt, valid, label)),
                                    ref["record_predict_loss"], rtol=1e-5)
    with autograd.predict_mode():
        onp.testing.assert_allclose(float(loss(net, src, tgt, valid, label)),
                                    ref["val_loss"], rtol=1e-5)


def test_training_passes_match_mxnet_in_mean(model):
    net, loss, (src, tgt, valid, label), ref = model
    params = net._collect_params_with_prefix()
    names = ref["param_order"]
    assert sorted(params.keys()) == names
    mx.random.seed(5)
    k = 200
    ls, gsum = [], {n: 0.0 for n in names}
    for _ in range(k):
        with autograd.record():
            l = loss(net, src, tgt, valid, label)
        l.backward()
        ls.append(float(l))
        for n in names:
            gsum[n] = gsum[n] + params[n].grad().asnumpy().astype("float64")
    ls = onp.array(ls)
    # dropout is on in training: the loss varies from pass to pass about as much as in MXNet
    var_ratio = ls.var(ddof=1) / ref["train_loss_var"]
    assert 0.6 < var_ratio < 1.6, var_ratio
    # means: within 4 standard errors of the difference of two independent means
    se = onp.sqrt(ls.var(ddof=1) / k + ref["train_loss_var"] / ref["k"])
    assert abs(ls.mean() - ref["train_loss_mean"]) < 4 * se, (ls.mean(), ref["train_loss_mean"])
    # the training loss sits below the validation loss (the causal mask is only on in training)
    assert ls.mean() < ref["val_loss"]
    # every parameter's mean gradient: the squared distance to MXNet's is about
    # sum(var) * (1/k + 1/K) for unbiased estimates of the same expectation; a wrong dropout
    # scale or a mask on the wrong axes moves it by far more
    ratios = []
    for i, n in enumerate(names):
        mean = gsum[n] / k
        d2 = float(((mean - ref["mean_%d" % i]) ** 2).sum())
        noise = ref["grad_var_sum"][i] * (1.0 / k + 1.0 / ref["k"])
        ratios.append(d2 / noise)
    assert onp.mean(ratios) < 1.5 and max(ratios) < 4, sorted(zip(ratios, names))[-5:]
