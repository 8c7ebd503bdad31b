"""Write tests/fixtures/gluon/* from MXNet 1.9.1 (run with /tmp/mxref/bin/python).

Scenarios: block/parameter names and shapes, layer outputs and gradients given fixed weights,
parameter files written by save_parameters/ParameterDict.save/export, initializer statistics,
reprs, model-zoo names/shapes and outputs with deterministic weights.
"""
import json
import os
import sys
import warnings

import numpy as np
import mxnet as mx
from mxnet import gluon, nd, autograd
from mxnet.gluon import nn, rnn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures",
                   "gluon")
os.makedirs(OUT, exist_ok=True)
warnings.simplefilter("ignore")


def reset_names():
    mx.name.NameManager._current.value = mx.name.NameManager()


def det(shape, k):
    """Deterministic pseudo-random values, computed the same way in the tests."""
    n = int(np.prod(shape)) if shape else 1
    return (np.sin(np.arange(n, dtype=np.float64) * 0.37 + k) * 0.5).astype(np.float32).reshape(shape)


def names_and_shapes(block):
    return [[k, list(v.shape), str(np.dtype(v.dtype)), v.grad_req]
            for k, v in block.collect_params().items()]


# ------------------------------------------------------------------ naming
def naming():
    res = {}
    reset_names()
    net = nn.Sequential()
    with net.name_scope():
        net.add(nn.Dense(256, activation="relu"))
        net.add(nn.Dense(256, activation="relu"))
        net.add(nn.Dense(10))
    net.initialize()
    net(nd.ones((2, 7)))
    res["seq_mlp"] = {"prefix": net.prefix, "params": names_and_shapes(net),
                      "children": [c.name for c in net._children.values()],
                      "act_names": [c.act.name if c.act else None for c in net._children.values()],
                      "repr": repr(net)}

    h = nn.HybridSequential()
    with h.name_scope():
        h.add(nn.Conv2D(6, kernel_size=3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
              nn.MaxPool2D(), nn.Conv2D(8, 3, in_channels=6, use_bias=False), nn.Flatten(),
              nn.Dense(4, in_units=8 * 2 * 2), nn.Dropout(0.5))
    h.initialize()
    h(nd.ones((2, 3, 8, 8)))
    res["hybrid_cnn"] = {"prefix": h.prefix, "params": names_and_shapes(h),
                         "children": [c.name for c in h._children.values()], "repr": repr(h)}

    # blocks outside any scope use global counters
    d1 = nn.Dense(3)
    d2 = nn.Dense(3)
    c1 = nn.Conv2D(2, 3)
    h2 = nn.HybridSequential()
    with h2.name_scope():
        h2.add(nn.Conv2D(2, 3))
    res["global_counters"] = [d1.name, d2.name, c1.name, h2.name,
                              list(h2.collect_params().keys())]

    class Model(gluon.Block):
        def __init__(self, **kwargs):
            super(Model, self).__init__(**kwargs)
            with self.name_scope():
                self.dense0 = nn.Dense(20)
                self.dense1 = nn.Dense(20)
                self.inner = nn.HybridSequential()
                with self.inner.name_scope():
                    self.inner.add(nn.Dense(5), nn.BatchNorm())

        def forward(self, x):
            return self.inner(nd.relu(self.dense1(nd.relu(self.dense0(x)))))

    m = Model()
    m2 = Model(prefix="custom_")
    res["custom_block"] = {"name": m.name, "params": list(m.collect_params().keys()),
                           "name2": m2.name, "params2": list(m2.collect_params().keys()),
                           "select": list(m.collect_params(".*weight|.*gamma").keys()),
                           "select2": list(m.collect_params("model0_dense0_weight|.*bias").keys()),
                           "structural": sorted(m._collect_params_with_prefix().keys())}
    # sharing
    dense0 = nn.Dense(20, in_units=10)
    dense1 = nn.Dense(20, in_units=10, params=dense0.collect_params())
    res["sharing"] = {"d0": dense0.name, "d1": dense1.name,
                      "d1_params": list(dense1.collect_params().keys()),
                      "same": dense0.weight is dense1.weight}
    # a block with prefix='' and a params dict
    pd = gluon.ParameterDict("pre_")
    w = pd.get("weight", shape=(2, 3))
    c = pd.get_constant("const", [[1, 2], [3, 4]])
    res["paramdict_repr"] = repr(pd)
    res["param_repr"] = [repr(w), repr(c), repr(gluon.Parameter("x", shape=4, dtype="float16"))]
    # sequential slicing
    s = nn.HybridSequential(prefix="s_")
    with s.name_scope():
        s.add(nn.Dense(2), nn.Dense(3), nn.Dense(4))
    sl = s[1:]
    res["slice"] = {"type": type(sl).__name__, "len": len(sl), "prefix": sl.prefix,
                    "children": [b.name for b in sl._children.values()]}
    # summary table
    import contextlib
    import io
    reset_names()
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(4, in_units=3, activation="relu"), nn.Dense(2, in_units=4),
                nn.BatchNorm(in_channels=2))
    net.initialize()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        net.summary(nd.ones((5, 3)))
    res["summary"] = buf.getvalue()
    return res


# ------------------------------------------------------------------ layers
LAYERS = [
    ("dense", lambda: nn.Dense(5, activation="tanh"), (3, 4, 2)),
    ("dense_noflat", lambda: nn.Dense(5, flatten=False, use_bias=False), (3, 4, 2)),
    ("conv1d", lambda: nn.Conv1D(4, 3, strides=2, padding=1), (2, 3, 9)),
    ("conv2d", lambda: nn.Conv2D(4, (3, 2), strides=(1, 2), padding=(1, 0), dilation=(2, 1),
                                 activation="relu"), (2, 3, 7, 6)),
    ("conv2d_groups", lambda: nn.Conv2D(4, 3, groups=2, use_bias=False), (2, 4, 5, 5)),
    ("conv3d", lambda: nn.Conv3D(2, 2), (1, 2, 4, 4, 4)),
    ("conv1d_t", lambda: nn.Conv1DTranspose(3, 3, strides=2, padding=1, output_padding=1), (2, 2, 5)),
    ("conv2d_t", lambda: nn.Conv2DTranspose(3, 3, strides=2, padding=1), (2, 4, 4, 4)),
    ("conv3d_t", lambda: nn.Conv3DTranspose(2, 2), (1, 2, 3, 3, 3)),
    ("maxpool1d", lambda: nn.MaxPool1D(3, 2, 1), (2, 3, 9)),
    ("maxpool2d", lambda: nn.MaxPool2D(), (2, 3, 6, 6)),
    ("maxpool2d_ceil", lambda: nn.MaxPool2D(3, 2, ceil_mode=True), (2, 3, 8, 8)),
    ("maxpool3d", lambda: nn.MaxPool3D(2), (1, 2, 4, 4, 4)),
    ("avgpool1d", lambda: nn.AvgPool1D(2), (2, 3, 8)),
    ("avgpool2d", lambda: nn.AvgPool2D(3, 1, 1, count_include_pad=False), (2, 3, 5, 5)),
    ("avgpool2d_pad", lambda: nn.AvgPool2D(3, 2, 1), (2, 3, 6, 6)),
    ("avgpool3d", lambda: nn.AvgPool3D(2), (1, 2, 4, 4, 4)),
    ("gmaxpool1d", lambda: nn.GlobalMaxPool1D(), (2, 3, 5)),
    ("gmaxpool2d", lambda: nn.GlobalMaxPool2D(), (2, 3, 5, 4)),
    ("gmaxpool3d", lambda: nn.GlobalMaxPool3D(), (1, 2, 3, 3, 3)),
    ("gavgpool1d", lambda: nn.GlobalAvgPool1D(), (2, 3, 5)),
    ("gavgpool2d", lambda: nn.GlobalAvgPool2D(), (2, 3, 5, 4)),
    ("gavgpool3d", lambda: nn.GlobalAvgPool3D(), (1, 2, 3, 3, 3)),
    ("batchnorm", lambda: nn.BatchNorm(), (4, 3, 2, 2)),
    ("batchnorm_axis", lambda: nn.BatchNorm(axis=-1, momentum=0.5, scale=False), (4, 2, 3)),
    ("layernorm", lambda: nn.LayerNorm(), (3, 4, 5)),
    ("layernorm_axis", lambda: nn.LayerNorm(axis=1, epsilon=1e-3), (3, 4, 5)),
    ("instancenorm", lambda: nn.InstanceNorm(scale=True), (2, 3, 4, 4)),
    ("groupnorm", lambda: nn.GroupNorm(num_groups=2), (2, 4, 3, 3)),
    ("embedding", lambda: nn.Embedding(10, 4), None),
    ("flatten", lambda: nn.Flatten(), (2, 3, 4)),
    ("leakyrelu", lambda: nn.LeakyReLU(0.1), (3, 4)),
    ("prelu", lambda: nn.PReLU(), (3, 4)),
    ("prelu_ch", lambda: nn.PReLU(in_channels=3), (2, 3, 4)),
    ("elu", lambda: nn.ELU(0.7), (3, 4)),
    ("selu", lambda: nn.SELU(), (3, 4)),
    ("gelu", lambda: nn.GELU(), (3, 4)),
    ("swish", lambda: nn.Swish(1.5), (3, 4)),
    ("activation_sigmoid", lambda: nn.Activation("sigmoid"), (3, 4)),
    ("activation_softrelu", lambda: nn.Activation("softrelu"), (3, 4)),
    ("reflectionpad", lambda: nn.ReflectionPad2D(2), (1, 2, 4, 5)),
    ("dropout0", lambda: nn.Dropout(0.0), (3, 4)),
    ("hybridlambda", lambda: nn.HybridLambda(lambda F, x: F.LeakyReLU(x, slope=0.1)), (3, 4)),
]


def layers():
    arrays = {}
    meta = {}
    for idx, (name, make, shape) in enumerate(LAYERS):
        reset_names()
        blk = make()
        blk.initialize()
        if shape is None:
            x = nd.array(np.array([[1, 3, 9], [0, 2, 2]], dtype=np.float32))
        else:
            x = nd.array(det(shape, idx))
        with autograd.predict_mode():
            blk(x)  # finishes deferred init
        params = list(blk.collect_params().items())
        for j, (pn, p) in enumerate(params):
            if p.grad_req != "null" or "running" in pn:
                v = det(p.shape, 100 + idx * 10 + j)
                if "running_var" in pn:
                    v = np.abs(v) + 0.5
                p.set_data(nd.array(v))
            arrays[f"{name}|param|{pn}"] = p.data().asnumpy()
        if shape is not None:
            x.attach_grad()
        with autograd.record():
            y = blk(x)
            head = nd.array(det(y.shape, 7 + idx))
            loss = (y * head).sum()
        loss.backward()
        arrays[f"{name}|x"] = x.asnumpy()
        arrays[f"{name}|y"] = y.asnumpy()
        if shape is not None:
            arrays[f"{name}|dx"] = x.grad.asnumpy()
        for pn, p in params:
            if p.grad_req != "null":
                arrays[f"{name}|grad|{pn}"] = p.grad().asnumpy()
            if "running" in pn:
                arrays[f"{name}|after|{pn}"] = p.data().asnumpy()
        with autograd.predict_mode():
            arrays[f"{name}|y_pred"] = blk(x).asnumpy()
        meta[name] = {"params": [[pn, list(p.shape), p.grad_req] for pn, p in params],
                      "repr": repr(blk), "name": blk.name}
    np.savez_compressed(os.path.join(OUT, "layers.npz"), **arrays)
    return meta


# ------------------------------------------------------------------ save / load files
def files():
    reset_names()
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(4, in_units=3, activation="relu"), nn.BatchNorm(in_channels=4),
                nn.Dense(2, in_units=4))
    net.initialize()
    for j, p in enumerate(net.collect_params().values()):
        v = det(p.shape, 50 + j)
        if "running_var" in p.name:
            v = np.abs(v) + 0.5
        p.set_data(nd.array(v))
    net.save_parameters(os.path.join(OUT, "mlp.params"))
    net.collect_params().save(os.path.join(OUT, "mlp_full.params"))
    net.collect_params().save(os.path.join(OUT, "mlp_strip.params"), strip_prefix=net.prefix)
    x = nd.array(det((5, 3), 3))
    net.hybridize()
    with autograd.predict_mode():
        y = net(x)
    net.export(os.path.join(OUT, "mlp_export"), epoch=3)
    np.savez(os.path.join(OUT, "mlp_io.npz"), x=x.asnumpy(), y=y.asnumpy())
    # shared parameters: deduplicate
    reset_names()
    class Shared(gluon.HybridBlock):
        def __init__(self, **kw):
            super(Shared, self).__init__(**kw)
            with self.name_scope():
                self.a = nn.Dense(3, in_units=3)
                self.b = nn.Dense(3, in_units=3, params=self.a.params)

        def hybrid_forward(self, F, x):
            return self.b(self.a(x))
    s = Shared()
    s.initialize()
    s.save_parameters(os.path.join(OUT, "shared_dedup.params"), deduplicate=True)
    s.save_parameters(os.path.join(OUT, "shared_full.params"))
    return {
        "mlp_keys": sorted(nd.load(os.path.join(OUT, "mlp.params")).keys()),
        "mlp_full_keys": sorted(nd.load(os.path.join(OUT, "mlp_full.params")).keys()),
        "mlp_strip_keys": sorted(nd.load(os.path.join(OUT, "mlp_strip.params")).keys()),
        "export_keys": sorted(nd.load(os.path.join(OUT, "mlp_export-0003.params")).keys()),
        "shared_dedup_keys": sorted(nd.load(os.path.join(OUT, "shared_dedup.params")).keys()),
        "shared_full_keys": sorted(nd.load(os.path.join(OUT, "shared_full.params")).keys()),
    }


# ------------------------------------------------------------------ initializers
def inits():
    mx.random.seed(0)
    res = {}
    cases = {
        "uniform_default": (mx.init.Uniform(), (200, 300)),
        "uniform_0.5": (mx.init.Uniform(0.5), (200, 300)),
        "normal_default": (mx.init.Normal(), (200, 300)),
        "normal_2": (mx.init.Normal(2.0), (200, 300)),
        "xavier_default": (mx.init.Xavier(), (200, 300)),
        "xavier_gauss_in": (mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), (64, 32, 3, 3)),
        "xavier_out": (mx.init.Xavier(factor_type="out", magnitude=1.5), (64, 32, 3, 3)),
        "msra": (mx.init.MSRAPrelu(), (64, 32, 3, 3)),
        "msra_in": (mx.init.MSRAPrelu(factor_type="in", slope=0.1), (128, 256)),
        "orthogonal": (mx.init.Orthogonal(), (50, 80)),
        "orthogonal_normal": (mx.init.Orthogonal(scale=2.0, rand_type="normal"), (80, 50)),
    }
    for name, (init, shape) in cases.items():
        a = nd.zeros(shape)
        init(mx.init.InitDesc("w_weight"), a)
        v = a.asnumpy().astype(np.float64)
        r = {"shape": list(shape), "mean": v.mean(), "std": v.std(), "min": v.min(), "max": v.max()}
        if name.startswith("orthogonal"):
            m = v.reshape(shape[0], -1)
            r["gram"] = (m @ m.T if shape[0] <= m.shape[1] else m.T @ m).diagonal().mean()
        res[name] = r
    det_arrays = {}
    for name, init, shape in [("bilinear", mx.init.Bilinear(), (2, 1, 4, 4)),
                              ("bilinear_odd", mx.init.Bilinear(), (1, 2, 3, 5)),
                              ("lstmbias", mx.init.LSTMBias(2.5), (16,)),
                              ("constant", mx.init.Constant(0.3), (3, 4)),
                              ("one", mx.init.One(), (3,)),
                              ("zero", mx.init.Zero(), (3,))]:
        a = nd.ones(shape) * 7
        init(mx.init.InitDesc("w_weight"), a)
        det_arrays[name] = a.asnumpy()
    np.savez(os.path.join(OUT, "init_det.npz"), **det_arrays)
    res["dumps"] = {n: i.dumps() for n, i in [
        ("xavier", mx.init.Xavier()), ("msra", mx.init.MSRAPrelu()),
        ("uniform", mx.init.Uniform(0.1)), ("constant", mx.init.Constant(2)),
        ("normal", mx.init.Normal()), ("orthogonal", mx.init.Orthogonal()),
        ("lstmbias", mx.init.LSTMBias()), ("bilinear", mx.init.Bilinear()),
        ("one", mx.init.One()), ("zero", mx.init.Zero())]}
    # default initialisation of layers: which values come out
    reset_names()
    bn = nn.BatchNorm(in_channels=3)
    d = nn.Dense(4, in_units=3)
    bn.initialize()
    d.initialize()
    res["defaults"] = {"bn": {k: v.data().asnumpy().tolist() for k, v in bn.collect_params().items()},
                       "dense_bias": d.bias.data().asnumpy().tolist(),
                       "dense_weight_absmax": float(np.abs(d.weight.data().asnumpy()).max())}
    # global init with per-parameter init taking precedence
    reset_names()
    d = nn.Dense(4, in_units=3, weight_initializer="ones")
    d.initialize(mx.init.Constant(5))
    d2 = nn.Dense(4, in_units=3)
    d2.initialize(mx.init.Constant(5))
    res["precedence"] = {"weight": d.weight.data().asnumpy().tolist(),
                         "bias": d.bias.data().asnumpy().tolist(),
                         "d2_weight": d2.weight.data().asnumpy().tolist(),
                         "d2_bias": d2.bias.data().asnumpy().tolist()}
    return res


# ------------------------------------------------------------------ errors
def errors():
    res = {}

    def catch(fn):
        try:
            fn()
            return None
        except Exception as e:  # noqa: BLE001
            return [type(e).__name__, str(e)]

    p = gluon.Parameter("weight", shape=(2, 0), allow_deferred_init=True)
    p.initialize()
    res["deferred_data"] = catch(lambda: p.data())
    q = gluon.Parameter("weight", shape=(2, 3))
    res["uninit_data"] = catch(lambda: q.data())
    q.initialize(ctx=mx.cpu(0))
    res["wrong_ctx"] = catch(lambda: q.data(mx.cpu(1)))
    r = gluon.Parameter("w", shape=(2, 0))
    res["invalid_shape"] = catch(lambda: r.initialize())
    n = gluon.Parameter("n", shape=(2,), grad_req="null")
    n.initialize()
    res["null_grad"] = catch(lambda: n.grad())
    res["bad_grad_req"] = catch(lambda: gluon.Parameter("b", grad_req="sometimes"))
    pd = gluon.ParameterDict("p_")
    pd.get("w", shape=(2, 3))
    res["conflict"] = catch(lambda: pd.get("w", shape=(4, 3)))
    res["conflict_lr"] = catch(lambda: pd.get("w", lr_mult=2.0))
    res["hybrid_child"] = type(catch(lambda: nn.HybridSequential().add(nn.Sequential()))).__name__
    res["hybrid_child_err"] = catch(lambda: nn.HybridSequential().add(nn.Sequential()))[0]
    d = nn.Dense(2)
    res["change_type"] = catch(lambda: setattr(d, "weight", 3))[0]
    res["export_before"] = catch(lambda: nn.Dense(2).export("/tmp/x"))
    return res


def model_zoo():
    from mxnet.gluon.model_zoo import vision
    res = {}
    arrays = {}
    for name in ["resnet18_v1", "resnet50_v1", "resnet18_v2", "mobilenet1_0", "vgg11",
                 "alexnet"]:
        reset_names()
        net = getattr(vision, name)(classes=10)
        net.initialize()
        x = nd.array(det((1, 3, 224 if name == "alexnet" else 32,
                          224 if name == "alexnet" else 32), 1))
        with autograd.predict_mode():
            net(x)
        params = list(net.collect_params().items())
        res[name] = {"params": [[k, list(v.shape)] for k, v in params], "prefix": net.prefix}
        if name in ("resnet18_v1", "resnet18_v2", "mobilenet1_0"):
            for j, (k, v) in enumerate(params):
                val = det(v.shape, j) * (1.0 / np.sqrt(max(1, np.prod(v.shape[1:]))))
                if "running_var" in k or "gamma" in k:
                    val = np.abs(val) + 0.5
                v.set_data(nd.array(val))
            with autograd.predict_mode():
                arrays[name] = net(x).asnumpy()
    np.savez(os.path.join(OUT, "model_zoo_out.npz"), **arrays)
    return res


RNN_CASES = [
    ("rnn_relu", "rnn.RNN(6, num_layers=2)", (5, 3, 4)),
    ("rnn_tanh_ntc", "rnn.RNN(5, activation='tanh', layout='NTC', bidirectional=True)", (3, 5, 4)),
    ("lstm", "rnn.LSTM(6, num_layers=2, bidirectional=True)", (5, 3, 4)),
    ("gru", "rnn.GRU(5, num_layers=2, layout='NTC')", (3, 5, 4)),
    ("cell_rnn", "rnn.RNNCell(5)", (3, 4, 4)),
    ("cell_lstm", "rnn.LSTMCell(5)", (3, 4, 4)),
    ("cell_gru", "rnn.GRUCell(5)", (3, 4, 4)),
    ("seq_cells", "seq_cells()", (3, 4, 4)),
]


def seq_cells():
    from mxnet.gluon import rnn
    seq = rnn.SequentialRNNCell()
    with seq.name_scope():
        seq.add(rnn.LSTMCell(5))
        seq.add(rnn.GRUCell(4))
    return seq


def rnn_fixtures():
    from mxnet.gluon import rnn  # noqa: F401
    arrays = {}
    meta = {}
    for idx, (name, expr, shape) in enumerate(RNN_CASES):
        reset_names()
        blk = eval(expr)
        blk.initialize()
        x = nd.array(det(shape, 200 + idx))
        is_cell = name.startswith(("cell", "seq"))
        def run(block):
            if is_cell:
                out, states = block.unroll(shape[1], x, layout="NTC", merge_outputs=True)
            else:
                states = block.begin_state(shape[block._layout.find("N")])
                out, states = block(x, states)
            return out, states
        with autograd.predict_mode():
            run(blk)
        params = list(blk.collect_params().items())
        for j, (pn, p) in enumerate(params):
            v = det(p.shape, 300 + idx * 20 + j)
            p.set_data(nd.array(v))
        x.attach_grad()
        with autograd.record():
            out, states = run(blk)
            loss = (out * nd.array(det(out.shape, 9))).sum()
            for k, st in enumerate(states):
                loss = loss + (st * (k + 2)).sum()
        loss.backward()
        arrays[f"{name}|y"] = out.asnumpy()
        for k, st in enumerate(states):
            arrays[f"{name}|state{k}"] = st.asnumpy()
        arrays[f"{name}|dx"] = x.grad.asnumpy()
        for pn, p in params:
            arrays[f"{name}|grad|{pn}"] = p.grad().asnumpy()
        meta[name] = {"params": [[pn, list(p.shape)] for pn, p in params], "repr": repr(blk),
                      "structural": sorted(blk._collect_params_with_prefix().keys())}
    np.savez_compressed(os.path.join(OUT, "rnn.npz"), **arrays)
    return meta


def main():
    fixtures = {"rnn": rnn_fixtures(),"naming": naming(), "layers": layers(), "files": files(), "init": inits(),
                "errors": errors(), "model_zoo": model_zoo()}
    with open(os.path.join(OUT, "gluon.json"), "w") as f:
        json.dump(fixtures, f, indent=1, sort_keys=True, default=float)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
