"""mx.callback, mx.monitor, mx.log, mx.engine and mx.contrib.tensorboard.

Log lines, checkpoint files, formatter text, get_logger set-ups, bulk sizes and monitor
results are compared with MXNet 1.9.1's (tests/fixtures/callback/callback_cases.json, written
by tools/gen_callback_fixtures.py).
"""
import hashlib
import json
import logging
import math
import os
import re
import threading
import time
import warnings

import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError
from neogluon.model import BatchEndParam

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "callback", "callback_cases.json")
with open(FIX) as _f:
    DATA = json.load(_f)

SPEED = re.compile(r"Speed: (?:[0-9]+\.[0-9]{2}|inf) samples/sec")


class _Capture(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append([record.levelno, record.getMessage()])


def capturing(fn):
    """Root logger's records (level, text) while ``fn`` runs at INFO level."""
    root = logging.getLogger()
    handler, level = _Capture(), root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        fn()
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    return handler.lines


def make_metric(kind):
    if kind is None:
        return None
    if kind == "acc":
        return mx.metric.Accuracy()
    return mx.metric.create(["acc", "ce"])


def run_schedule(callback, kind, schedule, inputs):
    metric = make_metric(kind)

    def go():
        for (epoch, nbatch), batch in zip(schedule, inputs):
            if metric is not None:
                metric.update([mx.nd.array(batch["label"])], [mx.nd.array(batch["pred"])])
            callback(BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=metric,
                                   locals=None))
    return capturing(go)


# ----------------------------------------------------------------------------- callbacks

def test_batch_end_param_is_mxnets_namedtuple():
    param = BatchEndParam(1, 2, None, None)
    assert param._fields == ("epoch", "nbatch", "eval_metric", "locals")
    assert repr(param) == "BatchEndParams(epoch=1, nbatch=2, eval_metric=None, locals=None)"


@pytest.mark.parametrize("case", DATA["speedometer"]["cases"],
                         ids=lambda c: f"{c['metric']}-reset{c['auto_reset']}-{c['frequent']}")
def test_speedometer_lines_match_mxnet(case):
    fx = DATA["speedometer"]
    meter = mx.callback.Speedometer(case["batch_size"], case["frequent"], case["auto_reset"])
    lines = run_schedule(meter, case["metric"], fx["schedule"], fx["inputs"])
    for line in lines:
        assert SPEED.search(line[1]), line
        line[1] = SPEED.sub("Speed: <SPEED> samples/sec", line[1])
    assert lines == case["lines"]


class _FakeClock:
    def __init__(self):
        self.now = 100.0

    def perf_counter(self):
        return self.now


def test_speedometer_speed_is_samples_per_second(monkeypatch):
    clock = _FakeClock()
    monkeypatch.setattr(mx.callback, "time", clock)
    meter = mx.callback.Speedometer(batch_size=8, frequent=2)

    def go():
        for nbatch, elapsed in enumerate([0.0, 0.5, 0.3, 0.0, 0.0]):
            clock.now += elapsed
            meter(BatchEndParam(0, nbatch, None, None))
    lines = capturing(go)
    # started at batch 0; batch 2 is 0.8 s later: 2 batches of 8 samples -> 20 samples/s;
    # batch 4 comes with no time passed on the clock -> inf, as MXNet reports it
    assert [text for _, text in lines] == ["Iter[0] Batch [2]\tSpeed: 20.00 samples/sec",
                                           "Iter[0] Batch [4]\tSpeed: inf samples/sec"]


def test_speedometer_restarts_at_a_new_epoch(monkeypatch):
    clock = _FakeClock()
    monkeypatch.setattr(mx.callback, "time", clock)
    meter = mx.callback.Speedometer(batch_size=1, frequent=1)

    def go():
        for epoch, nbatch in [(0, 0), (0, 1), (1, 0), (1, 1)]:
            clock.now += 1.0
            meter(BatchEndParam(epoch, nbatch, None, None))
    # batch 0 of each epoch only starts the clock
    assert [text for _, text in capturing(go)] == ["Iter[0] Batch [1]\tSpeed: 1.00 samples/sec",
                                                   "Iter[1] Batch [1]\tSpeed: 1.00 samples/sec"]


@pytest.mark.parametrize("case", DATA["log_train_metric"]["cases"],
                         ids=lambda c: f"{c['metric']}-{c['period']}-{c['auto_reset']}")
def test_log_train_metric_matches_mxnet(case):
    fx = DATA["log_train_metric"]
    callback = mx.callback.log_train_metric(case["period"], case["auto_reset"])
    assert run_schedule(callback, case["metric"], fx["schedule"], fx["inputs"]) == case["lines"]


@pytest.mark.parametrize("case", DATA["progress_bar"], ids=lambda c: f"{c['total']}-{c['length']}")
def test_progress_bar_matches_mxnet(case):
    bar = mx.callback.ProgressBar(case["total"], case["length"])
    schedule = case["schedule"]
    assert run_schedule(bar, None, schedule, [None] * len(schedule)) == case["lines"]


@pytest.mark.parametrize("case", DATA["validation"]["cases"], ids=lambda c: str(c["metric"]))
def test_log_validation_metrics_matches_mxnet(case):
    fx = DATA["validation"]
    lines = run_schedule(mx.callback.LogValidationMetricsCallback(), case["metric"],
                         fx["schedule"], fx["inputs"])
    assert lines == case["lines"]


def _checkpoint_graph():
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    bn = mx.sym.BatchNorm(fc, name="bn")
    return mx.sym.SoftmaxOutput(bn, name="softmax")


@pytest.mark.parametrize("case", DATA["checkpoint"]["cases"], ids=lambda c: f"period{c['period']}")
def test_do_checkpoint_writes_mxnets_files(case, tmp_path):
    arrays = DATA["checkpoint"]["arrays"]
    arg = {k: mx.nd.array(np.array(v, dtype="float32")) for k, v in arrays["arg"]}
    aux = {k: mx.nd.array(np.array(v, dtype="float32")) for k, v in arrays["aux"]}
    sym = _checkpoint_graph()
    prefix = str(tmp_path / "net")
    callback = mx.callback.do_checkpoint(prefix, case["period"])
    lines = capturing(lambda: [callback(i, sym, arg, aux) for i in range(case["epochs"])])
    assert [[lvl, text.replace(str(tmp_path), "<DIR>")] for lvl, text in lines] \
        == case["lines"]
    assert sorted(os.listdir(tmp_path)) == sorted(case["files"])
    for name, expected in case["files"].items():
        blob = (tmp_path / name).read_bytes()
        assert hashlib.sha256(blob).hexdigest() == expected["sha256"], name
        if name.endswith(".params"):
            assert sorted(mx.nd.load(str(tmp_path / name))) == expected["keys"]
            epoch = int(name[len("net-"):-len(".params")])
            sym2, arg2, aux2 = mx.model.load_checkpoint(prefix, epoch)
            assert sym2.tojson() == sym.tojson()
            for mine, loaded in [(arg, arg2), (aux, aux2)]:
                assert sorted(mine) == sorted(loaded)
                for k in mine:
                    np.testing.assert_array_equal(loaded[k].asnumpy(), mine[k].asnumpy())


class _FakeModule:
    def __init__(self):
        self.calls = []

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False):
        self.calls.append((prefix, epoch, save_optimizer_states))


def test_module_checkpoint_calls_save_checkpoint_every_period():
    mod = _FakeModule()
    callback = mx.callback.module_checkpoint(mod, "run/m", period=3, save_optimizer_states=True)
    for epoch in range(7):
        callback(epoch)
    assert mod.calls == [("run/m", 3, True), ("run/m", 6, True)]
    mod2 = _FakeModule()
    callback = mx.callback.module_checkpoint(mod2, "m", period=0)   # below 1: every epoch
    for epoch in range(2):
        callback(epoch, None, {}, {})
    assert mod2.calls == [("m", 1, False), ("m", 2, False)]


def test_callbacks_refuse_bad_arguments():
    with pytest.raises(MXNetError, match="frequent"):
        mx.callback.Speedometer(32, frequent=0)
    with pytest.raises(MXNetError, match="batch_size"):
        mx.callback.Speedometer("32")
    with pytest.raises(MXNetError, match="total"):
        mx.callback.ProgressBar(0)
    with pytest.raises(MXNetError, match="length"):
        mx.callback.ProgressBar(10, length=-1)
    with pytest.raises(MXNetError, match="period"):
        mx.callback.log_train_metric(0)
    with pytest.raises(MXNetError, match="period"):
        mx.callback.do_checkpoint("p", period="2")
    with pytest.raises(MXNetError, match="prefix"):
        mx.callback.do_checkpoint(None)
    with pytest.raises(MXNetError, match="save_checkpoint"):
        mx.callback.module_checkpoint(object(), "p")
    for callback in [mx.callback.Speedometer(1, 1), mx.callback.ProgressBar(3),
                     mx.callback.log_train_metric(1),
                     mx.callback.LogValidationMetricsCallback()]:
        with pytest.raises(MXNetError, match="BatchEndParam.*int"):
            callback(3)


# ----------------------------------------------------------------------------- monitor

class _FakeExecutor:
    """The executor interface a Monitor uses: set_monitor_callback, arg_dict, aux_dict.

    ``run()`` calls the monitor callback as an executor's forward does: for each operator
    its inputs (with monitor_all) and its output."""

    def __init__(self, names=str):
        rng = np.random.RandomState(3)
        self.arg_dict = {"data": mx.nd.array(rng.randn(2, 3)),
                         "fc_weight": mx.nd.array(rng.randn(4, 3)),
                         "fc_bias": mx.nd.array(rng.randn(4))}
        self.aux_dict = {"bn_moving_mean": mx.nd.array(rng.randn(4))}
        self.callback, self.monitor_all, self._name = None, None, names

    def set_monitor_callback(self, callback, monitor_all=False):
        self.callback, self.monitor_all = callback, monitor_all

    def run(self):
        fc = mx.nd.dot(self.arg_dict["data"], self.arg_dict["fc_weight"].T) \
            + self.arg_dict["fc_bias"]
        if self.monitor_all:
            for key in ["data", "weight", "bias"]:
                src = self.arg_dict["data" if key == "data" else f"fc_{key}"]
                self.callback(self._name(f"fc_{key}"), src)
        self.callback(self._name("fc_output"), fc)
        act = mx.nd.relu(fc)
        if self.monitor_all:
            self.callback(self._name("relu_input0"), fc)
        self.callback(self._name("relu_output"), act)
        return act


def _mean_abs(x):
    return mx.nd.sum(mx.nd.abs(x)) / x.size


def _expected_mean_abs(exe, name):
    arrays = dict(exe.arg_dict, **exe.aux_dict)
    if name in arrays:
        value = arrays[name].asnumpy()
    else:
        fc = exe.arg_dict["data"].asnumpy() @ exe.arg_dict["fc_weight"].asnumpy().T \
            + exe.arg_dict["fc_bias"].asnumpy()
        value = {"fc_output": fc, "relu_output": np.maximum(fc, 0), "relu_input0": fc}[name]
    return np.abs(value).mean()


def test_monitor_collects_outputs_then_arguments_and_aux_states():
    exe = _FakeExecutor()
    mon = mx.mon.Monitor(1, stat_func=_mean_abs)
    mon.install(exe)
    assert exe.monitor_all is False
    mon.tic()
    exe.run()
    res = mon.toc()
    assert [(n, k) for n, k, _ in res] == [(1, "fc_output"), (1, "relu_output"), (1, "data"),
                                            (1, "fc_weight"), (1, "fc_bias"),
                                            (1, "bn_moving_mean")]
    for _, name, text in res:
        assert text.endswith("\t")
        assert float(text) == pytest.approx(_expected_mean_abs(exe, name), rel=1e-6)


def test_monitor_all_pattern_sort_and_bytes_names():
    exe = _FakeExecutor(names=lambda s: s.encode())   # MXNet's raw callback passes bytes
    mon = mx.mon.Monitor(1, stat_func=_mean_abs, pattern="fc|relu_in", sort=True,
                         monitor_all=True)
    mon.install(exe)
    assert exe.monitor_all is True
    mon.tic()
    exe.run()
    names = [k for _, k, _ in mon.toc()]
    assert names == sorted(["fc_data", "fc_weight", "fc_bias", "fc_output", "relu_input0",
                            "fc_weight", "fc_bias"])


def test_monitor_interval_and_steps():
    exe = _FakeExecutor()
    mon = mx.mon.Monitor(2, stat_func=_mean_abs, pattern=".*output")
    mon.install(exe)
    got = []
    for _ in range(5):
        mon.tic()
        exe.run()
        got.append(mon.toc())
    assert [[(n, k) for n, k, _ in r] for r in got] == [
        [(1, "fc_output"), (1, "relu_output")], [],
        [(3, "fc_output"), (3, "relu_output")], [],
        [(5, "fc_output"), (5, "relu_output")]]
    assert mon.toc() == []            # nothing collected since


def test_monitor_default_stat_is_root_mean_square():
    exe = _FakeExecutor()
    mon = mx.mon.Monitor(1, pattern="fc_weight$")
    mon.install(exe)
    mon.tic()
    exe.run()
    [(_, _, text)] = mon.toc()
    w = exe.arg_dict["fc_weight"].asnumpy()
    assert float(text) == pytest.approx(np.linalg.norm(w) / math.sqrt(w.size), rel=1e-6)


def test_monitor_stat_text_for_arrays_and_lists():
    exe = _FakeExecutor()
    mon = mx.mon.Monitor(1, stat_func=lambda x: [mx.nd.max(x), mx.nd.abs(x[:2])],
                         pattern="fc_bias")
    mon.install(exe)
    mon.tic()
    [(_, name, text)] = mon.toc()
    bias = exe.arg_dict["fc_bias"]
    assert name == "fc_bias"
    assert text == (str(bias.max().asscalar()) + "\t"
                    + str(mx.nd.abs(bias[:2]).asnumpy()) + "\t")


def test_monitor_statistic_is_not_recorded_by_autograd():
    seen = []

    def stat(x):
        seen.append(mx.autograd.is_recording())
        return mx.nd.sum(x)
    mon = mx.mon.Monitor(1, stat_func=stat)
    exe = _FakeExecutor()
    mon.install(exe)
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    mon.tic()
    with mx.autograd.record():
        y = x * 3
        exe.callback("y_output", y)
    y.backward()
    assert seen == [False]
    np.testing.assert_array_equal(x.grad.asnumpy(), [3.0, 3.0])


def test_monitor_toc_print_logs_mxnets_lines():
    exe = _FakeExecutor()
    mon = mx.mon.Monitor(1, stat_func=_mean_abs, pattern="fc_bias")
    mon.install(exe)
    mon.tic()
    lines = capturing(mon.toc_print)
    value = str(_mean_abs(exe.arg_dict["fc_bias"]).asscalar())
    assert lines == [[logging.INFO, "Batch: {:7d} {:30s} {:s}".format(1, "fc_bias",
                                                                     value + "\t")]]


def _bound_monitor_executor():
    """The fixture's graph bound with its recorded arguments, or a skip while neogluon has
    no executor."""
    fx = DATA["monitor"]
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=4, name="fc1")
    act = mx.sym.Activation(fc1, act_type="tanh", name="act1")
    net = mx.sym.FullyConnected(act, num_hidden=2, name="fc2")
    try:
        exe = net.simple_bind(mx.cpu(), grad_req="null",
                              **{k: tuple(v) for k, v in fx["shapes"].items()})
    except MXNetError as err:
        if "no symbolic executors" in str(err):
            pytest.skip("Symbol.simple_bind is not available yet")
        raise
    for name, value in fx["args"].items():
        exe.arg_dict[name][:] = np.array(value, dtype="float32")
    return exe


@pytest.mark.parametrize("case", DATA["monitor"]["cases"],
                         ids=lambda c: f"{c['pattern']}-sort{c['sort']}")
def test_monitor_on_a_bound_executor_matches_mxnet(case):
    exe = _bound_monitor_executor()
    mon = mx.mon.Monitor(1, stat_func=_mean_abs, pattern=case["pattern"], sort=case["sort"])
    mon.install(exe)
    mon.tic()
    exe.forward(is_train=False)
    res = mon.toc()
    assert [(n, k) for n, k, _ in res] == [(n, k) for n, k, _ in case["result"]]
    for (_, name, text), (_, _, expected) in zip(res, case["result"]):
        assert text.endswith("\t")
        assert float(text) == pytest.approx(float(expected), rel=1e-5), name


def test_monitor_refuses_bad_arguments():
    with pytest.raises(MXNetError, match="interval"):
        mx.mon.Monitor(0)
    with pytest.raises(MXNetError, match="stat_func"):
        mx.mon.Monitor(1, stat_func=3)
    with pytest.raises(MXNetError, match="pattern"):
        mx.mon.Monitor(1, pattern="(")
    with pytest.raises(MXNetError, match="Executor"):
        mx.mon.Monitor(1).install(object())
    mon = mx.mon.Monitor(1, stat_func=lambda x: 1.5, pattern="fc_bias")
    mon.install(_FakeExecutor())
    mon.tic()
    with pytest.raises(MXNetError, match="'fc_bias'.*float"):
        mon.toc()


# ----------------------------------------------------------------------------- log

@pytest.mark.parametrize("case", DATA["log_format"], ids=lambda c: str(c["level"]))
def test_log_formatter_matches_mxnet(case):
    formatter = mx.log._Formatter()
    formatter.converter = time.gmtime
    record = logging.LogRecord("helper", case["level"], "/src/train.py", 42, "loss %s at %d",
                               ("0.5", 7), None, func="step")
    record.created = 1700000000.25
    record.msecs = 250.0
    record.process = 4321
    assert formatter.format(record) == case["text"]


def _describe(logger):
    return {"level": logger.level,
            "handlers": [{"type": type(h).__name__,
                          "formatter": type(h.formatter).__name__ if h.formatter else None,
                          "mode": getattr(h, "mode", None)} for h in logger.handlers]}


@pytest.fixture
def fresh_loggers():
    """Names of loggers made in the test; their handlers are closed and removed after."""
    names = []
    yield lambda name: names.append(name) or name
    for name in names:
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            handler.close()
            logger.removeHandler(handler)
        logger.__dict__.pop("_init_done", None)


def test_get_logger_matches_mxnet(tmp_path, fresh_loggers):
    fx = DATA["get_logger"]
    root = logging.getLogger()
    before = list(root.handlers)
    assert (mx.log.get_logger() is root) == fx["root_is_root"]
    assert len(root.handlers) - len(before) == fx["root_handlers_added"]
    plain = fresh_loggers("test_callback_monitor.plain")
    first = mx.log.get_logger(plain)
    assert _describe(first) == fx["plain"]
    again = mx.log.get_logger(plain, level=logging.DEBUG)
    assert (again is first) == fx["plain_again_same"]
    assert _describe(again) == fx["plain_again"]
    debug = mx.log.get_logger(fresh_loggers("test_callback_monitor.debug"), level=logging.DEBUG)
    assert _describe(debug) == fx["debug"]
    path = tmp_path / "log.txt"
    path.write_text("old\n")
    wlog = mx.log.get_logger(fresh_loggers("test_callback_monitor.file_w"), filename=str(path),
                             filemode="w", level=logging.INFO)
    assert _describe(wlog) == fx["file_w"]
    wlog.info("first %d", 1)
    wlog.debug("hidden")
    alog = mx.log.get_logger(fresh_loggers("test_callback_monitor.file_a"), filename=str(path),
                             level=logging.INFO)
    assert _describe(alog) == fx["file_a"]
    alog.warning("second")
    for handler in wlog.handlers + alog.handlers:
        handler.flush()
    assert path.read_text() == fx["file_text"]


def test_get_logger_console_line(capsys, fresh_loggers):
    logger = mx.log.get_logger(fresh_loggers("test_callback_monitor.console"))
    logger.warning("careful %s", "now")
    logger.info("not shown")
    err = capsys.readouterr().err
    assert re.fullmatch(r"\x1b\[31mW\d{4} \d\d:\d\d:\d\d \d+ \S+test_callback_monitor\.py:"
                        r"test_get_logger_console_line:\d+\]\x1b\[0m careful now\n", err), err


def test_getlogger_is_deprecated(fresh_loggers):
    fx = DATA["get_logger"]
    name = fresh_loggers("test_callback_monitor.old")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        logger = mx.log.getLogger(name)
    assert [[w.category.__name__, str(w.message)] for w in caught] == fx["getLogger_warning"]
    assert caught[0].filename == __file__          # points at the caller
    assert logger is logging.getLogger(name)
    assert {n: getattr(mx.log, n) for n in fx["constants"]} == fx["constants"]


# ----------------------------------------------------------------------------- engine

def test_set_bulk_size_returns_previous_per_thread():
    fx = DATA["engine"]
    original = mx.engine.set_bulk_size(0)
    try:
        assert [mx.engine.set_bulk_size(n) for n in [5, 0, 7, 3]] == fx["returns"]
        seen = []
        thread = threading.Thread(target=lambda: seen.append(mx.engine.set_bulk_size(2)))
        thread.start()
        thread.join()
        assert seen[0] == fx["new_thread_previous"]
        assert mx.engine.set_bulk_size(0) == fx["after_thread"]
        with mx.engine.bulk(4):
            assert mx.engine.set_bulk_size(4) == fx["inside_bulk"]
        assert mx.engine.set_bulk_size(0) == fx["after_bulk"]
    finally:
        mx.engine.set_bulk_size(original)


def test_bulk_nesting_and_exceptions_restore_sizes():
    original = mx.engine.set_bulk_size(3)
    try:
        with mx.engine.bulk(10) as scope:
            assert scope is not None
            with mx.engine.bulk(20):
                assert mx.engine.set_bulk_size(20) == 20
            assert mx.engine.set_bulk_size(10) == 10
            with pytest.raises(KeyError):
                with mx.engine.bulk(30):
                    raise KeyError("inside")
            assert mx.engine.set_bulk_size(10) == 10
        assert mx.engine.set_bulk_size(3) == 3
    finally:
        mx.engine.set_bulk_size(original)


def test_bulk_leaves_results_unchanged():
    # MXNet's test_engine.test_bulk
    with mx.engine.bulk(10):
        x = mx.nd.ones((10,))
        x *= 2
        x += 1
        x.wait_to_read()
        x += 1
        assert (x.asnumpy() == 4).all()
        for _ in range(100):
            x += 1
    assert (x.asnumpy() == 104).all()


def test_bulk_size_errors():
    fx = DATA["engine"]["errors"]
    for label, bad in [("float", 2.5), ("str", "a"), ("none", None)]:
        with pytest.raises(MXNetError, match="integer") as info:
            mx.engine.set_bulk_size(bad)
        # still catchable as the exception MXNet raises there
        assert fx[label] in [cls.__name__ for cls in type(info.value).__mro__]
        with pytest.raises(MXNetError, match="integer"):
            mx.engine.bulk(bad)
    with pytest.raises(MXNetError, match="-3"):
        mx.engine.set_bulk_size(-3)
    with pytest.raises(MXNetError, match="between"):
        mx.engine.set_bulk_size(2 ** 40)


# ----------------------------------------------------------------------------- tensorboard

def test_tensorboard_callback_writes_scalars(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    callback = mx.contrib.tensorboard.LogMetricsCallback(str(tmp_path), prefix="train")
    metric = mx.metric.create(["acc", "mse"])
    expected = []
    for epoch in range(3):
        metric.reset()
        metric.update([mx.nd.array([0, 1, 1])],
                      [mx.nd.array([[0.9, 0.1], [0.2 + 0.3 * epoch, 0.8 - 0.3 * epoch],
                                    [0.3, 0.7]])])
        expected.append(dict(metric.get_name_value()))
        callback(BatchEndParam(epoch, 10, metric, None))
    callback(BatchEndParam(3, 0, None, None))        # no metric: nothing written
    assert any(name.startswith("events.out.tfevents") for name in os.listdir(tmp_path))
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    assert sorted(events.Tags()["scalars"]) == ["train-accuracy", "train-mse"]
    for name in ["accuracy", "mse"]:
        scalars = events.Scalars(f"train-{name}")
        assert [s.step for s in scalars] == [0, 1, 2]
        np.testing.assert_allclose([s.value for s in scalars],
                                   [e[name] for e in expected], rtol=1e-6)
    callback.close()


def test_tensorboard_callback_without_the_package(monkeypatch, tmp_path):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "tensorboard" else real(name, *a))
    with pytest.raises(MXNetError, match="'tensorboard' package"):
        mx.contrib.tensorboard.LogMetricsCallback(str(tmp_path))
