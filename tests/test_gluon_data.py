"""gluon.data against MXNet 1.9.1 fixtures (tools/gen_data_fixtures.py)."""
import json
import multiprocessing
import os
import shutil
import time

import numpy as np
import pytest

import neogluon as mx
from neogluon import gluon, nd
from neogluon.gluon import data as gdata

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "data")


@pytest.fixture(scope="module")
def fx():
    with open(os.path.join(FIX, "data.json")) as f:
        return json.load(f)


def _plain(x):
    """The same description of a batch that the fixture generator writes."""
    if isinstance(x, nd.NDArray):
        return {"dtype": np.dtype(x.dtype).name, "shape": list(x.shape),
                "values": x.asnumpy().tolist(), "ctx": str(x.context)}
    if isinstance(x, (list, tuple)):
        return {"type": type(x).__name__, "items": [_plain(i) for i in x]}
    if isinstance(x, np.ndarray):
        return {"np": x.tolist(), "dtype": x.dtype.name}
    if isinstance(x, np.generic):
        return {"np": x.item(), "dtype": x.dtype.name}
    return x


def _check_err(fn, ref, exc=None):
    exc = exc or {"ValueError": ValueError, "AssertionError": AssertionError}[ref["error"]]
    with pytest.raises(exc) as err:
        fn()
    assert type(err.value).__name__ == ref["error"]
    assert str(err.value) == ref["message"]


# ---------------------------------------------------------------- samplers
def test_batch_sampler_modes(fx):
    seq = gdata.SequentialSampler(10)
    for mode, epochs in fx["batch_sampler"].items():
        bs = gdata.BatchSampler(seq, 3, mode)
        for ref in epochs:
            assert len(bs) == ref["len"]
            assert [list(map(int, b)) for b in bs] == ref["batches"]


def test_sequential_and_random_sampler(fx):
    assert list(gdata.SequentialSampler(4, 3)) == fx["sequential_start"]
    np.random.seed(7)
    got = [[int(i) for i in gdata.RandomSampler(12)] for _ in range(2)]
    assert got == fx["random_sampler"]
    assert len(gdata.RandomSampler(12)) == 12


def test_batch_sampler_bad_mode(fx):
    seq = gdata.SequentialSampler(10)
    _check_err(lambda: list(gdata.BatchSampler(seq, 3, "bogus")), fx["bad_last_batch"])
    _check_err(lambda: len(gdata.BatchSampler(seq, 3, "bogus")), fx["bad_last_batch_len"])


# ---------------------------------------------------------------- datasets
def test_dataset_shard_take_filter(fx):
    base = gdata.SimpleDataset(list(range(10)))
    got = {f"{n}_{i}": [int(v) for v in base.shard(n, i)] for n in (3, 4, 10) for i in range(n)}
    assert got == fx["shard"]
    _check_err(lambda: base.shard(3, 3), fx["shard_error"])
    got = {str(c): [int(v) for v in base.take(c)] for c in (0, 3, 10, 15, None)}
    assert got == fx["take"]
    assert [int(v) for v in base.filter(lambda x: x % 3 == 0)] == fx["filter"]
    assert isinstance(base.take(3), gdata.Dataset)


def test_dataset_transforms(fx):
    base = gdata.SimpleDataset(list(range(10)))
    pairs = gdata.ArrayDataset(np.arange(6), np.arange(6) * 10)
    assert [list(map(int, s)) for s in pairs.transform(lambda a, b: (a + b, b - a))] == \
        fx["transform"]
    eager = pairs.transform_first(lambda a: a * 100, lazy=False)
    assert isinstance(eager, gdata.SimpleDataset)
    assert [list(map(int, s)) for s in eager] == fx["transform_first"]
    assert [int(v) for v in base.transform(lambda x: x * 2)] == fx["transform_single"]
    assert [list(map(int, s)) for s in pairs.filter(lambda s: s[0] % 2 == 1).take(2)] == \
        fx["filter_then_take"]
    calls = []
    lazy = base.transform(lambda x: calls.append(x) or x)
    assert calls == []
    lazy[4]
    lazy[4]
    assert calls == [4, 4]


def test_dataset_sample_requires_sampler():
    base = gdata.SimpleDataset(list(range(5)))
    assert list(base.sample(gdata.SequentialSampler(2, 3))) == [3, 4]
    with pytest.raises(TypeError, match="Invalid sampler type"):
        base.sample([0, 1])


def test_array_dataset(fx):
    arrds = gdata.ArrayDataset(nd.arange(8).reshape((4, 2)), nd.arange(4), [5, 6, 7, 8])
    assert len(arrds) == 4
    item = arrds[1]
    assert isinstance(item, tuple)
    assert _plain(item) == fx["array_dataset_item"]
    assert _plain(gdata.ArrayDataset(nd.arange(3))[2]) == fx["array_dataset_single"]
    _check_err(lambda: gdata.ArrayDataset(np.arange(3), np.arange(4)), fx["array_dataset_error"])


def test_record_file_dataset(fx, tmp_path):
    for name in ("small.rec", "small.idx"):
        shutil.copy(os.path.join(FIX, name), tmp_path / name)
    ds = gdata.RecordFileDataset(str(tmp_path / "small.rec"))
    ref = fx["recordio"]
    assert len(ds) == ref["len"]
    assert [ds[i].hex() for i in range(len(ds))] == ref["records"]
    assert ref["records"] == ref["written"]
    assert [ds[i].hex() for i in reversed(range(len(ds)))] == ref["records"][::-1]
    (tmp_path / "bad.idx").write_text("1\t0\n2\t5\n")
    shutil.copy(tmp_path / "small.rec", tmp_path / "bad.rec")
    bad = gdata.RecordFileDataset(str(tmp_path / "bad.rec"))
    # MXNet raises MXNetError there; the message names the file, the key and the offset
    with pytest.raises(mx.base.MXNetError, match=r"bad\.rec: record of key 2 .* at byte 5: bad "
                                                 r"magic number"):
        bad[1]


# ---------------------------------------------------------------- batchify
def test_default_batchify(fx):
    bf = gdata.dataloader.default_batchify_fn
    ref = fx["batchify"]
    assert _plain(bf([1, 2, 3])) == ref["ints"]
    assert _plain(bf([1.5, 2.0])) == ref["floats"]
    assert _plain(bf([np.ones(2), np.zeros(2)])) == ref["np64"]
    assert _plain(bf([np.int32(3), np.int32(4)])) == ref["np_int32_scalars"]
    assert _plain(bf([nd.ones((2, 2)), nd.zeros((2, 2))])) == ref["ndarrays"]
    assert _plain(bf([(nd.ones(3), 1, 0.5), (nd.zeros(3), 2, 1.5)])) == ref["tuples"]
    assert _plain(bf([((1, 2), 3.0), ((4, 5), 6.0)])) == ref["nested"]
    assert _plain(bf([[1, 2], [3, 4]])) == ref["lists"]


# ---------------------------------------------------------------- DataLoader
def _dataset():
    x = np.arange(22, dtype=np.float32).reshape(11, 2)
    return gdata.ArrayDataset(x, np.arange(11))


def test_loader_last_batch_modes(fx):
    ds = _dataset()
    for mode, epochs in fx["loader"].items():
        dl = gdata.DataLoader(ds, batch_size=4, last_batch=mode)
        got = [{"len": len(dl), "labels": [b[1].asnumpy().tolist() for b in dl]}
               for _ in range(3)]
        assert got == epochs, mode


def test_loader_shuffle_follows_numpy_seed(fx):
    np.random.seed(3)
    dl = gdata.DataLoader(_dataset(), batch_size=4, shuffle=True)
    assert [[b[1].asnumpy().tolist() for b in dl] for _ in range(2)] == fx["loader_shuffle"]


def test_loader_batches(fx):
    ds = _dataset()
    assert _plain(next(iter(gdata.DataLoader(ds, batch_size=4)))) == fx["loader_batch"]
    nd_ds = gdata.ArrayDataset(nd.arange(12).reshape((6, 2)), nd.arange(6) * 2)
    assert [_plain(b) for b in gdata.DataLoader(nd_ds, batch_size=4)] == fx["loader_nd"]
    assert [_plain(b) for b in gdata.DataLoader(nd.arange(10).reshape((5, 2)), batch_size=2)] \
        == fx["loader_nd_array_direct"]
    assert [_plain(b) for b in gdata.DataLoader(np.arange(5), batch_size=2)] == \
        fx["loader_np_direct"]
    bs = gdata.BatchSampler(gdata.SequentialSampler(7), 3, "keep")
    assert [b.asnumpy().tolist() for b in gdata.DataLoader(np.arange(7) * 3, batch_sampler=bs)] \
        == fx["loader_batch_sampler"]
    dl = gdata.DataLoader(ds, batch_size=4, pin_memory=True)
    assert _plain(next(iter(dl))) == fx["loader_pinned"]


def test_loader_errors(fx):
    ds = _dataset()
    ref = fx["loader_errors"]
    bs = gdata.BatchSampler(gdata.SequentialSampler(7), 3, "keep")
    _check_err(lambda: gdata.DataLoader(ds), ref["no_batch_size"])
    _check_err(lambda: gdata.DataLoader(ds, batch_size=2, shuffle=True,
                                        sampler=gdata.SequentialSampler(11)),
               ref["shuffle_and_sampler"])
    _check_err(lambda: gdata.DataLoader(ds, batch_size=2, batch_sampler=bs),
               ref["batch_sampler_and_size"])
    _check_err(lambda: gdata.DataLoader(ds, batch_sampler=bs, last_batch="keep"),
               ref["batch_sampler_and_last"])
    _check_err(lambda: gdata.DataLoader(ds, batch_size=2, timeout=0), ref["bad_timeout"])


def test_loader_thread_pool(fx):
    ds = _dataset()
    dl = gdata.DataLoader(ds, batch_size=4, num_workers=2, thread_pool=True)
    assert [_plain(b) for b in dl] == fx["loader_threads"]
    assert [_plain(b) for b in dl] == fx["loader_threads"]  # second epoch, same pool
    dl = gdata.DataLoader(ds, batch_size=4, num_workers=2, thread_pool=True,
                          batchify_fn=lambda s: nd.array([t[1] for t in s]))
    assert [_plain(b) for b in dl] == fx["loader_threads_custom"]


def _slow(x):
    time.sleep(0.5)
    return x


def _boom(x):
    if x[0] >= 8:
        raise KeyError(f"bad sample {x[0]}")
    return x


def test_loader_thread_pool_timeout_and_errors():
    ds = gdata.SimpleDataset(list(range(4))).transform(_slow)
    dl = gdata.DataLoader(ds, batch_size=2, num_workers=1, thread_pool=True, timeout=0.05)
    with pytest.raises(multiprocessing.TimeoutError, match="timed out after 0.05 seconds"):
        list(dl)
    ds = _dataset().transform(lambda x, y: (_boom(x), y))
    dl = gdata.DataLoader(ds, batch_size=4, num_workers=2, thread_pool=True)
    with pytest.raises(KeyError, match="bad sample 8"):
        list(dl)


def test_loader_worker_processes(fx):
    """Worker processes: same batches and order as MXNet, shuffles as in the main process,
    several epochs on the same workers, and worker errors reach the caller."""
    ds = _dataset()
    dl = gdata.DataLoader(ds, batch_size=4, num_workers=2)
    assert len(dl) == 3
    assert [_plain(b) for b in dl] == fx["loader_workers"]
    np.random.seed(3)
    dl = gdata.DataLoader(ds, batch_size=4, shuffle=True, num_workers=2, prefetch=1)
    got = [[b[1].asnumpy().tolist() for b in dl] for _ in range(2)]
    assert got == fx["loader_shuffle"]
    dl = gdata.DataLoader(ds, batch_size=4, last_batch="rollover", num_workers=2,
                          pin_memory=True)
    got = [[b[1].asnumpy().tolist() for b in dl] for _ in range(3)]
    assert got == [e["labels"] for e in fx["loader"]["rollover"]]
    assert next(iter(dl))[0].context == mx.cpu_pinned(0)
    bad = gdata.DataLoader(ds.transform_first(_boom), batch_size=4, num_workers=2)
    with pytest.raises(KeyError, match="bad sample 8"):
        list(bad)


class _FreezeCounts(gdata.Dataset):
    """Each sample: how many objects the worker's garbage collector leaves alone."""
    def __len__(self):
        return 4

    def __getitem__(self, i):
        import gc
        return np.array([gc.get_freeze_count()], dtype=np.float32)


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="forked workers")
def test_forked_workers_leave_the_parents_objects_to_the_parent():
    import gc
    assert gc.get_freeze_count() == 0
    dl = gdata.DataLoader(_FreezeCounts(), batch_size=2, num_workers=2)
    counts = [b.asnumpy().ravel().tolist() for b in dl]
    # the workers' collectors skip what the parent held when they were forked (no
    # copy-on-write of every page holding Python objects); the parent collects as before
    assert all(c > 1000 for batch in counts for c in batch), counts
    assert gc.get_freeze_count() == 0


def test_worker_processes_start_when_the_loader_is_made():
    """As MXNet's DataLoader starts its pool in the constructor: the first pass finds its
    workers running, and the pass that started them drew nothing (same shuffles)."""
    before = len(multiprocessing.active_children())
    np.random.seed(5)
    dl = gdata.DataLoader(_dataset(), batch_size=4, shuffle=True, num_workers=2)
    assert len(multiprocessing.active_children()) == before + 2
    got = [[b[1].asnumpy().tolist() for b in dl] for _ in range(2)]
    np.random.seed(5)
    dl0 = gdata.DataLoader(_dataset(), batch_size=4, shuffle=True)
    assert got == [[b[1].asnumpy().tolist() for b in dl0] for _ in range(2)]


def test_two_passes_at_once_over_worker_processes():
    # MXNet 1.9.1: each iterator has its own batches; torch's persistent loader has one
    # iterator, so a second pass started under the first gets workers of its own
    ds = gdata.SimpleDataset([np.full(2, i, dtype=np.float32) for i in range(6)])
    dl = gdata.DataLoader(ds, batch_size=2, num_workers=2)
    pairs = [(x[:, 0].asnumpy().tolist(), y[:, 0].asnumpy().tolist()) for x, y in zip(dl, dl)]
    assert pairs == [([0, 1], [0, 1]), ([2, 3], [2, 3]), ([4, 5], [4, 5])]
    it1 = iter(dl)
    first = next(it1)[:, 0].asnumpy().tolist()
    assert [b[:, 0].asnumpy().tolist() for b in dl] == [[0, 1], [2, 3], [4, 5]]
    assert [first] + [b[:, 0].asnumpy().tolist() for b in it1] == [[0, 1], [2, 3], [4, 5]]
    for _ in dl:        # a pass left early does not hold the kept workers
        break
    assert dl._passes == 0
    assert [b[:, 0].asnumpy().tolist() for b in dl] == [[0, 1], [2, 3], [4, 5]]


def test_loader_auto_reload_and_len():
    ds = _dataset()
    dl = gdata.DataLoader(ds, batch_size=5, auto_reload=True)
    assert len(dl) == 3
    assert dl._iter is not None
    assert [b[1].asnumpy().tolist() for b in dl][0] == [0, 1, 2, 3, 4]
    assert dl._iter is not None
    dl.clean()
    assert dl._iter is None
    assert len(list(dl)) == 3


def test_gluon_data_namespace():
    for name in ("Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset", "Sampler",
                 "SequentialSampler", "RandomSampler", "FilterSampler", "BatchSampler",
                 "DataLoader"):
        assert hasattr(gluon.data, name), name


def test_loader_gather_fast_path_equals_per_sample_batching():
    """Whole-batch gathers for array datasets give what per-sample default batching gives."""
    from neogluon.gluon.data.dataloader import default_batchify_fn
    rng = np.random.RandomState(0)
    datasets = [
        gdata.ArrayDataset(rng.rand(9, 3).astype(np.float64), rng.randint(0, 5, 9)),
        gdata.ArrayDataset(nd.array(rng.rand(9, 2, 2)), nd.arange(9), rng.rand(9) > 0.5),
        gdata.ArrayDataset(rng.randint(0, 255, (9, 4)).astype(np.uint8)),
        nd.arange(9), nd.arange(18).reshape((9, 2)), np.arange(9, dtype=np.int32),
    ]
    for ds in datasets:
        np.random.seed(1)
        fast = [_plain(b) for b in gdata.DataLoader(ds, batch_size=4, shuffle=True)]
        np.random.seed(1)
        slow = [_plain(b) for b in gdata.DataLoader(
            ds, batch_size=4, shuffle=True, batchify_fn=lambda s: default_batchify_fn(s))]
        assert fast == slow


def _very_slow(x):
    time.sleep(5)
    return x


def test_loader_worker_process_timeout():
    ds = gdata.SimpleDataset(list(range(4))).transform(_very_slow)
    dl = gdata.DataLoader(ds, batch_size=2, num_workers=1, timeout=0.5)
    start = time.time()
    with pytest.raises(multiprocessing.TimeoutError, match="timed out after 0.5 seconds"):
        list(dl)
    assert time.time() - start < 4  # the stuck worker is terminated, not waited for


@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs a CUDA GPU")
def test_loader_pin_memory_pins_with_cuda():
    dl = gdata.DataLoader(_dataset(), batch_size=4, pin_memory=True, pin_device_id=0)
    data, label = next(iter(dl))
    assert data.context == mx.cpu_pinned(0)
    assert nd.to_torch(data).is_pinned() and nd.to_torch(label).is_pinned()
    moved = data.as_in_context(mx.gpu(0))
    assert moved.context == mx.gpu(0)
    np.testing.assert_array_equal(moved.asnumpy(), data.asnumpy())


def _rand_sample(x):
    return np.float32(np.random.rand())


def test_worker_randomness_follows_numpy_seed():
    """Workers' random draws repeat under np.random.seed (as MXNet's forked workers, which
    inherit numpy's state), change with numpy's state, and leave the main stream alone."""
    ds = gdata.SimpleDataset(list(range(4))).transform(_rand_sample)

    def draws():
        return [b.asnumpy().tolist() for b in gdata.DataLoader(ds, batch_size=2, num_workers=1)]

    np.random.seed(3)
    first, after = draws(), np.random.rand()
    np.random.seed(3)
    assert draws() == first
    assert np.random.rand() == after
    assert draws() != first  # numpy's state has moved on


def test_more_workers_than_cpus_start_without_torch_warning():
    """MXNet scripts ask for num_workers=4 (or 5, 8) whatever the machine; MXNet starts them
    silently, torch would warn that they exceed the CPUs it counts."""
    import warnings
    ds = gdata.ArrayDataset(np.arange(12, dtype=np.float32).reshape(6, 2))
    n = (os.cpu_count() or 1) + 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loader = gdata.DataLoader(ds, batch_size=2, num_workers=n)
        got = [b.asnumpy() for b in loader]
    assert len(got) == 3 and got[2].tolist() == [[8, 9], [10, 11]]
