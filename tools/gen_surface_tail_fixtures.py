"""Record MXNet 1.9.1's results for the last names of its surface that neogluon provides
(tests/test_surface_tail.py checks neogluon against them).

    /tmp/mxref/bin/python tools/gen_surface_tail_fixtures.py

Writes tests/fixtures/surface/tail.json. Each ``case_*`` function takes the module (``mxnet``
or neogluon through the alias) and a scratch folder and returns a JSON-able result; the test
runs the same functions on neogluon, so both sides compute exactly the same things.
"""
import json
import os
import struct
import sys
import tempfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "tests", "fixtures", "surface", "tail.json")


def _png(img):
    """PNG bytes of an HxWx3 uint8 image (no imaging library on either side needed)."""
    h, w, _ = img.shape
    raw = b"".join(b"\0" + img[r].tobytes() for r in range(h))

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def _images(n=10):
    rng = np.random.RandomState(0)
    return [(rng.rand(40 + i, 50, 3) * 255).astype(np.uint8) for i in range(n)]


def _write_rec(mx, folder):
    rec_path = os.path.join(folder, "t.rec")
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(folder, "t.idx"), rec_path, "w")
    for i, img in enumerate(_images()):
        rec.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i % 3), i, 0),
                                          _png(img)))
    rec.close()
    return rec_path


def case_record_iter_v1(mx, folder):
    """ImageRecordIter_v1 / ImageRecordUInt8Iter_v1: pad, index, labels and pixels over two
    epochs, round_batch on and off, float32 with normalisation and uint8."""
    rec = _write_rec(mx, folder)
    out = {}
    for cls, kw in [("ImageRecordIter_v1", {}), ("ImageRecordIter_v1", {"round_batch": False}),
                    ("ImageRecordIter_v1", {"mean_r": 10, "std_b": 4, "scale": 0.5,
                                            "resize": 36}),
                    ("ImageRecordUInt8Iter_v1", {})]:
        it = getattr(mx.io, cls)(path_imgrec=rec, data_shape=(3, 32, 32), batch_size=4, **kw)
        epochs = []
        for _ in range(2):
            epochs.append([{"pad": b.pad, "index": [int(i) for i in b.index],
                            "label": b.label[0].asnumpy().tolist(),
                            "dtype": str(b.data[0].dtype),
                            "sum": float(b.data[0].asnumpy().astype(np.float64).sum()),
                            "corner": b.data[0].asnumpy()[:, :, 0, 0].tolist()} for b in it])
            it.reset()
        out[cls + repr(sorted(kw.items()))] = epochs
    return out


def case_sparse_outputs(mx, folder):
    """nd.sparse's regression outputs (csr data; dense, csr and row_sparse labels) and the
    straight-through estimators (csr, row_sparse, dense): output and gradient, with storage
    types; the same through sym.sparse on an executor."""
    out = {}
    dense = [[0, 1.5, 0], [2, 0, 0], [0, 0, 0], [1, 0, 3]]
    for lstype in ["default", "csr", "row_sparse"]:
        for op in ["LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput"]:
            lab = mx.nd.array([[1, 0, 0], [0, 2, 0], [0, 0, 0], [1, 0, 1]])
            if lstype != "default":
                lab = lab.tostype(lstype)
            x = mx.nd.array(dense).tostype("csr")
            x.attach_grad()
            with mx.autograd.record():
                y = getattr(mx.nd.sparse, op)(x, lab, grad_scale=2.0)
            y.backward()
            out[f"{op}/{lstype}"] = [y.stype, y.asnumpy().tolist(), x.grad.stype,
                                     x.grad.asnumpy().tolist()]
    for op in ["_contrib_round_ste", "_contrib_sign_ste"]:
        for st in ["csr", "row_sparse", "default"]:
            x = mx.nd.array([[0, 1.5, 0], [-2.5, 0, 0.4]]).tostype(st)
            x.attach_grad()
            with mx.autograd.record():
                y = getattr(mx.nd.sparse, op)(x)
            y.backward()
            out[f"{op}/{st}"] = [y.stype, y.asnumpy().tolist(), x.grad.stype,
                                 x.grad.asnumpy().tolist()]
    x, lab = mx.sym.var("x"), mx.sym.var("l")
    args = {"x": mx.nd.array([[1, 2.6], [3, -4]]), "l": mx.nd.array([[0, 1], [1, 1]])}
    for op in ["LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput",
               "_contrib_round_ste", "_contrib_sign_ste"]:
        fn = getattr(mx.sym.sparse, op)
        y = fn(x) if "ste" in op else fn(x, lab, grad_scale=2.0)
        names = y.list_arguments()
        ex = y.bind(mx.cpu(), {k: args[k] for k in names},
                    args_grad={k: mx.nd.zeros((2, 2)) for k in names})
        res = ex.forward(is_train=True)
        ex.backward([mx.nd.ones((2, 2))] if "ste" in op else None)
        out[f"sym/{op}"] = [names, y.list_outputs(), res[0].asnumpy().tolist(),
                            {k: v.asnumpy().tolist() for k, v in ex.grad_dict.items()}]
    return out


def _arr(mx, rng, shape, dtype="float32"):
    return mx.nd.array(rng.randn(*shape), dtype=dtype)


def case_internal_optimizers(mx, folder):
    """nd._internal's AdamW and LAMB kernels in their flat-argument forms: the new weights,
    the states and (mixed precision) the float32 copies after two steps. (MXNet's
    multi-tensor forms need ``out``: without it they fail on an unknown output shape.)"""
    out = {}
    rng = np.random.RandomState(3)

    def pack(arrs):
        return [a.asnumpy().astype(np.float64).round(6).tolist() for a in arrs]

    w, g, m, v = (_arr(mx, rng, (2, 3)) for _ in range(4))
    v = mx.nd.abs(v)
    res = []
    for step in range(2):
        r = mx.nd._internal._adamw_update(w, g, m, v, mx.nd.array([0.5]), lr=0.1, eta=0.7,
                                          wd=0.01, beta1=0.8, epsilon=1e-6)
        res.append(pack([r, m, v]))
        w = r
    res.append(pack([g]))   # MXNet's kernel leaves the rescaled gradient in grad
    before = pack([w, g])
    mx.nd._internal._adamw_update(w, g, m, v, mx.nd.array([0.0]), lr=0.1, eta=0.7, out=w)
    res.append([before, pack([w, g])])   # rescale_grad 0: skipped
    out["adamw"] = res

    w16 = _arr(mx, rng, (2, 3), "float16")
    w32 = w16.astype("float32")
    g16 = _arr(mx, rng, (2, 3), "float16")
    m, v = mx.nd.zeros((2, 3)), mx.nd.zeros((2, 3))
    r = mx.nd._internal._mp_adamw_update(w16, g16, m, v, w32, mx.nd.array([1.0]), lr=0.05,
                                         eta=1.0, wd=0.1, clip_gradient=0.5)
    out["mp_adamw"] = pack([r, m, v, w32]) + [str(r.dtype.__name__)]

    for mp in (False, True):
        wtype = "float16" if mp else "float32"
        ws = [_arr(mx, rng, (3,), wtype), _arr(mx, rng, (2, 2), wtype)]
        gs = [_arr(mx, rng, a.shape, wtype) for a in ws]
        ms = [mx.nd.zeros(a.shape) for a in ws]
        vs = [mx.nd.zeros(a.shape) for a in ws]
        w32s = [a.astype("float32") for a in ws]
        flat = [x for grp in zip(ws, gs, ms, vs, *([w32s] if mp else [])) for x in grp]
        name = "_multi_mp_adamw_update" if mp else "_multi_adamw_update"
        r = getattr(mx.nd._internal, name)(*flat, mx.nd.array([2.0]), lrs=(0.1, 0.2),
                                           wds=(0.0, 0.5), etas=(1.0, 0.5), num_weights=2,
                                           beta2=0.9, out=ws)
        out[name] = pack(list(r) + ms + vs + (w32s if mp else []))
        ws = [_arr(mx, rng, (3,), wtype), _arr(mx, rng, (2, 2), wtype)]
        gs = [_arr(mx, rng, a.shape, wtype) for a in ws]
        ms = [mx.nd.zeros(a.shape) for a in ws]
        vs = [mx.nd.zeros(a.shape) for a in ws]
        w32s = [a.astype("float32") for a in ws]
        flat = [x for grp in zip(ws, gs, ms, vs, *([w32s] if mp else [])) for x in grp]
        name = "_multi_mp_lamb_update" if mp else "_multi_lamb_update"
        r = getattr(mx.nd._internal, name)(*flat, learning_rates=(0.1, 0.2), wds=(0.0, 0.5),
                                           step_count=(1, 3), num_tensors=2,
                                           rescale_grad=0.5, lower_bound=0.1,
                                           upper_bound=10.0, out=ws)
        out[name] = pack(list(r) + ms + vs + (w32s if mp else []))
    return out


def case_internal_scatter(mx, folder):
    """_scatter_plus_scalar/_scatter_minus_scalar (dense, row_sparse, csr),
    _scatter_elemwise_div over every storage pair and _scatter_set_nd."""
    out = {}

    def show(r):
        return [r.stype, r.asnumpy().tolist(),
                r.indices.asnumpy().tolist() if r.stype != "default" else None]
    d = mx.nd.array([[0, 1.5, 0], [2, 0, 0], [0, 0, 0], [1, 0, 3]])
    for st in ["default", "row_sparse", "csr"]:
        x = d.tostype(st)
        out[f"plus/{st}"] = show(mx.nd._internal._scatter_plus_scalar(x, scalar=2))
        out[f"minus/{st}"] = show(mx.nd._internal._scatter_minus_scalar(x, scalar=0.5))
        out[f"plus_float/{st}"] = show(mx.nd._internal._scatter_plus_scalar(
            x, scalar=2.5, is_int=False))
    r = mx.nd.array([[2, 2, 2], [4, 4, 4], [1, 1, 1], [0.5, 0.5, 0.5]])
    for ls in ["default", "row_sparse", "csr"]:
        for rs in ["default", "row_sparse", "csr"]:
            out[f"div/{ls}/{rs}"] = show(mx.nd._internal._scatter_elemwise_div(
                d.tostype(ls), r.tostype(rs)))
    x = mx.nd.array([1., 2])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd._internal._scatter_plus_scalar(x, scalar=1) * 3
    y.backward()
    out["plus_grad"] = x.grad.asnumpy().tolist()
    x, r2 = mx.nd.array([1., 2]), mx.nd.array([4., 8])
    x.attach_grad()
    r2.attach_grad()
    with mx.autograd.record():
        y = mx.nd._internal._scatter_elemwise_div(x, r2)
    y.backward()
    out["div_grad"] = [x.grad.asnumpy().tolist(), r2.grad.asnumpy().tolist()]
    o = mx.nd.ones((2, 2))
    res = mx.nd._internal._scatter_set_nd(lhs=o, rhs=mx.nd.array([2, 3, 0]),
                                          indices=mx.nd.array([[1, 1, 0], [0, 1, 0]]),
                                          shape=(2, 2), out=o)
    out["set_nd"] = [res.asnumpy().tolist(), o.asnumpy().tolist()]
    o = mx.nd.ones((2, 3))
    mx.nd._internal._scatter_set_nd(lhs=o, rhs=mx.nd.array([[7, 8, 9]]),
                                    indices=mx.nd.array([[1]]), shape=(2, 3), out=o)
    out["set_nd_rows"] = o.asnumpy().tolist()
    try:
        mx.nd._internal._scatter_set_nd(lhs=o, rhs=mx.nd.array([[7, 8, 9]]),
                                        indices=mx.nd.array([[1]]), shape=(2, 3)).asnumpy()
        out["set_nd_no_out"] = "ok"
    except mx.base.MXNetError:
        out["set_nd_no_out"] = "MXNetError"
    return out


def case_selfatt(mx, folder):
    """contrib.interleaved_matmul_selfatt_qk/valatt, whose float math oneDNN's fused
    _sg_mkldnn_selfatt_qk/valatt nodes compute (MXNet 1.9.1 crashes when those nodes run
    outside its subgraph pass, so the test compares them with these values)."""
    rng = np.random.RandomState(0)
    qkv = mx.nd.array(rng.randn(4, 2, 3 * 2 * 5))
    qk = mx.nd.contrib.interleaved_matmul_selfatt_qk(qkv, heads=2)
    att = mx.nd.softmax(qk, axis=-1)
    val = mx.nd.contrib.interleaved_matmul_selfatt_valatt(qkv, att, heads=2)
    return {"qk": qk.asnumpy().tolist(), "valatt": val.asnumpy().tolist()}


def case_imdecode(mx, folder):
    """nd.imdecode: MXNet 1.9.1 fails on every call on Python 3 (recorded as such)."""
    img = _images(1)[0]
    try:
        r = mx.nd.imdecode(_png(img))
        return {"result": r.asnumpy().tolist()}
    except mx.base.MXNetError:
        return {"result": "MXNetError"}


def case_operator_arguments(mx, folder):
    """mx.operator.get_operator_arguments: the namedtuple's fields and, for common
    operators, the argument names (neogluon writes the types from its own signatures, so
    they are not compared)."""
    out = {"fields": list(mx.operator.OperatorArguments._fields)}
    for op in ["FullyConnected", "Convolution", "elemwise_add", "sum", "_contrib_box_nms",
               "add_n", "softmax", "_plus_scalar", "BatchNorm", "Dropout", "LeakyReLU",
               "Activation", "Pooling", "Embedding", "SoftmaxOutput", "topk", "_linalg_gemm2",
               "Custom", "LinearRegressionOutput"]:
        r = mx.operator.get_operator_arguments(op)
        out[op] = [r.narg, r.names, r.types[:len(r.names) - len([t for t in r.types
                                                               if "NDArray" not in t])]]
    try:
        mx.operator.get_operator_arguments("no_such_operator")
        out["unknown"] = "ok"
    except mx.base.MXNetError:
        out["unknown"] = "MXNetError"
    return out


CASES = [case_record_iter_v1, case_sparse_outputs, case_internal_optimizers,
         case_internal_scatter, case_selfatt, case_operator_arguments]
MXNET_ONLY = [case_imdecode]


def compute(mx):
    out = {}
    for case in CASES + MXNET_ONLY:
        with tempfile.TemporaryDirectory() as folder:
            out[case.__name__[5:]] = case(mx, folder)
    return json.loads(json.dumps(out))


def main():
    import mxnet as mx
    result = compute(mx)
    with open(OUT, "w") as f:
        json.dump({"mxnet_version": mx.__version__, "results": result}, f, sort_keys=True)
        f.write("\n")
    print("->", OUT)


if __name__ == "__main__":
    sys.exit(main())
