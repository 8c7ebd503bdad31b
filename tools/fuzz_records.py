"""Fuzz the record and data-iterator loaders against their error contract.

Contract (docs/api_status.md, "Loader error contract: records and iterators"): a malformed
input file gives ``neogluon.base.MXNetError`` (or one of its subclasses that are also the
type MXNet 1.9.1 raises there, e.g. ``MXNetValueError``) whose message names the file; the
iterator can be reset afterwards; no other exception type, no hang.

The tool writes small valid seed files with neogluon itself (an image .rec/.idx made with
``recordio.pack_img``, a detection .rec, a .lst with its images, CSV, LibSVM, MNIST idx
files, a small ONNX export and its symbol/params files), mutates them (truncation, byte
flips, forged record lengths and idx offsets, wrong magic numbers, bad text lines, forged
MNIST dimensions, ...), runs each loader in-process over the mutated files to the end and
prints a tally per loader kind::

    python tools/fuzz_records.py --n 2000 --seed 0

It exits with 1 when a case ended in an INTERNAL outcome (an exception that is not an
MXNetError, an MXNetError whose message does not name the file, or a reset() that failed
after an error) and with 3 (printing the case and every thread's stack) when one case ran
longer than ``--timeout`` seconds. The test module tests/test_fuzz_record_loaders.py drives
the same mutators and loaders from hypothesis.
"""
from __future__ import annotations

import argparse
import contextlib
import faulthandler
import gzip
import io
import os
import random
import shutil
import struct
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter, defaultdict

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import neogluon as mx  # noqa: E402
from neogluon.base import MXNetError  # noqa: E402

_MAGIC = struct.pack("<I", 0xCED7230A)


# ---------------------------------------------------------------------------------------
# Seeds

def _png(img):
    from PIL import Image
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG")
    return buf.getvalue()


def _jpg(img):
    from PIL import Image
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def _images():
    rng = np.random.RandomState(7)
    out = []
    for i in range(5):
        h, w = 10 + i, 12 - i
        img = (rng.rand(h, w, 3) * 255).astype(np.uint8)
        img[:, :, i % 3] = np.linspace(0, 255, w, dtype=np.uint8)[None, :]
        if i == 3:
            out.append(_png(img[:, :, 0]))          # gray PNG
        elif i % 2:
            out.append(_png(img))
        else:
            out.append(_jpg(img))
    return out


def _write_rec(path, payloads, idx_path=None):
    if idx_path:
        rec = mx.recordio.MXIndexedRecordIO(idx_path, path, "w")
        for k, p in enumerate(payloads):
            rec.write_idx(k, p)
    else:
        rec = mx.recordio.MXRecordIO(path, "w")
        for p in payloads:
            rec.write(p)
    rec.close()


def make_seeds(folder, onnx=True):
    """Write the valid seed files under ``folder``; return {name: bytes}. ``onnx=False``
    leaves out the model files (the ONNX export is the slow part)."""
    from neogluon.recordio import IRHeader, pack
    os.makedirs(folder, exist_ok=True)
    imgs = _images()
    seeds = {}
    # image records, one with the magic number inside its payload (a split record)
    payloads = [pack(IRHeader(0, float(k % 3), k, 0), b) for k, b in enumerate(imgs)]
    _write_rec(os.path.join(folder, "img.rec"), payloads, os.path.join(folder, "img.idx"))
    split = pack(IRHeader(0, 1.0, 6, 0), b"abcd" + _MAGIC + b"efgh" + _MAGIC + b"ij")
    _write_rec(os.path.join(folder, "raw.rec"), payloads[:2] + [split],
               os.path.join(folder, "raw.idx"))
    # detection records: [header_width, object_width, (cls, x1, y1, x2, y2)...]
    dets = []
    for k, b in enumerate(imgs):
        lab = [2, 5, k % 2, 0.1, 0.2, 0.6, 0.7] + ([1, 0.3, 0.3, 0.9, 0.8] if k % 2 else [])
        dets.append(pack(IRHeader(0, np.array(lab, np.float32), k, 0), b))
    _write_rec(os.path.join(folder, "det.rec"), dets, os.path.join(folder, "det.idx"))
    # an image list and its images (ImageIter, ImageDetIter over .lst, im2rec)
    os.makedirs(os.path.join(folder, "imgs"), exist_ok=True)
    lst, dlst = [], []
    for k, b in enumerate(imgs):
        name = f"im{k}." + ("png" if b.startswith(b"\x89PNG") else "jpg")
        with open(os.path.join(folder, "imgs", name), "wb") as f:
            f.write(b)
        lst.append(f"{k}\t{k % 3}\t{name}\n")
        dlst.append(f"{k}\t2\t5\t{k % 2}\t0.1\t0.2\t0.6\t0.7\t{name}\n")
    _put(folder, "img.lst", "".join(lst).encode())
    _put(folder, "det.lst", "".join(dlst).encode())
    # CSV, LibSVM
    rng = np.random.RandomState(3)
    _put(folder, "data.csv", "".join(",".join(f"{v:.3f}" for v in row) + "\n"
                                     for row in rng.rand(7, 3)).encode())
    _put(folder, "label.csv", "".join(f"{k % 2}\n" for k in range(7)).encode())
    _put(folder, "data.libsvm", "".join(
        f"{k % 2} " + " ".join(f"{c}:{rng.rand():.3f}" for c in sorted(rng.choice(10, 3, False)))
        + "\n" for k in range(7)).encode())
    _put(folder, "label.libsvm", "".join(f"0 {k % 4}:1\n" for k in range(7)).encode())
    # MNIST idx files
    n = 5
    _put(folder, "mnist-images", struct.pack(">IIII", 0x803, n, 28, 28)
         + (rng.rand(n, 28, 28) * 255).astype(np.uint8).tobytes())
    _put(folder, "mnist-labels", struct.pack(">II", 0x801, n)
         + np.arange(n, dtype=np.uint8).tobytes())
    if onnx:
        _model_seeds(folder, rng)
    for name in sorted(os.listdir(folder)):
        p = os.path.join(folder, name)
        if os.path.isfile(p):
            with open(p, "rb") as f:
                seeds[name] = f.read()
    for name in sorted(os.listdir(os.path.join(folder, "imgs"))):
        with open(os.path.join(folder, "imgs", name), "rb") as f:
            seeds["imgs/" + name] = f.read()
    return seeds


def _model_seeds(folder, rng):
    """A small model: symbol JSON, params, and its ONNX export."""
    data = mx.sym.var("data")
    net = mx.sym.Convolution(data, num_filter=2, kernel=(3, 3), name="conv")
    net = mx.sym.Activation(net, act_type="relu", name="relu")
    net = mx.sym.FullyConnected(mx.sym.flatten(net), num_hidden=3, name="fc")
    net.save(os.path.join(folder, "net-symbol.json"))
    params = {"arg:conv_weight": mx.nd.array(rng.rand(2, 3, 3, 3)),
              "arg:conv_bias": mx.nd.array(rng.rand(2)),
              "arg:fc_weight": mx.nd.array(rng.rand(3, 2 * 6 * 6)),
              "arg:fc_bias": mx.nd.array(rng.rand(3))}
    mx.nd.save(os.path.join(folder, "net-0000.params"), params)
    try:
        mx.onnx.export_model(os.path.join(folder, "net-symbol.json"),
                             os.path.join(folder, "net-0000.params"), [(1, 3, 8, 8)],
                             np.float32, os.path.join(folder, "net.onnx"))
    except Exception:  # noqa: BLE001 - no onnx package: the ONNX kinds are left out
        pass


def _put(folder, name, data):
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


# ---------------------------------------------------------------------------------------
# Mutators: (data, a, b) -> data, with a and b non-negative ints (drawn by the tool's
# generator or by hypothesis).

_U32 = [0, 1, 3, 4, 7, 8, 24, 255, 0xFFFF, 1 << 20, (1 << 29) - 1, 1 << 29, 2 << 29,
        3 << 29, (3 << 29) | 5, 0x7FFFFFFF, 0xFFFFFFFF, 0xCED7230A]


def _pick(seq, a):
    return seq[a % len(seq)]


def m_truncate(data, a, b):
    return data[:a % (len(data) + 1)]


def m_flip(data, a, b):
    if not data:
        return data
    buf = bytearray(data)
    for k in range(1 + b % 4):
        pos = (a + k * (b + 1) * 7919) % len(buf)
        buf[pos] ^= 1 + (b >> (k * 3)) % 255
    return bytes(buf)


def m_u32(data, a, b):
    """Overwrite 4 bytes at offset a with an interesting little-endian uint32."""
    if len(data) < 4:
        return data
    pos = a % (len(data) - 3)
    return data[:pos] + struct.pack("<I", _pick(_U32, b)) + data[pos + 4:]


def m_insert(data, a, b):
    pos = a % (len(data) + 1)
    junk = random.Random(b).randbytes(1 + b % 13)
    return data[:pos] + junk + data[pos:]


def m_delete(data, a, b):
    if not data:
        return data
    pos = a % len(data)
    return data[:pos] + data[pos + 1 + b % 16:]


def m_dup(data, a, b):
    if not data:
        return data
    pos = a % len(data)
    return data[:pos] + data[pos:pos + 1 + b % 64] + data[pos:]


def _headers(data):
    """Byte offsets of the record headers of a RecordIO file (a scan for the magic)."""
    out, pos = [], data.find(_MAGIC)
    while pos != -1:
        if pos % 4 == 0:
            out.append(pos)
        pos = data.find(_MAGIC, pos + 1)
    return out


def r_forge_len(data, a, b):
    """Forge the length (and continuation flag) word of one record header."""
    heads = _headers(data)
    if not heads:
        return m_u32(data, a, b)
    pos = _pick(heads, a) + 4
    lrec = struct.unpack("<I", data[pos:pos + 4])[0]
    choice = b % 5
    if choice == 0:
        new = _pick(_U32, b >> 3)
    elif choice == 1:   # a bit longer or shorter than it is
        new = (lrec & ~((1 << 29) - 1)) | (((lrec & ((1 << 29) - 1)) + (b >> 3) % 64 - 32)
                                           & ((1 << 29) - 1))
    elif choice == 2:   # another continuation flag
        new = (lrec & ((1 << 29) - 1)) | (((b >> 3) % 8) << 29)
    elif choice == 3:   # past the end of the file
        new = (lrec & ~((1 << 29) - 1)) | min(len(data) + (b >> 3) % 1000, (1 << 29) - 1)
    else:
        new = lrec ^ (1 << ((b >> 3) % 32))
    return data[:pos] + struct.pack("<I", new & 0xFFFFFFFF) + data[pos + 4:]


def r_bad_magic(data, a, b):
    heads = _headers(data)
    if not heads:
        return m_flip(data, a, b)
    pos = _pick(heads, a)
    return data[:pos] + struct.pack("<I", _pick(_U32, b)) + data[pos + 4:]


_TOKENS = [b"", b"nan", b"inf", b"abc", b"1e999", b"-1", b"99999999999999999999", b"\xff\xfe",
           b"1:2:3", b":", b"-5:1", b"0x10", b"3.5", b"1e5", b"\x00", b"  ", b"\t", b"7:",
           b":7", b"qid:3", b"2147483648:1", b"9:1", b"10:1", b"0:1", b"1,2", b"-0", b"+4",
           b"\xc3\x28", b"img9.jpg", b"../x", b"\r"]


def t_line(data, a, b):
    """Change one token of one line of a text file (CSV, LibSVM, .lst, .idx)."""
    lines = data.split(b"\n")
    k = a % len(lines)
    seps = [b",", b" ", b"\t"]
    sep = next((s for s in seps if s in lines[k]), b",")
    toks = lines[k].split(sep)
    op = b % 4
    j = (a >> 4) % len(toks)
    tok = _pick(_TOKENS, b >> 2)
    if op == 0:
        toks[j] = tok
    elif op == 1:
        toks.insert(j, tok)
    elif op == 2 and len(toks) > 1:
        del toks[j]
    else:
        toks.append(tok)
    lines[k] = sep.join(toks)
    return b"\n".join(lines)


def t_lines(data, a, b):
    """Drop, duplicate, swap or blank out lines."""
    lines = data.split(b"\n")
    k, j = a % len(lines), b % len(lines)
    op = (a >> 8) % 4
    if op == 0:
        del lines[k]
    elif op == 1:
        lines.insert(k, lines[j])
    elif op == 2:
        lines[k], lines[j] = lines[j], lines[k]
    else:
        lines[k] = _pick([b"", b" ", b"\t\t", b"#", b"\xff\xfe\xfd"], b)
    return b"\n".join(lines)


def idx_offset(data, a, b):
    """Point one index line's offset elsewhere: past the end, negative, into a record,
    not a number."""
    lines = data.split(b"\n")
    k = a % max(1, len(lines) - 1)
    parts = lines[k].split(b"\t")
    if len(parts) < 2:
        return t_line(data, a, b)
    off = int(parts[1]) if parts[1].isdigit() else 0
    parts[1] = _pick([b"999999999", b"-4", str(off + 4).encode(), str(off + 1).encode(),
                      b"x", b"", b"1e3", str(1 << 62).encode(), b"4294967296",
                      str(off - 4).encode(), b"0"], b)
    lines[k] = b"\t".join(parts)
    return b"\n".join(lines)


def mnist_dims(data, a, b):
    """Forge the magic or one dimension of an MNIST idx header."""
    ndim = data[3] if len(data) > 3 else 1
    word = a % (1 + ndim)
    pos = 4 * word
    if len(data) < pos + 4:
        return data
    if word == 0:
        val = _pick([0x803, 0x801, 0x804, 0x0D03, 0x08FF, 0, 0x1F8B0803], b)
    else:
        val = _pick([0, 1, 27, 29, 1 << 16, 1 << 24, 0x7FFFFFFF, 0xFFFFFFFF, 5, 6], b)
    return data[:pos] + struct.pack(">I", val) + data[pos + 4:]


def gz_wrap(data, a, b):
    """gzip the file, maybe then truncate or flip it (MNISTIter reads gzip files)."""
    z = gzip.compress(data, mtime=0)
    if b % 3 == 1:
        z = z[:a % (len(z) + 1)]
    elif b % 3 == 2:
        z = m_flip(z, a, b)
    return z


BYTE_OPS = [m_truncate, m_flip, m_u32, m_insert, m_delete, m_dup]
REC_OPS = BYTE_OPS + [r_forge_len, r_forge_len, r_bad_magic]
TEXT_OPS = [m_truncate, m_flip, m_insert, m_delete, t_line, t_line, t_line, t_lines]
IDX_OPS = [idx_offset, idx_offset, t_line, t_lines, m_flip, m_truncate]
MNIST_OPS = BYTE_OPS + [mnist_dims, mnist_dims, mnist_dims, gz_wrap]


# ---------------------------------------------------------------------------------------
# Payload-level mutations: records whose framing is valid but whose content is not.

def payload_mutants(seed_rec, a, b, ops):
    """Re-pack ``seed_rec`` with one record's payload (IRHeader and image) mutated."""
    recs = _split_records(seed_rec)
    k = a % len(recs)
    p = recs[k]
    choice = b % 4
    if choice == 0:      # forge the IRHeader's flag (label count)
        p = struct.pack("<I", _pick([1, 2, 7, 100, 1 << 20, 0xFFFFFFFF], b >> 2)) + p[4:]
    elif choice == 1 and len(p) > 24:   # mutate the image bytes only
        p = p[:24] + _pick(ops, b >> 2)(p[24:], a >> 3, b >> 5)
    else:
        p = _pick(ops, b >> 2)(p, a >> 3, b >> 5)
    recs[k] = p
    return recs


def _split_records(data):
    out, pos = [], 0
    while pos + 8 <= len(data):
        lrec = struct.unpack("<I", data[pos + 4:pos + 8])[0]
        n = lrec & ((1 << 29) - 1)
        cflag = lrec >> 29
        chunk = data[pos + 8:pos + 8 + n]
        if cflag in (2, 3):
            out[-1] += _MAGIC + chunk
        else:
            out.append(chunk)
        pos += 8 + n + (4 - n % 4) % 4
    return out


def _pack_records(recs):
    buf, idx = io.BytesIO(), []
    for k, p in enumerate(recs):
        idx.append(f"{k}\t{buf.tell()}\n")
        buf.write(_MAGIC + struct.pack("<I", len(p)) + p + b"\0" * ((4 - len(p) % 4) % 4))
    return buf.getvalue(), "".join(idx).encode()


# ---------------------------------------------------------------------------------------
# Cases: each kind mutates some seed files and runs one loader over them.

class Case:
    def __init__(self, kind, files, run, names_file=True):
        self.kind, self.files, self.run, self.names_file = kind, files, run, names_file


def _mutate_files(seeds, rng_ints, plan):
    """``plan``: [(seed name, ops)] -- each named seed gets one op of ``ops``; the
    draws come from ``rng_ints`` (an iterator of non-negative ints)."""
    out = {}
    for name, ops in plan:
        a, b, c = next(rng_ints), next(rng_ints), next(rng_ints)
        out[name] = _pick(ops, c)(seeds[name], a, b)
    return out


def _drain(it, max_batches=64):
    n = 0
    for _ in it:
        n += 1
        if n >= max_batches:
            break
    return n


class AfterError(Exception):
    """reset() or next() failed with an internal error after an MXNetError."""


def _iter_and_reset(make):
    """Build the iterator and read it to the end; on an error, reset() and read one more
    batch (it must work or fail with an MXNetError again)."""
    it = make()
    try:
        _drain(it)
        it.reset()
        _drain(it, 2)
    except MXNetError as err:
        try:
            it.reset()
            _drain(it, 1)
        except MXNetError:
            pass
        except Exception as err2:  # noqa: BLE001
            raise AfterError(f"after {type(err).__name__}({str(err)[:120]!r}), reset() and "
                             f"next() raised {type(err2).__name__}: {err2}") from err2
        raise


def build_case(kind, seeds, ints, workdir, tag):
    """The files and the call of one case of ``kind``. ``ints`` gives the draws."""
    p = lambda name: os.path.join(workdir, f"{tag}-{name}")  # noqa: E731
    pick = next(ints)
    if kind == "recordio":
        if pick % 2:
            files = _mutate_files(seeds, ints, [("raw.rec", REC_OPS)])
            files["raw.idx"] = seeds["raw.idx"] if pick % 4 == 1 else \
                _mutate_files(seeds, ints, [("raw.idx", IDX_OPS)])["raw.idx"]
        else:
            files = {"raw.rec": seeds["raw.rec"],
                     **_mutate_files(seeds, ints, [("raw.idx", IDX_OPS)])}

        def run():
            r = mx.recordio.MXRecordIO(p("raw.rec"), "r")
            try:
                while r.read() is not None:
                    pass
            finally:
                r.close()
            r = mx.recordio.MXIndexedRecordIO(p("raw.idx"), p("raw.rec"), "r")
            try:
                for key in list(r.keys):
                    r.read_idx(key)
            finally:
                r.close()
        return Case(kind, files, run)
    if kind == "unpack":
        recs = payload_mutants(seeds["img.rec"], next(ints), next(ints), BYTE_OPS)
        iscolor = [-1, 0, 1][pick % 3]

        def run():
            for s in recs:
                mx.recordio.unpack(s)
                mx.recordio.unpack_img(s, iscolor)
        return Case(kind, {}, run, names_file=False)
    if kind in ("imagerecord", "imagedet", "imageiter_rec", "imagedetiter_rec"):
        base = "det" if "det" in kind else "img"
        if pick % 3 == 0:   # valid framing, bad content
            rec, idx = _pack_records(payload_mutants(seeds[f"{base}.rec"], next(ints),
                                                     next(ints), BYTE_OPS))
            files = {f"{base}.rec": rec, f"{base}.idx": idx}
        elif pick % 3 == 1:
            files = _mutate_files(seeds, ints, [(f"{base}.rec", REC_OPS)])
            files[f"{base}.idx"] = seeds[f"{base}.idx"]
        else:
            files = _mutate_files(seeds, ints, [(f"{base}.idx", IDX_OPS)])
            files[f"{base}.rec"] = seeds[f"{base}.rec"]
        use_idx = (pick >> 2) % 2 == 0
        variant = (pick >> 3) % 6
        rec, idx = p(f"{base}.rec"), p(f"{base}.idx") if use_idx else None
        if kind == "imagerecord":
            fn = [mx.io.ImageRecordIter, mx.io.ImageRecordUInt8Iter,
                  mx.io.ImageRecordInt8Iter][variant % 3]
            shape = (1, 8, 8) if variant >= 3 else (3, 8, 8)
            kw = dict(path_imgrec=rec, data_shape=shape, batch_size=2,
                      preprocess_threads=1 + variant % 2, prefetch_buffer=variant % 2 * 2,
                      shuffle=bool(variant % 2), rand_crop=variant == 4, resize=10 if
                      variant == 5 else -1)
            if idx:
                kw["path_imgidx"] = idx
            make = lambda: fn(**kw)  # noqa: E731
        elif kind == "imagedet":
            kw = dict(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                      preprocess_threads=1 + variant % 2, shuffle=bool(variant % 2),
                      rand_crop_prob=0.5 if variant == 3 else 0.0, rand_pad_prob=0.5 if
                      variant == 4 else 0.0, rand_mirror_prob=0.5)
            make = lambda: mx.io.ImageDetRecordIter(**kw)  # noqa: E731
        elif kind == "imageiter_rec":
            kw = dict(path_imgrec=rec, path_imgidx=idx, shuffle=bool(variant % 2) and idx,
                      last_batch_handle=["pad", "discard", "roll_over"][variant % 3],
                      rand_crop=variant == 4, rand_mirror=True)
            make = lambda: mx.image.ImageIter(2, (3, 8, 8), **kw)  # noqa: E731
        else:
            kw = dict(path_imgrec=rec, path_imgidx=idx, shuffle=bool(variant % 2) and idx,
                      rand_crop=0.5 if variant == 4 else 0, rand_mirror=True)
            make = lambda: mx.image.ImageDetIter(2, (3, 8, 8), **kw)  # noqa: E731
        return Case(kind, files, lambda: _iter_and_reset(make))
    if kind in ("imageiter_lst", "imagedetiter_lst"):
        lst = "det.lst" if "det" in kind else "img.lst"
        img_names = sorted(n for n in seeds if n.startswith("imgs/"))
        target = _pick(img_names, next(ints))
        files = {}
        if pick % 3 != 1:
            files.update(_mutate_files(seeds, ints, [(lst, TEXT_OPS)]))
        else:
            files[lst] = seeds[lst]
        if pick % 3 != 0:
            files.update(_mutate_files(seeds, ints, [(target, BYTE_OPS)]))
        root = p("imgs")
        for name in img_names:
            files.setdefault(name, seeds[name])
        cls = mx.image.ImageDetIter if "det" in kind else mx.image.ImageIter
        make = lambda: cls(2, (3, 8, 8), path_imglist=p(lst), path_root=root,  # noqa: E731
                           shuffle=bool(pick % 2), rand_mirror=True)
        return Case(kind, files, lambda: _iter_and_reset(make))
    if kind == "csv":
        which = pick % 3
        plan = [("data.csv", TEXT_OPS)] if which != 1 else [("label.csv", TEXT_OPS)]
        if which == 2:
            plan.append(("label.csv", TEXT_OPS))
        files = {"data.csv": seeds["data.csv"], "label.csv": seeds["label.csv"]}
        files.update(_mutate_files(seeds, ints, plan))
        with_label = (pick >> 2) % 3 != 0 or which != 0
        make = lambda: mx.io.CSVIter(  # noqa: E731
            data_csv=p("data.csv"), data_shape=(3,), batch_size=2,
            label_csv=p("label.csv") if with_label else None,
            round_batch=bool((pick >> 4) % 2))
        return Case(kind, files, lambda: _iter_and_reset(make))
    if kind == "libsvm":
        which = pick % 3
        plan = [("data.libsvm", TEXT_OPS)] if which != 1 else [("label.libsvm", TEXT_OPS)]
        if which == 2:
            plan.append(("label.libsvm", TEXT_OPS))
        files = {"data.libsvm": seeds["data.libsvm"], "label.libsvm": seeds["label.libsvm"]}
        files.update(_mutate_files(seeds, ints, plan))
        with_label = which != 0 or (pick >> 2) % 2
        make = lambda: mx.io.LibSVMIter(  # noqa: E731
            data_libsvm=p("data.libsvm"), data_shape=(10,), batch_size=3,
            **({"label_libsvm": p("label.libsvm"), "label_shape": (4,)} if with_label
               else {}))
        return Case(kind, files, lambda: _iter_and_reset(make))
    if kind == "mnist":
        plan = [("mnist-images", MNIST_OPS)] if pick % 3 != 1 else []
        if pick % 3 != 0:
            plan.append(("mnist-labels", MNIST_OPS))
        files = {"mnist-images": seeds["mnist-images"], "mnist-labels": seeds["mnist-labels"]}
        files.update(_mutate_files(seeds, ints, plan))
        make = lambda: mx.io.MNISTIter(  # noqa: E731
            image=p("mnist-images"), label=p("mnist-labels"), batch_size=2,
            shuffle=bool(pick % 2), flat=bool((pick >> 2) % 2), silent=True)
        return Case(kind, files, lambda: _iter_and_reset(make))
    if kind == "im2rec":
        img_names = sorted(n for n in seeds if n.startswith("imgs/"))
        target = _pick(img_names, next(ints))
        files = {}
        if pick % 3 != 1:
            files.update(_mutate_files(seeds, ints, [("img.lst", TEXT_OPS)]))
        else:
            files["img.lst"] = seeds["img.lst"]
        if pick % 3 != 0:
            files.update(_mutate_files(seeds, ints, [(target, BYTE_OPS)]))
        for name in img_names:
            files.setdefault(name, seeds[name])
        argv = [p("img"), p("imgs"), "--color", str([1, 0, -1][pick % 3])]
        if (pick >> 2) % 3 == 1:
            argv += ["--resize", "6", "--center-crop"]
        elif (pick >> 2) % 3 == 2:
            argv += ["--pass-through"]
        if (pick >> 2) % 5 == 4:
            argv += ["--encoding", ".png", "--pack-label"]
        if pick % 97 == 5:
            argv += ["--num-thread", "2"]

        def run():
            from neogluon.tools import im2rec
            with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), \
                    contextlib.redirect_stderr(null):
                rc = im2rec.main(argv)
            if rc == 0 and os.path.exists(p("img.rec")):
                # what it wrote must read back
                r = mx.recordio.MXIndexedRecordIO(p("img.idx"), p("img.rec"), "r")
                for key in r.keys:
                    mx.recordio.unpack(r.read_idx(key))
                r.close()
        return Case(kind, files, run)
    if kind == "onnx_import":
        files = _mutate_files(seeds, ints, [("net.onnx", BYTE_OPS)])

        def run():
            if pick % 2:
                mx.contrib.onnx.get_model_metadata(p("net.onnx"))
            mx.contrib.onnx.import_model(p("net.onnx"))
        return Case(kind, files, run)
    if kind == "onnx_export":
        if pick % 2:
            files = _mutate_files(seeds, ints, [("net-symbol.json", TEXT_OPS + BYTE_OPS)])
            files["net-0000.params"] = seeds["net-0000.params"]
        else:
            files = _mutate_files(seeds, ints, [("net-0000.params", BYTE_OPS)])
            files["net-symbol.json"] = seeds["net-symbol.json"]

        def run():
            mx.onnx.export_model(p("net-symbol.json"), p("net-0000.params"), [(1, 3, 8, 8)],
                                 np.float32, p("out.onnx"))
        return Case(kind, files, run)
    raise ValueError(f"unknown kind {kind!r}")


KINDS = ["recordio", "unpack", "imagerecord", "imagedet", "imageiter_rec", "imagedetiter_rec",
         "imageiter_lst", "imagedetiter_lst", "csv", "libsvm", "mnist", "im2rec",
         "onnx_import", "onnx_export"]


def write_case(case, workdir, tag):
    for name, data in case.files.items():
        path = os.path.join(workdir, f"{tag}-{name}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


def classify(case, workdir, tag):
    """Run the case; return (outcome, detail). outcome: 'ok', 'MXNetError' or 'INTERNAL'."""
    try:
        case.run()
        return "ok", ""
    except MXNetError as err:
        msg = str(err)
        if case.names_file and tag not in msg:
            return "INTERNAL", f"MXNetError without the file name: {type(err).__name__}: " \
                               f"{msg[:300]}"
        return "MXNetError", _also(err)
    except Exception as err:  # noqa: BLE001 - the point of the tool
        tb = traceback.extract_tb(err.__traceback__)[-1]
        return "INTERNAL", (f"{type(err).__name__}: {str(err)[:300]} "
                            f"[{os.path.basename(tb.filename)}:{tb.lineno}]")


_ALSO = (FileNotFoundError, OSError, ValueError, TypeError, KeyError, struct.error)


def _also(err):
    """The builtin type an MXNetError subclass also is (the type MXNet raises there)."""
    for t in _ALSO:
        if isinstance(err, t):
            return "struct.error" if t is struct.error else t.__name__
    return ""


class Watchdog:
    """A thread that prints the running case and every thread's stack, then ends the
    process with status 3, when one case runs longer than ``timeout`` seconds."""

    def __init__(self, timeout):
        self.timeout = timeout
        self.case = None
        self.started = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def begin(self, case):
        self.case, self.started = case, time.monotonic()

    def end(self):
        self.started = None

    def _watch(self):
        while not self._stop.wait(0.5):
            started = self.started
            if started is not None and time.monotonic() - started > self.timeout:
                print(f"\nHANG: case {self.case} ran more than {self.timeout}s", flush=True)
                faulthandler.dump_traceback(file=sys.stdout, all_threads=True)
                sys.stdout.flush()
                os._exit(3)

    def stop(self):
        self._stop.set()


def _ints(rng):
    while True:
        yield rng.getrandbits(32)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="cases per loader kind")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kinds", nargs="+", default=KINDS, choices=KINDS)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
    ap.add_argument("--show", type=int, default=5, help="INTERNAL details shown per kind")
    ap.add_argument("--max-rss-mb", type=float, default=4096,
                    help="fail when the process's peak RSS exceeds this (a forged length "
                         "or count that was allocated)")
    ap.add_argument("--show-stderr", action="store_true",
                    help="keep the decoders' (libpng, libjpeg) messages on stderr")
    args = ap.parse_args(argv)
    import logging
    logging.disable(logging.WARNING)
    import warnings
    warnings.simplefilter("ignore")
    top = tempfile.mkdtemp(prefix="neogluon-fuzz-")
    dog = Watchdog(args.timeout)
    tally = defaultdict(Counter)
    also = defaultdict(Counter)
    internal = defaultdict(list)
    t0 = time.time()
    saved_err = None
    if not args.show_stderr:   # libpng/libjpeg write to fd 2 for every broken image
        sys.stderr.flush()
        saved_err = os.dup(2)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.close(null)
    try:
        seeds = make_seeds(os.path.join(top, "seeds"))
        kinds = [k for k in args.kinds
                 if not k.startswith("onnx") or "net.onnx" in seeds]
        for kind in kinds:
            for i in range(args.n):
                rng = random.Random(f"{args.seed}:{kind}:{i}")
                work = os.path.join(top, "w")
                os.makedirs(work, exist_ok=True)
                tag = f"c{i}"
                case = build_case(kind, seeds, _ints(rng), work, tag)
                write_case(case, work, tag)
                # the loaders' own draws (ImageIter's shuffle, augmenters) from the global
                # generators: seeded per case, so that a run is repeatable
                random.seed(f"{args.seed}:{kind}:{i}:global")
                np.random.seed(rng.getrandbits(32))
                dog.begin(f"{kind} #{i} (seed {args.seed})")
                outcome, detail = classify(case, work, tag)
                dog.end()
                tally[kind][outcome] += 1
                if outcome == "INTERNAL":
                    internal[kind].append((i, detail))
                elif detail:
                    also[kind][detail] += 1
                shutil.rmtree(work, ignore_errors=True)
            deliberate = ", ".join(f"{k} {v}" for k, v in sorted(also[kind].items()))
            print(f"{kind:17s} ok {tally[kind]['ok']:5d}  MXNetError "
                  f"{tally[kind]['MXNetError']:5d}  INTERNAL {tally[kind]['INTERNAL']:4d}"
                  + (f"   (of the MXNetErrors, also {deliberate})" if deliberate else ""),
                  flush=True)
            for i, detail in internal[kind][:args.show]:
                print(f"    #{i}: {detail}", flush=True)
            if len(internal[kind]) > args.show:
                kinds_seen = Counter(d.split(":")[0] for _, d in internal[kind])
                print(f"    ... {len(internal[kind])} in all: {dict(kinds_seen)}", flush=True)
    finally:
        dog.stop()
        shutil.rmtree(top, ignore_errors=True)
        if saved_err is not None:
            os.dup2(saved_err, 2)
            os.close(saved_err)
    total = sum(sum(c.values()) for c in tally.values())
    bad = sum(c["INTERNAL"] for c in tally.values())
    import resource
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{total} cases, {bad} INTERNAL, {time.time() - t0:.0f}s, peak RSS {peak:.0f} MiB")
    if peak > args.max_rss_mb:
        print(f"peak RSS above --max-rss-mb {args.max_rss_mb:.0f}: something allocated what "
              "a forged length asked for")
        return 2
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
