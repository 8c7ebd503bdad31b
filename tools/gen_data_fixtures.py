"""Write tests/fixtures/data/* from MXNet 1.9.1 (run with /tmp/mxref/bin/python).

Scenarios for gluon.data: samplers (including numpy-seeded shuffles), Dataset helpers,
default batchify dtypes and shapes, DataLoader batch order with every last_batch mode, the
errors the DataLoader raises, and a small RecordIO file read through RecordFileDataset.
"""
import json
import os
import struct

import numpy as np
import mxnet as mx
from mxnet import nd
from mxnet.gluon import data as gdata

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "data")


def _plain(x):
    """JSON-friendly description of a batch: nested lists of (dtype, shape, values)."""
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


def _err(fn):
    try:
        fn()
    except Exception as err:  # noqa: BLE001 - record what MXNet raises
        return {"error": type(err).__name__, "message": str(err)}
    return None


def main():
    os.makedirs(OUT, exist_ok=True)
    meta = {}

    # --- samplers
    seq = gdata.SequentialSampler(10)
    meta["batch_sampler"] = {}
    for mode in ("keep", "discard", "rollover"):
        bs = gdata.BatchSampler(seq, 3, mode)
        epochs = []
        for _ in range(3):
            n = len(bs)
            epochs.append({"len": n, "batches": [list(map(int, b)) for b in bs]})
        meta["batch_sampler"][mode] = epochs
    meta["sequential_start"] = list(gdata.SequentialSampler(4, 3))
    np.random.seed(7)
    meta["random_sampler"] = [[int(i) for i in gdata.RandomSampler(12)] for _ in range(2)]
    meta["bad_last_batch"] = _err(lambda: list(gdata.BatchSampler(seq, 3, "bogus")))
    meta["bad_last_batch_len"] = _err(lambda: len(gdata.BatchSampler(seq, 3, "bogus")))

    # --- datasets
    base = gdata.SimpleDataset(list(range(10)))
    meta["shard"] = {f"{n}_{i}": [int(v) for v in base.shard(n, i)]
                     for n in (3, 4, 10) for i in range(n)}
    meta["shard_error"] = _err(lambda: base.shard(3, 3))
    meta["take"] = {str(c): [int(v) for v in base.take(c)] for c in (0, 3, 10, 15, None)}
    meta["filter"] = [int(v) for v in base.filter(lambda x: x % 3 == 0)]
    pairs = gdata.ArrayDataset(np.arange(6), np.arange(6) * 10)
    meta["transform"] = [list(map(int, s)) for s in pairs.transform(lambda a, b: (a + b, b - a))]
    meta["transform_first"] = [list(map(int, s)) for s in
                               pairs.transform_first(lambda a: a * 100, lazy=False)]
    meta["transform_single"] = [int(v) for v in base.transform(lambda x: x * 2)]
    meta["filter_then_take"] = [list(map(int, s)) for s in
                                pairs.filter(lambda s: s[0] % 2 == 1).take(2)]
    arrds = gdata.ArrayDataset(nd.arange(8).reshape((4, 2)), nd.arange(4), [5, 6, 7, 8])
    meta["array_dataset_item"] = _plain(arrds[1])
    meta["array_dataset_single"] = _plain(gdata.ArrayDataset(nd.arange(3))[2])
    meta["array_dataset_error"] = _err(lambda: gdata.ArrayDataset(np.arange(3), np.arange(4)))

    # --- default batchify
    bf = gdata.dataloader.default_batchify_fn
    meta["batchify"] = {
        "ints": _plain(bf([1, 2, 3])),
        "floats": _plain(bf([1.5, 2.0])),
        "np64": _plain(bf([np.ones(2), np.zeros(2)])),
        "np_int32_scalars": _plain(bf([np.int32(3), np.int32(4)])),
        "ndarrays": _plain(bf([nd.ones((2, 2)), nd.zeros((2, 2))])),
        "tuples": _plain(bf([(nd.ones(3), 1, 0.5), (nd.zeros(3), 2, 1.5)])),
        "nested": _plain(bf([((1, 2), 3.0), ((4, 5), 6.0)])),
        "lists": _plain(bf([[1, 2], [3, 4]])),
    }

    # --- DataLoader ordering
    x = np.arange(22, dtype=np.float32).reshape(11, 2)
    y = np.arange(11)
    ds = gdata.ArrayDataset(x, y)
    meta["loader"] = {}
    for mode in ("keep", "discard", "rollover"):
        dl = gdata.DataLoader(ds, batch_size=4, last_batch=mode)
        meta["loader"][mode] = [{"len": len(dl), "labels": [b[1].asnumpy().tolist() for b in dl]}
                                for _ in range(3)]
    np.random.seed(3)
    dl = gdata.DataLoader(ds, batch_size=4, shuffle=True)
    meta["loader_shuffle"] = [[b[1].asnumpy().tolist() for b in dl] for _ in range(2)]
    first = next(iter(gdata.DataLoader(ds, batch_size=4)))
    meta["loader_batch"] = _plain(first)
    nd_ds = gdata.ArrayDataset(nd.arange(12).reshape((6, 2)), nd.arange(6) * 2)
    meta["loader_nd"] = [_plain(b) for b in gdata.DataLoader(nd_ds, batch_size=4)]
    meta["loader_nd_array_direct"] = [_plain(b) for b in
                                      gdata.DataLoader(nd.arange(10).reshape((5, 2)), batch_size=2)]
    meta["loader_np_direct"] = [_plain(b) for b in
                                gdata.DataLoader(np.arange(5), batch_size=2)]
    bs = gdata.BatchSampler(gdata.SequentialSampler(7), 3, "keep")
    meta["loader_batch_sampler"] = [b.asnumpy().tolist() for b in
                                    gdata.DataLoader(np.arange(7) * 3, batch_sampler=bs)]
    meta["loader_errors"] = {
        "no_batch_size": _err(lambda: gdata.DataLoader(ds)),
        "shuffle_and_sampler": _err(lambda: gdata.DataLoader(
            ds, batch_size=2, shuffle=True, sampler=gdata.SequentialSampler(11))),
        "batch_sampler_and_size": _err(lambda: gdata.DataLoader(
            ds, batch_size=2, batch_sampler=bs)),
        "batch_sampler_and_last": _err(lambda: gdata.DataLoader(
            ds, batch_sampler=bs, last_batch="keep")),
        "bad_timeout": _err(lambda: gdata.DataLoader(ds, batch_size=2, timeout=0)),
    }
    dl = gdata.DataLoader(ds, batch_size=4, num_workers=2)
    meta["loader_workers"] = [_plain(b) for b in dl]
    dl = gdata.DataLoader(ds, batch_size=4, num_workers=2, thread_pool=True)
    meta["loader_threads"] = [_plain(b) for b in dl]
    dl = gdata.DataLoader(ds, batch_size=4, num_workers=2, thread_pool=True,
                          batchify_fn=lambda s: nd.array([t[1] for t in s]))
    meta["loader_threads_custom"] = [_plain(b) for b in dl]
    dl = gdata.DataLoader(ds, batch_size=4, pin_memory=True)
    meta["loader_pinned"] = _plain(next(iter(dl)))

    # --- RecordIO
    magic = struct.pack("<I", 0xCED7230A)
    records = [b"hello", b"", b"abcd" + magic + b"efgh", magic, b"x" * 13 + magic + b"yz",
               bytes(range(256))]
    rec = os.path.join(OUT, "small.rec")
    idx = os.path.join(OUT, "small.idx")
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for i, r in enumerate(records):
        w.write_idx(i * 2 + 1, r)
    w.close()
    ds = gdata.RecordFileDataset(rec)
    meta["recordio"] = {"len": len(ds), "records": [ds[i].hex() for i in range(len(ds))],
                        "written": [r.hex() for r in records]}

    with open(os.path.join(OUT, "data.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
