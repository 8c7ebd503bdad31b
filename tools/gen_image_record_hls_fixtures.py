"""Record MXNet 1.9.1's HSL jitter (ImageRecordIter's random_h / random_s / random_l) for
tests/test_image_record_aug.py, in tests/fixtures/image_record_hls/hls.npz:

    /tmp/mxref/bin/python tools/gen_image_record_hls_fixtures.py

1. ``colours/*``: one 48x125 PNG (a width that is not a multiple of 8, so OpenCV's scalar
   tail runs too) of hard colours, through ImageRecordUInt8Iter with the whole image as
   the output (no crop) and each jitter configuration for a few epochs: MXNet's bytes and
   the offsets (dh, ds, dl) it used. Most pixels are colours whose hue lies exactly
   halfway between two 8-bit hues (60 * (channel difference) / (max - min) an odd
   integer), where the float rounding of the conversion decides the byte; the rest are
   greys, pure and near-grey colours, black, white and random colours.
2. ``law/*``: the 36 images of tests/fixtures/image_record_aug/images.rec (32x32 centre
   crops, 4 epochs, one channel jittered at a time and all three together): each output's
   label, offsets, CRC-32 of its bytes and mean |jittered - plain|. The test recovers
   the law of MXNet's offsets from these (checked byte for byte through the CRCs).

How the offsets are known: with ``preprocess_threads=1`` MXNet decodes on one thread whose
engine is a std::mt19937 seeded with 111; the default augmenter draws, for each image and
each of h, s, l in that order, two std::uniform_real_distribution<float>(0, 1) values
u1, u2 (libstdc++: one 32-bit output converted to float and divided by 2**32) and uses
int(((u1 + 4 * u2) / 5) * r * 2 - r) in float arithmetic, truncated towards zero. numpy's
legacy RandomState(seed) seeds and steps MT19937 as std::mt19937 does, which gives the
32-bit outputs here (checked against std::mt19937's documented first output). Nothing else
draws from that engine in these configurations (no crop, resize, mirror or other jitter).
The tests check every recorded offset: the jittered bytes must come out of them.
"""
import os
import sys
import tempfile
import zlib

import numpy as np

from gen_image_record_aug_fixtures import png_bytes  # same folder

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "tests", "fixtures", "image_record_hls")
AUG_REC = os.path.join(HERE, "..", "tests", "fixtures", "image_record_aug", "images.rec")
SHAPE = (48, 125)
MXNET_THREAD0_SEED = 111

# name -> (random_h, random_s, random_l, epochs) for the colour image
COLOUR_CONFIGS = {
    "wide": (90, 128, 128, 4),
    "narrow": (6, 20, 20, 2),
    "hue_full": (180, 0, 0, 2),
    "round_trip": (0, 1, 0, 1),  # every offset is 0: only the two conversions
}
# name -> (random_h, random_s, random_l) over the 36-image fixture, LAW_EPOCHS epochs
LAW_CONFIGS = {"h36": (36, 0, 0), "s50": (0, 50, 0), "l50": (0, 0, 50), "hsl": (10, 30, 30)}
LAW_EPOCHS = 4
LAW_BATCH = 12


def colour_image():
    """SHAPE RGB pixels: hard colours first, then random ones, in a seeded order."""
    rs = np.random.RandomState(2024)
    n = SHAPE[0] * SHAPE[1]
    special = [(0, 0, 0), (255, 255, 255), (255, 0, 0), (0, 255, 0), (0, 0, 255),
               (255, 255, 0), (0, 255, 255), (255, 0, 255), (128, 128, 128), (127, 128, 127),
               (1, 0, 0), (254, 255, 255), (255, 254, 254), (0, 1, 1)]
    greys = [(v, v, v) for v in range(0, 256, 5)]
    near = rs.randint(0, 255, size=(120, 1)) + np.array([[0, 1, 0]])
    # Colours whose hue (degrees) is an odd integer: exactly halfway between 8-bit hues.
    allc = np.arange(2 ** 24, dtype=np.int64)
    r, g, b = (allc >> 16) & 255, (allc >> 8) & 255, allc & 255
    vmax = np.maximum(np.maximum(r, g), b)
    diff = vmax - np.minimum(np.minimum(r, g), b)
    num = np.where(vmax == r, g - b, np.where(vmax == g, b - r, r - g))
    d = np.maximum(diff, 1)
    half = (diff > 0) & (60 * num % d == 0) & ((60 * num // d) % 2 != 0)
    halves = allc[half]
    n_half = int(n * 0.8)
    pick = halves[rs.choice(len(halves), n_half, replace=False)]
    half_rgb = np.stack([(pick >> 16) & 255, (pick >> 8) & 255, pick & 255], -1)
    fixed = np.concatenate([np.array(special), np.array(greys), near, half_rgb])
    rest = rs.randint(0, 256, size=(n - len(fixed), 3))
    pixels = np.concatenate([fixed, rest])[rs.permutation(n)]
    return pixels.astype(np.uint8).reshape(SHAPE + (3,))


def mt_uniforms(seed, count):
    """The first ``count`` std::uniform_real_distribution<float>(0, 1) values of a
    std::mt19937(seed) under libstdc++."""
    raw = np.random.RandomState(seed).randint(0, 2 ** 32, size=count, dtype=np.uint32)
    u = raw.astype(np.float32) / np.float32(2.0 ** 32)
    u[u >= 1] = np.nextafter(np.float32(1), np.float32(0))
    return u


def offsets(u6, rh, rs_, rl):
    """MXNet's (dh, ds, dl) from one image's six uniforms (see the module docstring)."""
    out = []
    for k, r in enumerate((rh, rs_, rl)):
        f = (u6[2 * k] + np.float32(4) * u6[2 * k + 1]) / np.float32(5)
        out.append(int(f * np.float32(r) * np.float32(2) - np.float32(r)))
    return out


def check_engine():
    # The C++ standard ([rand.predef]) fixes the 10000th output of a default-constructed
    # std::mt19937 (seed 5489): 4123659995.
    outs = np.random.RandomState(5489).randint(0, 2 ** 32, size=10000, dtype=np.uint32)
    assert outs[-1] == 4123659995, outs[-1]


def run(mx, rec, shape, batch, epochs, **kw):
    it = mx.io.ImageRecordUInt8Iter(path_imgrec=rec, data_shape=(3,) + shape,
                                    batch_size=batch, preprocess_threads=1, **kw)
    data, labels = [], []
    for _ in range(epochs):
        for b in it:
            data.append(b.data[0].asnumpy())
            labels.append(b.label[0].asnumpy())
        it.reset()
    return np.concatenate(data), np.concatenate(labels).astype(np.int64)


def main():
    import mxnet as mx
    check_engine()
    os.makedirs(ROOT, exist_ok=True)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        img = colour_image()
        rec_path = os.path.join(tmp, "colours.rec")
        rec = mx.recordio.MXRecordIO(rec_path, "w")
        rec.write(mx.recordio.pack(mx.recordio.IRHeader(0, 0.0, 0, 0), png_bytes(img)))
        rec.close()
        plain, _ = run(mx, rec_path, SHAPE, 1, 1)
        assert np.array_equal(plain[0].transpose(1, 2, 0), img), "PNG decode is not exact"
        out["colours/source"] = img
        for name, (rh, rs_, rl, epochs) in COLOUR_CONFIGS.items():
            data, _ = run(mx, rec_path, SHAPE, 1, epochs, random_h=rh, random_s=rs_,
                          random_l=rl)
            u = mt_uniforms(MXNET_THREAD0_SEED, 6 * epochs)
            out[f"colours/{name}/data"] = data.transpose(0, 2, 3, 1)  # (epochs, H, W, 3)
            out[f"colours/{name}/offsets"] = np.array(
                [offsets(u[6 * e:6 * e + 6], rh, rs_, rl) for e in range(epochs)])
            out[f"colours/{name}/radii"] = np.array([rh, rs_, rl])

    plain_data, plain_labels = run(mx, AUG_REC, (32, 32), LAW_BATCH, 1)
    plain = {int(lab): d.astype(np.float64) for d, lab in zip(plain_data, plain_labels)}
    for name, (rh, rs_, rl) in LAW_CONFIGS.items():
        data, labels = run(mx, AUG_REC, (32, 32), LAW_BATCH, LAW_EPOCHS, random_h=rh,
                           random_s=rs_, random_l=rl)
        u = mt_uniforms(MXNET_THREAD0_SEED, 6 * len(data))
        out[f"law/{name}/radii"] = np.array([rh, rs_, rl])
        out[f"law/{name}/labels"] = labels
        out[f"law/{name}/offsets"] = np.array(
            [offsets(u[6 * i:6 * i + 6], rh, rs_, rl) for i in range(len(data))])
        out[f"law/{name}/crc32"] = np.array([zlib.crc32(np.ascontiguousarray(d).tobytes())
                                             for d in data], np.uint32)
        out[f"law/{name}/dist"] = np.array([np.abs(d - plain[lab]).mean()
                                            for d, lab in zip(data, labels)])

    with tempfile.TemporaryDirectory(dir=ROOT) as tmp:
        path = os.path.join(tmp, "hls.npz")
        np.savez_compressed(path, **out)
        os.replace(path, os.path.join(ROOT, "hls.npz"))
    print("wrote", os.path.join(ROOT, "hls.npz"), file=sys.stderr)


if __name__ == "__main__":
    main()
