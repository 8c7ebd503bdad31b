"""mx.io.LibSVMIter against MXNet 1.9.1's batches (tests/fixtures/libsvm, written by
tools/gen_libsvm_fixtures.py)."""
import json
import os

import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "libsvm")
with open(os.path.join(FIX, "cases.json")) as _f:
    CASES = json.load(_f)


def _make(kwargs):
    kw = dict(kwargs)
    for key in ("data_libsvm", "label_libsvm"):
        if key in kw:
            kw[key] = os.path.join(FIX, kw[key])
    return mx.io.LibSVMIter(**kw)


def _sharded_label(kwargs):
    return "label_libsvm" in kwargs and kwargs.get("num_parts", 1) > 1


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in
                                                              c["kwargs"].items()))
def test_batches_match_mxnet(case):
    kwargs = case["kwargs"]
    if case.get("error"):
        with pytest.raises(MXNetError):
            _make(kwargs)
        return
    try:
        it = _make(kwargs)
    except MXNetError as err:
        # A data and a label file cut into byte ranges independently can hold different
        # line counts in one part: MXNet pairs the rows anyway, neogluon refuses.
        assert _sharded_label(kwargs) and "examples" in str(err)
        return
    assert list(it.provide_data[0].shape) == case["provide_data"]
    assert list(it.provide_label[0].shape) == case["provide_label"]
    for epoch in case["epochs"]:
        got = list(it)
        assert len(got) == len(epoch)
        for b, want in zip(got, epoch):
            d, lab = b.data[0], b.label[0]
            assert d.stype == "csr" and d.dtype == np.float32
            np.testing.assert_array_equal(d.asnumpy(), np.array(want["data"], np.float32))
            assert lab.stype == want["label_stype"]
            np.testing.assert_array_equal(lab.asnumpy(), np.array(want["label"], np.float32))
            assert b.pad == want["pad"]
            assert [int(i) for i in b.index] == want["index"]
        it.reset()


def test_bad_inputs(tmp_path):
    good = os.path.join(FIX, "small.t")
    with pytest.raises(MXNetError, match="round_batch"):
        mx.io.LibSVMIter(good, (4,), batch_size=2, round_batch=False)
    with pytest.raises(MXNetError, match="column index 3"):
        mx.io.LibSVMIter(good, (3,), batch_size=2)
    with pytest.raises(MXNetError, match="nope.t"):
        mx.io.LibSVMIter(str(tmp_path / "nope.t"), (4,), batch_size=2)
    bad = tmp_path / "bad.t"
    bad.write_text("1 0:1\n2 x\n")
    with pytest.raises(MXNetError, match="'x'"):
        mx.io.LibSVMIter(str(bad), (4,), batch_size=2)
    with pytest.raises(MXNetError, match="part_index"):
        mx.io.LibSVMIter(good, (4,), batch_size=2, num_parts=2, part_index=2)
    with pytest.raises(MXNetError, match="data_shape"):
        mx.io.LibSVMIter(good, (2, 2), batch_size=2)


def test_parts_cover_every_line_once():
    full = [row for b in _make(dict(data_libsvm="big.t", data_shape=(10,), batch_size=1))
            for row in b.data[0].asnumpy().tolist()]
    for parts in (2, 3, 5, 7):
        rows = []
        for k in range(parts):
            it = _make(dict(data_libsvm="big.t", data_shape=(10,), batch_size=1,
                            num_parts=parts, part_index=k))
            rows += [row for b in it for row in b.data[0].asnumpy().tolist()]
        assert rows == full


def test_trains_a_linear_model():
    it = _make(dict(data_libsvm="big.t", data_shape=(10,), batch_size=5))
    net = mx.gluon.nn.Dense(1, in_units=10)
    net.initialize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    loss_fn = mx.gluon.loss.L2Loss()
    for batch in it:
        x = batch.data[0].tostype("default")
        with mx.autograd.record():
            loss = loss_fn(net(x), batch.label[0])
        loss.backward()
        trainer.step(x.shape[0])
    assert np.isfinite(loss.asnumpy()).all()


def test_folder_reads_files_in_directory_order(tmp_path):
    # MXNet reads a folder's files one after the other in directory (readdir) order; a file
    # without a final newline ends its last line. Checked against MXNet 1.9.1 by hand.
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "b.t").write_text("1 0:1\n2 1:2\n")
    (folder / "a.t").write_text("3 2:3\n")
    (folder / "c.t").write_text("4 3:4\n5 0:5")
    labels = {"b.t": [1, 2], "a.t": [3], "c.t": [4, 5]}
    want = [x for f in os.listdir(folder) for x in labels[f]]
    it = mx.io.LibSVMIter(str(folder), (4,), batch_size=5)
    assert next(iter(it)).label[0].asnumpy().tolist() == want
    got = []
    for k in range(2):
        it = mx.io.LibSVMIter(str(folder), (4,), batch_size=1, num_parts=2, part_index=k)
        got += [b.label[0].asnumpy()[0] for b in it]
    assert got == want
    (tmp_path / "empty").mkdir()
    with pytest.raises(MXNetError, match="holds no files"):
        mx.io.LibSVMIter(str(tmp_path / "empty"), (4,))


def test_dtype_and_prefetching():
    good = os.path.join(FIX, "small.t")
    with pytest.raises(MXNetError, match="float32"):
        mx.io.LibSVMIter(good, (4,), batch_size=2, dtype="float64")
    it = mx.io.LibSVMIter(good, (4,), batch_size=2, dtype="float32")
    assert [b.pad for b in mx.io.PrefetchingIter(it)] == [0, 0, 0, 1]
