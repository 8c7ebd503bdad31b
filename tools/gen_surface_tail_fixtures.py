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


CASES = [case_record_iter_v1]


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
