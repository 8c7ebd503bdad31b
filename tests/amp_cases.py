"""AMP scenarios written against the MXNet API: tools/gen_amp_fixtures.py runs them on MXNet
1.9.1 (bfloat16 on CPU) and tests/test_amp.py runs the same code on neogluon.

Every function takes ``mx`` (the framework module), ``amp`` (its AMP module), ``dn`` (the
dtype name of an array: 'float32', 'bfloat16', ...) and ``bf16`` (what the framework's
``astype`` takes for bfloat16). ``amp.init(target_dtype='bfloat16')`` has been called.
"""
import numpy as np

BATCH = 4


def _fill(nd, params, seed):
    """Deterministic values for every parameter, in name order (shapes must be known)."""
    rng = np.random.RandomState(seed)
    for name in sorted(params.keys()):
        p = params[name]
        shape = p.shape
        if name.endswith("running_var") or name.endswith("moving_var"):
            val = rng.uniform(0.5, 1.5, size=shape)
        elif name.endswith("gamma"):
            val = rng.uniform(0.8, 1.2, size=shape)
        else:
            val = rng.uniform(-0.3, 0.3, size=shape)
        p.set_data(nd.array(val.astype(np.float32)))


def cnn(mx):
    nn = mx.gluon.nn
    net = nn.HybridSequential(prefix="cnn_")
    with net.name_scope():
        net.add(nn.Conv2D(4, 3, in_channels=3), nn.BatchNorm(in_channels=4),
                nn.Activation("relu"), nn.MaxPool2D(), nn.Flatten(),
                nn.Dense(16, in_units=36), nn.Activation("softrelu"), nn.Dropout(0.5),
                nn.Dense(5, in_units=16))
    return net


def _inputs(mx, seed=0, ctx=None):
    rng = np.random.RandomState(seed)
    x = mx.nd.array(rng.uniform(-1, 1, size=(BATCH, 3, 8, 8)).astype(np.float32), ctx=ctx)
    y = mx.nd.array(rng.randint(0, 5, size=(BATCH,)).astype(np.float32), ctx=ctx)
    return x, y


def cnn_layer_dtypes(mx, amp, dn, hybridize):
    """The output dtype of each layer of a small CNN, and of the softmax CE loss."""
    net = cnn(mx)
    net.initialize()
    _fill(mx.nd, net.collect_params(), 1)
    if hybridize:
        for child in net:
            child.hybridize()
    x, y = _inputs(mx)
    res = []
    h = x
    with mx.autograd.record():
        for child in net:
            h = child(h)
            res.append([type(child).__name__, dn(h)])
        loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()(h, y)
    res.append(["SoftmaxCrossEntropyLoss", dn(loss)])
    loss.backward()
    grads = {k.replace(net.prefix, ""): dn(p.grad()) for k, p in net.collect_params().items()
             if p.grad_req != "null"}
    return {"layers": res, "grads": grads, "whole": dn(_whole(mx, net, x, hybridize))}


def _whole(mx, net, x, hybridize):
    if hybridize:
        net.hybridize()
    return net(x)


def lstm_dtypes(mx, amp, dn, hybridize):
    """Output and state dtypes of a fused LSTM layer and of an LSTMCell unrolled."""
    rnn = mx.gluon.rnn
    layer = rnn.LSTM(6, num_layers=1, input_size=5, prefix="lstm_")
    layer.initialize()
    _fill(mx.nd, layer.collect_params(), 2)
    cell = rnn.LSTMCell(6, input_size=5, prefix="cell_")
    cell.initialize()
    _fill(mx.nd, cell.collect_params(), 3)
    if hybridize:
        layer.hybridize()
        cell.hybridize()
    rng = np.random.RandomState(4)
    x = mx.nd.array(rng.uniform(-1, 1, size=(3, 2, 5)).astype(np.float32))  # TNC
    out, states = layer(x, layer.begin_state(batch_size=2))
    couts, cstates = cell.unroll(3, x, layout="TNC", merge_outputs=True)
    step_out, step_states = cell(x[0], cell.begin_state(batch_size=2))
    return {"layer_out": dn(out), "layer_states": [dn(s) for s in states],
            "cell_out": dn(couts), "cell_states": [dn(s) for s in cstates],
            "cell_step_out": dn(step_out), "cell_step_states": [dn(s) for s in step_states]}


def op_dtypes(mx, amp, dn, bf16):
    """Output dtypes of nd operators on float32 and bfloat16 inputs."""
    nd = mx.nd
    rng = np.random.RandomState(5)
    f = nd.array(rng.uniform(0.1, 1, size=(2, 6)).astype(np.float32))
    b = f.astype(bf16)
    w = nd.array(rng.uniform(-1, 1, size=(3, 6)).astype(np.float32))
    img = nd.array(rng.uniform(-1, 1, size=(1, 2, 4, 4)).astype(np.float32))
    imgb = img.astype(bf16)
    kw = nd.array(rng.uniform(-1, 1, size=(2, 2, 3, 3)).astype(np.float32))
    gamma = nd.ones((2,))
    beta = nd.zeros((2,))
    mean = nd.zeros((2,))
    var = nd.ones((2,))
    cases = {
        "FullyConnected(f)": lambda: nd.FullyConnected(f, w, num_hidden=3, no_bias=True),
        "FullyConnected(b)": lambda: nd.FullyConnected(b, w, num_hidden=3, no_bias=True),
        "Convolution(f)": lambda: nd.Convolution(img, kw, kernel=(3, 3), num_filter=2,
                                                 no_bias=True),
        "BatchNorm(b)": lambda: nd.BatchNorm(imgb, gamma, beta, mean, var),
        "BatchNorm(f)": lambda: nd.BatchNorm(img, gamma, beta, mean, var),
        "Pooling(b)": lambda: nd.Pooling(imgb, kernel=(2, 2), pool_type="max"),
        "Pooling(f)": lambda: nd.Pooling(img, kernel=(2, 2), pool_type="avg"),
        "Activation_relu(b)": lambda: nd.Activation(b, act_type="relu"),
        "Activation_sigmoid(b)": lambda: nd.Activation(b, act_type="sigmoid"),
        "Activation_softrelu(b)": lambda: nd.Activation(b, act_type="softrelu"),
        "LeakyReLU_leaky(b)": lambda: nd.LeakyReLU(b, act_type="leaky"),
        "LeakyReLU_elu(b)": lambda: nd.LeakyReLU(b, act_type="elu"),
        "relu(b)": lambda: nd.relu(b),
        "sigmoid(b)": lambda: nd.sigmoid(b),
        "tanh(b)": lambda: nd.tanh(b),
        "exp(b)": lambda: nd.exp(b),
        "log(b)": lambda: nd.log(b),
        "sqrt(b)": lambda: nd.sqrt(b),
        "square(b)": lambda: nd.square(b),
        "abs(b)": lambda: nd.abs(b),
        "clip(b)": lambda: nd.clip(b, 0.2, 0.8),
        "sum(b)": lambda: nd.sum(b),
        "mean(b)": lambda: nd.mean(b, axis=1),
        "max(b)": lambda: nd.max(b, axis=1),
        "softmax(b)": lambda: nd.softmax(b),
        "log_softmax(b)": lambda: nd.log_softmax(b),
        "Flatten(b)": lambda: nd.Flatten(imgb),
        "flatten(b)": lambda: nd.flatten(imgb),
        "reshape(b)": lambda: nd.reshape(b, shape=(3, 4)),
        "transpose(b)": lambda: nd.transpose(b),
        "concat(b,b)": lambda: nd.concat(b, b, dim=0),
        "concat(b,f)": lambda: nd.concat(b, f, dim=0),
        "broadcast_add(b,f)": lambda: nd.broadcast_add(b, f),
        "broadcast_add(b,b)": lambda: nd.broadcast_add(b, b),
        "broadcast_mul(b,b)": lambda: nd.broadcast_mul(b, b),
        "elemwise_add(b,f)": lambda: nd.elemwise_add(b, f),
        "dot(b,f)": lambda: nd.dot(b, f, transpose_b=True),
        "where(b)": lambda: nd.where(f > 0.5, b, b),
        "stack(b,f)": lambda: nd.stack(b, f),
        "add_n(b,b)": lambda: nd.add_n(b, b),
        "Dropout(b)": lambda: nd.Dropout(b, p=0.5),
        "identity(b)": lambda: nd.identity(b),
        "slice_axis(b)": lambda: nd.slice_axis(b, axis=1, begin=0, end=2),
        "expand_dims(b)": lambda: nd.expand_dims(b, axis=0),
        "topk(b)": lambda: nd.topk(b, k=2, ret_typ="value"),
        "b+f": lambda: b + f,
        "b+b": lambda: b + b,
        "b+1": lambda: b + 1,
        "1-b": lambda: 1 - b,
        "b*2": lambda: b * 2,
        "b*b": lambda: b * b,
        "b/2": lambda: b / 2,
        "b**2": lambda: b ** 2,
        "-b": lambda: -b,
        "b[0]": lambda: b[0],
        "b.reshape": lambda: b.reshape((3, 4)),
        "b.exp()": lambda: b.exp(),
        "b.sum()": lambda: b.sum(),
        "b.relu()": lambda: b.relu(),
        "b.T": lambda: b.T,
        "b.flatten()": lambda: imgb.flatten(),
        "b.expand_dims": lambda: b.expand_dims(0),
        "b.transpose()": lambda: b.transpose(),
        "b.astype(f32)": lambda: b.astype("float32"),
        "f.astype(b)": lambda: f.astype(bf16),
        "f+f": lambda: f + f,
        "f*2": lambda: f * 2,
        "exp(f)": lambda: nd.exp(f),
        "tanh(f)": lambda: nd.tanh(f),
        "Embedding(i)": lambda: nd.Embedding(nd.array([0, 2]), w, input_dim=3, output_dim=6),
    }
    res = {}
    for k, fn in cases.items():
        try:
            res[k] = dn(fn())
        except Exception as err:  # noqa: BLE001  (MXNet fails on some bf16 kernels)
            res[k] = "error: " + type(err).__name__
    return res


def _dense_net(mx, ctxs, hybridize):
    nn = mx.gluon.nn
    net = nn.HybridSequential(prefix="ls_")
    with net.name_scope():
        net.add(nn.Dense(8, in_units=6, activation="relu"), nn.Dense(3, in_units=8))
    net.initialize(ctx=ctxs)
    rng = np.random.RandomState(7)
    for name in sorted(net.collect_params().keys()):
        p = net.collect_params()[name]
        p.set_data(mx.nd.array(rng.uniform(-0.5, 0.5, size=p.shape).astype(np.float32)))
    if hybridize:
        net.hybridize()
    return net


def loss_scale_sequence(mx, amp, ctxs, update_on_kvstore, hybridize, overflow_steps,
                        nsteps=9, seq_len=3):
    """Train with amp.scale_loss and inject inf gradients at ``overflow_steps``: the scale each
    step used, the scale after it, and whether the weights moved."""
    net = _dense_net(mx, ctxs, hybridize)
    kv = "device" if len(ctxs) > 1 else None
    tr = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1,
                                                        "momentum": 0.9},
                          kvstore=kv, update_on_kvstore=update_on_kvstore)
    amp.init_trainer(tr)
    tr._amp_loss_scaler._scale_seq_len = seq_len
    rng = np.random.RandomState(8)
    params = [net.collect_params()[k] for k in sorted(net.collect_params().keys())]
    steps = []
    for step in range(nsteps):
        xs = rng.uniform(-1, 1, size=(len(ctxs) * 2, 6)).astype(np.float32)
        ys = rng.randint(0, 3, size=(len(ctxs) * 2,)).astype(np.float32)
        used = tr._amp_loss_scaler.loss_scale
        losses = []
        with mx.autograd.record():
            for i, c in enumerate(ctxs):
                out = net(mx.nd.array(xs[2 * i:2 * i + 2], ctx=c))
                losses.append(mx.gluon.loss.SoftmaxCrossEntropyLoss()(
                    out, mx.nd.array(ys[2 * i:2 * i + 2], ctx=c)))
            with amp.scale_loss(losses, tr) as scaled:
                mx.autograd.backward(scaled)
        if step in overflow_steps:
            g = params[0].grad(ctxs[0])
            g[:] = float("inf")
        before = [p.data(ctxs[0]).asnumpy() for p in params]
        tr.step(len(ctxs) * 2)
        after = [p.data(ctxs[-1]).asnumpy() for p in params]
        moved = any(not np.array_equal(a, b) for a, b in zip(before, after))
        finite = all(np.isfinite(a).all() for a in after)
        steps.append({"used": used, "after": tr._amp_loss_scaler.loss_scale,
                      "moved": bool(moved), "finite": bool(finite)})
    weights = {k.replace(net.prefix, ""): net.collect_params()[k].data(ctxs[0]).asnumpy()
               for k in sorted(net.collect_params().keys())}
    return {"steps": steps, "weights": weights}


def train_steps(mx, amp, dn, hybridize, nsteps=3):
    """A few SGD steps of the CNN under bfloat16 AMP with loss scaling: losses and weights."""
    net = cnn(mx)
    # no dropout randomness: rate 0.5 only in training; run the layers in predict-free mode
    net.initialize()
    _fill(mx.nd, net.collect_params(), 11)
    if hybridize:
        net.hybridize()
    tr = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05,
                                                        "momentum": 0.9})
    amp.init_trainer(tr)
    lossfn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    losses = []
    for step in range(nsteps):
        x, y = _inputs(mx, seed=20 + step)
        with mx.autograd.record(train_mode=False):
            loss = lossfn(net(x), y)
            with amp.scale_loss(loss, tr) as scaled:
                scaled.backward()
        losses.append(float(loss.mean().asscalar()))
        tr.step(BATCH)
    weights = {k.replace(net.prefix, ""): p.data().asnumpy()
               for k, p in net.collect_params().items()}
    dtypes = {k.replace(net.prefix, ""): dn(p.data()) for k, p in net.collect_params().items()}
    return {"losses": np.array(losses, dtype=np.float32), "weights": weights,
            "dtypes": dtypes}


def convert_block(mx, amp, dn, cast_optional_params, excluded):
    """amp.convert_hybrid_block on the CNN (no amp.init): output and parameter dtypes and
    the output values."""
    net = cnn(mx)
    net.initialize()
    _fill(mx.nd, net.collect_params(), 1)
    net.hybridize()
    x, _ = _inputs(mx)
    ref = net(x)
    conv = amp.convert_hybrid_block(net, target_dtype="bfloat16", ctx=mx.cpu(),
                                    cast_optional_params=cast_optional_params,
                                    excluded_sym_names=excluded)
    out = conv(x)
    return {"out_dtype": dn(out), "out": out.astype("float32").asnumpy(),
            "ref": ref.asnumpy(),
            "params": {k: dn(p.data()) for k, p in conv.collect_params().items()},
            "internals": conv._cached_graph[1].get_internals().list_outputs()}


def cnn_symbol_internals(mx):
    """The CNN's forward pass as a Symbol made under AMP (every internal output), the net
    and an input batch."""
    net = cnn(mx)
    net.initialize()
    _fill(mx.nd, net.collect_params(), 1)
    internals = net(mx.sym.var("data")).get_internals()
    x, _ = _inputs(mx)
    return net, internals, x


def fp16_cpu_dtypes(mx, amp, dn):
    """float16 AMP on the CPU (amp.init('float16') called): only float32 and bfloat16 inputs
    are cast there, so float16 results pass float32-list operators unchanged."""
    nd = mx.nd
    net = mx.gluon.nn.Dense(3, in_units=4)
    net.initialize()
    x = nd.ones((2, 4))
    with mx.autograd.record():
        y = net(x)
        z = nd.exp(y)
    z.backward()
    return {"dense": dn(y), "exp(dense)": dn(z), "exp(f32)": dn(nd.exp(x)),
            "weight_grad": dn(net.weight.grad()),
            "softrelu(dense)": dn(nd.Activation(y, act_type="softrelu")),
            "f32+dense": dn(y.astype("float32") + y), "sum(dense)": dn(nd.sum(y)),
            "Flatten(dense)": dn(nd.Flatten(y)), "dense*2": dn(y * 2)}
