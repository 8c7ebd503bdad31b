"""gluon.contrib.estimator (the Fit API) against MXNet 1.9.1.

The scenarios and expected numbers come from tools/gen_metric_fixtures.py, which runs the same
tiny model (Dense(3) with fixed weights, SGD with momentum, unshuffled DataLoader) through
MXNet's Estimator with each event handler.
"""
import json
import logging
import os
import re

import numpy as np
import pytest

import neogluon as mx
from neogluon import gluon
from neogluon.gluon.contrib import estimator as est

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "metric", "estimator_cases.json")
with open(FIX) as _f:
    DATA = json.load(_f)
CASES = {c["name"]: c for c in DATA["cases"]}
D = {k: np.array(v, dtype="float32") for k, v in DATA["data"].items()}

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def enc(v):
    v = float(v)
    return "nan" if np.isnan(v) else v


class Recorder(est.TrainBegin, est.TrainEnd, est.EpochBegin, est.EpochEnd, est.BatchBegin,
               est.BatchEnd):
    def __init__(self):
        self.trace = []

    def train_begin(self, estimator, *args, **kwargs):
        self.trace.append(["train_begin", estimator.max_epoch, estimator.max_batch])

    def train_end(self, estimator, *args, **kwargs):
        self.trace.append(["train_end"])

    def epoch_begin(self, estimator, *args, **kwargs):
        self.trace.append(["epoch_begin"])

    def epoch_end(self, estimator, *args, **kwargs):
        vals = [[m.name, enc(m.get()[1])] for m in estimator.train_metrics
                + estimator.val_metrics]
        self.trace.append(["epoch_end", vals])
        return False

    def batch_begin(self, estimator, *args, **kwargs):
        self.trace.append(["batch_begin", int(kwargs["batch"][0].shape[0])])

    def batch_end(self, estimator, *args, **kwargs):
        self.trace.append(["batch_end", len(kwargs["pred"]), len(kwargs["label"]),
                           len(kwargs["loss"])])
        return False


class Capture(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        msg = record.getMessage()
        msg = re.sub(r"\d+\.\d+s", "<t>s", msg)
        msg = re.sub(r"total \d+s", "total <t>s", msg)
        self.lines.append(msg)


def make_est(lr=0.1, metrics=None, val_metrics=None, ctx=None):
    ctx = ctx or mx.cpu()
    net = gluon.nn.Dense(3, in_units=4)
    net.initialize(ctx=ctx)
    net.weight.set_data(mx.nd.array(D["w0"]))
    net.bias.set_data(mx.nd.array(D["b0"]))
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr, "momentum": 0.9})
    e = est.Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), train_metrics=metrics,
                      val_metrics=val_metrics, trainer=trainer, context=ctx)
    return net, e


def loaders():
    train = gluon.data.DataLoader(gluon.data.ArrayDataset(D["x"], D["y"]), batch_size=6)
    val = gluon.data.DataLoader(gluon.data.ArrayDataset(D["vx"], D["vy"]), batch_size=5)
    return train, val


def close(a, b):
    np.testing.assert_allclose(np.array(a, dtype=np.float64), np.array(b, dtype=np.float64),
                               rtol=1e-4, atol=1e-5)


def same_metrics(got, want):
    assert [n for n, _ in got] == [n for n, _ in want]
    for (_, g), (_, w) in zip(got, want):
        if w == "nan":
            assert g == "nan" or np.isnan(g)
        else:
            assert g == pytest.approx(w, rel=1e-4, abs=1e-5)


def same_trace(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if g[0] == "epoch_end":
            assert w[0] == "epoch_end"
            same_metrics(g[1], w[1])
        else:
            assert g == w


def same_log(got, want):
    # numbers are printed with 4 decimals: compare the text around them, and them approximately
    num = re.compile(r"-?\d+\.\d{4}")
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want):
        assert num.sub("#", g) == num.sub("#", w), (g, w)
        for a, b in zip(num.findall(g), num.findall(w)):
            assert float(a) == pytest.approx(float(b), abs=2e-4)


def check_final(case, net, e):
    close(net.weight.data().asnumpy(), case["weight"])
    close(net.bias.data().asnumpy(), case["bias"])
    same_metrics([[m.name, enc(m.get()[1])] for m in e.train_metrics], case["train_metrics"])
    same_metrics([[m.name, enc(m.get()[1])] for m in e.val_metrics], case["val_metrics"])


def test_fit_epochs_with_validation():
    case = CASES["epochs"]
    net, e = make_est()
    r, cap = Recorder(), Capture()
    e.logger.handlers = [cap]
    train, val = loaders()
    e.fit(train, val_data=val, epochs=3, event_handlers=[r])
    same_trace(r.trace, case["trace"])
    same_log(cap.lines, case["log"])
    check_final(case, net, e)


def test_fit_batches():
    case = CASES["batches"]
    net, e = make_est()
    r, cap = Recorder(), Capture()
    e.logger.handlers = [cap]
    train, _ = loaders()
    e.fit(train, batches=5, event_handlers=[r])
    same_trace(r.trace, case["trace"])
    same_log(cap.lines, case["log"])
    check_final(case, net, e)


def test_logging_handler_interval():
    case = CASES["log_interval"]
    net, e = make_est(metrics=[mx.metric.Accuracy(), mx.metric.Loss("lossval")])
    cap = Capture()
    e.logger.handlers = [cap]
    train, val = loaders()
    e.fit(train, val_data=val, epochs=2,
          event_handlers=[est.LoggingHandler(log_interval=2, metrics=e.train_metrics)])
    same_log(cap.lines, case["log"])
    check_final(case, net, e)


def test_logging_handler_progress_bar(capsys):
    net, e = make_est()
    e.logger.handlers = [Capture()]
    train, _ = loaders()
    e.fit(train, epochs=2, event_handlers=[
        est.LoggingHandler(metrics=e.train_metrics, progress_bar=True)])
    err = capsys.readouterr().err
    assert "Epoch 0" in err and "Epoch 1" in err
    assert "4/4" in err and "accuracy=" in err


def test_evaluate():
    case = CASES["evaluate"]
    net, e = make_est()
    cap = Capture()
    e.logger.handlers = [cap]
    _, val = loaders()
    e.evaluate(val)
    same_log(cap.lines, case["log"])
    check_final(case, net, e)


def test_early_stopping_handler():
    case = CASES["early_stop"]
    net, e = make_est()
    e.logger.handlers = [Capture()]
    r = Recorder()
    train, val = loaders()
    e.fit(train, val_data=val, epochs=6, event_handlers=[
        r, est.EarlyStoppingHandler(e.train_metrics[0], mode="max", baseline=2.0, patience=2)])
    assert sum(1 for t in r.trace if t[0] == "epoch_end") == case["epochs_run"]
    check_final(case, net, e)


def test_early_stopping_auto_mode_minimises_a_loss():
    # MXNet 1.9.1 always maximises in 'auto' mode (a typo); neogluon follows its docs.
    net, e = make_est()
    e.logger.handlers = [Capture()]
    train, val = loaders()
    handler = est.EarlyStoppingHandler(e.val_metrics[1], patience=1)
    assert handler.monitor_op is np.less
    e.fit(train, val_data=val, epochs=4, event_handlers=[handler])
    assert handler.stopped_epoch == 0 and handler.best < 1.0


def test_validation_handler_batch_period():
    case = CASES["validation_batch_period"]
    net, e = make_est()
    cap = Capture()
    e.logger.handlers = [cap]
    train, val = loaders()
    e.fit(train, epochs=1, event_handlers=[
        est.ValidationHandler(val, e.evaluate, epoch_period=None, batch_period=2)])
    same_log(cap.lines, case["log"])
    check_final(case, net, e)


def test_checkpoint_handler_and_resume(tmp_path):
    case = CASES["checkpoint"]
    net, e = make_est()
    e.logger.handlers = [Capture()]
    train, val = loaders()
    e.fit(train, val_data=val, epochs=4, event_handlers=[
        est.CheckpointHandler(str(tmp_path), model_prefix="m", max_checkpoints=2)])
    assert sorted(os.listdir(tmp_path)) == case["files"]
    check_final(case, net, e)

    net2, e2 = make_est()
    cap = Capture()
    e2.logger.handlers = [cap]
    e2.fit(train, val_data=val, epochs=6, event_handlers=[
        est.CheckpointHandler(str(tmp_path), model_prefix="m", max_checkpoints=10,
                              resume_from_checkpoint=True)])
    assert sorted(os.listdir(tmp_path)) == case["files_after_resume"]
    resumed = [l for l in cap.lines if "resumed" in l]
    assert resumed == case["resume_log"]
    close(net2.weight.data().asnumpy(), case["weight_resumed"])
    close(case["weight_resumed"], case["weight_uninterrupted"])


def test_checkpoint_handler_batches(tmp_path):
    case = CASES["checkpoint_batches"]
    net, e = make_est()
    e.logger.handlers = [Capture()]
    train, _ = loaders()
    e.fit(train, batches=7, event_handlers=[
        est.CheckpointHandler(str(tmp_path), model_prefix="b", epoch_period=None,
                              batch_period=3)])
    assert sorted(os.listdir(tmp_path)) == case["files"]
    net2, e2 = make_est()
    e2.logger.handlers = [Capture()]
    e2.fit(train, batches=10, event_handlers=[
        est.CheckpointHandler(str(tmp_path), model_prefix="b", epoch_period=None,
                              batch_period=3, resume_from_checkpoint=True)])
    assert sorted(os.listdir(tmp_path)) == case["files_after_resume"]
    check_final(case, net2, e2)


def test_checkpoint_save_best(tmp_path):
    case = CASES["save_best"]
    _, e = make_est()
    e.logger.handlers = [Capture()]
    train, val = loaders()
    e.fit(train, val_data=val, epochs=3, event_handlers=[
        est.CheckpointHandler(str(tmp_path), model_prefix="s", monitor=e.val_metrics[0],
                              save_best=True, mode="max")])
    assert sorted(os.listdir(tmp_path)) == case["files"]


def test_metric_handler_and_gradient_update_handler_given_explicitly():
    # Passing the default handlers by hand gives the same run as the defaults.
    case = CASES["batches"]
    net, e = make_est()
    e.logger.handlers = [Capture()]
    train, _ = loaders()
    e.fit(train, batches=5, event_handlers=[est.MetricHandler(e.train_metrics),
                                            est.GradientUpdateHandler(),
                                            est.LoggingHandler(metrics=e.train_metrics)])
    check_final(case, net, e)


def test_custom_handler_can_stop_training():
    class StopAtThird(est.BatchEnd):
        def __init__(self):
            self.seen = 0

        def batch_end(self, estimator, *args, **kwargs):
            self.seen += 1
            return self.seen == 3

    _, e = make_est()
    e.logger.handlers = [Capture()]
    r = Recorder()
    train, _ = loaders()
    e.fit(train, epochs=3, event_handlers=[r, StopAtThird()])
    kinds = [t[0] for t in r.trace]
    # a batch_end stop ends the epoch early; the epoch still ends and training goes on
    first_epoch = kinds[:kinds.index("epoch_end")]
    assert first_epoch.count("batch_end") == 3
    assert kinds.count("batch_end") == 3 + 4 + 4 and kinds.count("epoch_end") == 3


def test_stopping_handler_counts():
    h = est.StoppingHandler()

    class E:
        max_epoch, max_batch = 2, None
    h.train_begin(E)
    assert not h.batch_end(E) and not h.epoch_end(E)
    assert h.epoch_end(E)


def test_data_parallel_two_contexts():
    # Splitting each batch over two contexts changes nothing in the result (mean loss).
    case = CASES["batches"]
    net, e = make_est(ctx=[mx.cpu(0), mx.cpu(1)])
    e.logger.handlers = [Capture()]
    r = Recorder()
    train, _ = loaders()
    e.fit(train, batches=5, event_handlers=[r])
    assert r.trace[3] == ["batch_end", 2, 2, 2]
    for c in (mx.cpu(0), mx.cpu(1)):
        close(net.weight.data(c).asnumpy(), case["weight"])


def _fit(**kw):
    _, e = make_est()
    e.logger.handlers = [Capture()]
    train, _ = loaders()
    e.fit(train, **kw)


def _resume_done(tmp):
    _fit(epochs=2, event_handlers=[est.CheckpointHandler(tmp)])
    _fit(epochs=2, event_handlers=[est.CheckpointHandler(tmp, resume_from_checkpoint=True)])


ERROR_CALLS = {
    "fit_both": lambda tmp: _fit(epochs=1, batches=1),
    "fit_neither": lambda tmp: _fit(),
    "fit_not_loader": lambda tmp: make_est()[1].fit([(D["x"], D["y"])], epochs=1),
    "bad_loss": lambda tmp: est.Estimator(gluon.nn.Dense(2), loss="l2"),
    "bad_trainer": lambda tmp: est.Estimator(gluon.nn.Dense(2), gluon.loss.L2Loss(),
                                             trainer="sgd"),
    "bad_context": lambda tmp: est.Estimator(gluon.nn.Dense(2), gluon.loss.L2Loss(),
                                             context="cpu"),
    "bad_log_interval": lambda tmp: est.LoggingHandler(log_interval="batch"),
    "early_stop_composite": lambda tmp: est.EarlyStoppingHandler(
        mx.metric.CompositeEvalMetric(["acc"])),
    "early_stop_not_metric": lambda tmp: est.EarlyStoppingHandler("acc"),
    "save_best_no_monitor": lambda tmp: est.CheckpointHandler(tmp, save_best=True),
    "handler_unknown_metric": lambda tmp: _fit(
        epochs=1, event_handlers=[est.LoggingHandler(metrics=[mx.metric.Accuracy()])]),
    "bad_handler": lambda tmp: _fit(epochs=1, event_handlers=["log"]),
    "bad_batch_processor": lambda tmp: est.Estimator(gluon.nn.Dense(2), gluon.loss.L2Loss(),
                                                     batch_processor=object()),
    "resume_already_done": _resume_done,
}


@pytest.mark.parametrize("rec", DATA["errors"], ids=lambda r: r["name"])
def test_errors_match_mxnet(rec, tmp_path):
    exc = {"ValueError": ValueError}[rec["type"]]
    with pytest.raises(exc):
        ERROR_CALLS[rec["name"]](str(tmp_path))


def test_custom_batch_processor():
    class Doubling(est.BatchProcessor):
        calls = 0

        def fit_batch(self, estimator, train_batch, batch_axis=0):
            Doubling.calls += 1
            return super().fit_batch(estimator, train_batch, batch_axis)

    net = gluon.nn.Dense(3, in_units=4)
    e = est.Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), batch_processor=Doubling(),
                      trainer=None)
    e.logger.handlers = [Capture()]
    train, _ = loaders()
    e.fit(train, batches=2)
    assert Doubling.calls == 2


def test_checkpoint_handler_saves_hybridized_graph(tmp_path):
    # MXNet writes model-symbol.json after the first batch of a hybridized net; neogluon writes
    # its own graph format there, which SymbolBlock.imports reads back.
    net, e = make_est()
    net.hybridize()
    e.logger.handlers = [Capture()]
    train, _ = loaders()
    e.fit(train, epochs=1, event_handlers=[est.CheckpointHandler(str(tmp_path))])
    files = sorted(os.listdir(tmp_path))
    assert files == ["model-epoch0batch4.params", "model-epoch0batch4.states",
                     "model-symbol.json"]
    # save_parameters files use structural names ('weight'); the graph uses full ones
    saved = mx.nd.load(str(tmp_path / "model-epoch0batch4.params"))
    full = {"weight": net.weight.name, "bias": net.bias.name}
    renamed = str(tmp_path / "renamed.params")
    mx.nd.save(renamed, {full[k]: v for k, v in saved.items()})
    loaded = gluon.SymbolBlock.imports(str(tmp_path / "model-symbol.json"), "data", renamed)
    x = mx.nd.array(D["vx"])
    close(loaded(x).asnumpy(), net(x).asnumpy())


def test_resume_needs_matching_period_and_existing_files(tmp_path):
    # MXNet asserts here; neogluon's errors are AssertionErrors too, with a message
    with pytest.raises(AssertionError, match="same type of period"):
        _fit(batches=3, event_handlers=[est.CheckpointHandler(str(tmp_path),
                                                              resume_from_checkpoint=True)])
    _fit(epochs=1, event_handlers=[est.CheckpointHandler(str(tmp_path))])
    os.remove(tmp_path / "model-epoch0batch4.states")
    with pytest.raises(AssertionError, match="model-epoch0batch4.states does not exist"):
        _fit(epochs=3, event_handlers=[est.CheckpointHandler(str(tmp_path),
                                                             resume_from_checkpoint=True)])


def test_fit_accepts_numpy_integers_and_rejects_bad_counts():
    _fit(batches=np.int64(2))
    with pytest.raises(ValueError, match="epochs must be a positive integer"):
        _fit(epochs=1.5)


def test_unavailable_context_is_an_assertion_error_as_in_mxnet():
    # MXNet 1.9.1 asserts; neogluon's error is both AssertionError and ValueError.
    with pytest.raises(AssertionError, match="gpu\\(100\\) is not available"):
        est.Estimator(gluon.nn.Dense(2), gluon.loss.L2Loss(), context=[mx.cpu(), mx.gpu(100)])
    with pytest.raises(ValueError):
        est.Estimator(gluon.nn.Dense(2), gluon.loss.L2Loss(), context=[mx.gpu(100)])
