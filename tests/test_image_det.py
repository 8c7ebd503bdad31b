"""The detection data path (mx.io.ImageDetRecordIter, mx.image.ImageDetIter,
CreateDetAugmenter and the Det* augmenters) against MXNet 1.9.1
(tools/gen_det_fixtures.py): whole epochs, random augmentations included, and clear errors
for bad input."""
import importlib.util
import os

import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "gen_det_fixtures", os.path.join(HERE, "..", "tools", "gen_det_fixtures.py"))
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)
ROOT = cases.ROOT
REC = os.path.join(ROOT, "det.rec")


@pytest.fixture(scope="module")
def expected():
    return np.load(os.path.join(ROOT, "expected.npz"))


# Measured: images and labels are bit-identical to MXNet's (random crops, pads, mirrors and
# shuffles and the HLS jitter included, with or without OpenCV), except 'det/all', whose
# float colour jitter differs in the last bits (5e-7). The per-image means are float32.


def _compare(got, want, prefix):
    assert got["batches"].tolist() == want[f"{prefix}/batches"].tolist()
    assert got["pad"].tolist() == want[f"{prefix}/pad"].tolist()
    np.testing.assert_array_equal(got["label"], want[f"{prefix}/label"])
    head = want[f"{prefix}/data"]
    assert got["data"].shape == head.shape
    np.testing.assert_allclose(got["data"].astype(np.float64), head.astype(np.float64),
                               rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(got["chan_mean"], want[f"{prefix}/chan_mean"], rtol=1e-6,
                               atol=5e-5)


@pytest.mark.parametrize("name", list(cases.REC))
def test_image_det_record_iter_matches_mxnet(name, expected, tmp_path, monkeypatch):
    if name == "color":  # the HLS jitter's numpy path gives the same bytes as OpenCV's
        _compare(cases.run_epochs(cases.make_rec_iter(mx, ROOT, name, str(tmp_path))),
                 expected, f"rec/{name}")
        monkeypatch.setenv("NEOGLUON_OPENCV", "0")
    it = cases.make_rec_iter(mx, ROOT, name, str(tmp_path))
    assert tuple(it.provide_label[0].shape) == tuple(expected[f"rec/{name}/provide_label"])
    got = cases.run_epochs(it)
    _compare(got, expected, f"rec/{name}")
    if cases.REC[name].get("mean_img"):
        # the mean image it computed and saved, then the batches of an iterator reading it
        saved = mx.nd.load(cases.mean_img_path(str(tmp_path), name))["mean_img"].asnumpy()
        np.testing.assert_allclose(saved, expected[f"rec/{name}/mean"], rtol=1e-6,
                                   atol=1e-5)
        again = cases.run_epochs(cases.make_rec_iter(mx, ROOT, name, str(tmp_path)))
        # reading the file, nothing consumes a pass first: other draws, same mean
        np.testing.assert_allclose(again["chan_mean"].mean(), got["chan_mean"].mean(),
                                   atol=3.0)


@pytest.mark.parametrize("name", list(cases.DET))
def test_image_det_iter_matches_mxnet(name, expected, tmp_path):
    cases.seed_all(mx, 100 + list(cases.DET).index(name))
    it = cases.make_det_iter(mx, ROOT, name, str(tmp_path))
    assert tuple(it.provide_label[0][1]) == tuple(expected[f"det/{name}/provide_label"])
    got = cases.run_epochs(it)
    _compare(got, expected, f"det/{name}")


# ---------------------------------------------------------------------------------------
# Invariants of the random augmentations (beyond the fixtures' exact batches).

def _objects(row):
    """The (objects, 6) boxes of one ImageDetRecordIter label row."""
    n = int(row[3])
    lab = row[4:4 + n]
    return lab[int(lab[0]):].reshape(-1, int(lab[1]))


def test_record_iter_random_boxes_stay_normalised(tmp_path):
    it = cases.make_rec_iter(mx, ROOT, "ssd_train", str(tmp_path))
    seen_small = False
    for _ in range(3):
        for b in it:
            for row in b.label[0].asnumpy():
                assert tuple(row[:3]) == (3, 48, 48)
                obj = _objects(row)
                assert len(obj) >= 1
                assert (obj[:, 1:5] >= 0).all() and (obj[:, 1:5] <= 1).all()
                assert (obj[:, 3] > obj[:, 1]).all() and (obj[:, 4] > obj[:, 2]).all()
                seen_small |= bool(((obj[:, 3] - obj[:, 1]) < 0.2).any())
                assert (row[4 + int(row[3]):] == -1).all()
        it.reset()
    assert seen_small  # padding shrinks boxes


def test_record_iter_mirror_flips_boxes(tmp_path):
    plain = cases.make_rec_iter(mx, ROOT, "plain", str(tmp_path))
    mirror = cases.make_rec_iter(mx, ROOT, "mirror", str(tmp_path))
    flipped = kept = 0
    for bp, bm in zip(plain, mirror):
        for rp, rm, dp, dm in zip(bp.label[0].asnumpy(), bm.label[0].asnumpy(),
                                  bp.data[0].asnumpy(), bm.data[0].asnumpy()):
            op, om = _objects(rp), _objects(rm)
            if np.allclose(op, om):
                kept += 1
                np.testing.assert_array_equal(dp, dm)
            else:
                flipped += 1
                np.testing.assert_allclose(om[:, 1], 1 - op[:, 3], atol=1e-6)
                np.testing.assert_allclose(om[:, 3], 1 - op[:, 1], atol=1e-6)
                np.testing.assert_array_equal(dm, dp[:, :, ::-1])
    assert flipped and kept


def test_record_iter_crop_center_emit_drops_objects(tmp_path):
    """With crop_emit_mode='center' an object whose centre leaves the crop is dropped, so
    cropped images hold at most their original objects."""
    plain = cases.make_rec_iter(mx, ROOT, "plain", str(tmp_path), batch_size=11)
    crop = cases.make_rec_iter(mx, ROOT, "crop", str(tmp_path), batch_size=11)
    lp, lc = plain.next().label[0].asnumpy(), crop.next().label[0].asnumpy()
    fewer = 0
    for rp, rc in zip(lp, lc):
        assert len(_objects(rc)) <= len(_objects(rp))
        fewer += len(_objects(rc)) < len(_objects(rp))
    assert fewer > 0


def test_record_iter_drops_boxes_without_area():
    it = mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 32, 32), batch_size=11)
    labels = it.next().label[0].asnumpy()
    raw = cases.images()[4][1]
    # record 4: 1 + 4 % 4 = 1 object and one without area, which is dropped
    assert labels[4][3] == raw.size - cases.OBJ_WIDTH
    assert it.provide_label[0].shape == (11, 4 + max(lab.size for _, lab in cases.images()))


def test_record_iter_threads_give_the_same_batches():
    outs = []
    for threads in (1, 3):
        it = mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 32, 32), batch_size=4,
                                      preprocess_threads=threads, resize=30)
        outs.append(np.concatenate([b.data[0].asnumpy() for b in it]))
    np.testing.assert_array_equal(outs[0], outs[1])


def test_std_random_is_libstdcxx_mt19937():
    from neogluon.io.image_det_record import _StdRandom
    r = _StdRandom(5489)  # std::mt19937's default seed: its first outputs are known
    assert [r.raw() for _ in range(2)] == [3499211612, 581869302]


# ---------------------------------------------------------------------------------------
# ImageDetIter and the augmenters.

def test_det_augmenters_api():
    img = mx.nd.array(np.arange(2 * 4 * 3).reshape(2, 4, 3), dtype="uint8")
    label = np.array([[0, 0.1, 0.2, 0.5, 0.9]])
    flip = mx.image.DetHorizontalFlipAug(1.0)
    out, lab = flip(img, label.copy())
    np.testing.assert_array_equal(out.asnumpy(), img.asnumpy()[:, ::-1])
    np.testing.assert_allclose(lab, [[0, 0.5, 0.2, 0.9, 0.9]])
    with pytest.raises(TypeError):
        mx.image.DetBorrowAug(flip)
    with pytest.raises(ValueError):
        mx.image.DetRandomSelectAug([mx.image.CastAug()])
    sel = mx.image.DetRandomSelectAug([flip], skip_prob=1.0)
    assert sel(img, label)[1] is label
    augs = mx.image.CreateDetAugmenter((3, 30, 30), resize=40, rand_crop=0.5, rand_pad=0.5,
                                       rand_mirror=True, mean=True, std=True)
    names = [a.dumps()[0] if isinstance(a.dumps(), list) else a.dumps() for a in augs]
    assert names[0] == "detborrowaug" and names[1] == "detrandomselectaug"
    assert '"p": 0.5' in augs[2].dumps()
    assert mx.image.det is mx.image.detection


def test_det_iter_reshape_and_sync(tmp_path):
    a = mx.image.ImageDetIter(4, (3, 32, 32), path_imgrec=REC)
    b = mx.image.ImageDetIter(2, (3, 32, 32), path_imgrec=REC)
    assert a.label_shape == (4, 6)
    with pytest.raises(ValueError, match="reduce label count"):
        a.reshape(label_shape=(3, 6))
    with pytest.raises(ValueError, match="object width"):
        a.reshape(label_shape=(6, 7))
    b.reshape(label_shape=(7, 6))
    assert a.sync_label_shape(b) is b
    assert a.label_shape == (7, 6) and a.provide_label[0][1] == (4, 7, 6)
    batch = a.next()
    assert batch.label[0].shape == (4, 7, 6)
    assert (batch.label[0].asnumpy()[:, 4:] == -1).all()
    a.reshape(data_shape=(3, 20, 24))
    # the augmenters still resize to 32x32: a clear error, not a broadcast failure
    with pytest.raises(MXNetError, match="data_shape"):
        a.next()


def test_det_iter_draw_next():
    pytest.importorskip("cv2")
    it = mx.image.ImageDetIter(2, (3, 40, 48), path_imgrec=REC, mean=True, std=True)
    images = list(it.draw_next(color=(255, 0, 0), mean=True, std=True))
    assert len(images) == cases.N_IMAGES
    first = images[0]
    assert first.shape == (40, 48, 3) and first.dtype == np.uint8
    # the boxes are drawn in blue-green-red order: pure red (BGR (0, 0, 255)) pixels exist
    assert ((first[..., 2] == 255) & (first[..., 0] == 0) & (first[..., 1] == 0)).any()


# ---------------------------------------------------------------------------------------
# Bad input: clear errors naming the problem.

def _write_rec(path, labels, img=None):
    if img is None:
        img = np.full((20, 20, 3), 100, np.uint8)
    rec = mx.recordio.MXRecordIO(str(path), "w")
    for i, lab in enumerate(labels):
        header = mx.recordio.IRHeader(0, np.asarray(lab, np.float32) if lab is not None
                                      else 0.0, i, 0)
        rec.write(mx.recordio.pack(header, cases.png_bytes(img)))
    rec.close()
    return str(path)


GOOD = [2, 5, 0, 0.1, 0.1, 0.5, 0.5]


@pytest.mark.parametrize("labels, match", [
    ([[2, 5, 0, 0.1, 0.1]], "at least one 5-value object"),
    ([[2, 4, 0, 0.1, 0.1, 0.5, 0.5]], "object_width 4"),
    ([[1, 5, 0, 0.1, 0.1, 0.5, 0.5]], "header_width 1"),
    ([[2, 5, 0, 0.1, 0.1, 0.5, 0.5, 1]], "whole objects of width 5"),
    ([GOOD, None], "record 1 has no label"),
])
def test_record_iter_bad_labels(tmp_path, labels, match):
    rec = _write_rec(tmp_path / "bad.rec", labels)
    with pytest.raises(MXNetError, match=match):
        mx.io.ImageDetRecordIter(path_imgrec=rec, data_shape=(3, 16, 16), batch_size=1)


@pytest.mark.parametrize("kw, match", [
    (dict(path_imgrec="/nonexistent/x.rec"), "does not exist"),
    (dict(data_shape=(2, 16, 16)), "data_shape"),
    (dict(label_width=9), "label_width is set to 9"),
    (dict(label_pad_width=3), "label_pad_width 3 smaller than estimated width: 7"),
    (dict(resize_mode="stretch"), "resize_mode"),
    (dict(crop_emit_mode="all"), "crop_emit_mode"),
    (dict(inter_method=0), "inter_method"),
    (dict(num_parts=2, part_index=2), "part_index"),
    (dict(num_crop_sampler=2, min_crop_scales=(0.1, 0.2, 0.3)), "min_crop_scales has 3"),
    (dict(min_crop_scales=0.5, max_crop_scales=0.4), "max_crop_scales must be >"),
    (dict(max_crop_overlaps=0.1, min_crop_overlaps=0.5), "max_crop_overlaps must be >="),
    (dict(path_imglist="/nonexistent/x.lst"), "path_imglist"),
    (dict(rand_crop=True), "unsupported argument"),
    (dict(aug_seq="aug_default"), "aug_seq 'aug_default'"),
])
def test_record_iter_bad_arguments(tmp_path, kw, match):
    args = dict(path_imgrec=_write_rec(tmp_path / "ok.rec", [GOOD]), data_shape=(3, 16, 16),
                batch_size=1)
    args.update(kw)
    with pytest.raises(MXNetError, match=match):
        mx.io.ImageDetRecordIter(**args)


def test_record_iter_imglist_missing_id(tmp_path):
    rec = _write_rec(tmp_path / "ok.rec", [GOOD, GOOD])
    lst = tmp_path / "x.lst"
    lst.write_text("0\t" + "\t".join(map(str, GOOD)) + "\ta.png\n")
    with pytest.raises(MXNetError, match="fail to find imagelabel for id 1"):
        mx.io.ImageDetRecordIter(path_imgrec=rec, path_imglist=str(lst),
                                 data_shape=(3, 16, 16), batch_size=1)
    lst.write_text("0\tnot-a-number\ta.png\n")
    with pytest.raises(MXNetError, match="line 1"):
        mx.io.ImageDetRecordIter(path_imgrec=rec, path_imglist=str(lst),
                                 data_shape=(3, 16, 16), batch_size=1)


def test_record_iter_batch_larger_than_data(tmp_path):
    rec = _write_rec(tmp_path / "ok.rec", [GOOD])
    it = mx.io.ImageDetRecordIter(path_imgrec=rec, data_shape=(3, 16, 16), batch_size=3)
    with pytest.raises(MXNetError, match="bigger than batch size"):
        it.next()


@pytest.mark.parametrize("label, match", [
    ([2, 5, 0, 0.1], "label shape is invalid"),
    ([2, 6, 0, 0.1, 0.1, 0.5, 0.5], "inconsistent with annotation width 6"),
    ([2, 5, 0, 0.5, 0.1, 0.2, 0.5], "no valid label"),
])
def test_det_iter_bad_labels(tmp_path, label, match):
    rec = _write_rec(tmp_path / "bad.rec", [GOOD, label])
    with pytest.raises(MXNetError, match=match):
        mx.image.ImageDetIter(1, (3, 16, 16), path_imgrec=rec)


def test_det_iter_empty_and_bad_sync(tmp_path):
    with pytest.raises(MXNetError, match="no images"):
        mx.image.ImageDetIter(1, (3, 16, 16), imglist=[], path_root=str(tmp_path))
    a = mx.image.ImageDetIter(1, (3, 16, 16), path_imgrec=_write_rec(tmp_path / "a.rec",
                                                                      [GOOD]))
    b = mx.image.ImageDetIter(1, (3, 16, 16), path_imgrec=_write_rec(
        tmp_path / "b.rec", [[2, 6, 0, 0.1, 0.1, 0.5, 0.5, 0]]))
    with pytest.raises(MXNetError, match="object width mismatch: 5 vs 6"):
        a.sync_label_shape(b)
    with pytest.raises(MXNetError, match="ImageDetIter"):
        a.sync_label_shape(object())


def test_chunks_follow_dmlc_core():
    """Parts are read in 8 MB chunks, each cut before the last record starting in it;
    MXNet shuffles (and splits among its threads) each chunk on its own. (The cut was
    checked against MXNet 1.9.1 with an 18.8 MB file of JPEGs: shuffled epochs equal.)"""
    from neogluon.io.image_det_record import _chunks
    starts = [0, 40, 100, 160, 200]
    assert _chunks(starts, 240, size=1000) == [(0, 5)]
    # window [0, 100): records at 0 and 40 start in its first 92 bytes; 40 opens chunk 2
    assert _chunks(starts, 240, size=100) == [(0, 1), (1, 2), (2, 3), (3, 5)]
    assert _chunks(starts, 240, size=170) == [(0, 3), (3, 5)]


def test_create_det_augmenter_dumps_match_mxnet(expected):
    assert cases.dumps(mx) == str(expected["dumps"])
