"""Record mx.io.ImageRecordIter / ImageRecordUInt8Iter outputs from real MXNet 1.9.1 with its
augmentation arguments, over a fixed .rec of synthetic PNGs (tests/fixtures/image_record_aug).

    /tmp/mxref/bin/python tools/gen_image_record_aug_fixtures.py

Deterministic configurations (augmentation off, or fixed: mirror, pad, a fixed crop size)
are stored as whole batches (exact.npz); random ones as statistics (stats.json) that
tests/test_image_record_aug.py compares with neogluon's under stated tolerances. The
scenario code below is shared: the test imports this file (MXNet is imported only when it
runs as a script).
"""
import json
import os
import struct
import tempfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "tests", "fixtures", "image_record_aug")
N_IMAGES = 36
SHAPE = (3, 32, 32)

# name -> (iterator kwargs, iterator kind)
EXACT = {
    "plain": dict(),
    "resize_center": dict(resize=40),
    "mean_std": dict(resize=36, mean_r=123.68, mean_g=116.28, mean_b=103.53, std_r=58.395,
                     std_g=57.12, std_b=57.375),
    "scale": dict(mean_r=128, mean_g=128, mean_b=128, scale=1 / 128.0),
    "uint8": dict(uint8=True),
    "uint8_resize": dict(uint8=True, resize=44),
    "mirror": dict(mirror=True, resize=40),
    "pad": dict(pad=3, fill_value=200),
    "crop_size_fixed": dict(max_crop_size=36, min_crop_size=36),
}

RANDOM = {
    "rand_crop": dict(resize=48, rand_crop=True),
    "rand_mirror": dict(rand_mirror=True),
    "rrc_default": dict(random_resized_crop=True),
    "rrc_area": dict(random_resized_crop=True, min_random_area=0.08, max_random_area=1.0,
                     min_aspect_ratio=0.75, max_aspect_ratio=4 / 3.0),
    "rrc_aspect_sym": dict(random_resized_crop=True, min_random_area=0.3,
                           max_aspect_ratio=0.25),
    "random_scale": dict(max_random_scale=1.5, min_random_scale=0.8, resize=40),
    "aspect": dict(max_aspect_ratio=0.3, resize=40),
    "rotate_random": dict(max_rotate_angle=30, resize=40),
    "rotate_fixed": dict(rotate=45, fill_value=255),
    "shear": dict(max_shear_ratio=0.3, resize=40, fill_value=0),
    "crop_size": dict(max_crop_size=40, min_crop_size=24, rand_crop=True),
    "img_size": dict(max_img_size=48, min_img_size=40),
    "pad_rand_crop": dict(pad=4, rand_crop=True, fill_value=0),
    "brightness": dict(brightness=0.4),
    "contrast": dict(contrast=0.4),
    "saturation": dict(saturation=0.4),
    "color_all": dict(brightness=0.3, contrast=0.3, saturation=0.3),
    "pca_noise": dict(pca_noise=0.1),
    "random_h": dict(random_h=36),
    "random_s": dict(random_s=50),
    "random_l": dict(random_l=50),
    "imagenet_train": dict(resize=40, random_resized_crop=True, min_random_area=0.08,
                           min_aspect_ratio=0.75, max_aspect_ratio=4 / 3.0, rand_mirror=True,
                           brightness=0.4, contrast=0.4, saturation=0.4, pca_noise=0.1,
                           mean_r=123.68, mean_g=116.28, mean_b=103.53, std_r=58.395,
                           std_g=57.12, std_b=57.375),
    "uint8_aug": dict(uint8=True, rand_crop=True, rand_mirror=True, resize=40,
                      max_rotate_angle=10, brightness=0.2),
}
EPOCHS = 4
BATCH = 12


def png_bytes(arr):
    """A minimal RGB PNG (no filter) of an (H, W, 3) uint8 array."""
    h, w, _ = arr.shape
    raw = b"".join(b"\x00" + arr[i].tobytes() for i in range(h))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def images():
    """36 images of 40-72 px a side: red rises left to right (so a mirror shows), green
    top to bottom, blue in random blocks; never pure white or black (fill shows)."""
    rs = np.random.RandomState(15)
    out = []
    for _ in range(N_IMAGES):
        h, w = rs.randint(40, 73, size=2)
        x = np.linspace(30, 220, w)[None, :].repeat(h, 0)
        y = np.linspace(20, 230, h)[:, None].repeat(w, 1)
        blocks = rs.randint(10, 240, size=(h // 8 + 1, w // 8 + 1))
        b = np.kron(blocks, np.ones((8, 8)))[:h, :w]
        img = np.stack([x, y, b], -1) + rs.normal(0, 6, size=(h, w, 3))
        out.append(np.clip(np.rint(img), 5, 245).astype(np.uint8))
    return out


def make_iter(mx, rec, name, kw, **extra):
    kw = dict(kw)
    cls = mx.io.ImageRecordUInt8Iter if kw.pop("uint8", False) else mx.io.ImageRecordIter
    kw.update(extra)
    return cls(path_imgrec=rec, data_shape=SHAPE, batch_size=BATCH, **kw)


def exact_batches(mx, rec):
    out = {}
    for name, kw in EXACT.items():
        it = make_iter(mx, rec, name, kw)
        batches = list(it)
        # The first batch whole (kept small), every batch's labels and pad.
        out[f"{name}/data"] = batches[0].data[0].asnumpy()
        out[f"{name}/labels"] = np.stack([b.label[0].asnumpy() for b in batches])
        out[f"{name}/pads"] = np.array([b.pad for b in batches])
    return out


def statistics(mx, rec, kw, plain):
    """Statistics of EPOCHS epochs of one configuration. ``plain``: label -> the
    unaugmented float image (centre crop, no resize), for the distance to it."""
    it = make_iter(mx, rec, None, kw)
    data, labels = [], []
    for _ in range(EPOCHS):
        for b in it:
            data.append(b.data[0].asnumpy())
            labels.append(b.label[0].asnumpy())
        it.reset()
    dtype = str(data[0].dtype)
    x = np.concatenate(data).astype(np.float64)
    lab = np.concatenate(labels).astype(int)
    red = x[:, 0]
    w = red.shape[-1]
    left, right = red[:, :, : w // 2].mean((1, 2)), red[:, :, w - w // 2:].mean((1, 2))
    per_img = x.mean((1, 2, 3))
    sat = x.max(1) - x.min(1)  # per-pixel channel spread: saturation-like
    return dict(
        shape=list(data[0].shape), dtype=dtype, n=int(x.shape[0]),
        mean=x.mean((0, 2, 3)).tolist(), std=x.std((0, 2, 3)).tolist(),
        min=float(x.min()), max=float(x.max()),
        mirrored=float((left > right).mean()),
        img_mean_std=float(per_img.std()),
        spread=float(sat.mean()),
        white=float((x.min(1) >= 254.5).mean()), black=float((x.max(1) <= 0.5).mean()),
        dist_plain=float(np.mean([np.abs(x[i] - plain[lab[i]]).mean()
                                  for i in range(len(lab))])),
    )


def plain_images(mx, rec):
    it = make_iter(mx, rec, None, {})
    out = {}
    for b in it:
        for d, lab in zip(b.data[0].asnumpy(), b.label[0].asnumpy()):
            out.setdefault(int(lab), d.astype(np.float64))
    return out


def write_rec(mx, rec_path, idx_path):
    rec = mx.recordio.MXIndexedRecordIO(idx_path, rec_path, "w")
    for i, img in enumerate(images()):
        rec.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i), i, 0),
                                          png_bytes(img)))
    rec.close()


def main():
    import mxnet as mx
    os.makedirs(ROOT, exist_ok=True)
    rec_path, idx_path = os.path.join(ROOT, "images.rec"), os.path.join(ROOT, "images.idx")
    write_rec(mx, rec_path, idx_path)
    mx.random.seed(0)
    exact = exact_batches(mx, rec_path)
    plain = plain_images(mx, rec_path)
    stats = {name: statistics(mx, rec_path, kw, plain) for name, kw in RANDOM.items()}
    with tempfile.TemporaryDirectory(dir=ROOT) as tmp:
        npz = os.path.join(tmp, "exact.npz")
        np.savez_compressed(npz, **exact)
        os.replace(npz, os.path.join(ROOT, "exact.npz"))
        js = os.path.join(tmp, "stats.json")
        with open(js, "w") as f:
            json.dump(stats, f, indent=1, sort_keys=True)
        os.replace(js, os.path.join(ROOT, "stats.json"))


if __name__ == "__main__":
    main()
