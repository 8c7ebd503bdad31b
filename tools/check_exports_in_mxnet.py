"""Check that neogluon's ``HybridBlock.export`` files load in real MXNet 1.9.1 and give
neogluon's outputs, for every model-zoo model, fused recurrent layers and the checkpoint
writer.

Run with neogluon's interpreter; it calls the MXNet oracle itself:

    .venv/bin/python tools/check_exports_in_mxnet.py [--mxnet /tmp/mxref/bin/python] [names]

For each model of ``gluon.model_zoo.vision`` (10 classes, the input sizes of
tools/gen_symbol_import_fixtures.py, weights from ``det_param``): neogluon builds it,
hybridizes, runs it and exports ``<name>-symbol.json`` / ``<name>-0000.params`` with the input
and output into a temporary folder; then MXNet's ``gluon.SymbolBlock.imports`` loads each and
its output is compared (rtol 1e-4 of the output's scale). Also ``mx.model.save_checkpoint``
files are read back with MXNet's ``mx.model.load_checkpoint``. Prints one line per model and
exits non-zero if any fails.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)

ZOO_SIDE = {"alexnet": 64, "inceptionv3": 299}
for _n in ("densenet121", "densenet161", "densenet169", "densenet201", "squeezenet1.0",
           "squeezenet1.1"):
    ZOO_SIDE[_n] = 224


def export_all(folder, names):
    import neogluon as mx
    from neogluon import nd
    from neogluon.gluon.model_zoo import vision
    from sym_import_util import det_input, det_param
    from neogluon.gluon.model_zoo.model_store import _SHORT_HASH
    names = names or sorted(_SHORT_HASH)
    done = []
    for name in names:
        side = ZOO_SIDE.get(name, 32)
        net = vision.get_model(name, classes=10)
        net.initialize()
        net.hybridize()
        x = nd.array(det_input((1, 3, side, side), 1))
        net(x)
        for k, p in net.collect_params().items():
            p.set_data(nd.array(det_param(k, p.shape)))
        y = net(x)
        prefix = os.path.join(folder, name)
        net.export(prefix, 0)
        np.save(prefix + "-input.npy", x.asnumpy())
        np.save(prefix + "-output.npy", y.asnumpy())
        done.append(name)
    # recurrent layers (MXNet exports them as _rnn_param_concat + RNN)
    from neogluon import gluon
    rng = np.random.RandomState(0)
    for name, make, shape in (
            ("lstm_ntc", lambda: gluon.rnn.LSTM(5, num_layers=2, layout="NTC"), (2, 4, 3)),
            ("gru_bidir", lambda: gluon.rnn.GRU(4, bidirectional=True), (4, 2, 3)),
            ("rnn_relu", lambda: gluon.rnn.RNN(3, activation="relu"), (4, 2, 3))):
        net = make()
        net.initialize(mx.init.Uniform(0.3))
        net.hybridize()
        x = nd.array(rng.standard_normal(shape).astype(np.float32))
        batch = shape[0] if name == "lstm_ntc" else shape[1]
        states = [nd.array(rng.standard_normal(st.shape).astype(np.float32) * 0.5)
                  for st in net.begin_state(batch)]
        y, _ = net(x, states)   # three inputs: exported as data0 (x), data1, data2 (states)
        prefix = os.path.join(folder, name)
        net.export(prefix, 0)
        np.savez(prefix + "-inputs.npz", *([x.asnumpy()] + [st.asnumpy() for st in states]))
        np.save(prefix + "-output.npy", y.asnumpy())
        done.append(name)
    # a checkpoint written by neogluon
    data = mx.sym.var("data")
    out = mx.sym.FullyConnected(mx.sym.BatchNorm(data, name="bn"), num_hidden=3, name="fc")
    arg = {"bn_gamma": nd.array([1.0, 2.0]), "bn_beta": nd.array([0.5, -0.5]),
           "fc_weight": nd.array(np.arange(6, dtype=np.float32).reshape(3, 2) / 6),
           "fc_bias": nd.array([0.1, 0.2, 0.3])}
    aux = {"bn_moving_mean": nd.array([0.2, -0.1]), "bn_moving_var": nd.array([1.5, 0.5])}
    mx.model.save_checkpoint(os.path.join(folder, "ckpt"), 5, out, arg, aux)
    xin = np.array([[1.0, 2.0], [-1.0, 0.5]], np.float32)
    want = out.eval(data=nd.array(xin), **arg, **aux)[0].asnumpy()
    np.save(os.path.join(folder, "ckpt-input.npy"), xin)
    np.save(os.path.join(folder, "ckpt-output.npy"), want)
    with open(os.path.join(folder, "names.json"), "w") as f:
        json.dump(done, f)


def check_in_mxnet(folder):
    import mxnet as mx
    with open(os.path.join(folder, "names.json")) as f:
        names = json.load(f)
    failed = []
    for name in names:
        prefix = os.path.join(folder, name)
        try:
            if os.path.exists(prefix + "-inputs.npz"):
                arrs = np.load(prefix + "-inputs.npz")
                xs = [arrs[f"arr_{i}"] for i in range(len(arrs.files))]
                in_names = [f"data{i}" for i in range(len(xs))]
            else:
                xs, in_names = [np.load(prefix + "-input.npy")], ["data"]
            net = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", in_names,
                                               prefix + "-0000.params")
            y = net(*[mx.nd.array(v) for v in xs])
            y = (y[0] if isinstance(y, (list, tuple)) else y).asnumpy()
            want = np.load(prefix + "-output.npy")
            scale = max(1.0, float(np.abs(want).max()))
            err = float(np.abs(y - want).max()) / scale
            ok = y.shape == want.shape and err < 1e-4
            print(f"{name:18s} {'ok' if ok else 'DIFFERS'}  max error / scale {err:.2e}")
        except Exception as e:  # noqa: BLE001 - report every model
            ok = False
            print(f"{name:18s} FAILED to load: {str(e).splitlines()[0][:200]}")
        if not ok:
            failed.append(name)
    sym, arg, aux = mx.model.load_checkpoint(os.path.join(folder, "ckpt"), 5)
    exe = sym.bind(mx.cpu(), args=dict(arg, data=mx.nd.array(
        np.load(os.path.join(folder, "ckpt-input.npy")))), aux_states=aux)
    y = exe.forward(is_train=False)[0].asnumpy()
    ok = np.allclose(y, np.load(os.path.join(folder, "ckpt-output.npy")), rtol=1e-5, atol=1e-6)
    print(f"{'save_checkpoint':18s} {'ok' if ok else 'DIFFERS'}")
    if not ok:
        failed.append("save_checkpoint")
    print(f"{len(names) + 1 - len(failed)} of {len(names) + 1} load in MXNet 1.9.1 and match"
          + (f"; failed: {failed}" if failed else ""))
    return 1 if failed else 0


def main(argv):
    if argv and argv[0] == "--in-mxnet":
        return check_in_mxnet(argv[1])
    oracle = "/tmp/mxref/bin/python"
    if argv and argv[0] == "--mxnet":
        oracle, argv = argv[1], argv[2:]
    with tempfile.TemporaryDirectory() as folder:
        export_all(folder, argv)
        return subprocess.call([oracle, os.path.abspath(__file__), "--in-mxnet", folder])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
