"""Fixtures for the non-detection ``nd.contrib`` operators of tests/contrib_ops_cases.py
(BilinearResize2D in every mode, AdaptiveAvgPooling2D, interleaved_matmul_*, div_sqrt_dim,
arange_like, SyncBatchNorm, foreach/while_loop/cond, and the nd.softmax/reshape_like cases
GluonNLP needed) from MXNet 1.9.1: outputs, input gradients, and the error type of
calls MXNet refuses.

    /tmp/mxref/bin/python tools/gen_contrib_ops_fixtures.py   # tests/fixtures/contrib_ops/
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import mxnet as mx  # noqa: E402
import contrib_ops_cases  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "fixtures", "contrib_ops")

ERROR_CASES = [
    ("bilinear_one_scale", "BilinearResize2D", [(1, 1, 5, 6)],
     {"scale_height": 2.0, "mode": "size"}),
    ("bilinear_like_without_mode", "BilinearResize2D", [(1, 1, 5, 6), (1, 1, 3, 3)], {}),
    ("bilinear_3d", "BilinearResize2D", [(1, 5, 6)], {"height": 2, "width": 2}),
    ("adaptive_3d", "AdaptiveAvgPooling2D", [(1, 5, 6)], {"output_size": 2}),
]


def main():
    os.makedirs(OUT, exist_ok=True)
    arrays, index = {}, {}
    for case in contrib_ops_cases.CASES:
        name = case[0]
        out, grads, aux = contrib_ops_cases.run_case(mx, case)
        arrays[f"{name}/out"] = out
        for i, g in enumerate(grads):
            if g is not None:
                arrays[f"{name}/grad{i}"] = g
        for i, a in enumerate(aux):
            arrays[f"{name}/aux{i}"] = a
        index[name] = {"out_dtype": str(out.dtype), "grads": [g is not None for g in grads]}
    errors = {}
    for name, op, shapes, kwargs in ERROR_CASES:
        try:
            getattr(mx.nd.contrib, op)(*[mx.nd.ones(s) for s in shapes], **kwargs).wait_to_read()
            errors[name] = None
        except Exception as e:  # noqa: BLE001 - recorded
            errors[name] = type(e).__name__
    np.savez_compressed(os.path.join(OUT, "contrib_ops.npz"), **arrays)
    with open(os.path.join(OUT, "contrib_ops.json"), "w") as f:
        json.dump({"cases": index, "errors": errors,
                   "control_flow": contrib_ops_cases.run_control_flow(mx)},
                  f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
