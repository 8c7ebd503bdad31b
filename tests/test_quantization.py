"""mx.contrib.quantization against MXNet 1.9.1 (tools/gen_quantization_fixtures.py): the
quantized graphs of quantize_model_mkldnn, the calibration thresholds, the int8 outputs and
the errors of bad arguments."""
import gzip
import json
import os
import sys

import numpy as np
import pytest

import neogluon as mx
from neogluon.contrib import quantization as q

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quantization_models as qm  # noqa: E402

FIX = qm.FIX
D = json.load(gzip.open(os.path.join(FIX, "cases.json.gz"), "rt"))
O = np.load(os.path.join(FIX, "outputs.npz"))
CASES = {c["id"]: c for c in D["cases"]}


@pytest.fixture(autouse=True)
def _isa(monkeypatch):
    monkeypatch.setenv("NEOGLUON_INT8_ISA", D["isa"])


def _model(name):
    fn, shape = qm.MODELS[name]
    sym = fn(mx)
    a, x = qm.params(mx, sym, shape)
    return sym, {k: mx.nd.array(v) for k, v in a.items()}, \
        {k: mx.nd.array(v) for k, v in x.items()}, shape


def _quantize(c):
    sym, args, auxs, shape = _model(c["model"])
    it = mx.io.NDArrayIter(qm.calib_data(shape), batch_size=c["batch"])
    kw = dict(c["kwargs"])
    return q._run_quantize_model(
        sym, args, auxs, ("data",), mx.cpu(), kw.get("excluded_sym_names"),
        kw.get("excluded_op_names"), c["calib_mode"], it, kw.get("num_calib_examples"),
        kw.get("quantized_dtype", "int8"), kw.get("quantize_mode", "smart"),
        kw.get("quantize_granularity", "tensor-wise"), None,
        fused=c["fn"] != "quantize_model"), shape


def _strip(desc):
    """Graph structure without the calibrated numbers and the aux version flags."""
    out = []
    for n in desc["nodes"]:
        a = {k: v for k, v in n.get("attrs", {}).items() if "calib_range" not in k}
        out.append((n["op"], n["name"], sorted(a.items()),
                    [tuple(e[:2]) for e in n["inputs"]],
                    json.dumps(n.get("subgraphs"), sort_keys=True)))
    return out, desc["heads"]


def _calib(desc):
    return {n["name"]: (float(n["attrs"]["min_calib_range"]),
                        float(n["attrs"]["max_calib_range"]))
            for n in desc["nodes"] if "min_calib_range" in n.get("attrs", {})}


GRAPH_CASES = ["mlp_naive_auto", "mlp_entropy_auto", "mlp_none_auto", "mlp_naive_int8",
               "mlp_naive_examples", "cnn_naive_auto", "cnn_entropy_auto", "cnn_none_auto",
               "cnn_naive_int8", "cnn_naive_full", "cnn_naive_channel", "cnn_excl_op",
               "cnn_excl_sym", "cnn_excl_fp32name"]


# unfused graphs (quantize_model): MXNet calibrates them on its default MKLDNN-fused float
# graph, where only unfused layers' outputs (and the data) are seen; with
# MXNET_SUBGRAPH_BACKEND=NONE every requantize / quantize_v2 / quantized BatchNorm is
# calibrated (the *_nofuse cases)
PLAIN_CASES = sorted(k for k in CASES if "_plain_" in k) + ["mixed_naive_auto",
                                                            "addpool_naive_auto"]
RUN_CASES = sorted(k for k in PLAIN_CASES if "run_error" not in CASES[k])
NAIVE_RUN = [k for k in RUN_CASES if CASES[k]["calib_mode"] == "naive"]


def _env(monkeypatch, c):
    monkeypatch.delenv("MXNET_SUBGRAPH_BACKEND", raising=False)
    for k, v in c.get("env", {}).items():
        monkeypatch.setenv(k, v)


@pytest.mark.parametrize("cid", GRAPH_CASES + PLAIN_CASES)
def test_graph_and_thresholds(cid, monkeypatch):
    c = CASES[cid]
    _env(monkeypatch, c)
    (qsym, qargs, _, th), _ = _quantize(c)
    mine = json.loads(qsym.tojson())
    assert _strip(mine) == _strip(c["json"])
    # calibrated ranges: naive = the float layers' min / max (equal up to float32 summation
    # order in the float layers), entropy = MXNet's KL search
    cm, cr = _calib(mine), _calib(c["json"])
    assert cm.keys() == cr.keys()
    # entropy on several batches: the merged histograms' counts depend on numpy's float32
    # histogram binning, which changed in numpy 2 (MXNet 1.9.1 runs numpy 1.x): a few %
    tol = 6e-2 if c["calib_mode"] == "entropy" else 2e-6
    for k in cr:
        np.testing.assert_allclose(cm[k], cr[k], rtol=tol, atol=1e-6, err_msg=k)
    if c["th"] is not None:
        assert set(th) == set(c["th"])
        for k, (lo, hi) in c["th"].items():
            got = [float(np.asarray(v).reshape(-1)[0]) for v in th[k]]
            np.testing.assert_allclose(got, [lo, hi], rtol=tol, atol=1e-7, err_msg=k)
    assert sorted(qargs) == c["qarg_names"]
    for k in c["qarg_names"]:
        key = f"{cid}/qarg/{k}"
        if key in O.files:
            np.testing.assert_array_equal(qargs[k].asnumpy(), O[key], err_msg=k)


@pytest.mark.parametrize("cid", ["mlp_naive_auto", "mlp_naive_int8", "mlp_entropy_auto",
                                 "cnn_naive_auto", "cnn_entropy_auto", "cnn_naive_int8",
                                 "cnn_naive_channel", "cnn_excl_op"] + RUN_CASES)
def test_int8_outputs_of_mxnet_graph(cid):
    """MXNet's quantized graph (its calibrated ranges) with neogluon's quantized parameters:
    the int8 model's outputs equal MXNet's."""
    c = CASES[cid]
    (_, qargs, auxs, _), shape = _quantize(c)
    qsym = mx.sym.load_json(json.dumps(c["json"]))
    feed = dict(qargs)
    feed["data"] = mx.nd.array(qm.test_data(shape))
    ex = qsym.bind(mx.cpu(), args=feed, aux_states=dict(auxs), grad_req="null")
    out = ex.forward(is_train=False)[0].asnumpy()
    ref = O[f"{cid}/out0"]
    np.testing.assert_allclose(out, ref, rtol=0, atol=2e-6 * np.abs(ref).max())


@pytest.mark.parametrize("cid", NAIVE_RUN)
def test_int8_outputs_of_own_graph(cid, monkeypatch):
    """The quantized model neogluon writes (graph, calibrated ranges, quantized parameters),
    run on neogluon: MXNet's int8 model's outputs within one int8 step of the output range
    (the naive ranges agree to float32 summation order, which can move a code; entropy
    thresholds differ by a few % with numpy 2's histograms, so those models are checked on
    MXNet's graph above)."""
    c = CASES[cid]
    _env(monkeypatch, c)
    (qsym, qargs, auxs, _), shape = _quantize(c)
    feed = dict(qargs)
    feed["data"] = mx.nd.array(qm.test_data(shape))
    ex = qsym.bind(mx.cpu(), args=feed, aux_states=dict(auxs), grad_req="null")
    outs = ex.forward(is_train=False)
    assert len(outs) == c["n_out"]
    for j, o in enumerate(outs):
        ref = O[f"{cid}/out{j}"]
        step = np.abs(ref).max() / 127
        np.testing.assert_allclose(o.asnumpy(), ref, rtol=0, atol=1.01 * step, err_msg=cid)


# addpool uint8: MXNet's oneDNN fails inside ("could not create a primitive descriptor
# iterator"), an internal failure rather than a rule; neogluon computes the model
@pytest.mark.parametrize("cid", sorted(k for k in PLAIN_CASES if "run_error" in CASES[k] and
                                       "primitive descriptor" not in CASES[k]["run_error"]))
def test_unfused_runs_refused_as_mxnet(cid, monkeypatch):
    """Where MXNet's CPU build refuses to run the unfused int8 model (oneDNN's quantized
    convolution takes uint8 data only; a quantized BatchNorm needs a calibrated range),
    neogluon refuses too, with an MXNetError."""
    from neogluon.base import MXNetError
    c = CASES[cid]
    _env(monkeypatch, c)
    (qsym, qargs, auxs, _), shape = _quantize(c)
    feed = dict(qargs)
    feed["data"] = mx.nd.array(qm.test_data(shape))
    with pytest.raises(MXNetError):
        ex = qsym.bind(mx.cpu(), args=feed, aux_states=dict(auxs), grad_req="null")
        ex.forward(is_train=False)[0].asnumpy()


GRAPHS = {g["id"]: g for g in D["graphs"]}


@pytest.mark.parametrize("gid", sorted(GRAPHS))
def test_quantize_graph_then_calib_graph(gid):
    """quantize_graph's collector asks for MXNet's layer names (quantize_v2 inputs, the
    float outputs of requantized layers, quantized BatchNorm outputs) and calib_graph puts
    the collected ranges where MXNet does."""
    g = GRAPHS[gid]
    sym, args, auxs, _ = _model(g["model"])
    qsym, _, _, col = q.quantize_graph(sym, args, auxs, calib_mode=g["calib_mode"],
                                       quantized_dtype="auto", quantize_mode="smart")
    assert list(col.include_layer) == g["include_layer"]
    assert _strip(json.loads(qsym.tojson())) == _strip(g["json"])
    for nm in col.include_layer:
        col.collect(nm, mx.nd.array(O[f"{gid}/fed/{nm}"]))
    csym, cargs, _ = q.calib_graph(qsym, args, auxs, col, calib_mode=g["calib_mode"],
                                   quantized_dtype="auto", logger=None)
    mine = json.loads(csym.tojson())
    assert _strip(mine) == _strip(g["calib_json"])
    cm, cr = _calib(mine), _calib(g["calib_json"])
    assert cm.keys() == cr.keys()
    tol = 6e-2 if g["calib_mode"] == "entropy" else 2e-6   # see test_graph_and_thresholds
    for k in cr:
        np.testing.assert_allclose(cm[k], cr[k], rtol=tol, atol=1e-6, err_msg=k)
    assert sorted(cargs) == g["qarg_names"]


@pytest.mark.parametrize("cid", ["cnn_naive_auto", "cnn_entropy_auto"])
def test_accuracy_close_to_float(cid):
    c = CASES[cid]
    (qsym, qargs, auxs, _), shape = _quantize(c)
    sym, args, faux, _ = _model(c["model"])
    x = mx.nd.array(qm.test_data(shape, n=16, seed=5))
    fex = sym.bind(mx.cpu(), args=dict(args, data=x), aux_states=faux, grad_req="null")
    fo = fex.forward(is_train=False)[0].asnumpy()
    qex = qsym.bind(mx.cpu(), args=dict(qargs, data=x), aux_states=dict(auxs),
                    grad_req="null")
    qo = qex.forward(is_train=False)[0].asnumpy()
    assert (fo.argmax(1) == qo.argmax(1)).mean() >= 0.8
    assert np.abs(fo - qo).max() <= 0.1 * np.abs(fo).max()


NEAR_TIE = {"relu"}   # two thresholds whose divergences differ in the 4th digit
MERGED = {"grow"}     # a batch inside an earlier, widened range: numpy 1.x / 2 bin it apart


@pytest.mark.parametrize("rec", D["hists"], ids=lambda r: f"{r['name']}-{r['dtype']}")
def test_entropy_threshold(rec):
    batches = qm.hist_cases()[rec["name"]]
    col = q._LayerHistogramCollector(include_layer=[rec["name"]])
    for b in batches:
        col.collect(rec["name"].encode(), mx.nd.array(b))
    hist = col.hist_dict[rec["name"]]
    assert len(hist[0]) == rec["nbins"]
    if rec["name"] in MERGED:
        assert np.abs(hist[0] - O[f"hist/{rec['name']}"]).sum() <= 0.01 * hist[0].sum()
    else:
        np.testing.assert_array_equal(hist[0], O[f"hist/{rec['name']}"])
    lo, hi, th, div = q._get_optimal_threshold(hist, rec["dtype"])
    assert (float(lo), float(hi)) == (rec["min"], rec["max"])
    np.testing.assert_allclose(float(div[0]), rec["divergence"], rtol=2e-3)
    if rec["name"] in NEAR_TIE | MERGED:
        np.testing.assert_allclose(float(th[0]), rec["th"], rtol=0.1)
    else:
        np.testing.assert_allclose(float(th[0]), rec["th"], rtol=3e-7)


def _err(eid):
    return next(e["error"] for e in D["errors"] if e["id"] == eid)


def test_errors():
    sym, args, auxs, shape = _model("cnn")
    it = mx.io.NDArrayIter(qm.calib_data(shape), batch_size=4)
    cases = {
        "calib_mode": lambda: q.quantize_model(sym, args, auxs, calib_mode="bogus",
                                               calib_data=it, label_names=None),
        "no_calib_data": lambda: q.quantize_model(sym, args, auxs, calib_mode="naive",
                                                  label_names=None),
        "calib_data_type": lambda: q.quantize_model(sym, args, auxs, calib_mode="naive",
                                                    calib_data=[1, 2], label_names=None),
        "dtype": lambda: q.quantize_model(sym, args, auxs, calib_mode="none",
                                          quantized_dtype="int4", label_names=None),
        "granularity": lambda: q.quantize_model(sym, args, auxs, calib_mode="none",
                                                quantize_granularity="row", label_names=None),
        "excluded_type": lambda: q.quantize_model(sym, args, auxs, calib_mode="none",
                                                  excluded_sym_names="conv0",
                                                  label_names=None),
        "gpu_mkldnn": lambda: q.quantize_model_mkldnn(sym, args, auxs, ctx=mx.gpu(0),
                                                      calib_mode="none", label_names=None),
        "graph_calib_mode": lambda: q.quantize_graph(sym, args, auxs, calib_mode="bogus"),
        "calib_graph_none": lambda: q.calib_graph(sym, args, auxs, None, calib_mode="none"),
        "net_no_shapes": lambda: q.quantize_net_v2(mx.gluon.nn.Dense(3)),
    }
    for eid, fn in cases.items():
        with pytest.raises(ValueError) as ei:
            fn()
        assert str(ei.value) == _err(eid).split(": ", 1)[1], eid


def test_quantize_net_v2_matches_symbolic():
    """A Gluon CNN quantized with quantize_net_v2 (naive) gives the same thresholds as
    quantize_model_mkldnn on its exported symbol, and runs."""
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Conv2D(8, 3, padding=1), mx.gluon.nn.BatchNorm(),
            mx.gluon.nn.Activation("relu"), mx.gluon.nn.MaxPool2D(2), mx.gluon.nn.Flatten(),
            mx.gluon.nn.Dense(10))
    net.initialize(mx.init.Xavier())
    x = qm.calib_data((3, 8, 8))
    fo = net(mx.nd.array(x)).asnumpy()
    it = mx.io.NDArrayIter(x, batch_size=4)
    qnet = q.quantize_net_v2(net, quantized_dtype="auto", calib_mode="naive", calib_data=it)
    qo = qnet(mx.nd.array(x)).asnumpy()
    assert qo.shape == fo.shape
    assert np.abs(qo - fo).max() <= 0.1 * np.abs(fo).max()
    ops = [n["op"] for n in json.loads(qnet._cached_graph[1].tojson())["nodes"]] \
        if hasattr(qnet, "_cached_graph") and qnet._cached_graph else None
    if ops:
        assert "_sg_mkldnn_conv" in ops
