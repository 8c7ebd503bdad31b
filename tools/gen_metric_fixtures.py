"""Record mx.metric behaviour from MXNet 1.9.1 as test fixtures.

Run with the oracle interpreter::

    /tmp/mxref/bin/python tools/gen_metric_fixtures.py

It writes ``tests/fixtures/metric/metric_cases.json``: every scenario holds the metric's
configuration, the exact inputs fed to ``update`` (as nested lists with their dtypes), and what
MXNet returned from ``get``, ``get_global``, ``get_name_value`` and ``get_global_name_value``
after each update, after ``reset_local`` and after ``reset``. Error scenarios record the Python
exception type MXNet raises. tests/test_metric.py replays the file without importing mxnet.
"""
import json
import math
import os
import sys

import numpy as np
import mxnet as mx

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures",
                   "metric")
rng = np.random.RandomState(1234)


def enc_array(a):
    a = np.asarray(a)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "data": a.ravel().tolist()}


def enc_value(v):
    if isinstance(v, (list, tuple)):
        return [enc_value(x) for x in v]
    if isinstance(v, str):
        return v
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def snapshot(m):
    return {"get": enc_value(m.get()), "get_global": enc_value(m.get_global()),
            "name_value": enc_value(m.get_name_value()),
            "global_name_value": enc_value(m.get_global_name_value())}


def probs(n, k):
    x = rng.rand(n, k).astype("float32") + 0.05
    return (x / x.sum(axis=1, keepdims=True)).astype("float32")


def labels(n, k, dtype="float32"):
    return rng.randint(0, k, size=(n,)).astype(dtype)


CASES = []


def case(name, create, batches, use_create=True, reset_local_after=1):
    """``create`` is [metric_name, kwargs]; ``batches`` a list of (labels, preds) lists."""
    metric = mx.metric.create(create[0], **create[1]) if use_create else None
    record = {"name": name, "create": create, "batches": [], "snapshots": []}
    for i, (ls, ps) in enumerate(batches):
        metric.update([mx.nd.array(l, dtype=l.dtype) for l in ls],
                      [mx.nd.array(p, dtype=p.dtype) for p in ps])
        record["batches"].append({"labels": [enc_array(l) for l in ls],
                                  "preds": [enc_array(p) for p in ps]})
        snap = snapshot(metric)
        if i == reset_local_after:
            metric.reset_local()
            snap["after_reset_local"] = snapshot(metric)
        record["snapshots"].append(snap)
    record["str"] = str(metric)
    metric.reset()
    record["after_reset"] = snapshot(metric)
    try:
        record["config"] = enc_config(metric.get_config())
    except NotImplementedError:
        record["config"] = None
    CASES.append(record)


def enc_config(cfg):
    out = {}
    for k, v in cfg.items():
        if k == "metrics":
            out[k] = [enc_config(c) for c in v]
        else:
            out[k] = v
    return out


def batches_cls(k, sizes, ldtype="float32"):
    return [([labels(n, k, ldtype)], [probs(n, k)]) for n in sizes]


# classification
case("acc", ["acc", {}], batches_cls(5, [8, 6, 7]))
case("acc_two_outputs", ["accuracy", {}],
     [([labels(4, 3), labels(5, 3)], [probs(4, 3), probs(5, 3)]) for _ in range(3)])
case("acc_class_index_preds", ["acc", {}],
     [([labels(6, 4)], [labels(6, 4)]) for _ in range(3)])
case("acc_int_labels", ["acc", {}], batches_cls(3, [5, 5, 4], "int32"))
case("acc_axis0", ["acc", {"axis": 0}],
     [([labels(5, 3)], [probs(5, 3).T.copy()]) for _ in range(3)])
case("acc_2d_labels", ["acc", {"axis": 2}],
     [([rng.randint(0, 4, size=(3, 5)).astype("float32")],
       [rng.rand(3, 5, 4).astype("float32")]) for _ in range(3)])
case("acc_named", ["acc", {"name": "myacc"}], batches_cls(4, [4, 4, 4]))
case("topk3", ["top_k_accuracy", {"top_k": 3}], batches_cls(10, [10, 9, 12]))
case("topk2_alias", ["top_k_acc", {"top_k": 2}], batches_cls(4, [6, 6, 6]))
case("topk_equal_classes", ["topkaccuracy", {"top_k": 3}], batches_cls(3, [6, 5, 4]))
case("f1_macro", ["f1", {}], batches_cls(2, [12, 10, 9]))
case("f1_micro", ["f1", {"average": "micro"}], batches_cls(2, [12, 10, 9]))
case("f1_no_positives", ["f1", {}],
     [([np.zeros(4, "float32")], [np.tile(np.array([[0.9, 0.1]], "float32"), (4, 1))])] * 3)
case("mcc_macro", ["mcc", {}], batches_cls(2, [12, 10, 9]))
case("mcc_micro", ["mcc", {"average": "micro"}], batches_cls(2, [12, 10, 9]))
case("mcc_one_class", ["mcc", {"average": "micro"}],
     [([np.ones(4, "float32")], [np.tile(np.array([[0.2, 0.8]], "float32"), (4, 1))])] * 3)
case("pcc", ["pcc", {}], batches_cls(3, [10, 12, 8]))
case("perplexity_ignore", ["perplexity", {"ignore_label": 0}], batches_cls(4, [9, 8, 7]))
case("perplexity_none", ["perplexity", {"ignore_label": None}], batches_cls(4, [9, 8, 7]))
case("perplexity_axis", ["perplexity", {"ignore_label": -1, "axis": 1}],
     batches_cls(3, [5, 5, 5]))
case("ce", ["ce", {}], batches_cls(4, [8, 7, 6]))
case("ce_eps", ["crossentropy", {"eps": 1e-3}],
     batches_cls(4, [8, 7, 6]))
case("nll", ["nll_loss", {}], batches_cls(4, [8, 7, 6]))
case("nll_2d_labels", ["negativeloglikelihood", {}],
     [([labels(5, 3).reshape(5, 1)], [probs(5, 3)]) for _ in range(3)])


def reg_batches(shapes_l, shapes_p):
    return [([rng.randn(*sl).astype("float32")], [rng.randn(*sp).astype("float32")])
            for sl, sp in zip(shapes_l, shapes_p)]


for nm in ("mae", "mse", "rmse"):
    case(nm, [nm, {}], reg_batches([(6,), (5,), (7,)], [(6,), (5,), (7,)]))
    case(nm + "_2d", [nm, {}], reg_batches([(4, 3), (4, 3), (2, 3)], [(4, 3), (4, 3), (2, 3)]))
    case(nm + "_col", [nm, {}], reg_batches([(5,), (5,), (3,)], [(5, 1), (5, 1), (3, 1)]))
case("pearsonr_macro", ["pearsonr", {}], reg_batches([(10,), (8,), (12,)], [(10,), (8,), (12,)]))
case("pearson_micro", ["pearsoncorrelation", {"average": "micro"}],
     reg_batches([(10,), (8,), (4, 3)], [(10,), (8,), (4, 3)]))
case("loss", ["loss", {}], [([np.zeros(1, "float32")], [rng.rand(6).astype("float32")]),
                            ([np.zeros(1, "float32")], [rng.rand(3, 2).astype("float32")]),
                            ([np.zeros(1, "float32")], [rng.rand(4).astype("float32")])])
case("loss_named", ["loss", {"name": "softmaxcrossentropyloss"}],
     [([np.zeros(1, "float32")], [rng.rand(5).astype("float32")]) for _ in range(3)])
case("composite", ["composite", {"metrics": ["acc", "ce", {"metric": "top_k_accuracy",
                                                              "top_k": 2}]}],
     batches_cls(4, [8, 7, 6]))
case("create_list", [["acc", "nll_loss"], {}], batches_cls(3, [5, 6, 7]))
case("create_json", ['["top_k_accuracy", {"top_k": 3}]', {}], batches_cls(5, [5, 6, 7]))
case("create_json_dict", ['{"metric": "mae", "name": "abs"}', {}],
     reg_batches([(4,), (4,), (4,)], [(4,), (4,), (4,)]))

# custom metrics: the feval functions are rebuilt by name in the test
FEVALS = {
    "abs_mean": lambda l, p: float(np.abs(l - p.reshape(l.shape)).mean()),
    "tuple_sum": lambda l, p: (float(np.abs(l - p.reshape(l.shape)).sum()), int(l.size)),
}


def named(fn, nm):
    fn.__name__ = nm
    return fn


CUSTOM = []
for fname, named_as, how in [("abs_mean", None, "custom_lambda"), ("abs_mean", "mine", "custom"),
                             ("tuple_sum", None, "np"), ("tuple_sum", "tsum", "np"),
                             ("abs_mean", "named_fn", "custom_named_fn")]:
    if how == "custom_lambda":
        m = mx.metric.CustomMetric(lambda l, p: FEVALS[fname](l, p))
    elif how == "custom":
        m = mx.metric.CustomMetric(FEVALS[fname], name=named_as)
    elif how == "custom_named_fn":
        m = mx.metric.create(named(lambda l, p: FEVALS[fname](l, p), named_as))
    else:
        fn = named(lambda l, p, f=fname: FEVALS[f](l, p), "np_" + fname)
        m = mx.metric.np(fn, name=named_as)
    rec = {"feval": fname, "how": how, "named_as": named_as, "snapshots": [], "batches": []}
    for ls, ps in reg_batches([(4,), (5,), (3,)], [(4,), (5,), (3,)]):
        m.update([mx.nd.array(ls[0])], [mx.nd.array(ps[0])])
        rec["batches"].append({"labels": [enc_array(ls[0])], "preds": [enc_array(ps[0])]})
        rec["snapshots"].append(snapshot(m))
    CUSTOM.append(rec)

# errors
ERRORS = []


def error(name, fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - we record whatever MXNet raises
        ERRORS.append({"name": name, "type": type(e).__name__})
    else:
        ERRORS.append({"name": name, "type": None})


A = mx.nd.array
error("acc_len_mismatch", lambda: mx.metric.Accuracy().update([A([0, 1])], [A([[1, 0], [0, 1]]),
                                                                           A([[1, 0]])]))
error("acc_size_mismatch", lambda: mx.metric.Accuracy().update([A([0, 1, 1])],
                                                               [A([[1, 0], [0, 1]])]))
error("topk_more_than_classes", lambda: mx.metric.TopKAccuracy(top_k=5).update(
    [A([0, 1])], [A(np.eye(2))]))
error("topk_k1", lambda: mx.metric.TopKAccuracy(top_k=1))
error("f1_multiclass", lambda: mx.metric.F1().update([A([0, 1, 2])], [A(np.eye(3))]))
error("mcc_multiclass", lambda: mx.metric.MCC().update([A([0, 1, 2])], [A(np.eye(3))]))
error("create_unknown", lambda: mx.metric.create("no_such_metric"))
error("create_instance_with_args", lambda: mx.metric.create(mx.metric.Accuracy(), axis=0))
error("custom_get_config", lambda: mx.metric.CustomMetric(lambda l, p: 0.0).get_config())
error("mae_len_mismatch", lambda: mx.metric.MAE().update([A([1.0])], [A([1.0]), A([2.0])]))
error("pearson_shape_mismatch", lambda: mx.metric.PearsonCorrelation().update(
    [A([1.0, 2.0, 3.0])], [A([[1.0, 2.0, 3.0]])]))
error("perplexity_shape", lambda: mx.metric.Perplexity(None).update([A([0, 1, 1])],
                                                                    [A(np.eye(2))]))

# properties of freshly created metrics
FRESH = []
for nm, kw in [("acc", {}), ("top_k_accuracy", {"top_k": 4}), ("f1", {}), ("mcc", {}),
               ("mae", {}), ("mse", {}), ("rmse", {}), ("ce", {}), ("nll_loss", {}),
               ("perplexity", {"ignore_label": None}), ("pearsonr", {}), ("loss", {}),
               ("composite", {}), ("torch", {}), ("caffe", {}), ("pcc", {})]:
    m = mx.metric.create(nm, **kw)
    FRESH.append({"create": [nm, kw], "class": type(m).__name__, "name": m.name,
                  "snapshot": snapshot(m)})

os.makedirs(OUT, exist_ok=True)
with open(os.path.join(OUT, "metric_cases.json"), "w") as f:
    json.dump({"mxnet_version": mx.__version__, "cases": CASES, "custom": CUSTOM,
               "errors": ERRORS, "fresh": FRESH}, f, indent=None, separators=(",", ":"))
print("wrote", len(CASES), "cases,", len(CUSTOM), "custom,", len(ERRORS), "errors,",
      len(FRESH), "fresh", file=sys.stderr)
