"""mx.recordio: byte-identical to MXNet 1.9.1's files, split records, headers, images."""
import os
import pickle

import numpy as np
import pytest

import neogluon as mx
from recordio_cases import PAYLOADS, HEADERS

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "recordio")


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def test_written_bytes_equal_mxnet(tmp_path):
    rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / "c.idx"), str(tmp_path / "c.rec"), "w")
    for i, p in enumerate(PAYLOADS):
        rec.write_idx(i, p)
    rec.close()
    assert _read(tmp_path / "c.rec") == _read(os.path.join(FIX, "cases.rec"))
    assert _read(tmp_path / "c.idx") == _read(os.path.join(FIX, "cases.idx"))


def test_reads_mxnet_files():
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(FIX, "cases.idx"),
                                        os.path.join(FIX, "cases.rec"), "r")
    assert rec.keys == list(range(len(PAYLOADS)))
    assert [rec.read_idx(i) for i in reversed(rec.keys)] == PAYLOADS[::-1]
    seq = mx.recordio.MXRecordIO(os.path.join(FIX, "cases.rec"), "r")
    got = iter(seq.read, None)
    assert list(got) == PAYLOADS
    assert seq.read() is None
    seq.reset()
    assert seq.read() == PAYLOADS[0]
    # A pickled reader (DataLoader workers) reopens the file.
    rec.seek(3)
    clone = pickle.loads(pickle.dumps(rec))
    assert clone.read_idx(4) == PAYLOADS[4]


def test_pack_unpack_equal_mxnet():
    data = _read(os.path.join(FIX, "packs.bin"))
    pos = 0
    for h, s in HEADERS:
        n = int.from_bytes(data[pos:pos + 4], "little")
        expected = data[pos + 4:pos + 4 + n]
        pos += 4 + n
        packed = mx.recordio.pack(mx.recordio.IRHeader(*h), s)
        assert packed == expected
        header, payload = mx.recordio.unpack(packed)
        assert payload == s and header.id == h[2] and header.id2 == h[3]
        if isinstance(h[1], list):
            assert header.flag == len(h[1])
            np.testing.assert_array_equal(header.label, h[1])
        else:
            assert header.flag == 0 and header.label == h[1]


def test_pack_img_round_trip_and_errors(tmp_path):
    img = (np.arange(4 * 5 * 3) % 256).astype(np.uint8).reshape(4, 5, 3)
    s = mx.recordio.pack_img(mx.recordio.IRHeader(0, 1.0, 3, 0), img, img_fmt=".png")
    header, out = mx.recordio.unpack_img(s)
    assert header.label == 1.0
    np.testing.assert_array_equal(out, img)          # BGR in, BGR out
    _, gray = mx.recordio.unpack_img(s, iscolor=0)
    assert gray.shape == (4, 5)
    with pytest.raises(ValueError, match="Invalid flag"):
        mx.recordio.MXRecordIO(str(tmp_path / "x.rec"), "a")
    with pytest.raises(mx.MXNetError, match="cannot open"):
        mx.recordio.MXRecordIO(str(tmp_path / "missing.rec"), "r")
    bad = tmp_path / "bad.rec"
    bad.write_bytes(b"notarecord")
    with pytest.raises(mx.MXNetError, match="bad magic"):
        mx.recordio.MXRecordIO(str(bad), "r").read()
