"""Write tests/fixtures/gluon/extra.json from MXNet 1.9.1 (run with /tmp/mxref/bin/python).

Scenarios: the FusedRNN initializer's layout of a fused RNN parameter vector (each piece
filled with a value derived from its name), and BatchNormReLU's outputs, gradients and
running statistics.
"""
import json
import os

import numpy as np
import mxnet as mx
from mxnet import nd, autograd

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures",
                   "gluon", "extra.json")


class NameTag(mx.init.Initializer):
    """Fills each piece with a number computed from its name (the tests define the same)."""

    def _init_weight(self, name, arr):
        arr[:] = sum(map(ord, str(name))) % 97

    def _init_bias(self, name, arr):
        arr[:] = -(sum(map(ord, str(name))) % 89)


def fused_rnn():
    res = []
    for mode, bi, layers, hidden, inputs in [("lstm", True, 2, 2, 3), ("gru", True, 3, 2, 3),
                                             ("rnn_tanh", False, 2, 3, 2),
                                             ("rnn_relu", True, 1, 2, 4)]:
        b = 2 if bi else 1
        m = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}[mode]
        size = (inputs + hidden + 2) * hidden * m * b \
            + (layers - 1) * m * hidden * (hidden + b * hidden + 2) * b
        arr = nd.zeros((size,))
        init = mx.init.FusedRNN(NameTag(), hidden, layers, mode, bi, forget_bias=2.5)
        init._init_weight(mx.init.InitDesc("parameters"), arr)
        res.append({"mode": mode, "bidirectional": bi, "num_layers": layers,
                    "num_hidden": hidden, "size": size, "dumps_kwargs": json.loads(
                        init.dumps())[1], "values": arr.asnumpy().tolist()})
    return res


def bn_relu():
    b = mx.gluon.nn.BatchNormReLU(in_channels=2, momentum=0.8)
    b.initialize()
    x = nd.array(np.array([1, -2, 3, 4, -5, 6, 0.5, -0.25], dtype=np.float32)
                 .reshape((4, 2, 1, 1)))
    with autograd.record():
        y = b(x)
    y.backward(nd.array(np.arange(8, dtype=np.float32).reshape((4, 2, 1, 1))))
    return {"name": b.name, "repr": repr(b), "params": list(b.collect_params().keys()),
            "x": x.asnumpy().tolist(), "y": y.asnumpy().tolist(),
            "gamma_grad": b.gamma.grad().asnumpy().tolist(),
            "beta_grad": b.beta.grad().asnumpy().tolist(),
            "running_mean": b.running_mean.data().asnumpy().tolist(),
            "running_var": b.running_var.data().asnumpy().tolist(),
            "predict": b(x).asnumpy().tolist()}


if __name__ == "__main__":
    with open(OUT, "w") as f:
        json.dump({"fused_rnn": fused_rnn(), "bn_relu": bn_relu()}, f, indent=1)
    print("wrote", OUT)
