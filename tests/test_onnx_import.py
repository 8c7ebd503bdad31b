"""ONNX import: mx.contrib.onnx.import_model / get_model_metadata / import_to_gluon.

* Hand-made models (tests/onnx_import_cases.py, files in tests/fixtures/onnx_import/) against
  what MXNet 1.9.1's importer gives for them (tools/gen_onnx_import_fixtures.py): argument and
  auxiliary-state names, parameter shapes, metadata, and the outputs of the bound symbol.
* Round trips: Gluon models exported by neogluon (export.to_onnx, mx.onnx.export_model), then
  imported, against the original block.
* Single-operator graphs for operators the exporter does not write, against onnxruntime.
* Errors: missing/malformed files, unsupported operators, a missing onnx package.
"""
import json
import os
import sys

import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, export, gluon, nd
from neogluon.gluon import nn

onnx = pytest.importorskip("onnx")
from onnx import helper, numpy_helper, TensorProto  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_import_cases as C  # noqa: E402
from gluon_fixture_utils import det, reset_names  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "fixtures", "onnx_import")
RTOL, ATOL = 1e-4, 1e-5

with open(os.path.join(FIX, "cases.json")) as _f:
    MXREC = json.load(_f)


def _ort_run(path, feeds):
    ort = pytest.importorskip("onnxruntime")
    opts = ort.SessionOptions()
    opts.log_severity_level = 3        # initializers listed as inputs (MXNet-era files)
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _bind_run(sym, arg, aux, feeds):
    args = dict(arg)
    used = set(sym.list_arguments())
    args.update({k: nd.array(v, dtype=v.dtype) for k, v in feeds.items() if k in used})
    exe = sym.bind(mx.cpu(), args=args, aux_states=dict(aux), grad_req="null")
    return [o.asnumpy() for o in exe.forward(is_train=False)]


def _predict(net, *xs):
    with autograd.predict_mode():
        out = net(*xs)
    if isinstance(out, (list, tuple)):
        return [o.asnumpy() for o in out]
    return [out.asnumpy()]


# ---------------------------------------------------------------- against MXNet 1.9.1
CASES = sorted(k for k in C.CASES)
# Outputs where MXNet 1.9.1's translation is not the ONNX operator: neogluon follows ONNX
# (and onnxruntime, checked above) there.
MXNET_DIFFERS = {
    ("norms", 1): "opset-11 Softmax(axis=1) of a 4-D tensor: ONNX normalizes over axes 1.. "
                  "taken together, MXNet's importer over axis 1 alone",
}


@pytest.mark.parametrize("case", CASES)
def test_hand_made_models_match_mxnet_importer(case):
    path = os.path.join(FIX, f"{case}.onnx")
    rec = MXREC[case]
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    _, feeds = C.CASES[case]()
    got = _bind_run(sym, arg, aux, feeds)
    # onnxruntime on the same file
    for g, r in zip(got, _ort_run(path, feeds)):
        np.testing.assert_allclose(g, r, rtol=RTOL, atol=ATOL)
    if "error" in rec:        # MXNet cannot import or run it; neogluon does (above)
        return
    assert sym.list_arguments() == rec["arguments"]
    assert sym.list_auxiliary_states() == rec["auxiliary_states"]
    assert {k: list(v.shape) for k, v in arg.items()} == {
        k: v[0] for k, v in rec["arg_params"].items()}
    assert {k: list(v.shape) for k, v in aux.items()} == {
        k: v[0] for k, v in rec["aux_params"].items()}
    # MXNet turns every initializer into float32; neogluon keeps integer ones integer
    for k, v in arg.items():
        want = rec["arg_params"][k][1]
        dt = np.dtype(v.dtype)
        assert dt.name == (want if dt.kind == "f" else dt.name)
    meta = mx.contrib.onnx.get_model_metadata(path)
    assert [[n, list(s), t] for n, s, t in meta["input_tensor_data"]] == \
        rec["metadata"]["input_tensor_data"]
    assert [[n, list(s)] for n, s in meta["output_tensor_data"]] == \
        rec["metadata"]["output_tensor_data"]
    want = np.load(os.path.join(FIX, f"{case}.npz"))
    assert len(got) == len(rec["outputs"])
    for i, g in enumerate(got):
        if (case, i) in MXNET_DIFFERS:
            assert not np.allclose(g, want[f"out{i}"], rtol=RTOL, atol=ATOL)
            continue
        np.testing.assert_allclose(g, want[f"out{i}"], rtol=RTOL, atol=ATOL)


def test_batchnorm_running_stats_are_aux_params_and_gluon_block_loads_them():
    path = os.path.join(FIX, "cnn.onnx")
    _, feeds = C.cnn()
    net = mx.contrib.onnx.import_to_gluon(path, mx.cpu())
    assert isinstance(net, gluon.SymbolBlock)
    params = net.collect_params()
    assert set(params.keys()) == set(MXREC["cnn"]["arg_params"]) | set(
        MXREC["cnn"]["aux_params"])
    assert params["bn_mean"].grad_req == "null"
    model = onnx.load(path)
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for name, p in params.items():
        np.testing.assert_array_equal(p.data().asnumpy(), init[name])
    want = np.load(os.path.join(FIX, "cnn.npz"))["out0"]
    np.testing.assert_allclose(_predict(net, nd.array(feeds["data"]))[0], want, rtol=RTOL,
                               atol=ATOL)
    net.hybridize()
    np.testing.assert_allclose(_predict(net, nd.array(feeds["data"]))[0], want, rtol=RTOL,
                               atol=ATOL)


def test_import_model_module_binding():
    path = os.path.join(FIX, "cnn.onnx")
    _, feeds = C.cnn()
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    mod = mx.mod.Module(sym, data_names=["data"], label_names=None, context=mx.cpu())
    mod.bind(for_training=False, data_shapes=[("data", feeds["data"].shape)])
    mod.set_params(arg, aux)
    mod.forward(mx.io.DataBatch([nd.array(feeds["data"])]), is_train=False)
    want = np.load(os.path.join(FIX, "cnn.npz"))["out0"]
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), want, rtol=RTOL, atol=ATOL)


def test_metadata_of_variable_batch_and_where_the_api_lives(tmp_path):
    net = nn.Dense(3, in_units=4)
    net.initialize()
    path = str(tmp_path / "d.onnx")
    export.to_onnx(net, path, nd.ones((2, 4)))
    meta = mx.contrib.onnx.get_model_metadata(path)
    assert meta == {"input_tensor_data": [("data", (0, 4), TensorProto.FLOAT)],
                    "output_tensor_data": [("output", (0, 3))]}
    # MXNet 1.9.1: import lives in mx.contrib.onnx only; mx.onnx is export
    for name in ("import_model", "get_model_metadata", "import_to_gluon"):
        assert not hasattr(mx.onnx, name)
        assert callable(getattr(mx.contrib.onnx, name))


# ---------------------------------------------------------------- round trips
def _mlp():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(16, activation="tanh"), nn.Dropout(0.3), nn.Dense(8, activation="relu"),
                nn.Dense(3))
    net.initialize(mx.init.Xavier())
    return net, nd.array(det((4, 5), 2))


class _CNN(gluon.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.conv = nn.Conv2D(6, 3, padding=1)
            self.bn = nn.BatchNorm()
            self.pool = nn.MaxPool2D(2)
            self.conv2 = nn.Conv2D(4, 3, strides=2, padding=1, use_bias=False)
            self.avg = nn.AvgPool2D(2, padding=1)
            self.gap = nn.GlobalAvgPool2D()
            self.fc = nn.Dense(5)

    def hybrid_forward(self, F, x):
        y = self.pool(F.relu(self.bn(self.conv(x))))
        y = self.avg(F.LeakyReLU(self.conv2(y), slope=0.1))
        z = F.concat(self.gap(y).flatten(), y.flatten(), dim=1)
        return F.softmax(self.fc(z))


def _cnn():
    net = _CNN()
    net.initialize(mx.init.Xavier())
    x = nd.array(det((2, 3, 12, 12), 3))
    net(x)
    for j, (k, p) in enumerate(sorted(net.collect_params().items())):
        v = det(p.shape, j + 10) * 0.5
        if "var" in k or "gamma" in k:
            v = np.abs(v) + 0.5
        p.set_data(nd.array(v))
    return net, x


def _resnet():
    from neogluon.gluon.model_zoo import vision
    net = vision.resnet18_v1(classes=10)
    net.initialize(mx.init.Xavier(magnitude=2.0))
    x = nd.array(det((1, 3, 32, 32), 4))
    net(x)
    # random (deterministic) running statistics, so BatchNorm is not the identity
    for j, (k, p) in enumerate(net.collect_params().items()):
        if "running_mean" in k or "beta" in k:
            p.set_data(nd.array(det(p.shape, j) * 0.1))
        elif "running_var" in k or "gamma" in k:
            p.set_data(nd.array(np.abs(det(p.shape, j)) + 0.5))
    return net, x


@pytest.mark.parametrize("build,opset", [(_mlp, None), (_cnn, None), (_cnn, 13),
                                         (_resnet, None)])
def test_round_trip_export_then_import(build, opset, tmp_path):
    reset_names()
    net, x = build()
    net.hybridize()
    path = str(tmp_path / "m.onnx")
    export.to_onnx(net, path, x, opset=opset)
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    # the batch axis stays variable: run with another batch size
    x2 = nd.concat(x, x[:1], dim=0)
    want = _predict(net, x2)
    got = _bind_run(sym, arg, aux, {"data": x2.asnumpy()})
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-5)
    block = mx.contrib.onnx.import_to_gluon(path, mx.cpu())
    for g, w in zip(_predict(block, x2), want):
        np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-5)
    # the block's parameters are the file's initializers
    assert set(block.collect_params().keys()) == set(arg) | set(aux)


def test_round_trip_of_mx_onnx_export_model(tmp_path):
    reset_names()
    data = mx.sym.var("data")
    conv = mx.sym.Convolution(data, num_filter=4, kernel=(3, 3), pad=(1, 1), name="conv0")
    bn = mx.sym.BatchNorm(conv, fix_gamma=False, name="bn0")
    act = mx.sym.Activation(bn, act_type="relu")
    pool = mx.sym.Pooling(act, kernel=(2, 2), stride=(2, 2), pool_type="max")
    fc = mx.sym.FullyConnected(pool, num_hidden=3, name="fc0")
    out = mx.sym.softmax(fc)
    shapes = {"data": (2, 3, 6, 6)}
    arg_shapes, _, aux_shapes = out.infer_shape(**shapes)
    arg = {n: nd.array(det(s, i)) for i, (n, s) in enumerate(zip(out.list_arguments(),
                                                                 arg_shapes)) if n != "data"}
    aux = {n: nd.array(np.abs(det(s, i + 20)) + 0.5)
           for i, (n, s) in enumerate(zip(out.list_auxiliary_states(), aux_shapes))}
    path = mx.onnx.export_model(out, [arg, aux], [shapes["data"]],
                                onnx_file_path=str(tmp_path / "e.onnx"))
    x = det(shapes["data"], 7)
    want = _bind_run(out, arg, aux, {"data": x})
    sym, arg2, aux2 = mx.contrib.onnx.import_model(path)
    got = _bind_run(sym, arg2, aux2, {"data": x})
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-6)


def _rnn():
    from neogluon.gluon import rnn

    class Tagger(gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.lstm = rnn.LSTM(8, layout="NTC", input_size=5, bidirectional=True)
                self.out = nn.Dense(3, flatten=False)

        def hybrid_forward(self, F, x):
            return self.out(self.lstm(x))
    net = Tagger()
    net.initialize(mx.init.Xavier())
    return net, nd.array(det((2, 4, 5), 5))


def test_round_trip_rnn(tmp_path):
    reset_names()
    net, x = _rnn()
    net.hybridize()
    path = str(tmp_path / "rnn.onnx")
    try:
        export.to_onnx(net, path, x, dynamic_batch=False)
    except mx.MXNetError as err:       # pragma: no cover - depends on torch's exporter
        pytest.skip(f"the LSTM does not export: {err}")
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    got = _bind_run(sym, arg, aux, {"data": x.asnumpy()})
    np.testing.assert_allclose(got[0], _predict(net, x)[0], rtol=1e-3, atol=1e-5)


# ---------------------------------------------------------------- single operators
def _single(tmp_path, op, inputs, attrs=None, inits=None, opset=13, n_out=1):
    """A one-node model: `inputs` are graph inputs (name -> array), `inits` initializers."""
    inits = inits or {}
    names = list(inputs) + list(inits)
    if op == "Gather" and "w" in inits:        # an embedding: the table first
        names = names[::-1]
    node = helper.make_node(op, names, [f"y{i}" for i in range(n_out)], name=f"{op.lower()}0",
                            **(attrs or {}))
    dt = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
          np.dtype(bool): TensorProto.BOOL}
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(k, dt[v.dtype], v.shape)
                      for k, v in inputs.items()],
        [helper.make_empty_tensor_value_info(f"y{i}") for i in range(n_out)],
        initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    model = onnx.shape_inference.infer_shapes(model)   # the outputs' types
    path = str(tmp_path / f"{op}.onnx")
    onnx.save(model, path)
    return path


def _x(*shape, k=1, positive=False):
    a = det(shape, k)
    return np.abs(a) + 0.1 if positive else a


_I64 = np.int64
SINGLE = [
    # (id, op, inputs, attrs, inits, opset)
    ("resize_nearest", "Resize", {"x": _x(1, 2, 3, 4)}, {"mode": "nearest"},
     {"roi": np.zeros(0, np.float32), "scales": np.array([1, 1, 2, 2], np.float32)}, 13),
    ("resize_sizes", "Resize", {"x": _x(1, 2, 3, 4)},
     {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
     {"roi": np.zeros(0, np.float32), "scales": np.zeros(0, np.float32),
      "sizes": np.array([1, 2, 9, 12], _I64)}, 13),
    ("resize_linear_align", "Resize", {"x": _x(1, 2, 3, 4)},
     {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
     {"roi": np.zeros(0, np.float32), "scales": np.array([1, 1, 2, 2], np.float32)}, 13),
    ("upsample", "Upsample", {"x": _x(1, 2, 3, 3)}, {"mode": "nearest"},
     {"scales": np.array([1, 1, 3, 3], np.float32)}, 9),
    ("where", "Where", {"c": _x(3, 4) > 0, "a": _x(3, 4, k=2)},
     None, {"b": _x(1, 4, k=3)}, 13),
    ("greater", "Greater", {"a": _x(3, 4), "b": _x(4, k=2)}, None, None, 13),
    ("less_or_equal", "LessOrEqual", {"a": _x(3, 4), "b": _x(3, 1, k=2)}, None, None, 13),
    ("equal_int", "Equal", {"a": np.array([[1, 2], [3, 2]], _I64)}, None,
     {"b": np.array([2], _I64)}, 13),
    ("not", "Not", {"a": _x(3, 4) > 0}, None, None, 13),
    ("and", "And", {"a": _x(3, 4) > 0, "b": _x(3, 4, k=2) > 0}, None, None, 13),
    ("or", "Or", {"a": _x(3, 4) > 0, "b": _x(3, 4, k=2) > 0}, None, None, 13),
    ("xor", "Xor", {"a": _x(3, 4) > 0, "b": _x(3, 4, k=2) > 0}, None, None, 13),
    ("expand", "Expand", {"x": _x(3, 1)}, None, {"s": np.array([2, 3, 4], _I64)}, 13),
    ("tile", "Tile", {"x": _x(2, 3)}, None, {"r": np.array([2, 1], _I64)}, 13),
    ("hardmax", "Hardmax", {"x": _x(2, 3, 4)}, {"axis": 1}, None, 13),
    ("hardmax11", "Hardmax", {"x": _x(2, 3, 4)}, {"axis": 1}, None, 11),
    ("logsoftmax", "LogSoftmax", {"x": _x(2, 3, 4)}, {"axis": 1}, None, 13),
    ("softmax11_axis1", "Softmax", {"x": _x(2, 3, 4)}, {"axis": 1}, None, 11),
    ("split_uneven", "Split", {"x": _x(2, 7)}, {"axis": 1}, {"s": np.array([3, 4], _I64)}, 13),
    ("slice_steps", "Slice", {"x": _x(5, 6)}, None,
     {"st": np.array([4, 0], _I64), "en": np.array([-100, 6], _I64),
      "ax": np.array([0, 1], _I64), "sp": np.array([-2, 2], _I64)}, 13),
    ("slice_clamped", "Slice", {"x": _x(5, 6)}, None,
     {"st": np.array([1], _I64), "en": np.array([2 ** 63 - 1], _I64),
      "ax": np.array([-1], _I64)}, 13),
    ("pad_reflect", "Pad", {"x": _x(1, 2, 4, 4)}, {"mode": "reflect"},
     {"p": np.array([0, 0, 1, 2, 0, 0, 2, 1], _I64)}, 13),
    ("pad_2d", "Pad", {"x": _x(3, 4)}, None,
     {"p": np.array([0, 1, 0, 2], _I64), "v": np.array(1.5, np.float32)}, 13),
    ("avgpool_exclude_pad", "AveragePool", {"x": _x(1, 2, 5, 5)},
     {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}, None, 13),
    ("maxpool_ceil", "MaxPool", {"x": _x(1, 2, 6, 6)},
     {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}, None, 13),
    ("maxpool_asym", "MaxPool", {"x": _x(1, 2, 5, 5)},
     {"kernel_shape": [2, 2], "pads": [0, 0, 1, 1]}, None, 13),
    ("conv_asym_group", "Conv", {"x": _x(1, 4, 5, 5)},
     {"pads": [0, 1, 1, 0], "group": 2, "strides": [2, 1], "dilations": [1, 2]},
     {"w": _x(6, 2, 3, 2, k=4)}, 13),
    ("conv_same_upper", "Conv", {"x": _x(1, 2, 5, 6)}, {"auto_pad": "SAME_UPPER",
                                                         "strides": [2, 2]},
     {"w": _x(3, 2, 3, 3, k=4), "b": _x(3, k=5)}, 13),
    ("conv1d", "Conv", {"x": _x(2, 3, 7)}, {"pads": [1, 1]}, {"w": _x(4, 3, 3, k=4)}, 13),
    ("convtranspose_pads", "ConvTranspose", {"x": _x(1, 3, 4, 4)},
     {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]},
     {"w": _x(3, 2, 3, 3, k=4), "b": _x(2, k=6)}, 13),
    ("lpnorm", "LpNormalization", {"x": _x(3, 4)}, {"axis": 1, "p": 2}, None, 13),
    ("reduce_l1", "ReduceL1", {"x": _x(2, 3, 4)}, {"axes": [1]}, None, 13),
    ("reduce_l2_all", "ReduceL2", {"x": _x(2, 3, 4)}, {"keepdims": 0}, None, 13),
    ("reduce_logsumexp", "ReduceLogSumExp", {"x": _x(2, 3, 4)}, {"axes": [2]}, None, 13),
    ("reduce_logsum", "ReduceLogSum", {"x": _x(2, 3, 4, positive=True)}, {"axes": [0, 2]},
     None, 13),
    ("reduce_sumsquare", "ReduceSumSquare", {"x": _x(2, 3, 4)}, {"axes": [1]}, None, 13),
    ("reduce_prod", "ReduceProd", {"x": _x(2, 3, 4)}, {"axes": [1], "keepdims": 0}, None, 13),
    ("reduce_min_default_keepdims", "ReduceMin", {"x": _x(2, 3, 4)}, {"axes": [-1]}, None, 13),
    ("reducesum13", "ReduceSum", {"x": _x(2, 3, 4)}, {"keepdims": 0},
     {"ax": np.array([0, 2], _I64)}, 13),
    ("reducemean18", "ReduceMean", {"x": _x(2, 3, 4)}, None, {"ax": np.array([1], _I64)}, 18),
    ("argmin", "ArgMin", {"x": _x(3, 4)}, {"axis": 1}, None, 13),
    ("topk", "TopK", {"x": _x(3, 5)}, {"axis": 1}, {"k": np.array([2], _I64)}, 13),
    ("depth_to_space", "DepthToSpace", {"x": _x(1, 8, 2, 3)}, {"blocksize": 2}, None, 13),
    ("space_to_depth", "SpaceToDepth", {"x": _x(1, 2, 4, 6)}, {"blocksize": 2}, None, 13),
    ("hardsigmoid", "HardSigmoid", {"x": _x(3, 4) * 4}, {"alpha": 0.3}, None, 13),
    ("softplus", "Softplus", {"x": _x(3, 4)}, None, None, 13),
    ("softsign", "Softsign", {"x": _x(3, 4)}, None, None, 13),
    ("selu", "Selu", {"x": _x(3, 4)}, None, None, 13),
    ("selu_custom", "Selu", {"x": _x(3, 4)}, {"alpha": 1.5, "gamma": 2.0}, None, 13),
    ("erf", "Erf", {"x": _x(3, 4)}, None, None, 13),
    ("pow", "Pow", {"x": _x(3, 4, positive=True)}, None, {"e": _x(4, k=2)}, 13),
    ("sin", "Sin", {"x": _x(3, 4)}, None, None, 13),
    ("atan", "Atan", {"x": _x(3, 4)}, None, None, 13),
    ("mean", "Mean", {"a": _x(3, 4), "b": _x(3, 4, k=2)}, None, {"c": _x(4, k=3)}, 13),
    ("layernorm", "LayerNormalization", {"x": _x(2, 3, 4)}, {"epsilon": 1e-3},
     {"g": _x(4, k=2, positive=True), "b": _x(4, k=3)}, 17),
    ("layernorm_nobias", "LayerNormalization", {"x": _x(2, 3, 4)}, None,
     {"g": _x(4, k=2, positive=True)}, 17),
    ("batchnorm15", "BatchNormalization", {"x": _x(2, 3, 4, 4)}, {"epsilon": 1e-5},
     {"s": _x(3, k=2, positive=True), "b": _x(3, k=3), "m": _x(3, k=4),
      "v": _x(3, k=5, positive=True)}, 15),
    ("instancenorm", "InstanceNormalization", {"x": _x(2, 3, 5)}, None,
     {"s": _x(3, k=2, positive=True), "b": _x(3, k=3)}, 13),
    ("globalmaxpool", "GlobalMaxPool", {"x": _x(2, 3, 4, 5)}, None, None, 13),
    ("globallppool", "GlobalLpPool", {"x": _x(2, 3, 4, 5)}, None, None, 13),
    ("lppool", "LpPool", {"x": _x(1, 2, 4, 4)}, {"kernel_shape": [2, 2], "p": 2}, None, 13),
    ("lrn", "LRN", {"x": _x(1, 5, 3, 3)}, {"size": 3}, None, 13),
    ("squeeze13", "Squeeze", {"x": _x(2, 1, 3, 1)}, None, {"a": np.array([1, -1], _I64)}, 13),
    ("unsqueeze13", "Unsqueeze", {"x": _x(2, 3)}, None, {"a": np.array([0, -1], _I64)}, 13),
    ("clip_min_only", "Clip", {"x": _x(3, 4)}, None, {"lo": np.array(0.1, np.float32)}, 13),
    ("clip6", "Clip", {"x": _x(3, 4)}, {"min": -0.2, "max": 0.3}, None, 6),
    ("matmul_batch", "MatMul", {"a": _x(2, 3, 4)}, None, {"b": _x(2, 4, 5, k=2)}, 13),
    ("matmul_nd_2d", "MatMul", {"a": _x(2, 2, 3, 4)}, None, {"b": _x(4, 5, k=2)}, 13),
    ("gemm_general", "Gemm", {"a": _x(4, 3)}, {"alpha": 0.5, "beta": 2.0, "transA": 1},
     {"b": _x(4, 5, k=2), "c": _x(1, 5, k=3)}, 13),
    ("gemm_fc_no_trans", "Gemm", {"a": _x(3, 4)}, None,
     {"b": _x(4, 5, k=2), "c": _x(5, k=3)}, 13),
    ("gather_scalar_index", "Gather", {"x": _x(3, 4)}, {"axis": 1},
     {"i": np.array(-1, _I64)}, 13),
    ("gather_embedding", "Gather", {"i": np.array([[0, 2], [1, 1]], _I64)}, None,
     {"w": _x(3, 4)}, 13),
    ("flatten_axis2", "Flatten", {"x": _x(2, 3, 4, 5)}, {"axis": 2}, None, 13),
    ("cumsum", "CumSum", {"x": _x(3, 4)}, None, {"a": np.array(1, _I64)}, 13),
    ("prelu_scalar", "PRelu", {"x": _x(2, 3, 4)}, None, {"s": np.array([0.2], np.float32)}, 13),
    ("cast_int", "Cast", {"x": _x(3, 4) * 5}, {"to": TensorProto.INT64}, None, 13),
    ("dropout13", "Dropout", {"x": _x(3, 4)}, None, {"r": np.array(0.3, np.float32)}, 13),
    ("cos", "Cos", {"x": _x(3, 4)}, None, None, 13),
    ("tan", "Tan", {"x": _x(3, 4)}, None, None, 13),
    ("acos", "Acos", {"x": _x(3, 4)}, None, None, 13),
    ("asin", "Asin", {"x": _x(3, 4)}, None, None, 13),
    ("sinh", "Sinh", {"x": _x(3, 4)}, None, None, 13),
    ("cosh", "Cosh", {"x": _x(3, 4)}, None, None, 13),
    ("asinh", "Asinh", {"x": _x(3, 4)}, None, None, 13),
    ("acosh", "Acosh", {"x": _x(3, 4, positive=True) + 1}, None, None, 13),
    ("atanh", "Atanh", {"x": _x(3, 4)}, None, None, 13),
    ("sign", "Sign", {"x": _x(3, 4)}, None, None, 13),
    ("round", "Round", {"x": np.array([0.5, 1.5, 2.5, -0.5, -1.7, 2.2], np.float32)}, None,
     None, 13),
    ("isnan", "IsNaN", {"x": np.array([0.5, np.nan, 1.0], np.float32)}, None, None, 13),
    ("mod_int", "Mod", {"a": np.array([5, -7, 9, 4], _I64)}, None,
     {"b": np.array([3, 3, -4, 2], _I64)}, 13),
    ("hardswish", "HardSwish", {"x": _x(3, 4) * 6}, None, None, 14),
    ("gelu", "Gelu", {"x": _x(3, 4) * 3}, None, None, 20),
    ("greater_or_equal", "GreaterOrEqual", {"a": _x(3, 4), "b": _x(3, 4, k=2)}, None, None,
     13),
    ("castlike", "CastLike", {"x": _x(3, 4) * 5}, None, {"t": np.zeros(1, _I64)}, 15),
    ("size", "Size", {"x": _x(3, 4)}, None, None, 13),
    ("range", "Range", {}, None, {"a": np.array(1, _I64), "b": np.array(9, _I64),
                                  "d": np.array(3, _I64)}, 13),
    ("maxroipool", "MaxRoiPool", {"x": _x(1, 2, 6, 6)}, {"pooled_shape": [2, 2],
                                                         "spatial_scale": 0.5},
     {"rois": np.array([[0, 0, 0, 6, 6], [0, 2, 2, 10, 8]], np.float32)}, 13),
    ("less", "Less", {"a": _x(3, 4), "b": _x(3, 4, k=2)}, None, None, 13),
    ("sum_one_input", "Sum", {"x": _x(3, 4)}, None, None, 6),
]


@pytest.mark.parametrize("case", SINGLE, ids=[c[0] for c in SINGLE])
def test_single_operator_against_onnxruntime(case, tmp_path):
    cid, op, inputs, attrs, inits, opset = case
    n_out = 2 if op in ("TopK", "Split") else 1
    path = _single(tmp_path, op, inputs, attrs, inits, opset, n_out=n_out)
    want = _ort_run(path, inputs)
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    got = _bind_run(sym, arg, aux, inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if w.ndim == 0:      # MXNet 1.x arrays are never 0-d: a full reduction is (1,)
            assert g.shape == (1,)
            g = g.reshape(())
        assert g.shape == w.shape
        if w.dtype == bool:
            g = g.astype(bool)
        np.testing.assert_allclose(g.astype(w.dtype) if w.dtype.kind != "f" else g, w,
                                   rtol=RTOL, atol=ATOL)


def _rnn_case(op, ngates, hidden=3, inp=4, ndir=1, **attrs):
    d = {"W": _x(ndir, ngates * hidden, inp, k=2), "R": _x(ndir, ngates * hidden, hidden, k=3),
         "B": _x(ndir, 2 * ngates * hidden, k=4)}
    return op, attrs, d


RNNS = [
    ("lstm_reverse",) + _rnn_case("LSTM", 4, direction="reverse"),
    ("lstm_bidir_layout1",) + _rnn_case("LSTM", 4, ndir=2, direction="bidirectional", layout=1),
    ("gru",) + _rnn_case("GRU", 3, linear_before_reset=1),
    ("rnn_relu",) + _rnn_case("RNN", 1, activations=["Relu"]),
]


@pytest.mark.parametrize("case", RNNS, ids=[c[0] for c in RNNS])
def test_recurrent_operators_against_onnxruntime(case, tmp_path):
    cid, op, attrs, inits = case
    ndir = inits["W"].shape[0]
    hidden = inits["R"].shape[2]
    layout = attrs.get("layout", 0)
    x = _x(2, 5, 4) if layout else _x(5, 2, 4)
    h0 = _x(2, ndir, hidden, k=7) if layout else _x(ndir, 2, hidden, k=7)
    names = ["x", "W", "R", "B", "", "h0"] + (["c0"] if op == "LSTM" else [])
    feeds = {"x": x, "h0": h0}
    if op == "LSTM":
        feeds["c0"] = h0 * 0.5
    outs = ["y", "yh"] + (["yc"] if op == "LSTM" else [])

    def save(attrs, feeds, path):
        node = helper.make_node(op, names, outs, name="rnn0", hidden_size=hidden, **attrs)
        graph = helper.make_graph(
            [node], "g", [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape)
                          for k, v in feeds.items()],
            [helper.make_empty_tensor_value_info(o) for o in outs],
            initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
        model.ir_version = 8
        onnx.save(onnx.shape_inference.infer_shapes(model), path)
        return path
    path = save(attrs, feeds, str(tmp_path / "rnn.onnx"))
    if layout:      # onnxruntime has no batch-major recurrent layers: the time-major twin
        twin = {k: np.ascontiguousarray(v.transpose(1, 0, 2)) for k, v in feeds.items()}
        ref = _ort_run(save(dict(attrs, layout=0), twin, str(tmp_path / "twin.onnx")), twin)
        want = [ref[0].transpose(2, 0, 1, 3)] + [h.transpose(1, 0, 2) for h in ref[1:]]
    else:
        want = _ort_run(path, feeds)
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    assert sorted(arg) == ["B", "R", "W"]
    got = _bind_run(sym, arg, aux, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)


def test_shape_computations_fold_and_constants(tmp_path):
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape (a flatten as exporters write it),
    Constant and ConstantOfShape nodes, Identity of a constant."""
    n = helper.make_node
    nodes = [
        n("Shape", ["x"], ["s"], name="shape0"),
        n("Constant", [], ["zero"], name="const0",
          value=numpy_helper.from_array(np.array(0, _I64))),
        n("Gather", ["s", "zero"], ["b"], name="gather0", axis=0),
        n("Constant", [], ["ax"], name="const1", value_ints=[0]),
        n("Unsqueeze", ["b", "ax"], ["b1"], name="unsq0"),
        n("Constant", [], ["m1"], name="const2",
          value=numpy_helper.from_array(np.array([-1], _I64))),
        n("Concat", ["b1", "m1"], ["target"], name="concat0", axis=0),
        n("Reshape", ["x", "target"], ["flat"], name="reshape0"),
        n("Constant", [], ["two"], name="const3", value_float=2.0),
        n("Mul", ["flat", "two"], ["y0"], name="mul0"),
        n("Constant", [], ["shp"], name="const4", value_ints=[1, 12]),
        n("ConstantOfShape", ["shp"], ["ones"], name="cos0",
          value=numpy_helper.from_array(np.array([0.5], np.float32))),
        n("Identity", ["ones"], ["ones2"], name="id0"),
        n("Add", ["flat", "ones2"], ["y1"], name="add0"),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4])],
        [helper.make_tensor_value_info("y0", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("y1", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = str(tmp_path / "shape.onnx")
    onnx.save(model, path)
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    # the reshape target was folded away; the multiplier is a scalar operator
    assert sorted(arg) == ["ones"]
    for batch in (2, 5):
        x = det((batch, 3, 4), batch)
        got = _bind_run(sym, arg, aux, {"x": x})
        for g, w in zip(got, _ort_run(path, {"x": x})):
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)


def test_caffe2_fc_spatialbn_and_runtime_shape(tmp_path):
    """FC and SpatialBN (Caffe2-era operators in MXNet's table; onnxruntime has neither:
    checked with numpy), and Shape of a tensor whose shape is not known at import."""
    n = helper.make_node
    w, b = _x(3, 4, k=2), _x(3, k=3)
    g, beta, mean, var = (_x(3, k=4, positive=True), _x(3, k=5), _x(3, k=6),
                          _x(3, k=7, positive=True))
    inits = {"w": w, "b": b, "g": g, "beta": beta, "mean": mean, "var": var}
    nodes = [n("FC", ["x", "w", "b"], ["fc"], name="fc0"),
             n("Unsqueeze", ["fc"], ["fc4"], name="unsq0", axes=[2, 3]),
             n("SpatialBN", ["fc4", "g", "beta", "mean", "var"], ["y"], name="bn0",
               epsilon=1e-3),
             n("Shape", ["z"], ["shp"], name="shape0")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4]),
                     helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("shp", TensorProto.INT64, None)],
        initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    path = str(tmp_path / "caffe2.onnx")
    onnx.save(model, path)
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    assert sorted(aux) == ["mean", "var"]
    x = _x(2, 4)
    y, shp = _bind_run(sym, arg, aux, {"x": x, "z": np.zeros((5, 2, 7), np.float32)})
    fc = x @ w.T + b
    want = (fc - mean) / np.sqrt(var + 1e-3) * g + beta
    np.testing.assert_allclose(y.reshape(2, 3), want, rtol=RTOL, atol=ATOL)
    assert shp.tolist() == [5, 2, 7]


def test_random_operators_import(tmp_path):
    n = helper.make_node
    nodes = [n("RandomUniform", [], ["u"], name="ru", shape=[3, 4], low=2.0, high=3.0),
             n("RandomNormalLike", ["x"], ["r"], name="rn", mean=5.0, scale=0.01),
             n("RandomNormal", [], ["rn2"], name="rn2", shape=[50], mean=-3.0, scale=0.01),
             n("RandomUniformLike", ["x"], ["ul"], name="rul", low=7.0, high=8.0),
             n("Multinomial", ["logits"], ["m"], name="mult", sample_size=5)]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                     helper.make_tensor_value_info("logits", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
         for o in ("u", "r", "rn2", "ul")]
        + [helper.make_tensor_value_info("m", TensorProto.INT32, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = str(tmp_path / "rand.onnx")
    onnx.save(model, path)
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    logits = np.array([[-50, 50, -50], [60, -60, -60]], np.float32)   # log-probabilities
    u, r, rn2, ul, m = _bind_run(sym, arg, aux, {"x": np.zeros((2, 3), np.float32),
                                                 "logits": logits})
    assert u.shape == (3, 4) and (u >= 2).all() and (u <= 3).all()
    assert r.shape == (2, 3) and abs(r.mean() - 5.0) < 0.1
    assert rn2.shape == (50,) and abs(rn2.mean() + 3.0) < 0.1
    assert ul.shape == (2, 3) and (ul >= 7).all() and (ul <= 8).all()
    assert m.dtype == np.int32 and m.tolist() == [[1] * 5, [0] * 5]


# ---------------------------------------------------------------- errors
def test_missing_and_malformed_files(tmp_path):
    missing = str(tmp_path / "nope.onnx")
    for fn in (mx.contrib.onnx.import_model, mx.contrib.onnx.get_model_metadata):
        with pytest.raises(mx.MXNetError, match=r"nope\.onnx.*does not exist"):
            fn(missing)
    with pytest.raises(mx.MXNetError, match=r"nope\.onnx.*does not exist"):
        mx.contrib.onnx.import_to_gluon(missing, mx.cpu())
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x00\xffnot a protobuf at all" * 10)
    with pytest.raises(mx.MXNetError, match=r"bad\.onnx"):
        mx.contrib.onnx.import_model(str(bad))


def test_unsupported_operator_names_file_and_node(tmp_path):
    path = _single(tmp_path, "NonMaxSuppression",
                   {"boxes": _x(1, 3, 4), "scores": _x(1, 1, 3)}, n_out=1)
    with pytest.raises(mx.MXNetError, match=r"NonMaxSuppression\.onnx: node "
                                            r"'nonmaxsuppression0' \(op NonMaxSuppression\)"
                                            r".*not supported"):
        mx.contrib.onnx.import_model(path)
    # an operator whose attribute has no MXNet counterpart: named too
    path = _single(tmp_path, "DepthToSpace", {"x": _x(1, 8, 2, 2)},
                   {"blocksize": 2, "mode": "CRD"})
    with pytest.raises(mx.MXNetError, match=r"node 'depthtospace0' \(op DepthToSpace\).*CRD"):
        mx.contrib.onnx.import_model(path)
    # a computed reshape target
    n = helper.make_node
    graph = helper.make_graph(
        [n("Relu", ["s"], ["s2"], name="relu0"), n("Reshape", ["x", "s2"], ["y"], name="rs")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
              helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = str(tmp_path / "dyn.onnx")
    onnx.save(model, path)
    with pytest.raises(mx.MXNetError, match=r"dyn\.onnx: node 'rs' \(op Reshape\).*constant"):
        mx.contrib.onnx.import_model(path)


def test_without_onnx_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    for call in (lambda: mx.contrib.onnx.import_model("m.onnx"),
                 lambda: mx.contrib.onnx.get_model_metadata("m.onnx"),
                 lambda: mx.contrib.onnx.import_to_gluon("m.onnx", mx.cpu())):
        with pytest.raises(mx.MXNetError, match=r"'onnx' package.*pip install onnx") as err:
            call()
        assert isinstance(err.value, ImportError)      # as MXNet raises ImportError
