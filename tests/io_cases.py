"""Data-iterator scenarios run identically by MXNet 1.9.1 (tools/gen_io_fixtures.py) and by
neogluon (tests/test_io.py): each returns a list of plain-Python records of what came out."""
import numpy as np


def ndarrayiter_records(mx):
    out = []

    def rec(*a):
        out.append(repr(a))

    for lbh in ["pad", "discard", "roll_over"]:
        # roll_over with batch_size > number of examples fails in MXNet 1.9.1 (and here).
        for bs in ([3, 4, 7, 25] if lbh != "roll_over" else [3, 4, 7]):
            np.random.seed(0)
            it = mx.io.NDArrayIter(np.arange(20).reshape(10, 2), np.arange(10), bs,
                                   shuffle=(bs == 3), last_batch_handle=lbh)
            for e in range(3):
                for b in it:
                    rec(lbh, bs, e, b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist(),
                        b.pad)
                it.reset()
            rec([(d.name, d.shape, d.layout) for d in it.provide_data],
                [(d.name, d.shape) for d in it.provide_label])
    it = mx.io.NDArrayIter({"a": np.zeros((5, 2)), "b": np.ones((5, 3))},
                           [np.zeros(5), np.ones(5)], 2)
    rec([(d.name, d.shape) for d in it.provide_data],
        [(d.name, d.shape) for d in it.provide_label], it.getpad())
    for b in it:
        rec([x.asnumpy().tolist() for x in b.data], [x.asnumpy().tolist() for x in b.label],
            b.pad, b.index)
    it = mx.io.NDArrayIter(np.arange(24).reshape(2, 6, 2), None, 4, layout="TNC")
    for b in it:
        rec(b.data[0].shape, b.label, b.pad)
    rec(mx.io.DataDesc.get_batch_axis("TNC"), mx.io.DataDesc.get_batch_axis(None),
        repr(mx.io.DataDesc("x", (1, 2))))
    rec([repr(x) for x in mx.io.DataDesc.get_list([("a", (1, 2))], [("a", np.int32)])])
    r = mx.io.ResizeIter(mx.io.NDArrayIter(np.arange(10), None, 3), 7)
    for b in r:
        rec(b.data[0].asnumpy().tolist(), b.pad)
    p = mx.io.PrefetchingIter([mx.io.NDArrayIter({"data": np.arange(10)}, np.arange(10), 4),
                               mx.io.NDArrayIter({"data": np.arange(10) + 100}, None, 4)],
                              rename_data=[{"data": "d1"}, {"data": "d2"}])
    rec([repr(x) for x in p.provide_data])
    for _ in range(2):
        for b in p:
            rec([x.asnumpy().tolist() for x in b.data], [x.asnumpy().tolist() for x in b.label],
                b.pad)
        p.reset()
    c = mx.nd.array(np.arange(40).reshape((10, 4))).tostype("csr")
    it = mx.io.NDArrayIter(c, np.ones([10, 1]), 3, last_batch_handle="discard")
    for b in it:
        rec(b.data[0].asnumpy().tolist(), b.label[0].shape)
    return out
