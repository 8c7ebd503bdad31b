"""Parameter, Constant and ParameterDict: behaviour and errors as in MXNet 1.9.1."""
import weakref

import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, gluon, nd
from neogluon.gluon import nn

from gluon_fixture_utils import fixture_json

ERR = fixture_json()["errors"]


def _check_error(exc_info, key):
    name, msg = ERR[key]
    assert type(exc_info.value).__name__ == name
    assert str(exc_info.value) == msg


def test_errors_match_mxnet():
    p = gluon.Parameter("weight", shape=(2, 0), allow_deferred_init=True)
    p.initialize()
    with pytest.raises(gluon.DeferredInitializationError) as e:
        p.data()
    _check_error(e, "deferred_data")
    assert isinstance(e.value, mx.MXNetError)
    q = gluon.Parameter("weight", shape=(2, 3))
    with pytest.raises(RuntimeError) as e:
        q.data()
    _check_error(e, "uninit_data")
    q.initialize(ctx=mx.cpu(0))
    with pytest.raises(RuntimeError) as e:
        q.data(mx.cpu(1))
    _check_error(e, "wrong_ctx")
    with pytest.raises(ValueError) as e:
        gluon.Parameter("w", shape=(2, 0)).initialize()
    _check_error(e, "invalid_shape")
    n = gluon.Parameter("n", shape=(2,), grad_req="null")
    n.initialize()
    with pytest.raises(RuntimeError) as e:
        n.grad()
    _check_error(e, "null_grad")
    with pytest.raises(AssertionError) as e:
        gluon.Parameter("b", grad_req="sometimes")
    _check_error(e, "bad_grad_req")
    pd = gluon.ParameterDict("p_")
    pd.get("w", shape=(2, 3))
    with pytest.raises(AssertionError) as e:
        pd.get("w", shape=(4, 3))
    _check_error(e, "conflict")
    with pytest.raises(AssertionError) as e:
        pd.get("w", lr_mult=2.0)
    _check_error(e, "conflict_lr")


def test_deferred_init_filled_on_first_forward():
    d = nn.Dense(3)
    d.initialize()
    assert d.weight.shape == (3, 0)
    with pytest.raises(gluon.DeferredInitializationError):
        d.weight.data()
    assert d.weight.list_ctx() == [mx.cpu()]
    d(nd.ones((2, 5)))
    assert d.weight.shape == (3, 5)
    w = d.weight.data().asnumpy()
    assert np.abs(w).max() <= 0.07 and np.abs(w).max() > 0
    np.testing.assert_array_equal(d.bias.data().asnumpy(), np.zeros(3))


def test_set_data_before_deferred_init_is_used():
    d = nn.Dense(2)
    d.initialize()
    d.weight.set_data(nd.ones((2, 3)))
    y = d(nd.ones((1, 3)))
    np.testing.assert_array_equal(y.asnumpy(), [[3.0, 3.0]])


def test_multi_context_copies_are_independent():
    p = gluon.Parameter("w", shape=(2, 2))
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    a, b = p.list_data()
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    a[:] = 5
    assert not (b.asnumpy() == 5).any()
    assert p.data(mx.cpu(1)) is b and p.list_ctx() == [mx.cpu(0), mx.cpu(1)]
    assert len(p.list_grad()) == 2 and p.grad(mx.cpu(1)).context == mx.cpu(1)
    p.set_data(nd.ones((2, 2)))
    for d in p.list_data():
        np.testing.assert_array_equal(d.asnumpy(), np.ones((2, 2)))
    p.reset_ctx(mx.cpu(2))
    assert p.list_ctx() == [mx.cpu(2)]
    np.testing.assert_array_equal(p.data().asnumpy(), np.ones((2, 2)))


def test_reset_ctx_averages_copies():
    p = gluon.Parameter("w", shape=(2,))
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    p.list_data()[0][:] = 1
    p.list_data()[1][:] = 3
    p.reset_ctx([mx.cpu(0)])
    np.testing.assert_array_equal(p.data().asnumpy(), [2.0, 2.0])


def test_grad_buffers_persist_and_grad_req_changes():
    p = gluon.Parameter("w", shape=(3,), init=mx.init.One())
    p.initialize()
    g = p.grad()
    x = p.data()
    for k in range(1, 3):
        with autograd.record():
            y = (p.data() * k).sum()
        y.backward()
        assert p.grad() is g
        np.testing.assert_array_equal(g.asnumpy(), [k, k, k])
        assert p.data()._fresh_grad
    p.grad_req = "add"
    g = p.grad()
    for _ in range(2):
        with autograd.record():
            (p.data() * 2).sum().backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), [4, 4, 4])
    p.zero_grad()
    np.testing.assert_array_equal(p.grad().asnumpy(), [0, 0, 0])
    assert p.grad() is g
    p.grad_req = "null"
    assert p._grad is None
    with pytest.raises(RuntimeError, match="grad_req='null'"):
        p.grad()
    with autograd.record():
        y = p.data() * 2
    assert not y._t.requires_grad
    p.grad_req = "write"
    with autograd.record():
        (p.data() * 3).sum().backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), [3, 3, 3])
    assert x.asnumpy().tolist() == [1, 1, 1]


def test_differentiable_false_forces_null():
    p = gluon.Parameter("rm", shape=(2,), differentiable=False)
    assert p.grad_req == "null"
    p.grad_req = "write"
    assert p.grad_req == "null"


def test_cast_and_dtype():
    p = gluon.Parameter("w", shape=(2,), init="ones")
    p.initialize()
    p.cast("float64")
    assert p.data().dtype == np.float64 and p.grad().dtype == np.float64
    with autograd.record():
        (p.data() * 2).sum().backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), [2, 2])
    p.dtype = "float16"
    assert p.data().dtype == np.float16


def test_initialize_twice_warns_and_force_reinit():
    p = gluon.Parameter("w", shape=(2,), init="zeros")
    p.initialize()
    with pytest.warns(UserWarning, match="already initialized"):
        p.initialize()
    p.initialize(init=mx.init.One(), force_reinit=True)
    np.testing.assert_array_equal(p.data().asnumpy(), [1, 1])


def test_shape_setter_compatibility():
    p = gluon.Parameter("w", shape=(0, 3))
    p.shape = (4, 3)
    assert p.shape == (4, 3)
    with pytest.raises(AssertionError, match="incompatible"):
        p.shape = (5, 3)


def test_constant():
    c = gluon.Constant("const", [[1, 2], [3, 4]])
    assert repr(c) == "Constant const (shape=(2, 2), dtype=<class 'numpy.float32'>)"
    c.initialize()
    np.testing.assert_array_equal(c.data().asnumpy(), [[1, 2], [3, 4]])
    assert c.grad_req == "null"
    with pytest.warns(UserWarning, match="does not support grad_req"):
        c.grad_req = "write"
    assert c.grad_req == "null"
    c.set_data(nd.zeros((2, 2)))
    np.testing.assert_array_equal(c.data().asnumpy(), np.zeros((2, 2)))

    class WithConst(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.const = self.params.get_constant("const", [[1, 2], [3, 4]])

        def hybrid_forward(self, F, x, const):
            return x + const

    b = WithConst()
    b.initialize()
    x = nd.ones((2, 2))
    x.attach_grad()
    with autograd.record():
        y = b(x)
    y.backward()
    np.testing.assert_array_equal(y.asnumpy(), [[2, 3], [4, 5]])
    assert b.const._grad is None


def test_parameterdict_get_shared_update_setattr():
    pd = gluon.ParameterDict("a_")
    w = pd.get("w", shape=(0, 3))
    assert pd.get("w", shape=(4, 0)) is w and w.shape == (4, 3)
    assert pd.get("w", dtype=np.float32) is w
    shared = gluon.ParameterDict("b_", shared=pd)
    assert shared.get("w") is not w  # prefix differs: b_w is new
    s2 = gluon.ParameterDict("a_", shared=pd)
    assert s2.get("w") is w
    other = gluon.ParameterDict("c_")
    other.get("z", shape=(1,))
    pd.update(other)
    assert list(pd.keys()) == ["a_w", "c_z"]
    bad = gluon.ParameterDict("")
    bad._params["a_w"] = gluon.Parameter("a_w")
    with pytest.raises(AssertionError, match="different Parameters with the same name"):
        pd.update(bad)
    pd.setattr("lr_mult", 0.5)
    assert all(p.lr_mult == 0.5 for p in pd.values())
    pd.setattr("grad_req", "null")
    assert all(p.grad_req == "null" for p in pd.values())
    with pytest.raises(KeyError, match="No constant named"):
        pd.get_constant("nothing")
    pd.get_constant("k", [1.0, 2.0])
    with pytest.raises(AssertionError, match="value doesn't match"):
        pd.get_constant("k", [1.0, 3.0])
    assert "a_w" in pd and len(pd) == 3


def test_parameterdict_initialize_zero_grad_list_ctx():
    pd = gluon.ParameterDict("x_")
    pd.get("a", shape=(2,))
    pd.get("b", shape=(3,), init="ones")
    pd.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    assert sorted(map(str, pd.list_ctx())) == ["cpu(0)", "cpu(1)"]
    np.testing.assert_array_equal(pd["x_b"].data(mx.cpu(1)).asnumpy(), np.ones(3))
    for p in pd.values():
        for g in p.list_grad():
            g[:] = 7
    pd.zero_grad()
    for p in pd.values():
        for g in p.list_grad():
            assert not g.asnumpy().any()


def test_parameterdict_save_load(tmp_path):
    pd = gluon.ParameterDict("net_")
    pd.get("w", shape=(2, 2))
    pd.initialize()
    f = str(tmp_path / "p.params")
    pd.save(f, strip_prefix="net_")
    assert sorted(nd.load(f)) == ["w"]
    with pytest.raises(ValueError, match="is to be striped before saving"):
        pd.save(f, strip_prefix="other_")
    pd2 = gluon.ParameterDict("net_")
    pd2.get("w", shape=(2, 2))
    pd2.load(f, restore_prefix="net_")
    np.testing.assert_array_equal(pd2["net_w"].data().asnumpy(), pd["net_w"].data().asnumpy())
    with pytest.raises(AssertionError, match="restore_prefix"):
        pd2.load(f, restore_prefix="zzz_")


def test_trainer_link_contract():
    class FakeTrainer:
        _kv_initialized = True
        _update_on_kvstore = True
        _params_to_init = []
        resets = 0

        def _reset_kvstore(self):
            FakeTrainer.resets += 1

    p = gluon.Parameter("w", shape=(2,))
    p.initialize()
    t = FakeTrainer()
    p._set_trainer(t)
    assert p._trainer is t and isinstance(p._trainer_ref, weakref.ref)
    p._set_trainer(None)
    assert p._trainer is None
    p._set_trainer(t)
    p.set_data(nd.ones((2,)))
    assert FakeTrainer.resets == 1
    sp = gluon.Parameter("s", shape=(2,), stype="row_sparse")
    sp._set_trainer(t)
    with pytest.raises(RuntimeError, match="More than one trainers"):
        sp._set_trainer(FakeTrainer())
    assert p._check_and_get(p._data, list) is p._data
    with pytest.raises(RuntimeError, match="storage type is row_sparse"):
        sp.data()
    with pytest.raises(RuntimeError, match="via row_sparse_data"):
        p.row_sparse_data(nd.array([0]))


def test_repr_formats():
    pd = gluon.ParameterDict("pre_")
    pd.get("weight", shape=(2, 3))
    pd.get_constant("const", [[1, 2], [3, 4]])
    assert repr(pd) == fixture_json()["naming"]["paramdict_repr"]
