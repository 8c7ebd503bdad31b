"""Record MXNet 1.9.1's executor results for tests/test_executor.py.

    /tmp/mxref/bin/python tools/gen_executor_fixtures.py

Writes tests/fixtures/executor/*.npz and *.json: a small network (Convolution, BatchNorm,
Pooling, FullyConnected, Dropout off, SoftmaxOutput) bound with simple_bind, its outputs,
argument gradients (grad_req write and add) and auxiliary states after forward/backward,
and a regression-output graph with grad_req per argument.
"""
from __future__ import annotations

import json
import os

import numpy as np
import mxnet as mx

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests",
                   "fixtures", "executor")


def convnet():
    data = mx.sym.var("data")
    net = mx.sym.Convolution(data, num_filter=4, kernel=(3, 3), pad=(1, 1), name="conv")
    net = mx.sym.BatchNorm(net, fix_gamma=False, name="bn")
    net = mx.sym.Activation(net, act_type="relu", name="relu")
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool")
    net = mx.sym.FullyConnected(net, num_hidden=5, name="fc")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.RandomState(7)
    sym = convnet()
    shapes = {"data": (3, 2, 6, 6), "softmax_label": (3,)}
    arg_s, _, aux_s = sym.infer_shape(**shapes)
    inputs = {}
    for n, s in zip(sym.list_arguments(), arg_s):
        inputs[n] = rng.uniform(-1, 1, s).astype(np.float32)
    inputs["softmax_label"] = np.array([0, 3, 4], dtype=np.float32)
    aux = {n: (rng.uniform(0.5, 1.5, s) if "var" in n else rng.uniform(-.5, .5, s))
           .astype(np.float32) for n, s in zip(sym.list_auxiliary_states(), aux_s)}
    rec = {}
    for req in ("write", "add"):
        exe = sym.simple_bind(mx.cpu(), grad_req=req, **shapes)
        for n, v in inputs.items():
            exe.arg_dict[n][:] = v
        for n, v in aux.items():
            exe.aux_dict[n][:] = v
        for g in exe.grad_arrays:
            g[:] = 0.5 if req == "add" else 0
        for _ in range(2):
            exe.forward(is_train=True)
            exe.backward()
        rec[f"{req}_out"] = exe.outputs[0].asnumpy()
        for n, g in exe.grad_dict.items():
            rec[f"{req}_grad_{n}"] = g.asnumpy()
        for n, a in exe.aux_dict.items():
            rec[f"{req}_aux_{n}"] = a.asnumpy()
        exe.forward(is_train=False)
        rec[f"{req}_infer_out"] = exe.outputs[0].asnumpy()
    for n, v in inputs.items():
        rec[f"in_{n}"] = v
    for n, v in aux.items():
        rec[f"auxin_{n}"] = v
    np.savez(os.path.join(OUT, "convnet.npz"), **rec)
    with open(os.path.join(OUT, "convnet.json"), "w") as f:
        json.dump({"symbol": sym.tojson(), "arguments": sym.list_arguments(),
                   "aux": sym.list_auxiliary_states(), "shapes": shapes}, f, indent=1)

    # regression heads with per-argument grad_req and an explicit head gradient graph
    x = mx.sym.var("x")
    w = mx.sym.var("w")
    h = mx.sym.FullyConnected(x, weight=w, num_hidden=3, no_bias=True, name="fc")
    heads = {"lin": mx.sym.LinearRegressionOutput(h, name="lin"),
             "logi": mx.sym.LogisticRegressionOutput(h, name="logi"),
             "mae": mx.sym.MAERegressionOutput(h, name="mae"),
             "svm": mx.sym.SVMOutput(h, name="svm", margin=0.5),
             "makeloss": mx.sym.MakeLoss(mx.sym.sum(mx.sym.square(h)), grad_scale=0.3,
                                         name="ml")}
    reg = {"x": rng.uniform(-1, 1, (4, 5)).astype(np.float32),
           "w": rng.uniform(-1, 1, (3, 5)).astype(np.float32)}
    out = {}
    for k, s in heads.items():
        shp = {"x": (4, 5)}
        exe = s.simple_bind(mx.cpu(), grad_req={"w": "write", "x": "add"}, **shp)
        exe.arg_dict["x"][:] = reg["x"]
        exe.arg_dict["w"][:] = reg["w"]
        lab = [n for n in s.list_arguments() if n.endswith("label")]
        if lab:
            lshape = exe.arg_dict[lab[0]].shape
            lv = rng.randint(0, 3, lshape).astype(np.float32) if k == "svm" else \
                rng.uniform(0, 1, lshape).astype(np.float32)
            exe.arg_dict[lab[0]][:] = lv
            out[f"{k}_label"] = lv
        exe.forward(is_train=True)
        exe.backward()
        exe.forward(is_train=True)
        exe.backward()
        out[f"{k}_out"] = exe.outputs[0].asnumpy()
        out[f"{k}_grad_w"] = exe.grad_dict["w"].asnumpy()
        out[f"{k}_grad_x"] = exe.grad_dict["x"].asnumpy()
    out.update({f"in_{k}": v for k, v in reg.items()})
    np.savez(os.path.join(OUT, "heads.npz"), **out)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
