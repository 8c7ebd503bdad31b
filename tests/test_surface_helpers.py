"""MXNet 1.9.1's private helpers and module paths that programs import, on neogluon.

Numbers come from tests/fixtures/surface/helpers.json, written on MXNet 1.9.1 by
tools/gen_surface_helpers_fixtures.py; the same ``compute`` runs here through the alias.
"""
import importlib
import json
import math
import os
import sys

import pytest

import neogluon.mxnet_alias  # noqa: F401
import mxnet as mx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import gen_surface_helpers_fixtures as gen  # noqa: E402

with open(os.path.join(ROOT, "tests", "fixtures", "surface", "helpers.json")) as _f:
    EXPECTED = json.load(_f)["results"]


@pytest.fixture(scope="module")
def actual():
    return json.loads(json.dumps(gen.compute(mx)))


def _close(a, b):
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, float) or isinstance(b, float):
        if math.isnan(a) and math.isnan(b):
            return True
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)
    return a == b


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_matches_mxnet(actual, key):
    assert _close(EXPECTED[key], actual[key]), (key, EXPECTED[key], actual[key])


def test_flatten_and_regroup_errors():
    from mxnet.gluon.block import _flatten, _regroup
    with pytest.raises(ValueError):
        _flatten({"a": 1}, "blk")
    with pytest.raises(ValueError):
        _regroup([mx.nd.ones(1)], -1)   # a non-None where None was recorded


@pytest.mark.parametrize("path,name,target", [
    ("mxnet.optimizer.optimizer", "SGD", lambda: mx.optimizer.SGD),
    ("mxnet.optimizer.optimizer", "Adam", lambda: mx.optimizer.Adam),
    ("mxnet.optimizer.optimizer", "NDabs", lambda: mx.nd.abs),
    ("mxnet.ndarray.gen_op", "Activation", lambda: mx.nd.Activation),
    ("mxnet.ndarray.op", "FullyConnected", lambda: mx.nd.FullyConnected),
    ("mxnet.ndarray.gen_contrib", "box_nms", lambda: mx.nd.contrib.box_nms),
    ("mxnet.ndarray.gen_linalg", "gemm2", lambda: mx.nd.linalg.gemm2),
    ("mxnet.ndarray.gen__internal", "_plus_scalar", lambda: mx.nd._internal._plus_scalar),
    ("mxnet.ndarray.ndarray", "add", lambda: mx.nd.add),
    ("mxnet.ndarray.utils", "zeros", lambda: mx.nd.zeros),
    ("mxnet.ndarray.register", "adamw_update", lambda: mx.nd.contrib.adamw_update),
    ("mxnet.symbol.symbol", "histogram", lambda: mx.sym.histogram),
    ("mxnet.gluon.nn.basic_layers", "Dense", lambda: mx.gluon.nn.Dense),
    ("mxnet.gluon.nn.conv_layers", "Conv2D", lambda: mx.gluon.nn.Conv2D),
    ("mxnet.gluon.rnn.rnn_layer", "LSTM", lambda: mx.gluon.rnn.LSTM),
    ("mxnet.gluon.data.dataloader", "DataLoader", lambda: mx.gluon.data.DataLoader),
    ("mxnet.io.io", "ImageRecordIter", lambda: mx.io.ImageRecordIter),
    ("mxnet.io.io", "NDArrayIter", lambda: mx.io.NDArrayIter),
    ("mxnet.kvstore.kvstore", "KVStore", lambda: mx.kv.KVStore),
    ("mxnet.contrib.amp.loss_scaler", "LossScaler", lambda: mx.contrib.amp.LossScaler),
    ("mxnet.base", "MXNetError", lambda: mx.MXNetError),
    ("mxnet.error", "MXNetError", lambda: mx.MXNetError),
    ("mxnet.metric", "ndarray", lambda: mx.nd),
    ("mxnet.gluon.block", "symbol", lambda: mx.sym),
])
def test_module_paths_give_neogluons_objects(path, name, target):
    assert getattr(importlib.import_module(path), name) is target()


def test_symbol_ops_resolve_as_symbols():
    from mxnet.symbol.gen_op import FullyConnected
    from mxnet.symbol._internal import _plus_scalar
    x = mx.sym.var("x")
    assert isinstance(FullyConnected(x, num_hidden=2), mx.sym.Symbol)
    assert _plus_scalar(x, scalar=1).eval(x=mx.nd.ones((1,)))[0].asscalar() == 2


def test_gen_module_star_import():
    ns = {}
    exec("from mxnet.ndarray.gen_op import *", ns)
    assert ns["Activation"] is mx.nd.Activation and "NDArray" not in ns


def test_not_provided_raise_mxneterror():
    import mxnet.rtc
    import mxnet.libinfo
    from mxnet.kvstore.kvstore_server import KVStoreServer
    with pytest.raises(mx.MXNetError, match="NVRTC"):
        mxnet.rtc.CudaModule("__global__ void k() {}")
    with pytest.raises(mx.MXNetError, match="libmxnet"):
        mxnet.libinfo.find_lib_path()
    with pytest.raises(mx.MXNetError, match="server"):
        KVStoreServer(mx.kv.create("local")).run()


def test_register_error_and_classproperty():
    from mxnet.base import classproperty, error_types, with_metaclass, _ClassPropertyMeta

    @mx.error.register
    class MyError(mx.MXNetError):
        pass
    assert error_types["MyError"] is MyError
    mx.error.register("Other", ValueError)
    assert error_types["Other"] is ValueError

    class Holder(with_metaclass(_ClassPropertyMeta, object)):
        _value = 1

        @classproperty
        def value(cls):
            return cls._value

        @value.setter
        def value(cls, v):
            cls._value = v
    assert Holder.value == 1 and Holder().value == 1
    Holder.value = 5
    assert Holder.value == 5 and isinstance(Holder, _ClassPropertyMeta)


def test_model_store_purge(tmp_path):
    from mxnet.gluon.model_zoo.model_store import purge
    (tmp_path / "a-1234.params").write_bytes(b"x")
    (tmp_path / "keep.txt").write_text("y")
    purge(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_get_begin_state():
    from mxnet.gluon.rnn.rnn_cell import _get_begin_state, _cells_begin_state
    cell = mx.gluon.rnn.LSTMCell(3, input_size=2)
    states = _get_begin_state(cell, mx.nd, None, mx.nd.ones((4, 5, 2)), 4)
    assert [s.shape for s in states] == [(4, 3), (4, 3)]
    given = [mx.nd.ones((4, 3))] * 2
    assert _get_begin_state(cell, mx.nd, given, None, 4) is given
    assert len(_cells_begin_state([cell, cell], batch_size=2)) == 4
