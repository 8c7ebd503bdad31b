"""The single-process KVStore against MXNet 1.9.1 fixtures (tools/gen_kvstore_fixtures.py)."""
import json
import os
import warnings

import numpy as np
import pytest
import torch

import neogluon as mx
from neogluon import nd
from neogluon.base import MXNetError
from neogluon.kvstore.compression import GradientCompression

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "kvstore")
A = np.load(os.path.join(FIX, "kvstore.npz"))
with open(os.path.join(FIX, "kvstore.json")) as _f:
    META = json.load(_f)

ERRORS = {"MXNetError": MXNetError, "AssertionError": AssertionError, "ValueError": ValueError,
          "TypeError": TypeError, "Exception": Exception}


def _expect(name):
    rec = META["errors"][name]
    return ERRORS[rec["error"]]


def _need_optimizer():
    # The optimizer layer is built alongside the store; these tests run once it is there.
    opt = pytest.importorskip("neogluon.optimizer")
    if not hasattr(opt, "get_updater"):
        pytest.skip("neogluon.optimizer is not complete yet")


def _shapes():
    return [(3, 4), (5,), (2, 2, 3)]


# ---------------------------------------------------------------------- creation / properties
@pytest.mark.parametrize("name", sorted(META["types"]))
def test_create_types(name):
    kv = mx.kv.create(name)
    rec = META["types"][name]
    assert kv.type == rec["type"]
    assert type(kv).__name__ == rec["class"]
    assert kv.rank == rec["rank"] and kv.num_workers == rec["num_workers"]
    assert kv.is_capable("optimizer") is rec["optimizer"]
    assert isinstance(kv, mx.kv.KVStoreBase)


def test_create_errors():
    with pytest.raises(TypeError, match="name must be a string"):
        mx.kv.create(3)
    # Without a launcher, a distributed store is a job of one worker (rank 0 of 1).
    for name in ("dist_sync", "dist_device_sync"):
        kv = mx.kv.create(name)
        assert type(kv).__name__ == "DistKVStore" and kv.type == name
        assert (kv.rank, kv.num_workers) == (0, 1)
    kv = mx.kv.create("nccl")
    assert kv.type == "nccl" and kv.is_capable("optimizer")
    with pytest.raises(ValueError, match="Unknown capability: foo"):
        kv.is_capable("foo")


# ---------------------------------------------------------------------- summation order
@pytest.mark.parametrize("n", [2, 3, 5, 6])
@pytest.mark.parametrize("kind", ["local", "device", "local_allreduce_cpu",
                                  "local_allreduce_device"])
def test_sum_order_bit_exact(n, kind):
    kv = mx.kv.create(kind)
    kv.init(0, nd.zeros(64))
    kv.push(0, [nd.array(A[f"sum{n}_in{j}"], ctx=mx.cpu(j)) for j in range(n)])
    out = nd.zeros(64, ctx=mx.cpu(1))
    kv.pull(0, out=out)
    np.testing.assert_array_equal(out.asnumpy(), A[f"sum{n}_{kind}"])
    assert out.context == mx.cpu(1)


@pytest.mark.parametrize("kind", ["local", "device"])
def test_sum_order_batched_and_coalesced(kind):
    # Many keys in one call, with sources that are views into one flat buffer (the Trainer's
    # layout), must give the same bits as key-by-key pushes.
    n = 3
    ins = [A[f"sum{n}_in{j}"] for j in range(n)]
    flats = [torch.from_numpy(np.concatenate([x, x[::-1].copy()])) for x in ins]
    vals = [[nd.from_torch(f[:64]), nd.from_torch(f[64:])] for f in flats]
    kv = mx.kv.create(kind)
    kv.init([0, 1], [nd.zeros(64), nd.zeros(64)])
    kv.push([0, 1], [[vals[j][0] for j in range(n)], [vals[j][1] for j in range(n)]])
    outs = [nd.zeros(64), nd.zeros(64)]
    kv.pull([0, 1], out=outs)
    np.testing.assert_array_equal(outs[0].asnumpy(), A[f"sum{n}_{kind}"])
    kv2 = mx.kv.create(kind)
    kv2.init(1, nd.zeros(64))
    kv2.push(1, [nd.array(x[::-1].copy()) for x in ins])
    ref = nd.zeros(64)
    kv2.pull(1, out=ref)
    np.testing.assert_array_equal(outs[1].asnumpy(), ref.asnumpy())


# ---------------------------------------------------------------------- several keys
@pytest.mark.parametrize("tag,keys", [("int", [3, 7, 9]), ("str", ["w", "b", "c"])])
def test_broadcast_pushpull_pull(tag, keys):
    kv = mx.kv.create("device")
    init = [A[f"multi_{tag}_init{j}"] for j in range(3)]
    outs = [[nd.zeros(s, ctx=mx.cpu(c)) for c in range(2)] for s in _shapes()]
    kv.broadcast(keys, [nd.array(x) for x in init], out=outs)
    for j in range(3):
        np.testing.assert_array_equal(outs[j][1].asnumpy(), A[f"multi_{tag}_bcast{j}"])
        np.testing.assert_array_equal(outs[j][0].asnumpy(), A[f"multi_{tag}_bcast{j}"])
    vals = [[nd.array(A[f"multi_{tag}_g{j}_{c}"], ctx=mx.cpu(c)) for c in range(2)]
            for j in range(3)]
    kv.pushpull(keys, vals)
    for j in range(3):
        for c in range(2):
            np.testing.assert_array_equal(vals[j][c].asnumpy(), A[f"multi_{tag}_pp{j}"])
    kv.pull(keys[1], out=outs[1])
    np.testing.assert_array_equal(outs[1][0].asnumpy(), A[f"multi_{tag}_pull1"])


def test_push_replaces_and_pushpull_out():
    kv = mx.kv.create("local")
    kv.init(0, nd.ones((2, 3)) * 2)
    a = nd.zeros((2, 3))
    kv.pull(0, out=a)
    assert (a.asnumpy() == 2).all()
    kv.push(0, [nd.ones((2, 3), ctx=mx.cpu(i)) for i in range(4)])
    kv.pull(0, out=a)
    assert (a.asnumpy() == 4).all()
    x = nd.ones((2, 3)) * 8
    kv.push(0, x)
    x[:] = 5  # the store keeps the value as pushed
    kv.pull(0, out=a)
    assert (a.asnumpy() == 8).all()
    outs = [nd.zeros((2, 3), ctx=mx.cpu(i)) for i in range(3)]
    kv.pushpull(0, [nd.ones((2, 3)), nd.ones((2, 3)) * 3], out=outs)
    for o in outs:
        assert (o.asnumpy() == 4).all()
    # one key pushed twice in one call: the values are summed
    kv.push([0, 0], [nd.ones((2, 3)), nd.ones((2, 3))])
    kv.pull(0, out=a)
    assert (a.asnumpy() == 2).all()


# ---------------------------------------------------------------------- updaters
def test_custom_updater():
    kv = mx.kv.create("local")
    kv.init(5, nd.ones(3))

    def upd(key, inp, stored):
        assert key == 5
        stored[:] = stored * 0.5 + inp * 2

    kv._set_updater(upd)
    kv.push(5, [nd.array([1.0, 2.0, 3.0]), nd.array([0.5, 0.5, 0.5], ctx=mx.cpu(1))])
    out = nd.zeros(3)
    kv.pull(5, out=out)
    np.testing.assert_array_equal(out.asnumpy(), A["custom_updater"])


def test_custom_updater_str_key():
    kv = mx.kv.create("device")
    kv.init("w", nd.ones(2))
    seen = []

    def upd(key, inp, stored):
        seen.append(key)
        stored += inp * 2

    kv._set_updater(upd)
    kv.push(["w", "w"], [nd.ones(2), nd.ones(2)])
    out = nd.zeros(2)
    kv.pull("w", out=out)
    assert seen == ["w"] and (out.asnumpy() == 5).all()


@pytest.mark.parametrize("optname", ["sgd", "adam"])
def test_optimizer_in_store(optname):
    _need_optimizer()
    kwargs = META[f"opt_{optname}"]
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.create(optname, **kwargs))
    kv.init([0, 1, 2], [nd.array(A[f"opt_{optname}_w0_{j}"]) for j in range(3)])
    for step in range(3):
        outs = [[nd.zeros(s, ctx=mx.cpu(c)) for c in range(2)] for s in _shapes()]
        vals = [[nd.array(A[f"opt_{optname}_s{step}_g{j}_{c}"], ctx=mx.cpu(c)) for c in range(2)]
                for j in range(3)]
        kv.pushpull([0, 1, 2], vals, out=outs)
        for j in range(3):
            np.testing.assert_allclose(outs[j][1].asnumpy(), A[f"opt_{optname}_s{step}_w{j}"],
                                       rtol=1e-6, atol=1e-6)
            np.testing.assert_array_equal(outs[j][0].asnumpy(), outs[j][1].asnumpy())


def test_optimizer_states_roundtrip(tmp_path):
    _need_optimizer()
    kv = mx.kv.create("device")
    kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9))
    kv.init(0, nd.ones(4))
    kv.push(0, [nd.ones(4), nd.ones(4)])
    fname = str(tmp_path / "states")
    kv.save_optimizer_states(fname, dump_optimizer=True)
    kv.push(0, nd.ones(4))
    a = nd.zeros(4)
    kv.pull(0, out=a)
    kv2 = mx.kv.create("device")
    kv2.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9))
    kv2.init(0, nd.ones(4))
    kv2.push(0, [nd.ones(4), nd.ones(4)])
    kv2.load_optimizer_states(fname)
    kv2.push(0, nd.ones(4))
    b = nd.zeros(4)
    kv2.pull(0, out=b)
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".tmp")]


# ---------------------------------------------------------------------- compression
@pytest.mark.parametrize("case", META["compression"], ids=lambda c: c["tag"])
def test_2bit_compression_bit_exact(case):
    tag, thr, nsrc = case["tag"], case["threshold"], case["sources"]
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": thr})
    kv.init("k", nd.zeros(37))
    for step in range(case["steps"]):
        kv.push("k", [nd.array(A[f"comp_{tag}_s{step}_g{c}"], ctx=mx.cpu(c))
                      for c in range(nsrc)])
        out = nd.zeros(37)
        kv.pull("k", out=out)
        np.testing.assert_array_equal(out.asnumpy(), A[f"comp_{tag}_s{step}_out"])


def test_2bit_compression_with_optimizer():
    _need_optimizer()
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.3})
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    kv.init(0, nd.array(A["comp_sgd_w0"]))
    for step in range(4):
        outs = [nd.zeros((4, 5), ctx=mx.cpu(c)) for c in range(2)]
        kv.pushpull(0, [nd.array(A[f"comp_sgd_s{step}_g{c}"], ctx=mx.cpu(c)) for c in range(2)],
                    out=outs)
        # the quantised sums are bit exact (test above); the update is the optimizer's maths
        np.testing.assert_allclose(outs[1].asnumpy(), A[f"comp_sgd_s{step}_w"], rtol=1e-6,
                                   atol=1e-7)


def test_2bit_default_threshold():
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit"})
    kv.init(0, nd.zeros(5))
    kv.push(0, [nd.array([0.3, 0.6, -0.7, -0.2, 1.6])] * 2)
    out = nd.zeros(5)
    kv.pull(0, out=out)
    np.testing.assert_array_equal(out.asnumpy(), A["comp_default_threshold"])


def _one_bit_reference(grads, threshold):
    # MXNet 2.x's 1-bit rule, written out: r += g; send +1 (r -= 1) where r > t, else -1
    # (r += 1); the receiver sums what the sources sent.
    residuals = [np.zeros_like(g[0]) for g in grads]
    outs = []
    for step in range(len(grads[0])):
        total = None
        for s, gs in enumerate(grads):
            r = residuals[s] + gs[step]
            q = np.where(r > np.float32(threshold), np.float32(1), np.float32(-1))
            residuals[s] = (r - q).astype(np.float32)
            total = q if total is None else (total + q).astype(np.float32)
        outs.append(total)
    return outs


def test_1bit_compression():
    rng = np.random.RandomState(3)
    grads = [[rng.randn(41).astype(np.float32) for _ in range(3)] for _ in range(2)]
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "1bit", "threshold": 0.1})
    kv.init(0, nd.zeros(41))
    expected = _one_bit_reference(grads, 0.1)
    for step in range(3):
        kv.push(0, [nd.array(grads[s][step], ctx=mx.cpu(s)) for s in range(2)])
        out = nd.zeros(41)
        kv.pull(0, out=out)
        np.testing.assert_array_equal(out.asnumpy(), expected[step])


@pytest.mark.parametrize("ctype", ["2bit", "1bit"])
def test_compression_pack_roundtrip(ctype):
    gc = GradientCompression(ctype, 0.5)
    g = torch.from_numpy(np.random.RandomState(1).randn(53).astype(np.float32))
    r = torch.zeros(53)
    r2 = torch.zeros(53)
    packed = gc.quantize(g, r)
    assert packed.dtype == torch.float32 and packed.numel() == gc.compressed_size(53)
    assert gc.compressed_size(53) == (4 if ctype == "2bit" else 2)
    dense = gc.quantize_(g, r2)
    np.testing.assert_array_equal(gc.dequantize(packed, 53).numpy(), dense.numpy())
    np.testing.assert_array_equal(r.numpy(), r2.numpy())


def test_2bit_packed_layout():
    # MXNet's layout: value i sits in byte i // 4, high bits first; 11 = +t, 10 = -t.
    gc = GradientCompression("2bit", 0.5)
    q = torch.tensor([0.5, -0.5, 0.0, 0.5] + [0.0] * 12 + [-0.5])
    raw = gc.pack(q).view(torch.uint8).tolist()
    assert raw[0] == 0b11100011 and raw[1:4] == [0, 0, 0] and raw[4] == 0b10000000


@pytest.mark.parametrize("name,params", [
    ("gc_unknown", {"type": "3bit"}),
    ("gc_negative", {"type": "2bit", "threshold": -1}),
    ("gc_zero", {"type": "2bit", "threshold": 0}),
    ("gc_no_type", {"threshold": 0.5}),
    ("gc_bad_threshold", {"type": "2bit", "threshold": "abc"}),
    ("gc_not_dict", "2bit"),
    ("gc_unknown_key", {"type": "2bit", "foo": 1}),
])
def test_compression_param_errors(name, params):
    kv = mx.kv.create("device")
    rec = META["errors"][name]
    if rec["error"] is None:
        kv.set_gradient_compression(params)
        return
    with pytest.raises(ERRORS[rec["error"]]) as info:
        kv.set_gradient_compression(params)
    assert type(info.value).__name__ == rec["error"]
    for phrase in ("Unknown type for gradient compression 3bit", "threshold must be greater "
                   "than 0", "Required parameter type", "expect float but value='abc'",
                   "unexpected type for param_dict"):
        if phrase in rec["message"]:
            assert phrase in str(info.value)


def test_compression_only_on_device_stores():
    with pytest.raises(Exception, match="Gradient compression is not supported for this type"):
        mx.kv.create("local").set_gradient_compression({"type": "2bit"})
    mx.kv.create("local_allreduce_device").set_gradient_compression({"type": "2bit"})


# ---------------------------------------------------------------------- errors
def test_errors_match_mxnet(tmp_path):
    kv = mx.kv.create("local")
    kv.init(3, nd.ones((2, 3)))
    with pytest.raises(_expect("duplicate_init"), match="duplicate init of key 3"):
        kv.init(3, nd.ones((2, 3)))
    with pytest.raises(_expect("mixed_keys"), match="Mixed key types are not allowed"):
        kv.init("a", nd.ones((2, 3)))
    with pytest.raises(_expect("mixed_keys_one_call"), match="inconsistent types of keys"):
        mx.kv.create("local").init([6, "b"], [nd.ones(2)] * 2)
    with pytest.raises(_expect("push_uninit"), match="key 5 has not been inited"):
        kv.push(5, nd.ones((2, 3)))
    with pytest.raises(_expect("pull_uninit"), match="key 5 has not been inited"):
        kv.pull(5, out=nd.ones((2, 3)))
    with pytest.raises(_expect("pull_shape"), match=r"\(2, 3\).*\(2, 4\)"):
        kv.pull(3, out=nd.ones((2, 4)))
    with pytest.raises(_expect("init_one_key_two_values"), match="duplicate init of key 7"):
        kv.init(7, [nd.ones((2, 3)), nd.ones((2, 3))])
    assert 7 not in kv._store  # a failed init leaves nothing behind
    with pytest.raises(_expect("float_key"), match="unexpected type for keys"):
        kv.push(1.5, nd.ones((2, 3)))
    with pytest.raises(_expect("pull_no_out")):
        kv.pull(3)
    with pytest.raises(_expect("save_no_updater"), match="Cannot save states"):
        kv.save_optimizer_states(str(tmp_path / "x"))
    with pytest.raises(_expect("row_sparse_pull_no_row_ids")):
        kv.row_sparse_pull(3, out=nd.ones((2, 3)))


def test_push_shape_and_dtype_errors_leave_store_unchanged():
    kv = mx.kv.create("local")
    kv.init(0, nd.ones((2,)))
    with pytest.raises(MXNetError, match=r"key 0 holds shape \(2,\).*\(3,\)"):
        kv.push(0, [nd.ones((3,)), nd.ones((3,))])
    with pytest.raises(MXNetError, match="dtype float32.*float16"):
        kv.push(0, nd.ones((2,), dtype="float16"))
    with pytest.raises(MXNetError, match=r"\(2,\).*\(5,\)"):
        kv.pushpull(0, nd.zeros((2,)), out=nd.zeros((5,)))
    out = nd.zeros((2,))
    kv.pull(0, out=out)
    assert (out.asnumpy() == 1).all()


# ---------------------------------------------------------------------- registry
def test_register_custom_store():
    class MyTinyStore(mx.kv.KVStoreBase):
        def __init__(self):
            self.calls = []

        def broadcast(self, key, value, out, priority=0):
            for o in (out if isinstance(out, list) else [out]):
                o[:] = value

        def pushpull(self, key, value, out=None, priority=0):
            self.calls.append(key)

        def is_capable(self, capability):
            return False

        @property
        def type(self):
            return "mytinystore"

    mx.kv.KVStoreBase.register(MyTinyStore)
    try:
        kv = mx.kv.create("MyTinyStore")
        assert type(kv) is MyTinyStore and kv.type == "mytinystore"
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")

            class mytinystore(mx.kv.KVStoreBase):  # noqa: N801 - same lowercased name
                pass

            mx.kv.KVStoreBase.register(mytinystore)
        assert any("overriding existing kvstore" in str(x.message) for x in w)
    finally:
        mx.kv.KVStoreBase.kv_registry.pop("mytinystore", None)
    with pytest.raises(AssertionError):
        mx.kv.KVStoreBase.register(3)


def test_teststore():
    kv = mx.kv.create("teststore")
    assert kv.type == "teststore" and not kv.is_capable("optimizer")
    vals = [nd.ones(3, ctx=mx.cpu(0)), nd.ones(3, ctx=mx.cpu(1)) * 2]
    kv.pushpull(0, vals)
    assert (vals[1].asnumpy() == 3).all() and (vals[0].asnumpy() == 3).all()
    out = nd.zeros(3)
    kv.broadcast(0, nd.ones(3) * 7, out=out)
    assert (out.asnumpy() == 7).all()
    with pytest.raises(ValueError, match="Unknown capability"):
        kv.is_capable("sparse")


def test_barrier_and_values_keep_contexts():
    kv = mx.kv.create("device")
    kv.barrier()
    kv._barrier()
    kv.init(0, nd.zeros(3, ctx=mx.cpu(2)))
    outs = [nd.zeros(3, ctx=mx.cpu(i)) for i in range(3)]
    kv.pushpull(0, [nd.ones(3, ctx=mx.cpu(i)) for i in range(3)], out=outs)
    assert [o.context for o in outs] == [mx.cpu(0), mx.cpu(1), mx.cpu(2)]
    assert all((o.asnumpy() == 3).all() for o in outs)


@pytest.mark.parametrize("threads", [1, 2])
def test_streaming_copy_kernel_matches_torch(threads):
    from neogluon.kvstore import _kernels
    old_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        rng = np.random.RandomState(4)
        sizes = [(300001,), (7,), (513, 3), (1,)]
        results = {}
        for enabled in (True, False):
            old = _kernels.set_enabled(enabled)
            try:
                kv = mx.kv.create("device")
                vals = [rng.randn(*s).astype(np.float32) for s in sizes]
                kv.init(list(range(4)), [nd.array(v) for v in vals])
                # outputs that are unaligned views (offset by one float) into bigger buffers
                bufs = [[torch.zeros(int(np.prod(s)) + 1) for _ in range(3)] for s in sizes]
                outs = [[nd.from_torch(b[1:].view(s)) for b in bb] for s, bb in zip(sizes, bufs)]
                outs[3].append(nd.zeros(1, dtype="float64"))  # a dtype torch has to convert
                kv.pull(list(range(4)), out=outs)
                results[enabled] = [[o.asnumpy() for o in oo] for oo in outs]
                for v, oo in zip(vals, outs):
                    for o in oo:
                        np.testing.assert_array_equal(o.asnumpy().astype(np.float32), v)
                assert all((b[0] == 0).all() for bb in bufs for b in bb)
            finally:
                _kernels.set_enabled(old)
    finally:
        torch.set_num_threads(old_threads)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("offset", [0, 1])
def test_in_place_two_context_pushpull_fused_sum(monkeypatch, threads, offset):
    """pushpull(keys, grads) on two contexts with coalesced sources sums and writes back in
    one pass: the same bits as the torch path, the stored value is the sum, and nothing
    outside the sources moves (offset: sources not 16-byte aligned)."""
    from neogluon.kvstore import _kernels
    calls = []
    real = _kernels.sum2_bcast
    monkeypatch.setattr(_kernels, "sum2_bcast",
                        lambda *a: real(*a) and (calls.append(1) or True))
    old_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    rng = np.random.RandomState(9)
    sizes = [(70001,), (3, 5), (1,), (200003,)]
    total = sum(int(np.prod(s)) for s in sizes)
    vals = [[rng.randn(*s).astype(np.float32) for s in sizes] for _ in range(2)]
    results = {}
    try:
        for enabled in (True, False):
            old = _kernels.set_enabled(enabled)
            calls.clear()
            try:
                kv = mx.kv.create("device")
                kv.init(list(range(4)), [nd.zeros(s) for s in sizes])
                grads, flats = [], []
                for c in range(2):  # one flat buffer per context, as the Trainer buckets
                    flat = torch.full((total + offset + 1,), 7.0)
                    flats.append(flat)
                    off = offset
                    for i, s in enumerate(sizes):
                        n = int(np.prod(s))
                        flat[off:off + n] = torch.from_numpy(vals[c][i].ravel())
                        off += n
                    grads.append([nd.from_torch(flat[o:o + int(np.prod(s))].view(s))
                                  for o, s in zip(np.cumsum([offset] + [int(np.prod(s))
                                                                       for s in sizes])[:-1],
                                                  sizes)])
                per_key = [[grads[0][i], grads[1][i]] for i in range(4)]
                kv.pushpull(list(range(4)), per_key)
                assert calls == ([1] if enabled else [])
                got = [[g.asnumpy() for g in gl] for gl in per_key]
                results[enabled] = got
                for i in range(4):
                    want = vals[0][i] + vals[1][i]
                    np.testing.assert_array_equal(got[i][0], want)
                    np.testing.assert_array_equal(got[i][1], want)
                    out = nd.zeros(sizes[i])
                    kv.pull(i, out=out)
                    np.testing.assert_array_equal(out.asnumpy(), want)
                for flat in flats:  # the guard elements either side are untouched
                    assert flat[-1] == 7.0 and (offset == 0 or flat[0] == 7.0)
            finally:
                _kernels.set_enabled(old)
    finally:
        torch.set_num_threads(old_threads)
    for a, b in zip(results[True], results[False]):
        np.testing.assert_array_equal(a[0], b[0])


def _plan_store(opt):
    kv = mx.kv.create("device")
    kv.set_optimizer(opt)
    return kv


def test_repeated_pushpull_plan_matches_general_path():
    """A repeated list pushpull runs through the remembered plan (kvstore/local.py
    _PushPullPlan); the numbers equal the general path's (tuples never take a plan), step
    after step, as the gradients change in place, and a changed array, optimizer or key
    drops the plan."""
    rng = np.random.RandomState(3)
    shapes = [(4, 3), (3,), (2, 5)]
    keys = ["w0", "b0", "w1"]
    init = [rng.randn(*s).astype(np.float32) for s in shapes]
    stores, weights, grads = [], [], []
    for _ in range(2):
        kv = _plan_store(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=1e-3))
        kv.init(keys, [nd.array(a) for a in init])
        stores.append(kv)
        weights.append([[nd.zeros(s)] for s in shapes])
        grads.append([[nd.zeros(s)] for s in shapes])
    for step in range(5):
        gvals = [rng.randn(*s).astype(np.float32) for s in shapes]
        for side in range(2):
            for g, v in zip(grads[side], gvals):
                g[0][:] = v
        stores[0].pushpull(keys, grads[0], out=weights[0])
        stores[1].pushpull(tuple(keys), tuple(grads[1]), out=tuple(weights[1]))
        for a, b in zip(weights[0], weights[1]):
            np.testing.assert_array_equal(a[0].asnumpy(), b[0].asnumpy())
    assert stores[0]._pp_plan is not None and stores[1]._pp_plan is None
    plan = stores[0]._pp_plan
    # a new gradient array: the general path runs (and checks), and a new plan is made
    grads[0][1] = [nd.ones((3,))]
    grads[1][1] = [nd.ones((3,))]
    stores[0].pushpull(keys, grads[0], out=weights[0])
    stores[1].pushpull(tuple(keys), tuple(grads[1]), out=tuple(weights[1]))
    assert stores[0]._pp_plan is not plan
    for a, b in zip(weights[0], weights[1]):
        np.testing.assert_array_equal(a[0].asnumpy(), b[0].asnumpy())
    # a wrong output shape is still refused, naming the key, plan or not
    bad = [w for w in weights[0]]
    bad[2] = [nd.zeros((5, 2))]
    with pytest.raises(MXNetError, match="w1"):
        stores[0].pushpull(keys, grads[0], out=bad)
    # another optimizer: its maths, not the remembered updater's
    before = weights[0][0][0].asnumpy().copy()
    stores[0].set_optimizer(mx.optimizer.SGD(learning_rate=1.0))
    for g in grads[0]:
        g[0][:] = 1.0
    stores[0].pushpull(keys, grads[0], out=weights[0])
    np.testing.assert_allclose(weights[0][0][0].asnumpy(), before - 1.0, rtol=1e-6)


def test_pushpull_plan_sees_replaced_store_value():
    """A stored value replaced behind the plan (kv.init on a fresh store entry, or the
    store's weight moving) is noticed: the plan checks the stored objects each call."""
    kv = _plan_store(mx.optimizer.SGD(learning_rate=0.5))
    kv.init(["a"], [nd.ones((2,))])
    g, w = [[nd.ones((2,))]], [[nd.zeros((2,))]]
    kv.pushpull(["a"], g, out=w)
    kv.pushpull(["a"], g, out=w)
    np.testing.assert_allclose(w[0][0].asnumpy(), [0.0, 0.0])
    kv._store["a"] = nd.array([10.0, 10.0])
    kv.pushpull(["a"], g, out=w)
    np.testing.assert_allclose(w[0][0].asnumpy(), [9.5, 9.5])
