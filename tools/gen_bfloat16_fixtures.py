"""Record how MXNet 1.9.1 reports and converts bfloat16 NDArrays.

    /tmp/mxref/bin/python tools/gen_bfloat16_fixtures.py
    # writes tests/fixtures/bfloat16/cases.json

MXNet's bfloat16 dtype is the structured numpy dtype ``[('bfloat16', '<u2')]``
(``mx.contrib.amp.amp.bfloat16``, ``_DTYPE_MX_TO_NP[12]``). Recorded: ``.dtype`` of arrays
made by ``astype``/``zeros``/``ones``/``amp_cast``/arithmetic, its comparisons, ``str``, what
``asnumpy`` returns (the raw bits), the bits ``astype``/``Cast`` (truncating) and
``amp_cast`` (rounding to nearest even) give, the round trip through ``asnumpy`` and
``nd.array``, and the symbol's inferred types.
"""
import json
import os

import mxnet as mx
import numpy as np
from mxnet.contrib.amp.amp import bfloat16 as BF

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests",
                   "fixtures", "bfloat16")
vals = [1.7, -1.7, 1.00390625, 1.01171875, 0.0, -0.0, float("inf"), 3.4e38, 1e-40, 3.14159]
x = mx.nd.array(vals)
b = x.astype(BF)
rec = {
    "mxnet": mx.__version__,
    "dtype_str": str(b.dtype),
    "dtype_repr": repr(b.dtype),
    "dtype_names": list(b.dtype.names),
    "itemsize": b.dtype.itemsize,
    "eq_float32": bool(b.dtype == np.float32),
    "eq_amp_bfloat16": bool(b.dtype == BF),
    "eq_code12": bool(b.dtype == mx.ndarray.ndarray._DTYPE_MX_TO_NP[12]),
    "np_name": np.dtype(b.dtype).name,
    "values": vals,
    "astype_bits": b.asnumpy().view(np.uint16).tolist(),
    "cast_bits": mx.nd.Cast(x, dtype=BF).asnumpy().view(np.uint16).tolist(),
    "amp_cast_bits": mx.nd.amp_cast(x, dtype=BF).asnumpy().view(np.uint16).tolist(),
    "asnumpy_dtype": str(b.asnumpy().dtype),
    "asnumpy_shape": list(b.reshape((2, 5)).asnumpy().shape),
    "back_to_float32": b.astype("float32").asnumpy().tolist(),
    "zeros_dtype": str(mx.nd.zeros((2,), dtype=BF).dtype),
    "ones_bits": mx.nd.ones((2,), dtype=BF).asnumpy().view(np.uint16).tolist(),
    "sum_dtype": str((b + b).dtype),
    "sum_bits": (b + b).asnumpy().view(np.uint16).tolist(),
    "to_float16_dtype": str(b.astype(np.float16).dtype),
    "roundtrip_bits": mx.nd.array(b.asnumpy(), dtype=BF).asnumpy().view(np.uint16).tolist(),
    "symbol_infer_type": [str(t) for t in
                          mx.sym.exp(mx.sym.var("x", dtype=BF)).infer_type()[1]],
    "symbol_var_dtype_attr": mx.sym.var("x", dtype=BF).attr("__dtype__"),
}
for name, fn in (("astype_string", lambda: mx.nd.ones(2).astype("bfloat16")),
                 ("ones_string", lambda: mx.nd.ones(2, dtype="bfloat16"))):
    try:
        fn()
        rec[name] = "ok"
    except TypeError as e:
        rec[name] = f"TypeError: {e}"
os.makedirs(OUT, exist_ok=True)
with open(os.path.join(OUT, "cases.json"), "w") as f:
    json.dump(rec, f, indent=1)
