"""Fixtures for the small ``nd`` gaps: pick's index shapes, zero-size reshape/flatten, the
``nd`` namespace, a few simple operators, read-only numpy sources and the context op outputs
report for ``cpu_shared``/``cpu_pinned`` inputs.

    /tmp/mxref/bin/python tools/gen_nd_polish_fixtures.py     # write tests/fixtures/nd_polish/
    .venv/bin/python tools/gen_nd_polish_fixtures.py --missing
        # list the public names of MXNet 1.9.1's mx.nd that neogluon.nd lacks

Each case runs in a forked child, because MXNet 1.9.1 dies with SIGFPE on some zero-size
reshapes (a -1 next to a 0-sized dimension divides by zero); such cases are recorded as
``{"signal": 8}``.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "nd_polish")


def _err(e):
    """The first line of an MXNet error that says what went wrong."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    keep = [ln for ln in lines if ln.startswith("MXNetError:") or "Check failed" in ln]
    return {"error": type(e).__name__, "message": (keep or lines or [""])[0][:300]}


def _in_child(fn):
    """Run ``fn`` in a forked child; its JSON-able result, or the signal that killed it."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            res = fn()
        except Exception as e:  # noqa: BLE001 - recorded as data
            res = _err(e)
        os.write(w, json.dumps(res).encode())
        os.close(w)
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return {"signal": os.WTERMSIG(status)}
    return json.loads(data.decode())


def _out(x):
    return {"shape": list(x.shape), "dtype": np.dtype(x.dtype).name,
            "value": x.asnumpy().tolist(), "ctx": str(x.context), "stype": x.stype}


# ---------------------------------------------------------------------------- pick
def pick_cases(mx):
    nd = mx.nd
    x = np.arange(12, dtype="float32").reshape(3, 4)
    y = np.arange(24, dtype="float32").reshape(2, 3, 4)
    cases = []

    def add(name, data, index, **kw):
        cases.append(dict(name=name, data=np.asarray(data).tolist(),
                          data_dtype=np.asarray(data).dtype.name,
                          index=np.asarray(index).tolist(),
                          index_dtype=np.asarray(index).dtype.name, kwargs=kw))

    for mode in ("clip", "wrap"):
        for kd in (False, True):
            add(f"n1_{mode}_{kd}", x, np.array([[1], [2], [7]], "float32"), axis=1,
                keepdims=kd, mode=mode)
            add(f"n_{mode}_{kd}", x, np.array([-1, 5, 2], "float32"), axis=1, keepdims=kd,
                mode=mode)
            add(f"short_{mode}_{kd}", x, np.array([1, 2], "float32"), axis=1, keepdims=kd,
                mode=mode)
    add("long", x, np.array([1, 2, 3, 0], "float32"), axis=1)
    add("transposed", x, np.array([[1, 2, 3]], "float32"), axis=1)
    add("extra_axis", x, np.array([[[1]], [[2]], [[3]]], "float32"), axis=1)
    add("axis0_kept", x, np.array([[1, 2, 0, 1]], "float32"), axis=0)
    add("axis0_kept_kd", x, np.array([[1, 2, 0, 1]], "float32"), axis=0, keepdims=True)
    add("axis0_short", x, np.array([1, 2, 0], "float32"), axis=0)
    add("3d_axis1", y, np.array([[0, 1, 2, 3], [3, 2, 1, 0]], "float32"), axis=1)
    add("3d_axis1_kept", y, np.array([[[0, 1, 2, 3]], [[3, 2, 1, 0]]], "float32"), axis=1)
    add("3d_axis1_bad", y, np.array([[0, 1, 2, 3]], "float32"), axis=1)
    add("3d_axis_neg1", y, np.array([[0, 1, 2], [1, 1, 3]], "float32"), axis=-1,
        keepdims=True)
    add("3d_axis_neg1_kept", y, np.array([[[0], [1], [2]], [[1], [1], [3]]], "float32"),
        axis=-1, mode="wrap")
    add("default_axis", x, np.array([[1], [2], [3]], "float32"))
    add("fraction", x, np.array([0.7, 1.5, 2.9], "float32"), axis=1)
    add("int32_index", x, np.array([0, 1, 3], "int32"), axis=1)
    add("int32_data", x.astype("int32"), np.array([0, 1, 3], "float32"), axis=1)
    add("vector", np.array([1, 2, 3], "float32"), np.array([1], "float32"), axis=0)
    add("vector_kd", np.array([1, 2, 3], "float32"), np.array([5], "float32"), axis=0,
        keepdims=True, mode="wrap")
    add("axis_none", y, np.array([[0, 1, 2], [1, 1, 1]], "float32"), axis=None)
    add("axis_out_of_range", x, np.array([1, 2, 3], "float32"), axis=2)
    add("axis_out_of_range_neg", x, np.array([1, 2, 3], "float32"), axis=-3)
    add("mode_raise", x, np.array([1, 2, 3], "float32"), axis=1, mode="raise")

    def run(c):
        def fn():
            data = nd.array(np.array(c["data"], c["data_dtype"]), dtype=c["data_dtype"])
            index = nd.array(np.array(c["index"], c["index_dtype"]), dtype=c["index_dtype"])
            return _out(nd.pick(data, index, **c["kwargs"]))
        return fn
    for c in cases:
        c["result"] = _in_child(run(c))

    def grad():
        a = nd.array(x)
        a.attach_grad()
        with mx.autograd.record():
            r = nd.pick(a, nd.array([[1], [2], [7]]), axis=1, mode="wrap")
        r.backward(nd.array([1.0, 2.0, 3.0]))
        return {"out": _out(r), "grad": a.grad.asnumpy().tolist()}
    return {"cases": cases, "grad": _in_child(grad)}


# ---------------------------------------------------------------------------- zero-size
RESHAPES = [
    ((0, 3, 4), [(0, -1), (-1, 12), (-1,), (0, 12), (0, 3, 4), (0, 0, 0), (-3, 4), (12, -1),
                 (3, 4, -1), (5, -1), (-2,), (0, -2), (-4, -1, 1, 0, 0), (2, 0, -1),
                 (0, 0, -1), (-1, 3, 4), (0, 3, -1), (1, 2)]),
    ((3, 0, 4), [(0, -1), (3, -1), (-1, 4), (-1,), (0, 0, 0), (0, 0, -1), (-1, 0, 4)]),
    ((0,), [(-1,), (0,), (-1, 3)]),
    ((4, 0), [(0, -1), (-1, 0)]),
    # -4 with reverse=True: MXNet reverses the whole code list, so -4 follows its two values
    ((2, 12), [(0, 3, 4, -4), (0, -4, 3, 4), (-1, 4, -4)]),
    ((6, 4), [(3, -1, -4, 0)]),
]


def zero_size_cases(mx):
    nd = mx.nd
    out = {"reshape": [], "flatten": [], "dense": []}
    for shape, codes in RESHAPES:
        for code in codes:
            for reverse in (False, True):
                res = _in_child(lambda: list(nd.array(np.zeros(shape)).reshape(
                    code, reverse=reverse).shape))
                out["reshape"].append(dict(shape=list(shape), code=list(code),
                                           reverse=reverse, result=res))
    for shape in [(0, 3, 4), (3, 0, 4), (0,), (4, 0), (0, 5), (2, 3)]:
        for np_shape in (False, True):
            def fl(shape=shape, np_shape=np_shape):
                if np_shape:
                    mx.util.set_np_shape(True)
                a = nd.array(np.zeros(shape))
                return {"method": list(a.flatten().shape),
                        "Flatten": list(nd.Flatten(a).shape),
                        "flatten": list(nd.flatten(a).shape)}
            out["flatten"].append(dict(shape=list(shape), np_shape=np_shape,
                                       result=_in_child(fl)))
    for shape, flatten in [((0, 3, 4), True), ((0, 3, 4), False), ((0, 7), True)]:
        for np_shape in (False, True):
            def dense(shape=shape, flatten=flatten, np_shape=np_shape):
                if np_shape:
                    mx.util.set_np_shape(True)
                k = int(np.prod(shape[1:])) if flatten else shape[-1]
                r = nd.FullyConnected(nd.array(np.zeros(shape)), nd.ones((5, k)),
                                      nd.ones((5,)), num_hidden=5, flatten=flatten)
                return list(r.shape)
            out["dense"].append(dict(shape=list(shape), flatten=flatten, np_shape=np_shape,
                                     result=_in_child(dense)))
    return out


# ---------------------------------------------------------------------------- namespace
def namespace(mx):
    names = sorted(n for n in dir(mx.nd) if not n.startswith("_"))
    aliases = {n: hasattr(mx.nd, n) for n in
               ("Flatten", "flatten", "batch_flatten", "softrelu", "softsign", "log_softmax",
                "softmin", "cumsum", "crop", "amp_cast", "amp_multicast", "khatri_rao",
                "histogram")}
    fluent = {n: hasattr(mx.nd.NDArray, n) for n in
              ("flatten", "pick", "softmin", "log_softmax", "softsign", "cumsum")}
    return {"names": names, "hasattr": aliases, "fluent": fluent}


# ---------------------------------------------------------------------------- new operators
def op_cases(mx):
    nd = mx.nd
    rng = np.random.RandomState(7)
    x = rng.randn(3, 4).astype("float32")
    xi = rng.randint(-3, 5, size=(2, 3, 4)).astype("int32")
    cases = []

    def add(name, op, inputs, **kw):
        cases.append(dict(name=name, op=op, inputs=[np.asarray(a).tolist() for a in inputs],
                          dtypes=[np.asarray(a).dtype.name for a in inputs], kwargs=kw))
    add("cumsum_all", "cumsum", [x])
    add("cumsum_axis0", "cumsum", [x], axis=0)
    add("cumsum_axis_neg1", "cumsum", [x], axis=-1)
    add("cumsum_int", "cumsum", [xi], axis=1)
    add("cumsum_int_f32", "cumsum", [xi], axis=2, dtype="float32")
    add("cumsum_f64", "cumsum", [x], axis=1, dtype="float64")
    add("cumsum_bad_axis", "cumsum", [x], axis=2)
    add("crop", "crop", [x], begin=(1, 0), end=(3, 3))
    add("crop_step", "crop", [x], begin=(None, 3), end=(None, 0), step=(1, -1))
    add("amp_cast_f16", "amp_cast", [x], dtype="float16")
    add("amp_cast_int", "amp_cast", [xi], dtype="float16")
    add("amp_cast_back", "amp_cast", [x.astype("float16")], dtype="float32")
    # (MXNet's MKLDNN build refuses float16/float64 in amp_multicast, so float32 only here)
    add("amp_multicast", "amp_multicast", [x, x[:2]], num_outputs=2)
    add("amp_multicast_int", "amp_multicast", [x, xi[0]], num_outputs=2)
    add("khatri_rao", "khatri_rao", [rng.randn(2, 3).astype("float32"),
                                      rng.randn(4, 3).astype("float32")])
    add("khatri_rao_3", "khatri_rao", [rng.randn(2, 2).astype("float32"),
                                        rng.randn(3, 2).astype("float32"),
                                        rng.randn(1, 2).astype("float32")])
    add("khatri_rao_bad", "khatri_rao", [rng.randn(2, 3).astype("float32"),
                                          rng.randn(4, 2).astype("float32")])
    h = rng.uniform(-1, 3, size=(20,)).astype("float32")
    add("histogram_bins", "histogram", [h], bins=5)
    add("histogram_range", "histogram", [h], bins=4, range=(0.0, 2.0))
    add("histogram_edges", "histogram", [h, np.array([-1, 0, 0.5, 2, 3], "float32")])
    add("histogram_int", "histogram", [np.array([0, 1, 1, 2, 5, 9], "int32")], bins=3,
        range=(0, 9))
    add("softmin_temp", "softmin", [x], axis=0, temperature=2.0)
    add("softmin_f64", "softmin", [x], dtype="float64")
    add("log_softmax_temp", "log_softmax", [x], axis=0, temperature=0.5)
    add("softsign", "softsign", [x])
    add("choose_element_0index", "choose_element_0index", [x, np.array([1, 5, -1], "float32")])
    add("cast_storage_csr", "cast_storage", [x], stype="csr")
    add("cast_storage_rsp", "cast_storage", [x * (x > 0.5)], stype="row_sparse")

    def run(c):
        def fn():
            ins = [nd.array(np.array(a, d), dtype=d) for a, d in zip(c["inputs"], c["dtypes"])]
            kw = dict(c["kwargs"])
            r = getattr(nd, c["op"])(*ins, **kw)
            if isinstance(r, (list, tuple)):
                return {"outputs": [_out(o) for o in r]}
            return _out(r)
        return fn
    for c in cases:
        c["result"] = _in_child(run(c))
    return cases


# ---------------------------------------------------------------------------- read-only sources
def readonly(mx):
    nd = mx.nd
    out = {}
    b = np.broadcast_to(np.arange(3.0), (2, 3))
    out["broadcast_to"] = _out(nd.array(b))
    out["broadcast_to_f64"] = _out(nd.array(b, dtype="float64"))
    ro = np.arange(4, dtype="int32")
    ro.flags.writeable = False
    out["readonly_int32"] = _out(nd.array(ro))
    out["readonly_int32_keep"] = _out(nd.array(ro, dtype="int32"))
    return out


# ---------------------------------------------------------------------------- contexts
CTX_OPS = ["a", "a+1", "a+a", "a*2", "a/2", "a-1", "1-a", "-a", "a==a", "a.copy()",
           "a.reshape((3,2))", "a.reshape(-1)", "a[0]", "a[0:1]", "a[:, 1]", "a[0, 1]",
           "a[[0, 1]]", "a[:]", "a[1:2, :]", "a[None]", "a.astype('float64')",
           "a.astype('float32', copy=False)", "a.detach()", "a.T", "a.flatten()",
           "a.expand_dims(0)", "a.sum()", "a.squeeze()", "nd.relu(a)", "nd.exp(a)",
           "nd.softmax(a)", "nd.dot(a, a.T)", "nd.concat(a, a, dim=0)", "nd.zeros_like(a)",
           "nd.pick(a, nd.array([0, 1], ctx=s), axis=1)",
           "nd.FullyConnected(a, nd.ones((4, 3)), nd.zeros(4), num_hidden=4)",
           "nd.slice_axis(a, axis=1, begin=0, end=2)", "nd.split(a, 3)[0]",
           "nd.zeros((2,), ctx=s)", "nd.ones((2,), ctx=s)", "nd.empty((2,), ctx=s)",
           "nd.full((2,), 3, ctx=s)", "nd.arange(3, ctx=s)", "nd.eye(2, ctx=s)",
           "nd.linspace(0, 1, 3, ctx=s)", "nd.array(np.ones(3), ctx=s)",
           "nd.array([1, 2], ctx=s)", "nd.array(b, ctx=s)", "nd.array(a)",
           "b.copyto(s)", "b.as_in_context(s)", "a.as_in_context(s)",
           "a.copyto(nd.zeros((2, 3)))", "b.copyto(a)", "a.__iadd__(1)",
           "a.__setitem__(slice(None), b) or a", "a.reshape((3, 2)).copy()",
           "a[0].reshape((1, 3))", "(a + 1).reshape((3, 2))", "(a + 1).copy()",
           "Dense(4)(a)"]


def contexts(mx):
    nd = mx.nd
    out = {}
    for cname, (dev, i) in {"cpu_shared(0)": ("cpu_shared", 0), "cpu_shared(1)":
                            ("cpu_shared", 1), "cpu_pinned(0)": ("cpu_pinned", 0)}.items():
        s = mx.Context(dev, i)
        res = {}
        for expr in CTX_OPS:
            def fn(expr=expr, s=s):
                a = nd.ones((2, 3), ctx=s)
                b = nd.ones((2, 3))
                if expr == "Dense(4)(a)":
                    net = mx.gluon.nn.Dense(4)
                    net.initialize()
                    return str(net(a).context)
                return str(eval(expr, {"nd": nd, "np": np, "a": a, "b": b, "s": s}).context)
            res[expr] = _in_child(fn)

        def grads(s=s):
            a = nd.ones((2, 3), ctx=s)
            a.attach_grad()
            with mx.autograd.record():
                y = a * 2
            rec = str(y.context)
            y.backward()
            return {"grad": str(a.grad.context), "recorded": rec}
        res["grad"] = _in_child(grads)
        out[cname] = res
    return out


# ---------------------------------------------------------------------------- bad input
# Evaluated with x = nd.array(np.arange(6).reshape(2, 3)); each used to give a torch error
# (or, for the reductions, silently wrapped the axis) in neogluon.
BAD_INPUT = [
    "nd.take(x, nd.array([0, 1]), axis=3)", "nd.repeat(x, 2, axis=5)", "nd.flip(x, axis=4)",
    "nd.reverse(x, axis=3)", "nd.topk(x, axis=4)", "nd.sort(x, axis=3)",
    "nd.argsort(x, axis=3)", "nd.split(x, 2, axis=5)",
    "nd.slice_axis(x, axis=5, begin=0, end=1)", "nd.slice(x, begin=(0, 0, 0), end=(1, 1, 1))",
    "nd.swapaxes(x, 0, 4)", "nd.expand_dims(x, axis=5)", "nd.squeeze(x, axis=5)",
    "nd.sum(x, axis=4)", "nd.mean(x, axis=(0, 4))", "nd.max(x, axis=-5)",
    "nd.argmax(x, axis=4)", "nd.norm(x, axis=4)", "nd.moments(x, axes=(5,))",
    "nd.softmax(x, axis=4)", "nd.log_softmax(x, axis=4)", "nd.softmin(x, axis=4)",
    "nd.diag(nd.ones((2, 3, 4)), axis1=0, axis2=5)", "nd.depth_to_space(x, 2)",
    "nd.elemwise_add(x, nd.ones((2, 1)))", "nd.elemwise_mul(x, nd.ones((3,)))",
    "nd.ravel_multi_index(nd.array([[0, 1], [2, 3]]), shape=(2,))",
    "nd.zeros((2, -1))", "nd.ones((-1,))", "nd.eye(-1)", "nd.arange(0, 10, 0)",
    "nd.sum(x, axis=-2)", "nd.mean(x, axis=(0, -1))", "nd.elemwise_add(x, x)",
    "nd.one_hot(nd.array([0, 1]), 0)", "nd.one_hot(nd.array([0, 1]), -1)",
    "nd.full((2, 2), '3')",
    "nd.tile(x, 2)", "nd.gather_nd(x, nd.array([0, 1]))",
    "nd.UpSampling(x, scale=2, sample_type='nearest')", "nd.diag(x, k=5)", "nd.diag(x, k=2)",
    "nd.diag(x, k=-1)", "nd.diag(x, k=-2)", "nd.norm(x.astype('int32'))",
    "nd.norm(x.astype('int32'), ord=1, axis=1)", "nd.add_n(x, x.astype('float64'))",
    "nd.where(x > 1, x, x.astype('float64'))", "nd.arange(3, repeat=0)",
    "nd.linspace(0, 1, 2.5)", "nd.broadcast_to(x, (4, 2, 3))",
    "nd.broadcast_to(x.reshape((2, 1, 3)), (2, 4, 3))",
    "nd.broadcast_like(x.reshape((2, 1, 3)), nd.ones((5, 4)), lhs_axes=(1,), rhs_axes=(1,))",
    "nd.broadcast_like(x.reshape((1, 2, 3)), nd.ones((5, 4)), lhs_axes=0, rhs_axes=0)",
    "nd.relu(np.ones(3))", "x.expand_dims(5)", "x.expand_dims(-4)", "x.expand_dims(2)",
    "nd.slice(x, begin=(0, 0), end=(2, 3), step=(1, 0))", "nd.slice(x, begin=(0,), end=(9,))",
    "nd.slice(x, begin=(1,), end=(0,))",
]


def bad_input(mx):
    nd = mx.nd
    out = {}
    for expr in BAD_INPUT:
        def fn(expr=expr):
            x = nd.array(np.arange(6).reshape(2, 3))
            r = eval(expr, {"nd": nd, "np": np, "x": x})
            return _out(r[0] if isinstance(r, (list, tuple)) else r)
        out[expr] = _in_child(fn)
    return out


def main():
    import mxnet as mx
    os.makedirs(OUT, exist_ok=True)
    fixtures = {
        "pick": pick_cases(mx),
        "zero_size": zero_size_cases(mx),
        "namespace": namespace(mx),
        "ops": op_cases(mx),
        "readonly": readonly(mx),
        "contexts": contexts(mx),
        "bad_input": bad_input(mx),
    }
    path = os.path.join(OUT, "nd_polish.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(fixtures, f, indent=0, sort_keys=True)
    os.replace(tmp, path)
    print("wrote", path, os.path.getsize(path), "bytes")


def missing():
    """Names of MXNet 1.9.1's ``mx.nd`` (from the fixture) that ``neogluon.nd`` lacks."""
    sys.path.insert(0, os.path.join(HERE, ".."))
    from neogluon import nd
    with open(os.path.join(OUT, "nd_polish.json")) as f:
        names = json.load(f)["namespace"]["names"]
    miss = [n for n in names if not hasattr(nd, n)]
    print(f"{len(miss)} of {len(names)} public mx.nd names are missing in neogluon.nd:")
    print(" ".join(miss))


if __name__ == "__main__":
    if "--missing" in sys.argv:
        missing()
    else:
        main()
