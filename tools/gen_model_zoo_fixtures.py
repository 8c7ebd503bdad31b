"""Generate fixtures for the model zoo's DenseNet, Inception v3, MobileNetV2 and SqueezeNet
from real MXNet 1.9.1.

Run with the oracle interpreter:

    /tmp/mxref/bin/python tools/gen_model_zoo_fixtures.py   # writes tests/fixtures/model_zoo/*

For each model (10 classes): its prefix, its parameters' names and shapes in order, and the
output (predict mode) for deterministic weights (``det`` of tests/gluon_fixture_utils.py,
scaled by fan-in; positive batch-norm scales and variances) on a deterministic input.
``tests/test_model_zoo.py`` builds the same models in neogluon and compares.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "model_zoo")
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from gluon_fixture_utils import det  # noqa: E402

# model function -> input side (DenseNet and SqueezeNet end in fixed-size pools)
MODELS = {"squeezenet1_0": 224, "squeezenet1_1": 224, "densenet121": 224,
          "mobilenet_v2_0_25": 64, "mobilenet_v2_1_0": 64, "inception_v3": 299}


def fixed_weights(params):
    for j, (k, v) in enumerate(params):
        val = det(v.shape, j) * (1.0 / np.sqrt(max(1, np.prod(v.shape[1:]))))
        if "running_var" in k or "gamma" in k:
            val = np.abs(val) + 0.5
        yield v, val


def main():
    import mxnet as mx
    from mxnet import autograd, nd
    from mxnet.gluon.model_zoo import vision
    meta, arrays = {}, {}
    for name, side in MODELS.items():
        mx.name.NameManager._current.value = mx.name.NameManager()
        net = getattr(vision, name)(classes=10)
        net.initialize()
        x = nd.array(det((1, 3, side, side), 1))
        with autograd.predict_mode():
            net(x)
        params = list(net.collect_params().items())
        meta[name] = {"prefix": net.prefix, "side": side,
                      "params": [[k, list(v.shape)] for k, v in params]}
        for v, val in fixed_weights(params):
            v.set_data(nd.array(val))
        with autograd.predict_mode():
            arrays[name] = net(x).asnumpy()
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "models.json"), "w") as f:
        json.dump(meta, f, indent=0)
    np.savez(os.path.join(OUT, "outputs.npz"), **arrays)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
