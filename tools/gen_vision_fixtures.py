"""Write tests/fixtures/data/vision.{npz,json} from MXNet 1.9.1 (/tmp/mxref/bin/python).

Deterministic image transforms (to_tensor, normalize, resize, crops, flips, colour changes
with a fixed factor, lighting with fixed weights), RandomResizedCrop under ``random.seed``,
and MNIST / CIFAR10 / CIFAR100 read from small synthetic files (the same bytes the tests
write, so that the readers can be compared).
"""
import hashlib
import json
import os
import random
import sys
import tempfile

import numpy as np
import mxnet as mx
from mxnet import nd
from mxnet.gluon.data import vision
from mxnet.gluon.data.vision import transforms as T

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "data")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import vision_synthetic  # noqa: E402 - the synthetic dataset files, shared with the tests


def main():
    rng = np.random.RandomState(11)
    arrays, meta = {}, {}
    img8 = rng.randint(0, 256, (9, 12, 3)).astype(np.uint8)
    imgf = (rng.rand(9, 12, 3) * 255).astype(np.float32)
    batchf = (rng.rand(2, 6, 5, 3) * 255).astype(np.float32)
    arrays.update(img8=img8, imgf=imgf, batchf=batchf)
    x8, xf, bf = nd.array(img8, dtype=np.uint8), nd.array(imgf), nd.array(batchf)

    arrays["to_tensor8"] = T.ToTensor()(x8).asnumpy()
    arrays["to_tensor_batch"] = T.ToTensor()(bf).asnumpy()
    chw = T.ToTensor()(xf)
    arrays["normalize"] = T.Normalize((0.5, 0.4, 0.3), (0.2,))(chw).asnumpy()
    arrays["normalize_scalar"] = T.Normalize(0.5, 2.0)(chw).asnumpy()
    arrays["normalize_batch"] = T.Normalize((0.1, 0.2, 0.3), (0.9, 0.8, 0.7))(
        T.ToTensor()(bf)).asnumpy()
    arrays["cast"] = T.Cast("float16")(x8).asnumpy()

    meta["resize"] = []
    for i, (src, size, keep, interp) in enumerate([
            ("imgf", (5, 4), False, 1), ("imgf", (17, 13), False, 1), ("imgf", 6, True, 1),
            ("imgf", 20, True, 1), ("imgf", (6, 3), False, 2), ("imgf", (7, 5), False, 0),
            ("imgf", (24, 18), False, 0), ("img8", (5, 4), False, 1), ("img8", (17, 13), False, 1),
            ("imgf", (4, 3), False, 2), ("batchf", (3, 4), False, 1), ("imgf", 7, False, 1),
            ("imgf", (6, 3), False, 3), ("imgf", (5, 4), False, 3), ("imgf", (7, 7), False, 3),
            ("img8", (5, 4), False, 3), ("imgf", (12, 4), False, 3)]):
        x = {"imgf": xf, "img8": x8, "batchf": bf}[src]
        arrays[f"resize{i}"] = T.Resize(size, keep, interp)(x).asnumpy()
        meta["resize"].append({"src": src, "size": size, "keep": keep, "interp": interp})

    arrays["crop_resize"] = T.CropResize(1, 2, 4, 3)(xf).asnumpy()
    arrays["crop_resize_size"] = T.CropResize(2, 1, 6, 5, size=(4, 3),
                                              interpolation=1)(xf).asnumpy()
    arrays["crop_batch"] = T.CropResize(1, 1, 3, 2)(bf).asnumpy()
    arrays["center_small"] = T.CenterCrop((5, 4))(xf).asnumpy()
    arrays["center_large"] = T.CenterCrop(10)(xf).asnumpy()
    arrays["center_int8"] = T.CenterCrop((3, 7))(x8).asnumpy()

    meta["rrc_seeds"] = [0, 1, 2, 3, 4]
    big = (rng.rand(20, 30, 3) * 255).astype(np.float32)
    arrays["rrc_src"] = big
    for s in meta["rrc_seeds"]:
        random.seed(s)
        arrays[f"rrc{s}"] = T.RandomResizedCrop(8)(nd.array(big)).asnumpy()
    random.seed(9)
    arrays["rrc_scale"] = T.RandomResizedCrop((6, 5), scale=(0.5, 0.9), ratio=(0.5, 2.0))(
        nd.array(big)).asnumpy()

    arrays["flip_lr"] = nd.image.flip_left_right(xf).asnumpy()
    arrays["flip_tb"] = nd.image.flip_top_bottom(xf).asnumpy()
    for name, op in (("brightness", nd.image.random_brightness),
                     ("contrast", nd.image.random_contrast),
                     ("saturation", nd.image.random_saturation)):
        for a in (0.6, 1.7):
            arrays[f"{name}_f_{a}"] = op(xf, a, a).asnumpy()
            arrays[f"{name}_8_{a}"] = op(x8, a, a).asnumpy()
    for a in (1.2, 0.7, 1.45):
        arrays[f"hue_f_{a}"] = nd.image.random_hue(xf, a, a).asnumpy()
        arrays[f"hue_8_{a}"] = nd.image.random_hue(x8, a, a).asnumpy()
    gray_img = np.repeat(imgf[:, :, :1], 3, axis=2)
    arrays["hue_gray"] = nd.image.random_hue(nd.array(gray_img), 1.3, 1.3).asnumpy()
    arrays["lighting_f"] = nd.image.adjust_lighting(xf, alpha=(0.1, -0.2, 0.3)).asnumpy()
    arrays["lighting_8"] = nd.image.adjust_lighting(x8, alpha=(2.0, -1.0, 0.5)).asnumpy()

    # ---- rotations (CHW float32)
    chw = T.ToTensor()(xf)
    nchw = T.ToTensor()(bf)
    arrays["rot30"] = T.Rotate(30)(chw).asnumpy()
    arrays["rot_in"] = T.Rotate(-45, zoom_in=True)(chw).asnumpy()
    arrays["rot_out"] = T.Rotate(60, zoom_out=True)(chw).asnumpy()
    arrays["rot_batch"] = mx.image.imrotate(nchw, nd.array([10.0, -100.0])).asnumpy()
    np.random.seed(4)
    arrays["rot_random"] = T.RandomRotation((-20, 40), rotate_with_proba=0.9)(chw).asnumpy()
    np.random.seed(5)
    arrays["rot_random_batch"] = T.RandomRotation((-20, 40), zoom_out=True)(nchw).asnumpy()

    # ---- datasets from synthetic files
    with tempfile.TemporaryDirectory() as root:
        files = vision_synthetic.write_all(root)
        hashes = {}
        for name, path in files.items():
            with open(path, "rb") as f:
                hashes[name] = hashlib.sha1(f.read()).hexdigest()

        class LocalMNIST(vision.MNIST):
            def __init__(self, **kw):
                super().__init__(**kw)

            def _get_data(self):
                self._train_data = (self._train_data[0], hashes[self._train_data[0]])
                self._train_label = (self._train_label[0], hashes[self._train_label[0]])
                self._test_data = (self._test_data[0], hashes[self._test_data[0]])
                self._test_label = (self._test_label[0], hashes[self._test_label[0]])
                super()._get_data()

        for train in (True, False):
            ds = LocalMNIST(root=os.path.join(root, "mnist"), train=train)
            tag = "mnist_train" if train else "mnist_test"
            d, l = ds[3]
            meta[tag] = {"len": len(ds), "data_type": type(d).__name__,
                         "data_dtype": np.dtype(d.dtype).name, "data_shape": list(d.shape),
                         "label_type": type(l).__name__, "label": int(l)}
            arrays[f"{tag}_3"] = d.asnumpy()

        for cls, key, extra in ((vision.CIFAR10, "cifar10", {}),
                                (vision.CIFAR100, "cifar100_coarse", {}),
                                (vision.CIFAR100, "cifar100_fine", {"fine_label": True})):
            sub = "cifar10" if cls is vision.CIFAR10 else "cifar100"

            class Local(cls):
                def _get_data(self):
                    self._train_data = [(n, hashes[n]) for n, _ in self._train_data]
                    self._test_data = [(n, hashes[n]) for n, _ in self._test_data]
                    super()._get_data()

            for train in (True, False):
                ds = Local(root=os.path.join(root, sub), train=train, **extra)
                tag = f"{key}_{'train' if train else 'test'}"
                d, l = ds[len(ds) - 1]
                meta[tag] = {"len": len(ds), "data_dtype": np.dtype(d.dtype).name,
                             "data_shape": list(d.shape), "label_type": type(l).__name__,
                             "labels": [int(ds[i][1]) for i in range(len(ds))]}
                arrays[f"{tag}_last"] = d.asnumpy()

    # ---- an image RecordIO file (PNG payloads, packed by MXNet's recordio)
    rec = os.path.join(OUT, "images.rec")
    idx = os.path.join(OUT, "images.idx")
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    labels = [3.0, [1.0, 2.5, -1.0], 7.0]
    for i, lab in enumerate(labels):
        img = rng.randint(0, 256, (4 + i, 5, 3)).astype(np.uint8)
        header = mx.recordio.IRHeader(0, lab, i, 0)
        w.write_idx(i, mx.recordio.pack(header, vision_synthetic.png_bytes(img)))
        arrays[f"rec_img{i}"] = img
    w.close()
    ds = vision.ImageRecordDataset(rec)
    meta["image_record"] = {"len": len(ds), "labels": [], "label_types": []}
    for i in range(len(ds)):
        d, l = ds[i]
        arrays[f"rec_dec{i}"] = d.asnumpy()
        meta["image_record"]["labels"].append(np.asarray(l).tolist())
        meta["image_record"]["label_types"].append(type(l).__name__)
    gray = vision.ImageRecordDataset(rec, flag=0)[1][0]
    arrays["rec_gray1"] = gray.asnumpy()

    np.savez_compressed(os.path.join(OUT, "vision.npz"), **arrays)
    with open(os.path.join(OUT, "vision.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
