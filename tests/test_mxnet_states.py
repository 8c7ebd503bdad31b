"""MXNet 1.9.1's pickled optimizer states (Trainer.save_states / Updater.get_states) load into
neogluon through the restricted unpickler and training resumes with MXNet's numbers
(fixtures: tools/gen_states_fixtures.py); hostile pickles are refused and run nothing."""
import json
import os
import pickle
import sys
import types
import warnings

import numpy as np
import pytest

import neogluon as mx
from neogluon import gluon
from neogluon.base import MXNetError

import states_scenarios as S
from fixture_record import resolve
import trainer_scenarios as T

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "states")
ARR = np.load(os.path.join(FIX, "states.npz"))
with open(os.path.join(FIX, "states.json")) as _f:
    META = json.load(_f)["cases"]

# Forward and backward run in torch, not MXNet's BLAS: weights agree to float32 rounding.
RTOL, ATOL = 2e-5, 2e-6


def fixture(x):
    return resolve(x, ARR)


def path(name):
    return os.path.join(FIX, name)


def blob(name):
    with open(path(name), "rb") as f:
        return f.read()


def assert_close(got, want, **tol):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64), **tol)


def assert_states_equal(got, want):
    """Loaded state arrays equal MXNet's bit for bit, in dtype and shape too."""
    assert sorted(got) == sorted(want)
    for k in want:
        assert len(got[k]) == len(want[k]), k
        for g, w in zip(got[k], want[k]):
            assert g.dtype == w.dtype and g.shape == w.shape, k
            np.testing.assert_array_equal(g, w)


def assert_attrs(got, want):
    """Every attribute MXNet's optimizer has, with MXNet's value (neogluon may have more)."""
    for k, w in want.items():
        assert k in got, k
        if k == "lr_scheduler" and w is not None:
            assert got[k]["class"] == w["class"]
            for a, v in w["attrs"].items():
                assert got[k]["attrs"][a] == v, (k, a)
        else:
            assert got[k] == w, k


TRAINER_CASES = sorted((k, uok) for k in S.OPTIMIZERS if k not in S.UPDATER_ONLY
                       for uok in (True, False))
UPDATER_CASES = sorted(k[len("updater."):] for k in META if k.startswith("updater."))


# ---------------------------------------------------------------------- Trainer
@pytest.mark.parametrize("key,uok", TRAINER_CASES)
def test_trainer_resumes_from_mxnet_states(key, uok):
    want = fixture(META[f"trainer.{key}.{uok}"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = S.trainer_run(mx, path(want["file"]), key, uok, load={"saved": want["saved"]})
    assert got["loaded_type"] == want["loaded_type"]
    assert_attrs(got["loaded_attrs"], want["loaded_attrs"])
    assert got["lr_loaded"] == want["lr_loaded"]
    assert got["lr_end"] == pytest.approx(want["lr_end"], rel=1e-12)
    if key not in S.NOISY:
        # MXNet resumed from the same file: neogluon continues with its numbers.
        assert_close(got["weights"], want["resumed"], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("key,uok", TRAINER_CASES)
def test_trainer_states_file_arrays_are_exact(key, uok):
    want = fixture(META[f"trainer.{key}.{uok}"])
    upd = mx.optimizer.get_updater(mx.optimizer.SGD())
    upd.set_states(blob(want["file"]))
    assert_states_equal(S.state_arrays(upd.states), want["states"])
    assert type(upd.optimizer).__name__ == want["loaded_type"]
    assert_attrs(S.optimizer_attrs(upd.optimizer), want["file_attrs"])


FP16_CASES = sorted(tuple(k.split(".")[1:]) for k in META if k.startswith("trainer_fp16."))


@pytest.mark.parametrize("key,uok", FP16_CASES)
def test_multi_precision_trainer_resumes_from_mxnet_states(key, uok):
    """float16 Parameters with multi_precision: the states hold float32 master weights."""
    want = fixture(META[f"trainer_fp16.{key}.{uok}"])
    dtypes = {a.dtype for arrs in want["states"].values() for a in arrs}
    assert dtypes == {np.dtype(np.float32)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = S.trainer_fp16_run(mx, path(want["file"]), key, uok == "True",
                                 load={"saved": want["saved"]})
    assert_attrs(got["loaded_attrs"], want["loaded_attrs"])
    for g, w in zip(got["weights"], want["resumed"]):
        assert g.dtype == np.float16
        # float16 rounding of the same float32 master weights: at most one float16 ulp
        np.testing.assert_allclose(g.astype(np.float32), w.astype(np.float32),
                                   rtol=1e-3, atol=1e-4)
    upd = mx.optimizer.get_updater(mx.optimizer.SGD())
    upd.set_states(blob(want["file"]))
    assert_states_equal(S.state_arrays(upd.states), want["states"])


def test_trainer_resaves_in_its_own_format(tmp_path):
    """After loading MXNet's pickle the Trainer still writes neogluon's pickle-free file,
    and resuming from that one is exact."""
    want = fixture(META["trainer.adam.False"])
    ctxs = [mx.cpu(0), mx.cpu(1)]
    runs = []
    for reload in (False, True):
        net, plist = T.build(mx, ctxs, seed=1)
        for p, w in zip(plist, want["saved"]):
            p.set_data(mx.nd.array(w))
        name, params = S.make_optimizer_params(mx, "adam")
        tr = gluon.Trainer(net.collect_params(), name, params, update_on_kvstore=False)
        tr.load_states(path(want["file"]))
        T.forward_backward(mx, net, ctxs, 2)
        tr.step(T.BATCH)
        if reload:
            own = str(tmp_path / "own.states")
            tr.save_states(own)
            with open(own, "rb") as f:
                assert not f.read(1) == b"\x80"
            tr.load_states(own)
        T.forward_backward(mx, net, ctxs, 3)
        tr.step(T.BATCH)
        runs.append(T.snapshot(plist))
    assert_close(runs[1], runs[0], rtol=0, atol=0)
    assert_close(runs[0], want["resumed"], rtol=RTOL, atol=ATOL)


def test_trainer_rejects_mxnet_states_of_another_model():
    net = gluon.nn.Dense(7, in_units=2)
    net.initialize()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    before = tr.optimizer
    with pytest.raises(MXNetError, match="index 2|shape"):
        tr.load_states(path(META["trainer.sgd_mom.False"]["file"]))
    assert tr.optimizer is before
    tr2 = gluon.Trainer(T.build(mx, [mx.cpu()])[0].collect_params(), "sgd",
                        {"learning_rate": 0.1})
    with pytest.raises(MXNetError, match="Adam.*SGD"):
        tr2.load_states(path(META["trainer.adam.False"]["file"]))


# ---------------------------------------------------------------------- Updater
@pytest.mark.parametrize("tag", UPDATER_CASES)
def test_updater_resumes_from_mxnet_states(tag):
    want = fixture(META[f"updater.{tag}"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = S.updater_resume(mx, want["key"], want["dump"], want["saved"],
                               blob(want["file"]), want["dtype"], want["mp"])
    assert_states_equal(got["loaded_states"], want["states"])
    assert_attrs(got["attrs"], want["attrs"])
    if want["key"] in S.NOISY:
        return
    for g, w in zip(got["weights"], want["resumed"]):
        assert g.dtype == w.dtype
    # the same kernels as MXNet's on the same inputs
    tol = {"float32": dict(rtol=1e-6, atol=1e-7), "float16": dict(rtol=1e-3, atol=1e-4)}
    assert_close(got["weights"], want["resumed"], **tol[want["dtype"]])


def test_updater_set_states_accepts_bytearray_and_memoryview():
    data = blob(META["updater.adam.float32.plain.opt"]["file"])
    for form in (bytearray(data), memoryview(data)):
        upd = mx.optimizer.get_updater(mx.optimizer.SGD())
        upd.set_states(form)
        assert isinstance(upd.optimizer, mx.optimizer.Adam)
        assert upd.optimizer.num_update == 2
        assert upd.optimizer._index_update_count is upd.optimizer._all_index_update_counts[0]


# ---------------------------------------------------------------------- KVStore
@pytest.mark.parametrize("key", ["sgd_mom", "adam", "rmsprop_centered"])
def test_local_kvstore_loads_mxnet_states(key):
    case = fixture(META[f"updater.{key}.float32.plain.opt"])
    want = fixture(META[f"kvstore.{key}"])
    got = S.kvstore_resume(mx, key, path(case["file"]), case["saved"])
    assert_close(got["weights"], want["weights"], rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------- hostile pickles
class _Reduce:
    """Pickles as ``fn(*args)``."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


@pytest.fixture
def fake_mxnet(monkeypatch):
    """Modules named like MXNet's, so that test pickles reference MXNet's globals."""
    mods = {}
    for name in ("mxnet", "mxnet.ndarray", "mxnet.ndarray.ndarray", "mxnet.optimizer",
                 "mxnet.optimizer.optimizer", "mxnet.lr_scheduler"):
        mods[name] = types.ModuleType(name)
        monkeypatch.setitem(sys.modules, name, mods[name])

    def cls(module, name, body=None):
        c = type(name, (), dict(body or {}, __module__=module))
        c.__qualname__ = name
        setattr(mods[module], name, c)
        return c

    ns = types.SimpleNamespace()
    ns.NDArray = cls("mxnet.ndarray.ndarray", "NDArray", {
        "__init__": lambda self, raw=None: setattr(self, "raw", raw),
        "__reduce__": lambda self: (type(self), (None,), {"handle": self.raw})})
    ns.SGD = cls("mxnet.optimizer.optimizer", "SGD")
    ns.FactorScheduler = cls("mxnet.lr_scheduler", "FactorScheduler")
    return ns


def _mx_sgd_state(ns, **changes):
    """An MXNet-like (states, SGD optimizer) pair built from a real MXNet file's content."""
    real = mx.optimizer.get_updater(mx.optimizer.SGD())
    real.set_states(blob(META["trainer.sgd_mom.False"]["file"]))
    from neogluon.ndarray.io import _record
    states = {k: ns.NDArray(bytearray(_record(v, "x"))) for k, v in real.states.items()}
    opt = ns.SGD()
    opt.__dict__.update({k: v for k, v in vars(real.optimizer).items()
                         if k not in ("param_dict", "lr_scheduler")})
    opt.lr_scheduler = None
    opt.__dict__.update(changes)
    return states, opt


def _trainer():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    net, plist = T.build(mx, ctxs)
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9},
                       update_on_kvstore=False)
    T.forward_backward(mx, net, ctxs, 0)
    tr.step(T.BATCH)
    return tr


def _refused(tmp_path, data, pattern):
    """``data`` is refused by Updater.set_states and Trainer.load_states (unchanged)."""
    upd = mx.optimizer.get_updater(mx.optimizer.Adam())
    upd_states = dict(upd.states)
    with pytest.raises(MXNetError, match=pattern):
        upd.set_states(data)
    assert isinstance(upd.optimizer, mx.optimizer.Adam) and upd.states == upd_states
    tr = _trainer()
    opt_before = tr.optimizer
    mom_before = tr._updaters[0].states[0].asnumpy().copy()
    f = tmp_path / "evil.states"
    f.write_bytes(data)
    with pytest.raises(MXNetError, match=pattern):
        tr.load_states(str(f))
    assert tr.optimizer is opt_before
    np.testing.assert_array_equal(tr._updaters[0].states[0].asnumpy(), mom_before)


@pytest.mark.parametrize("proto", [2, 4, 5])
def test_os_system_pickle_is_refused_and_runs_nothing(tmp_path, proto):
    marker = tmp_path / "pwned"
    evil = pickle.dumps(_Reduce(os.system, f"touch {marker}"), protocol=proto)
    _refused(tmp_path, evil, r"refusing.*'(posix|nt|os)\.system'.*nothing in the pickle was run")
    assert not marker.exists()


def test_eval_exec_subprocess_and_torch_globals_are_refused(tmp_path):
    import builtins
    import subprocess
    import torch
    marker = tmp_path / "pwned"
    cases = [(_Reduce(builtins.eval, f"open({str(marker)!r}, 'w')"), "builtins.eval"),
             (_Reduce(builtins.exec, "import os"), "builtins.exec"),
             (_Reduce(subprocess.check_call, ["touch", str(marker)]),
              "subprocess.check_call"),
             (_Reduce(getattr, _Reduce(__import__, "os"), "system"), "builtins.getattr"),
             (torch.zeros(2), "torch"),
             (np.zeros(2), "numpy")]
    for obj, name in cases:
        _refused(tmp_path, pickle.dumps({0: obj}), f"'{name}")
    assert not marker.exists()


@pytest.mark.parametrize("proto", [2, 3, 4, 5])
def test_mxnet_like_states_of_every_pickle_protocol_load(fake_mxnet, proto):
    """MXNet wrote protocol 3 (Python < 3.8) or 4; protocols 2 and 5 load too."""
    states, opt = _mx_sgd_state(fake_mxnet)
    want = mx.optimizer.get_updater(mx.optimizer.SGD())
    want.set_states(blob(META["trainer.sgd_mom.False"]["file"]))
    upd = mx.optimizer.get_updater(mx.optimizer.Adam())
    upd.set_states(pickle.dumps((states, opt), protocol=proto))
    assert_states_equal(S.state_arrays(upd.states), S.state_arrays(want.states))
    assert S.optimizer_attrs(upd.optimizer) == S.optimizer_attrs(want.optimizer) | {
        "lr_scheduler": None}


def test_numpy_scalars_in_optimizer_attributes_load(fake_mxnet):
    states, opt = _mx_sgd_state(fake_mxnet, lr=np.float32(0.25), wd=np.float64(0.5),
                                begin_num_update=np.int64(0))
    upd = mx.optimizer.get_updater(mx.optimizer.Adam())
    upd.set_states(pickle.dumps((states, opt), protocol=2))
    assert isinstance(upd.optimizer, mx.optimizer.SGD)
    assert upd.optimizer.lr == 0.25 and type(upd.optimizer.lr) is float
    assert upd.optimizer.wd == 0.5 and upd.optimizer.begin_num_update == 0


def test_hostile_global_inside_mxnet_like_states_is_refused(tmp_path, fake_mxnet):
    marker = tmp_path / "pwned"
    states, opt = _mx_sgd_state(fake_mxnet)
    good = pickle.dumps((states, opt))
    upd = mx.optimizer.get_updater(mx.optimizer.SGD())
    upd.set_states(good)  # the MXNet-like pickle itself loads
    assert upd.optimizer.momentum == 0.9 and upd.optimizer.num_update == 2
    hook = _Reduce(os.system, f"touch {marker}")
    # in the optimizer's attributes, its scheduler, an NDArray's state, a state tuple
    _, opt2 = _mx_sgd_state(fake_mxnet, lr=hook)
    sched = fake_mxnet.FactorScheduler()
    sched.__dict__.update(base_lr=0.1, step=1, factor=hook)
    _, opt3 = _mx_sgd_state(fake_mxnet, lr_scheduler=sched)
    bad_nd = fake_mxnet.NDArray(hook)
    for data in (pickle.dumps((states, opt2)), pickle.dumps((states, opt3)),
                 pickle.dumps(({0: bad_nd}, opt)), pickle.dumps({0: (None, hook)})):
        _refused(tmp_path, data, r"'(posix|nt|os)\.system'")
    assert not marker.exists()


def test_unknown_optimizer_and_scheduler_classes_are_refused(tmp_path, fake_mxnet,
                                                             monkeypatch):
    states, opt = _mx_sgd_state(fake_mxnet)
    mod = types.ModuleType("mytrain")
    monkeypatch.setitem(sys.modules, "mytrain", mod)
    mine = type("MyOptimizer", (), {"__module__": "mytrain"})
    mod.MyOptimizer = mine
    custom = mine()
    custom.__dict__.update(vars(opt))
    _refused(tmp_path, pickle.dumps((states, custom)), "'mytrain.MyOptimizer'")
    lars_like = type("Evil", (), {"__module__": "mxnet.optimizer.optimizer"})
    lars_like.__qualname__ = "Evil"
    sys.modules["mxnet.optimizer.optimizer"].Evil = lars_like
    _refused(tmp_path, pickle.dumps((states, lars_like())), "'mxnet.optimizer.optimizer.Evil'")


def test_allowed_globals_misused_are_refused(tmp_path, fake_mxnet):
    # _codecs.encode (protocol 2's bytes) for latin-1 only
    _refused(tmp_path, pickle.dumps({0: _Reduce(__import__("_codecs").encode, "x", "rot13")}),
             "latin-1")
    # BUILD on an allowed function or class (would set attributes on neogluon's objects)
    from neogluon.optimizer import _mxstates
    for glob in (b"c__builtin__\nbytearray\n", b"cmxnet.optimizer.optimizer\nSGD\n",
                 b"cmxnet.ndarray.ndarray\nNDArray\n"):
        data = b"\x80\x02" + glob + b"}X\x08\x00\x00\x00__call__K\x01sb."
        with pytest.raises(MXNetError, match="pickle"):
            mx.optimizer.get_updater(mx.optimizer.SGD()).set_states(data)
    assert vars(_mxstates._bytearray) == {}
    # bytearray(n) would allocate n bytes: only bytearray(bytes) is MXNet's use
    _refused(tmp_path, pickle.dumps({0: _Reduce(bytearray, 10 ** 12)}), "bytearray")
    # NDArray(x) with an argument, an NDArray state that is not {'handle': bytes}
    _refused(tmp_path, pickle.dumps({0: _Reduce(fake_mxnet.NDArray, "x")}), "NDArray")
    _refused(tmp_path, pickle.dumps({0: fake_mxnet.NDArray("not bytes")}), "handle")
    # record bytes that are not an array record
    _refused(tmp_path, pickle.dumps({0: fake_mxnet.NDArray(bytearray(b"\x01\x02"))}),
             "key 0")
    # a state that is no array, a non-dict top level, a key MXNet never writes
    _refused(tmp_path, pickle.dumps({0: "a string"}), "str")
    _refused(tmp_path, pickle.dumps([1, 2]), "list")
    _refused(tmp_path, pickle.dumps({(1, 2): None}), "key")
    states, _ = _mx_sgd_state(fake_mxnet)
    _, opt = _mx_sgd_state(fake_mxnet, lr=float("nan"))
    _refused(tmp_path, pickle.dumps((states, opt)), "lr")


def test_truncated_mxnet_pickle_is_refused(tmp_path):
    data = blob(META["trainer.sgd_mom.False"]["file"])
    for cut in (3, len(data) // 3, len(data) - 2):
        _refused(tmp_path, data[:cut], "pickle")
