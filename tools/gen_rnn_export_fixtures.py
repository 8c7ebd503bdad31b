"""Generate recurrent-model export fixtures from real MXNet 1.9.1.

Run with the oracle interpreter:

    /tmp/mxref/bin/python tools/gen_rnn_export_fixtures.py   # writes tests/fixtures/rnn_export/*

A hybridized net of a 2-layer bidirectional LSTM (NTC), a GRU and a Dense layer, with
deterministic weights, exported by MXNet (``net-symbol.json``, ``net-0000.params``: MXNet's
``_rnn_param_concat`` + ``RNN`` graph), plus an input and MXNet's output for it.
``tests/test_gluon_rnn.py`` imports the files in neogluon and compares.
"""
from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "rnn_export")
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from gluon_fixture_utils import det  # noqa: E402


def main():
    import mxnet as mx
    from mxnet import gluon
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.rnn.LSTM(4, num_layers=2, layout="NTC", bidirectional=True),
                gluon.rnn.GRU(3, layout="NTC"), gluon.nn.Dense(3))
    net.initialize()
    x = mx.nd.array(det((2, 5, 3), 1))
    net(x)
    for j, (k, v) in enumerate(net.collect_params().items()):
        v.set_data(mx.nd.array(det(v.shape, j)))
    net.hybridize()
    y = net(x)
    os.makedirs(OUT, exist_ok=True)
    net.export(os.path.join(OUT, "net"))
    np.savez(os.path.join(OUT, "io.npz"), x=x.asnumpy(), y=y.asnumpy())
    print("wrote", OUT)


if __name__ == "__main__":
    main()
