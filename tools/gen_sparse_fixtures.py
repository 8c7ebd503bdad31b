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
