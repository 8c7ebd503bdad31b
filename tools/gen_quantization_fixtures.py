"""Record MXNet 1.9.1's mx.contrib.quantization on small float models.

    /tmp/mxref/bin/python tools/gen_quantization_fixtures.py
    # writes tests/fixtures/quantization/{cases.json.gz, outputs.npz}

The models, their seeded parameters and the calibration / test data are
tests/quantization_models.py (the same code builds them under neogluon). For each case:
the quantized symbol's JSON, the calibration thresholds (``th_dict``, full precision, caught
on their way into the graph), the quantized parameters' names and the int8 model's outputs on
fixed inputs. Also: ``_get_optimal_threshold`` (entropy / KL) on fixed arrays, and the
errors of bad arguments.
"""
import gzip
import json
import os
import sys

import mxnet as mx
import numpy as np
from mxnet.contrib import quantization as q

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests"))
import quantization_models as qm  # noqa: E402

OUT = qm.FIX
arrays = {}
cases, hists, errors = [], [], []

_caught = {}
_orig_calib = q._calibrate_quantized_sym


def _catch(qsym, th_dict):
    _caught["th"] = {k: [float(v[0]), float(v[1])] for k, v in th_dict.items()}
    return _orig_calib(qsym, th_dict)


q._calibrate_quantized_sym = _catch


def _err(e):
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    return type(e).__name__ + ": " + (lines[-1][:300] if lines else "")


def model(name):
    fn, shape = qm.MODELS[name]
    sym = fn(mx)
    a, x = qm.params(mx, sym, shape)
    return sym, {k: mx.nd.array(v) for k, v in a.items()}, \
        {k: mx.nd.array(v) for k, v in x.items()}, shape


def run(qsym, qargs, auxs, data):
    args = dict(qargs)
    args["data"] = mx.nd.array(data)
    ex = qsym.bind(mx.cpu(), args=args, aux_states=dict(auxs), grad_req="null")
    return [o.asnumpy() for o in ex.forward(is_train=False)]


def case(cid, mname, fn="quantize_model_mkldnn", calib_mode="naive", batch=4, env=None, **kw):
    sym, args, auxs, shape = model(mname)
    it = mx.io.NDArrayIter(qm.calib_data(shape), batch_size=batch)
    _caught.clear()
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})   # MXNET_SUBGRAPH_BACKEND is read at each bind
    try:
        qsym, qargs, qauxs = getattr(q, fn)(sym, args, auxs, calib_mode=calib_mode,
                                            calib_data=it, label_names=None, **kw)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    c = dict(id=cid, model=mname, fn=fn, calib_mode=calib_mode, batch=batch, kwargs=kw,
             env=env or {}, json=json.loads(qsym.tojson()), th=_caught.get("th"),
             qarg_names=sorted(qargs), aux_names=sorted(qauxs))
    try:
        outs = run(qsym, qargs, qauxs, qm.test_data(shape))
        for j, o in enumerate(outs):
            arrays[f"{cid}/out{j}"] = o
        c["n_out"] = len(outs)
    except mx.base.MXNetError as e:
        c["run_error"] = _err(e)
    for k in sorted(qargs):
        if k.endswith(("_quantize", "_min", "_max")) and mname != "resnet18" or \
                fn == "quantize_model" and k in args:
            arrays[f"{cid}/qarg/{k}"] = qargs[k].asnumpy()
    cases.append(c)
    print(cid, "ok", len(c["json"]["nodes"]), "nodes")


for m in ("mlp", "cnn"):
    case(f"{m}_naive_auto", m, quantized_dtype="auto")
    case(f"{m}_entropy_auto", m, calib_mode="entropy", quantized_dtype="auto")
    case(f"{m}_none_auto", m, calib_mode="none", quantized_dtype="auto")
    case(f"{m}_naive_int8", m, quantized_dtype="int8")
    case(f"{m}_entropy_uint8", m, calib_mode="entropy", quantized_dtype="uint8")
    case(f"{m}_naive_full", m, quantized_dtype="auto", quantize_mode="full")
    case(f"{m}_plain_naive", m, fn="quantize_model", quantized_dtype="auto")
case("cnn_naive_channel", "cnn", quantized_dtype="auto", quantize_granularity="channel-wise")
case("cnn_excl_sym", "cnn", quantized_dtype="auto",
     excluded_sym_names=["sg_mkldnn_conv_bn_act_1"])
case("cnn_excl_op", "cnn", quantized_dtype="auto", excluded_op_names=["Pooling"])
case("cnn_excl_fp32name", "cnn", quantized_dtype="auto", excluded_sym_names=["conv1", "fc0"])
case("mlp_naive_examples", "mlp", quantized_dtype="auto", num_calib_examples=4)
# the unfused graphs (quantize_model): MXNet's calibration runs the float graph with its
# default MKLDNN subgraph backend (fused layers hide their outputs) unless
# MXNET_SUBGRAPH_BACKEND=NONE
NONE = {"MXNET_SUBGRAPH_BACKEND": "NONE"}
for m in ("mlp", "cnn", "mixed", "addpool"):
    for dt in ("int8", "uint8", "auto"):
        case(f"{m}_plain_naive_{dt}", m, fn="quantize_model", quantized_dtype=dt)
        case(f"{m}_plain_naive_{dt}_nofuse", m, fn="quantize_model", quantized_dtype=dt,
             env=NONE)
    case(f"{m}_plain_entropy_auto", m, fn="quantize_model", calib_mode="entropy",
         quantized_dtype="auto")
    case(f"{m}_plain_entropy_auto_nofuse", m, fn="quantize_model", calib_mode="entropy",
         quantized_dtype="auto", env=NONE)
case("mlp_plain_excl", "mlp", fn="quantize_model", quantized_dtype="auto",
     excluded_sym_names=["fc2"])
case("mlp_plain_excl_nofuse", "mlp", fn="quantize_model", quantized_dtype="auto",
     excluded_sym_names=["fc2"], env=NONE)
case("cnn_plain_excl", "cnn", fn="quantize_model", quantized_dtype="uint8",
     excluded_sym_names=["conv1"])
case("cnn_plain_excl_op", "cnn", fn="quantize_model", quantized_dtype="auto",
     excluded_op_names=["Pooling"], env=NONE)
for m in ("mixed", "addpool"):
    case(f"{m}_naive_auto", m, quantized_dtype="auto")
case("resnet18_naive_auto", "resnet18", batch=4, quantized_dtype="auto")
case("resnet18_entropy_auto", "resnet18", batch=4, calib_mode="entropy", quantized_dtype="auto")

# quantize_graph's collector names and calib_graph on ranges fed by hand (the
# quantize_net / custom-collector path)
graphs = []
for m in ("mlp", "cnn", "mixed", "addpool"):
    sym, args, auxs, shape = model(m)
    for mode in ("naive", "entropy"):
        qsym, qargs, qauxs, col = q.quantize_graph(sym, args, auxs, calib_mode=mode,
                                                   quantized_dtype="auto",
                                                   quantize_mode="smart")
        rng = np.random.RandomState(7)
        fed = {}
        for nm in col.include_layer:
            fed[nm] = (rng.randn(500) * rng.uniform(0.5, 3) + rng.uniform(-1, 1)).astype(
                np.float32)
            a = mx.nd.array(fed[nm])
            # the collector takes the monitor's raw handle and owns (frees) it
            col.collect(nm.encode(), a.handle)
            a.handle = None
        csym, cargs, _ = q.calib_graph(qsym, args, auxs, col, calib_mode=mode,
                                       quantized_dtype="auto", logger=None)
        gid = f"{m}_graph_{mode}"
        for nm, v in fed.items():
            arrays[f"{gid}/fed/{nm}"] = v
        graphs.append(dict(id=gid, model=m, calib_mode=mode, include_layer=list(col.include_layer),
                           json=json.loads(qsym.tojson()), calib_json=json.loads(csym.tojson()),
                           qarg_names=sorted(cargs)))
        print(gid, "ok")

# entropy thresholds on fixed arrays
for name, batches in qm.hist_cases().items():
    # _LayerHistogramCollector.collect's steps (it takes a monitor callback's raw handle,
    # which it then owns)
    hist = None
    for b in batches:
        mn, mxv = np.min(b), np.max(b)
        th = max(abs(mn), abs(mxv))
        if hist is None:
            h, edges = np.histogram(b, bins=8001, range=(-th, th))
            hist = (h, edges, mn, mxv, th)
        else:
            hist = q.combine_histogram(hist, b, mn, mxv, th)
    for dt in ("int8", "uint8", "auto"):
        mn, mxv, th, div = q._get_optimal_threshold(hist, dt)
        hists.append(dict(name=name, dtype=dt, min=float(mn), max=float(mxv), th=float(th),
                          divergence=float(div), nbins=len(hist[0]), hist_th=float(hist[4])))
    arrays[f"hist/{name}"] = hist[0]


def error(eid, fn):
    try:
        fn()
        errors.append(dict(id=eid, error=None))
    except Exception as e:  # noqa: BLE001
        errors.append(dict(id=eid, error=_err(e)))


sym, args, auxs, shape = model("cnn")
it = mx.io.NDArrayIter(qm.calib_data(shape), batch_size=4)
error("calib_mode", lambda: q.quantize_model(sym, args, auxs, calib_mode="bogus",
                                              calib_data=it, label_names=None))
error("no_calib_data", lambda: q.quantize_model(sym, args, auxs, calib_mode="naive",
                                                 label_names=None))
error("calib_data_type", lambda: q.quantize_model(sym, args, auxs, calib_mode="naive",
                                                   calib_data=[1, 2], label_names=None))
error("dtype", lambda: q.quantize_model(sym, args, auxs, calib_mode="none",
                                         quantized_dtype="int4", label_names=None))
error("granularity", lambda: q.quantize_model(sym, args, auxs, calib_mode="none",
                                               quantize_granularity="row", label_names=None))
error("excluded_type", lambda: q.quantize_model(sym, args, auxs, calib_mode="none",
                                                 excluded_sym_names="conv0", label_names=None))
error("excluded_missing", lambda: q.quantize_model(sym, args, auxs, calib_mode="none",
                                                    excluded_sym_names=["nope"],
                                                    label_names=None))
error("gpu_mkldnn", lambda: q.quantize_model_mkldnn(sym, args, auxs, ctx=mx.gpu(0),
                                                     calib_mode="none", label_names=None))
error("graph_calib_mode", lambda: q.quantize_graph(sym, args, auxs, calib_mode="bogus"))
error("calib_graph_none", lambda: q.calib_graph(sym, args, auxs, None, calib_mode="none"))
error("net_no_shapes", lambda: q.quantize_net_v2(mx.gluon.nn.Dense(3)))

with gzip.open(os.path.join(OUT, "cases.json.gz"), "wt") as f:
    json.dump(dict(cases=cases, hists=hists, errors=errors, graphs=graphs,
                   isa="vnni" if "avx512_vnni" in open("/proc/cpuinfo").read() else "avx2"), f)
np.savez_compressed(os.path.join(OUT, "outputs.npz"), **arrays)
print("wrote", len(cases), "cases", len(hists), "hists", len(errors), "errors")
