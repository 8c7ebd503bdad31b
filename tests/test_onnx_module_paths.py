"""MXNet 1.9.1's ONNX module paths under the alias: the importer's ``onnx2mx`` modules
(``import_model``, ``import_to_gluon``, ``import_onnx.GraphProto``) and the exporter's
``mx2onnx`` modules (``export_model``, ``get_operator_support``, ``load_module``)."""
import os

import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def _graph():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((4,)).astype(np.float32)
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["h"], name="fc", transB=1),
             helper.make_node("Relu", ["h"], ["y"], name="act")]
    g = helper.make_graph(
        nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    return g, w, b


def test_graphproto_from_onnx_and_to_gluon_compute_the_graph():
    from neogluon.contrib.onnx.onnx2mx.import_onnx import GraphProto, convert_map
    assert "Gemm" in convert_map and "Relu" in convert_map
    g, w, b = _graph()
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    want = np.maximum(x @ w.T + b, 0)
    sym, args, aux = GraphProto().from_onnx(g, 13)
    assert sorted(args) == ["b", "w"] and aux == {}
    out = sym.eval(x=mx.nd.array(x), **args)[0]
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-6)
    meta = GraphProto().get_graph_metadata(g)
    assert meta["input_tensor_data"] == [("x", (2, 3), 1)]
    net = GraphProto().graph_to_gluon(g, mx.cpu(), 13)
    np.testing.assert_allclose(net(mx.nd.array(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(MXNetError, match="GraphProto"):
        GraphProto().from_onnx("not a graph", 13)


def test_import_functions_at_mxnets_module_paths(tmp_path):
    from neogluon.contrib.onnx.onnx2mx.import_model import import_model, get_model_metadata
    from neogluon.contrib.onnx.onnx2mx.import_to_gluon import import_to_gluon
    import neogluon.contrib.onnx as conx
    assert import_model is conx.import_model is conx.import_model_
    g, _, _ = _graph()
    path = str(tmp_path / "tiny.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    sym, args, _ = import_model(path)
    assert sym.list_outputs() and sorted(args) == ["b", "w"]
    assert get_model_metadata(path)["output_tensor_data"] == [("y", (2, 4))]
    assert isinstance(import_to_gluon(path, mx.cpu()), mx.gluon.SymbolBlock)


def test_exporter_module_paths(tmp_path):
    from neogluon.onnx.mx2onnx import export_model, get_operator_support
    from neogluon.onnx.mx2onnx._export_helper import load_module
    from neogluon.onnx.mx2onnx._export_onnx import MXNetGraph
    assert export_model is mx.onnx.export_model
    ops = get_operator_support()
    assert ops == sorted(ops) and {"Convolution", "FullyConnected", "Activation"} <= set(ops)
    assert mx.onnx.get_operator_support(13) == ops
    with pytest.raises(MXNetError, match="torch's ONNX exporter"):
        MXNetGraph()
    data = mx.sym.var("data")
    net = mx.sym.BatchNorm(mx.sym.FullyConnected(data, num_hidden=3, name="fc"), name="bn")
    prefix = str(tmp_path / "m")
    arg = {"fc_weight": mx.nd.ones((3, 2)), "fc_bias": mx.nd.zeros((3,)),
           "bn_gamma": mx.nd.ones((3,)), "bn_beta": mx.nd.zeros((3,))}
    aux = {"bn_moving_mean": mx.nd.zeros((3,)), "bn_moving_var": mx.nd.ones((3,))}
    mx.model.save_checkpoint(prefix, 0, net, arg, aux)
    sym, params = load_module(prefix + "-symbol.json", prefix + "-0000.params")
    assert sym.list_arguments() == net.list_arguments()
    assert sorted(params) == sorted(list(arg) + list(aux))
    with pytest.raises(ValueError, match="does not exist"):
        load_module(prefix + "-nope.json", prefix + "-0000.params")
