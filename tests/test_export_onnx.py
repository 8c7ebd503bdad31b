"""neogluon.export (torch module, torch.export, ONNX) and mx.onnx.export_model.

Outputs are checked against MXNet 1.9.1's own numbers where a fixture has them (the model zoo
with fixed weights, tests/fixtures/gluon/model_zoo_out.npz and model_zoo/outputs.npz; an
MXNet-exported graph, tests/fixtures/symbol/small_cnn-*), and against neogluon's forward pass
(rtol 1e-4, atol 1e-5) everywhere. ONNX files run in onnxruntime.
"""
import os
import stat

import numpy as np
import pytest
import torch

import neogluon as mx
from neogluon import autograd, export, gluon, nd
from neogluon.gluon import nn
from neogluon.gluon.model_zoo import vision

from gluon_fixture_utils import det, fixture_path, reset_names

HERE = os.path.dirname(os.path.abspath(__file__))
SYMFIX = os.path.join(HERE, "fixtures", "symbol")
RTOL, ATOL = 1e-4, 1e-5


def _ort():
    pytest.importorskip("onnx")
    pytest.importorskip("onnxscript")
    return pytest.importorskip("onnxruntime")


def _run_onnx(path, feeds):
    ort = _ort()
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess, sess.run(None, feeds)


def _predict(net, *xs):
    with autograd.predict_mode():
        out = net(*xs)
    if isinstance(out, (list, tuple)):
        return [o.asnumpy() for o in out]
    return out.asnumpy()


def _fixed_weights(net):
    # The values tools/gen_gluon_fixtures.py / gen_model_zoo_fixtures.py give MXNet's nets.
    for j, (k, v) in enumerate(net.collect_params().items()):
        val = det(v.shape, j) * (1.0 / np.sqrt(max(1, np.prod(v.shape[1:]))))
        if "running_var" in k or "gamma" in k:
            val = np.abs(val) + 0.5
        v.set_data(nd.array(val))


def _zoo(name):
    reset_names()
    net = getattr(vision, name)(classes=10)
    net.initialize()
    if name == "resnet18_v1":
        want = np.load(fixture_path("model_zoo_out.npz"))[name]
        side = 32
    else:
        want = np.load(os.path.join(HERE, "fixtures", "model_zoo", "outputs.npz"))[name]
        side = 64
    x = nd.array(det((1, 3, side, side), 1))
    with autograd.predict_mode():
        net(x)
    _fixed_weights(net)
    return net, x, want


# ---------------------------------------------------------------------------- model zoo
@pytest.mark.parametrize("name,hybridize", [("resnet18_v1", True), ("mobilenet_v2_0_25", False)])
def test_model_zoo_onnx_and_torch_export_match(name, hybridize, tmp_path):
    net, x, want = _zoo(name)
    if hybridize:
        net.hybridize()
    ref = _predict(net, x)
    np.testing.assert_allclose(ref, want, rtol=2e-3, atol=2e-4)  # neogluon == MXNet
    # ONNX, with a batch of 1 given and a batch of 3 run
    path = tmp_path / f"{name}.onnx"
    assert export.to_onnx(net, str(path), x) == str(path)
    x3 = nd.array(np.concatenate([x.asnumpy(), x.asnumpy() * 0.5, -x.asnumpy()]))
    ref3 = _predict(net, x3)
    sess, (got,) = _run_onnx(path, {"data": x3.asnumpy()})
    assert [i.name for i in sess.get_inputs()] == ["data"]
    assert [o.name for o in sess.get_outputs()] == ["output"]
    assert sess.get_inputs()[0].shape == ["batch", 3, x.shape[2], x.shape[3]]
    assert sess.get_outputs()[0].shape == ["batch", 10]
    np.testing.assert_allclose(got, ref3, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(got[:1], want, rtol=2e-3, atol=2e-4)
    # torch.export: a fixed-shape program
    prog = export.to_torch_export(net, x)
    assert isinstance(prog, torch.export.ExportedProgram)
    np.testing.assert_allclose(prog.module()(x.as_in_context(mx.cpu())._t).numpy(), ref,
                               rtol=RTOL, atol=ATOL)
    # the block is left as it was (hybridization state, same outputs)
    assert net._active == hybridize
    np.testing.assert_array_equal(_predict(net, x), ref)


# ---------------------------------------------------------------------------- own nets
class ConvNet(gluon.HybridBlock):
    """Conv + BatchNorm + Dropout + max/avg pooling + concat, two outputs."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.conv = nn.Conv2D(6, 3, padding=1)
            self.bn = nn.BatchNorm()
            self.drop = nn.Dropout(0.5)
            self.mpool = nn.MaxPool2D(2)
            self.apool = nn.AvgPool2D(2)
            self.gpool = nn.GlobalAvgPool2D()
            self.fc = nn.Dense(4)

    def hybrid_forward(self, F, x):
        h = self.drop(F.relu(self.bn(self.conv(x))))
        h = F.concat(self.mpool(h), self.apool(h), dim=1)
        return self.fc(h), self.gpool(h).flatten()


def _convnet():
    reset_names()
    net = ConvNet()
    net.initialize(mx.init.Xavier())
    x = nd.array(det((2, 3, 8, 8), 3))
    net(x)
    # running statistics far from (0, 1), so that inference mode shows in the numbers
    net.bn.running_mean.set_data(nd.array(det((6,), 5)))
    net.bn.running_var.set_data(nd.array(np.abs(det((6,), 6)) + 0.3))
    return net, x


@pytest.mark.parametrize("hybridize", [False, True])
def test_convnet_batchnorm_dropout_inference(hybridize, tmp_path):
    net, x = _convnet()
    if hybridize:
        net.hybridize()
    ref = _predict(net, x)
    with autograd.record(train_mode=True):
        train_out = net(x)[0].asnumpy()
    net.bn.running_mean.set_data(nd.array(det((6,), 5)))  # the training pass moved them
    net.bn.running_var.set_data(nd.array(np.abs(det((6,), 6)) + 0.3))
    assert not np.allclose(train_out, ref[0], rtol=1e-3)
    # torch module: inference numbers, twice the same (Dropout off)
    mod = export.to_torch_module(net)
    a, b = mod(x._t), mod(x._t)
    assert isinstance(a, tuple) and len(a) == 2
    np.testing.assert_allclose(a[0].numpy(), ref[0], rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(a[1].numpy(), b[1].numpy())
    # torch.export with a variable batch
    prog = export.to_torch_export(net, x, dynamic_batch=True)
    x5 = nd.array(det((5, 3, 8, 8), 9))
    ref5 = _predict(net, x5)
    out5 = prog.module()(x5._t)
    for o, r in zip(out5, ref5):
        np.testing.assert_allclose(o.numpy(), r, rtol=RTOL, atol=ATOL)
    # ONNX: both outputs, batch 5 through a file made with batch 2
    path = tmp_path / "convnet.onnx"
    export.to_onnx(net, str(path), x)
    sess, got = _run_onnx(path, {"data": x5.asnumpy()})
    assert [o.name for o in sess.get_outputs()] == ["output0", "output1"]
    for g, r in zip(got, ref5):
        np.testing.assert_allclose(g, r, rtol=RTOL, atol=ATOL)
    # running statistics untouched by the exports
    np.testing.assert_array_equal(net.bn.running_mean.data().asnumpy(), det((6,), 5))


def test_mlp_onnx_fixed_batch_and_opset(tmp_path):
    reset_names()
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(16, activation="tanh"), nn.Dropout(0.3), nn.Dense(8, activation="relu"),
                nn.Dense(3))
    net.initialize(mx.init.Xavier())
    x = nd.array(det((4, 5), 2))
    ref = _predict(net, x)
    path = tmp_path / "mlp.onnx"
    export.to_onnx(net, str(path), x, opset=18, dynamic_batch=False)
    import onnx
    model = onnx.load(str(path))
    assert any(o.domain in ("", "ai.onnx") and o.version == 18 for o in model.opset_import)
    sess, (got,) = _run_onnx(path, {"data": x.asnumpy()})
    assert sess.get_inputs()[0].shape == [4, 5]
    np.testing.assert_allclose(got, ref, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("opset", [11, 13, 17])
def test_old_opsets_through_torchscript_exporter(opset, tmp_path):
    import onnx
    net, x = _convnet()
    net.hybridize()
    path = tmp_path / "convnet.onnx"
    export.to_onnx(net, str(path), x, opset=opset)
    model = onnx.load(str(path))
    assert [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")] == [opset]
    x5 = nd.array(det((5, 3, 8, 8), 9))
    sess, got = _run_onnx(path, {"data": x5.asnumpy()})
    assert [i.shape for i in sess.get_inputs()] == [["batch", 3, 8, 8]]
    assert [o.name for o in sess.get_outputs()] == ["output0", "output1"]
    for g, r in zip(got, _predict(net, x5)):
        np.testing.assert_allclose(g, r, rtol=RTOL, atol=ATOL)


def test_old_opset_file_is_checked_against_the_block(tmp_path):
    _ort()
    net, x = _convnet()
    path = tmp_path / "fixed.onnx"
    export.to_onnx(net, str(path), x, opset=13, dynamic_batch=False)
    module = export.to_torch_module(net)
    # the check the TorchScript path runs: a file whose batch is fixed fails it for batch 3
    export._check_onnx(path.read_bytes(), module, [x._t], ["data"], False, 13, net, "t")
    with pytest.raises(mx.MXNetError, match=r"opset-13 ONNX file of ConvNet .* is wrong for "
                                            r"inputs of shapes \[\(3, 3, 8, 8\)\]"):
        export._check_onnx(path.read_bytes(), module, [x._t], ["data"], True, 13, net, "t")


# ---------------------------------------------------------------------------- MXNet graphs
def _small_cnn():
    net = gluon.SymbolBlock.imports(os.path.join(SYMFIX, "small_cnn-symbol.json"), ["data"],
                                    os.path.join(SYMFIX, "small_cnn-0002.params"))
    x = np.load(os.path.join(SYMFIX, "small_cnn-input.npy"))
    want = np.load(os.path.join(SYMFIX, "small_cnn-output.npy"))  # MXNet 1.9.1's output
    return net, x, want


@pytest.mark.parametrize("hybridize", [False, True])
def test_imported_mxnet_graph_exports(hybridize, tmp_path):
    net, x, want = _small_cnn()
    if hybridize:
        net.hybridize()
    np.testing.assert_allclose(_predict(net, nd.array(x)), want, rtol=1e-5, atol=1e-6)
    mod = export.to_torch_module(net)
    names = dict(mod.param_names)
    assert set(names.values()) == set(net.collect_params().keys())
    buffers = {n for n, _ in mod.named_buffers()}
    assert {names[b] for b in buffers} == {k for k in names.values()
                                          if "running" in k or "moving" in k}
    assert all(isinstance(p, torch.nn.Parameter) for p in mod.parameters())
    np.testing.assert_allclose(mod(torch.from_numpy(x)).numpy(), want, rtol=RTOL, atol=ATOL)
    prog = export.to_torch_export(net, x, dynamic_batch=True)
    xx = np.concatenate([x, x[::-1]])
    np.testing.assert_allclose(prog.module()(torch.from_numpy(xx)).numpy(),
                               np.concatenate([want, want[::-1]]), rtol=RTOL, atol=ATOL)
    path = tmp_path / "small_cnn.onnx"
    export.to_onnx(net, str(path), nd.array(x))
    _, (got,) = _run_onnx(path, {"data": xx})
    np.testing.assert_allclose(got, np.concatenate([want, want[::-1]]), rtol=RTOL, atol=ATOL)


def test_imported_mxnet_rnn_graph_exports_with_fixed_shape(tmp_path):
    # tools/gen_rnn_export_fixtures.py: MXNet 1.9.1's export of a 2-layer bidirectional LSTM,
    # a GRU and a Dense (fused RNN op, _rnn_param_concat, zeros begin states)
    here = os.path.join(HERE, "fixtures", "rnn_export")
    io = np.load(os.path.join(here, "io.npz"))
    net = gluon.SymbolBlock.imports(os.path.join(here, "net-symbol.json"), ["data"],
                                    os.path.join(here, "net-0000.params"))
    # (at this commit nd's RNN operators are registered when gluon.rnn is imported)
    import neogluon.gluon.rnn  # noqa: F401
    ref = _predict(net, nd.array(io["x"]))
    np.testing.assert_allclose(ref, io["y"], rtol=1e-5, atol=1e-6)
    prog = export.to_torch_export(net, io["x"])
    np.testing.assert_allclose(prog.module()(torch.from_numpy(io["x"])).numpy(), io["y"],
                               rtol=RTOL, atol=ATOL)
    path = tmp_path / "rnn.onnx"
    export.to_onnx(net, str(path), io["x"], dynamic_batch=False)
    _, (got,) = _run_onnx(path, {"data": io["x"]})
    np.testing.assert_allclose(got, io["y"], rtol=RTOL, atol=ATOL)


def _checkpoint():
    sym = mx.sym.load(os.path.join(SYMFIX, "small_cnn-symbol.json"))
    saved = nd.load(os.path.join(SYMFIX, "small_cnn-0002.params"))
    arg = {k[4:]: v for k, v in saved.items() if k.startswith("arg:")}
    aux = {k[4:]: v for k, v in saved.items() if k.startswith("aux:")}
    assert arg and aux
    return sym, arg, aux


def test_mx_onnx_export_model_files_and_objects(tmp_path):
    _ort()
    _, x, want = _small_cnn()
    symf = os.path.join(SYMFIX, "small_cnn-symbol.json")
    parf = os.path.join(SYMFIX, "small_cnn-0002.params")
    # files, fixed shape: returns the path, as MXNet
    out = str(tmp_path / "a.onnx")
    assert mx.onnx.export_model(symf, parf, [x.shape], np.float32, out) == out
    sess, (got,) = _run_onnx(out, {"data": x})
    assert sess.get_inputs()[0].shape == list(x.shape)
    assert [o.name for o in sess.get_outputs()] == [
        n[:-len("_output")] for n in mx.sym.load(symf).list_outputs()]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    # Symbol + [arg_params, aux_params], dynamic batch only
    sym, arg, aux = _checkpoint()
    out2 = str(tmp_path / "b.onnx")
    mx.contrib.onnx.export_model(sym, [arg, aux], in_shapes=[x.shape], onnx_file_path=out2,
                                 dynamic=True, dynamic_input_shapes=[(None, 3, 8, 8)])
    xx = np.concatenate([x, x, x])
    sess, (got,) = _run_onnx(out2, {"data": xx})
    assert sess.get_inputs()[0].shape[1:] == [3, 8, 8]
    np.testing.assert_allclose(got, np.concatenate([want] * 3), rtol=RTOL, atol=ATOL)
    # Symbol + one dict, old argument names
    params = dict(arg)
    params.update(aux)
    out3 = str(tmp_path / "c.onnx")
    mx.onnx.export_model(sym, params, input_shape=[x.shape], input_type=np.float32,
                         onnx_file_path=out3, run_shape_inference=True)
    _, (got,) = _run_onnx(out3, {"data": x})
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_export_model_softmax_output_label_is_dropped(tmp_path):
    _ort()
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    sym = mx.sym.SoftmaxOutput(fc, name="softmax")
    rng = np.random.RandomState(0)
    params = {"fc_weight": nd.array(rng.randn(3, 4).astype(np.float32)),
              "fc_bias": nd.array(rng.randn(3).astype(np.float32))}
    x = rng.randn(2, 4).astype(np.float32)
    logits = x @ params["fc_weight"].asnumpy().T + params["fc_bias"].asnumpy()
    want = np.exp(logits - logits.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)
    out = str(tmp_path / "sm.onnx")
    mx.onnx.export_model(sym, params, [(2, 4)], onnx_file_path=out, dynamic=True)
    sess, (got,) = _run_onnx(out, {"data": x})
    assert [i.name for i in sess.get_inputs()] == ["data"]
    assert [o.name for o in sess.get_outputs()] == ["softmax"]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    _, (got5,) = _run_onnx(out, {"data": np.concatenate([x, x, x[:1]])})
    np.testing.assert_allclose(got5, np.concatenate([want, want, want[:1]]), rtol=RTOL,
                               atol=ATOL)


def test_export_model_bad_input(tmp_path):
    sym, arg, aux = _checkpoint()
    out = str(tmp_path / "x.onnx")
    with pytest.raises(mx.MXNetError, match=r"1 input\(s\) \['data'\].*2 shape"):
        mx.onnx.export_model(sym, [arg, aux], [(1, 3, 8, 8), (1, 3)], onnx_file_path=out)
    arg = dict(arg)
    arg.pop("net_conv0_weight")
    with pytest.raises(mx.MXNetError, match="net_conv0_weight"):
        mx.onnx.export_model(sym, [arg, aux], [(1, 3, 8, 8)], onnx_file_path=out)
    with pytest.raises(ValueError, match="in_shapes"):
        mx.onnx.export_model(sym, [arg, aux], onnx_file_path=out)
    with pytest.raises(ValueError, match="file paths, or a Symbol"):
        mx.onnx.export_model(sym, os.path.join(SYMFIX, "small_cnn-0002.params"), [(1, 3, 8, 8)],
                             onnx_file_path=out)
    assert not os.path.exists(out)


# ---------------------------------------------------------------------------- errors
class ReadsValues(gluon.Block):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.dense = nn.Dense(3)

    def forward(self, x):
        if x.sum().asscalar() > 0:      # Python control flow on array values
            return self.dense(x)
        return -self.dense(x)


class FixedBatch(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return x.reshape((6,))         # the batch size (2 x 3) written into the graph


class TwoInputs(gluon.HybridBlock):
    def hybrid_forward(self, F, a, b):
        return a * b + 1


def test_clear_errors_name_the_block(tmp_path):
    reset_names()
    net = ReadsValues(prefix="reader_")
    net.initialize()
    x = nd.ones((2, 4))
    net(x)
    with pytest.raises(mx.MXNetError, match=r"ReadsValues 'reader'.*could not be traced"):
        export.to_torch_export(net, x)
    with pytest.raises(mx.MXNetError, match=r"ReadsValues 'reader'"):
        export.to_onnx(net, str(tmp_path / "r.onnx"), x)
    assert not os.listdir(tmp_path)
    two = TwoInputs(prefix="two_")
    with pytest.raises(mx.MXNetError, match=r"TwoInputs 'two' takes 2 input\(s\).*got 1"):
        export.to_torch_export(two, x)
    with pytest.raises(mx.MXNetError, match=r"TwoInputs 'two' takes 2 input\(s\).*got 3"):
        export.to_onnx(two, str(tmp_path / "t.onnx"), x, x, x)
    net2, xs, _ = _small_cnn()
    with pytest.raises(mx.MXNetError, match=r"SymbolBlock .* takes 1 input\(s\) \['data'\]"):
        export.to_torch_export(net2, xs, xs)
    with pytest.raises(mx.MXNetError, match=r"FixedBatch 'fixed'.*axis 0 of input 0"):
        export.to_torch_export(FixedBatch(prefix="fixed_"), nd.ones((2, 3)), dynamic_batch=True)
    # with a fixed batch the same block exports
    prog = export.to_torch_export(FixedBatch(prefix="fixed_"), nd.ones((2, 3)))
    assert tuple(prog.module()(torch.ones(2, 3)).shape) == (6,)
    # two inputs, each with a variable batch
    prog = export.to_torch_export(two, nd.ones((1, 3)), nd.ones((1, 3)), dynamic_batch=True)
    a, b = torch.rand(4, 3), torch.rand(4, 3)
    torch.testing.assert_close(prog.module()(a, b), a * b + 1)


def test_uninitialized_block_is_refused():
    reset_names()
    net = nn.Dense(3, prefix="d_")
    with pytest.raises(mx.MXNetError, match=r"Parameter 'd_weight'.*not initialized"):
        export.to_torch_module(net)
    net.initialize()
    with pytest.raises(mx.MXNetError, match=r"'d_weight'.*unknown shape"):
        export.to_torch_module(net)
    # example inputs finish the deferred initialization
    prog = export.to_torch_export(net, nd.ones((2, 5)))
    assert net.weight.shape == (3, 5)
    np.testing.assert_allclose(prog.module()(torch.ones(2, 5)).numpy(),
                               _predict(net, nd.ones((2, 5))), rtol=RTOL, atol=ATOL)


# ---------------------------------------------------------------------------- torch module
def test_torch_module_names_and_shared_memory():
    reset_names()
    net = nn.HybridSequential(prefix="my.net-")
    with net.name_scope():
        net.add(nn.Dense(4, in_units=3), nn.BatchNorm(in_channels=4))
    net.initialize()
    mod = export.to_torch_module(net)
    names = mod.param_names
    for attr in names:
        assert attr.isidentifier()
    assert sorted(names.values()) == sorted(net.collect_params().keys())
    w_attr = next(a for a, n in names.items() if n.endswith("dense0_weight"))
    assert isinstance(getattr(mod, w_attr), torch.nn.Parameter)
    rm_attr = next(a for a, n in names.items() if n.endswith("running_mean"))
    assert rm_attr in dict(mod.named_buffers())
    # the module and the block share memory
    net[0].weight.set_data(nd.ones((4, 3)))
    torch.testing.assert_close(getattr(mod, w_attr).detach(), torch.ones(4, 3))
    x = torch.rand(2, 3)
    np.testing.assert_allclose(mod(x).numpy(), _predict(net, nd.array(x.numpy())), rtol=RTOL,
                               atol=ATOL)
    assert not mod.training


# ---------------------------------------------------------------------------- files
def test_onnx_file_written_atomically_with_umask_permissions(tmp_path):
    _ort()
    reset_names()
    net = nn.Dense(2, in_units=3)
    net.initialize()
    path = tmp_path / "m.onnx"
    stale = tmp_path / ".tmp-m.onnx.999999999.abc"   # left by a killed earlier write
    stale.write_bytes(b"junk")
    old = os.umask(0o022)
    try:
        export.to_onnx(net, str(path), nd.ones((1, 3)))
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    assert sorted(os.listdir(tmp_path)) == ["m.onnx"]
    before = path.read_bytes()
    # a failed export leaves the existing file as it was
    with pytest.raises(mx.MXNetError):
        export.to_onnx(net, str(path), nd.ones((1, 3)), nd.ones((1, 3)))
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["m.onnx"]
