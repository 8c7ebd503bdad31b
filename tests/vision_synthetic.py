"""Small synthetic files in the formats of MNIST and CIFAR-10/100 (deterministic bytes).

Shared by tests/test_gluon_data_vision.py and tools/gen_vision_fixtures.py, so that MXNet and
neogluon read exactly the same files.
"""
import gzip
import os
import struct

import numpy as np


def _gz(path, payload):
    # mtime=0 keeps the bytes (and so the SHA-1) identical between runs
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(payload)


def write_all(root):
    """Write the files below ``root``; returns {file name: path}."""
    rng = np.random.RandomState(5)
    out = {}
    mnist = os.path.join(root, "mnist")
    os.makedirs(mnist, exist_ok=True)
    for prefix, n in (("train", 7), ("t10k", 4)):
        images = rng.randint(0, 256, (n, 28, 28)).astype(np.uint8)
        labels = rng.randint(0, 10, n).astype(np.uint8)
        name = f"{prefix}-images-idx3-ubyte.gz"
        _gz(os.path.join(mnist, name), struct.pack(">IIII", 2051, n, 28, 28) + images.tobytes())
        out[name] = os.path.join(mnist, name)
        name = f"{prefix}-labels-idx1-ubyte.gz"
        _gz(os.path.join(mnist, name), struct.pack(">II", 2049, n) + labels.tobytes())
        out[name] = os.path.join(mnist, name)
    c10 = os.path.join(root, "cifar10")
    os.makedirs(c10, exist_ok=True)
    for name, n in [(f"data_batch_{i}.bin", 2) for i in range(1, 6)] + [("test_batch.bin", 3)]:
        rec = np.concatenate([rng.randint(0, 10, (n, 1)), rng.randint(0, 256, (n, 3072))], 1)
        with open(os.path.join(c10, name), "wb") as f:
            f.write(rec.astype(np.uint8).tobytes())
        out[name] = os.path.join(c10, name)
    c100 = os.path.join(root, "cifar100")
    os.makedirs(c100, exist_ok=True)
    for name, n in (("train.bin", 3), ("test.bin", 2)):
        rec = np.concatenate([rng.randint(0, 20, (n, 1)), rng.randint(0, 100, (n, 1)),
                              rng.randint(0, 256, (n, 3072))], 1)
        with open(os.path.join(c100, name), "wb") as f:
            f.write(rec.astype(np.uint8).tobytes())
        out[name] = os.path.join(c100, name)
    return out


def png_bytes(img):
    """An RGB uint8 HWC array encoded as a PNG file (no compression filters), by hand."""
    import zlib
    h, w, c = img.shape
    assert c == 3 and img.dtype == np.uint8

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
    raw = b"".join(b"\x00" + img[r].tobytes() for r in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
