"""Generate the autograd fixtures from real MXNet 1.9.1.

Run with the oracle interpreter:

    /tmp/mxref/bin/python tools/gen_autograd_fixtures.py   # writes tests/fixtures/autograd/*

``sparse_grads.json``: the gradient of a sparse variable (row_sparse or csr, with a gradient
buffer of its own stype or dense) through sparse-preserving and mixed operators, with no head
gradient, a dense one, or one of the head's stype. MXNet differentiates the dense array, so
gradients also reach positions that neither the variable nor the result store (d(2x)/dx is 2
everywhere). ``tests/test_autograd.py`` replays the same cases (``SPARSE_GRAD_OPS``) in
neogluon. Cases where MXNet itself fails (csr * dense with a dense gradient buffer) are left
out.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "autograd")
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from autograd_cases import SPARSE_GRAD_OPS, SPARSE_INPUTS, sparse_grad_cases  # noqa: E402


def main():
    os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
    import mxnet as mx
    records = []
    for case in sparse_grad_cases():
        stype, xname, og, gst, opname = case
        if stype == "csr" and gst == "default" and opname == "densemul":
            continue  # MXNet 1.9.1 fails: no csr * dense backward into a dense buffer
        x = mx.nd.array(SPARSE_INPUTS[xname]).tostype(stype)
        x.attach_grad(stype=gst)
        with mx.autograd.record():
            y = SPARSE_GRAD_OPS[opname](mx, x)
        y.backward(out_grad=None if og is None else mx.nd.ones_like(y).tostype(og))
        records.append({"case": list(case), "y_stype": y.stype, "grad_stype": x.grad.stype,
                        "grad": x.grad.asnumpy().tolist()})
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "sparse_grads.json"), "w") as f:
        json.dump({"mxnet": mx.__version__, "records": records}, f, indent=0)
    print(f"{len(records)} cases")


if __name__ == "__main__":
    main()
