"""mx.model.FeedForward scenarios run unchanged by MXNet 1.9.1
(tools/gen_feedforward_fixtures.py) and by neogluon (tests/test_feedforward.py): ``mx`` is
either library. Every parameter starts from fixed values, so the trained parameters, the
predictions, the scores, the callbacks' arguments and the log lines can be compared."""
from __future__ import annotations

import logging
import os
import re
import warnings

import numpy as np

# name -> settings of one FeedForward.fit
#   net: 'mlp', 'convbn' or 'regression'; nctx: contexts; inputs: 'numpy' (X, y arrays, which
#   FeedForward iterates shuffled with numpy's generator, rolling the last batch over) or
#   'iter' (an NDArrayIter); epoch_size: batches per epoch (None: one pass; 6 batches a pass)
FIT_CASES = {
    # 44 examples in batches of 8: the incomplete last batch rolls over into the next epoch
    "mlp_numpy_sgd": dict(net="mlp", nctx=1, inputs="numpy", n=44, num_epoch=3,
                          epoch_size=None, optimizer="sgd",
                          kwargs=dict(learning_rate=0.1, momentum=0.9, wd=1e-4),
                          kvstore="local", work_load_list=None, metric="acc", env={}),
    # an epoch of 4 batches: the next epoch reads on where the previous one stopped
    "mlp_iter_2ctx_short_epochs": dict(net="mlp", nctx=2, inputs="iter", n=48, num_epoch=4,
                                       epoch_size=4, optimizer="adam",
                                       kwargs=dict(learning_rate=0.01), kvstore="local",
                                       work_load_list=[1, 3], metric="acc", env={}),
    # an epoch of 8 batches: more than one pass, the iterator reset within the epoch
    "convbn_iter_long_epochs": dict(net="convbn", nctx=1, inputs="iter", n=48, num_epoch=2,
                                    epoch_size=8, optimizer="sgd",
                                    kwargs=dict(learning_rate=0.05, momentum=0.9),
                                    kvstore="local", work_load_list=None, metric="acc",
                                    env={}),
    # an Optimizer object, a 'device' store, a composite metric
    "convbn_2ctx_optimizer_object": dict(net="convbn", nctx=2, inputs="iter", n=48,
                                         num_epoch=2, epoch_size=None, optimizer="nag-object",
                                         kwargs=dict(learning_rate=0.05, momentum=0.9),
                                         kvstore="device", work_load_list=None,
                                         metric=["acc", "ce"], env={}),
    # the updates on the devices, not in the store
    "regression_2ctx_rmsprop_noupdkv": dict(net="regression", nctx=2, inputs="iter", n=48,
                                            num_epoch=2, epoch_size=None, optimizer="rmsprop",
                                            kwargs=dict(learning_rate=0.01), kvstore="local",
                                            work_load_list=None, metric="mse",
                                            env={"MXNET_UPDATE_ON_KVSTORE": "0"}),
}

BATCH = 8


def network(mx, kind):
    data = mx.sym.var("data")
    if kind == "mlp":
        net = mx.sym.FullyConnected(data, num_hidden=16, name="fc1")
        net = mx.sym.Activation(net, act_type="relu", name="relu1")
        net = mx.sym.FullyConnected(net, num_hidden=4, name="fc2")
        return mx.sym.SoftmaxOutput(net, name="softmax")
    if kind == "convbn":
        net = mx.sym.Convolution(data, num_filter=4, kernel=(3, 3), pad=(1, 1), no_bias=True,
                                 name="conv")
        net = mx.sym.BatchNorm(net, fix_gamma=False, name="bn")
        net = mx.sym.Activation(net, act_type="relu", name="relu")
        net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool")
        net = mx.sym.Flatten(net, name="flatten")
        net = mx.sym.FullyConnected(net, num_hidden=4, name="fc")
        return mx.sym.SoftmaxOutput(net, name="softmax")
    if kind == "regression":
        net = mx.sym.FullyConnected(data, num_hidden=8, name="fc1")
        net = mx.sym.Activation(net, act_type="tanh", name="tanh")
        net = mx.sym.FullyConnected(net, num_hidden=1, name="fc2")
        return mx.sym.LinearRegressionOutput(net, name="lro")
    raise ValueError(kind)


def dataset(kind, n=48, seed=5):
    rng = np.random.RandomState(seed)
    if kind == "convbn":
        x = rng.uniform(-1, 1, (n, 2, 6, 6)).astype(np.float32)
        y = (x[:, 0, :3].mean(axis=(1, 2)) > 0).astype(np.float32) + \
            2 * (x[:, 1, 3:].mean(axis=(1, 2)) > 0).astype(np.float32)
        return x, y
    x = rng.uniform(-1, 1, (n, 10)).astype(np.float32)
    if kind == "regression":
        return x, (np.sin(x[:, :3].sum(axis=1)) * 0.5).astype(np.float32).reshape(-1, 1)
    return x, (x[:, 0] > 0).astype(np.float32) + 2 * (x[:, 1] > 0).astype(np.float32)


def initial_params(mx, sym, data_shape, seed=13):
    """Fixed starting values of every parameter and auxiliary state."""
    rng = np.random.RandomState(seed)
    arg_shapes, _, aux_shapes = sym.infer_shape(data=data_shape)
    args = {name: mx.nd.array(rng.uniform(-0.3, 0.3, shape).astype(np.float32))
            for name, shape in zip(sym.list_arguments(), arg_shapes)
            if name != "data" and not name.endswith("label")}
    aux = {name: mx.nd.array((rng.uniform(0.5, 1.5, shape) if "var" in name
                              else rng.uniform(-0.2, 0.2, shape)).astype(np.float32))
           for name, shape in zip(sym.list_auxiliary_states(), aux_shapes)}
    return args, aux


def label_name(sym):
    return [n for n in sym.list_arguments() if n.endswith("label")][0]


class _Lines(logging.Handler):
    """Collects the training log lines (the time a step took masked)."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []

    def emit(self, record):
        msg = record.getMessage()
        if msg.startswith(("Epoch[", "Start training")):
            self.lines.append(re.sub(r"Time cost=[0-9.]+", "Time cost=<t>", msg))


class _capture_logs:
    def __enter__(self):
        self.root = logging.getLogger()
        self.level = self.root.level
        self.handler = _Lines()
        self.root.addHandler(self.handler)
        self.root.setLevel(logging.INFO)
        return self.handler.lines

    def __exit__(self, *exc):
        self.root.removeHandler(self.handler)
        self.root.setLevel(self.level)


class _env:
    def __init__(self, env):
        self.env = env

    def __enter__(self):
        self.old = {k: os.environ.get(k) for k in self.env}
        os.environ.update(self.env)

    def __exit__(self, *exc):
        for k, v in self.old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _params(model):
    res = {f"arg_{k}": v.asnumpy() for k, v in model.arg_params.items()}
    res.update({f"aux_{k}": v.asnumpy() for k, v in model.aux_params.items()})
    return res


def _metric_values(metric):
    _, values = metric.get()
    return [float(v) for v in np.atleast_1d(values)]


def run_fit(mx, name):
    """Fit the case from its fixed starting values; returns the arrays to compare."""
    case = FIT_CASES[name]
    sym = network(mx, case["net"])
    label = label_name(sym)
    x, y = dataset(case["net"], n=case["n"])
    xv, yv = dataset(case["net"], n=16, seed=6)
    ctx = [mx.cpu(i) for i in range(case["nctx"])]
    args, aux = initial_params(mx, sym, (BATCH,) + x.shape[1:])
    if case["optimizer"] == "nag-object":
        optimizer = mx.optimizer.NAG(rescale_grad=1.0 / BATCH, **case["kwargs"])
        kwargs = {}
    else:
        optimizer, kwargs = case["optimizer"], case["kwargs"]
    batch_log, epoch_log, eval_batch_log, eval_end_log = [], [], [], []

    def batch_end(param):
        batch_log.append([param.epoch, param.nbatch] + _metric_values(param.eval_metric))

    def epoch_end(epoch, symbol, arg_params, aux_params):
        epoch_log.append([epoch, float(arg_params[sorted(arg_params)[0]].asnumpy().sum())])

    def eval_batch_end(param):
        eval_batch_log.append([param.epoch, param.nbatch] + _metric_values(param.eval_metric))

    def eval_end(param):
        eval_end_log.append([param.epoch, param.nbatch] + _metric_values(param.eval_metric))

    # the numpy inputs are shuffled with numpy's global generator
    np.random.seed(21)
    with _env(case["env"]), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        model = mx.model.FeedForward(sym, ctx=ctx, num_epoch=case["num_epoch"],
                                     epoch_size=case["epoch_size"], optimizer=optimizer,
                                     numpy_batch_size=BATCH, arg_params=args, aux_params=aux,
                                     **kwargs)
        if case["inputs"] == "numpy":
            train, eval_data = x, (xv, yv)
            fit_y = y
        else:
            train = mx.io.NDArrayIter(x, {label: y}, batch_size=BATCH, shuffle=False)
            eval_data = mx.io.NDArrayIter(xv, {label: yv}, batch_size=BATCH, shuffle=False)
            fit_y = None
        with _capture_logs() as lines:
            model.fit(train, fit_y, eval_data=eval_data, eval_metric=case["metric"],
                      epoch_end_callback=epoch_end, batch_end_callback=batch_end,
                      kvstore=case["kvstore"], work_load_list=case["work_load_list"],
                      eval_end_callback=[mx.callback.LogValidationMetricsCallback(), eval_end],
                      eval_batch_end_callback=eval_batch_end)
        # (MXNet's engine does not order BatchNorm's moving-statistic updates before a read
        # of the auxiliary arrays: wait for all work first)
        mx.nd.waitall()
        res = _params(model)
        pred_iter = mx.io.NDArrayIter(xv[:13], {label: yv[:13]}, batch_size=5)
        outputs, data, labels = model.predict(pred_iter, return_data=True)
        res["predict"] = outputs
        res["predict_data"] = data
        res["predict_label"] = labels
        res["predict_numpy"] = model.predict(xv)
        res["predict_2_batches"] = model.predict(pred_iter, num_batch=2)
        res["score"] = np.atleast_1d(np.array(model.score(pred_iter, case["metric"]),
                                              dtype=np.float64))
    res["batch_log"] = np.array(batch_log, dtype=np.float64)
    res["epoch_log"] = np.array(epoch_log, dtype=np.float64)
    res["eval_batch_log"] = np.array(eval_batch_log, dtype=np.float64)
    res["eval_end_log"] = np.array(eval_end_log, dtype=np.float64)
    res["log_lines"] = np.array(lines)
    return res


# ----------------------------------------------------------------------------- checkpoints
CKPT_KWARGS = dict(learning_rate=0.05, momentum=0.9)


def make_checkpoint(mx, prefix):
    """Fit the conv net two epochs and save it twice: as ``prefix-0002.params`` (the
    default epoch, num_epoch) and as ``prefix-0007.params``; returns the predictions."""
    sym = network(mx, "convbn")
    x, y = dataset("convbn")
    args, aux = initial_params(mx, sym, (BATCH,) + x.shape[1:])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        model = mx.model.FeedForward(sym, num_epoch=2, arg_params=args, aux_params=aux,
                                     numpy_batch_size=BATCH, **CKPT_KWARGS)
        model.fit(mx.io.NDArrayIter(x, y, batch_size=BATCH))
        mx.nd.waitall()
        model.save(prefix)
        model.save(prefix, 7)
        return model.predict(x)


def continue_checkpoint(mx, prefix, epoch):
    """Load a FeedForward checkpoint, predict, and train it one more epoch (begin_epoch is
    the checkpoint's epoch); the predictions before and the parameters after."""
    x, y = dataset("convbn")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        model = mx.model.FeedForward.load(prefix, epoch, num_epoch=epoch + 1,
                                          numpy_batch_size=BATCH, **CKPT_KWARGS)
        res = {"loaded_predict": model.predict(x)}
        model.fit(mx.io.NDArrayIter(x, y, batch_size=BATCH))
        mx.nd.waitall()
        res.update(_params(model))
        # a new model for the trained values: MXNet's model.predict would still use the
        # inference executor bound before fit, with the loaded values
        trained = mx.model.FeedForward(model.symbol, arg_params=model.arg_params,
                                       aux_params=model.aux_params, numpy_batch_size=BATCH)
        res["continued_predict"] = trained.predict(x)
    return res
