"""Write locally made, learnable data in the formats MXNet 1.9.1's example scripts and its
``tests/python/train`` tests read, so that they run with no network.

    python tools/make_example_data.py OUT_DIR [--what mnist,cifar,text] [sizes ...]

Everything goes under ``OUT_DIR/data/`` (the scripts and tests read ``data/...`` relative to
their working directory):

* MNIST's idx files, raw (``train-images-idx3-ubyte``, ..., read by the train tests through
  ``mx.io.MNISTIter``) and gzipped (``train-images-idx3-ubyte.gz``, ..., read by
  ``example/image-classification/train_mnist.py``). The images are scikit-learn's bundled
  handwritten digits (1,797 8x8 scans, no download), drawn into a 28x28 frame the way MNIST
  centres its digits, each copy under a small random rotation, scale and shift. The test images
  come from scans that no training image uses, so test accuracy measures generalisation.
* CIFAR-10-shaped RecordIO files of 32x32 colour images (the same digits, in a random colour on
  a random background with noise): ``cifar10_train.rec``/``cifar10_val.rec`` (with ``.idx``) for
  ``train_cifar10.py``, and ``cifar/train.rec``, ``cifar/test.rec`` with ``.lst`` files for the
  train tests (``mx.test_utils.get_cifar10`` looks for those four names).
* A text corpus from a small stochastic English grammar, one sentence a line, words separated
  by spaces: ``sherlockholmes.train.txt``/``sherlockholmes.test.txt`` (the names
  ``example/rnn/bucketing/lstm_bucketing.py`` reads) and the same text as ``ptb.train.txt``/
  ``ptb.valid.txt``. Every test word also occurs in the training text (the script builds its
  vocabulary from the training text only).

The output depends on the options and ``--seed`` alone; a file that exists with the same
recipe (``data/.recipe.json``) is not rewritten. Needs numpy, torch, scikit-learn (for the digits)
and neogluon (for the RecordIO writer); exits with status 3 when scikit-learn is missing.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import struct
import sys

import numpy as np

EXIT_NO_SOURCE = 3

# --------------------------------------------------------------------------------- digits


def _load_digits():
    """sklearn's 1,797 8x8 digit scans as float32 in [0, 1], and their labels."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        print("make_example_data: scikit-learn is not installed; its bundled digits are the "
              "source of the image data", file=sys.stderr)
        raise SystemExit(EXIT_NO_SOURCE)
    digits = load_digits()
    return (digits.images.astype(np.float32) / 16.0), digits.target.astype(np.int64)


def _split_sources(labels, test_fraction=0.2):
    """Indices of the scans for training and for testing: every fifth scan of each class is
    held out, so that no test image is a transformed copy of a training scan."""
    train, test = [], []
    for cls in range(10):
        idx = np.flatnonzero(labels == cls)
        period = int(round(1 / test_fraction))
        test.extend(idx[::period])
        train.extend(np.setdiff1d(idx, idx[::period]))
    return np.array(sorted(train)), np.array(sorted(test))


def _draw_digits(scans, count, out_size, box, rng, max_rotate_deg, max_shift_px, scale_range):
    """``count`` images of ``out_size`` x ``out_size``: random scans (from ``scans``) resampled
    bilinearly so that the digit fills about ``box`` pixels, under a random rotation, scale and
    shift. Returns (images float32 in [0, 1], indices of the scans used)."""
    import torch
    import torch.nn.functional as F
    choice = rng.integers(0, len(scans), size=count)
    angle = np.deg2rad(rng.uniform(-max_rotate_deg, max_rotate_deg, size=count))
    scale = rng.uniform(scale_range[0], scale_range[1], size=count)
    shift = rng.uniform(-max_shift_px, max_shift_px, size=(count, 2))
    # affine_grid maps output coordinates (normalised to [-1, 1] over out_size pixels) to source
    # coordinates (normalised over the 8x8 scan): the scan's full width spans ``box`` output
    # pixels at scale 1, so the output-to-source factor is out_size / (box * scale).
    factor = out_size / (box * scale)
    cos, sin = np.cos(angle) * factor, np.sin(angle) * factor
    shift_norm = shift * 2.0 / out_size
    theta = np.zeros((count, 2, 3), dtype=np.float32)
    theta[:, 0, 0], theta[:, 0, 1] = cos, -sin
    theta[:, 1, 0], theta[:, 1, 1] = sin, cos
    # source = M (out - shift)
    theta[:, 0, 2] = -(cos * shift_norm[:, 0] - sin * shift_norm[:, 1])
    theta[:, 1, 2] = -(sin * shift_norm[:, 0] + cos * shift_norm[:, 1])
    out = np.empty((count, out_size, out_size), dtype=np.float32)
    src_all = torch.from_numpy(np.ascontiguousarray(scans, dtype=np.float32))
    for start in range(0, count, 4096):
        sl = slice(start, min(start + 4096, count))
        src = src_all[torch.from_numpy(choice[sl])].unsqueeze(1)
        grid = F.affine_grid(torch.from_numpy(theta[sl]), (src.shape[0], 1, out_size, out_size),
                             align_corners=False)
        img = F.grid_sample(src, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
        out[sl] = img[:, 0].numpy()
    return np.clip(out, 0.0, 1.0), choice


def _mnist_images(scans, count, rng):
    img, choice = _draw_digits(scans, count, 28, 20, rng, max_rotate_deg=6, max_shift_px=1.0,
                               scale_range=(0.93, 1.07))
    # The upsampled 8x8 scans are soft and wide; a ramp over the middle grey levels sharpens
    # the strokes to MNIST's statistics (mean ~0.14, std ~0.32, ~19% of pixels lit; MNIST's
    # own: 0.13, 0.31, 19%), which its training recipes (learning rates) are tuned for.
    img = np.clip((img - 0.35) / 0.35, 0.0, 1.0)
    return np.round(255 * img).astype(np.uint8), choice


def _write_idx(path, array, gz):
    """MNIST's idx format: magic (0x0801 labels / 0x0803 images), the sizes, then bytes."""
    if array.ndim == 1:
        header = struct.pack(">II", 0x0801, array.shape[0])
    else:
        header = struct.pack(">IIII", 0x0803, *array.shape)
    payload = header + array.astype(np.uint8).tobytes()
    if gz:
        # mtime=0: the same data give the same bytes.
        payload = gzip.compress(payload, compresslevel=6, mtime=0)
    _write_file(path, payload)


def make_mnist(data_dir, n_train, n_test, seed):
    scans, labels = _load_digits()
    train_src, test_src = _split_sources(labels)
    rng = np.random.default_rng(seed)
    for prefix, src, count in (("train", train_src, n_train), ("t10k", test_src, n_test)):
        images, choice = _mnist_images(scans[src], count, rng)
        lab = labels[src][choice]
        for gz in (False, True):
            ext = ".gz" if gz else ""
            _write_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte{ext}"), images, gz)
            _write_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte{ext}"), lab, gz)


# --------------------------------------------------------------------------------- colour images


def _colour_images(scans, count, rng):
    """32x32 BGR uint8 images: the digit's mask blends a random foreground colour into a random
    background that varies linearly across the image, plus pixel noise."""
    mask, choice = _draw_digits(scans, count, 32, 22, rng, max_rotate_deg=12, max_shift_px=3,
                                scale_range=(0.85, 1.15))
    mask = mask[..., None] ** 0.7
    bg = rng.uniform(0, 255, size=(count, 1, 1, 3))
    # The foreground differs from the background by at least 90 in each channel's direction
    # of choice, so every digit stays visible.
    offset = rng.uniform(90, 160, size=(count, 1, 1, 3)) * rng.choice([-1, 1], size=(count, 1, 1, 3))
    fg = bg + offset
    fg = np.where((fg < 0) | (fg > 255), bg - offset, fg)
    ramp = np.linspace(-1, 1, 32)
    direction = rng.uniform(-1, 1, size=(count, 2))
    gradient = (direction[:, 0, None, None] * ramp[None, :, None]
                + direction[:, 1, None, None] * ramp[None, None, :])[..., None] * 25
    img = bg + gradient + (fg - bg) * mask + rng.normal(0, 8, size=(count, 32, 32, 3))
    return np.clip(np.round(img), 0, 255).astype(np.uint8), choice


def _write_rec(rec_path, images, labels, lst_path=None):
    """An indexed RecordIO file (``.rec`` + ``.idx``) of JPEG-encoded images (quality 95:
    im2rec's default, as in MXNet's own CIFAR-10 .rec files), im2rec's layout (header: flag
    0, the label, the record's id), and optionally im2rec's ``.lst``."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from neogluon import recordio
    idx_path = os.path.splitext(rec_path)[0] + ".idx"
    tmp_rec, tmp_idx = rec_path + ".part", idx_path + ".part"
    writer = recordio.MXIndexedRecordIO(tmp_idx, tmp_rec, "w")
    for i, (img, label) in enumerate(zip(images, labels)):
        header = recordio.IRHeader(0, float(label), i, 0)
        writer.write_idx(i, recordio.pack_img(header, img, quality=95, img_fmt=".jpg"))
    writer.close()
    os.replace(tmp_idx, idx_path)
    os.replace(tmp_rec, rec_path)
    if lst_path:
        lines = "".join(f"{i}\t{float(label):f}\t{i:05d}.jpg\n" for i, label in enumerate(labels))
        _write_file(lst_path, lines.encode())


def make_cifar(data_dir, n_train, n_test, seed):
    scans, labels = _load_digits()
    train_src, test_src = _split_sources(labels)
    rng = np.random.default_rng(seed + 1)
    os.makedirs(os.path.join(data_dir, "cifar"), exist_ok=True)
    for split, src, count in (("train", train_src, n_train), ("test", test_src, n_test)):
        images, choice = _colour_images(scans[src], count, rng)
        lab = labels[src][choice]
        rec = os.path.join(data_dir, "cifar", f"{split}.rec")
        _write_rec(rec, images, lab, lst_path=os.path.join(data_dir, "cifar", f"{split}.lst"))
        example = os.path.join(data_dir, "cifar10_train" if split == "train" else "cifar10_val")
        for ext in (".rec", ".idx"):
            _link_or_copy(os.path.splitext(rec)[0] + ext, example + ext)


def _link_or_copy(src, dst):
    tmp = f"{dst}.part{os.getpid()}"
    try:
        os.link(src, tmp)
    except OSError:
        import shutil
        shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


# --------------------------------------------------------------------------------- text

_WORDS = {
    "det_sg": ["the", "a", "this", "that", "every"],
    "det_pl": ["the", "some", "these", "those", "many", "two"],
    "adj": ["old", "young", "quiet", "clever", "small", "dark", "pale", "famous", "strange",
            "tired", "careful", "red", "cold", "bright", "sudden", "grey"],
    "noun": ["man", "woman", "doctor", "detective", "inspector", "letter", "door", "street",
             "house", "window", "lamp", "clerk", "visitor", "horse", "carriage", "client",
             "stranger", "servant", "key", "lady"],
    "verb_tr": ["saw", "found", "opened", "watched", "followed", "questioned", "closed",
                "examined", "noticed", "carried"],
    "verb_in": ["waited", "laughed", "returned", "vanished", "spoke", "slept", "listened",
                "hesitated"],
    "adv": ["slowly", "quickly", "quietly", "again", "at once", "in silence", "with care"],
    "prep": ["in", "near", "behind", "beside", "under", "across"],
    "place": ["the room", "the study", "the garden", "the station", "the fog", "the hall",
              "the park", "the inn"],
    "conj": ["and", "but", "while", "because", "when"],
    "name": ["holmes", "watson", "lestrade", "hudson", "moriarty", "adler"],
}


def _sentence(rng, depth=0):
    """One clause, with optional adjectives, place phrase and a joined second clause."""
    def pick(kind):
        words = _WORDS[kind]
        return words[rng.integers(len(words))]

    def noun_phrase():
        if rng.random() < 0.25:
            return [pick("name")]
        plural = rng.random() < 0.3
        words = [pick("det_pl" if plural else "det_sg")]
        if rng.random() < 0.5:
            words.append(pick("adj"))
        noun = pick("noun")
        words.append(noun + ("s" if plural and not noun.endswith("s") else ""))
        return words

    words = noun_phrase()
    if rng.random() < 0.6:
        words += [pick("verb_tr")] + noun_phrase()
    else:
        words += [pick("verb_in")]
        if rng.random() < 0.5:
            words += pick("adv").split()
    if rng.random() < 0.4:
        words += [pick("prep")] + pick("place").split()
    if depth < 2 and rng.random() < 0.35:
        words += [pick("conj")] + _sentence(rng, depth + 1)
    return words


def make_text(data_dir, n_train_lines, n_test_lines, seed):
    rng = np.random.default_rng(seed + 2)
    train = [_sentence(rng) + ["."] for _ in range(n_train_lines)]
    vocab = {w for s in train for w in s}
    test = []
    while len(test) < n_test_lines:
        s = _sentence(rng) + ["."]
        if all(w in vocab for w in s):
            test.append(s)
    for names, lines in ((("sherlockholmes.train.txt", "ptb.train.txt"), train),
                         (("sherlockholmes.test.txt", "ptb.valid.txt"), test)):
        text = "".join(" " + " ".join(s) + " \n" for s in lines).encode()
        for name in names:
            _write_file(os.path.join(data_dir, name), text)


# --------------------------------------------------------------------------------- driver


def _write_file(path, payload: bytes):
    tmp = f"{path}.part{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(payload)
    os.replace(tmp, path)


def _own_digest():
    """A digest of this file: data made by another version of the recipe are made again."""
    import hashlib
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def _recipe_path(data_dir, what):
    return os.path.join(data_dir, f".recipe-{what}.json")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", help="the files go under OUT_DIR/data/")
    ap.add_argument("--what", default="mnist,cifar,text",
                    help="comma-separated subset of mnist, cifar, text (default: all)")
    ap.add_argument("--mnist-train", type=int, default=60000)
    ap.add_argument("--mnist-test", type=int, default=10000)
    ap.add_argument("--cifar-train", type=int, default=10000)
    ap.add_argument("--cifar-test", type=int, default=2000)
    ap.add_argument("--text-train", type=int, default=8000, help="training sentences")
    ap.add_argument("--text-test", type=int, default=800, help="test sentences")
    ap.add_argument("--seed", type=int, default=1991)
    args = ap.parse_args(argv)
    data_dir = os.path.join(args.out_dir, "data")
    os.makedirs(data_dir, exist_ok=True)
    makers = {
        "mnist": (make_mnist, (args.mnist_train, args.mnist_test)),
        "cifar": (make_cifar, (args.cifar_train, args.cifar_test)),
        "text": (make_text, (args.text_train, args.text_test)),
    }
    wanted = [w.strip() for w in args.what.split(",") if w.strip()]
    unknown = sorted(set(wanted) - set(makers))
    if unknown:
        ap.error(f"--what: unknown kind(s) {', '.join(unknown)}; choose from mnist, cifar, text")
    for what in wanted:
        maker, sizes = makers[what]
        recipe = {"sizes": list(sizes), "seed": args.seed, "generator": _own_digest()}
        path = _recipe_path(data_dir, what)
        if os.path.exists(path):
            with open(path) as f:
                if json.load(f) == recipe:
                    continue
            os.remove(path)
        maker(data_dir, *sizes, args.seed)
        _write_file(path, json.dumps(recipe).encode())
        print(f"make_example_data: wrote {what} {sizes} under {data_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
