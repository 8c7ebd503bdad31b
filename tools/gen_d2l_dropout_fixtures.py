"""Write tests/fixtures/d2l_dropout/* from MXNet 1.9.1 (run with /tmp/mxref/bin/python).

Issue 33 (the d2l Transformer's validation loss): the small d2l-style Transformer of
tests/d2l_dropout_cases.py, initialised here, its parameters saved in MXNet's file format, and
on one batch: the loss and logits of a validation pass (outside ``autograd.record``, so dropout
off and the book's decoder without its causal mask), the same under ``record(train_mode=False)``,
and over K training-mode passes (fresh dropout masks each) the mean and variance of the loss and
the mean and summed per-element variance of every parameter's gradient. tests/test_d2l_dropout.py
loads the parameters in neogluon and compares: validation exactly (float rounding), training
statistics within their Monte Carlo error.
"""
import json
import os
import sys

import numpy as onp

import mxnet as mx
from mxnet import autograd, np, npx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import d2l_dropout_cases as cases  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "fixtures", "d2l_dropout")
K = 200


def main():
    os.makedirs(OUT, exist_ok=True)
    npx.set_np()
    mx.random.seed(11)
    Transformer, loss = cases.build(mx)
    net = Transformer()
    net.initialize(mx.init.Xavier())
    src, tgt, valid, label = (np.array(a) for a in cases.inputs(onp))
    net(src, tgt, valid)
    net.save_parameters(os.path.join(OUT, "transformer.params"))
    res = {"val_loss": float(loss(net, src, tgt, valid, label))}
    logits = net(src, tgt, valid).asnumpy()
    with autograd.record(train_mode=False):
        res["record_predict_loss"] = float(loss(net, src, tgt, valid, label))
    params = net._collect_params_with_prefix()  # structural names, as in the .params file
    names = sorted(params.keys())
    ls, gsum, gsq = [], {}, {}
    for _ in range(K):
        with autograd.record():
            l = loss(net, src, tgt, valid, label)
        l.backward()
        ls.append(float(l))
        for n in names:
            g = params[n].grad().asnumpy().astype("float64")
            gsum[n] = gsum.get(n, 0) + g
            gsq[n] = gsq.get(n, 0) + g * g
    res["train_loss_mean"] = float(onp.mean(ls))
    res["train_loss_var"] = float(onp.var(ls, ddof=1))
    res["k"] = K
    grads = {}
    for i, n in enumerate(names):
        mean = gsum[n] / K
        grads["mean_%d" % i] = mean.astype("float32")
        res.setdefault("grad_var_sum", []).append(float((gsq[n] / K - mean * mean).sum() * K / (K - 1)))
    res["param_order"] = names
    onp.savez(os.path.join(OUT, "d2l_dropout.npz"), logits=logits, **grads)
    with open(os.path.join(OUT, "d2l_dropout.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    print({k: v for k, v in res.items() if not isinstance(v, list)})


if __name__ == "__main__":
    main()
