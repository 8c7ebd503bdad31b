"""ImageIter / augmenter scenarios run identically by MXNet 1.9.1
(tools/gen_image_iter_fixtures.py) and neogluon (tests/test_image_iter.py)."""
import os
import random

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "image_iter")


def records(mx, lst_path):
    ims = sorted(x for x in os.listdir(ROOT) if x.endswith(".png"))
    with open(lst_path, "w") as f:
        for k, x in enumerate(ims):
            f.write(f"{k}\t{k % 3}\t{x}\n")
    out = []
    for lbh in ["pad", "discard", "roll_over"]:
        for src in ["list", "file"]:
            kw = (dict(imglist=[[k % 3, x] for k, x in enumerate(ims)]) if src == "list"
                  else dict(path_imglist=lst_path))
            it = mx.image.ImageIter(2, (3, 16, 16), path_root=ROOT, last_batch_handle=lbh,
                                    resize=20, **kw)
            for e in range(3):
                for b in it:
                    out.append(repr((lbh, src, e, b.pad, b.label[0].asnumpy().tolist(),
                                     round(float(b.data[0].sum().asscalar()), 1),
                                     b.data[0].shape)))
                it.reset()
    random.seed(3)
    np.random.seed(3)
    it = mx.image.ImageIter(2, (3, 16, 16), path_root=ROOT, path_imglist=lst_path, shuffle=True,
                            rand_mirror=True, rand_crop=True, brightness=0.1, contrast=0.1,
                            saturation=0.1, hue=0.1, pca_noise=0.1, rand_gray=0.3, mean=True,
                            std=True)
    for b in it:
        out.append(repr(("aug", b.label[0].asnumpy().tolist(),
                         round(float(b.data[0].sum().asscalar()), 1))))
    augs = mx.image.CreateAugmenter((3, 16, 16), resize=20, rand_crop=True, rand_mirror=True,
                                    mean=True, std=np.array([1.1, 1.0, 1.0]), brightness=0.1,
                                    hue=0.2, pca_noise=0.1, rand_gray=0.2, inter_method=10)
    out.append(repr([a.dumps() for a in augs]))
    return out


def record_iter_records(mx, tmp):
    """mx.io.ImageRecordIter over a .rec of the fixture PNGs (labels = record numbers)."""
    ims = sorted(x for x in os.listdir(ROOT) if x.endswith(".png"))
    rec_path = os.path.join(tmp, "t.rec")
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(tmp, "t.idx"), rec_path, "w")
    for i, name in enumerate(ims):
        with open(os.path.join(ROOT, name), "rb") as f:
            rec.write_idx(i, mx.recordio.pack((0, i, i, 0), f.read()))
    rec.close()
    out, arrays = [], {}
    configs = [dict(), dict(resize=18), dict(resize=20, inter_method=2),
               dict(mean_r=10, mean_g=20, mean_b=30, std_r=2, std_g=3, std_b=4, scale=0.5),
               dict(data_name="d", label_name="l", batch_size=3)]
    for ci, kw in enumerate(configs):
        kw = dict(kw)
        bs = kw.pop("batch_size", 2)
        it = mx.io.ImageRecordIter(path_imgrec=rec_path, data_shape=(3, 16, 16), batch_size=bs,
                                   **kw)
        out.append(repr([(d.name, d.shape) for d in it.provide_data + it.provide_label]))
        for e in range(2):
            for bi, b in enumerate(it):
                out.append(repr((ci, e, b.pad, b.label[0].asnumpy().tolist(), b.data[0].shape)))
                arrays[f"{ci}/{e}/{bi}"] = b.data[0].asnumpy()
            it.reset()
    return out, arrays
