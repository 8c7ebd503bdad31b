"""Record MXNet 1.9.1's training callbacks, monitor and log formatter as test fixtures.

Run with the oracle interpreter::

    /tmp/mxref/bin/python tools/gen_callback_fixtures.py

It writes ``tests/fixtures/callback/callback_cases.json``:

* ``speedometer``, ``log_train_metric``, ``progress_bar``, ``validation``: the exact metric
  inputs fed before each batch-end call and the log lines MXNet wrote (root logger, INFO).
  Speedometer's speed depends on the clock, so its number is replaced by ``<SPEED>``.
* ``checkpoint``: the files ``do_checkpoint`` leaves for a small graph (names, SHA-256 of their
  bytes, keys of the parameter files) with the arrays it saved.
* ``log_format``: ``mx.log._Formatter``'s text for hand-made records (times in UTC).
* ``get_logger``: handlers, levels and the file text ``mx.log.get_logger`` gives.
* ``engine``: what ``set_bulk_size`` returns (per thread), and the errors of bad sizes.
* ``monitor``: ``Monitor.toc()`` on a bound executor (inference forward) for a fixed
  ``stat_func``, pattern and sort order (MXNet's oneDNN graph fusion turned off, so the names
  are the graph's own).

tests/test_callback_monitor.py replays the file without importing mxnet.
"""
import hashlib
import json
import logging
import os
import re
import tempfile
import time
import warnings

import numpy as np

# MXNet's oneDNN pass fuses FullyConnected+activation into nodes named sg_mkldnn_*, and the
# monitor would report those names; without the pass it reports the graph's own node names.
os.environ["MXNET_SUBGRAPH_BACKEND"] = "NONE"
import mxnet as mx  # noqa: E402  (after the environment setting it reads at import)
from mxnet.model import BatchEndParam  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures",
                   "callback")
rng = np.random.RandomState(20240611)
SPEED = re.compile(r"Speed: (?:[0-9]+\.[0-9]{2}|inf) samples/sec")


class Capture(logging.Handler):
    """Collects the root logger's INFO records as (level, text)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append([record.levelno, record.getMessage()])


def capturing(fn):
    root = logging.getLogger()
    handler, level = Capture(), root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        fn()
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    return handler.lines


def batch_inputs(n_batches, batch_size=4, classes=3):
    """Labels and class probabilities for each batch (plain lists, stored in the fixture)."""
    out = []
    for _ in range(n_batches):
        p = rng.rand(batch_size, classes).astype("float32") + 0.05
        p /= p.sum(axis=1, keepdims=True)
        out.append({"label": rng.randint(0, classes, size=batch_size).astype("float32").tolist(),
                    "pred": p.tolist()})
    return out


def make_metric(kind):
    if kind is None:
        return None
    if kind == "acc":
        return mx.metric.Accuracy()
    return mx.metric.create(["acc", "ce"])


def update(metric, inputs):
    if metric is not None:
        metric.update([mx.nd.array(inputs["label"])], [mx.nd.array(inputs["pred"])])


def run_schedule(callback, metric_kind, schedule, inputs):
    """Call ``callback`` at each (epoch, nbatch) of ``schedule`` after one metric update."""
    metric = make_metric(metric_kind)

    def go():
        for (epoch, nbatch), batch in zip(schedule, inputs):
            update(metric, batch)
            callback(BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=metric,
                                   locals=None))
    return capturing(go)


def speedometer_cases():
    schedule = [(0, i) for i in range(10)] + [(1, i) for i in range(8)]
    inputs = batch_inputs(len(schedule))
    cases = []
    for kind, auto_reset, frequent in [("acc", True, 3), ("composite", True, 4),
                                       ("acc", False, 3), (None, True, 2)]:
        lines = run_schedule(mx.callback.Speedometer(4, frequent, auto_reset), kind, schedule,
                             inputs)
        for line in lines:
            assert SPEED.search(line[1]), line
            line[1] = SPEED.sub("Speed: <SPEED> samples/sec", line[1])
        cases.append({"batch_size": 4, "frequent": frequent, "auto_reset": auto_reset,
                      "metric": kind, "lines": lines})
    return {"schedule": schedule, "inputs": inputs, "cases": cases}


def log_train_metric_cases():
    schedule = [(2, i) for i in range(7)]
    inputs = batch_inputs(len(schedule))
    cases = []
    for kind, period, auto_reset in [("acc", 2, False), ("composite", 3, True), (None, 1, False)]:
        lines = run_schedule(mx.callback.log_train_metric(period, auto_reset), kind, schedule,
                             inputs)
        cases.append({"period": period, "auto_reset": auto_reset, "metric": kind,
                      "lines": lines})
    return {"schedule": schedule, "inputs": inputs, "cases": cases}


def progress_bar_cases():
    cases = []
    for total, length in [(7, 20), (3, 80)]:
        bar = mx.callback.ProgressBar(total, length)
        schedule = [(0, i) for i in range(total + 2)]
        lines = run_schedule(bar, None, schedule, [None] * len(schedule))
        cases.append({"total": total, "length": length, "schedule": schedule, "lines": lines})
    return cases


def validation_cases():
    inputs = batch_inputs(2)
    cases = []
    for kind in ["acc", "composite", None]:
        lines = run_schedule(mx.callback.LogValidationMetricsCallback(), kind,
                             [(5, 0), (6, 0)], inputs)
        cases.append({"metric": kind, "lines": lines})
    return {"inputs": inputs, "schedule": [(5, 0), (6, 0)], "cases": cases}


def checkpoint_graph():
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    bn = mx.sym.BatchNorm(fc, name="bn")
    return mx.sym.SoftmaxOutput(bn, name="softmax")


def checkpoint_cases():
    arrays = {"arg": {"fc_weight": rng.rand(3, 2).astype("float32"),
                      "fc_bias": rng.rand(3).astype("float32"),
                      "bn_gamma": rng.rand(3).astype("float32"),
                      "bn_beta": rng.rand(3).astype("float32")},
              "aux": {"bn_moving_mean": rng.rand(3).astype("float32"),
                      "bn_moving_var": rng.rand(3).astype("float32")}}
    arg = {k: mx.nd.array(v) for k, v in arrays["arg"].items()}
    aux = {k: mx.nd.array(v) for k, v in arrays["aux"].items()}
    sym = checkpoint_graph()
    cases = []
    for period, epochs in [(2, 5), (0, 2), (1, 1)]:
        with tempfile.TemporaryDirectory() as tmp:
            prefix = os.path.join(tmp, "net")
            callback = mx.callback.do_checkpoint(prefix, period)
            lines = capturing(lambda: [callback(i, sym, arg, aux) for i in range(epochs)])
            files = {}
            for name in sorted(os.listdir(tmp)):
                with open(os.path.join(tmp, name), "rb") as f:
                    blob = f.read()
                entry = {"sha256": hashlib.sha256(blob).hexdigest()}
                if name.endswith(".params"):
                    entry["keys"] = sorted(mx.nd.load(os.path.join(tmp, name)))
                files[name] = entry
            lines = [[lvl, text.replace(tmp, "<DIR>")] for lvl, text in lines]
        cases.append({"period": period, "epochs": epochs, "files": files, "lines": lines})
    # [name, values] pairs: the order of the arrays is the order of the file's records
    return {"arrays": {kind: [[k, v.tolist()] for k, v in group.items()]
                       for kind, group in arrays.items()},
            "cases": cases}


def log_format_cases():
    formatter = mx.log._Formatter()
    formatter.converter = time.gmtime   # the fixture must not depend on the time zone
    cases = []
    for level in [logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR,
                  logging.CRITICAL, 25, 5, 45]:
        record = logging.LogRecord("helper", level, "/src/train.py", 42, "loss %s at %d",
                                   ("0.5", 7), None, func="step")
        record.created = 1700000000.25
        record.msecs = 250.0
        record.process = 4321
        cases.append({"level": level, "text": formatter.format(record)})
    return cases


def describe_logger(logger):
    return {"level": logger.level,
            "handlers": [{"type": type(h).__name__,
                          "formatter": type(h.formatter).__name__ if h.formatter else None,
                          "mode": getattr(h, "mode", None)} for h in logger.handlers]}


def get_logger_cases():
    out = {}
    root = logging.getLogger()
    before = len(root.handlers)
    got = mx.log.get_logger()
    out["root_is_root"] = got is root
    out["root_handlers_added"] = len(root.handlers) - before
    first = mx.log.get_logger("gen_callback.plain")
    out["plain"] = describe_logger(first)
    again = mx.log.get_logger("gen_callback.plain", level=logging.DEBUG)
    out["plain_again_same"] = again is first
    out["plain_again"] = describe_logger(again)
    out["debug"] = describe_logger(mx.log.get_logger("gen_callback.debug", level=logging.DEBUG))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "log.txt")
        with open(path, "w") as f:
            f.write("old\n")
        wlog = mx.log.get_logger("gen_callback.file_w", filename=path, filemode="w",
                                 level=logging.INFO)
        out["file_w"] = describe_logger(wlog)
        wlog.info("first %d", 1)
        wlog.debug("hidden")
        alog = mx.log.get_logger("gen_callback.file_a", filename=path, level=logging.INFO)
        out["file_a"] = describe_logger(alog)
        alog.warning("second")
        for h in wlog.handlers + alog.handlers:
            h.flush()
            h.close()
        with open(path) as f:
            out["file_text"] = f.read()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mx.log.getLogger("gen_callback.old")
    out["getLogger_warning"] = [[w.category.__name__, str(w.message)] for w in caught]
    out["constants"] = {n: getattr(mx.log, n) for n in
                        ["CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "NOTSET"]}
    return out


def mean_abs(x):
    return mx.nd.sum(mx.nd.abs(x)) / x.size


def monitor_graph():
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=4, name="fc1")
    act = mx.sym.Activation(fc1, act_type="tanh", name="act1")
    return mx.sym.FullyConnected(act, num_hidden=2, name="fc2")


def monitor_cases():
    sym = monitor_graph()
    shapes = {"data": (3, 5)}
    exe = sym.simple_bind(mx.cpu(), grad_req="null", **shapes)
    values = {}
    for name, arr in exe.arg_dict.items():
        values[name] = (rng.rand(*arr.shape) - 0.5).astype("float32")
        arr[:] = values[name]
    cases = []
    for pattern, sort in [(".*", False), ("fc.*", True), (".*output", False)]:
        mon = mx.mon.Monitor(1, stat_func=mean_abs, pattern=pattern, sort=sort)
        mon.install(exe)
        mon.tic()
        exe.forward(is_train=False)
        res = mon.toc()
        cases.append({"pattern": pattern, "sort": sort,
                      "result": [[n, k, v] for n, k, v in res]})
    return {"shapes": {k: list(v) for k, v in shapes.items()},
            "args": {k: v.tolist() for k, v in values.items()}, "cases": cases}


def engine_cases():
    """Return values of set_bulk_size, a fresh thread's size, and the errors of bad sizes."""
    import threading
    out = {"returns": [mx.engine.set_bulk_size(n) for n in [5, 0, 7, 3]]}
    seen = []
    thread = threading.Thread(target=lambda: seen.append(mx.engine.set_bulk_size(2)))
    thread.start()
    thread.join()
    out["new_thread_previous"] = seen[0]
    out["after_thread"] = mx.engine.set_bulk_size(0)
    with mx.engine.bulk(4):
        inside = mx.engine.set_bulk_size(4)
    out["inside_bulk"] = inside
    out["after_bulk"] = mx.engine.set_bulk_size(0)
    errors = {}
    # (A negative size is left out: MXNet accepts it or fails in std::vector::reserve,
    # depending on the engine's state; neogluon refuses it.)
    for label, bad in [("float", 2.5), ("str", "a"), ("none", None)]:
        try:
            mx.engine.set_bulk_size(bad)
            errors[label] = None
        except Exception as err:  # noqa: BLE001  (the type is what is recorded)
            errors[label] = type(err).__name__
    out["errors"] = errors
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    fixture = {"mxnet_version": mx.__version__,
               "speedometer": speedometer_cases(),
               "log_train_metric": log_train_metric_cases(),
               "progress_bar": progress_bar_cases(),
               "validation": validation_cases(),
               "checkpoint": checkpoint_cases(),
               "log_format": log_format_cases(),
               "get_logger": get_logger_cases(),
               "monitor": monitor_cases(),
               "engine": engine_cases()}
    path = os.path.join(OUT, "callback_cases.json")
    with open(path, "w") as f:
        json.dump(fixture, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
