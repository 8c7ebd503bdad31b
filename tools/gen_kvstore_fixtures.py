"""Write tests/fixtures/kvstore/* from MXNet 1.9.1 (run with /tmp/mxref/bin/python).

Scenarios for the single-process KVStore: summation order of the CPU and device stores,
push/pull/pushpull/broadcast with int and str keys, values on several contexts, the optimizer
inside the store, 2-bit gradient compression (quantised values, residual feedback, weights),
and the errors MXNet raises (type and message).
"""
import json
import os

import numpy as np
import mxnet as mx
from mxnet import nd

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures",
                   "kvstore")


def last_line(err):
    lines = [ln for ln in str(err).split("\n") if ln.strip()]
    return lines[-1] if lines else ""


def record_error(fn):
    try:
        fn()
        mx.nd.waitall()
    except Exception as err:  # noqa: BLE001 - record what MXNet raises
        return {"error": type(err).__name__, "message": last_line(err)}
    return {"error": None}


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.RandomState(7)
    arrays = {}
    meta = {}

    # 1. summation order: values with very different magnitudes expose the order.
    for n in (2, 3, 5, 6):
        vals = [(rng.randn(64) * 10.0 ** rng.randint(-4, 5, size=64)).astype(np.float32)
                for _ in range(n)]
        for j, v in enumerate(vals):
            arrays[f"sum{n}_in{j}"] = v
        for kind in ("local", "device", "local_allreduce_cpu", "local_allreduce_device"):
            kv = mx.kv.create(kind)
            kv.init(0, nd.zeros(64))
            kv.push(0, [nd.array(v, ctx=mx.cpu(j)) for j, v in enumerate(vals)])
            out = nd.zeros(64)
            kv.pull(0, out=out)
            arrays[f"sum{n}_{kind}"] = out.asnumpy()

    # 2. several keys, several contexts, int and str keys, pushpull with and without out
    shapes = [(3, 4), (5,), (2, 2, 3)]
    for keys, tag in (([3, 7, 9], "int"), (["w", "b", "c"], "str")):
        kv = mx.kv.create("device")
        init = [rng.randn(*s).astype(np.float32) for s in shapes]
        for j, x in enumerate(init):
            arrays[f"multi_{tag}_init{j}"] = x
        outs = [[nd.zeros(s, ctx=mx.cpu(c)) for c in range(2)] for s in shapes]
        kv.broadcast(keys, [nd.array(x) for x in init], out=outs)
        for j in range(3):
            arrays[f"multi_{tag}_bcast{j}"] = outs[j][1].asnumpy()
        grads = [[rng.randn(*s).astype(np.float32) for _ in range(2)] for s in shapes]
        for j in range(3):
            for c in range(2):
                arrays[f"multi_{tag}_g{j}_{c}"] = grads[j][c]
        vals = [[nd.array(g, ctx=mx.cpu(c)) for c, g in enumerate(gs)] for gs in grads]
        kv.pushpull(keys, vals)
        for j in range(3):
            arrays[f"multi_{tag}_pp{j}"] = vals[j][0].asnumpy()
        kv.pull(keys[1], out=outs[1])
        arrays[f"multi_{tag}_pull1"] = outs[1][0].asnumpy()

    # 3. the optimizer inside the store: SGD with momentum and Adam over several steps
    for optname, kwargs in (("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01,
                                     "rescale_grad": 0.5}),
                            ("adam", {"learning_rate": 0.01, "wd": 0.001})):
        kv = mx.kv.create("local")
        kv.set_optimizer(mx.optimizer.create(optname, **kwargs))
        w0 = [rng.randn(*s).astype(np.float32) for s in shapes]
        for j, x in enumerate(w0):
            arrays[f"opt_{optname}_w0_{j}"] = x
        kv.init([0, 1, 2], [nd.array(x) for x in w0])
        for step in range(3):
            gs = [[rng.randn(*s).astype(np.float32) for _ in range(2)] for s in shapes]
            for j in range(3):
                for c in range(2):
                    arrays[f"opt_{optname}_s{step}_g{j}_{c}"] = gs[j][c]
            outs = [[nd.zeros(s, ctx=mx.cpu(c)) for c in range(2)] for s in shapes]
            kv.pushpull([0, 1, 2], [[nd.array(g, ctx=mx.cpu(c)) for c, g in enumerate(gg)]
                                    for gg in gs], out=outs)
            for j in range(3):
                arrays[f"opt_{optname}_s{step}_w{j}"] = outs[j][1].asnumpy()
        meta[f"opt_{optname}"] = kwargs

    # 4. 2-bit compression: quantised sums (no updater) and weights (with SGD)
    comp_cases = [("c1", 0.5, 1), ("c2", 0.5, 2), ("c3", 0.25, 3), ("c4", 2.0, 2)]
    meta["compression"] = []
    for tag, thr, nsrc in comp_cases:
        kv = mx.kv.create("device")
        kv.set_gradient_compression({"type": "2bit", "threshold": thr})
        kv.init("k", nd.zeros(37))
        steps = []
        for step in range(4):
            gs = [(rng.randn(37) * thr).astype(np.float32) for _ in range(nsrc)]
            for c, g in enumerate(gs):
                arrays[f"comp_{tag}_s{step}_g{c}"] = g
            kv.push("k", [nd.array(g, ctx=mx.cpu(c)) for c, g in enumerate(gs)])
            out = nd.zeros(37)
            kv.pull("k", out=out)
            arrays[f"comp_{tag}_s{step}_out"] = out.asnumpy()
            steps.append(step)
        meta["compression"].append({"tag": tag, "threshold": thr, "sources": nsrc,
                                    "steps": len(steps)})
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.3})
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    w = rng.randn(4, 5).astype(np.float32)
    arrays["comp_sgd_w0"] = w
    kv.init(0, nd.array(w))
    for step in range(4):
        gs = [rng.randn(4, 5).astype(np.float32) * 0.4 for _ in range(2)]
        for c, g in enumerate(gs):
            arrays[f"comp_sgd_s{step}_g{c}"] = g
        outs = [nd.zeros((4, 5), ctx=mx.cpu(c)) for c in range(2)]
        kv.pushpull(0, [nd.array(g, ctx=mx.cpu(c)) for c, g in enumerate(gs)], out=outs)
        arrays[f"comp_sgd_s{step}_w"] = outs[1].asnumpy()
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit"})
    kv.init(0, nd.zeros(5))
    kv.push(0, [nd.array([0.3, 0.6, -0.7, -0.2, 1.6])] * 2)
    out = nd.zeros(5)
    kv.pull(0, out=out)
    arrays["comp_default_threshold"] = out.asnumpy()

    # 5. a user updater set with _set_updater (called with the key, the sum and the stored value)
    kv = mx.kv.create("local")
    kv.init(5, nd.ones(3))

    def upd(key, inp, stored):
        stored[:] = stored * 0.5 + inp * 2

    kv._set_updater(upd)
    kv.push(5, [nd.array([1.0, 2.0, 3.0]), nd.array([0.5, 0.5, 0.5], ctx=mx.cpu(1))])
    out = nd.zeros(3)
    kv.pull(5, out=out)
    arrays["custom_updater"] = out.asnumpy()

    # 6. errors
    errors = {}
    kv = mx.kv.create("local")
    kv.init(3, nd.ones((2, 3)))
    errors["duplicate_init"] = record_error(lambda: kv.init(3, nd.ones((2, 3))))
    errors["mixed_keys"] = record_error(lambda: kv.init("a", nd.ones((2, 3))))
    errors["mixed_keys_one_call"] = record_error(
        lambda: mx.kv.create("local").init([6, "b"], [nd.ones(2)] * 2))
    errors["push_uninit"] = record_error(lambda: kv.push(5, nd.ones((2, 3))))
    errors["pull_uninit"] = record_error(lambda: kv.pull(5, out=nd.ones((2, 3))))
    errors["pull_shape"] = record_error(lambda: kv.pull(3, out=nd.ones((2, 4))))
    errors["init_one_key_two_values"] = record_error(
        lambda: kv.init(7, [nd.ones((2, 3)), nd.ones((2, 3))]))
    errors["float_key"] = record_error(lambda: kv.push(1.5, nd.ones((2, 3))))
    errors["pull_no_out"] = record_error(lambda: kv.pull(3))
    errors["gc_local"] = record_error(
        lambda: mx.kv.create("local").set_gradient_compression({"type": "2bit"}))
    dev = mx.kv.create("device")
    errors["gc_unknown"] = record_error(lambda: dev.set_gradient_compression({"type": "3bit"}))
    errors["gc_negative"] = record_error(
        lambda: dev.set_gradient_compression({"type": "2bit", "threshold": -1}))
    errors["gc_zero"] = record_error(
        lambda: dev.set_gradient_compression({"type": "2bit", "threshold": 0}))
    errors["gc_no_type"] = record_error(lambda: dev.set_gradient_compression({"threshold": 0.5}))
    errors["gc_bad_threshold"] = record_error(
        lambda: dev.set_gradient_compression({"type": "2bit", "threshold": "abc"}))
    errors["gc_not_dict"] = record_error(lambda: dev.set_gradient_compression("2bit"))
    errors["gc_unknown_key"] = record_error(
        lambda: dev.set_gradient_compression({"type": "2bit", "foo": 1}))
    errors["capability"] = record_error(lambda: kv.is_capable("foo"))
    errors["save_no_updater"] = record_error(
        lambda: kv.save_optimizer_states(os.path.join(OUT, "never_written")))
    errors["create_int"] = record_error(lambda: mx.kv.create(3))
    errors["row_sparse_pull_no_row_ids"] = record_error(
        lambda: kv.row_sparse_pull(3, out=nd.sparse.zeros("row_sparse", (2, 3))))
    errors["row_sparse_pull_dense"] = record_error(
        lambda: kv.row_sparse_pull(3, out=nd.sparse.zeros("row_sparse", (2, 3)),
                                   row_ids=nd.array([0])))
    meta["errors"] = errors

    meta["types"] = {}
    for name in ("local", "device", "local_allreduce_cpu", "local_allreduce_device",
                 "local_update_cpu", "Local", "teststore"):
        kvx = mx.kv.create(name)
        meta["types"][name] = {"type": kvx.type, "class": type(kvx).__name__,
                               "rank": kvx.rank, "num_workers": kvx.num_workers,
                               "optimizer": kvx.is_capable("optimizer")}

    np.savez_compressed(os.path.join(OUT, "kvstore.npz"), **arrays)
    with open(os.path.join(OUT, "kvstore.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
