"""SVRGModule scenarios run unchanged by MXNet 1.9.1 (tools/gen_svrg_fixtures.py) and by
neogluon (tests/test_svrg.py): ``mx`` is either library.

``fix_mxnet=True`` (the generator) works around two MXNet 1.9.1 bugs that neogluon does not
have, so that MXNet computes what SVRG is meant to compute (docs/migration.md):

- ``update_full_grads`` adds the previous full gradient into the new sum: the full
  gradients are zeroed before each call;
- ``init_optimizer`` with a KVStore that runs the optimizer pulls the zero ``<param>_full``
  values into the devices' weights: the weights are set again after it.

With ``fix_mxnet=False`` (neogluon's test) nothing is worked around.
"""
from __future__ import annotations

import numpy as np

N_SAMPLES = 30        # 4 batches of 8, the last one padded by 2
BATCH = 8
TRUE_W = np.array([1.0, -2.0, 0.5], dtype=np.float32)
TRUE_B = 0.3


def dataset(seed=7):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, (N_SAMPLES, 3)).astype(np.float32)
    y = (x @ TRUE_W + TRUE_B + 0.05 * rng.standard_normal(N_SAMPLES)).astype(np.float32)
    return x, y


def data_iter(mx):
    x, y = dataset()
    return mx.io.NDArrayIter(x, y, batch_size=BATCH, shuffle=False, label_name="lin_reg_label")


def network(mx, layer_name="fc1", bias_lr_mult=None):
    data = mx.sym.Variable("data")
    label = mx.sym.Variable("lin_reg_label")
    kwargs = {}
    if bias_lr_mult is not None:
        kwargs["bias"] = mx.sym.Variable(f"{layer_name}_bias", lr_mult=bias_lr_mult)
    if layer_name is None:   # automatic name: fullyconnected<k>
        fc = mx.sym.FullyConnected(data, num_hidden=1, **kwargs)
    else:
        fc = mx.sym.FullyConnected(data, num_hidden=1, name=layer_name, **kwargs)
    return mx.sym.LinearRegressionOutput(fc, label, name="lro")


def initial_params(mx, prefix="fc1"):
    return {f"{prefix}_weight": mx.nd.array(np.array([[0.1, -0.2, 0.3]], dtype=np.float32)),
            f"{prefix}_bias": mx.nd.array(np.array([0.05], dtype=np.float32))}


def _svrg_module(mx):
    from importlib import import_module
    return import_module(mx.__name__ + ".contrib.svrg_optimization.svrg_module").SVRGModule


def _params(mod):
    args, _ = mod.get_params()
    return {k: v.asnumpy().astype(np.float64) for k, v in args.items()}


def _fix_full_grads(mod, fix_mxnet):
    """Zero the full gradients before each update_full_grads (MXNet only)."""
    if not fix_mxnet:
        return
    orig = mod.update_full_grads

    def fresh(train_data):
        for per_ctx in mod._param_dict:
            for arr in per_ctx.values():
                arr[:] = 0
        orig(train_data)
    mod.update_full_grads = fresh


def make_module(mx, contexts=1, update_freq=2, layer_name="fc1", fixed_param_names=None,
                bias_lr_mult=None):
    di = data_iter(mx)
    ctx = [mx.cpu(i) for i in range(contexts)]
    mod = _svrg_module(mx)(network(mx, layer_name, bias_lr_mult), data_names=["data"],
                           label_names=["lin_reg_label"], context=ctx,
                           update_freq=update_freq, fixed_param_names=fixed_param_names)
    mod.bind(data_shapes=di.provide_data, label_shapes=di.provide_label)
    return mod, di


def full_gradient(mx, contexts=1, kvstore="local"):
    """The first full gradient (each context's) at the initial parameters."""
    mod, di = make_module(mx, contexts)
    mod.init_params(arg_params=initial_params(mx))
    mod.init_optimizer(kvstore=kvstore, optimizer="sgd",
                       optimizer_params={"learning_rate": 0.1})
    mod.update_full_grads(di)
    out = {}
    for k, per_ctx in enumerate(mod._param_dict):
        for name, arr in per_ctx.items():
            out[f"ctx{k}/{name}"] = arr.asnumpy().astype(np.float64)
    return out


def fit_case(mx, num_epoch, update_freq, optimizer, optimizer_params, fix_mxnet):
    """SVRGModule.fit; the parameters after every epoch and the last epoch's MSE."""
    mod, di = make_module(mx, update_freq=update_freq)
    _fix_full_grads(mod, fix_mxnet)
    history = {}

    def record(epoch, sym, arg, aux):
        for k, v in arg.items():
            history[f"epoch{epoch}/{k}"] = v.asnumpy().astype(np.float64)
    metric = mx.metric.create("mse")
    mod.fit(di, eval_metric=metric, optimizer=optimizer, optimizer_params=optimizer_params,
            arg_params=initial_params(mx), num_epoch=num_epoch, kvstore="local",
            epoch_end_callback=record)
    history["mse"] = np.array(metric.get()[1])
    return history


def manual_case(mx, contexts, kvstore, optimizer, optimizer_params, num_epoch, update_freq,
                fix_mxnet, kv_object=False, layer_name="fc1", fixed_param_names=None,
                bias_lr_mult=None, bias_lr_zero_by_optimizer=False):
    """fit's loop written out (a KVStore object can be passed, and MXNet's device weights
    restored after init_optimizer); the parameters after every epoch. ``kv_object``: pass
    ``mx.kv.create(kvstore)`` instead of the name (a store even for one context)."""
    mod, di = make_module(mx, contexts, update_freq, layer_name, fixed_param_names,
                          bias_lr_mult)
    prefix = layer_name or [n for n in mod._param_names if n.endswith("_weight")][0][:-7]
    mod.init_params(arg_params=initial_params(mx, prefix))
    kv = mx.kv.create(kvstore) if kv_object else kvstore
    mod.init_optimizer(kvstore=kv, optimizer=optimizer, optimizer_params=optimizer_params)
    if bias_lr_zero_by_optimizer:
        mod._optimizer.default_opt.set_lr_mult({f"{prefix}_bias": 0.0})
    if fix_mxnet:
        mod.set_params(*mod.get_params())
    _fix_full_grads(mod, fix_mxnet)
    out = {}
    for epoch in range(num_epoch):
        if epoch % mod.update_freq == 0:
            mod.update_full_grads(di)
        di.reset()
        for batch in di:
            mod.forward_backward(batch)
            mod.update()
        for k, v in _params(mod).items():
            out[f"epoch{epoch}/{k.replace(prefix, 'fc1')}"] = v
    return out


def svrg_optimizer_in_kvstore(mx):
    """_SVRGOptimizer (SGD with momentum) as a KVStore's optimizer: a parameter key and its
    full-gradient key, two pushes each."""
    from importlib import import_module
    svrg_opt = import_module(mx.__name__ + ".contrib.svrg_optimization.svrg_optimizer")
    optimizer = svrg_opt._SVRGOptimizer(default_optimizer="sgd",
                                        param_idx2name={0: "w", 1: "w_full"},
                                        learning_rate=0.1, momentum=0.9, rescale_grad=0.5)
    kv = mx.kv.create("local")
    kv.set_optimizer(optimizer)
    out = {}
    kv.init(0, mx.nd.array([1.0, 2.0, 3.0]))
    kv.init(1, mx.nd.array([5.0, 5.0, 5.0]))
    for step, (g, f) in enumerate([([0.5, -1.0, 2.0], [4.0, 3.0, 2.0]),
                                   ([1.5, 0.0, -2.0], [-1.0, 7.0, 0.5])]):
        kv.push(0, mx.nd.array(g))
        kv.push(1, mx.nd.array(f))
        w, wf = mx.nd.zeros(3), mx.nd.zeros(3)
        kv.pull(0, w)
        kv.pull(1, wf)
        out[f"step{step}/w"] = w.asnumpy().astype(np.float64)
        out[f"step{step}/w_full"] = wf.asnumpy().astype(np.float64)
    return out


def regression_label_shapes(mx):
    """The label shape each *RegressionOutput infers or accepts (SVRG's linear regression
    feeds (N,) labels to (N, 1) outputs); [-1] where inference fails."""
    data = mx.sym.Variable("data")
    label = mx.sym.Variable("label")
    out = {}
    for op in ("LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput"):
        for hidden, given in ((1, None), (1, (8,)), (1, (8, 1)), (1, (4, 2)), (3, None),
                              (3, (8, 1, 3)), (3, (24,))):
            fc = mx.sym.FullyConnected(data, num_hidden=hidden, name="fc")
            sym = getattr(mx.sym, op)(fc, label, name="out")
            shapes = {"data": (8, 2)}
            if given is not None:
                shapes["label"] = given
            try:
                arg_shapes, _, _ = sym.infer_shape(**shapes)
                got = dict(zip(sym.list_arguments(), arg_shapes))["label"]
            except Exception:   # noqa: BLE001 - MXNetError in either library
                got = (-1,)
            out[f"{op}/{hidden}/{given}"] = np.array(got, dtype=np.float64)
    return out


# name -> (function, keyword arguments); every case's result is a dict of arrays
CASES = {
    "full_gradient_1ctx": (full_gradient, {"contexts": 1}),
    "full_gradient_2ctx": (full_gradient, {"contexts": 2}),
    # one snapshot (epoch 0): MXNet's fit as it is
    "fit_sgd_one_snapshot": (fit_case, {"num_epoch": 2, "update_freq": 2, "optimizer": "sgd",
                                        "optimizer_params": {"learning_rate": 0.05}}),
    # snapshots at epochs 0, 2, 4
    "fit_sgd_momentum_three_snapshots": (
        fit_case, {"num_epoch": 5, "update_freq": 2, "optimizer": "sgd",
                   "optimizer_params": {"learning_rate": 0.02, "momentum": 0.9,
                                        "wd": 0.01}}),
    "kvstore_object_adam": (manual_case, {"contexts": 1, "kvstore": "local",
                                          "kv_object": True, "optimizer": "adam",
                                          "optimizer_params": {"learning_rate": 0.05},
                                          "num_epoch": 3, "update_freq": 2}),
    "two_contexts_local_sgd": (manual_case, {"contexts": 2, "kvstore": "local",
                                             "optimizer": "sgd",
                                             "optimizer_params": {"learning_rate": 0.05},
                                             "num_epoch": 3, "update_freq": 1}),
    "bias_frozen_sgd": (manual_case, {"contexts": 1, "kvstore": "local", "optimizer": "sgd",
                                      "optimizer_params": {"learning_rate": 0.05},
                                      "num_epoch": 2, "update_freq": 2,
                                      "bias_lr_zero_by_optimizer": True}),
    "svrg_optimizer_in_kvstore": (svrg_optimizer_in_kvstore, {}),
    "regression_label_shapes": (regression_label_shapes, {}),
}


def run_case(mx, name, fix_mxnet):
    fn, kwargs = CASES[name]
    if fn in (fit_case, manual_case):
        kwargs = dict(kwargs, fix_mxnet=fix_mxnet)
    return fn(mx, **kwargs)
