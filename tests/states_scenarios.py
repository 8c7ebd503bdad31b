"""Resuming training from MXNet's pickled optimizer states, written once against MXNet's API.

tools/gen_states_fixtures.py runs these with MXNet 1.9.1: each scenario trains a few steps,
writes MXNet's ``.states`` pickle (``Trainer.save_states`` or ``Updater.get_states``), then
resumes from that file *in MXNet* and records the weights. tests/test_mxnet_states.py loads the
same files into neogluon, resumes the same way, and compares.
"""
import numpy as np

import trainer_scenarios as T

# name -> (optimizer, params, scheduler); the scheduler is (class name, kwargs) or None.
OPTIMIZERS = {
    "sgd": ("sgd", {"learning_rate": 0.1}, None),
    "sgd_mom": ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01},
                ("FactorScheduler", {"step": 1, "factor": 0.9})),
    "nag": ("nag", {"learning_rate": 0.1, "momentum": 0.9}, None),
    "adam": ("adam", {"learning_rate": 0.01, "wd": 0.001},
             ("MultiFactorScheduler", {"step": [2, 3], "factor": 0.5})),
    "rmsprop": ("rmsprop", {"learning_rate": 0.01}, None),
    "rmsprop_centered": ("rmsprop", {"learning_rate": 0.01, "centered": True,
                                     "clip_weights": 2.0}, None),
    "adagrad": ("adagrad", {"learning_rate": 0.1}, None),
    "adadelta": ("adadelta", {"learning_rate": 1.0, "wd": 0.01}, None),
    "ftrl": ("ftrl", {"learning_rate": 0.1, "wd": 0.01}, None),
    "adamax": ("adamax", {"learning_rate": 0.01}, None),
    "nadam": ("nadam", {"learning_rate": 0.01}, None),
    "signum": ("signum", {"learning_rate": 0.01, "momentum": 0.9, "wd_lh": 0.01}, None),
    "lamb": ("lamb", {"learning_rate": 0.01},
             ("PolyScheduler", {"max_update": 10, "pwr": 2})),
    "lars": ("lars", {"learning_rate": 0.1, "momentum": 0.9}, None),
    "dcasgd": ("dcasgd", {"learning_rate": 0.1, "lamda": 0.1}, None),  # MXNet: no momentum
    "sgld": ("sgld", {"learning_rate": 0.01}, None),
    "ftml": ("ftml", {"learning_rate": 0.01},
             ("CosineScheduler", {"max_update": 10, "final_lr": 0.001})),
    "lbsgd": ("lbsgd", {"learning_rate": 0.1, "momentum": 0.9, "batch_scale": 2,
                        "warmup_epochs": 1, "updates_per_epoch": 2}, None),
    "ccsgd": ("ccsgd", {"learning_rate": 0.1, "momentum": 0.5}, None),
    "test": ("test", {}, None),
    # 2-D weights only, no weight decay: Updater cases only
    "groupadagrad": ("groupadagrad", {"learning_rate": 0.1}, None),
}
# ("test": neogluon's Test optimizer fails inside a Trainer with update_on_kvstore=False,
# an in-place torch op on a leaf that requires grad, whatever the states.)
UPDATER_ONLY = {"groupadagrad", "test"}
SHAPES_OF = {"groupadagrad": [(5, 4), (3, 5)]}

# SGLD adds random noise that only MXNet's generator reproduces: its weights are not compared.
NOISY = {"sgld"}


def make_optimizer_params(mx, key, **override):
    name, params, sched = OPTIMIZERS[key]
    params = dict(params, **override)
    if sched is not None:
        cls, kw = sched
        params["lr_scheduler"] = getattr(mx.lr_scheduler, cls)(
            base_lr=params["learning_rate"], **kw)
    return name, params


def optimizer_attrs(opt):
    """The plain attributes of an optimizer (and its scheduler) that a resume depends on."""
    out = {}
    for k, v in sorted(vars(opt).items()):
        if k in ("param_dict", "_index_update_count", "cumgrads"):
            continue
        if k == "lr_scheduler":
            out[k] = None if v is None else {
                "class": type(v).__name__,
                "attrs": {a: (list(b) if isinstance(b, (list, tuple)) else b)
                          for a, b in sorted(vars(v).items())}}
            continue
        if k == "_all_index_update_counts":
            v = {str(d): {str(i): c for i, c in cnt.items()} for d, cnt in v.items()}
        elif isinstance(v, dict):
            v = {str(a): b for a, b in v.items()}
        elif isinstance(v, tuple):
            v = list(v)
        out[k] = v
    return out


def state_arrays(states):
    """{index: [arrays]} of an Updater's states, flattened in order (None entries skipped)."""
    def flat(s):
        if s is None:
            return []
        if isinstance(s, (tuple, list)):
            return [a for x in s for a in flat(x)]
        return [s.asnumpy()]
    return {str(k): flat(v) for k, v in sorted(states.items())}


# ------------------------------------------------------------------------ Trainer runs
def trainer_run(mx, fname, key, update_on_kvstore, nctx=2, load=None):
    """Train 2 steps and save the states to ``fname``, then 2 more steps.

    With ``load`` (a dict from an earlier run: the saved weights), instead build a fresh net
    holding those weights and a Trainer with another learning rate, ``load_states(fname)``
    and train steps 2 and 3: MXNet's own resume.
    """
    ctxs = T._ctxs(mx, nctx)
    name, params = make_optimizer_params(mx, key)
    if load is None:
        net, plist = T.build(mx, ctxs)
        trainer = mx.gluon.Trainer(net.collect_params(), name, params,
                                   update_on_kvstore=update_on_kvstore)
        for step in range(2):
            T.forward_backward(mx, net, ctxs, step)
            trainer.step(T.BATCH)
        trainer.save_states(fname)
        result = {"saved": T.snapshot(plist)}
    else:
        net, plist = T.build(mx, ctxs, seed=1)
        for p, w in zip(plist, load["saved"]):
            p.set_data(mx.nd.array(w))
        trainer = mx.gluon.Trainer(net.collect_params(), name,
                                   dict(params, learning_rate=123.0),
                                   update_on_kvstore=update_on_kvstore)
        trainer.load_states(fname)
        result = {"loaded_attrs": optimizer_attrs(trainer._optimizer),
                  "lr_loaded": float(trainer.learning_rate)}
        result["loaded_type"] = type(trainer._optimizer).__name__
    for step in range(2, 4):
        T.forward_backward(mx, net, ctxs, step)
        trainer.step(T.BATCH)
    result["weights"] = T.snapshot(plist)
    result["lr_end"] = float(trainer.learning_rate)
    return result


# ------------------------------------------------------------------------ Updater runs
SHAPES = [(5, 4), (5,), (3, 5)]


def tensors(step, dtype, seed, key=None):
    rng = np.random.RandomState(seed + step)
    return [rng.uniform(-1, 1, size=s).astype(dtype) for s in SHAPES_OF.get(key, SHAPES)]


def updater_run(mx, key, dump, dtype="float32", multi_precision=False):
    """Updater on three weights with fixed gradients: 2 steps, then ``get_states(dump)``."""
    name, params = make_optimizer_params(mx, key, multi_precision=multi_precision,
                                         rescale_grad=0.5)
    opt = mx.optimizer.create(name, **params)
    upd = mx.optimizer.get_updater(opt)
    weights = [mx.nd.array(w, dtype=dtype) for w in tensors(0, dtype, seed=7, key=key)]
    idx = list(range(len(weights)))
    for step in range(2):
        grads = [mx.nd.array(g, dtype=dtype) for g in tensors(step, dtype, seed=11, key=key)]
        upd(idx, grads, weights)
    return {"blob": upd.get_states(dump_optimizer=dump),
            "saved": [w.asnumpy() for w in weights], "states": state_arrays(upd.states)}


def updater_resume(mx, key, dump, saved, blob, dtype="float32", multi_precision=False):
    """The second half of :func:`updater_run`, from the weights ``saved`` at the save."""
    name, params = make_optimizer_params(mx, key, multi_precision=multi_precision,
                                         rescale_grad=0.5)
    opt = mx.optimizer.create(name, **params)
    upd = mx.optimizer.get_updater(opt)
    weights = [mx.nd.array(w, dtype=dtype) for w in saved]
    idx = list(range(len(weights)))
    upd.set_states(blob)
    loaded = state_arrays(upd.states)
    for step in range(2, 4):
        grads = [mx.nd.array(g, dtype=dtype) for g in tensors(step, dtype, seed=11, key=key)]
        upd(idx, grads, weights)
    return {"weights": [w.asnumpy() for w in weights], "loaded_states": loaded,
            "attrs": optimizer_attrs(upd.optimizer)}


# ------------------------------------------------------------------------ KVStore runs
def kvstore_resume(mx, key, fname, saved, kvtype="local"):
    """A store with an optimizer, holding the weights ``saved``: ``load_optimizer_states``
    then two steps of push (the fixed gradients) and pull."""
    name, params = make_optimizer_params(mx, key, rescale_grad=0.5)
    kv = mx.kv.create(kvtype)
    kv.set_optimizer(mx.optimizer.create(name, **params))
    for i, w in enumerate(saved):
        kv.init(i, mx.nd.array(w))
    kv.load_optimizer_states(fname)
    outs = [mx.nd.zeros(w.shape) for w in saved]
    for step in range(2, 4):
        for i, g in enumerate(tensors(step, "float32", seed=11)):
            kv.push(i, mx.nd.array(g))
        for i, o in enumerate(outs):
            kv.pull(i, out=o)
    return {"weights": [o.asnumpy() for o in outs]}


# ------------------------------------------------------------------------ float16 Trainer
def _fp16_params(mx, ctxs, values):
    params = []
    for i, v in enumerate(values):
        p = mx.gluon.Parameter(f"p{i}", shape=v.shape, dtype="float16")
        p.initialize(mx.init.Zero(), ctx=ctxs)
        p.set_data(mx.nd.array(v, dtype="float16"))
        params.append(p)
    return params


def _fp16_step(mx, trainer, params, ctxs, step):
    """A loss that needs no float16 matrix product (MXNet has none on CPU):
    sum(w * c + 0.5 * w * w) with fixed ``c`` per step."""
    cs = tensors(step, "float16", seed=23)
    with mx.autograd.record():
        losses = []
        for ctx in ctxs:
            terms = [(p.data(ctx) * mx.nd.array(c, ctx=ctx, dtype="float16")
                      + 0.5 * p.data(ctx) * p.data(ctx)).sum() for p, c in zip(params, cs)]
            losses.append(mx.nd.add_n(*terms))
    mx.autograd.backward(losses)
    trainer.step(4)


def trainer_fp16_run(mx, fname, key, update_on_kvstore, load=None):
    """:func:`trainer_run` with float16 Parameters and ``multi_precision=True`` (the states
    hold float32 master weights)."""
    ctxs = T._ctxs(mx, 2)
    name, params = make_optimizer_params(mx, key, multi_precision=True)
    if load is None:
        plist = _fp16_params(mx, ctxs, tensors(0, "float16", seed=29))
        trainer = mx.gluon.Trainer(plist, name, params, update_on_kvstore=update_on_kvstore)
        for step in range(2):
            _fp16_step(mx, trainer, plist, ctxs, step)
        trainer.save_states(fname)
        result = {"saved": [p.data(ctxs[0]).asnumpy() for p in plist]}
    else:
        plist = _fp16_params(mx, ctxs, load["saved"])
        trainer = mx.gluon.Trainer(plist, name, dict(params, learning_rate=123.0),
                                   update_on_kvstore=update_on_kvstore)
        trainer.load_states(fname)
        result = {"loaded_attrs": optimizer_attrs(trainer._optimizer)}
    for step in range(2, 4):
        _fp16_step(mx, trainer, plist, ctxs, step)
    result["weights"] = [p.data(ctxs[-1]).asnumpy() for p in plist]
    return result
