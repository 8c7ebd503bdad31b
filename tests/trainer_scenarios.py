"""Trainer scenarios written once against the MXNet 1.9.1 API.

Each function takes the framework module (``mxnet`` or ``neogluon``) and returns plain
Python/numpy results. tools/gen_trainer_fixtures.py runs them with MXNet 1.9.1 and stores the
results; tests/test_trainer.py runs the very same code with neogluon and compares.
"""
import numpy as np

BATCH = 8


def _ctxs(mx, n):
    return [mx.cpu(i) for i in range(n)]


def last_line(err):
    lines = [ln for ln in str(err).split("\n") if ln.strip()]
    return lines[-1] if lines else ""


def error_of(fn):
    try:
        fn()
    except Exception as err:  # noqa: BLE001 - scenarios record what the framework raises
        return {"error": type(err).__name__, "message": last_line(err)}
    return {"error": None}


def build(mx, ctxs, deferred=False, seed=0):
    """A two-layer MLP with deterministic weights; returns (net, params in layer order)."""
    gluon = mx.gluon
    net = gluon.nn.Sequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(5, in_units=0 if deferred else 4, activation="tanh"))
        net.add(gluon.nn.Dense(3, in_units=0 if deferred else 5))
    net.initialize(mx.init.Zero(), ctx=ctxs)
    rng = np.random.RandomState(seed)
    params = [net[0].weight, net[0].bias, net[1].weight, net[1].bias]
    for p, shape in zip(params, [(5, 4), (5,), (3, 5), (3,)]):
        p.set_data(mx.nd.array(rng.uniform(-0.5, 0.5, size=shape).astype(np.float32)))
    return net, params


def batch(step, seed=100, size=BATCH):
    rng = np.random.RandomState(seed + step)
    x = rng.uniform(-1, 1, size=(size, 4)).astype(np.float32)
    y = rng.uniform(-1, 1, size=(size, 3)).astype(np.float32)
    return x, y


def forward_backward(mx, net, ctxs, step, size=BATCH, seed=100):
    gluon, autograd = mx.gluon, mx.autograd
    x, y = batch(step, seed, size)
    even = BATCH % len(ctxs) == 0
    xs = gluon.utils.split_and_load(mx.nd.array(x), ctxs, even_split=even)
    ys = gluon.utils.split_and_load(mx.nd.array(y), ctxs, even_split=even)
    loss = gluon.loss.L2Loss()
    with autograd.record():
        ls = [loss(net(a), b) for a, b in zip(xs, ys)]
    autograd.backward(ls)


def snapshot(params):
    return [p.data(p.list_ctx()[-1]).asnumpy().copy() for p in params]


def train(mx, nctx=1, kvstore="device", update_on_kvstore=None, optimizer="sgd",
          optimizer_params=None, steps=3, compression_params=None, deferred=False):
    """Train the MLP; returns {'weights': [per-step snapshots], 'uok': ..., 'kvtype': ...}."""
    ctxs = _ctxs(mx, nctx)
    net, params = build(mx, ctxs, deferred=deferred)
    trainer = mx.gluon.Trainer(net.collect_params(), optimizer,
                               dict(optimizer_params or {"learning_rate": 0.1}),
                               kvstore=kvstore, compression_params=compression_params,
                               update_on_kvstore=update_on_kvstore)
    snaps = []
    for step in range(steps):
        forward_backward(mx, net, ctxs, step)
        trainer.step(BATCH)
        snaps.append(snapshot(params))
        if nctx > 1:
            ref = snapshot(params)
            first = [p.data(ctxs[0]).asnumpy() for p in params]
            assert all((a == b).all() for a, b in zip(ref, first)), "contexts diverged"
    kv = trainer._kvstore
    return {"weights": snaps, "uok": trainer._update_on_kvstore,
            "kvtype": kv.type if kv is not None else None}


OPTIMIZERS = {
    "sgd": ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}),
    "adam": ("adam", {"learning_rate": 0.01, "wd": 0.001}),
}


def basic_cases():
    cases = []
    for opt in ("sgd", "adam"):
        cases.append((f"1ctx_{opt}", dict(nctx=1, optimizer=opt)))
        for kv in ("local", "device"):
            for uok in (None, True, False):
                cases.append((f"2ctx_{kv}_{uok}_{opt}",
                              dict(nctx=2, kvstore=kv, update_on_kvstore=uok, optimizer=opt)))
    cases.append(("3ctx_local_None_sgd", dict(nctx=3, kvstore="local", optimizer="sgd")))
    cases.append(("3ctx_device_False_adam", dict(nctx=3, kvstore="device",
                                                 update_on_kvstore=False, optimizer="adam")))
    return cases


def run_basic(mx, case):
    kw = dict(case)
    name, params = OPTIMIZERS[kw.pop("optimizer")]
    return train(mx, optimizer=name, optimizer_params=params, **kw)


def lr_mult(mx, update_on_kvstore):
    ctxs = _ctxs(mx, 2)
    net, params = build(mx, ctxs)
    params[0].lr_mult = 0.1
    params[1].wd_mult = 0.0
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.2, "wd": 0.05, "momentum": 0.5},
                               update_on_kvstore=update_on_kvstore)
    snaps = []
    for step in range(4):
        if step == 2:
            params[2].lr_mult = 3.0
            params[0].lr_mult = 1.0
        forward_backward(mx, net, ctxs, step)
        trainer.step(BATCH)
        snaps.append(snapshot(params))
    return {"weights": snaps}


def lr_scheduler(mx, update_on_kvstore, nctx=2):
    ctxs = _ctxs(mx, nctx)
    net, params = build(mx, ctxs)
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=0.4)
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.4, "lr_scheduler": sched, "momentum": 0.9},
                               update_on_kvstore=update_on_kvstore)
    snaps, lrs = [], []
    for step in range(6):
        forward_backward(mx, net, ctxs, step)
        trainer.step(BATCH)
        snaps.append(snapshot(params))
        lrs.append(float(trainer.learning_rate))
    return {"weights": snaps, "lrs": lrs}


def save_load(mx, fname, optimizer, update_on_kvstore, nctx=2, resume=True):
    """Train 2 steps, save the states, train 2 more; optionally resume from the file.

    Returns the weights of the uninterrupted run and (with ``resume``) of a run that builds
    a new net and Trainer from the saved weights and states.
    """
    ctxs = _ctxs(mx, nctx)
    name, oparams = OPTIMIZERS[optimizer]
    oparams = dict(oparams)
    oparams["lr_scheduler"] = mx.lr_scheduler.FactorScheduler(step=1, factor=0.9,
                                                              base_lr=oparams["learning_rate"])
    net, params = build(mx, ctxs)
    trainer = mx.gluon.Trainer(net.collect_params(), name, oparams,
                               update_on_kvstore=update_on_kvstore)
    for step in range(2):
        forward_backward(mx, net, ctxs, step)
        trainer.step(BATCH)
    trainer.save_states(fname)
    saved = snapshot(params)
    for step in range(2, 4):
        forward_backward(mx, net, ctxs, step)
        trainer.step(BATCH)
    result = {"straight": snapshot(params), "lr_straight": float(trainer.learning_rate)}
    first = [p.data(ctxs[0]).asnumpy() for p in params]
    assert all((a == b).all() for a, b in zip(result["straight"], first)), "contexts diverged"
    if resume:
        net2, params2 = build(mx, ctxs, seed=1)
        for p, w in zip(params2, saved):
            p.set_data(mx.nd.array(w))
        other = OPTIMIZERS[optimizer][1]
        trainer2 = mx.gluon.Trainer(net2.collect_params(), name,
                                    dict(other, learning_rate=123.0),
                                    update_on_kvstore=update_on_kvstore)
        trainer2.load_states(fname)
        result["lr_loaded"] = float(trainer2.learning_rate)
        for step in range(2, 4):
            forward_backward(mx, net2, ctxs, step)
            trainer2.step(BATCH)
        result["resumed"] = snapshot(params2)
        result["lr_resumed"] = float(trainer2.learning_rate)
    return result


def stale(mx, nctx, update_on_kvstore):
    """Layer b is left out of some steps; ignore_stale_grad=True skips it (or not, on kv)."""
    ctxs = _ctxs(mx, nctx)
    gluon, autograd = mx.gluon, mx.autograd
    a = gluon.nn.Dense(3, in_units=4)
    b = gluon.nn.Dense(3, in_units=4)
    a.initialize(mx.init.Constant(0.1), ctx=ctxs)
    b.initialize(mx.init.Constant(-0.2), ctx=ctxs)
    params = [a.weight, a.bias, b.weight, b.bias]
    trainer = gluon.Trainer(params, "sgd", {"learning_rate": 0.5, "momentum": 0.5},
                            update_on_kvstore=update_on_kvstore)
    out = {"weights": [], "errors": []}
    for step in range(4):
        x, _ = batch(step)
        xs = gluon.utils.split_and_load(mx.nd.array(x), ctxs)
        use_b = step in (0, 3)
        with autograd.record():
            ls = [(a(v) + b(v)).sum() if use_b else a(v).sum() for v in xs]
        autograd.backward(ls)
        err = error_of(lambda: trainer.step(BATCH))
        if err["error"] is not None:
            err["message"] = err["message"].replace(params[2].name, "<b.weight>").replace(
                params[3].name, "<b.bias>")
            trainer.step(BATCH, ignore_stale_grad=True)
        out["errors"].append(err)
        out["weights"].append(snapshot(params))
    return out


def deferred(mx, nctx, update_on_kvstore):
    return train(mx, nctx=nctx, update_on_kvstore=update_on_kvstore, optimizer="adam",
                 optimizer_params=OPTIMIZERS["adam"][1], deferred=True)


def compression(mx, update_on_kvstore, ctype="2bit", threshold=0.05):
    return train(mx, nctx=2, kvstore="device", update_on_kvstore=update_on_kvstore,
                 optimizer="sgd", optimizer_params={"learning_rate": 0.5, "momentum": 0.9},
                 steps=4, compression_params={"type": ctype, "threshold": threshold})


def custom_store(mx):
    out = {}
    r = train(mx, nctx=2, kvstore="teststore", optimizer="sgd",
              optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    out["teststore"] = r
    out["teststore_uok_true"] = error_of(
        lambda: train(mx, nctx=2, kvstore="teststore", update_on_kvstore=True, steps=1))
    kv = mx.kv.create("device")
    r = train(mx, nctx=2, kvstore=kv, optimizer="adam", optimizer_params={"learning_rate": 0.01})
    out["instance"] = r
    out["instance_single_ctx"] = train(mx, nctx=1, kvstore=mx.kv.create("local"),
                                       optimizer="sgd")
    return out


def register_user_stores(mx):
    """Two user stores registered by name: one runs the optimizer, one is a plain class."""

    class SumStore(mx.kv.KVStoreBase):
        def __init__(self):
            self._vals = {}
            self._updater = None

        def broadcast(self, key, value, out, priority=0):
            self._vals[key] = value.copy()
            for o in (out if isinstance(out, list) else [out]):
                o[:] = value

        def pushpull(self, key, value, out=None, priority=0):
            total = value[0].copy()
            for v in value[1:]:
                total += v.as_in_context(total.context)
            if self._updater is not None:
                self._updater(key, total, self._vals[key])
                total = self._vals[key]
            for o in (out if out is not None else value):
                o[:] = total

        def set_optimizer(self, optimizer):
            self._updater = mx.optimizer.get_updater(optimizer)

        def is_capable(self, capability):
            return capability == "optimizer"

        @property
        def type(self):
            return "sumstore"

        @property
        def rank(self):
            return 0

        @property
        def num_workers(self):
            return 1

    class PlainStore:
        def broadcast(self, key, value, out, priority=0):
            for o in out:
                o[:] = value

        def pushpull(self, key, value, out=None, priority=0):
            total = value[0] + value[1]
            for o in (out if out is not None else value):
                o[:] = total

        def is_capable(self, capability):
            return False

        @property
        def type(self):
            return "plainstore"

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mx.kv.KVStoreBase.register(SumStore)
        mx.kv.KVStoreBase.register(PlainStore)


def user_stores(mx):
    register_user_stores(mx)
    out = {}
    for uok in (None, False):
        out[f"sum_{uok}"] = train(mx, nctx=2, kvstore="sumstore", update_on_kvstore=uok,
                                  optimizer="sgd",
                                  optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    out["plain"] = train(mx, nctx=2, kvstore="plainstore", optimizer="adam",
                         optimizer_params={"learning_rate": 0.01})
    out["plain_uok_true"] = error_of(lambda: train(mx, nctx=2, kvstore="plainstore",
                                                   update_on_kvstore=True, steps=1))
    return out


def clip_between(mx):
    """allreduce_grads, clip the summed gradients, update."""
    ctxs = _ctxs(mx, 2)
    net, params = build(mx, ctxs)
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.3},
                               update_on_kvstore=False)
    snaps, norms = [], []
    for step in range(3):
        forward_backward(mx, net, ctxs, step)
        trainer.allreduce_grads()
        for c in ctxs:
            grads = [p.grad(c) for p in params]
            norms.append(float(mx.gluon.utils.clip_global_norm(grads, 0.5)))
        trainer.update(BATCH)
        snaps.append(snapshot(params))
    net2, _ = build(mx, ctxs)
    tr2 = mx.gluon.Trainer(net2.collect_params(), "sgd", {"learning_rate": 0.3},
                           update_on_kvstore=True)
    forward_backward(mx, net2, ctxs, 0)
    return {"weights": snaps, "norms": norms,
            "allreduce_uok": error_of(tr2.allreduce_grads),
            "update_uok": error_of(lambda: tr2.update(BATCH))}


def rescale(mx):
    """Batch sizes that change between steps, and a rescale_grad given by the user."""
    ctxs = _ctxs(mx, 1)
    net, params = build(mx, ctxs)
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.1, "rescale_grad": 2.0})
    snaps, scales = [], []
    for step, bs in enumerate((8, 2, 5)):
        forward_backward(mx, net, ctxs, step)
        trainer.step(bs)
        scales.append(float(trainer.optimizer.rescale_grad))
        snaps.append(snapshot(params))
    forward_backward(mx, net, ctxs, 3)
    trainer.update(4)
    scales.append(float(trainer.optimizer.rescale_grad))
    snaps.append(snapshot(params))
    return {"weights": snaps, "scales": scales}


def grad_req(mx, nctx):
    """grad_req='add' accumulates between steps; 'null' Parameters are left alone."""
    ctxs = _ctxs(mx, nctx)
    net, params = build(mx, ctxs)
    params[0].grad_req = "add"
    params[3].grad_req = "null"
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    snaps = []
    for step in range(3):
        forward_backward(mx, net, ctxs, step)
        trainer.step(BATCH)
        snaps.append(snapshot(params))
    return {"weights": snaps}


def tutorial(mx):
    """The Trainer tutorial, with fixed data instead of random numbers."""
    gluon, nd, autograd, optimizer = mx.gluon, mx.nd, mx.autograd, mx.optimizer
    loss = gluon.loss.L2Loss()
    net = gluon.nn.Dense(1)
    net.initialize(mx.init.Constant(0.25))
    batch_size = 8
    rng = np.random.RandomState(5)
    X = nd.array(rng.uniform(size=(batch_size, 4)).astype(np.float32))
    y = nd.array(rng.uniform(size=(batch_size,)).astype(np.float32))

    def forward_backward():
        with autograd.record():
            l = loss(net(X), y)
        l.backward()

    forward_backward()
    trainer = gluon.Trainer(net.collect_params(), optimizer="sgd",
                            optimizer_params={"learning_rate": 1})
    cur_weight = net.weight.data().copy()
    trainer.step(batch_size)
    out = {"sgd": net.weight.data().asnumpy(),
           "sgd_rule": (cur_weight - net.weight.grad() * 1 / batch_size).asnumpy()}
    optim = optimizer.Adam(learning_rate=1)
    trainer = gluon.Trainer(net.collect_params(), optim)
    forward_backward()
    trainer.step(batch_size)
    out["adam"] = net.weight.data().asnumpy()
    out["lr"] = trainer.learning_rate
    trainer.set_learning_rate(0.1)
    out["lr_set"] = trainer.learning_rate
    return out


def rules(mx, nctx, kvstore, uok, env):
    """Which store and update_on_kvstore the Trainer picks (or what it raises)."""
    import os
    old = os.environ.get("MXNET_UPDATE_ON_KVSTORE")
    if env is not None:
        os.environ["MXNET_UPDATE_ON_KVSTORE"] = env
    try:
        res = {}

        def run():
            r = train(mx, nctx=nctx, kvstore=kvstore() if callable(kvstore) else kvstore,
                      update_on_kvstore=uok, steps=1)
            res.update(uok=r["uok"], kvtype=r["kvtype"])

        err = error_of(run)
        res.update(err)
        return res
    finally:
        if env is not None:
            if old is None:
                del os.environ["MXNET_UPDATE_ON_KVSTORE"]
            else:
                os.environ["MXNET_UPDATE_ON_KVSTORE"] = old


def rules_cases():
    cases = []
    for nctx in (1, 2):
        for kv in ("local", "device", "local_allreduce_cpu", "teststore", None):
            for uok in (None, True, False):
                for env in (None, "0"):
                    if env is not None and uok is not None:
                        continue
                    cases.append((nctx, kv, uok, env))
    return cases


def constructor_errors(mx):
    gluon = mx.gluon
    net, params = build(mx, [mx.cpu(0)])
    other = gluon.nn.Dense(2, in_units=3)
    other.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    out = {
        "not_list": error_of(lambda: gluon.Trainer(params[0], "sgd")),
        "not_param": error_of(lambda: gluon.Trainer([params[0], 3], "sgd")),
        "contexts": error_of(lambda: gluon.Trainer([params[0], other.weight], "sgd")),
        "instance_and_params": error_of(
            lambda: gluon.Trainer(params, mx.optimizer.SGD(), {"learning_rate": 0.1})),
        "unknown_kvstore_type": error_of(
            lambda: gluon.Trainer([other.weight], "sgd", kvstore=3).step(1)),
    }
    out["contexts"]["message"] = out["contexts"]["message"].replace(
        other.weight.name, "<other>")
    uninit = gluon.nn.Dense(2, in_units=3)
    out["uninitialized"] = error_of(lambda: gluon.Trainer(uninit.collect_params(), "sgd"))
    out["uninitialized"]["message"] = out["uninitialized"]["message"].replace(
        uninit.weight.name, "<w>").replace(uninit.bias.name, "<w>")
    return out


def sparse_rules(mx):
    """Sparse gradients and weights: the store and update_on_kvstore choices, and errors."""
    gluon, autograd = mx.gluon, mx.autograd
    out = {}
    ctxs = _ctxs(mx, 2)

    def emb_net():
        net = gluon.nn.Embedding(6, 3, sparse_grad=True)
        net.initialize(mx.init.Constant(0.5), ctx=ctxs)
        return net

    def run(net, trainer, steps=2):
        snaps = []
        for step in range(steps):
            idx = mx.nd.array([[step % 6, 2], [4, (step + 3) % 6]])
            parts = gluon.utils.split_and_load(idx, ctxs)
            with autograd.record():
                ls = [(net(p) * (k + 1.5)).sum() for k, p in enumerate(parts)]
            autograd.backward(ls)
            trainer.step(4)
            snaps.append(net.weight.data(ctxs[1]).asnumpy().copy())
        return snaps

    for kv, uok in (("device", None), ("local", None), ("device", True)):
        net = emb_net()
        tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.5},
                           kvstore=kv, update_on_kvstore=uok)
        snaps = run(net, tr)
        out[f"grad_{kv}_{uok}"] = {"weights": snaps, "uok": tr._update_on_kvstore,
                                  "kvtype": tr._kvstore.type if tr._kvstore else None}
    net = emb_net()
    tr = gluon.Trainer(net.collect_params(), "sgd", kvstore=mx.kv.create("teststore"))
    out["grad_custom_store"] = error_of(lambda: run(net, tr, 1))
    w = gluon.Parameter("sparse_w", shape=(4, 2), stype="row_sparse")
    w.initialize(ctx=ctxs)
    tr = gluon.Trainer([w], "sgd", update_on_kvstore=False)
    out["weight_uok_false"] = error_of(lambda: tr._init_kvstore())
    w2 = gluon.Parameter("sparse_w2", shape=(4, 2), stype="row_sparse")
    w2.initialize(ctx=ctxs)
    tr = gluon.Trainer([w2], "sgd", kvstore=mx.kv.create("teststore"))
    out["weight_custom_store"] = error_of(lambda: tr._init_kvstore())
    import re
    out["weight_custom_store"]["message"] = re.sub(
        r"<[^<>]*object at 0x[0-9a-f]+>", "<store>", out["weight_custom_store"]["message"])
    w3 = gluon.Parameter("sparse_w3", shape=(4, 2), stype="row_sparse")
    w3.initialize(ctx=ctxs)
    tr = gluon.Trainer([w3], "sgd")
    tr._init_kvstore()
    out["weight_store"] = {"uok": tr._update_on_kvstore, "kvtype": tr._kvstore.type}
    return out
