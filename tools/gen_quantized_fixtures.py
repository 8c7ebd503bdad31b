"""Record MXNet 1.9.1's quantized (int8) operators and GluonCV's ``*_int8`` models.

    /tmp/mxref/bin/python tools/gen_quantized_fixtures.py
    # writes tests/fixtures/quantized/{cases.json, cases.npz, models.npz}

- ``ops``: imperative calls of nd.contrib.quantize_v2 / dequantize / quantized_pooling /
  quantized_concat / quantized_flatten, every attribute variant GluonCV's models use and
  the edge cases (rounding ties, saturation, a zero range, codes passed through).
- ``graphs``: single-operator graphs written as MXNet's quantization pass writes them
  (tests/quantized_graphs.py): ``_sg_mkldnn_conv`` with and without bias, BatchNorm, relu,
  residual sum (same and mixed int8/uint8 types), post-sum relu, depthwise, grouped,
  dilated, strided, int8 and uint8 data, data that makes oneDNN's non-VNNI int16 pair sums
  saturate, MXNet 1.5's attribute names, no calibrated range (int32 output); the float
  ``_sg_mkldnn_fully_connected``; the symbol queries (outputs, arguments, shapes, types,
  tojson) of a conv graph; and what backward does through quantized pooling.
- ``models``: tests/quantized_cases.py run here (GluonCV int8 models, seeded parameters).

The processor's int8 kind (VNNI or not, which changes oneDNN's arithmetic) is recorded as
``isa``; the tests run neogluon with the same (NEOGLUON_INT8_ISA).
"""
import hashlib
import json
import os
import subprocess
import sys

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests"))
import quantized_graphs as qg  # noqa: E402

OUT = os.path.join(REPO, "tests", "fixtures", "quantized")
rng = np.random.RandomState(20)
arrays = {}
ops, graphs = [], []


def _isa():
    with open("/proc/cpuinfo") as f:
        flags = next((ln for ln in f if ln.startswith("flags")), "").split()
    return "vnni" if {"avx512_vnni", "amx_int8"} & set(flags) else "avx2"


def _key(a):
    a = np.ascontiguousarray(a)
    digest = hashlib.sha1(a.tobytes() + str((a.dtype, a.shape)).encode()).hexdigest()
    key = "in/" + digest[:16]
    arrays[key] = a
    return key


def _err(e):
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else type(e).__name__


def op_case(name, op, inputs, kwargs):
    fn = mx.nd
    for p in op.split("."):
        fn = getattr(fn, p)
    nd_in = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
    case = dict(name=name, op=op, kwargs=kwargs, inputs=[_key(a) for a in inputs])
    try:
        res = fn(*nd_in, **kwargs)
        outs = res if isinstance(res, (list, tuple)) else [res]
        for j, o in enumerate(outs):
            arrays[f"{name}/out{j}"] = o.asnumpy()
        case["n_out"] = len(outs)
    except mx.base.MXNetError as e:
        case["error"] = _err(e)
    ops.append(case)


def graph_case(name, builder, spec, inputs, params, grad=False, train_mode=True):
    """Evaluate qg.<builder>(**spec) in a SymbolBlock with ``inputs`` (by name) and
    ``params``; with ``grad``, a recorded forward (``train_mode``) + backward of the first
    output's sum, reading every gradient (MXNet reports some failures only then)."""
    js = getattr(qg, builder)(**spec)
    sym = mx.sym.load_json(js)
    names = list(inputs)
    blk = mx.gluon.SymbolBlock(sym, [mx.sym.var(n) for n in names])
    for k, p in blk.collect_params().items():
        p.shape = params[k].shape
        p.initialize()
        p.set_data(mx.nd.array(params[k]))
    xs = [mx.nd.array(inputs[n]) for n in names]
    case = dict(name=name, builder=builder, spec=spec, inputs={n: _key(v) for n, v in
                                                               inputs.items()},
                params={k: _key(v) for k, v in params.items()}, train_mode=train_mode)
    try:
        outs = blk(*xs)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        for j, o in enumerate(outs):
            arrays[f"{name}/out{j}"] = o.asnumpy()
        case["n_out"] = len(outs)
        case["out_dtypes"] = [str(o.dtype.__name__) for o in outs]
    except mx.base.MXNetError as e:
        case["error"] = _err(e)
    if grad:
        for x in xs:
            x.attach_grad()
        try:
            with mx.autograd.record(train_mode=train_mode):
                o = blk(*xs)
                o = o[0] if isinstance(o, (list, tuple)) else o
                loss = o.astype("float32").sum()
            loss.backward()
            grads = {k: p.grad().asnumpy() for k, p in blk.collect_params().items()
                     if p.grad_req != "null"}
            for k, g in grads.items():
                arrays[f"{name}/grad/{k}"] = g
            arrays[f"{name}/grad/data"] = xs[0].grad.asnumpy()
            mx.nd.waitall()
            case["grad"] = sorted(grads)
        except mx.base.MXNetError as e:
            case["grad_error"] = _err(e)
    graphs.append(case)
    return case


# ------------------------------------------------------------------ quantize_v2
x = np.array([-3, -1.0, -0.5, 0, 0.25, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 10, -10], dtype="f")
for ot in ("auto", "int8", "uint8"):
    for cal in ((-2.0, 2.0), (0.0, 2.0), (-1.0, 3.0), (0.5, 2.0), (-2.54, 1.27), None):
        kw = dict(out_type=ot)
        if cal:
            kw.update(min_calib_range=cal[0], max_calib_range=cal[1])
        op_case(f"quantize_{ot}_{cal}", "contrib.quantize_v2", [x], kw)
ties = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 126.5, -127.5, -128.5, 127.5], "f")
op_case("quantize_ties_int8", "contrib.quantize_v2", [ties],
        dict(out_type="int8", min_calib_range=-127.5, max_calib_range=127.5))
op_case("quantize_ties_uint8", "contrib.quantize_v2", [ties],
        dict(out_type="uint8", min_calib_range=0.0, max_calib_range=255.5))
op_case("quantize_4d", "contrib.quantize_v2", [rng.randn(2, 3, 4, 5).astype("f")],
        dict(out_type="auto", min_calib_range=-1.7, max_calib_range=2.3))
op_case("quantize_4d_nocalib", "contrib.quantize_v2", [rng.randn(2, 3, 4, 5).astype("f")],
        dict(out_type="uint8"))
op_case("quantize_zeros", "contrib.quantize_v2", [np.zeros(3, "f")], dict(out_type="int8"))
op_case("quantize_zero_calib", "contrib.quantize_v2", [np.array([1.0, -2.0, 0.0], "f")],
        dict(out_type="int8", min_calib_range=0.0, max_calib_range=0.0))
op_case("quantize_half_calib", "contrib.quantize_v2", [x], dict(out_type="int8",
                                                                min_calib_range=1.0))
op_case("quantize_pass_int8", "contrib.quantize_v2", [np.array([1, 2, -3], "int8")],
        dict(out_type="auto"))
op_case("quantize_pass_uint8_calib", "contrib.quantize_v2", [np.array([1, 2, 3], "uint8")],
        dict(out_type="auto", min_calib_range=0.0, max_calib_range=5.0))
op_case("quantize_pass_uint8_as_int8", "contrib.quantize_v2",
        [np.array([1, 2, 200], "uint8")], dict(out_type="int8"))
op_case("quantize_float16", "contrib.quantize_v2", [x.astype("float16")],
        dict(out_type="int8", min_calib_range=-1.0, max_calib_range=1.0))
op_case("quantize_float64", "contrib.quantize_v2", [x.astype("float64")],
        dict(out_type="int8", min_calib_range=-1.0, max_calib_range=1.0))

# ------------------------------------------------------------------ dequantize
q8 = np.arange(-128, 128).astype("int8")
qu = np.arange(0, 256).astype("uint8")
for r in (0.3343, 2.0, 27.485794, 48.18677):
    op_case(f"dequantize_int8_{r}", "contrib.dequantize",
            [q8, np.array([-r], "f"), np.array([r], "f")], {})
    op_case(f"dequantize_uint8_{r}", "contrib.dequantize",
            [qu, np.array([0.0], "f"), np.array([r], "f")], {})
op_case("dequantize_asym", "contrib.dequantize",
        [np.array([10, -100], "int8"), np.array([-1.0], "f"), np.array([3.0], "f")], {})
op_case("dequantize_uint8_negmin", "contrib.dequantize",
        [np.array([10, 200], "uint8"), np.array([-1.0], "f"), np.array([3.0], "f")], {})
op_case("dequantize_4d", "contrib.dequantize",
        [rng.randint(-128, 128, (1, 3, 4, 4)).astype("int8"), np.array([-3.3], "f"),
         np.array([3.3], "f")], {})
op_case("dequantize_float", "contrib.dequantize",
        [np.array([10, 200], "f"), np.array([-1.0], "f"), np.array([3.0], "f")], {})
op_case("dequantize_range_shape", "contrib.dequantize",
        [np.array([10, 20], "int8"), np.array([-1.0, 2.0], "f"), np.array([3.0], "f")], {})

# ------------------------------------------------------------------ quantized_pooling
POOLS = [dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max",
              pooling_convention="valid"),
         dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max",
              pooling_convention="full"),
         dict(kernel=(2, 2), stride=(2, 2), pool_type="max", pooling_convention="full"),
         dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
              pooling_convention="valid", count_include_pad=True),
         dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
              pooling_convention="full", count_include_pad=True),
         dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
              pooling_convention="full", count_include_pad=False),
         dict(kernel=(2, 2), stride=(2, 2), pool_type="avg", pooling_convention="full"),
         dict(kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type="avg",
              pooling_convention="valid", count_include_pad=False),
         dict(kernel=(3, 3), stride=(2, 2), pool_type="avg", pooling_convention="full"),
         dict(kernel=(1, 1), global_pool=True, pool_type="avg", pooling_convention="full"),
         dict(kernel=(1, 1), global_pool=True, pool_type="max")]
for dt in ("uint8", "int8"):
    lo, hi = (0, 256) if dt == "uint8" else (-128, 128)
    q = rng.randint(lo, hi, (2, 3, 7, 8)).astype(dt)
    for i, kw in enumerate(POOLS):
        op_case(f"pool_{dt}_{i}", "contrib.quantized_pooling",
                [q, np.array([-1.0], "f"), np.array([2.0], "f")], kw)
op_case("pool_float", "contrib.quantized_pooling",
        [np.ones((1, 1, 2, 2), "f"), np.array([0.0], "f"), np.array([1.0], "f")],
        dict(kernel=(1, 1)))

# ------------------------------------------------------------------ quantized_concat
for i, (dts, rgs) in enumerate([
        (("uint8", "uint8"), ((0.0, 2.0), (0.0, 2.0))),
        (("uint8", "uint8"), ((0.0, 2.0), (0.0, 3.0))),
        (("int8", "uint8"), ((-1.0, 2.0), (0.0, 3.0))),
        (("int8", "int8", "uint8"), ((-1.0, 2.0), (-4.0, 1.0), (0.0, 3.0))),
        (("uint8", "uint8"), ((0.5, 2.0), (0.0, 3.0))),
        (("uint8", "int8", "uint8", "uint8"), ((0.0, 5.0), (-1.0, 1.0), (0.0, 0.7),
                                               (0.0, 5.0)))]):
    qs = [rng.randint(0 if d == "uint8" else -128, 256 if d == "uint8" else 128,
                      (1, 2, 3, 3)).astype(d) for d in dts]
    rs = [np.array([v], "f") for r in rgs for v in r]
    op_case(f"concat_{i}", "contrib.quantized_concat", qs + rs,
            dict(num_args=len(dts), dim=1))
qs = [rng.randint(0, 256, (2, 3, 4)).astype("uint8") for _ in range(2)]
op_case("concat_dim2", "contrib.quantized_concat",
        qs + [np.array([0.0], "f"), np.array([1.0], "f"), np.array([0.0], "f"),
              np.array([3.0], "f")], dict(num_args=2, dim=2))

# ------------------------------------------------------------------ quantized_flatten
op_case("flatten", "contrib.quantized_flatten",
        [rng.randint(-128, 128, (2, 3, 2, 2)).astype("int8"), np.array([-1.0], "f"),
         np.array([1.0], "f")], {})


# ------------------------------------------------------------------ _sg_mkldnn_conv graphs
def conv_params(seed, spec, wscale=0.3):
    r = np.random.RandomState(seed)
    c = spec["data_shape"][1]
    g = spec.get("num_group", 1)
    k = spec["kernel"]
    nf = spec["num_filter"]
    p = {"weight": (r.randn(nf, c // g, *k) * wscale).astype("f")}
    if not spec.get("no_bias", True):
        p["bias"] = (r.randn(nf) * 0.5).astype("f")
    if spec.get("with_bn"):
        p["gamma"] = r.uniform(0.5, 1.5, nf).astype("f")
        p["beta"] = (r.randn(nf) * 0.3).astype("f")
        p["moving_mean"] = (r.randn(nf) * 0.3).astype("f")
        p["moving_var"] = r.uniform(0.5, 2, nf).astype("f")
    return p


def conv_case(name, seed, spec, wscale=0.3, data_lo=None):
    spec = dict(dict(data_calib=(0.0, 2.0), out_calib=(0.0, 4.0), no_bias=True), **spec)
    spec["dequantize"] = False
    r = np.random.RandomState(seed + 1000)
    dmin, dmax = spec["data_calib"]
    lo = data_lo if data_lo is not None else (0.0 if dmin >= 0 else dmin)
    inputs = {"data": r.uniform(lo, dmax * 1.1, spec["data_shape"]).astype("f")}
    if spec.get("with_sum"):
        n, _, h, w = spec["data_shape"]
        kh, kw = spec["kernel"]
        st = spec.get("stride", (1, 1))
        pd = spec.get("pad", (0, 0))
        dl = spec.get("dilate", (1, 1))
        oh = (h + 2 * pd[0] - dl[0] * (kh - 1) - 1) // st[0] + 1
        ow = (w + 2 * pd[1] - dl[1] * (kw - 1) - 1) // st[1] + 1
        smin, smax = spec["sum_calib"]
        inputs["sumdata"] = r.uniform(min(smin, 0), smax,
                                      (n, spec["num_filter"], oh, ow)).astype("f")
    graph_case(name, "quantized_conv_graph", spec, inputs, conv_params(seed, spec, wscale))


T = tuple
conv_case("conv_u8", 0, dict(data_shape=T((1, 8, 6, 6)), num_filter=4, kernel=T((3, 3))))
conv_case("conv_s8", 1, dict(data_shape=T((1, 8, 6, 6)), num_filter=4, kernel=T((3, 3)),
                             data_calib=(-2.0, 2.0)))
conv_case("conv_u8_bias_bn_relu", 2, dict(
    data_shape=T((2, 16, 7, 7)), num_filter=8, kernel=T((3, 3)), pad=T((1, 1)), no_bias=False,
    with_bn=True, act="relu", out_calib=(0.0, 6.0)))
conv_case("conv_s8_bias_bn_relu", 3, dict(
    data_shape=T((2, 16, 7, 7)), num_filter=8, kernel=T((3, 3)), pad=T((1, 1)), no_bias=False,
    with_bn=True, act="relu", out_calib=(0.0, 6.0), data_calib=(-1.5, 2.0)))
conv_case("conv_dw_u8", 4, dict(
    data_shape=T((1, 16, 7, 7)), num_filter=16, kernel=T((3, 3)), pad=T((1, 1)), num_group=16,
    with_bn=True, act="relu", out_calib=(0.0, 3.0)))
conv_case("conv_dw_s8_stride2", 5, dict(
    data_shape=T((1, 16, 8, 8)), num_filter=16, kernel=T((3, 3)), pad=T((1, 1)),
    stride=T((2, 2)), num_group=16, with_bn=True, act="relu", out_calib=(0.0, 3.0),
    data_calib=(-2.0, 2.0)))
conv_case("conv_1x1_int8_out", 6, dict(
    data_shape=T((1, 16, 7, 7)), num_filter=8, kernel=T((1, 1)), with_bn=True,
    out_calib=(-3.0, 3.0)))
conv_case("conv_1x1_s2_min0_noact", 7, dict(
    data_shape=T((1, 16, 7, 7)), num_filter=8, kernel=T((1, 1)), stride=T((2, 2)),
    with_bn=True, out_calib=(0.0, 3.0)))
conv_case("conv_sum_u8_u8", 8, dict(
    data_shape=T((1, 16, 5, 5)), num_filter=8, kernel=T((1, 1)), with_bn=True, with_sum=True,
    sum_calib=(0.0, 2.0), postsum_act="relu", out_calib=(0.0, 5.0)))
conv_case("conv_sum_s8_into_u8", 9, dict(
    data_shape=T((1, 16, 5, 5)), num_filter=8, kernel=T((1, 1)), with_bn=True, with_sum=True,
    sum_calib=(-2.0, 2.0), postsum_act="relu", out_calib=(0.0, 5.0)))
conv_case("conv_sum_s8_s8", 10, dict(
    data_shape=T((1, 16, 5, 5)), num_filter=8, kernel=T((1, 1)), with_bn=True, with_sum=True,
    sum_calib=(-2.0, 2.0), out_calib=(-5.0, 5.0)))
conv_case("conv_sum_u8_into_s8", 11, dict(
    data_shape=T((1, 16, 5, 5)), num_filter=8, kernel=T((1, 1)), with_bn=True, with_sum=True,
    sum_calib=(0.0, 2.0), out_calib=(-5.0, 5.0)))
conv_case("conv_sum_3x3_s8_into_u8", 12, dict(
    data_shape=T((1, 16, 5, 5)), num_filter=8, kernel=T((3, 3)), pad=T((1, 1)), with_bn=True,
    with_sum=True, sum_calib=(-3.0, 2.0), postsum_act="relu", out_calib=(0.0, 5.0)))
conv_case("conv_sum_s8data_bias", 13, dict(
    data_shape=T((2, 16, 5, 5)), num_filter=8, kernel=T((3, 3)), pad=T((1, 1)),
    no_bias=False, with_bn=True, with_sum=True, sum_calib=(0.0, 2.0), out_calib=(-2.0, 1.0),
    data_calib=(-1.0, 2.0)))
conv_case("conv_dilate2", 20, dict(
    data_shape=T((1, 64, 9, 9)), num_filter=32, kernel=T((3, 3)), pad=T((2, 2)),
    dilate=T((2, 2)), with_bn=True, act="relu", out_calib=(0.0, 20.0)), wscale=0.1)
conv_case("conv_dilate4_s8", 28, dict(
    data_shape=T((1, 64, 9, 9)), num_filter=32, kernel=T((3, 3)), pad=T((4, 4)),
    dilate=T((4, 4)), with_bn=True, act="relu", out_calib=(0.0, 20.0),
    data_calib=(-3.0, 2.0)), wscale=0.1)
conv_case("conv_7x7_s2_first", 22, dict(
    data_shape=T((1, 3, 16, 16)), num_filter=8, kernel=T((7, 7)), stride=T((2, 2)),
    pad=T((3, 3)), with_bn=True, act="relu", data_calib=(-2.0, 2.5), out_calib=(0.0, 10.0)))
conv_case("conv_odd_channels_bias", 24, dict(
    data_shape=T((1, 5, 8, 8)), num_filter=6, kernel=T((3, 3)), pad=T((1, 1)), no_bias=False,
    data_calib=(0.0, 2.5), out_calib=(-5.0, 10.0)))
conv_case("conv_1x1_256", 25, dict(
    data_shape=T((1, 256, 5, 5)), num_filter=64, kernel=T((1, 1)), no_bias=False,
    data_calib=(0.0, 2.5), out_calib=(-5.0, 10.0)), wscale=0.05)
conv_case("conv_grouped4", 27, dict(
    data_shape=T((1, 32, 8, 8)), num_filter=32, kernel=T((3, 3)), pad=T((1, 1)), num_group=4,
    with_bn=True, act="relu", data_calib=(0.0, 2.5), out_calib=(0.0, 10.0)))
conv_case("conv_grouped2_s8_bias", 29, dict(
    data_shape=T((1, 32, 8, 8)), num_filter=16, kernel=T((3, 3)), pad=T((1, 1)), num_group=2,
    no_bias=False, data_calib=(-1.0, 2.5), out_calib=(-3.0, 10.0)))
conv_case("conv_saturating", 30, dict(
    data_shape=T((1, 32, 6, 6)), num_filter=16, kernel=T((3, 3)), pad=T((1, 1)),
    data_calib=(0.0, 2.0), out_calib=(-40.0, 40.0)), wscale=0.5, data_lo=1.6)
conv_case("conv_legacy_relu", 31, dict(
    data_shape=T((1, 8, 6, 6)), num_filter=8, kernel=T((3, 3)), pad=T((1, 1)), with_bn=True,
    act="relu", out_calib=(0.0, 4.0), legacy_names=True))
conv_case("conv_legacy_postsum_relu", 32, dict(
    data_shape=T((1, 8, 6, 6)), num_filter=8, kernel=T((1, 1)), with_bn=True, with_sum=True,
    sum_calib=(0.0, 2.0), postsum_act="relu", out_calib=(0.0, 5.0), legacy_names=True))
conv_case("conv_fix_gamma_eps", 33, dict(
    data_shape=T((1, 8, 6, 6)), num_filter=8, kernel=T((3, 3)), with_bn=True, act="relu",
    out_calib=(0.0, 4.0), bn_eps=1e-3, fix_gamma=True))
conv_case("conv_nocalib_u8", 34, dict(
    data_shape=T((1, 8, 6, 6)), num_filter=4, kernel=T((3, 3)), no_bias=False, out_calib=None))
conv_case("conv_nocalib_s8_relu", 35, dict(
    data_shape=T((1, 8, 6, 6)), num_filter=4, kernel=T((3, 3)), with_bn=True, act="relu",
    out_calib=None, data_calib=(-2.0, 2.0)))
conv_case("conv_sigmoid", 36, dict(
    data_shape=T((1, 8, 6, 6)), num_filter=4, kernel=T((3, 3)), act="sigmoid",
    out_calib=(0.0, 1.0)))
spec37 = dict(data_shape=T((1, 8, 6, 6)), num_filter=4, kernel=T((3, 3)), with_bn=True,
              act="relu", data_calib=(0.0, 2.0), out_calib=(0.0, 3.0), no_bias=True,
              dequantize=True)
graph_case("conv_dequantized", "quantized_conv_graph", spec37,
           {"data": np.random.RandomState(1037).uniform(0, 2.2, (1, 8, 6, 6)).astype("f")},
           conv_params(37, spec37))

# ------------------------------------------------------------------ other graphs
for i, (dt_cal, kw) in enumerate([((0.0, 3.0), POOLS[0]), ((-2.0, 3.0), POOLS[4]),
                                   ((0.0, 3.0), POOLS[9])]):
    spec = dict(data_shape=(1, 3, 6, 7), calib=dt_cal, **kw)
    graph_case(f"graph_pool_{i}", "pooling_graph", spec,
               {"data": rng.uniform(-2, 3.3, (1, 3, 6, 7)).astype("f")}, {})
graph_case("graph_concat", "concat_graph",
           dict(shapes=[(1, 2, 3, 3), (1, 3, 3, 3)], calibs=[(0.0, 2.0), (-1.0, 3.0)],
                dequantize=True),
           {"data0": rng.uniform(0, 2.2, (1, 2, 3, 3)).astype("f"),
            "data1": rng.uniform(-1.2, 3.2, (1, 3, 3, 3)).astype("f")}, {})
graph_case("graph_quantize_nocalib", "quantize_graph",
           dict(data_shape=(2, 5), out_type="auto", calib=None, dequantize=True),
           {"data": rng.randn(2, 5).astype("f")}, {})
for i, kw in enumerate([dict(), dict(with_eltwise=True), dict(no_bias=True)]):
    spec = dict(data_shape=(2, 3, 2), num_hidden=4, **kw)
    r = np.random.RandomState(50 + i)
    params = {"weight": r.randn(4, 6).astype("f")}
    if not kw.get("no_bias"):
        params["bias"] = r.randn(4).astype("f")
    graph_case(f"graph_fc_{i}", "fc_graph", spec,
               {"data": r.randn(2, 3, 2).astype("f")}, params)
spec = dict(data_shape=(2, 6), num_hidden=3, flatten=False)
graph_case("graph_fc_noflatten", "fc_graph", spec, {"data": rng.randn(2, 6).astype("f")},
           {"weight": rng.randn(3, 6).astype("f"), "bias": rng.randn(3).astype("f")})


# backward through quantized pooling / concat: quantize -> op -> dequantize -> FC
r = np.random.RandomState(60)
xin = r.uniform(0, 2, (1, 4, 6, 6)).astype("f")
for pt, nin in (("max", 36), ("avg", 36), ("concat", 288)):
    graph_case(f"backward_{pt}", "pool_fc_graph", dict(pool_type=pt), {"data": xin},
               {"fc_weight": r.uniform(-0.5, 0.5, (3, nin)).astype("f"),
                "fc_bias": r.uniform(-0.5, 0.5, (3,)).astype("f")}, grad=True)
graph_case("backward_max_predict_mode", "pool_fc_graph", dict(pool_type="max"), {"data": xin},
           {"fc_weight": r.uniform(-0.5, 0.5, (3, 36)).astype("f"),
            "fc_bias": r.uniform(-0.5, 0.5, (3,)).astype("f")}, grad=True, train_mode=False)
sc = dict(data_shape=T((1, 4, 6, 6)), num_filter=4, kernel=T((3, 3)), with_bn=True, act="relu",
          data_calib=(0.0, 2.0), out_calib=(0.0, 3.0), no_bias=True, dequantize=True)
graph_case("backward_conv", "quantized_conv_graph", sc, {"data": xin}, conv_params(61, sc),
           grad=True)

# ------------------------------------------------------------------ symbol queries
sym_cases = {}
for nm, spec, shapes in (
        ("conv", dict(data_shape=(1, 4, 6, 6), num_filter=4, kernel=(3, 3), with_bn=True,
                      act="relu", dequantize=False), dict(data=(1, 4, 6, 6))),
        ("conv_sum", dict(data_shape=(1, 4, 6, 6), num_filter=4, kernel=(3, 3), no_bias=False,
                          with_bn=True, with_sum=True, sum_calib=(0.0, 1.0), postsum_act="relu",
                          dequantize=False), dict(data=(1, 4, 6, 6), sumdata=(1, 4, 4, 4))),
        ("conv_legacy", dict(data_shape=(1, 4, 6, 6), num_filter=4, kernel=(3, 3), with_bn=True,
                             act="relu", legacy_names=True), dict(data=(1, 4, 6, 6))),
        ("conv_nocalib", dict(data_shape=(1, 4, 6, 6), num_filter=4, kernel=(3, 3),
                              out_calib=None, dequantize=False), dict(data=(1, 4, 6, 6)))):
    s = mx.sym.load_json(qg.quantized_conv_graph(**spec))
    a, o, x_ = s.infer_shape(**shapes)
    ta, to, tx = s.infer_type(**{k: "float32" for k in shapes})
    sym_cases[nm] = dict(spec=spec, shapes=shapes, list_outputs=s.list_outputs(),
                         list_arguments=s.list_arguments(),
                         list_auxiliary_states=s.list_auxiliary_states(),
                         internals=s.get_internals().list_outputs(),
                         arg_shapes=a, out_shapes=o, aux_shapes=x_,
                         arg_types=[np.dtype(t).name for t in ta],
                         out_types=[np.dtype(t).name for t in to],
                         aux_types=[np.dtype(t).name for t in tx], tojson=s.tojson())
for nm, fn in (("quantize", lambda v: mx.sym.contrib.quantize_v2(v, out_type="auto",
                                                                  name="qz")),
               ("pool", lambda v: mx.sym.contrib.quantized_pooling(
                   *mx.sym.contrib.quantize_v2(v, name="qz"), kernel=(2, 2), name="qp")),
               ("flatten", lambda v: mx.sym.contrib.quantized_flatten(
                   *mx.sym.contrib.quantize_v2(v, name="qz"), name="qf"))):
    s = fn(mx.sym.var("x"))
    sym_cases[nm] = dict(list_outputs=s.list_outputs(),
                         out_types=[np.dtype(t).name for t in s.infer_type(x="float32")[1]],
                         out_shapes=s.infer_shape(x=(2, 3, 4, 4))[1])
fc = mx.sym.load_json(qg.fc_graph((2, 6), 3, with_eltwise=True))
sym_cases["fc"] = dict(tojson=fc.tojson(), list_arguments=fc.list_arguments())

# ------------------------------------------------------------------ bad inputs in MXNet
errors = {}
for nm, text in (
        ("bad_out_type", qg.quantize_graph((2, 3), out_type="int4")),):
    try:
        mx.sym.load_json(text)
        errors[nm] = None
    except mx.base.MXNetError as e:
        errors[nm] = _err(e)

# ------------------------------------------------------------------ models
env = dict(os.environ, OMP_NUM_THREADS="1")
os.makedirs(OUT, exist_ok=True)
subprocess.run([sys.executable, os.path.join(REPO, "tests", "quantized_cases.py"),
                os.path.join(OUT, "models.npz")], check=True, env=env)

with open(os.path.join(OUT, "cases.json"), "w") as f:
    json.dump(dict(isa=_isa(), mxnet=mx.__version__, ops=ops, graphs=graphs, symbols=sym_cases,
                   errors=errors), f, indent=1, default=lambda v: list(v))
np.savez_compressed(os.path.join(OUT, "cases.npz"), **arrays)
print("ops", len(ops), "graphs", len(graphs), "arrays", len(arrays))
