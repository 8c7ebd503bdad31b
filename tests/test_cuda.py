"""The training path on a GPU: mx.gpu(i) is cuda:i, and a GPU run gives the CPU's numbers.

Each test compares a GPU run with the same run on the CPU (or an un-hybridized GPU run) from
the same initial values. CI has no GPU: the whole file skips there; it runs wherever
``torch.cuda.is_available()`` (tools/gpu_check.sh runs it on a lent GPU machine).
"""
import warnings

import numpy as np
import pytest
import torch

import neogluon as mx
from neogluon import autograd, gluon, nd
from neogluon.base import MXNetError
from neogluon.gluon import _cudagraph, nn

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

GPU = mx.gpu(0) if torch.cuda.is_available() else None


def _mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(16, activation="relu"), nn.Dense(16, activation="tanh"), nn.Dense(4))
    return net


def _conv_bn():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
            nn.MaxPool2D(2, 2), nn.Conv2D(8, 3, padding=1, use_bias=False), nn.BatchNorm(),
            nn.Activation("relu"), nn.GlobalAvgPool2D(), nn.Dense(5))
    return net


def _same_nets(make, ctxs, tmp_path, shape):
    """One network per context, all with the same initial values."""
    mx.random.seed(3)
    src = make()
    src.initialize(mx.init.Xavier(), ctx=mx.cpu())
    src(nd.zeros(shape))
    path = str(tmp_path / "init.params")
    src.save_parameters(path)
    nets = []
    for c in ctxs:
        n = make()
        n.load_parameters(path, ctx=c)
        nets.append(n)
    return nets


def _data(shape, classes, seed=0):
    rng = np.random.RandomState(seed)
    return (rng.uniform(-1, 1, size=shape).astype(np.float32),
            rng.randint(0, classes, size=(shape[0],)).astype(np.float32))


def _train(net, ctx, opt, opt_args, x, y, steps=4, **trainer_kw):
    trainer = gluon.Trainer(net.collect_params(), opt, dict(opt_args), **trainer_kw)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    xs, ys = nd.array(x, ctx=ctx), nd.array(y, ctx=ctx)
    losses = []
    for _ in range(steps):
        with autograd.record():
            loss = loss_fn(net(xs), ys)
        loss.backward()
        trainer.step(x.shape[0])
        losses.append(float(loss.mean().asscalar()))
    return losses, trainer


def _params(net, ctx=None):
    """Parameter values by structural name ('0.weight'), comparable across networks."""
    return {k: v.data(ctx).asnumpy() for k, v in net._collect_params_with_prefix().items()}


def _assert_same(a, b, rtol=1e-4, atol=1e-5):
    pa, pb = _params(a), _params(b)
    assert list(pa) == list(pb)
    for k in pa:
        np.testing.assert_allclose(pa[k], pb[k], rtol=rtol, atol=atol, err_msg=k)


def test_gpu_context_is_cuda():
    a = nd.array([1.0, 2.0], ctx=GPU)
    assert a.context == mx.gpu(0)
    assert a._t.device == torch.device("cuda", 0)
    assert mx.num_gpus() == torch.cuda.device_count()
    b = a.as_in_context(mx.cpu())
    assert b.context == mx.cpu() and b._t.device.type == "cpu"
    np.testing.assert_array_equal((a * 2).asnumpy(), [2.0, 4.0])
    with GPU:
        c = nd.ones((2, 3))
    assert c.context == GPU
    nd.waitall()


@pytest.mark.parametrize("opt,args,kw", [
    ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3}, {}),
    ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "clip_gradient": 0.05}, {}),
    ("nag", {"learning_rate": 0.1, "momentum": 0.9}, {}),
    ("adam", {"learning_rate": 0.01, "wd": 1e-3}, {}),
    ("adamw", {"learning_rate": 0.01, "wd": 1e-2}, {}),
    ("rmsprop", {"learning_rate": 0.01, "centered": True}, {}),
    ("adagrad", {"learning_rate": 0.1}, {}),
    ("lamb", {"learning_rate": 0.01}, {}),
    ("sgd", {"learning_rate": 0.1, "momentum": 0.9}, {"update_on_kvstore": False}),
    ("adam", {"learning_rate": 0.01}, {"kvstore": "device"}),
])
def test_training_on_gpu_matches_cpu(tmp_path, opt, args, kw):
    x, y = _data((32, 10), 4)
    cpu_net, gpu_net = _same_nets(_mlp, [mx.cpu(), GPU], tmp_path, (1, 10))
    lc, _ = _train(cpu_net, mx.cpu(), opt, args, x, y, **kw)
    lg, _ = _train(gpu_net, GPU, opt, args, x, y, **kw)
    np.testing.assert_allclose(lg, lc, rtol=1e-4)
    _assert_same(gpu_net, cpu_net)


def test_data_parallel_gpu_and_cpu(tmp_path):
    """Two contexts, one batch split over them: the same as one context with the whole batch."""
    x, y = _data((32, 10), 4)
    one, two = _same_nets(_mlp, [mx.cpu(), [GPU, mx.cpu()]], tmp_path, (1, 10))
    _train(one, mx.cpu(), "sgd", {"learning_rate": 0.1, "momentum": 0.9}, x, y)
    trainer = gluon.Trainer(two.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for _ in range(4):
        parts_x = gluon.utils.split_and_load(nd.array(x), [GPU, mx.cpu()])
        parts_y = gluon.utils.split_and_load(nd.array(y), [GPU, mx.cpu()])
        with autograd.record():
            losses = [loss_fn(two(a), b) for a, b in zip(parts_x, parts_y)]
        autograd.backward(losses)
        trainer.step(x.shape[0])
    for k, v in two.collect_params().items():
        np.testing.assert_allclose(v.data(GPU).asnumpy(), v.data(mx.cpu()).asnumpy(),
                                   rtol=1e-6, atol=1e-7, err_msg=k)
    pa = _params(two, mx.cpu())
    for k, v in _params(one).items():
        np.testing.assert_allclose(pa[k], v, rtol=1e-4, atol=1e-5, err_msg=k)


def test_save_on_gpu_load_on_cpu_and_back(tmp_path):
    (net,) = _same_nets(_conv_bn, [GPU], tmp_path, (1, 3, 8, 8))
    x, y = _data((4, 3, 8, 8), 5)
    _train(net, GPU, "sgd", {"learning_rate": 0.1}, x, y, steps=1)
    path = str(tmp_path / "gpu.params")
    net.save_parameters(path)
    back = _conv_bn()
    back.load_parameters(path, ctx=mx.cpu())
    _assert_same(back, net, rtol=0, atol=0)
    again = _conv_bn()
    again.load_parameters(path, ctx=GPU)
    _assert_same(again, net, rtol=0, atol=0)
    arrays = {"w": nd.arange(6, ctx=GPU).reshape((2, 3))}
    nd.save(str(tmp_path / "a.nd"), arrays)
    loaded = nd.load(str(tmp_path / "a.nd"))
    np.testing.assert_array_equal(loaded["w"].asnumpy(), arrays["w"].asnumpy())


def test_sparse_embedding_on_gpu_matches_cpu(tmp_path):
    def make():
        net = nn.HybridSequential()
        net.add(nn.Embedding(50, 8, sparse_grad=True), nn.Flatten(), nn.Dense(4))
        return net
    rng = np.random.RandomState(1)
    x = rng.randint(0, 50, size=(16, 3)).astype(np.float32)
    y = rng.randint(0, 4, size=(16,)).astype(np.float32)
    cpu_net, gpu_net = _same_nets(make, [mx.cpu(), GPU], tmp_path, (1, 3))
    for net, ctx in ((cpu_net, mx.cpu()), (gpu_net, GPU)):
        _train(net, ctx, "sgd", {"learning_rate": 0.1, "momentum": 0.9, "lazy_update": True},
               x, y)
    _assert_same(gpu_net, cpu_net)


def test_amp_float16_training_on_gpu(tmp_path):
    x, y = _data((32, 10), 4)
    ref, half = _same_nets(_mlp, [GPU, GPU], tmp_path, (1, 10))
    half.cast("float16")
    lr, _ = _train(ref, GPU, "sgd", {"learning_rate": 0.1, "momentum": 0.9}, x, y, steps=6)
    trainer = gluon.Trainer(half.collect_params(), "sgd",
                            {"learning_rate": 0.1, "momentum": 0.9, "multi_precision": True})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    xs, ys = nd.array(x, ctx=GPU, dtype="float16"), nd.array(y, ctx=GPU, dtype="float16")
    lh = []
    for _ in range(6):
        with autograd.record():
            loss = loss_fn(half(xs), ys)
        loss.backward()
        trainer.step(x.shape[0])
        lh.append(float(loss.astype("float32").mean().asscalar()))
    assert half.collect_params()[next(iter(half.collect_params()))].data().dtype == np.float16
    np.testing.assert_allclose(lh, lr, rtol=2e-2, atol=2e-3)


def _graph_variants(net):
    out = []
    for g in net._graphs.values():
        gc = g.__dict__.get("_ng_compile")
        if gc is not None:
            out += list(gc.variants.values())
    return out


def _hybrid_pair(tmp_path, **hyb):
    eager, hyb_net = _same_nets(_conv_bn, [GPU, GPU], tmp_path, (1, 3, 8, 8))
    hyb_net.hybridize(static_alloc=True, static_shape=True, **hyb)
    return eager, hyb_net


def _bn_stats(net):
    return {k: v for k, v in _params(net).items() if "running" in k or "moving" in k}


@pytest.mark.parametrize("compile_mode", ["off", "sync"])
def test_static_hybridize_uses_cuda_graphs_with_the_same_numbers(tmp_path, compile_mode):
    x, y = _data((8, 3, 8, 8), 5)
    eager, hyb = _hybrid_pair(tmp_path, compile=compile_mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        le, _ = _train(eager, GPU, "sgd", {"learning_rate": 0.1, "momentum": 0.9}, x, y, steps=5)
        lh, _ = _train(hyb, GPU, "sgd", {"learning_rate": 0.1, "momentum": 0.9}, x, y, steps=5)
    np.testing.assert_allclose(lh, le, rtol=1e-4)
    _assert_same(hyb, eager, rtol=1e-4, atol=1e-5)
    be, bh = _bn_stats(eager), _bn_stats(hyb)
    for (k, a), b in zip(be.items(), bh.values()):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-6, err_msg=k)
    graphs = [v.graphed for v in _graph_variants(hyb)]
    assert any(isinstance(g, _cudagraph.Graphed) for g in graphs), graphs
    # inference through the graph: same as eager, and an earlier output is not overwritten
    a = nd.array(x, ctx=GPU)
    b = nd.array(x[::-1].copy(), ctx=GPU)
    oa = hyb(a)
    ob = hyb(b)
    np.testing.assert_allclose(oa.asnumpy(), eager(a).asnumpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ob.asnumpy(), eager(b).asnumpy(), rtol=1e-4, atol=1e-5)


def test_cuda_graph_two_calls_before_one_backward(tmp_path):
    x, y = _data((8, 3, 8, 8), 5)
    x2, _ = _data((8, 3, 8, 8), 5, seed=1)
    eager, hyb = _hybrid_pair(tmp_path)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    grads = []
    for net in (eager, hyb):
        a, b, lab = nd.array(x, ctx=GPU), nd.array(x2, ctx=GPU), nd.array(y, ctx=GPU)
        for _ in range(3):      # warm: the graph is recorded on the second call
            with autograd.record():
                loss = loss_fn(net(a), lab) + 0.5 * loss_fn(net(b), lab)
            loss.backward()
        grads.append({k: v.grad().asnumpy() for k, v in net._collect_params_with_prefix().items()
                      if v.grad_req != "null"})
    for k, g in grads[0].items():
        np.testing.assert_allclose(grads[1][k], g, rtol=1e-4, atol=1e-6, err_msg=k)


def test_cuda_graph_backward_after_a_newer_call_raises(tmp_path):
    x, y = _data((8, 3, 8, 8), 5)
    _, hyb = _hybrid_pair(tmp_path)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    a, lab = nd.array(x, ctx=GPU), nd.array(y, ctx=GPU)
    for _ in range(2):
        with autograd.record():
            loss = loss_fn(hyb(a), lab)
        loss.backward()
    with autograd.record():
        old = loss_fn(hyb(a), lab)
    old.backward(retain_graph=True)
    with autograd.record():
        new = loss_fn(hyb(a), lab)
    new.backward()
    with pytest.raises(MXNetError, match=f"'{hyb.name}'.*CUDA-graphed"):
        old.backward()


def test_cuda_graphs_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv("NEOGLUON_CUDA_GRAPHS", "0")
    x, y = _data((8, 3, 8, 8), 5)
    _, hyb = _hybrid_pair(tmp_path)
    _train(hyb, GPU, "sgd", {"learning_rate": 0.1}, x, y, steps=3)
    assert not any(isinstance(v.graphed, _cudagraph.Graphed) for v in _graph_variants(hyb))


def test_cuda_graph_writes_parameter_gradients_and_moving_stats_in_its_backward(tmp_path):
    """The backward graph writes the parameters' gradients into buffers of their own (kept
    by the Parameters, overwritten by each backward, untouched by a forward replay) and
    updates BatchNorm's moving statistics, once per backward, as the eager hooks do; an
    input's gradient is a copy that later steps do not change."""
    x, y = _data((8, 3, 8, 8), 5)
    x2, _ = _data((8, 3, 8, 8), 5, seed=1)
    eager, hyb = _hybrid_pair(tmp_path)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    seen = {}
    for name, net in (("eager", eager), ("graphed", hyb)):
        a, b, lab = nd.array(x, ctx=GPU), nd.array(x2, ctx=GPU), nd.array(y, ctx=GPU)
        a.attach_grad()
        b.attach_grad()
        for _ in range(2):          # the graph is recorded on the second call
            with autograd.record():
                loss = loss_fn(net(a), lab)
            loss.backward()
        stats0 = _bn_stats(net)
        grads = {k: v.grad().asnumpy() for k, v in net._collect_params_with_prefix().items()
                 if v.grad_req != "null"}
        ga = a.grad.asnumpy()
        with autograd.record():      # a recorded forward without backward changes nothing
            loss_fn(net(b), lab)
        for k, v in _bn_stats(net).items():
            np.testing.assert_array_equal(v, stats0[k], err_msg=f"{name} {k}")
        for k, v in net._collect_params_with_prefix().items():
            if v.grad_req != "null":
                np.testing.assert_array_equal(v.grad().asnumpy(), grads[k],
                                              err_msg=f"{name} {k}")
        with autograd.record():      # another step on other data: new gradients
            loss = loss_fn(net(b), lab)
        loss.backward()
        np.testing.assert_array_equal(a.grad.asnumpy(), ga, err_msg=name)
        seen[name] = (stats0, grads, _bn_stats(net),
                      {k: v.grad().asnumpy() for k, v in net._collect_params_with_prefix().items()
                       if v.grad_req != "null"}, ga, b.grad.asnumpy())
    variants = _graph_variants(hyb)
    assert any(isinstance(v.graphed, _cudagraph.Graphed) and v.graphed.moving_in_graph
               for v in variants)
    for e, g in zip(seen["eager"], seen["graphed"]):
        for k in e if isinstance(e, dict) else [None]:
            ev, gv = (e[k], g[k]) if k is not None else (e, g)
            np.testing.assert_allclose(gv, ev, rtol=1e-4, atol=1e-6, err_msg=str(k))


def test_model_zoo_resnet_hybridized_on_gpu_matches_eager(tmp_path, monkeypatch):
    """ResNet-18 (BatchNorm everywhere): eager, replayed and CUDA-graphed training agree.
    TF32 is off here: with it, cuDNN may pick other algorithms while a graph records, and
    their TF32 roundings differ by ~1e-3, which a few training steps amplify."""
    from neogluon.gluon.model_zoo import vision
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)

    def make():
        return vision.resnet18_v1(classes=10)
    x, y = _data((8, 3, 32, 32), 10)
    eager, replay, graphed = _same_nets(make, [GPU, GPU, GPU], tmp_path, (1, 3, 32, 32))
    monkeypatch.setenv("NEOGLUON_CUDA_GRAPHS", "0")
    replay.hybridize(static_alloc=True, static_shape=True)
    monkeypatch.setenv("NEOGLUON_CUDA_GRAPHS", "1")
    graphed.hybridize(static_alloc=True, static_shape=True)
    opt = {"learning_rate": 0.01}
    losses = [_train(n, GPU, "sgd", opt, x, y, steps=4)[0] for n in (eager, replay, graphed)]
    assert any(isinstance(v.graphed, _cudagraph.Graphed) for v in _graph_variants(graphed))
    assert not _graph_variants(replay)
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-4, err_msg=str(losses))
    np.testing.assert_allclose(losses[2], losses[0], rtol=1e-4, err_msg=str(losses))
    _assert_same(replay, eager, rtol=1e-3, atol=1e-5)
    _assert_same(graphed, eager, rtol=1e-3, atol=1e-5)


def test_random_and_dropout_on_gpu():
    mx.random.seed(7)
    a = nd.random.uniform(shape=(1000,), ctx=GPU).asnumpy()
    mx.random.seed(7)
    b = nd.random.uniform(shape=(1000,), ctx=GPU).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert 0.45 < a.mean() < 0.55
    x = nd.ones((1000,), ctx=GPU)
    with autograd.train_mode():
        d = nd.Dropout(x, p=0.5).asnumpy()
    assert set(np.unique(d)) <= {0.0, 2.0} and 0.4 < (d > 0).mean() < 0.6


def test_graphed_blocks_next_to_torch_cudagraphs(tmp_path):
    """neogluon's CUDA graphs and torch.compile(mode='reduce-overhead') (CUDA graph trees)
    in one process, steps interleaved: one such benchmark run once stopped on an illegal
    memory access (bench/RESULTS.md, CUDA reading). The graphed net must keep training in
    lockstep with an eager copy and the device must stay healthy."""
    x, y = _data((16, 3, 8, 8), 5)
    eager, hyb = _hybrid_pair(tmp_path)
    tmodel = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                                 torch.nn.Flatten(), torch.nn.Linear(8 * 64, 5)).cuda()
    tfwd = torch.compile(tmodel, mode="reduce-overhead")
    topt = torch.optim.SGD(tmodel.parameters(), lr=0.01, momentum=0.9)
    tx = torch.rand(16, 3, 8, 8, device="cuda")
    ty = torch.randint(0, 5, (16,), device="cuda")
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainers = [gluon.Trainer(n.collect_params(), "sgd", {"learning_rate": 0.05,
                                                          "momentum": 0.9})
                for n in (eager, hyb)]
    xs, ys = nd.array(x, ctx=GPU), nd.array(y, ctx=GPU)
    for _ in range(30):
        for net, trainer in zip((eager, hyb), trainers):
            with autograd.record():
                loss = loss_fn(net(xs), ys)
            loss.backward()
            trainer.step(16)
        topt.zero_grad()
        torch.nn.functional.cross_entropy(tfwd(tx), ty).backward()
        topt.step()
    torch.cuda.synchronize()
    assert any(isinstance(v.graphed, _cudagraph.Graphed) for v in _graph_variants(hyb))
    _assert_same(hyb, eager, rtol=1e-3, atol=1e-5)


def test_cuda_graph_refuses_create_graph_clearly(tmp_path):
    x, _ = _data((8, 3, 8, 8), 5)
    _, hyb = _hybrid_pair(tmp_path)
    a = nd.array(x, ctx=GPU)
    a.attach_grad()
    for _ in range(2):
        with autograd.record():
            out = hyb(a)
    assert any(isinstance(v.graphed, _cudagraph.Graphed) for v in _graph_variants(hyb))
    with pytest.raises(Exception, match="once_differentiable|differentiate"):
        autograd.grad(out.sum(), [a], create_graph=True)[0].sum().backward()


def test_cuda_graph_of_a_block_with_an_output_that_does_not_need_gradients():
    class Two(gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.dense = nn.Dense(3)

        def hybrid_forward(self, F, x):
            y = self.dense(x)
            return y, F.zeros_like(x) + 1.0

    net = Two()
    net.initialize(ctx=GPU)
    net.hybridize(static_alloc=True, static_shape=True)
    x = nd.ones((4, 5), ctx=GPU)
    for _ in range(3):
        with autograd.record():
            y, c = net(x)
            loss = (y * c[:, :3]).sum()
        loss.backward()
    assert any(isinstance(v.graphed, _cudagraph.Graphed) for v in _graph_variants(net))
    np.testing.assert_allclose(net.dense.bias.grad().asnumpy(), np.full(3, 4.0))


# ------------------------------------------------------------------ executors and Module
def _conv_bn_symbol():
    data = mx.sym.var("data")
    net = mx.sym.Convolution(data, num_filter=8, kernel=(3, 3), pad=(1, 1), no_bias=True,
                             name="conv")
    net = mx.sym.BatchNorm(net, fix_gamma=False, name="bn")
    net = mx.sym.Activation(net, act_type="relu", name="relu")
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool")
    net = mx.sym.FullyConnected(net, num_hidden=5, name="fc")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def _bound_run(ctx, steps=3):
    """Three forward/backward steps of a bound conv/BN net: outputs, gradients, aux states."""
    sym = _conv_bn_symbol()
    exe = sym.simple_bind(ctx, data=(4, 3, 8, 8))
    rng = np.random.RandomState(0)
    for n, a in exe.arg_dict.items():
        a[:] = rng.uniform(-0.5, 0.5, a.shape) if n != "softmax_label" else rng.randint(0, 5, 4)
    exe.aux_dict["bn_moving_var"][:] = 1
    for _ in range(steps):
        exe.forward(is_train=True)
        exe.backward()
    res = {"out": exe.outputs[0].asnumpy()}
    res.update({f"g_{k}": v.asnumpy() for k, v in exe.grad_dict.items()})
    res.update({f"a_{k}": v.asnumpy() for k, v in exe.aux_dict.items()})
    return res


def test_executor_on_gpu_matches_cpu():
    """A bound symbol on a GPU runs as CUDA graphs (static by nature) and gives the CPU's
    outputs, gradients and BatchNorm statistics."""
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    cpu, gpu = _bound_run(mx.cpu()), _bound_run(GPU)
    for k in cpu:
        np.testing.assert_allclose(gpu[k], cpu[k], rtol=1e-4, atol=1e-5, err_msg=k)


def test_module_fit_on_gpu_matches_cpu():
    sym = _conv_bn_symbol()
    rng = np.random.RandomState(1)
    x = rng.uniform(-1, 1, (32, 3, 8, 8)).astype(np.float32)
    y = rng.randint(0, 5, 32).astype(np.float32)
    init = mx.mod.Module(sym)
    init.bind([("data", (8, 3, 8, 8))], [("softmax_label", (8,))])
    init.init_params(mx.init.Xavier())
    arg0, aux0 = init.get_params()     # the same starting values on both devices
    res = []
    for ctx in (mx.cpu(), GPU):
        it = mx.io.NDArrayIter(x, y, batch_size=8)
        mod = mx.mod.Module(sym, context=ctx)
        mod.fit(it, num_epoch=2, optimizer="sgd",
                optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
                arg_params={k: v.copy() for k, v in arg0.items()},
                aux_params={k: v.copy() for k, v in aux0.items()})
        arg, aux = mod.get_params()
        res.append({k: v.asnumpy() for k, v in list(arg.items()) + list(aux.items())})
    for k in res[0]:
        np.testing.assert_allclose(res[1][k], res[0][k], rtol=1e-3, atol=1e-4, err_msg=k)
