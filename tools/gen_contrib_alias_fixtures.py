"""Fixtures for tests/test_contrib_aliases.py from MXNet 1.9.1: ``nd.contrib.BatchNormWithReLU``
(outputs, input/gamma/beta gradients and moving statistics, training and predict mode) and
``nd.contrib.SparseEmbedding`` (output and its row_sparse weight gradient); ``BatchNorm_v1`` through MXNet's executor.

    /tmp/mxref/bin/python tools/gen_contrib_alias_fixtures.py
"""
import os

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures",
                   "contrib_alias")


def inputs():
    rs = np.random.RandomState(3)
    x = rs.randn(2, 3, 4, 5).astype("float32")
    gamma = np.array([1.0, -2.0, 0.5], "float32")
    beta = np.array([0.1, -0.2, 0.3], "float32")
    head = rs.randn(2, 3, 4, 5).astype("float32")
    mean = np.array([0.2, -0.1, 0.0], "float32")
    var = np.array([1.5, 0.5, 2.0], "float32")
    return x, gamma, beta, head, mean, var


def main():
    os.makedirs(OUT, exist_ok=True)
    x, gamma, beta, head, mean, var = inputs()
    res = {f"in_{n}": v for n, v in zip(("x", "gamma", "beta", "head", "mean", "var"),
                                         (x, gamma, beta, head, mean, var))}
    for train in (True, False):
        for fix_gamma in (False, True):
            tag = f"{'train' if train else 'predict'}_{'fix' if fix_gamma else 'free'}"
            a = [mx.nd.array(v) for v in (x, gamma, beta)]
            for v in a:
                v.attach_grad()
            m, s = mx.nd.array(mean), mx.nd.array(var)
            with mx.autograd.record(train_mode=train):
                y = mx.nd.contrib.BatchNormWithReLU(*a, m, s, fix_gamma=fix_gamma, eps=1e-3,
                                                   momentum=0.8)
            y.backward(mx.nd.array(head))
            res[tag + "_out"] = y.asnumpy()
            for n, v in zip(("x", "gamma", "beta"), a):
                res[f"{tag}_grad_{n}"] = v.grad.asnumpy()
            res[tag + "_mean"] = m.asnumpy()
            res[tag + "_var"] = s.asnumpy()
    w = mx.nd.array(np.random.RandomState(4).randn(6, 3).astype("float32"))
    w.attach_grad(stype="row_sparse")
    idx = mx.nd.array([[1, 4], [4, 0]])
    with mx.autograd.record():
        e = mx.nd.contrib.SparseEmbedding(idx, w, input_dim=6, output_dim=3)
    e.backward(mx.nd.array(np.arange(12, dtype="float32").reshape(2, 2, 3)))
    res["emb_out"] = e.asnumpy()
    res["emb_grad"] = w.grad.asnumpy()
    res["emb_grad_rows"] = w.grad.indices.asnumpy()
    res["emb_grad_stype"] = np.array(w.grad.stype)
    np.savez(os.path.join(OUT, "contrib_alias.npz"), **res)


def batchnorm_v1():
    """BatchNorm_v1 through MXNet's executor (its nd function cannot be called): the graph's
    JSON, outputs, gradients and moving statistics after backward, training and predict."""
    rs = np.random.RandomState(0)
    x = rs.randn(2, 3, 4, 4).astype("f")
    g = np.array([1, 2, 3], "f")
    b = np.array([.1, .2, .3], "f")
    head = rs.randn(2, 3, 4, 4).astype("f")
    res = {"v1_in_x": x, "v1_in_gamma": g, "v1_in_beta": b, "v1_in_head": head}
    s = mx.sym.BatchNorm_v1(mx.sym.var("data"), name="bn", fix_gamma=False, momentum=0.8,
                            eps=1e-3)
    res["v1_json"] = np.array(s.tojson())
    for train in (True, False):
        tag = "v1_train" if train else "v1_predict"
        args = {"data": mx.nd.array(x), "bn_gamma": mx.nd.array(g), "bn_beta": mx.nd.array(b)}
        grads = {k: mx.nd.zeros_like(v) for k, v in args.items()}
        aux = {"bn_moving_mean": mx.nd.array([.5, 0, 0]),
               "bn_moving_var": mx.nd.array([2, 1, 1])}
        ex = s.bind(mx.cpu(), args, args_grad=grads, aux_states=aux)
        res[tag + "_out"] = ex.forward(is_train=train)[0].asnumpy()
        ex.backward(mx.nd.array(head))
        for k, v in grads.items():
            res[f"{tag}_grad_{k}"] = v.asnumpy()
        for k, v in aux.items():
            res[f"{tag}_{k}"] = v.asnumpy()
    np.savez(os.path.join(OUT, "batchnorm_v1.npz"), **res)


if __name__ == "__main__":
    main()
    batchnorm_v1()
