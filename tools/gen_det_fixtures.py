"""Record MXNet 1.9.1's detection data path (mx.io.ImageDetRecordIter, mx.image.ImageDetIter
with CreateDetAugmenter) over a small .rec of synthetic PNGs with boxes
(tests/fixtures/det).

    /tmp/mxref/bin/python tools/gen_det_fixtures.py

Every configuration is stored as whole batches (images and labels of several epochs):
ImageDetRecordIter's random augmentations are reproduced draw for draw by neogluon
(with one decoding thread on both sides), and ImageDetIter's come from Python's `random`
seeded the same way. The scenario code is shared: tests/test_image_det.py imports this
file (MXNet is imported only when it runs as a script).
"""
import json
import os
import random
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_image_record_aug_fixtures import png_bytes  # noqa: E402

ROOT = os.path.join(HERE, "..", "tests", "fixtures", "det")
N_IMAGES = 11
OBJ_WIDTH = 6  # class, xmin, ymin, xmax, ymax, difficult
EPOCHS = 3

# ImageDetRecordIter: name -> kwargs (batch_size and data_shape included)
REC = {
    "plain": dict(data_shape=(3, 40, 48), batch_size=4),
    "resize_fit": dict(data_shape=(3, 40, 48), batch_size=4, resize=36, resize_mode="fit"),
    "shrink": dict(data_shape=(3, 48, 44), batch_size=5, resize_mode="shrink"),
    "norm": dict(data_shape=(3, 32, 32), batch_size=4, mean_r=123.68, mean_g=116.28,
                 mean_b=103.53, std_r=58.395, std_g=57.12, std_b=57.375, inter_method=2),
    "scale_fit": dict(data_shape=(3, 40, 40), batch_size=3, mean_r=128, mean_g=128,
                      mean_b=128, scale=1 / 128.0, resize_mode="fit", inter_method=3),
    "gray": dict(data_shape=(1, 36, 36), batch_size=4),
    "pad_width": dict(data_shape=(3, 32, 32), batch_size=6, label_pad_width=40,
                      label_pad_value=-2),
    "part": dict(data_shape=(3, 32, 32), batch_size=2, num_parts=3, part_index=1),
    "imglist": dict(data_shape=(3, 32, 32), batch_size=4, imglist=True),
    "mirror": dict(data_shape=(3, 40, 48), batch_size=4, rand_mirror_prob=0.5),
    "pad": dict(data_shape=(3, 40, 48), batch_size=4, rand_pad_prob=0.7, max_pad_scale=2.5,
                fill_value=90),
    "crop": dict(data_shape=(3, 40, 48), batch_size=4, rand_crop_prob=0.9,
                 min_crop_scales=0.3, max_crop_scales=1.0, min_crop_aspect_ratios=0.5,
                 max_crop_aspect_ratios=2.0),
    "crop_constrained": dict(data_shape=(3, 40, 48), batch_size=4, rand_crop_prob=1.0,
                             min_crop_scales=0.3, max_crop_scales=0.9,
                             min_crop_aspect_ratios=0.5, max_crop_aspect_ratios=2.0,
                             min_crop_overlaps=0.1, max_crop_overlaps=0.95,
                             min_crop_sample_coverages=0.05, max_crop_sample_coverages=0.95,
                             min_crop_object_coverages=0.1, max_crop_object_coverages=0.99,
                             max_crop_trials=50),
    "crop_overlap_emit": dict(data_shape=(3, 40, 48), batch_size=4, rand_crop_prob=1.0,
                              min_crop_scales=0.4, max_crop_scales=0.8,
                              crop_emit_mode="overlap", emit_overlap_thresh=0.5),
    "crop_samplers": dict(data_shape=(3, 40, 48), batch_size=4, rand_crop_prob=1.0,
                          num_crop_sampler=3, min_crop_scales=(0.3, 0.5, 0.7),
                          max_crop_scales=(1.0, 1.0, 0.9), min_crop_aspect_ratios=0.5,
                          max_crop_aspect_ratios=2.0, max_crop_trials=(25, 10, 50)),
    "color": dict(data_shape=(3, 32, 32), batch_size=4, max_random_hue=18,
                  random_hue_prob=0.5, max_random_saturation=32, random_saturation_prob=0.5,
                  max_random_illumination=32, random_illumination_prob=0.5,
                  max_random_contrast=0.5, random_contrast_prob=0.5),
    "shuffle": dict(data_shape=(3, 32, 32), batch_size=4, shuffle=True, seed=3),
    # one batch read, then reset (MXNet starts a new pass of its parser), then the epochs
    "mid_reset": dict(data_shape=(3, 32, 32), batch_size=4, shuffle=True, seed=5,
                      rand_mirror_prob=0.5, rand_crop_prob=0.5, min_crop_scales=0.5,
                      early_reset=True),
    "mean_img": dict(data_shape=(3, 32, 32), batch_size=4, mean_img=True,
                     rand_mirror_prob=0.5, rand_crop_prob=0.5, min_crop_scales=0.5),
    "ssd_train": dict(data_shape=(3, 48, 48), batch_size=5, shuffle=True, resize=40,
                      rand_mirror_prob=0.5, rand_pad_prob=0.5, max_pad_scale=3.0,
                      rand_crop_prob=0.8, num_crop_sampler=2, min_crop_scales=(0.3, 0.6),
                      max_crop_scales=1.0, min_crop_aspect_ratios=0.5,
                      max_crop_aspect_ratios=2.0, fill_value=127, mean_r=123, mean_g=117,
                      mean_b=104),
}

# ImageDetIter: name -> (kwargs, seed); source 'rec' (default), 'idx', 'lst' or 'list'
DET = {
    "plain": dict(data_shape=(3, 40, 48), batch_size=4),
    "resize_mean": dict(data_shape=(3, 32, 32), batch_size=4, resize=40, mean=True, std=True),
    "roll_over": dict(data_shape=(3, 32, 32), batch_size=4, last_batch_handle="roll_over"),
    "discard": dict(data_shape=(3, 32, 32), batch_size=4, last_batch_handle="discard"),
    "lst": dict(data_shape=(3, 32, 32), batch_size=4, source="lst"),
    "imglist": dict(data_shape=(3, 32, 32), batch_size=3, source="list"),
    "mirror": dict(data_shape=(3, 40, 48), batch_size=4, rand_mirror=True),
    "crop": dict(data_shape=(3, 40, 48), batch_size=4, rand_crop=1, min_object_covered=0.3,
                 area_range=(0.2, 1.0)),
    "crop_multi": dict(data_shape=(3, 40, 48), batch_size=4, rand_crop=0.7,
                       min_object_covered=[0.1, 0.3, 0.5], aspect_ratio_range=(0.6, 1.6),
                       area_range=[(0.1, 1.0), (0.3, 1.0), (0.5, 1.0)]),
    "pad": dict(data_shape=(3, 40, 48), batch_size=4, rand_pad=1, area_range=(0.3, 2.5),
                pad_val=(10, 200, 30)),
    "shuffle": dict(data_shape=(3, 32, 32), batch_size=4, shuffle=True, source="idx",
                    rand_mirror=True),
    "all": dict(data_shape=(3, 40, 40), batch_size=4, resize=44, rand_crop=0.5, rand_pad=0.5,
                rand_mirror=True, mean=True, std=True, brightness=0.2, contrast=0.2,
                saturation=0.2, hue=0.1, pca_noise=0.05, rand_gray=0.2, inter_method=1),
}


def images():
    """Images of 24-48 px a side (red ramps left to right, green top to bottom, blue
    blocks) and their labels: header [3, 6, 7.5] (one extra header value), 1-4 objects of
    [class, xmin, ymin, xmax, ymax, difficult]; record 4 holds a box without area (dropped)."""
    rs = np.random.RandomState(7)
    out = []
    for i in range(N_IMAGES):
        h, w = rs.randint(24, 49, size=2)
        x = np.linspace(30, 220, w)[None, :].repeat(h, 0)
        y = np.linspace(20, 230, h)[:, None].repeat(w, 1)
        blocks = rs.randint(10, 240, size=(h // 8 + 1, w // 8 + 1))
        b = np.kron(blocks, np.ones((8, 8)))[:h, :w]
        img = np.clip(np.rint(np.stack([x, y, b], -1)), 5, 245).astype(np.uint8)
        objs = []
        for k in range(1 + i % 4):
            x0, y0 = rs.uniform(0, 0.7, size=2)
            x1 = min(1.0, x0 + rs.uniform(0.1, 0.6))
            y1 = min(1.0, y0 + rs.uniform(0.1, 0.6))
            objs += [float(rs.randint(0, 5)), x0, y0, x1, y1, float(k % 2)]
        if i == 4:
            objs += [1.0, 0.6, 0.5, 0.4, 0.9, 0.0]  # xmax < xmin: no area
        label = np.array([3, OBJ_WIDTH, 7.5] + objs, np.float32)
        out.append((img, label))
    return out


def write_rec(mx, rec_path, idx_path):
    rec = mx.recordio.MXIndexedRecordIO(idx_path, rec_path, "w")
    for i, (img, label) in enumerate(images()):
        rec.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, label, i, 0),
                                          png_bytes(img)))
    rec.close()


def write_lst(path, root, labels_only=False, shift=0.0):
    """A .lst of the images (written under ``root`` as PNGs unless ``labels_only``);
    ``shift`` moves every box's class id (to tell list labels from record labels)."""
    lines = []
    for i, (img, label) in enumerate(images()):
        name = f"im{i}.png"
        if not labels_only:
            with open(os.path.join(root, name), "wb") as f:
                f.write(png_bytes(img))
        lab = label.copy()
        lab[3::OBJ_WIDTH] += shift
        lines.append("\t".join([str(i)] + [repr(float(v)) for v in lab] + [name]))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def mean_img_path(tmp, name):
    return os.path.join(tmp, f"{name}_mean.nd")


def make_rec_iter(mx, root, name, tmp, **extra):
    kw = dict(REC[name])
    early_reset = kw.pop("early_reset", False)
    if kw.pop("mean_img", False):  # created by the iterator (one pass) in tmp
        kw["mean_img"] = mean_img_path(tmp, name)
    if kw.pop("imglist", False):
        lst = os.path.join(tmp, "labels.lst")
        write_lst(lst, tmp, labels_only=True, shift=10.0)
        kw["path_imglist"] = lst
    kw.update(extra)
    it = mx.io.ImageDetRecordIter(path_imgrec=os.path.join(root, "det.rec"),
                                  preprocess_threads=1, **kw)
    if early_reset:
        it.next()
        it.reset()
    return it


def make_det_iter(mx, root, name, tmp, **extra):
    kw = dict(DET[name])
    source = kw.pop("source", "rec")
    rec, idx = os.path.join(root, "det.rec"), os.path.join(root, "det.idx")
    for k in ("mean", "std"):  # MXNet wants numpy arrays or True
        if isinstance(kw.get(k), list):
            kw[k] = np.array(kw[k])
    kw.update(extra)
    if source == "rec":
        return mx.image.ImageDetIter(path_imgrec=rec, **kw)
    if source == "idx":
        return mx.image.ImageDetIter(path_imgrec=rec, path_imgidx=idx, **kw)
    if source == "lst":
        lst = os.path.join(tmp, "det.lst")
        write_lst(lst, tmp)
        return mx.image.ImageDetIter(path_imglist=lst, path_root=tmp, **kw)
    imglist = []
    for i, (img, label) in enumerate(images()):
        with open(os.path.join(tmp, f"im{i}.png"), "wb") as f:
            f.write(png_bytes(img))
        imglist.append([label.tolist(), f"im{i}.png"])
    return mx.image.ImageDetIter(imglist=imglist, path_root=tmp, **kw)


# CreateDetAugmenter arguments whose augmenter list's dumps() is recorded
DUMPS = dict(data_shape=(3, 30, 30), resize=40, rand_crop=0.5, rand_pad=0.5, rand_mirror=True,
             mean=True, std=True, brightness=0.1, contrast=0.2, saturation=0.3, hue=0.1,
             pca_noise=0.05, rand_gray=0.1, min_object_covered=[0.1, 0.5],
             area_range=(0.1, 2.0), pad_val=(1, 2, 3))


def dumps(mx):
    return json.dumps([a.dumps() for a in mx.image.CreateDetAugmenter(**DUMPS)])


def run_epochs(it, epochs=EPOCHS):
    """``epochs`` epochs (reset between them): the first batch's first two images whole
    (uint8 when they are whole pixel values), every
    image's per-channel mean, every batch's labels and pad, the batches per epoch."""
    data, labels, pads, counts = [], [], [], []
    for e in range(epochs):
        if e:
            it.reset()
        n = 0
        for b in it:
            data.append(b.data[0].asnumpy())
            labels.append(b.label[0].asnumpy())
            pads.append(b.pad)
            n += 1
        counts.append(n)
    data = np.stack(data)
    head = data[0, :2]
    if np.array_equal(head, np.clip(np.rint(head), 0, 255)):
        head = head.astype(np.uint8)
    return dict(data=head, chan_mean=data.astype(np.float64).mean((3, 4)),
                label=np.stack(labels), pad=np.array(pads), batches=np.array(counts))


def seed_all(mx, seed):
    random.seed(seed)
    np.random.seed(seed)


def main():
    import mxnet as mx
    os.makedirs(ROOT, exist_ok=True)
    write_rec(mx, os.path.join(ROOT, "det.rec"), os.path.join(ROOT, "det.idx"))
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in REC:
            it = make_rec_iter(mx, ROOT, name, tmp)
            for k, v in run_epochs(it).items():
                out[f"rec/{name}/{k}"] = v
            out[f"rec/{name}/provide_label"] = np.array(it.provide_label[0].shape)
            if REC[name].get("mean_img"):
                out[f"rec/{name}/mean"] = \
                    mx.nd.load(mean_img_path(tmp, name))["mean_img"].asnumpy()
        for k, name in enumerate(DET):
            seed_all(mx, 100 + k)
            it = make_det_iter(mx, ROOT, name, tmp)
            for key, v in run_epochs(it).items():
                out[f"det/{name}/{key}"] = v
            out[f"det/{name}/provide_label"] = np.array(it.provide_label[0][1])
    out["dumps"] = np.array(dumps(mx))
    for key, v in out.items():
        if v.dtype == np.float64:
            out[key] = v.astype(np.float32)
    with tempfile.TemporaryDirectory(dir=ROOT) as tmp:
        npz = os.path.join(tmp, "expected.npz")
        np.savez_compressed(npz, **out)
        os.replace(npz, os.path.join(ROOT, "expected.npz"))


if __name__ == "__main__":
    main()
