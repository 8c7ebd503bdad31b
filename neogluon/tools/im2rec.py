"""``python -m neogluon.tools.im2rec``: image lists and RecordIO files, as MXNet's im2rec.

Two steps, with MXNet 1.9.1's ``tools/im2rec.py`` command line::

    # 1. list the images under ROOT into PREFIX.lst (labels: one per sub-folder with
    #    --recursive); --chunks/--train-ratio/--test-ratio split it into several lists
    python -m neogluon.tools.im2rec --list --recursive PREFIX ROOT
    # 2. pack every PREFIX*.lst into .rec/.idx files (MXIndexedRecordIO)
    python -m neogluon.tools.im2rec --resize 256 --quality 90 --num-thread 4 PREFIX ROOT

A ``.lst`` line is ``index<TAB>label[<TAB>label...]<TAB>relative/path``. Images are read
with Pillow (no OpenCV needed) and resized with neogluon's OpenCV-compatible bilinear
``mx.image.imresize``; the files are read by MXNet's ``mx.recordio``/``ImageRecordIter`` and
by neogluon's.
"""
from __future__ import annotations

import argparse
import io
import multiprocessing
import os
import random
import sys
import time

import numpy as np

from .. import _fileio
from ..base import MXNetError


def list_images(root, recursive, exts):
    """Yield ``(index, relative_path, label)`` for the images under ``root``.

    Without ``recursive`` only the files directly in ``root`` are listed, all with label 0;
    with it every folder holding an image gets its own label, in the order of a sorted walk.
    """
    exts = {e.lower() for e in exts}
    i = 0
    if recursive:
        labels = {}
        for path, dirs, files in os.walk(root, followlinks=True):
            dirs.sort()
            for fname in sorted(files):
                fpath = os.path.join(path, fname)
                if os.path.splitext(fname)[1].lower() in exts and os.path.isfile(fpath):
                    label = labels.setdefault(path, len(labels))
                    yield (i, os.path.relpath(fpath, root), label)
                    i += 1
        for path, label in sorted(labels.items(), key=lambda kv: kv[1]):
            print(os.path.relpath(path, root), label)
    else:
        for fname in sorted(os.listdir(root)):
            fpath = os.path.join(root, fname)
            if os.path.splitext(fname)[1].lower() in exts and os.path.isfile(fpath):
                yield (i, os.path.relpath(fpath, root), 0)
                i += 1


def write_list(path, items):
    """Write ``(index, path, label...)`` items as a ``.lst`` file (labels as ``%f``)."""
    lines = []
    for item in items:
        labels = "".join("%f\t" % float(x) for x in item[2:])
        lines.append("%d\t%s%s\n" % (item[0], labels, item[1]))
    _fileio.write_text(path, "".join(lines))


def make_list(args):
    """The ``--list`` step: write ``prefix[_k][_train|_val|_test].lst``."""
    if not os.path.isdir(args.root):
        raise MXNetError(f"im2rec: root {args.root!r} is not a folder")
    if args.chunks < 1:
        raise MXNetError(f"im2rec: --chunks must be at least 1, got {args.chunks}")
    if not (0 <= args.train_ratio <= 1 and 0 <= args.test_ratio <= 1
            and args.train_ratio + args.test_ratio <= 1):
        raise MXNetError(f"im2rec: --train-ratio ({args.train_ratio}) and --test-ratio "
                         f"({args.test_ratio}) must lie in [0, 1] and sum to at most 1")
    items = list(list_images(args.root, args.recursive, args.exts))
    if args.shuffle:
        # The seed MXNet's im2rec uses, so the same folder gives the same order.
        random.Random(100).shuffle(items)
    chunk = (len(items) + args.chunks - 1) // args.chunks
    written = []
    for k in range(args.chunks):
        part = items[k * chunk:(k + 1) * chunk]
        name = args.prefix + (f"_{k}" if args.chunks > 1 else "")
        n_train = int(chunk * args.train_ratio)
        n_test = int(chunk * args.test_ratio)
        if args.train_ratio == 1.0:
            outputs = [(name + ".lst", part)]
        else:
            outputs = []
            if args.test_ratio:
                outputs.append((name + "_test.lst", part[:n_test]))
            if args.train_ratio + args.test_ratio < 1.0:
                outputs.append((name + "_val.lst", part[n_test + n_train:]))
            outputs.append((name + "_train.lst", part[n_test:n_test + n_train]))
        for path, sub in outputs:
            write_list(path, sub)
            written.append(path)
    return written


def read_list(path):
    """Yield ``[index, path, label, ...]`` for each well-formed line of a ``.lst`` file."""
    with open(path, "rb") as f:
        raw = f.read()
    for lineno, line in enumerate(raw.splitlines(), 1):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError:
            print(f"im2rec: {path}:{lineno}: skipped, not UTF-8 text", file=sys.stderr)
            continue
        parts = [p.strip() for p in line.strip().split("\t")]
        if len(parts) < 3:
            if line.strip():
                print(f"im2rec: {path}:{lineno}: skipped, a line needs index, label(s) and "
                      f"path separated by tabs: {line.strip()!r}", file=sys.stderr)
            continue
        try:
            item = [int(parts[0]), parts[-1]] + [float(x) for x in parts[1:-1]]
        except ValueError as err:
            print(f"im2rec: {path}:{lineno}: skipped ({err})", file=sys.stderr)
            continue
        yield item


def _load(fullpath, color):
    """Read an image file like ``cv2.imread(path, color)``: BGR (H, W, 3) or gray (H, W)."""
    from ..image.image import _decode
    from PIL import Image
    with open(fullpath, "rb") as f:
        buf = f.read()
    if color == 0:
        return _decode(buf, 0, "im2rec")[:, :, 0]
    if color == -1:
        with Image.open(io.BytesIO(buf)) as im:
            if im.mode in ("L", "1", "I;16", "I;16B", "I;16L", "I", "LA"):
                return _decode(buf, 0, "im2rec")[:, :, 0]
    return np.ascontiguousarray(_decode(buf, 1, "im2rec")[:, :, ::-1])


def _resize(img, w, h):
    from ..image.image import imresize
    from ..ndarray.ndarray import array
    hwc = img if img.ndim == 3 else img[:, :, None]
    out = imresize(array(hwc, dtype="uint8"), w, h, interp=1).asnumpy()
    return out if img.ndim == 3 else out[:, :, 0]


def encode_item(args, item):
    """Pack one ``.lst`` item into a record (bytes), or return None after saying why not."""
    from .. import recordio
    fullpath = os.path.join(args.root, item[1])
    label = item[2:] if (len(item) > 3 and args.pack_label) else item[2]
    header = recordio.IRHeader(0, label, item[0], 0)
    try:
        if args.pass_through:
            with open(fullpath, "rb") as f:
                return recordio.pack(header, f.read())
        img = _load(fullpath, args.color)
        if args.center_crop:
            h, w = img.shape[:2]
            if h > w:
                m = (h - w) // 2
                img = img[m:m + w]
            else:
                m = (w - h) // 2
                img = img[:, m:m + h]
        if args.resize:
            h, w = img.shape[:2]
            if h > w:
                img = _resize(img, args.resize, h * args.resize // w)
            else:
                img = _resize(img, w * args.resize // h, args.resize)
        return recordio.pack_img(header, img, quality=args.quality, img_fmt=args.encoding)
    except (OSError, MXNetError, ValueError) as err:
        print(f"im2rec: skipped {fullpath}: {err}", file=sys.stderr)
        return None


_WORKER_ARGS = None


def _init_worker(args):
    global _WORKER_ARGS
    _WORKER_ARGS = args
    try:  # one process per encoder: keep each one's resizing on one thread
        import torch
        torch.set_num_threads(1)
    except ImportError:
        pass


def _encode_indexed(item):
    return encode_item(_WORKER_ARGS, item)


def write_record(args, lst_path):
    """Pack the images of one ``.lst`` file into ``<same name>.rec`` and ``.idx``."""
    from .. import recordio
    base = os.path.splitext(lst_path)[0]
    rec_path, idx_path = base + ".rec", base + ".idx"
    tmp_rec, tmp_idx = rec_path + ".tmp", idx_path + ".tmp"
    items = list(read_list(lst_path))
    record = recordio.MXIndexedRecordIO(tmp_idx, tmp_rec, "w")
    written = 0
    tic = time.time()
    pool = None
    try:
        if args.num_thread > 1:
            pool = multiprocessing.get_context().Pool(args.num_thread, _init_worker, (args,))
            packed = pool.imap(_encode_indexed, items, chunksize=4)
        else:
            packed = (encode_item(args, item) for item in items)
        for count, (item, s) in enumerate(zip(items, packed)):
            if s is not None:
                record.write_idx(item[0], s)
                written += 1
            if count % 1000 == 0:
                print("time:", time.time() - tic, " count:", count)
                tic = time.time()
        record.close()
        os.replace(tmp_rec, rec_path)
        os.replace(tmp_idx, idx_path)
    except BaseException:
        record.close()
        for p in (tmp_rec, tmp_idx):
            if os.path.exists(p):
                os.unlink(p)
        raise
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    return written


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m neogluon.tools.im2rec",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description="Create an image list, or pack the images of image lists into RecordIO "
                    "(.rec/.idx) files.")
    p.add_argument("prefix", help="prefix of the .lst/.rec/.idx files (or a folder of .lst)")
    p.add_argument("root", help="folder holding the images")
    g = p.add_argument_group("Options for creating image lists")
    g.add_argument("--list", action="store_true",
                   help="list the images under root into <prefix>.lst instead of packing")
    g.add_argument("--exts", nargs="+", default=[".jpeg", ".jpg", ".png"],
                   help="image file extensions to list")
    g.add_argument("--chunks", type=int, default=1, help="number of lists to split into")
    g.add_argument("--train-ratio", type=float, default=1.0,
                   help="share of the images in <prefix>_train.lst")
    g.add_argument("--test-ratio", type=float, default=0,
                   help="share of the images in <prefix>_test.lst")
    g.add_argument("--recursive", action="store_true",
                   help="walk sub-folders, one label per folder (otherwise root only, label 0)")
    g.add_argument("--no-shuffle", dest="shuffle", action="store_false",
                   help="keep the sorted order instead of shuffling (seed 100, as MXNet)")
    g = p.add_argument_group("Options for creating the record files")
    g.add_argument("--pass-through", action="store_true",
                   help="store the image files' bytes as they are")
    g.add_argument("--resize", type=int, default=0,
                   help="resize the shorter edge to this size (0: keep)")
    g.add_argument("--center-crop", action="store_true",
                   help="crop the centre square first")
    g.add_argument("--quality", type=int, default=95,
                   help="JPEG quality 1-100, or PNG compression level 0-9")
    g.add_argument("--num-thread", type=int, default=1,
                   help="encoding processes (the record order stays the list's)")
    g.add_argument("--color", type=int, default=1, choices=[-1, 0, 1],
                   help="1: colour, 0: grayscale, -1: as stored (gray stays gray)")
    g.add_argument("--encoding", type=str, default=".jpg", choices=[".jpg", ".png"],
                   help="encoding of the stored images")
    g.add_argument("--pack-label", action="store_true",
                   help="store every label of a multi-label .lst line in the record header")
    args = p.parse_args(argv)
    args.prefix = os.path.abspath(args.prefix)
    args.root = os.path.abspath(args.root)
    return args


def main(argv=None):
    args = parse_args(argv)
    try:
        if args.list:
            make_list(args)
            return 0
        if args.num_thread < 1:
            raise MXNetError(f"im2rec: --num-thread must be at least 1, got {args.num_thread}")
        if not os.path.isdir(args.root):
            raise MXNetError(f"im2rec: root {args.root!r} is not a folder")
        workdir = args.prefix if os.path.isdir(args.prefix) else os.path.dirname(args.prefix)
        lists = sorted(os.path.join(workdir, f) for f in os.listdir(workdir)
                       if f.endswith(".lst") and os.path.isfile(os.path.join(workdir, f))
                       and os.path.join(workdir, f).startswith(args.prefix))
        if not lists:
            raise MXNetError(f"im2rec: found no .lst file with prefix {args.prefix!r} (make "
                             f"one with --list)")
        for lst in lists:
            print("Creating .rec file from", lst, "in", workdir)
            write_record(args, lst)
    except MXNetError as err:
        print(err, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
