"""Record MXNet 1.9.1's ``mx.nd.image`` operators and ``mx.image`` functions as fixtures.

Run with the MXNet 1.9.1 interpreter from the repository root::

    /tmp/mxref/bin/python tools/gen_image_fixtures.py

Writes ``tests/fixtures/image/``: ``image_ops.npz``, ``image_resize.npz``, ``image_sweep.npz`` and
``image_mx.npz`` (inputs and MXNet's outputs), ``image.json``
(the cases, and which calls MXNet rejects) and the encoded test images (``*.png``, ``*.jpg``).
The encoded images are made with Pillow; the MXNet interpreter has none, so that step runs in
the interpreter named by ``NEOGLUON_PYTHON`` (default: the project's ``.venv``) when Pillow is
missing here.
"""
import json
import os
import random
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "image")

# Tiny source pictures: smooth gradients plus noise, so that JPEG has something to round.
SOURCES = {
    "rgb.png": ("RGB", "PNG"), "gray.png": ("L", "PNG"), "rgba.png": ("RGBA", "PNG"),
    "palette.png": ("P", "PNG"), "rgb.jpg": ("RGB", "JPEG"), "gray.jpg": ("L", "JPEG"),
    "gray16.png": ("I;16", "PNG"), "gray_alpha.png": ("LA", "PNG"), "rgb.bmp": ("RGB", "BMP"),
    "progressive.jpg": ("RGB", "JPEG"), "cmyk.jpg": ("CMYK", "JPEG"),
}


def _picture(h=13, w=17, seed=5):
    rng = np.random.RandomState(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([xx * 255 // (w - 1), yy * 255 // (h - 1), (xx + yy) * 255 // (h + w - 2)], -1)
    return np.clip(base + rng.randint(-40, 41, size=(h, w, 3)), 0, 255).astype(np.uint8)


def encode_sources():
    """Write the encoded test images (needs Pillow)."""
    from PIL import Image
    os.makedirs(OUT, exist_ok=True)
    pic = _picture()
    alpha = (np.arange(pic.shape[0] * pic.shape[1]) % 256).reshape(pic.shape[:2]).astype(np.uint8)
    for name, (mode, fmt) in SOURCES.items():
        img = Image.fromarray(pic, "RGB")
        if mode == "L":
            img = img.convert("L")
        elif mode == "RGBA":
            img = Image.fromarray(np.concatenate([pic, alpha[..., None]], -1), "RGBA")
        elif mode == "P":
            img = img.quantize(colors=16)
        elif mode == "I;16":
            img = Image.fromarray(pic[..., 0].astype(np.uint16) * 257 + pic[..., 1])
        elif mode == "LA":
            img = Image.fromarray(np.stack([pic[..., 1], alpha], -1), "LA")
        elif mode == "CMYK":
            img = img.convert("CMYK")
        path = os.path.join(OUT, name)
        tmp = path + ".tmp"
        opts = {"quality": 90, "progressive": name.startswith("progressive")} \
            if fmt == "JPEG" else {}
        img.save(tmp, format=fmt, **opts)
        os.replace(tmp, path)


def _ensure_sources():
    try:
        import PIL  # noqa: F401
        encode_sources()
    except ImportError:
        py = os.environ.get("NEOGLUON_PYTHON", os.path.join(ROOT, ".venv", "bin", "python"))
        subprocess.run([py, os.path.abspath(__file__), "--encode-only"], check=True)


def main():
    _ensure_sources()
    import mxnet as mx
    nd = mx.nd
    arrays, meta = {}, {"cases": {}, "errors": {}}
    rng = np.random.RandomState(0)

    def put(name, value):
        arrays[name] = value.asnumpy() if isinstance(value, mx.nd.NDArray) else np.asarray(value)

    def A(name):
        return nd.array(arrays[name], dtype=arrays[name].dtype)

    def err(name, fn):
        try:
            r = fn()
            if isinstance(r, tuple):
                r = r[0]
            r.wait_to_read()
            meta["errors"][name] = None
        except Exception as e:  # noqa: BLE001 - recording what MXNet raises
            lines = [ln for ln in str(e).split("\n") if "Check failed" in ln or "rror" in ln]
            meta["errors"][name] = [type(e).__name__, (lines[-1] if lines else str(e))[:300]]

    # ---------------------------------------------------------------- inputs
    put("img8", rng.randint(0, 256, size=(7, 9, 3)).astype(np.uint8))
    put("img8_1", rng.randint(0, 256, size=(7, 9, 1)).astype(np.uint8))
    put("imgf", (rng.rand(7, 9, 3) * 255).astype(np.float32))
    put("imgf_1", (rng.rand(7, 9, 1) * 255).astype(np.float32))
    put("imgd", (rng.rand(7, 9, 3) * 255).astype(np.float64))
    put("batch8", rng.randint(0, 256, size=(2, 5, 6, 3)).astype(np.uint8))
    put("batchf", (rng.rand(2, 5, 6, 3) * 255).astype(np.float32))
    put("chw", rng.rand(3, 5, 6).astype(np.float32))
    put("chw1", rng.rand(1, 5, 6).astype(np.float32))
    put("nchw", rng.rand(2, 3, 4, 5).astype(np.float32))
    put("chwd", rng.rand(3, 5, 6).astype(np.float64))
    put("rot", rng.rand(3, 8, 10).astype(np.float32))

    # ---------------------------------------------------------------- nd.image
    for src in ("img8", "imgf", "img8_1", "batch8", "batchf", "imgd"):
        put(f"to_tensor_{src}", nd.image.to_tensor(A(src)))
    put("to_tensor_int32", nd.image.to_tensor(A("img8").astype("int32")))
    put("normalize_chw", nd.image.normalize(A("chw"), mean=(0.5, 0.4, 0.3), std=(0.2, 0.3, 0.4)))
    put("normalize_chw_1", nd.image.normalize(A("chw"), mean=(0.5,), std=(0.25,)))
    put("normalize_scalar", nd.image.normalize(A("chw"), mean=0.5, std=2.0))
    put("normalize_c1", nd.image.normalize(A("chw1"), mean=(0.5,), std=(0.2,)))
    put("normalize_nchw", nd.image.normalize(A("nchw"), mean=(0.1, 0.2, 0.3), std=(0.9, 0.8, 0.7)))
    put("normalize_f64", nd.image.normalize(A("chwd"), mean=(0.5, 0.4, 0.3), std=(0.2, 0.3, 0.4)))

    resize_cases = []
    for src in ("img8", "imgf", "img8_1"):
        for interp in (0, 1, 2, 3, 4):
            for size in ((4, 3), (11, 10), (6, 9), (12, 5)):
                resize_cases.append(dict(src=src, size=list(size), keep=False, interp=interp))
    resize_cases += [dict(src="img8", size=5, keep=False, interp=1),
                     dict(src="img8", size=5, keep=True, interp=1),
                     dict(src="imgf", size=11, keep=True, interp=2),
                     dict(src="img8", size=[5], keep=False, interp=3),
                     dict(src="img8", size=[6, 4], keep=True, interp=1),
                     dict(src="batch8", size=[4, 3], keep=False, interp=1),
                     dict(src="batchf", size=[9, 8], keep=False, interp=2),
                     dict(src="imgd", size=[5, 4], keep=False, interp=1),
                     dict(src="img8", size=[9, 7], keep=False, interp=1)]
    for i, c in enumerate(resize_cases):
        size = c["size"] if isinstance(c["size"], int) else tuple(c["size"])
        put(f"resize{i}", nd.image.resize(A(c["src"]), size, c["keep"], c["interp"]))
    meta["cases"]["resize"] = resize_cases
    # A random sweep: 1-4 channels, uint8/float32/float64, exact 2x and 3x reductions
    # (OpenCV's block-mean path) among arbitrary sizes.
    sweep = []
    srng = np.random.RandomState(7)
    for k in range(48):
        h, w = (int(v) for v in srng.randint(1, 10, size=2))
        c = int(srng.randint(1, 5))
        dt = ("uint8", "float32", "float64")[k % 3]
        nw, nh = (int(v) for v in srng.randint(1, 16, size=2))
        if k % 5 == 0:
            h, w = 2 * (h // 2 + 1), 2 * (w // 2 + 1)
            nw, nh = w // 2, h // 2
        if k % 9 == 0:
            h, w = 3 * (h // 3 + 1), 3 * (w // 3 + 1)
            nw, nh = w // 3, h // 3
        x = srng.randint(0, 256, size=(h, w, c)) if dt == "uint8" else srng.rand(h, w, c) * 255
        x = x.astype(dt)
        interp = k % 5
        put(f"sweep_in{k}", x)
        put(f"sweep_out{k}", mx.image.imresize(nd.array(x, dtype=dt), nw, nh, interp=interp))
        sweep.append(dict(w=nw, h=nh, interp=interp))
    meta["cases"]["sweep"] = sweep

    put("crop_img8", nd.image.crop(A("img8"), 1, 2, 5, 3))
    put("crop_batchf", nd.image.crop(A("batchf"), 2, 1, 3, 4))
    # Odd sizes: MXNet leaves the middle column (row) of the output unwritten; the tests
    # compare the rest.
    for src in ("img8", "imgf", "img8_1"):
        put(f"flip_lr_{src}", nd.image.flip_left_right(A(src)))
        put(f"flip_tb_{src}", nd.image.flip_top_bottom(A(src)))
    even = nd.array(arrays["img8"][:6], dtype=np.uint8)
    put("flip_tb_even", nd.image.flip_top_bottom(even))
    put("flip_lr_even", nd.image.flip_left_right(nd.array(arrays["img8"][:, :8], dtype=np.uint8)))

    # The random colour operators with min_factor == max_factor are deterministic.
    for src in ("img8", "imgf", "img8_1", "imgf_1"):
        for a in (0.6, 1.3):
            put(f"brightness_{src}_{a}", nd.image.random_brightness(A(src), a, a))
            put(f"contrast_{src}_{a}", nd.image.random_contrast(A(src), a, a))
            put(f"saturation_{src}_{a}", nd.image.random_saturation(A(src), a, a))
        if src.endswith("_1"):
            continue  # MXNet leaves hue's and lighting's output unwritten for one channel
        for a in (0.7, 1.2, 1.45):
            put(f"hue_{src}_{a}", nd.image.random_hue(A(src), a, a))
        put(f"lighting_{src}", nd.image.adjust_lighting(A(src), alpha=(0.02, -0.05, 0.08)))
        put(f"lighting_big_{src}", nd.image.adjust_lighting(A(src), alpha=(2.0, -1.0, 0.5)))
    put("brightness_imgd", nd.image.random_brightness(A("imgd"), 0.7, 0.7))
    put("contrast_imgd", nd.image.random_contrast(A("imgd"), 1.3, 1.3))
    put("saturation_imgd", nd.image.random_saturation(A("imgd"), 0.6, 0.6))
    put("hue_imgd", nd.image.random_hue(A("imgd"), 1.2, 1.2))
    put("lighting_imgd", nd.image.adjust_lighting(A("imgd"), alpha=(0.02, -0.05, 0.08)))
    # (random_color_jitter with all strengths 0 leaves its output unwritten: not recorded.)
    put("random_lighting_0", nd.image.random_lighting(A("imgf"), alpha_std=0.0))

    # Which calls MXNet rejects (tests check that neogluon rejects them too, clearly).
    x = A("img8")
    err("to_tensor_2d", lambda: nd.image.to_tensor(nd.ones((3, 3))))
    err("to_tensor_5d", lambda: nd.image.to_tensor(nd.ones((1, 1, 3, 3, 3))))
    err("normalize_default", lambda: nd.image.normalize(A("chw")))
    err("normalize_mean2", lambda: nd.image.normalize(A("chw"), mean=(1, 2), std=(1,)))
    err("normalize_std2", lambda: nd.image.normalize(A("chw"), mean=(1,), std=(1, 2)))
    err("normalize_c4", lambda: nd.image.normalize(nd.ones((4, 3, 3)), mean=(1,), std=(1,)))
    err("normalize_2d", lambda: nd.image.normalize(nd.ones((3, 3)), mean=(1,), std=(1,)))
    err("resize_nosize", lambda: nd.image.resize(x))
    err("resize_2d", lambda: nd.image.resize(nd.ones((3, 3)), 4))
    err("resize_3size", lambda: nd.image.resize(x, (1, 2, 3)))
    err("resize_0", lambda: nd.image.resize(x, (0, 2)))
    err("resize_interp9", lambda: nd.image.resize(x, 4, interp=9))
    err("crop_out", lambda: nd.image.crop(x, 1, 1, 9, 5))
    err("crop_2d", lambda: nd.image.crop(nd.ones((3, 3)), 0, 0, 1, 1))
    err("crop_0w", lambda: nd.image.crop(x, 0, 0, 0, 1))
    err("flip_4d", lambda: nd.image.flip_left_right(A("batchf")))
    err("flip_tb_2d", lambda: nd.image.flip_top_bottom(nd.ones((3, 3))))
    err("brightness_4d", lambda: nd.image.random_brightness(A("batchf"), 0.5, 1.5))
    err("brightness_nomax", lambda: nd.image.random_brightness(x, 0.5))
    err("contrast_c4", lambda: nd.image.random_contrast(nd.ones((3, 3, 4)), 0.5, 1.5))
    err("lighting_4d", lambda: nd.image.adjust_lighting(A("batchf"), alpha=(1, 2, 3)))
    err("lighting_c4", lambda: nd.image.adjust_lighting(nd.ones((3, 3, 4)), alpha=(1, 2, 3)))
    err("jitter_nohue", lambda: nd.image.random_color_jitter(x, 0.1, 0.1, 0.1))

    # ---------------------------------------------------------------- mx.image
    mx_start = set(arrays)
    for name in SOURCES:
        with open(os.path.join(OUT, name), "rb") as f:
            buf = f.read()
        key = name.replace(".", "_")
        put(f"dec_{key}", mx.image.imdecode(buf))
        put(f"dec_{key}_gray", mx.image.imdecode(buf, flag=0))
        put(f"dec_{key}_bgr", mx.image.imdecode(buf, to_rgb=0))
        put(f"dec_{key}_gray_bgr", mx.image.imdecode(buf, 0, 0))
    put("imread_rgb_png", mx.image.imread(os.path.join(OUT, "rgb.png")))
    put("imread_rgb_jpg_gray", mx.image.imread(os.path.join(OUT, "rgb.jpg"), flag=0))
    with open(os.path.join(OUT, "rgb.png"), "rb") as f:
        put("dec_from_numpy", mx.image.imdecode(np.frombuffer(f.read(), dtype=np.uint8)))
    err("imdecode_empty", lambda: mx.image.imdecode(b""))
    err("imdecode_garbage", lambda: mx.image.imdecode(b"not an image at all"))
    err("imdecode_str", lambda: mx.image.imdecode("abc"))
    err("imread_missing", lambda: mx.image.imread(os.path.join(OUT, "missing.png")))
    err("imresize_2d", lambda: mx.image.imresize(nd.ones((4, 4)), 2, 2))
    err("imresize_4d", lambda: mx.image.imresize(nd.ones((1, 4, 4, 3)), 2, 2))
    err("imresize_w0", lambda: mx.image.imresize(x, 0, 3))
    err("imresize_int32", lambda: mx.image.imresize(x.astype("int32"), 2, 3))
    err("copyMakeBorder_2d", lambda: mx.image.copyMakeBorder(nd.ones((4, 4)), 1, 2, 3, 4))

    imresize_cases = [dict(src="img8", w=5, h=4, interp=1), dict(src="img8", w=14, h=10, interp=2),
                      dict(src="imgf", w=4, h=3, interp=3), dict(src="imgf", w=12, h=15, interp=0),
                      dict(src="img8", w=6, h=5, interp=4), dict(src="imgd", w=5, h=8, interp=1)]
    for i, c in enumerate(imresize_cases):
        put(f"imresize{i}", mx.image.imresize(A(c["src"]), c["w"], c["h"], interp=c["interp"]))
    meta["cases"]["imresize"] = imresize_cases
    put("imresize_default", mx.image.imresize(A("img8"), 5, 11))

    put("resize_short_8", mx.image.resize_short(A("img8"), 4))
    put("resize_short_f", mx.image.resize_short(A("imgf"), 12, interp=1))
    put("resize_short_auto", mx.image.resize_short(A("img8"), 5, interp=9))
    put("fixed_crop", mx.image.fixed_crop(A("img8"), 1, 2, 5, 4))
    put("fixed_crop_size", mx.image.fixed_crop(A("img8"), 1, 2, 5, 4, size=(7, 6)))
    put("fixed_crop_size_interp", mx.image.fixed_crop(A("imgf"), 0, 1, 6, 5, (3, 2), interp=3))
    for size in ((4, 3), (12, 10), (9, 7)):
        out, rect = mx.image.center_crop(A("img8"), size)
        put(f"center_crop_{size[0]}x{size[1]}", out)
        meta["cases"][f"center_crop_{size[0]}x{size[1]}"] = list(rect)
    meta["cases"]["random_crop"] = []
    for s in (1, 2, 3):
        random.seed(s)
        out, rect = mx.image.random_crop(A("img8"), (5, 4))
        put(f"random_crop{s}", out)
        meta["cases"]["random_crop"].append([s, list(rect)])
    random.seed(4)
    out, rect = mx.image.random_crop(A("imgf"), (12, 3), interp=1)
    put("random_crop_up", out)
    meta["cases"]["random_crop_up"] = list(rect)
    meta["cases"]["random_size_crop"] = []
    for s, area, ratio in ((1, 0.3, (0.75, 1.33)), (7, (0.2, 0.6), (0.5, 2.0)),
                           (11, 0.9, (3.0, 4.0))):
        random.seed(s)
        out, rect = mx.image.random_size_crop(A("img8"), (4, 4), area, ratio)
        put(f"random_size_crop{s}", out)
        meta["cases"]["random_size_crop"].append([s, area, list(ratio), list(rect)])
    put("color_normalize", mx.image.color_normalize(A("imgf").copy(), nd.array([100, 120, 140]),
                                                    nd.array([50, 60, 70])))
    put("color_normalize_mean_only",
        mx.image.color_normalize(A("imgf").copy(), nd.array([10, 20, 30])))
    for t in range(5):
        put(f"border8_{t}", mx.image.copyMakeBorder(A("img8"), 1, 2, 3, 4, type=t))
        put(f"borderf_{t}", mx.image.copyMakeBorder(A("imgf"), 2, 0, 1, 3, type=t))
        small = nd.array(arrays["img8"][:3, :2], dtype=np.uint8)
        put(f"border_big_{t}", mx.image.copyMakeBorder(small, 4, 5, 6, 3, type=t))
    put("border_value", mx.image.copyMakeBorder(A("img8"), 1, 1, 2, 2, type=0, value=77))
    put("border_values",
        mx.image.copyMakeBorder(A("imgf"), 1, 1, 2, 2, type=0, values=(1.5, 2.5, 3.5)))
    meta["cases"]["scale_down"] = [[list(a), list(b), list(mx.image.scale_down(a, b))]
                                   for a, b in (((640, 480), (720, 120)), ((10, 8), (4, 9)),
                                                ((5, 5), (3, 3)), ((7, 3), (9, 9)))]
    put("imrotate", mx.image.imrotate(A("rot"), 30.0))
    put("imrotate_zoom_in", mx.image.imrotate(A("rot"), -45.0, zoom_in=True))
    put("imrotate_batch", mx.image.imrotate(nd.stack(A("rot"), A("rot") * 2),
                                            nd.array([10.0, 80.0]), zoom_out=True))

    # Two files (operators, then mx.image), each well under 100 KB.
    os.makedirs(OUT, exist_ok=True)
    sweep_names = [k for k in arrays if k.startswith("sweep_")]
    resize_names = [k for k in arrays if k.startswith("resize") and k[6:].isdigit()]
    for part, names in (("image_ops", [k for k in mx_start
                                       if k not in sweep_names and k not in resize_names]),
                        ("image_resize", resize_names),
                        ("image_sweep", sweep_names),
                        ("image_mx", [k for k in arrays if k not in mx_start])):
        tmp = os.path.join(OUT, part + ".tmp.npz")
        np.savez_compressed(tmp, **{k: arrays[k] for k in names})
        os.replace(tmp, os.path.join(OUT, part + ".npz"))
    tmp = os.path.join(OUT, "image.json.tmp")
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    os.replace(tmp, os.path.join(OUT, "image.json"))
    print(f"wrote {len(arrays)} arrays to {OUT}")


if __name__ == "__main__":
    if "--encode-only" in sys.argv:
        encode_sources()
    else:
        main()
