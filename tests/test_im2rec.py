"""python -m neogluon.tools.im2rec: MXNet 1.9.1's im2rec command line.

The expected .lst files below were written by MXNet 1.9.1's tools/im2rec.py on the same folder
layout (its list step does not need OpenCV). Pass-through .rec/.idx files came out
byte-identical to MXNet's, and resized/cropped/grayscale images pixel-identical to MXNet's
imread/resize path (checked by hand against /tmp/mxref; see the session report).
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import neogluon as mx
from neogluon.tools import im2rec

Image = pytest.importorskip("PIL.Image")

LAYOUT = ["x.png", "y.jpg", "notes.txt", "cat/c0.jpg", "cat/c1.png", "cat/c2.JPG",
          "dog/d0.png", "dog/d1.jpeg", "dog/puppy/p0.jpg", "dog/puppy/p1.png"]

# MXNet 1.9.1: im2rec.py --list --recursive d imgs
MX_RECURSIVE = ("4\t1.000000\tcat/c2.JPG\n0\t0.000000\tx.png\n5\t2.000000\tdog/d0.png\n"
                "8\t3.000000\tdog/puppy/p1.png\n6\t2.000000\tdog/d1.jpeg\n1\t0.000000\ty.jpg\n"
                "3\t1.000000\tcat/c1.png\n7\t3.000000\tdog/puppy/p0.jpg\n2\t1.000000\tcat/c0.jpg\n")
# MXNet 1.9.1: im2rec.py --list --recursive --chunks 2 --train-ratio 0.5 --test-ratio 0.25
MX_CHUNKS = {
    "d_0_test.lst": "4\t1.000000\tcat/c2.JPG\n",
    "d_0_train.lst": "0\t0.000000\tx.png\n5\t2.000000\tdog/d0.png\n",
    "d_0_val.lst": "8\t3.000000\tdog/puppy/p1.png\n6\t2.000000\tdog/d1.jpeg\n",
    "d_1_test.lst": "1\t0.000000\ty.jpg\n",
    "d_1_train.lst": "3\t1.000000\tcat/c1.png\n7\t3.000000\tdog/puppy/p0.jpg\n",
    "d_1_val.lst": "2\t1.000000\tcat/c0.jpg\n",
}


@pytest.fixture
def imgs(tmp_path):
    root = tmp_path / "imgs"
    rng = np.random.RandomState(1)
    for i, rel in enumerate(LAYOUT):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith(".txt"):
            p.write_text("not an image")
            continue
        a = rng.randint(0, 256, (17 + 2 * i, 25 - i, 3)).astype(np.uint8)
        Image.fromarray(a).save(p, format="PNG" if rel.endswith(".png") else "JPEG", quality=90)
    return root


def _run(*argv):
    assert im2rec.main([str(a) for a in argv]) == 0


def test_list_recursive_matches_mxnet(imgs, tmp_path, capsys):
    _run("--list", "--recursive", tmp_path / "d", imgs)
    assert (tmp_path / "d.lst").read_text() == MX_RECURSIVE
    assert capsys.readouterr().out == ". 0\ncat 1\ndog 2\ndog/puppy 3\n"


def test_list_chunks_and_ratios_match_mxnet(imgs, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    _run("--list", "--recursive", "--chunks", 2, "--train-ratio", 0.5, "--test-ratio", 0.25,
         out / "d", imgs)
    assert sorted(os.listdir(out)) == sorted(MX_CHUNKS)
    for name, text in MX_CHUNKS.items():
        assert (out / name).read_text() == text


def test_list_flat_no_shuffle_and_exts(imgs, tmp_path):
    _run("--list", "--no-shuffle", tmp_path / "d", imgs)
    assert (tmp_path / "d.lst").read_text() == "0\t0.000000\tx.png\n1\t0.000000\ty.jpg\n"
    _run("--no-shuffle", "--recursive", "--exts", ".png", "--list", tmp_path / "p", imgs)
    names = [line.split("\t")[-1] for line in (tmp_path / "p.lst").read_text().splitlines()]
    assert names == ["x.png", "cat/c1.png", "dog/d0.png", "dog/puppy/p1.png"]


def test_pass_through_and_pack_label(imgs, tmp_path):
    lst = tmp_path / "m.lst"
    lst.write_text("3\t1.000000\t2.500000\tcat/c0.jpg\n7\t0.000000\t-1.000000\tdog/d0.png\n")
    _run("--pass-through", "--pack-label", tmp_path / "m", imgs)
    rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / "m.idx"), str(tmp_path / "m.rec"), "r")
    assert rec.keys == [3, 7]
    header, payload = mx.recordio.unpack(rec.read_idx(7))
    assert header.flag == 2 and header.id == 7
    np.testing.assert_array_equal(header.label, [0.0, -1.0])
    assert payload == (imgs / "dog/d0.png").read_bytes()
    rec.close()
    _run("--pass-through", tmp_path / "m", imgs)  # without --pack-label: the first label
    rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / "m.idx"), str(tmp_path / "m.rec"), "r")
    header, _ = mx.recordio.unpack(rec.read_idx(3))
    assert header.flag == 0 and header.label == 1.0
    rec.close()


def _records(prefix):
    rec = mx.recordio.MXIndexedRecordIO(str(prefix) + ".idx", str(prefix) + ".rec", "r")
    out = {k: mx.recordio.unpack_img(rec.read_idx(k)) for k in rec.keys}
    rec.close()
    return out


def test_resize_center_crop_png_exact(imgs, tmp_path):
    _run("--list", "--recursive", tmp_path / "d", imgs)
    _run("--resize", 10, "--center-crop", "--encoding", ".png", tmp_path / "d", imgs)
    recs = _records(tmp_path / "d")
    assert sorted(recs) == list(range(9))
    header, img = recs[0]  # x.png, 17 x 25 -> centre 17 x 17 -> 10 x 10
    assert header.label == 0.0 and img.shape == (10, 10, 3)
    src = np.asarray(Image.open(imgs / "x.png"))[:, 4:21, ::-1]  # BGR, centre crop
    want = mx.image.imresize(mx.nd.array(np.ascontiguousarray(src), dtype="uint8"),
                             10, 10, interp=1).asnumpy()
    np.testing.assert_array_equal(img, want)


def test_resize_keeps_aspect_and_grayscale(imgs, tmp_path):
    _run("--list", "--recursive", tmp_path / "d", imgs)
    _run("--resize", 9, "--color", "0", "--quality", 80, tmp_path / "d", imgs)
    for k, (header, img) in _records(tmp_path / "d").items():
        assert img.ndim == 2 and min(img.shape) == 9


def test_multiprocess_same_as_single(imgs, tmp_path):
    _run("--list", "--recursive", tmp_path / "d", imgs)
    _run("--resize", 12, tmp_path / "d", imgs)
    one = ((tmp_path / "d.rec").read_bytes(), (tmp_path / "d.idx").read_bytes())
    _run("--resize", 12, "--num-thread", 3, tmp_path / "d", imgs)
    assert ((tmp_path / "d.rec").read_bytes(), (tmp_path / "d.idx").read_bytes()) == one


def test_image_record_iter_reads_output(imgs, tmp_path):
    _run("--list", "--recursive", tmp_path / "d", imgs)
    _run("--resize", 16, "--center-crop", tmp_path / "d", imgs)
    it = mx.io.ImageRecordIter(path_imgrec=str(tmp_path / "d.rec"), data_shape=(3, 16, 16),
                               batch_size=3)
    labels = []
    for batch in it:
        assert batch.data[0].shape == (3, 3, 16, 16)
        labels += batch.label[0].asnumpy().tolist()
    want = [float(line.split("\t")[1]) for line in MX_RECURSIVE.splitlines()]
    assert labels == want


def test_bad_image_skipped_and_missing_list(imgs, tmp_path, capsys):
    lst = tmp_path / "b.lst"
    lst.write_text("0\t0\tx.png\n1\t0\tnotes.txt\n2\t0\tmissing.jpg\nbad line\n")
    _run(tmp_path / "b", imgs)
    err = capsys.readouterr().err
    assert "notes.txt" in err and "missing.jpg" in err and "bad line" in err
    assert list(_records(tmp_path / "b")) == [0]
    assert im2rec.main([str(tmp_path / "nothing"), str(imgs)]) == 1
    assert "no .lst file" in capsys.readouterr().err


def test_module_entry_point(imgs, tmp_path):
    r = subprocess.run([sys.executable, "-m", "neogluon.tools.im2rec", "--list", "--recursive",
                        str(tmp_path / "d"), str(imgs)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "d.lst").read_text() == MX_RECURSIVE
