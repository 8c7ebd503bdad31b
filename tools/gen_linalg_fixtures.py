"""Fixtures for ``mx.nd.linalg`` (MXNet 1.9.1's la_op operators): forward outputs and the
gradients of every input for a fixed head gradient, on batched inputs, with each operator's
options (transposes, alpha/beta, axis, lower/upper, rightside, offsets).

    /tmp/mxref/bin/python tools/gen_linalg_fixtures.py    # writes tests/fixtures/linalg/

Cases whose MXNet call fails record the error's first line instead.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from fixture_record import Recorder  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "fixtures", "linalg")


def _spd(rng, batch, n):
    a = rng.uniform(-1, 1, batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float32)


def cases():
    """(name, op, inputs {name: array}, kwargs) for every scenario."""
    rng = np.random.RandomState(7)
    u = lambda *s: rng.uniform(-1, 1, s).astype(np.float32)  # noqa: E731
    spd = _spd(rng, (2,), 3)
    lower = np.linalg.cholesky(spd.astype(np.float64)).astype(np.float32)
    full = u(2, 3, 3) + 3 * np.eye(3, dtype=np.float32)   # both triangles set: only one is read
    out = [
        ("gemm", "gemm", dict(A=u(2, 3, 4), B=u(2, 4, 5), C=u(2, 3, 5)), dict(alpha=2.0, beta=0.5)),
        ("gemm_tt", "gemm", dict(A=u(2, 4, 3), B=u(2, 5, 4), C=u(2, 3, 5)),
         dict(transpose_a=True, transpose_b=True)),
        ("gemm_axis", "gemm", dict(A=u(3, 2, 4), B=u(4, 2, 5), C=u(3, 2, 5)), dict(axis=-3)),
        ("gemm2", "gemm2", dict(A=u(2, 3, 4), B=u(2, 4, 5)), dict(alpha=-1.5)),
        ("gemm2_tb", "gemm2", dict(A=u(3, 4), B=u(5, 4)), dict(transpose_b=True)),
        ("gemm2_ta_axis", "gemm2", dict(A=u(4, 2, 3), B=u(4, 2, 5)),
         dict(transpose_a=True, axis=0)),
        ("potrf", "potrf", dict(A=spd), {}),
        ("potri", "potri", dict(A=lower), {}),
        ("trmm", "trmm", dict(A=full, B=u(2, 3, 4)), dict(alpha=2.0)),
        ("trmm_upper_t", "trmm", dict(A=full, B=u(2, 3, 4)), dict(lower=False, transpose=True)),
        ("trmm_right", "trmm", dict(A=full, B=u(2, 4, 3)), dict(rightside=True)),
        ("trsm", "trsm", dict(A=full, B=u(2, 3, 4)), dict(alpha=0.5)),
        ("trsm_upper_right_t", "trsm", dict(A=full, B=u(2, 4, 3)),
         dict(lower=False, rightside=True, transpose=True)),
        ("sumlogdiag", "sumlogdiag", dict(A=spd), {}),
        ("syrk", "syrk", dict(A=u(2, 3, 4)), dict(alpha=0.7)),
        ("syrk_t", "syrk", dict(A=u(2, 3, 4)), dict(transpose=True)),
        ("gelqf", "gelqf", dict(A=u(2, 3, 5)), {}),
        ("syevd", "syevd", dict(A=spd), {}),
        ("inverse", "inverse", dict(A=full), {}),
        ("det", "det", dict(A=full), {}),
        ("slogdet", "slogdet", dict(A=u(2, 3, 3)), {}),
        ("extractdiag", "extractdiag", dict(A=u(2, 4, 4)), {}),
        ("extractdiag_off", "extractdiag", dict(A=u(2, 4, 4)), dict(offset=1)),
        ("makediag", "makediag", dict(A=u(2, 3)), dict(offset=-1)),
        ("extracttrian", "extracttrian", dict(A=u(2, 3, 3)), {}),
        ("extracttrian_up", "extracttrian", dict(A=u(2, 4, 4)), dict(offset=1, lower=False)),
        ("maketrian", "maketrian", dict(A=u(2, 6)), {}),
        ("maketrian_up_off", "maketrian", dict(A=u(2, 3)), dict(offset=1, lower=False)),
        ("potrf_not_pd", "potrf", dict(A=-spd), {}),
        ("gemm2_bad_shape", "gemm2", dict(A=u(3, 4), B=u(3, 4)), {}),
    ]
    return out


def main():
    import mxnet as mx
    from mxnet import autograd, nd

    os.makedirs(OUT, exist_ok=True)
    rec = Recorder()
    hg_rng = np.random.RandomState(11)
    for name, op, inputs, kwargs in cases():
        arrs = {k: nd.array(v) for k, v in inputs.items()}
        for a in arrs.values():
            a.attach_grad()
        try:
            with autograd.record():
                res = getattr(nd.linalg, op)(**arrs, **kwargs)
            outs = res if isinstance(res, (list, tuple)) else [res]
            heads = [nd.array(hg_rng.uniform(-1, 1, o.shape).astype(np.float32)) for o in outs]
            autograd.backward(list(outs), heads)
            mx.nd.waitall()
            rec.put(name, {"inputs": inputs, "kwargs": kwargs, "op": op,
                           "outputs": [o.asnumpy() for o in outs],
                           "heads": [h.asnumpy() for h in heads],
                           "grads": {k: a.grad.asnumpy() for k, a in arrs.items()}})
        except Exception as e:  # noqa: BLE001 - recorded as data
            lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
            keep = [ln for ln in lines if "Check failed" in ln or ln.startswith("MXNetError")]
            rec.put(name, {"inputs": inputs, "kwargs": kwargs, "op": op,
                           "error": (keep or lines or [""])[0][:300]})
    np.savez(os.path.join(OUT, "linalg.npz"), **rec.arrays)
    with open(os.path.join(OUT, "linalg.json"), "w") as f:
        json.dump(rec.meta, f, indent=1, sort_keys=True)
    print("wrote", len(rec.meta), "cases to", OUT)


if __name__ == "__main__":
    main()
