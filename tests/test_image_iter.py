"""mx.image augmenters and ImageIter against MXNet 1.9.1's recorded batches."""
import json
import os

import numpy as np
import pytest

import neogluon as mx
from image_iter_cases import ROOT, records


def test_image_iter_matches_mxnet(tmp_path):
    with open(os.path.join(ROOT, "expected.json")) as f:
        expected = json.load(f)
    got = records(mx, str(tmp_path / "images.lst"))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g == e


def test_image_iter_from_recordio(tmp_path):
    names = sorted(x for x in os.listdir(ROOT) if x.endswith(".png"))
    rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / "i.idx"), str(tmp_path / "i.rec"), "w")
    for i, name in enumerate(names):
        with open(os.path.join(ROOT, name), "rb") as f:
            rec.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i), i, 0), f.read()))
    rec.close()
    it = mx.image.ImageIter(2, (3, 16, 16), path_imgrec=str(tmp_path / "i.rec"),
                            path_imgidx=str(tmp_path / "i.idx"), resize=20)
    lst = mx.image.ImageIter(2, (3, 16, 16), path_root=ROOT, resize=20,
                             imglist=[[float(i), n] for i, n in enumerate(names)])
    for a, b in zip(it, lst):
        np.testing.assert_array_equal(a.data[0].asnumpy(), b.data[0].asnumpy())
        np.testing.assert_array_equal(a.label[0].asnumpy(), b.label[0].asnumpy())
    seq = mx.image.ImageIter(5, (3, 16, 16), path_imgrec=str(tmp_path / "i.rec"), resize=20)
    assert next(seq).label[0].asnumpy().tolist() == [0, 1, 2, 3, 4]


def test_augmenters_and_errors():
    src = mx.nd.array(np.random.rand(20, 30, 3) * 255)
    mean, std = np.array([100.0, 110.0, 120.0]), np.array([50.0, 60.0, 70.0])
    before = src.asnumpy()
    out = mx.image.ColorNormalizeAug(mean=mx.nd.array(mean), std=std)(src.copy())
    np.testing.assert_allclose(out.asnumpy(), (before - mean) / std, rtol=1e-5)
    assert mx.image.ForceResizeAug((7, 5))(src).shape == (5, 7, 3)
    assert mx.image.CenterCropAug((10, 8))(src).shape == (8, 10, 3)
    gray = mx.image.RandomGrayAug(1.0)(src)
    np.testing.assert_allclose(gray[:, :, 0].asnumpy(), gray[:, :, 2].asnumpy(), rtol=1e-6)
    flipped = mx.image.HorizontalFlipAug(1.0)(src)
    np.testing.assert_array_equal(flipped.asnumpy(), src.asnumpy()[:, ::-1])
    assert json.loads(mx.image.CastAug().dumps()) == ["castaug", {"type": "float32"}]
    with pytest.raises(ValueError, match="3 channels"):
        mx.image.ImageIter(2, (1, 8, 8), imglist=[])
    with pytest.raises(ValueError, match="last_batch_handle"):
        mx.image.ImageIter(2, (3, 8, 8), imglist=[], last_batch_handle="keep")
    assert list(mx.image.ImageIter(2, (3, 8, 8), imglist=[])) == []


def test_image_record_iter_matches_mxnet(tmp_path):
    from image_iter_cases import record_iter_records
    with open(os.path.join(ROOT, "record_iter.json")) as f:
        expected = json.load(f)
    arrays = np.load(os.path.join(ROOT, "record_iter.npz"))
    got, got_arrays = record_iter_records(mx, str(tmp_path))
    assert got == expected
    assert sorted(got_arrays) == sorted(arrays.files)
    for k in arrays.files:
        np.testing.assert_array_equal(got_arrays[k], arrays[k], err_msg=k)


def test_image_record_iter_options_and_errors(tmp_path):
    from image_iter_cases import record_iter_records
    record_iter_records(mx, str(tmp_path))
    rec = str(tmp_path / "t.rec")
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 16, 16), batch_size=2,
                               round_batch=False)
    pads = [b.pad for b in it]
    it.reset()
    assert pads == [0, 0, 1] and it.next().label[0].asnumpy().tolist() == [0, 1]
    u8 = mx.io.ImageRecordUInt8Iter(path_imgrec=rec, data_shape=(3, 16, 16), batch_size=5,
                                    shuffle=True, rand_crop=True, rand_mirror=True,
                                    path_imgidx=str(tmp_path / "t.idx"), seed=3)
    b = u8.next()
    assert b.data[0].dtype == np.uint8 and sorted(b.label[0].asnumpy().tolist()) == [0, 1, 2, 3, 4]
    # MXNet's int8 images: the uint8 pixels saturated at 127 (checked on MXNet 1.9.1)
    plain = mx.io.ImageRecordUInt8Iter(path_imgrec=rec, data_shape=(3, 16, 16), batch_size=5)
    i8 = mx.io.ImageRecordInt8Iter(path_imgrec=rec, data_shape=(3, 16, 16), batch_size=5)
    x, y = plain.next().data[0].asnumpy(), i8.next().data[0]
    assert y.dtype == np.int8 and i8.provide_data[0].dtype == np.int8
    np.testing.assert_array_equal(y.asnumpy(), np.minimum(x, 127).astype(np.int8))
    assert (x > 127).any()
    part = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=str(tmp_path / "t.idx"),
                                 data_shape=(3, 8, 8), batch_size=2, num_parts=2, part_index=1)
    assert part.next().label[0].asnumpy().tolist() == [2, 3]
    with pytest.raises(mx.MXNetError, match="unsupported argument"):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                              not_an_argument=10)
    with pytest.raises(mx.MXNetError, match="data_shape"):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(8, 8), batch_size=2)


def test_image_record_iter_threads_give_the_same_batches(tmp_path):
    # preprocess_threads decodes a batch's images in parallel; random crops and mirrors draw
    # from a per-image generator seeded from `random`, so the batches do not depend on it
    import random
    from image_iter_cases import record_iter_records
    record_iter_records(mx, str(tmp_path))
    rec = str(tmp_path / "t.rec")
    runs = []
    for threads in (1, 2):
        random.seed(7)
        it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 12, 12), batch_size=3,
                                   rand_crop=True, rand_mirror=True, resize=14,
                                   preprocess_threads=threads)
        runs.append([b.data[0].asnumpy() for b in it])
    assert len(runs[0]) == len(runs[1]) > 1
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)
    random.seed(8)
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 12, 12), batch_size=3,
                               rand_crop=True, rand_mirror=True, resize=14)
    other = [b.data[0].asnumpy() for b in it]
    assert any(not np.array_equal(a, b) for a, b in zip(runs[0], other))


def test_image_record_iter_mean_img(tmp_path):
    # mean_img: computed over one pass and saved when the file is missing (nd.save of
    # {'mean_img': (C, H, W)}), then subtracted per pixel before scale/std; mean_r.. ignored.
    from image_iter_cases import record_iter_records
    record_iter_records(mx, str(tmp_path))
    rec = str(tmp_path / "t.rec")
    kw = dict(path_imgrec=rec, data_shape=(3, 12, 12), resize=14)
    plain = np.concatenate([b.data[0].asnumpy()[:b.data[0].shape[0] - b.pad]
                            for b in mx.io.ImageRecordIter(batch_size=1, **kw)])
    path = str(tmp_path / "mean.bin")
    it = mx.io.ImageRecordIter(batch_size=2, mean_img=path, std_r=2, std_g=4, std_b=8,
                               mean_r=50, scale=0.5, **kw)
    saved = mx.nd.load(path)
    assert list(saved) == ["mean_img"] and saved["mean_img"].shape == (3, 12, 12)
    mean = saved["mean_img"].asnumpy()
    np.testing.assert_allclose(mean, plain.astype(np.float64).mean(0), rtol=1e-6, atol=1e-4)
    mult = (np.float32(0.5) / np.array([2, 4, 8], np.float32)).astype(np.float32)
    expect = (plain[:2] - mean) * mult[:, None, None]
    np.testing.assert_allclose(it.next().data[0].asnumpy(), expect, rtol=1e-6, atol=1e-5)
    # an existing file is read, not recomputed
    mx.nd.save(path, {"mean_img": mx.nd.ones((3, 12, 12)) * 7})
    again = mx.io.ImageRecordIter(batch_size=2, mean_img=path, **kw).next().data[0].asnumpy()
    np.testing.assert_allclose(again, plain[:2] - 7, atol=1e-5)
    mx.nd.save(path, {"mean_img": mx.nd.ones((3, 4, 4))})
    with pytest.raises(mx.MXNetError, match="mean_img"):
        mx.io.ImageRecordIter(batch_size=2, mean_img=path, **kw)
