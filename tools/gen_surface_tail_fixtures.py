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


CASES = [case_record_iter_v1, case_sparse_outputs]


def compute(mx):
    out = {}
    for case in CASES:
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
