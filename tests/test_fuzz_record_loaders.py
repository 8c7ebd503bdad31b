"""The record and data-iterator loaders' error contract (docs/api_status.md, "Loader error
contract: records and iterators"), fuzzed with hypothesis over the mutators of
tools/fuzz_records.py, plus explicit regression tests.

A malformed file gives an MXNetError (or a subclass that is also the type MXNet raises)
whose message names the file, and the iterator resets afterwards; never an internal
exception type. The fixed budget is small; NEOGLUON_FUZZ_LONG=1 runs many more examples.
"""
import io
import itertools
import os
import struct
import sys
import tracemalloc

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tools"))
import fuzz_records as F  # noqa: E402

import neogluon as mx  # noqa: E402
from neogluon.base import MXNetError  # noqa: E402

LONG = os.environ.get("NEOGLUON_FUZZ_LONG") == "1"
EXAMPLES = 300 if LONG else 6


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    return F.make_seeds(str(tmp_path_factory.mktemp("seeds")), onnx=False)


@pytest.fixture(scope="module")
def model_seeds(tmp_path_factory):
    pytest.importorskip("onnx")
    return F.make_seeds(str(tmp_path_factory.mktemp("seeds")))


_COUNTER = itertools.count()


def _run(kind, seeds, ints, tmp_path):
    work = str(tmp_path / "w")
    os.makedirs(work, exist_ok=True)
    tag = f"h{next(_COUNTER)}"
    case = F.build_case(kind, seeds, itertools.chain(ints, itertools.repeat(0)), work, tag)
    F.write_case(case, work, tag)
    outcome, detail = F.classify(case, work, tag)
    assert outcome in ("ok", "MXNetError"), f"{kind}: {detail}"


_INTS = st.lists(st.integers(0, 2 ** 32 - 1), min_size=10, max_size=10)
_KINDS = [k for k in F.KINDS if not k.startswith("onnx")]


@pytest.mark.parametrize("kind", _KINDS)
def test_fuzz_loader(kind, seeds, tmp_path):
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None)
    @given(ints=_INTS)
    def check(ints):
        _run(kind, seeds, ints, tmp_path)
    check()


@pytest.mark.parametrize("kind", ["onnx_import", "onnx_export"])
def test_fuzz_onnx(kind, model_seeds, tmp_path):
    if "net.onnx" not in model_seeds:
        pytest.skip("the seed model could not be exported")

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None)
    @given(ints=_INTS)
    def check(ints):
        _run(kind, model_seeds, ints, tmp_path)
    check()


# ---------------------------------------------------------------------------------------
# Regression tests

def _rec(tmp_path, n=4, name="a"):
    rec, idx = str(tmp_path / f"{name}.rec"), str(tmp_path / f"{name}.idx")
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    imgs = F._images()
    for k in range(n):
        w.write_idx(k, mx.recordio.pack(mx.recordio.IRHeader(0, float(k), k, 0),
                                        imgs[k % len(imgs)]))
    w.close()
    return rec, idx


def _rewrite_idx(idx, offsets):
    with open(idx, "w") as f:
        for k, off in enumerate(offsets):
            f.write(f"{k}\t{off}\n")


@pytest.mark.parametrize("where", ["eof", "past"])
def test_idx_offset_at_or_past_eof_is_not_a_nonetype_len(tmp_path, where):
    """Issue 34: an idx offset at/after the end of the .rec made read_idx return None and
    ImageRecordIter fail with "TypeError: object of type 'NoneType' has no len()"."""
    rec, idx = _rec(tmp_path)
    size = os.path.getsize(rec)
    bad = size if where == "eof" else size + 1000
    offsets = [int(line.split("\t")[1]) for line in open(idx)]
    _rewrite_idx(idx, offsets[:2] + [bad] + offsets[3:])
    r = mx.recordio.MXIndexedRecordIO(idx, rec, "r")
    assert r.read_idx(1)
    with pytest.raises(MXNetError, match=rf"a\.idx: key 2 points at byte {bad}, outside "
                                         rf".*a\.rec \({size} bytes\)"):
        r.read_idx(2)
    assert r.read_idx(3)   # the reader is still usable
    r.close()
    for prefetch in (0, 2):
        it = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=(3, 8, 8),
                                   batch_size=2, prefetch_buffer=prefetch)
        with pytest.raises(MXNetError, match=rf"a\.rec.*record 2.*byte {bad}.*outside the "
                                             rf"file \({size} bytes\)") as err:
            for _ in it:
                pass
        assert not isinstance(err.value, TypeError)
        it.reset()
        assert it.next().data[0].shape == (2, 3, 8, 8)


def test_unpack_none_names_the_cause():
    # MXNet raises TypeError here: still catchable as one
    with pytest.raises(TypeError, match="got None instead of a record"):
        mx.recordio.unpack(None)
    with pytest.raises(MXNetError, match="got None"):
        mx.recordio.unpack(None)


def test_truncated_record_names_file_record_and_offset(tmp_path):
    rec, _ = _rec(tmp_path)
    data = open(rec, "rb").read()
    second = data.find(F._MAGIC, 8)
    with open(rec, "wb") as f:
        f.write(data[:second + 20])
    r = mx.recordio.MXRecordIO(rec, "r")
    assert r.read()
    for _ in range(2):   # the reader stays at the bad record
        with pytest.raises(MXNetError, match=rf"a\.rec: record 1 at byte {second}: record "
                                             r"length \d+ at byte \d+ runs past the end"):
            r.read()
    r.reset()
    assert r.read()


def test_forged_length_is_refused_before_allocating(tmp_path):
    rec, _ = _rec(tmp_path)
    data = bytearray(open(rec, "rb").read())
    data[4:8] = struct.pack("<I", (1 << 29) - 1)     # a 512 MiB record
    with open(rec, "wb") as f:
        f.write(data)
    r = mx.recordio.MXRecordIO(rec, "r")
    tracemalloc.start()
    try:
        with pytest.raises(MXNetError, match=r"a\.rec: record 0 at byte 0: record length "
                                             r"536870911 .* runs past the end of the file"):
            r.read()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


@pytest.mark.parametrize("mutate, match", [
    (lambda d: b"\x00" * 4 + d[4:], r"a\.rec: record 0 at byte 0: bad magic number"),
    (lambda d: d[:7] + bytes([d[7] | 0x40]) + d[8:], r"continuation part \(flag 2\) without"),
    (lambda d: d[:3], r"truncated record header"),
])
def test_record_framing_errors(tmp_path, mutate, match):
    rec, _ = _rec(tmp_path)
    data = mutate(open(rec, "rb").read())
    with open(rec, "wb") as f:
        f.write(data)
    r = mx.recordio.MXRecordIO(rec, "r")
    with pytest.raises(MXNetError, match=match):
        r.read()


@pytest.mark.parametrize("line, match", [
    (b"2\tabc\n", r"line 3: the offset is not an integer"),
    (b"2\n", r"line 3: no offset"),
    (b"x\t4\n", r"line 3: bad key"),
    (b"2\t-8\n", r"line 3: negative offset"),
    (b"\xff\xfe\t4\n", r"line 3: not UTF-8 text"),
])
def test_bad_idx_lines_name_file_and_line(tmp_path, line, match):
    rec, idx = _rec(tmp_path)
    lines = open(idx, "rb").read().split(b"\n")
    with open(idx, "wb") as f:
        f.write(b"\n".join(lines[:2]) + b"\n" + line)
    # MXNet raises ValueError for an unparsable key or offset: catchable as one
    with pytest.raises(ValueError, match=r"a\.idx: " + match):
        mx.recordio.MXIndexedRecordIO(idx, rec, "r")
    with pytest.raises(MXNetError, match=r"a\.idx"):
        mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=(3, 8, 8),
                              batch_size=2)


def _corrupt_image(rec, idx, key):
    r = mx.recordio.MXIndexedRecordIO(idx, rec, "r")
    recs = [r.read_idx(k) for k in r.keys]
    r.close()
    header, _ = mx.recordio.unpack(recs[key])
    recs[key] = mx.recordio.pack(header, b"\x89PNG not really")
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for k, s in enumerate(recs):
        w.write_idx(k, s)
    w.close()


@pytest.mark.parametrize("prefetch, threads", [(0, 1), (4, 1), (4, 3)])
def test_decode_error_in_worker_surfaces_with_record_and_resets(tmp_path, prefetch, threads):
    rec, idx = _rec(tmp_path, n=6)
    _corrupt_image(rec, idx, 3)
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                               prefetch_buffer=prefetch, preprocess_threads=threads)
    assert it.next().data[0].shape == (2, 3, 8, 8)
    with pytest.raises(MXNetError, match=r"ImageRecordIter: .*a\.rec: record 3 \(byte \d+\): "
                                         r".*decoding failed"):
        it.next()
    it.reset()
    assert it.next().data[0].shape == (2, 3, 8, 8)


def test_image_det_record_iter_decode_error_names_record(tmp_path):
    rec = str(tmp_path / "d.rec")
    w = mx.recordio.MXRecordIO(rec, "w")
    img = F._images()[0]
    for k in range(4):
        lab = np.array([2, 5, 0, 0.1, 0.1, 0.6, 0.6], np.float32)
        w.write(mx.recordio.pack(mx.recordio.IRHeader(0, lab, k, 0),
                                 img if k != 2 else img[:100]))
    w.close()
    with pytest.raises(MXNetError, match=r"d\.rec: record 2 \((id 2, )?byte \d+\)"):
        it = mx.io.ImageDetRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2)
        for _ in it:
            pass


def test_image_iter_broken_image_is_a_runtime_error_naming_the_file(tmp_path):
    rec, idx = _rec(tmp_path, n=4)
    _corrupt_image(rec, idx, 1)
    it = mx.image.ImageIter(2, (3, 8, 8), path_imgrec=rec)
    # MXNet raises RuntimeError("Broken image ..."); MXNetError is one
    with pytest.raises(RuntimeError, match=r"Broken image .*a\.rec"):
        it.next()
    it.reset()
    with pytest.raises(MXNetError):
        it.next()


def test_image_iter_list_errors(tmp_path):
    root = tmp_path / "imgs"
    root.mkdir()
    (root / "a.png").write_bytes(F._images()[1])
    lst = tmp_path / "l.lst"
    lst.write_text("0\t1\ta.png\n1\t0\tmissing.png\n")
    it = mx.image.ImageIter(1, (3, 8, 8), path_imglist=str(lst), path_root=str(root))
    it.next()
    with pytest.raises(FileNotFoundError, match=r"l\.lst: image .*missing\.png"):
        it.next()
    it.reset()
    it.next()
    lst.write_bytes(b"0\t1\ta.png\n1\tx\ta.png\n")
    with pytest.raises(ValueError, match=r"l\.lst: line 2"):
        mx.image.ImageIter(1, (3, 8, 8), path_imglist=str(lst), path_root=str(root))


@pytest.mark.parametrize("row, match", [
    (b"7,8\n", r"line 3: the data size in CSV do not match size of shape: specified "
               r"shape=\[3\], the csv row-length=2"),
    (b"7,8,9,10\n", r"line 3: .*row-length=4"),
    (b"7,x,9\n", r"line 3, column 2: 'x' is not a number"),
    (b"7,\xff,9\n", r"line 3 is not UTF-8 text"),
])
def test_csv_bad_rows_name_file_and_line(tmp_path, row, match):
    """MXNet 1.9.1 raises MXNetError "The data size in CSV do not match size of shape" for a
    row of another length."""
    path = tmp_path / "d.csv"
    path.write_bytes(b"1,2,3\n4,5,6\n" + row)
    with pytest.raises(MXNetError, match=r"d\.csv: " + match):
        mx.io.CSVIter(data_csv=str(path), data_shape=(3,), batch_size=1)


def test_mnist_forged_dims_refused_before_allocating(tmp_path):
    import gzip
    img, lab = tmp_path / "i", tmp_path / "l"
    img.write_bytes(gzip.compress(struct.pack(">IIII", 0x803, 0x7FFFFFFF, 28, 28) + bytes(64)))
    lab.write_bytes(struct.pack(">II", 0x801, 1) + b"\x00")
    tracemalloc.start()
    try:
        with pytest.raises(MXNetError, match=r"'.*i': the header's dimensions"):
            mx.io.MNISTIter(image=str(img), label=str(lab), batch_size=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    pixels = np.random.RandomState(0).randint(0, 256, 784).astype(np.uint8).tobytes()
    img.write_bytes(gzip.compress(struct.pack(">IIII", 0x803, 1, 28, 28) + pixels)[:400])
    with pytest.raises(MXNetError, match=r"'.*i'"):
        mx.io.MNISTIter(image=str(img), label=str(lab), batch_size=1)


def test_unpack_forged_label_count():
    s = struct.pack("<IfQQ", 1000, 0.0, 1, 0) + b"abcd"
    # MXNet's numpy raises ValueError here: catchable as one
    with pytest.raises(ValueError, match="says 1000 float32 labels"):
        mx.recordio.unpack(s)


def test_unpack_img_garbage():
    s = mx.recordio.pack(mx.recordio.IRHeader(0, 1.0, 0, 0), b"garbage")
    for iscolor in (-1, 0, 1):
        with pytest.raises(MXNetError, match="decoding failed"):
            mx.recordio.unpack_img(s, iscolor)


def test_im2rec_skips_undecodable_list_lines(tmp_path, capsys):
    from neogluon.tools import im2rec
    root = tmp_path / "imgs"
    root.mkdir()
    (root / "a.png").write_bytes(F._images()[1])
    (tmp_path / "p.lst").write_bytes(b"0\t1\ta.png\n\xff\xfe\t1\ta.png\n-1\t1\ta.png\n")
    assert im2rec.main([str(tmp_path / "p"), str(root), "--pass-through"]) == 0
    err = capsys.readouterr().err
    assert "p.lst:2: skipped, not UTF-8 text" in err
    assert "skipped" in err.split("p.lst:2")[1]       # the id -1 does not fit a header
    r = mx.recordio.MXIndexedRecordIO(str(tmp_path / "p.idx"), str(tmp_path / "p.rec"), "r")
    assert r.keys == [0]


def _png_chunk(ctype, data):
    import zlib
    return struct.pack(">I", len(data)) + ctype + data + struct.pack(
        ">I", zlib.crc32(ctype + data) & 0xFFFFFFFF)


@pytest.mark.parametrize("forge", ["idat_length", "png_dims", "jpeg_dims"])
def test_forged_image_header_refused_before_allocating(forge):
    """OpenCV allocates a PNG chunk's claimed length (2.5 GB for a 418-byte record, found by
    the fuzzer) and the pixels a header claims, before reading the data."""
    png = F._images()[1]
    if forge == "idat_length":
        pos = png.find(b"IDAT") - 4
        buf = png[:pos] + struct.pack(">I", 2533359977) + png[pos + 4:]
        match = r"PNG chunk b'IDAT' at byte \d+ claims 2533359977 bytes"
    elif forge == "png_dims":
        ihdr = struct.pack(">IIBBBBB", 60000, 60000, 8, 2, 0, 0, 0)
        buf = png[:8] + _png_chunk(b"IHDR", ihdr) + png[33:]
        match = r"claims 60000x60000 pixels"
    else:
        jpg = F._images()[0]
        pos = next(i for i in range(2, len(jpg) - 1) if jpg[i] == 0xFF and jpg[i + 1] == 0xC0)
        buf = jpg[:pos + 5] + struct.pack(">HH", 65000, 65000) + jpg[pos + 9:]
        match = r"claims 65000x65000 pixels"
    s = mx.recordio.pack(mx.recordio.IRHeader(0, 1.0, 0, 0), buf)
    tracemalloc.start()
    try:
        for iscolor in (0, 1):
            with pytest.raises(MXNetError, match=match):
                mx.recordio.unpack_img(s, iscolor)
        with pytest.raises(MXNetError, match=match):
            mx.image.imdecode(buf)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20
