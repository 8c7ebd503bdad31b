"""Record MXNet 1.9.1's unfused quantized operators on CPU (oneDNN build).

    /tmp/mxref/bin/python tools/gen_quantized_ops_fixtures.py
    # writes tests/fixtures/quantized_ops/{cases.json, cases.npz}

Each case calls ``mx.nd.contrib.<op>`` on int8/uint8 codes and float ranges (``quantize``
on float data) and records every output (codes and ranges) or the error. MXNet 1.9.1's
``nd.contrib.quantized_elemwise_mul`` fails in the imperative path (a shape-check bug), so
its cases run through a bound symbol (``via: symbol``). ``graph``: MXNet's unfused quantized
graph of a small conv/relu/fc net (``quantize_model``), every internal output recorded.
``quantize_asym`` is not recorded:
it crashes MXNet 1.9.1 (segmentation fault). The processor's int8 kind is recorded as
``isa`` (oneDNN's non-VNNI kernels saturate u8 x s8 pair sums; see
neogluon/ndarray/quantization.py).
"""
import json
import os
import sys

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
OUT = os.path.join(REPO, "tests", "fixtures", "quantized_ops")
rng = np.random.RandomState(31)
arrays = {}
cases = []


def _isa():
    with open("/proc/cpuinfo") as f:
        flags = next((ln for ln in f if ln.startswith("flags")), "").split()
    return "vnni" if {"avx512_vnni", "amx_int8"} & set(flags) else "avx2"


def _err(e):
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else type(e).__name__


def _store(prefix, a):
    key = f"{prefix}/{len(arrays)}"
    arrays[key] = np.ascontiguousarray(a)
    return key


def case(name, op, inputs, kwargs, via="nd"):
    """``inputs``: numpy arrays (their dtype is the NDArray's)."""
    keys = [_store("in", a) for a in inputs]
    rec = {"name": name, "op": op, "inputs": keys, "kwargs": kwargs, "via": via}
    try:
        nds = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
        if via == "nd":
            res = getattr(mx.nd.contrib, op)(*nds, **kwargs)
        else:
            vs = [mx.sym.var(f"x{i}", dtype=a.dtype) for i, a in enumerate(inputs)]
            s = getattr(mx.sym.contrib, op)(*vs, **kwargs)
            ex = s.bind(mx.cpu(), {f"x{i}": v for i, v in enumerate(nds)})
            res = ex.forward()
        res = res if isinstance(res, (list, tuple)) else [res]
        outs = [r.asnumpy() for r in res]
        rec["outputs"] = [_store("out", o) for o in outs]
    except Exception as e:  # noqa: BLE001
        rec["error"] = _err(e)
    cases.append(rec)


def f32(*v):
    return np.array(v, dtype=np.float32)


def i8(shape):
    return rng.randint(-128, 128, shape).astype(np.int8)


def u8(shape):
    return rng.randint(0, 256, shape).astype(np.uint8)


# ------------------------------------------------------------------ quantize
x = np.concatenate([rng.uniform(-1.5, 1.5, 40), [0, 0.5 / 127, 1.5 / 127, -0.5 / 127,
                                                0.5 / 255, 2.5 / 255, 1.0, -1.0, 3.0, -3.0]])
x = x.astype(np.float32)
for ot in ("int8", "uint8"):
    for lo, hi in ((0.0, 1.0), (-1.0, 1.0), (-0.5, 2.0), (-3.0, 0.25)):
        case(f"quantize_{ot}_{lo}_{hi}", "quantize", [x, f32(lo), f32(hi)], {"out_type": ot})
case("quantize_default", "quantize", [x.reshape(5, 10), f32(0.0), f32(1.0)], {})
case("quantize_4d", "quantize", [x.reshape(1, 2, 5, 5), f32(-1.0), f32(1.0)],
     {"out_type": "int8"})
case("quantize_test_operator", "quantize",
     [f32(0.1392, 0.5928, 0.6027, 0.8579).reshape(2, 2), f32(0.0), f32(1.0)],
     {"out_type": "int8"})

# ------------------------------------------------------------------ act
case("act_relu_int8", "quantized_act", [i8((3, 4)), f32(-2.0), f32(3.0)], {"act_type": "relu"})
case("act_relu_uint8", "quantized_act", [u8((3, 4)), f32(0.0), f32(3.0)], {"act_type": "relu"})
case("act_sigmoid", "quantized_act", [i8((3, 4)), f32(-2.0), f32(3.0)],
     {"act_type": "sigmoid"})

# ------------------------------------------------------------------ batch norm
C = 3


def bn_params():
    return [rng.uniform(0.5, 2, C).astype(np.float32), rng.uniform(-1, 1, C).astype(np.float32),
            rng.uniform(-1, 1, C).astype(np.float32), rng.uniform(0.2, 3, C).astype(np.float32)]


case("bn_int8", "quantized_batch_norm", [i8((2, C, 3, 3))] + bn_params() + [f32(-2.), f32(2.)],
     {"min_calib_range": -3.0, "max_calib_range": 3.0})
case("bn_int8_nofix", "quantized_batch_norm",
     [i8((2, C, 3, 3))] + bn_params() + [f32(-1.), f32(1.5)],
     {"min_calib_range": -2.0, "max_calib_range": 1.0, "fix_gamma": False, "eps": 1e-5})
case("bn_int8_saturate", "quantized_batch_norm",
     [i8((1, C, 4, 4))] + bn_params() + [f32(-4.), f32(4.)],
     {"min_calib_range": -0.5, "max_calib_range": 0.5})
case("bn_uint8", "quantized_batch_norm", [u8((2, C, 3, 3))] + bn_params() + [f32(0.), f32(2.)],
     {"min_calib_range": -3.0, "max_calib_range": 3.0})
case("bn_nocalib", "quantized_batch_norm",
     [i8((2, C, 3, 3))] + bn_params() + [f32(-2.), f32(2.)], {})

# ------------------------------------------------------------------ conv
ranges = [f32(0.), f32(2.), f32(-1.), f32(0.5), f32(-3.), f32(1.)]
case("conv", "quantized_conv", [u8((2, 3, 5, 5)), i8((4, 3, 3, 3)), i8((4,))] + ranges,
     {"kernel": (3, 3), "num_filter": 4})
case("conv_pad_stride", "quantized_conv",
     [u8((1, 2, 6, 7)), i8((3, 2, 2, 3)), i8((3,))] + ranges,
     {"kernel": (2, 3), "num_filter": 3, "stride": (2, 1), "pad": (1, 1)})
case("conv_dilate_nobias", "quantized_conv", [u8((1, 2, 7, 7)), i8((2, 2, 3, 3))] + ranges[:4],
     {"kernel": (3, 3), "num_filter": 2, "dilate": (2, 2), "no_bias": True})
case("conv_3d", "quantized_conv", [u8((1, 2, 4, 4, 4)), i8((2, 2, 2, 2, 2)), i8((2,))] + ranges,
     {"kernel": (2, 2, 2), "num_filter": 2})
case("conv_int8_data", "quantized_conv", [i8((1, 2, 4, 4)), i8((2, 2, 2, 2)), i8((2,))] + ranges,
     {"kernel": (2, 2), "num_filter": 2})
case("conv_group", "quantized_conv", [u8((1, 4, 4, 4)), i8((2, 2, 2, 2)), i8((2,))] + ranges,
     {"kernel": (2, 2), "num_filter": 2, "num_group": 2})

# ------------------------------------------------------------------ fully connected
case("fc_int8", "quantized_fully_connected",
     [i8((4, 6)), i8((3, 6)), i8((3,)), f32(-1.), f32(2.), f32(-1.), f32(0.5), f32(-3.),
      f32(1.)], {"num_hidden": 3})
case("fc_uint8", "quantized_fully_connected",
     [u8((4, 6)), i8((3, 6)), i8((3,)), f32(0.), f32(2.), f32(-1.), f32(0.5), f32(-0.3),
      f32(0.7)], {"num_hidden": 3})
case("fc_flatten", "quantized_fully_connected",
     [i8((2, 2, 3)), i8((5, 6)), i8((5,)), f32(-1.), f32(2.), f32(-1.), f32(0.5), f32(-3.),
      f32(1.)], {"num_hidden": 5})
case("fc_noflatten", "quantized_fully_connected",
     [i8((2, 2, 3)), i8((5, 3)), i8((5,)), f32(-1.), f32(2.), f32(-1.), f32(0.5), f32(-3.),
      f32(1.)], {"num_hidden": 5, "flatten": False})
case("fc_nobias", "quantized_fully_connected",
     [u8((4, 6)), i8((3, 6)), f32(0.), f32(1.5), f32(-2.), f32(0.5)],
     {"num_hidden": 3, "no_bias": True})

# ------------------------------------------------------------------ elemwise add
r4 = [f32(-2.), f32(3.), f32(-1.), f32(0.5)]
for ta, tb in (("i8", "i8"), ("u8", "u8"), ("i8", "u8"), ("u8", "i8")):
    a = i8((3, 5)) if ta == "i8" else u8((3, 5))
    b = i8((3, 5)) if tb == "i8" else u8((3, 5))
    # (distinct input ranges per call: MXNet 1.9.1 caches the oneDNN sum by shapes and input
    # ranges only, so a second call differing only in the calibrated range would reuse the
    # first call's scales)
    lo = f32(-2.) if ta == "i8" else f32(0.)
    case(f"add_{ta}_{tb}", "quantized_elemwise_add", [a, b, lo, f32(3.), f32(-1.), f32(.5)], {})
    case(f"add_{ta}_{tb}_calib", "quantized_elemwise_add",
         [a, b, lo, f32(3.25), f32(-1.), f32(.5)],
         {"min_calib_range": -2.5, "max_calib_range": 4.0})
    case(f"add_{ta}_{tb}_calib_small", "quantized_elemwise_add",
         [a, b, lo, f32(3.5), f32(-1.), f32(.5)],
         {"min_calib_range": 0.0, "max_calib_range": 1.0})

# ------------------------------------------------------------------ elemwise mul
a, b = i8((4, 5)), i8((4, 5))
a[0, :3] = (127, -128, 127)
b[0, :3] = (127, -128, -128)
case("mul", "quantized_elemwise_mul", [a, b] + r4, {}, via="symbol")
case("mul_calib", "quantized_elemwise_mul", [a, b] + r4,
     {"min_calib_range": -2.0, "max_calib_range": 4.0}, via="symbol")
case("mul_calib_overflow", "quantized_elemwise_mul", [a, b] + r4,
     {"min_calib_range": -0.25, "max_calib_range": 0.25}, via="symbol")
case("mul_float", "quantized_elemwise_mul", [a, b] + r4, {"enable_float_output": True},
     via="symbol")

# ------------------------------------------------------------------ embedding
w = i8((6, 4))
case("embedding", "quantized_embedding",
     [np.array([[0, 5, 2], [1, 1, 3]], dtype=np.float32), w, f32(-1.), f32(2.)],
     {"input_dim": 6, "output_dim": 4})
case("embedding_clip", "quantized_embedding",
     [np.array([-3, 7, 2.7, 9], dtype=np.float32), w, f32(-1.), f32(2.)],
     {"input_dim": 6, "output_dim": 4})

# ------------------------------------------------------------------ requantize
big = (rng.randint(-2 ** 31, 2 ** 31 - 1, (12,)) // 1000).astype(np.int32)
small = rng.randint(0, 2 ** 20, (12,)).astype(np.int32)
for tag, q in (("big", big), ("small", small)):
    for kw in ({"out_type": "int8"}, {"out_type": "uint8"}, {"out_type": "auto"},
               {"out_type": "int8", "min_calib_range": -3.0, "max_calib_range": 2.0},
               {"out_type": "uint8", "min_calib_range": -3.0, "max_calib_range": 2.0},
               {"out_type": "auto", "min_calib_range": 0.5, "max_calib_range": 2.0}):
        case(f"requantize_{tag}_" + "_".join(f"{v}" for v in kw.values()), "requantize",
             [q, f32(-50.), f32(40.)], kw)

# ------------------------------------------------------------------ rnn
T, N, I, H = 3, 2, 4, 5
case("rnn_gru", "quantized_rnn",
     [u8((T, N, I)), rng.uniform(-1, 1, 3 * H * (I + H) + 6 * H).astype(np.float32),
      np.zeros((1, N, H), np.float32), f32(0.02), f32(10.)],
     {"state_size": H, "num_layers": 1, "mode": "gru"})
case("rnn_lstm", "quantized_rnn",
     [u8((T, N, I)), rng.uniform(-1, 1, 4 * H * (I + H) + 8 * H).astype(np.float32),
      np.zeros((1, N, H), np.float32), np.zeros((1, N, H), np.float32), f32(0.02), f32(10.)],
     {"state_size": H, "num_layers": 1, "mode": "lstm"})

# ------------------------------------------------------------------ an unfused graph
# mx.contrib.quantization.quantize_model (no oneDNN fusion) of conv -> relu -> fc, with
# uint8 data (MXNet's CPU quantized_conv takes uint8 only): quantize_v2, quantized_conv,
# requantize, quantized_act, quantized_flatten, quantized_fully_connected, dequantize.
from mxnet.contrib import quantization as mxq  # noqa: E402

gdata = mx.sym.var("data")
gnet = mx.sym.FullyConnected(
    mx.sym.Activation(mx.sym.Convolution(gdata, kernel=(3, 3), num_filter=4, name="conv"),
                      act_type="relu", name="relu"), num_hidden=3, name="fc")
gargs = {"conv_weight": mx.nd.array(rng.uniform(-1, 1, (4, 2, 3, 3))),
         "conv_bias": mx.nd.array(rng.uniform(-1, 1, 4)),
         "fc_weight": mx.nd.array(rng.uniform(-1, 1, (3, 64))),
         "fc_bias": mx.nd.array(rng.uniform(-1, 1, 3))}
gx = mx.nd.array(rng.uniform(0, 1, (2, 2, 6, 6)))
qsym, qargs, _ = mxq.quantize_model(gnet, gargs, {}, ctx=mx.cpu(), calib_mode="naive",
                                    calib_data=mx.io.NDArrayIter(gx, batch_size=2),
                                    num_calib_examples=2, quantized_dtype="uint8",
                                    quantize_mode="full", logger=None)
ginputs = dict(qargs)
ginputs["data"] = gx
internals = qsym.get_internals()
gouts = internals.bind(mx.cpu(), ginputs).forward()
graph = {"json": qsym.tojson(),
         "inputs": {k: _store("graph_in", v.asnumpy()) for k, v in ginputs.items()},
         "outputs": {n: _store("graph_out", o.asnumpy())
                     for n, o in zip(internals.list_outputs(), gouts)}}

os.makedirs(OUT, exist_ok=True)
with open(os.path.join(OUT, "cases.json"), "w") as f:
    json.dump({"mxnet": mx.__version__, "isa": _isa(), "cases": cases, "graph": graph}, f,
              indent=1)
np.savez_compressed(os.path.join(OUT, "cases.npz"), **arrays)
print(f"{len(cases)} cases, {sum('error' in c for c in cases)} errors", file=sys.stderr)
