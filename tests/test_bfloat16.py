"""bfloat16 NDArrays as MXNet 1.9.1 reports them (tests/fixtures/bfloat16, from
tools/gen_bfloat16_fixtures.py): ``.dtype`` is MXNet's structured dtype
``[('bfloat16', '<u2')]`` (not float32), ``asnumpy`` gives the raw bits in it, ``astype`` /
``Cast`` truncate float32 to bfloat16 and ``amp_cast`` rounds to nearest even."""
import json
import os

import numpy as np
import pytest

import neogluon as mx
from neogluon import amp
from neogluon.base import bfloat16 as BF

with open(os.path.join(os.path.dirname(__file__), "fixtures", "bfloat16", "cases.json")) as _f:
    FIX = json.load(_f)


def _x():
    return mx.nd.array(FIX["values"])


def test_dtype_report():
    b = _x().astype(BF)
    assert str(b.dtype) == FIX["dtype_str"]
    assert repr(b.dtype) == FIX["dtype_repr"]
    assert list(b.dtype.names) == FIX["dtype_names"]
    assert b.dtype.itemsize == FIX["itemsize"]
    assert (b.dtype == np.float32) is FIX["eq_float32"] is False
    assert b.dtype == amp.bfloat16 and FIX["eq_amp_bfloat16"]
    assert b.dtype == mx.nd.ndarray._DTYPE_MX_TO_NP[12] and FIX["eq_code12"]
    assert mx.nd.ndarray._DTYPE_NP_TO_MX[b.dtype] == 12
    assert np.dtype(b.dtype).name == FIX["np_name"]
    assert str(mx.nd.zeros((2,), dtype=BF).dtype) == FIX["zeros_dtype"]
    assert str((b + b).dtype) == FIX["sum_dtype"]
    assert str(b.astype(np.float16).dtype) == FIX["to_float16_dtype"]
    # the name 'bfloat16' is taken too (MXNet 1.9.1 refuses it: a superset)
    assert mx.nd.ones(2).astype("bfloat16").dtype == BF
    assert mx.nd.ones(2, dtype="bfloat16").dtype == BF


def test_conversions_bits():
    x = _x()
    assert x.astype(BF).asnumpy().view(np.uint16).tolist() == FIX["astype_bits"]
    assert mx.nd.Cast(x, dtype=BF).asnumpy().view(np.uint16).tolist() == FIX["cast_bits"]
    got = mx.nd.amp_cast(x, dtype=BF).asnumpy().view(np.uint16).tolist()
    assert got == FIX["amp_cast_bits"]
    b = x.astype(BF)
    assert b.astype("float32").asnumpy().tolist() == pytest.approx(FIX["back_to_float32"])
    assert mx.nd.ones((2,), dtype=BF).asnumpy().view(np.uint16).tolist() == FIX["ones_bits"]
    assert (b + b).asnumpy().view(np.uint16).tolist() == FIX["sum_bits"]


def test_asnumpy_and_back():
    b = _x().astype(BF)
    n = b.reshape((2, 5)).asnumpy()
    assert str(n.dtype) == FIX["asnumpy_dtype"] and list(n.shape) == FIX["asnumpy_shape"]
    back = mx.nd.array(b.asnumpy(), dtype=BF)
    assert back.asnumpy().view(np.uint16).tolist() == FIX["roundtrip_bits"]
    assert mx.nd.array(b.asnumpy()).dtype == BF     # the bits keep their type


def test_symbol_types():
    x = mx.sym.var("x", dtype=BF)
    assert [str(t) for t in mx.sym.exp(x).infer_type()[1]] == FIX["symbol_infer_type"]
    assert x.attr("__dtype__") == FIX["symbol_var_dtype_attr"]


def test_cast_gradient_passes():
    y = mx.nd.array([1.7, 2.0])
    y.attach_grad()
    with mx.autograd.record():
        z = (y.astype(BF) * 3).astype("float32").sum()
    z.backward()
    assert y.grad.asnumpy().tolist() == [3.0, 3.0]


def test_amp_accepts_the_dtype():
    assert amp.list_lp16_ops(BF) == amp.list_lp16_ops("bfloat16")
