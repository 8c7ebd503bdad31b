"""mx.io: NDArrayIter & co. against MXNet 1.9.1's recorded behaviour, plus argument checks."""
import json
import os

import numpy as np
import pytest

import neogluon as mx
from io_cases import ndarrayiter_records

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "io")


def test_iterators_match_mxnet():
    with open(os.path.join(FIX, "ndarrayiter.json")) as f:
        expected = json.load(f)
    got = ndarrayiter_records(mx)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g == e


def test_csr_needs_discard_and_bad_inputs():
    c = mx.nd.array(np.arange(8).reshape(4, 2)).tostype("csr")
    with pytest.raises(NotImplementedError):
        mx.io.NDArrayIter(c, None, 2)
    with pytest.raises(TypeError):
        mx.io.NDArrayIter("abc", None, 2)
    with pytest.raises(ValueError, match="last_batch_handle"):
        mx.io.NDArrayIter(np.zeros(4), None, 2, last_batch_handle="keep")
    batches = list(mx.io.NDArrayIter(c, None, 2, last_batch_handle="discard"))
    assert all(b.data[0].stype == "csr" for b in batches)


def test_databatch_and_dataiter_protocol():
    b = mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.zeros((2,))], pad=0)
    assert str(b) == "DataBatch: data shapes: [(2, 3)] label shapes: [(2,)]"
    with pytest.raises(AssertionError):
        mx.io.DataBatch(mx.nd.ones((2, 3)))
    it = mx.io.NDArrayIter(np.arange(6), np.arange(6), 2)
    assert isinstance(it, mx.io.DataIter)
    assert [b.data[0].asnumpy().tolist() for b in it] == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(StopIteration):
        it.next()
    it.reset()
    assert it.next().label[0].asnumpy().tolist() == [0, 1]


def test_csviter(tmp_path):
    d = tmp_path / "d.csv"
    lab = tmp_path / "l.csv"
    np.savetxt(d, np.arange(20).reshape(5, 4), delimiter=",")
    np.savetxt(lab, np.arange(5), delimiter=",")
    it = mx.io.CSVIter(data_csv=str(d), data_shape=(2, 2), label_csv=str(lab), batch_size=2)
    batches = list(it)
    assert len(batches) == 3 and batches[-1].pad == 1
    assert batches[0].data[0].shape == (2, 2, 2)
    assert batches[2].label[0].asnumpy().ravel().tolist() == [4, 0]


def test_file_iterators_getdata_is_one_array(tmp_path):
    # MXNet's C++ iterators (CSVIter, LibSVMIter) answer getdata()/getlabel() with the current
    # batch's one NDArray, not a list; next() wraps each in the DataBatch's lists.
    d = tmp_path / "d.csv"
    np.savetxt(d, np.arange(12).reshape(3, 4), delimiter=",")
    it = mx.io.CSVIter(data_csv=str(d), data_shape=(4,), batch_size=2)
    batch = it.next()
    assert isinstance(it.getdata(), mx.nd.NDArray) and isinstance(it.getlabel(), mx.nd.NDArray)
    assert it.getdata().asnumpy().tolist() == batch.data[0].asnumpy().tolist()
    svm = tmp_path / "d.libsvm"
    svm.write_text("1 0:1.5 2:2\n0 1:3\n")
    it = mx.io.LibSVMIter(data_libsvm=str(svm), data_shape=(3,), batch_size=2)
    batch = it.next()
    assert it.getdata().stype == "csr" and isinstance(it.getlabel(), mx.nd.NDArray)
    assert it.getdata().asnumpy().tolist() == [[1.5, 0, 2], [0, 3, 0]]
    assert isinstance(batch.data, list) and batch.data[0].stype == "csr"


def test_shuffle_keeps_dtype_and_hard_reset():
    # MXNet 1.9.1 turns shuffled inputs into float32; neogluon keeps their dtype.
    np.random.seed(1)
    it = mx.io.NDArrayIter(mx.nd.arange(10, dtype="int32"), np.arange(10), 4, shuffle=True,
                           last_batch_handle="roll_over")
    assert it.provide_data[0].dtype == np.int32
    first = [b.data[0] for b in it]
    assert all(d.dtype == np.int32 for d in first)
    seen = np.concatenate([d.asnumpy() for d in first]).tolist()
    assert len(seen) == 8 and len(set(seen)) == 8 and set(seen) <= set(range(10))
    it.hard_reset()
    assert it.next().pad == 0


def _write_mnist(tmp_path, n=7, gz=False):
    import gzip
    import struct
    rng = np.random.RandomState(0)
    imgs = rng.randint(0, 256, (n, 28, 28)).astype(np.uint8)
    labs = (np.arange(n) % 10).astype(np.uint8)
    opener = gzip.open if gz else open
    with opener(tmp_path / "img", "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, 28, 28) + imgs.tobytes())
    with opener(tmp_path / "lab", "wb") as f:
        f.write(struct.pack(">II", 2049, n) + labs.tobytes())
    return imgs


@pytest.mark.parametrize("gz", [False, True])
def test_mnistiter_semantics_of_mxnet(tmp_path, gz):
    # Checked against MXNet 1.9.1: pixels / 256, incomplete last batch dropped, parts split
    # at part_index * n // num_parts.
    imgs = _write_mnist(tmp_path, gz=gz)
    kw = dict(image=str(tmp_path / "img"), label=str(tmp_path / "lab"), shuffle=False)
    it = mx.io.MNISTIter(batch_size=3, **kw)
    batches = list(it)
    assert [b.label[0].asnumpy().tolist() for b in batches] == [[0, 1, 2], [3, 4, 5]]
    np.testing.assert_array_equal(batches[0].data[0].asnumpy(),
                                  imgs[:3, None].astype(np.float32) * np.float32(1 / 256))
    it.reset()
    assert it.next().data[0].shape == (3, 1, 28, 28)
    assert mx.io.MNISTIter(batch_size=2, flat=True, **kw).next().data[0].shape == (2, 784)
    p1 = mx.io.MNISTIter(batch_size=3, num_parts=2, part_index=1, **kw)
    assert [b.label[0].asnumpy().tolist() for b in p1] == [[3, 4, 5]]
    shuffled = mx.io.MNISTIter(batch_size=7, **dict(kw, shuffle=True))
    assert sorted(shuffled.next().label[0].asnumpy().tolist()) == list(range(7))
    with pytest.raises(mx.MXNetError, match="not an MNIST label file"):
        mx.io.MNISTIter(image=str(tmp_path / "img"), label=str(tmp_path / "img"))
