"""Module scenarios run unchanged by MXNet 1.9.1 (tools/gen_module_fixtures.py) and by
neogluon (tests/test_module.py): ``mx`` is either library."""
from __future__ import annotations

import numpy as np

# name -> (network, contexts, kvstore, optimizer, optimizer_params, env)
FIT_CASES = {
    "mlp_sgd_1ctx": ("mlp", 1, "local", "sgd",
                     {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-4}, {}),
    "mlp_sgd_2ctx_local": ("mlp", 2, "local", "sgd",
                           {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-4}, {}),
    "mlp_sgd_2ctx_device": ("mlp", 2, "device", "sgd",
                            {"learning_rate": 0.1, "momentum": 0.9}, {}),
    "mlp_adam_2ctx_noupdkv": ("mlp", 2, "local", "adam", {"learning_rate": 0.01},
                              {"MXNET_UPDATE_ON_KVSTORE": "0"}),
    "convbn_sgd_1ctx": ("convbn", 1, "local", "sgd", {"learning_rate": 0.05, "momentum": 0.9},
                        {}),
    "convbn_nag_2ctx": ("convbn", 2, "local", "nag", {"learning_rate": 0.05, "momentum": 0.9},
                        {}),
    "regression_rmsprop": ("regression", 1, "local", "rmsprop", {"learning_rate": 0.01}, {}),
}


def network(mx, kind):
    data = mx.sym.var("data")
    if kind == "mlp":
        net = mx.sym.FullyConnected(data, num_hidden=16, name="fc1")
        net = mx.sym.Activation(net, act_type="relu", name="relu1")
        net = mx.sym.FullyConnected(net, num_hidden=4, name="fc2")
        return mx.sym.SoftmaxOutput(net, name="softmax")
    if kind == "convbn":
        # no bias before BatchNorm: its gradient is rounding noise, which Adam would amplify
        net = mx.sym.Convolution(data, num_filter=4, kernel=(3, 3), pad=(1, 1), no_bias=True,
                                 name="conv")
        net = mx.sym.BatchNorm(net, fix_gamma=False, name="bn")
        net = mx.sym.Activation(net, act_type="relu", name="relu")
        net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="avg", name="pool")
        net = mx.sym.FullyConnected(net, num_hidden=4, name="fc")
        return mx.sym.SoftmaxOutput(net, name="softmax")
    if kind == "regression":
        net = mx.sym.FullyConnected(data, num_hidden=8, name="fc1")
        net = mx.sym.Activation(net, act_type="tanh", name="tanh")
        net = mx.sym.FullyConnected(net, num_hidden=1, name="fc2")
        return mx.sym.LinearRegressionOutput(net, name="lro")
    raise ValueError(kind)


def dataset(kind, n=48, seed=3):
    rng = np.random.RandomState(seed)
    if kind == "convbn":
        x = rng.uniform(-1, 1, (n, 2, 6, 6)).astype(np.float32)
        y = (x[:, 0, :3].mean(axis=(1, 2)) > 0).astype(np.float32) + \
            2 * (x[:, 1, 3:].mean(axis=(1, 2)) > 0).astype(np.float32)
    else:
        x = rng.uniform(-1, 1, (n, 10)).astype(np.float32)
        if kind == "regression":
            y = (np.sin(x[:, :3].sum(axis=1)) * 0.5).astype(np.float32).reshape(-1, 1)
        else:
            y = (x[:, 0] > 0).astype(np.float32) + 2 * (x[:, 1] > 0).astype(np.float32)
    return x, y


def initial_params(mx, sym, data_shape, seed=11):
    """Fixed starting values for every parameter and auxiliary state."""
    rng = np.random.RandomState(seed)
    arg_s, _, aux_s = sym.infer_shape(data=data_shape)
    args = {}
    for n, s in zip(sym.list_arguments(), arg_s):
        if n in ("data",) or n.endswith("label"):
            continue
        args[n] = mx.nd.array(rng.uniform(-0.3, 0.3, s).astype(np.float32))
    aux = {}
    for n, s in zip(sym.list_auxiliary_states(), aux_s):
        aux[n] = mx.nd.array((rng.uniform(0.5, 1.5, s) if "var" in n
                              else rng.uniform(-0.2, 0.2, s)).astype(np.float32))
    return args, aux


def _label_name(sym):
    return [n for n in sym.list_arguments() if n.endswith("label")][0]


def run_fit(mx, name, epochs=2):
    import os
    kind, nctx, kv, opt, opt_params, env = FIT_CASES[name]
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        sym = network(mx, kind)
        x, y = dataset(kind)
        label = _label_name(sym)
        it = mx.io.NDArrayIter(x, {label: y}, batch_size=8, shuffle=False)
        ctxs = [mx.cpu(i) for i in range(nctx)]
        mod = mx.mod.Module(sym, data_names=["data"], label_names=[label], context=ctxs)
        args, aux = initial_params(mx, sym, (8,) + x.shape[1:])
        metric = "mse" if kind == "regression" else "acc"
        mod.fit(it, num_epoch=epochs, kvstore=kv, optimizer=opt,
                optimizer_params=dict(opt_params), arg_params=args, aux_params=aux,
                eval_metric=metric)
        # (MXNet's engine does not order BatchNorm's moving-statistic updates before a read
        # of the auxiliary arrays: wait for all work first)
        mx.nd.waitall()
        a, b = mod.get_params()
        res = {f"arg_{k}": v.asnumpy() for k, v in a.items()}
        res.update({f"aux_{k}": v.asnumpy() for k, v in b.items()})
        res["score"] = np.array([v for _, v in mod.score(it, metric)])
        res["predict"] = mod.predict(it).asnumpy()
        return res
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def make_checkpoint(mx, prefix):
    """Train 'convbn' one epoch with Adam and save a checkpoint with optimizer states
    (``prefix-symbol.json``, ``prefix-0001.params``, ``prefix-0001.states``)."""
    sym = network(mx, "convbn")
    x, y = dataset("convbn")
    it = mx.io.NDArrayIter(x, {"softmax_label": y}, batch_size=8, shuffle=False)
    mod = mx.mod.Module(sym, context=[mx.cpu()])
    args, aux = initial_params(mx, sym, (8,) + x.shape[1:])
    mod.fit(it, num_epoch=1, optimizer="adam", optimizer_params={"learning_rate": 0.01},
            arg_params=args, aux_params=aux)
    mod.save_checkpoint(prefix, 1, save_optimizer_states=True)
    return mod


def continue_checkpoint(mx, prefix, epoch):
    """Load a checkpoint with its optimizer states and train one more epoch ('convbn',
    Adam): the parameters afterwards."""
    x, y = dataset("convbn")
    it = mx.io.NDArrayIter(x, {"softmax_label": y}, batch_size=8, shuffle=False)
    mod = mx.mod.Module.load(prefix, epoch, load_optimizer_states=True, context=[mx.cpu()])
    mod.bind(it.provide_data, it.provide_label)
    mod.init_optimizer(optimizer="adam", optimizer_params={"learning_rate": 0.01})
    for batch in it:
        mod.forward_backward(batch)
        mod.update()
    mx.nd.waitall()   # (see run_fit)
    a, b = mod.get_params()
    res = {f"arg_{k}": v.asnumpy() for k, v in a.items()}
    res.update({f"aux_{k}": v.asnumpy() for k, v in b.items()})
    return res
