"""Generate mx.sym's operator table and the symbol fixtures from real MXNet 1.9.1.

Run with the oracle interpreter:

    /tmp/mxref/bin/python tools/gen_symbol_fixtures.py
        # writes neogluon/symbol/_op_table.json and tests/fixtures/symbol/*
    /tmp/mxref/bin/python tools/gen_symbol_fixtures.py --check-neogluon-export PREFIX
        # load PREFIX-symbol.json / PREFIX-0000.params (written by neogluon's export) with
        # MXNet's SymbolBlock.imports, run PREFIX-input.npy through it and compare with
        # PREFIX-output.npy (neogluon's result)

The operator table is a list of facts about MXNet's operator registry that a symbol graph
needs: every alias's canonical operator name (``mx.sym.flatten`` is recorded as ``Flatten``)
and each operator's tensor inputs in order (``FullyConnected``: data, weight, bias), with the
name of the attribute counting variadic inputs (``Concat``: num_args).
"""
from __future__ import annotations

import ctypes
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TABLE = os.path.join(ROOT, "neogluon", "symbol", "_op_table.json")
OUT = os.path.join(ROOT, "tests", "fixtures", "symbol")


def op_table():
    from mxnet.base import _LIB, check_call, py_str, c_str, OpHandle, mx_uint
    plist = ctypes.POINTER(ctypes.c_char_p)()
    size = ctypes.c_uint()
    check_call(_LIB.MXListAllOpNames(ctypes.byref(size), ctypes.byref(plist)))
    names = sorted(py_str(plist[i]) for i in range(size.value))
    aliases, ops = {}, {}
    for n in names:
        if n.startswith("_backward") or n.startswith("_npi") or n.startswith("_np_") \
                or n.startswith("_npx"):
            continue
        h = OpHandle()
        check_call(_LIB.NNGetOpHandle(c_str(n), ctypes.byref(h)))
        real, desc, kv, rt = (ctypes.c_char_p() for _ in range(4))
        num_args = mx_uint()
        an, at, ad = (ctypes.POINTER(ctypes.c_char_p)() for _ in range(3))
        check_call(_LIB.MXSymbolGetAtomicSymbolInfo(
            h, ctypes.byref(real), ctypes.byref(desc), ctypes.byref(num_args),
            ctypes.byref(an), ctypes.byref(at), ctypes.byref(ad), ctypes.byref(kv),
            ctypes.byref(rt)))
        canon = py_str(real.value)
        if canon != n:
            aliases[n] = canon
            continue
        inputs, variadic = [], False
        for i in range(num_args.value):
            t = py_str(at[i])
            if "NDArray" in t or "Symbol" in t:
                inputs.append(py_str(an[i]))
                variadic = variadic or t.endswith("[]")
        entry = {"inputs": inputs}
        if variadic:
            entry["variadic"] = True
        k = py_str(kv.value) if kv.value else ""
        if k:
            entry["num_args"] = k
        ops[n] = entry
    return {"mxnet_version": mx.__version__, "aliases": aliases, "ops": ops}


def small_net():
    """A small CNN exported by MXNet's HybridBlock.export, its input and its output."""
    from mxnet import gluon
    mx.random.seed(7)
    net = gluon.nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(gluon.nn.Conv2D(4, 3, padding=1, activation="relu"),
                gluon.nn.BatchNorm(),
                gluon.nn.MaxPool2D(2),
                gluon.nn.Flatten(),
                gluon.nn.Dense(8, activation="tanh"),
                gluon.nn.Dropout(0.5),
                gluon.nn.Dense(3))
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(3).randn(2, 3, 8, 8))
    net(x)
    # Non-trivial running statistics, so that the aux parameters matter.
    for p in net.collect_params().values():
        if p.name.endswith("running_mean"):
            p.set_data(mx.nd.array(np.linspace(-0.5, 0.5, p.shape[0])))
        if p.name.endswith("running_var"):
            p.set_data(mx.nd.array(np.linspace(0.5, 2.0, p.shape[0])))
    net.hybridize()
    y = net(x)
    net.export(os.path.join(OUT, "small_cnn"), epoch=2)
    np.save(os.path.join(OUT, "small_cnn-input.npy"), x.asnumpy())
    np.save(os.path.join(OUT, "small_cnn-output.npy"), y.asnumpy())


ZOO = {
    # name: (layers, input shape, integer input)
    "conv": (lambda nn: [nn.Conv2D(4, 3, strides=2, padding=1, use_bias=False),
                         nn.Conv2D(4, 3, groups=2, activation="sigmoid"),
                         nn.Conv2DTranspose(3, 3, strides=2), nn.AvgPool2D(2),
                         nn.GlobalMaxPool2D()], (2, 3, 12, 12), False),
    "norms": (lambda nn: [nn.Conv2D(4, 1), nn.BatchNorm(), nn.InstanceNorm(), nn.LayerNorm(),
                          nn.GroupNorm(2)], (2, 3, 5, 5), False),
    "acts": (lambda nn: [nn.Dense(6, use_bias=False), nn.LeakyReLU(0.1), nn.PReLU(), nn.ELU(),
                         nn.SELU(), nn.GELU(), nn.Swish(), nn.Activation("softrelu"),
                         nn.Dropout(0.3), nn.Dense(3, flatten=False)], (4, 5), False),
    "emb": (lambda nn: [nn.Embedding(10, 4), nn.Flatten(), nn.Dense(2)], (3, 5), True),
    "conv1d": (lambda nn: [nn.Conv1D(3, 3), nn.MaxPool1D(2), nn.Conv1D(2, 1)], (2, 3, 9),
               False),
}


def layer_zoo():
    """Small nets of each layer family exported by MXNet, with an input and MXNet's output
    (in predict mode)."""
    from mxnet import gluon
    for name, (layers, shape, integer) in ZOO.items():
        mx.random.seed(11)
        net = gluon.nn.HybridSequential(prefix=f"{name}_")
        with net.name_scope():
            for layer in layers(gluon.nn):
                net.add(layer)
        net.initialize(mx.init.Xavier())
        rng = np.random.RandomState(5)
        x = rng.randint(0, 10, size=shape) if integer else rng.randn(*shape)
        x = mx.nd.array(x)
        net(x)
        for p in net.collect_params().values():
            if p.name.endswith("running_var"):
                p.set_data(mx.nd.array(np.linspace(0.5, 2.0, p.shape[0])))
            if p.name.endswith("running_mean"):
                p.set_data(mx.nd.array(np.linspace(-0.3, 0.3, p.shape[0])))
        net.hybridize()
        y = net(x)
        prefix = os.path.join(OUT, f"zoo_{name}")
        net.export(prefix, epoch=0)
        np.save(prefix + "-input.npy", x.asnumpy())
        np.save(prefix + "-output.npy", y.asnumpy())


def facts():
    """list_* / infer_shape / naming results of small symbolic graphs."""
    res = {}
    x = mx.sym.var("x")
    fc = mx.sym.FullyConnected(x, num_hidden=4, name="fc")
    bn = mx.sym.BatchNorm(fc, name="bn")
    act = mx.sym.Activation(bn, act_type="relu", name="act")
    sp = mx.sym.split(act, num_outputs=2, axis=1, name="sp")
    out = mx.sym.Group([sp[0] + 1, sp[1] * sp[0], mx.sym.sum(act, axis=1, name="s")])
    res["graph"] = {
        "json": out.tojson(),
        "list_arguments": out.list_arguments(),
        "list_auxiliary_states": out.list_auxiliary_states(),
        "list_inputs": out.list_inputs(),
        "list_outputs": out.list_outputs(),
        "internals": out.get_internals().list_outputs(),
        "infer_shape": out.infer_shape(x=(5, 3)),
        "infer_type": [[np.dtype(t).name for t in ts] for ts in out.infer_type(x="float64")],
    }
    return res


def check_neogluon_export(prefix):
    from mxnet import gluon
    net = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    x = mx.nd.array(np.load(prefix + "-input.npy"))
    y = net(x).asnumpy()
    want = np.load(prefix + "-output.npy")
    err = float(np.abs(y - want).max())
    print(json.dumps({"max_abs_err": err, "shape": list(y.shape)}))
    return 0 if err < 1e-5 else 1


if __name__ == "__main__":
    import mxnet as mx
    if len(sys.argv) > 2 and sys.argv[1] == "--check-neogluon-export":
        sys.exit(check_neogluon_export(sys.argv[2]))
    os.makedirs(OUT, exist_ok=True)
    with open(TABLE, "w") as f:
        json.dump(op_table(), f, indent=0, sort_keys=True)
        f.write("\n")
    small_net()
    layer_zoo()
    with open(os.path.join(OUT, "facts.json"), "w") as f:
        json.dump(facts(), f, indent=1, sort_keys=True)
        f.write("\n")
