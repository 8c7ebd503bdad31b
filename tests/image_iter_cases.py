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
