"""Generate the sparse-storage fixtures from real MXNet 1.9.1.

Run with the oracle interpreter:

    /tmp/mxref/bin/python tools/gen_sparse_fixtures.py      # writes tests/fixtures/sparse/*

Scenarios are source code shared by both sides: ``tests/sparse_cases.py`` holds a prelude and a
list of ``(name, code)`` pairs; each code string leaves its result in ``out``. This script runs
them in MXNet and records, for every result, its class, storage type, dtype, shape, dense
values and aux arrays (or the error MXNet raised). ``tests/test_sparse.py`` runs the same code
in neogluon and compares. It also stores the bytes MXNet's ``nd.save`` writes for a few sparse
arrays, to check neogluon's record writer and reader byte for byte.
"""
from __future__ import annotations

import base64
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "sparse")

import sparse_cases  # noqa: E402


def describe(value):
    """A JSON-able record of a scenario's result."""
    import mxnet as mx
    if isinstance(value, (list, tuple)):
        return {"kind": "list", "items": [describe(v) for v in value]}
    if isinstance(value, mx.nd.NDArray):
        rec = {"kind": "array", "cls": type(value).__name__, "stype": value.stype,
               "dtype": np.dtype(value.dtype).name, "shape": list(value.shape),
               "value": value.asnumpy().tolist()}
        if value.stype == "row_sparse":
            rec["aux"] = [value.indices.asnumpy().tolist()]
        elif value.stype == "csr":
            rec["aux"] = [value.indptr.asnumpy().tolist(), value.indices.asnumpy().tolist()]
        return rec
    if isinstance(value, (bool, int, float, str)) or value is None:
        return {"kind": "py", "value": value}
    if isinstance(value, np.generic):
        return {"kind": "py", "value": value.item()}
    if isinstance(value, type):
        return {"kind": "py", "value": value.__name__}
    return {"kind": "py", "value": repr(value)}


def run_cases():
    import mxnet as mx
    results = {}
    for name, code in sparse_cases.CASES:
        ns = sparse_cases.namespace(mx)
        try:
            exec(code, ns)  # noqa: S102 - our own scenario source
            results[name] = {"ok": True, "out": describe(ns["out"])}
        except Exception as err:  # noqa: BLE001 - the error is the fixture
            results[name] = {"ok": False, "error": type(err).__name__,
                             "message": str(err).split("\n")[0][:300]}
    return results


def save_records():
    """Bytes of MXNet's nd.save for a few sparse arrays (whole files, base64)."""
    import mxnet as mx
    import tempfile
    nd = mx.nd
    arrays = {
        "rsp": nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [0, 2]), shape=(4, 2)),
        "rsp_empty": nd.sparse.zeros("row_sparse", (3, 2)),
        "rsp_f64_3d": nd.sparse.row_sparse_array(
            (np.arange(12, dtype="float64").reshape(2, 3, 2), [1, 4]), shape=(5, 3, 2)),
        "csr": nd.sparse.csr_matrix(([1, 2, 3], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 3)),
        "csr_int32": nd.sparse.csr_matrix(
            (np.array([5, 6], dtype="int32"), [3, 0], [0, 1, 1, 2]), shape=(3, 4)),
    }
    out = {}
    with tempfile.TemporaryDirectory() as d:
        for key, arr in arrays.items():
            p = os.path.join(d, key)
            nd.save(p, [arr])
            with open(p, "rb") as f:
                out[key] = base64.b64encode(f.read()).decode()
        p = os.path.join(d, "dict")
        nd.save(p, {"w": arrays["rsp"], "x": arrays["csr"], "d": nd.array([1, 2])})
        with open(p, "rb") as f:
            out["dict_mixed"] = base64.b64encode(f.read()).decode()
    return out


def main():
    import mxnet as mx
    assert mx.__version__ == "1.9.1", mx.__version__
    os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
    os.makedirs(OUT, exist_ok=True)
    payload = {"mxnet": mx.__version__, "cases": run_cases(), "files": save_records()}
    path = os.path.join(OUT, "sparse_cases.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(payload, f, indent=0, sort_keys=True)
    os.replace(tmp, path)
    n_err = sum(not r["ok"] for r in payload["cases"].values())
    print(f"wrote {path}: {len(payload['cases'])} cases ({n_err} raise)")


if __name__ == "__main__":
    main()


# ------------------------------------------------------------------ optimizer scenarios
# (name, optimizer name, kwargs, weight stype). Each runs STEPS updates with row_sparse
# gradients through mx.optimizer.get_updater and records the weight after every step and the
# states at the end. tests/test_sparse_optimizer.py replays them.
OPT_CASES = [
    ("sgd_lazy", "sgd", dict(learning_rate=0.1, wd=0.1, rescale_grad=0.5), "default"),
    ("sgd_nolazy", "sgd", dict(learning_rate=0.1, wd=0.1, rescale_grad=0.5, lazy_update=False), "default"),
    ("sgd_mom_lazy", "sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.1, rescale_grad=0.5), "default"),
    ("sgd_mom_nolazy", "sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.1, rescale_grad=0.5, lazy_update=False), "default"),
    ("sgd_mom_clip_lazy", "sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.01, clip_gradient=0.3), "default"),
    ("adam_lazy", "adam", dict(learning_rate=0.01, wd=0.1, rescale_grad=0.5), "default"),
    ("adam_nolazy", "adam", dict(learning_rate=0.01, wd=0.1, rescale_grad=0.5, lazy_update=False), "default"),
    ("adam_clip_lazy", "adam", dict(learning_rate=0.01, clip_gradient=0.2), "default"),
    ("adagrad", "adagrad", dict(learning_rate=0.1, rescale_grad=0.5), "default"),
    ("adagrad_wd", "adagrad", dict(learning_rate=0.1, wd=0.1), "default"),
    ("ftrl", "ftrl", dict(learning_rate=0.1, wd=0.1, lamda1=0.01), "default"),
    ("rmsprop", "rmsprop", dict(learning_rate=0.01, wd=0.1), "default"),
    ("rmsprop_centered", "rmsprop", dict(learning_rate=0.01, centered=True), "default"),
    ("signum", "signum", dict(learning_rate=0.01, momentum=0.9, wd=0.1), "default"),
    ("signsgd", "signum", dict(learning_rate=0.01, momentum=0.0, wd=0.1), "default"),
    ("nag", "nag", dict(learning_rate=0.1, momentum=0.9, wd=0.1), "default"),
    ("adadelta", "adadelta", dict(wd=0.1), "default"),
    ("adamax", "adamax", dict(learning_rate=0.01, wd=0.1), "default"),
    ("nadam", "nadam", dict(learning_rate=0.01, wd=0.1), "default"),
    ("ftml", "ftml", dict(learning_rate=0.01, wd=0.1), "default"),
    ("group_adagrad", "groupadagrad", dict(learning_rate=0.1, rescale_grad=0.5), "default"),
    ("lars", "lars", dict(learning_rate=0.1, momentum=0.9, wd=0.1), "default"),
    ("lars_nolazy", "lars", dict(learning_rate=0.1, momentum=0.9, wd=0.1, lazy_update=False), "default"),
    ("lamb", "lamb", dict(learning_rate=0.01, wd=0.1), "default"),
    ("dcasgd", "dcasgd", dict(learning_rate=0.1, momentum=0.9, wd=0.1), "default"),
    ("lbsgd", "lbsgd", dict(learning_rate=0.1, momentum=0.9, wd=0.1), "default"),
    ("ccsgd", "ccsgd", dict(learning_rate=0.1, momentum=0.9, wd=0.1), "default"),
    ("sgd_mp_fp16", "sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.1, multi_precision=True), "default_fp16"),
    ("adam_mp_fp16", "adam", dict(learning_rate=0.01, wd=0.1, multi_precision=True), "default_fp16"),
    ("sgd_fp16_lazy", "sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.1), "default_fp16"),
    # row_sparse weights (the Trainer's sparse-weight regime, updated on the KVStore)
    ("rsp_w_sgd_mom_lazy", "sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.1), "row_sparse"),
    ("rsp_w_sgd_mom_nolazy", "sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.1, lazy_update=False), "row_sparse"),
    ("rsp_w_sgd_lazy", "sgd", dict(learning_rate=0.1, wd=0.1), "row_sparse"),
    ("rsp_w_adam_lazy", "adam", dict(learning_rate=0.01, wd=0.1), "row_sparse"),
    ("rsp_w_adam_nolazy", "adam", dict(learning_rate=0.01, wd=0.1, lazy_update=False), "row_sparse"),
    ("rsp_w_adagrad", "adagrad", dict(learning_rate=0.1), "row_sparse"),
    ("rsp_w_ftrl", "ftrl", dict(learning_rate=0.1, wd=0.1), "row_sparse"),
]
OPT_ROWS = [[0, 2], [2, 5], [1, 2, 4]]
OPT_SHAPE = (6, 3)


def opt_inputs():
    r = np.random.RandomState(11)
    w0 = r.uniform(-1, 1, size=OPT_SHAPE).astype("float32")
    grads = [r.uniform(-1, 1, size=(len(rows), OPT_SHAPE[1])).astype("float32")
             for rows in OPT_ROWS]
    return w0, grads


def run_opt_cases():
    import mxnet as mx
    import mxnet.optimizer.contrib  # noqa: F401 - registers GroupAdaGrad
    w0, grads = opt_inputs()
    out = {}
    for name, opt_name, kwargs, wstype in OPT_CASES:
        try:
            opt = mx.optimizer.create(opt_name, **kwargs)
            upd = mx.optimizer.get_updater(opt)
            dt = "float16" if wstype.endswith("_fp16") else "float32"
            w = mx.nd.array(w0, dtype=dt)
            if wstype.split("_")[0] != "default":
                w = w.tostype(wstype)
            steps = []
            for rows, g in zip(OPT_ROWS, grads):
                grad = mx.nd.sparse.row_sparse_array((g.astype(dt), rows), shape=OPT_SHAPE)
                upd(0, grad, w)
                steps.append(w.asnumpy().tolist())
            st = upd.states[0]
            st = st if isinstance(st, (list, tuple)) else [st]
            flat = []
            for x in st:  # multi-precision states nest (state, master weight)
                flat.extend(x if isinstance(x, (list, tuple)) else [x])
            out[name] = {"ok": True, "steps": steps, "weight_stype": w.stype,
                         "states": [None if s is None else s.asnumpy().tolist() for s in flat],
                         "state_stypes": [None if s is None else s.stype for s in flat]}
        except Exception as err:  # noqa: BLE001 - the error is the fixture
            out[name] = {"ok": False, "error": type(err).__name__,
                         "message": str(err).split("\n")[0][:300]}
    return out


def main_opt():
    import mxnet as mx
    w0, grads = opt_inputs()
    payload = {"mxnet": mx.__version__, "rows": OPT_ROWS, "shape": list(OPT_SHAPE),
               "w0": w0.tolist(), "grads": [g.tolist() for g in grads],
               "cases": {n: dict(opt=o, kwargs=k, wstype=s) for n, o, k, s in OPT_CASES},
               "results": run_opt_cases()}
    path = os.path.join(OUT, "sparse_optimizer.json")
    with open(path + ".tmp", "w") as f:
        json.dump(payload, f, indent=0, sort_keys=True)
    os.replace(path + ".tmp", path)
    bad = {k: v["message"] for k, v in payload["results"].items() if not v["ok"]}
    print(f"wrote {path}: {len(OPT_CASES)} optimizer cases; errors: {bad}")


if __name__ == "__main__":
    main_opt()
