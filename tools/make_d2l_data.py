"""Local stand-ins for the data sets the d2l book (d2l 1.0.3, MXNet tab) downloads.

Nothing can be downloaded on the project's machines, so the book's chapters run on small data
made here in the same on-disk formats, laid where d2l / Gluon look for them:

* Fashion-MNIST: ``$MXNET_HOME/datasets/fashion-mnist/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz``
  (the gzip IDX files Gluon's ``FashionMNIST`` reads). Ten classes of 28x28 uint8 images, each
  class a fixed procedural silhouette (bars, rings, blocks, ...) with per-image shift, contrast and
  noise, so that the models have something learnable. Two sizes: ``mxhome-full`` (the linear/MLP
  /LeNet chapters) and ``mxhome-small`` (the modern CNNs, which resize the images and are slow on
  a CPU).
* The Time Machine: ``<data>/timemachine.txt``, English-like text from a fixed word-level Markov
  chain.
* English-French: ``<data>/fra-eng.zip`` holding ``fra-eng/fra.txt`` (``english<TAB>french`` lines
  from a small grammar with a word-by-word lexicon).

``<data>`` is d2l's default ``../data`` seen from the folder the chapter scripts run in (see
tools/d2l_chapters.py). The files' SHA-1 cannot match the real data's, so the runner's shim
(tools/d2l_shim.py) makes d2l's ``download`` and Gluon's dataset check accept the local files.

    python tools/make_d2l_data.py ROOT      # ROOT/data, ROOT/mxhome-full, ROOT/mxhome-small
"""
import gzip
import os
import random
import struct
import sys
import zipfile

import numpy as np


def _templates():
    yy, xx = np.mgrid[0:28, 0:28]
    c = 13.5
    r = np.hypot(yy - c, xx - c)
    t = []
    t.append((abs(xx - c) < 9) & (yy > 6) & (yy < 22) | ((yy > 6) & (yy < 11) & (abs(xx - c) < 13)))  # t-shirt
    t.append(((abs(xx - 10) < 3) | (abs(xx - 17) < 3)) & (yy > 3) & (yy < 26))                      # trouser
    t.append((abs(xx - c) < 11) & (yy > 5) & (yy < 24))                                              # pullover
    t.append((abs(xx - c) < 3 + (yy - 3) * 0.35) & (yy > 3) & (yy < 26))                             # dress
    t.append(((abs(xx - c) < 11) & (yy > 4) & (yy < 26)) & ~((abs(xx - c) < 1.5) & (yy > 8)))          # coat
    t.append((yy > 16) & (yy < 22) & (xx > 3) & (xx < 25) & ((xx // 3) % 2 == 0))                    # sandal
    t.append((abs(xx - c) < 9) & (yy > 4) & (yy < 25) & ((yy // 4) % 2 == 0))                       # shirt
    t.append((yy > 14) & (yy < 22) & (xx > 2) & (xx < 26 - (yy - 14)))                               # sneaker
    t.append(((r < 11) & (r > 7)) | ((yy > 12) & (yy < 25) & (abs(xx - c) < 10)))                   # bag
    t.append((yy > 6) & (yy < 24) & (xx > 4) & (xx < 24) & (xx + yy > 26))                          # ankle boot
    return [m.astype(np.float32) for m in t]


def _images(n, rng):
    temps = _templates()
    labels = rng.integers(0, 10, size=n).astype(np.uint8)
    out = np.empty((n, 28, 28), np.uint8)
    for i, lab in enumerate(labels):
        img = temps[lab] * rng.uniform(0.5, 1.0)
        img = np.roll(img, (rng.integers(-2, 3), rng.integers(-2, 3)), axis=(0, 1))
        img = img + rng.normal(0, 0.2, size=img.shape)
        out[i] = np.clip(img * 255, 0, 255).astype(np.uint8)
    return out, labels


def _write_idx(path, arr, magic):
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">I", magic))
        for d in arr.shape:
            f.write(struct.pack(">I", d))
        f.write(arr.tobytes())


def fashion_mnist(folder, n_train, n_test, seed=0):
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(seed)
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        x, y = _images(n, rng)
        _write_idx(os.path.join(folder, f"{prefix}-images-idx3-ubyte.gz"), x, 2051)
        _write_idx(os.path.join(folder, f"{prefix}-labels-idx1-ubyte.gz"), y, 2049)


_WORDS = {
    "det": ["the", "a", "my", "his", "that"],
    "adj": ["old", "dark", "strange", "little", "grey", "great", "quiet", "pale"],
    "noun": ["time", "machine", "traveller", "man", "night", "world", "sun", "garden",
             "door", "light", "people", "hand", "face", "river", "hill", "lamp"],
    "verb": ["saw", "felt", "made", "found", "took", "watched", "heard", "left", "kept"],
    "adv": ["slowly", "again", "there", "now", "still", "quickly"],
    "prep": ["in", "over", "through", "under", "beyond", "with"],
}


def _sentence(rnd):
    words = [rnd.choice(_WORDS["det"])]
    if rnd.random() < 0.5:
        words.append(rnd.choice(_WORDS["adj"]))
    words += [rnd.choice(_WORDS["noun"]), rnd.choice(_WORDS["verb"]), rnd.choice(_WORDS["det"]),
              rnd.choice(_WORDS["noun"])]
    if rnd.random() < 0.6:
        words += [rnd.choice(_WORDS["prep"]), rnd.choice(_WORDS["det"]),
                  rnd.choice(_WORDS["noun"])]
    if rnd.random() < 0.3:
        words.append(rnd.choice(_WORDS["adv"]))
    s = " ".join(words)
    return s[0].upper() + s[1:] + rnd.choice([".", ".", ".", ",", ";", "!"])


def time_machine(path, n_chars=60000, seed=1):
    rnd = random.Random(seed)
    lines, total = ["The Time Machine, a stand-in text", ""], 0
    while total < n_chars:
        line = " ".join(_sentence(rnd) for _ in range(rnd.randint(1, 3)))
        lines.append(line)
        total += len(line) + 1
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


_LEX = [("i", "je"), ("you", "tu"), ("he", "il"), ("she", "elle"), ("we", "nous")]
_VERBS = [("see", "vois"), ("like", "aime"), ("take", "prends"), ("want", "veux"),
          ("have", "ai"), ("know", "connais")]
_OBJS = [("the cat", "le chat"), ("the dog", "le chien"), ("a book", "un livre"),
         ("the house", "la maison"), ("the car", "la voiture"), ("a tree", "un arbre"),
         ("the river", "la riviere"), ("bread", "du pain"), ("the sun", "le soleil"),
         ("the garden", "le jardin")]


def fra_eng(zip_path, n_pairs=3000, seed=2):
    rnd = random.Random(seed)
    rows = []
    for _ in range(n_pairs):
        (se, sf), (ve, vf), (oe, of) = rnd.choice(_LEX), rnd.choice(_VERBS), rnd.choice(_OBJS)
        kind = rnd.random()
        if kind < 0.2:
            rows.append((f"{se.capitalize()} {ve}.", f"{sf.capitalize()} {vf}."))
        elif kind < 0.9:
            rows.append((f"{se.capitalize()} {ve} {oe}.", f"{sf.capitalize()} {vf} {of}."))
        else:
            rows.append((f"Do {se} {ve} {oe}?", f"Est-ce que {sf} {vf} {of} ?"))
    text = "\n".join(f"{e}\t{f}" for e, f in rows) + "\n"
    with zipfile.ZipFile(zip_path, "w") as z:
        z.writestr("fra-eng/fra.txt", text)


def main(root):
    data = os.path.join(root, "data")
    os.makedirs(data, exist_ok=True)
    fashion_mnist(os.path.join(root, "mxhome-full", "datasets", "fashion-mnist"), 4096, 1024)
    fashion_mnist(os.path.join(root, "mxhome-small", "datasets", "fashion-mnist"), 512, 256)
    time_machine(os.path.join(data, "timemachine.txt"))
    fra_eng(os.path.join(data, "fra-eng.zip"))
    print("d2l stand-in data under", root)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/d2l-run")
