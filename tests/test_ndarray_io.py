"""nd.save / nd.load in MXNet's binary format, against files written by MXNet 1.9.1."""
import json
import os
import io
import pickle

import numpy as np
import pytest

import neogluon as mx
from neogluon import nd

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "nd")
CONTENT = dict(np.load(os.path.join(FIX, "io_content.npz")))


def _check(arr, expected):
    assert isinstance(arr, nd.NDArray)
    assert arr.shape == expected.shape
    assert np.dtype(arr.dtype) == expected.dtype
    np.testing.assert_array_equal(arr.asnumpy(), expected)


def test_load_mxnet_dict_file():
    loaded = nd.load(os.path.join(FIX, "mx_dict.params"))
    assert isinstance(loaded, dict)
    assert list(loaded) == list(CONTENT)  # MXNet keeps the dict's order
    for k, v in CONTENT.items():
        _check(loaded[k], v)
        assert loaded[k].context == mx.cpu(0)


def test_load_mxnet_list_single_and_empty_files():
    lst = nd.load(os.path.join(FIX, "mx_list.params"))
    assert isinstance(lst, list) and len(lst) == 2
    _check(lst[0], CONTENT["weight"])
    _check(lst[1], CONTENT["i64"])
    single = nd.load(os.path.join(FIX, "mx_single.params"))
    assert isinstance(single, list) and len(single) == 1
    _check(single[0], np.array([3.5, -1.0], np.float32))
    assert nd.load(os.path.join(FIX, "mx_empty.params")) == []


def test_save_is_byte_identical_to_mxnet(tmp_path):
    for name, data in [("mx_dict.params", {k: nd.array(v, dtype=v.dtype) for k, v in CONTENT.items()}),
                       ("mx_list.params", [nd.array(CONTENT["weight"]), nd.array(CONTENT["i64"], dtype="int64")]),
                       ("mx_single.params", nd.array([3.5, -1.0])),
                       ("mx_empty.params", [])]:
        out = tmp_path / name
        nd.save(str(out), data)
        with open(os.path.join(FIX, name), "rb") as f:
            assert out.read_bytes() == f.read(), name


def test_neogluon_file_was_verified_in_mxnet():
    # tools/gen_nd_fixtures.py writes a file with neogluon and loads it in MXNet 1.9.1.
    with open(os.path.join(FIX, "neogluon_file_in_mxnet.json")) as f:
        report = json.load(f)
    assert report["mxnet"] == "1.9.1"
    assert report["all_ok"], report


def test_roundtrip_dict_list_bf16_and_ctx(tmp_path):
    p = str(tmp_path / "a.params")
    d = {"a": nd.array([[1, 2], [3, 4]]), "b": nd.arange(5, dtype="int32"),
         "c": nd.array([1.5, 2.5]).astype("bfloat16")}
    nd.save(p, d)
    back = nd.load(p)
    assert list(back) == ["a", "b", "c"]
    np.testing.assert_array_equal(back["a"].asnumpy(), [[1, 2], [3, 4]])
    assert back["b"].dtype == np.int32
    assert nd.to_torch(back["c"]).dtype == nd.to_torch(d["c"]).dtype
    nd.save(p, (nd.ones((2,)), nd.zeros((1, 3))))
    lst = nd.load(p)
    assert [a.shape for a in lst] == [(2,), (1, 3)]
    on_cpu1 = nd.load(p, ctx=mx.cpu(1))
    assert all(a.context == mx.cpu(1) for a in on_cpu1)


def test_save_rejects_bad_data(tmp_path):
    p = str(tmp_path / "x.params")
    with pytest.raises(ValueError):
        nd.save(p, {"a": np.ones(2)})
    with pytest.raises(ValueError):
        nd.save(p, {1: nd.ones(2)})
    with pytest.raises(ValueError):
        nd.save(p, [nd.ones(2), 3])
    with pytest.raises(ValueError):
        nd.save(p, "text")
    assert not os.path.exists(p)
    assert os.listdir(tmp_path) == []  # no temp files left behind


def test_save_is_atomic(tmp_path, monkeypatch):
    p = tmp_path / "keep.params"
    nd.save(str(p), [nd.ones(3)])
    before = p.read_bytes()

    def boom(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        nd.save(str(p), [nd.zeros(3)])
    assert p.read_bytes() == before
    assert os.listdir(tmp_path) == ["keep.params"]


def test_load_errors(tmp_path):
    good = open(os.path.join(FIX, "mx_dict.params"), "rb").read()
    for cut in (0, 10, 30, 100, len(good) - 3):
        p = tmp_path / f"cut{cut}.params"
        p.write_bytes(good[:cut])
        with pytest.raises(mx.MXNetError, match=f"cut{cut}.params"):
            nd.load(str(p))
    foreign = tmp_path / "foreign.params"
    foreign.write_bytes(b"PK\x03\x04" + b"\x00" * 60)
    with pytest.raises(mx.MXNetError, match="not an MXNet NDArray file"):
        nd.load(str(foreign))
    pick = tmp_path / "pickle.params"
    pick.write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(mx.MXNetError):
        nd.load(str(pick))
    trailing = tmp_path / "trailing.params"
    trailing.write_bytes(good + b"\x00")
    with pytest.raises(mx.MXNetError, match="unexpected bytes"):
        nd.load(str(trailing))
    with pytest.raises(mx.MXNetError, match="no such file"):
        nd.load(str(tmp_path / "missing.params"))


def test_buffer_roundtrip():
    blob = nd.save_tobuffer({"x": nd.array([1.0, 2.0])})
    back = nd.load_frombuffer(blob)
    np.testing.assert_array_equal(back["x"].asnumpy(), [1.0, 2.0])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int64", "uint8",
                                   "bfloat16"])
def test_pickle_ndarray(dtype):
    a = nd.array([[1, 2, 3], [4, 5, 6]]).astype(dtype)
    b = pickle.loads(pickle.dumps(a))
    assert b.shape == a.shape and b.context == a.context
    assert nd.to_torch(b).dtype == nd.to_torch(a).dtype
    np.testing.assert_array_equal(b.asnumpy(), a.asnumpy())
    c = nd.ones((2,), ctx=mx.cpu(2))
    assert pickle.loads(pickle.dumps(c)).context == mx.cpu(2)


# pickle.dumps({'w': nd.array([[1.5, -2, 3], [4, 5, 6.25]]), 'i': nd.array([7, 8], dtype='int64'),
#               'c': nd.ones((2,), ctx=mx.cpu(1))}, protocol=2) under MXNet 1.9.1: each array is
# ``NDArray(None)`` then ``__setstate__({'handle': ...})`` (tree_lstm's dataset.pickle cache).
_MXNET_PICKLE = (
    "80027d7100285801000000777101636d786e65742e6e6461727261792e6e6461727261790a4e4441727261790a"
    "71024e8571035271047d7105580600000068616e646c657106635f5f6275696c74696e5f5f0a627974656172"
    "7261790a7107635f636f646563730a656e636f64650a71085849000000c389c3bac293c3b900000000020000"
    "00020000000000000003000000000000000100000000000000000000000000c3803f000000c3800000404000"
    "00c280400000c2a0400000c38840710958060000006c6174696e31710a86710b52710c85710d52710e736258"
    "0100000069710f680268035271107d71116806680768085834000000c389c3bac293c3b90000000001000000"
    "0200000000000000010000000000000006000000070000000000000008000000000000007112680a86711352"
    "711485711552711673625801000000637117680268035271187d7119680668076808582e000000c389c3bac2"
    "93c3b9000000000100000002000000000000000100000001000000000000000000c2803f0000c2803f711a68"
    "0a86711b52711c85711d52711e7362752e")


def test_unpickle_arrays_pickled_by_mxnet():
    class AsNeogluon(pickle.Unpickler):
        def find_class(self, module, name):
            if module.startswith("mxnet."):
                module = "neogluon." + module[len("mxnet."):]
            return super().find_class(module, name)

    got = AsNeogluon(io.BytesIO(bytes.fromhex(_MXNET_PICKLE))).load()
    assert isinstance(got["w"], nd.NDArray)
    np.testing.assert_array_equal(got["w"].asnumpy(), [[1.5, -2, 3], [4, 5, 6.25]])
    assert got["w"].dtype == np.float32 and got["i"].dtype == np.int64
    np.testing.assert_array_equal(got["i"].asnumpy(), [7, 8])
    # MXNet 1.9.1 unpickles an array saved on cpu(1) on cpu(0) too
    assert got["c"].context == mx.cpu(0)
    np.testing.assert_array_equal((got["w"] * 2).asnumpy()[0], [3, -4, 6])


def test_sparse_arrays_load_and_save_byte_identical(tmp_path):
    src = os.path.join(FIX, "mx_sparse.params")
    d = nd.load(src)
    assert [d[k].stype for k in ("rsp", "csr", "dense")] == ["row_sparse", "csr", "default"]
    np.testing.assert_array_equal(d["rsp"].asnumpy(), [[0, 0, 0], [0, 1, 2], [0, 0, 0],
                                                       [3, 4, 5], [0, 0, 0]])
    np.testing.assert_array_equal(d["csr"].asnumpy(), [[1, 0, 2, 0], [0, 0, 0, 0],
                                                       [0, 3, 0, 0]])
    out = tmp_path / "s.params"
    nd.save(str(out), d)
    with open(src, "rb") as f:
        assert out.read_bytes() == f.read()
