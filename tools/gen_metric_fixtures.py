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


# ============================================================================ Estimator (Fit API)
# A tiny, fully determined model: Dense(3) on 4 features with fixed weights, SGD with momentum,
# an unshuffled DataLoader. The fixture records the event trace, metric names and values, the
# final weights and the checkpoint files MXNet writes, so tests/test_estimator.py can replay
# the same scenarios on neogluon.
import logging  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
import warnings  # noqa: E402

from mxnet import gluon  # noqa: E402
from mxnet.gluon.contrib import estimator as est  # noqa: E402

warnings.simplefilter("ignore")
erng = np.random.RandomState(7)
EX = erng.randn(20, 4).astype("float32")
EY = (EX[:, 0] + 0.5 * EX[:, 1] > 0).astype("float32") + (EX[:, 2] > 1).astype("float32")
VX = erng.randn(8, 4).astype("float32")
VY = (VX[:, 0] + 0.5 * VX[:, 1] > 0).astype("float32")
W0 = (erng.randn(3, 4) * 0.1).astype("float32")
B0 = np.zeros(3, "float32")


class Recorder(est.TrainBegin, est.TrainEnd, est.EpochBegin, est.EpochEnd, est.BatchBegin,
               est.BatchEnd):
    """Records every event, with the metric values at each epoch end."""

    def __init__(self):
        self.trace = []

    def train_begin(self, estimator, *args, **kwargs):
        self.trace.append(["train_begin", estimator.max_epoch, estimator.max_batch])

    def train_end(self, estimator, *args, **kwargs):
        self.trace.append(["train_end"])

    def epoch_begin(self, estimator, *args, **kwargs):
        self.trace.append(["epoch_begin"])

    def epoch_end(self, estimator, *args, **kwargs):
        vals = [[m.name, enc_value(m.get()[1])] for m in estimator.train_metrics
                + estimator.val_metrics]
        self.trace.append(["epoch_end", vals])
        return False

    def batch_begin(self, estimator, *args, **kwargs):
        self.trace.append(["batch_begin", int(kwargs["batch"][0].shape[0])])

    def batch_end(self, estimator, *args, **kwargs):
        self.trace.append(["batch_end", len(kwargs["pred"]), len(kwargs["label"]),
                           len(kwargs["loss"])])
        return False


def make_est(lr=0.1, metrics=None, val_metrics=None):
    net = gluon.nn.Dense(3, in_units=4)
    net.initialize()
    net.weight.set_data(mx.nd.array(W0))
    net.bias.set_data(mx.nd.array(B0))
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr, "momentum": 0.9})
    e = est.Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), train_metrics=metrics,
                      val_metrics=val_metrics, trainer=trainer, context=mx.cpu())
    return net, e


def loaders():
    train = gluon.data.DataLoader(gluon.data.ArrayDataset(EX, EY), batch_size=6)
    val = gluon.data.DataLoader(gluon.data.ArrayDataset(VX, VY), batch_size=5)
    return train, val


class Capture(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        msg = record.getMessage()
        # times vary from run to run
        msg = re.sub(r"\d+\.\d+s", "<t>s", msg)
        msg = re.sub(r"total \d+s", "total <t>s", msg)
        self.lines.append(msg)


EST = []


def est_case(name, run):
    tmp = tempfile.mkdtemp()
    try:
        rec = {"name": name}
        run(rec, tmp)
        EST.append(rec)
    finally:
        shutil.rmtree(tmp)


def final(rec, net, e):
    rec["weight"] = net.weight.data().asnumpy().tolist()
    rec["bias"] = net.bias.data().asnumpy().tolist()
    rec["train_metrics"] = [[m.name, enc_value(m.get()[1])] for m in e.train_metrics]
    rec["val_metrics"] = [[m.name, enc_value(m.get()[1])] for m in e.val_metrics]


def run_epochs(rec, tmp):
    net, e = make_est()
    r, cap = Recorder(), Capture()
    e.logger.handlers = [cap]
    train, val = loaders()
    e.fit(train, val_data=val, epochs=3, event_handlers=[r])
    rec["trace"] = r.trace
    rec["log"] = cap.lines
    final(rec, net, e)


def run_batches(rec, tmp):
    net, e = make_est()
    r, cap = Recorder(), Capture()
    e.logger.handlers = [cap]
    train, _ = loaders()
    e.fit(train, batches=5, event_handlers=[r])
    rec["trace"] = r.trace
    rec["log"] = cap.lines
    final(rec, net, e)


def run_log_interval(rec, tmp):
    net, e = make_est(metrics=[mx.metric.Accuracy(), mx.metric.Loss("lossval")])
    cap = Capture()
    e.logger.handlers = [cap]
    train, val = loaders()
    e.fit(train, val_data=val, epochs=2,
          event_handlers=[est.LoggingHandler(log_interval=2, metrics=e.train_metrics)])
    rec["log"] = cap.lines
    final(rec, net, e)


def run_evaluate(rec, tmp):
    net, e = make_est()
    cap = Capture()
    e.logger.handlers = [cap]
    _, val = loaders()
    e.evaluate(val)
    rec["log"] = cap.lines
    final(rec, net, e)


def run_early_stop(rec, tmp):
    net, e = make_est()
    r = Recorder()
    train, val = loaders()
    acc = e.train_metrics[0]
    e.fit(train, val_data=val, epochs=6,
          event_handlers=[r, est.EarlyStoppingHandler(acc, mode="max", baseline=2.0,
                                                      patience=2)])
    rec["epochs_run"] = sum(1 for t in r.trace if t[0] == "epoch_end")
    final(rec, net, e)


def run_validation_batch_period(rec, tmp):
    net, e = make_est()
    cap = Capture()
    e.logger.handlers = [cap]
    train, val = loaders()
    e.fit(train, epochs=1, event_handlers=[
        est.ValidationHandler(val, e.evaluate, epoch_period=None, batch_period=2)])
    rec["log"] = cap.lines
    final(rec, net, e)


def run_checkpoint(rec, tmp):
    net, e = make_est()
    train, val = loaders()
    e.fit(train, val_data=val, epochs=4, event_handlers=[
        est.CheckpointHandler(tmp, model_prefix="m", max_checkpoints=2)])
    rec["files"] = sorted(os.listdir(tmp))
    final(rec, net, e)
    net2, e2 = make_est()
    cap = Capture()
    e2.logger.handlers = [cap]
    e2.fit(train, val_data=val, epochs=6, event_handlers=[
        est.CheckpointHandler(tmp, model_prefix="m", max_checkpoints=10,
                              resume_from_checkpoint=True)])
    rec["files_after_resume"] = sorted(os.listdir(tmp))
    rec["resume_log"] = [l for l in cap.lines if "CheckpointHandler" in l]
    rec["weight_resumed"] = net2.weight.data().asnumpy().tolist()
    net3, e3 = make_est()
    e3.fit(train, val_data=val, epochs=6)
    rec["weight_uninterrupted"] = net3.weight.data().asnumpy().tolist()


def run_checkpoint_batches(rec, tmp):
    net, e = make_est()
    train, _ = loaders()
    e.fit(train, batches=7, event_handlers=[
        est.CheckpointHandler(tmp, model_prefix="b", epoch_period=None, batch_period=3)])
    rec["files"] = sorted(os.listdir(tmp))
    net2, e2 = make_est()
    e2.fit(train, batches=10, event_handlers=[
        est.CheckpointHandler(tmp, model_prefix="b", epoch_period=None, batch_period=3,
                              resume_from_checkpoint=True)])
    rec["files_after_resume"] = sorted(os.listdir(tmp))
    final(rec, net2, e2)


def run_save_best(rec, tmp):
    net, e = make_est()
    train, val = loaders()
    e.fit(train, val_data=val, epochs=3, event_handlers=[
        est.CheckpointHandler(tmp, model_prefix="s", monitor=e.val_metrics[0], save_best=True,
                              mode="max")])
    rec["files"] = sorted(os.listdir(tmp))


for nm, fn in [("epochs", run_epochs), ("batches", run_batches),
               ("log_interval", run_log_interval), ("evaluate", run_evaluate),
               ("early_stop", run_early_stop),
               ("validation_batch_period", run_validation_batch_period),
               ("checkpoint", run_checkpoint), ("checkpoint_batches", run_checkpoint_batches),
               ("save_best", run_save_best)]:
    est_case(nm, fn)

EST_ERRORS = []


def est_error(name, fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        EST_ERRORS.append({"name": name, "type": type(e).__name__})
    else:
        EST_ERRORS.append({"name": name, "type": None})


def _fit(**kw):
    _, e = make_est()
    train, _ = loaders()
    e.fit(train, **kw)


est_error("fit_both", lambda: _fit(epochs=1, batches=1))
est_error("fit_neither", lambda: _fit())
est_error("fit_not_loader", lambda: make_est()[1].fit([(EX, EY)], epochs=1))
est_error("bad_loss", lambda: est.Estimator(gluon.nn.Dense(2), loss="l2"))
est_error("bad_trainer", lambda: est.Estimator(gluon.nn.Dense(2), gluon.loss.L2Loss(),
                                               trainer="sgd"))
est_error("bad_context", lambda: est.Estimator(gluon.nn.Dense(2), gluon.loss.L2Loss(),
                                               context="cpu"))
est_error("bad_log_interval", lambda: est.LoggingHandler(log_interval="batch"))
est_error("early_stop_composite",
          lambda: est.EarlyStoppingHandler(mx.metric.CompositeEvalMetric(["acc"])))
est_error("early_stop_not_metric", lambda: est.EarlyStoppingHandler("acc"))
est_error("save_best_no_monitor", lambda: est.CheckpointHandler(tempfile.mkdtemp(),
                                                                save_best=True))
est_error("handler_unknown_metric", lambda: _fit(epochs=1, event_handlers=[
    est.MetricHandler([mx.metric.Accuracy()])]) if False else _fit(
    epochs=1, event_handlers=[est.LoggingHandler(metrics=[mx.metric.Accuracy()])]))
est_error("bad_handler", lambda: _fit(epochs=1, event_handlers=["log"]))
est_error("bad_batch_processor", lambda: est.Estimator(gluon.nn.Dense(2), gluon.loss.L2Loss(),
                                                       batch_processor=object()))


def _resume_done():
    tmp = tempfile.mkdtemp()
    _fit(epochs=2, event_handlers=[est.CheckpointHandler(tmp)])
    _fit(epochs=2, event_handlers=[est.CheckpointHandler(tmp, resume_from_checkpoint=True)])


est_error("resume_already_done", _resume_done)

with open(os.path.join(OUT, "estimator_cases.json"), "w") as f:
    json.dump({"mxnet_version": mx.__version__, "data": {
        "x": EX.tolist(), "y": EY.tolist(), "vx": VX.tolist(), "vy": VY.tolist(),
        "w0": W0.tolist(), "b0": B0.tolist()}, "cases": EST, "errors": EST_ERRORS}, f,
        separators=(",", ":"))
print("wrote", len(EST), "estimator cases,", len(EST_ERRORS), "errors", file=sys.stderr)
