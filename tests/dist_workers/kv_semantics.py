"""One worker of a dist_sync job: checks MXNet 1.9.1's store semantics against values every
worker can compute for itself (each rank's data is a known function of its rank)."""
import sys

import numpy as np

import mxnet as mx

kind = sys.argv[1] if len(sys.argv) > 1 else "dist_sync"
kv = mx.kv.create(kind)
r, n = kv.rank, kv.num_workers
assert kv.type == kind
tri = n * (n + 1) / 2  # sum over ranks of (rank + 1)


def same(a, b, what):
    a = a.asnumpy() if hasattr(a, "asnumpy") else np.asarray(a)
    assert np.array_equal(a, np.broadcast_to(np.asarray(b, dtype=a.dtype), a.shape)), \
        (what, r, a.ravel()[:6], np.asarray(b).ravel()[:6])


# init: rank 0's value wins, for int and str keys, one or several keys per call
kv.init(3, mx.nd.ones((2, 3)) * (r + 1))
kv.init([5, 7], [mx.nd.ones((4,)) * (r + 7), mx.nd.ones((3, 2)) * r])
out = mx.nd.zeros((2, 3))
kv.pull(3, out=out)
same(out, 1, "init rank 0 wins")
outs = [mx.nd.zeros((4,)), mx.nd.zeros((3, 2))]
kv.pull([5, 7], out=outs)
same(outs[0], 7, "init list")
same(outs[1], 0, "init list")

# push without an optimizer: the stored value becomes the sum over workers (and contexts)
for rnd in range(3):
    kv.push(3, mx.nd.ones((2, 3)) * (r + 1) * (rnd + 1))
    kv.pull(3, out=out)
    same(out, tri * (rnd + 1), "push sum")
kv.push(3, [mx.nd.ones((2, 3), ctx=mx.cpu(0)), mx.nd.ones((2, 3), ctx=mx.cpu(1)) * 2])
two = [mx.nd.zeros((2, 3), ctx=mx.cpu(0)), mx.nd.zeros((2, 3), ctx=mx.cpu(1))]
kv.pull(3, out=two)
same(two[0], 3 * n, "two contexts")
same(two[1], 3 * n, "two contexts")
# pushpull in place and into outputs
g = mx.nd.ones((4,)) * (r + 1)
kv.pushpull(5, g)
same(g, tri, "pushpull in place")
o = mx.nd.zeros((4,))
kv.pushpull(5, mx.nd.ones((4,)), out=o)
same(o, n, "pushpull out")

# float16 and a big key (over a million elements)
kv.init(11, mx.nd.ones((2, 3), dtype="float16") * (r + 1))
kv.init(12, mx.nd.ones((1100, 1000)) * (r + 2))
kv.set_optimizer(mx.optimizer.create("test", rescale_grad=2))
for rnd in range(2):
    kv.push([11, 12], [mx.nd.ones((2, 3), dtype="float16") * (r + 1),
                       mx.nd.ones((1100, 1000)) * (r + 1)])
h = mx.nd.zeros((2, 3), dtype="float16")
big = mx.nd.zeros((1100, 1000))
kv.pull([11, 12], out=[h, big])
same(h, 1 + 2 * 2 * tri, "float16 update")
same(big, 2 + 2 * 2 * tri, "big key update")
# keys inited after set_optimizer are updated once per round on the sum
kv.init(13, mx.nd.zeros((5,)))
kv.push(13, mx.nd.ones((5,)) * (r + 1))
o5 = mx.nd.zeros((5,))
kv.pull(13, out=o5)
same(o5, 2 * tri, "update once per round")

# row_sparse: each worker pushes its own row, and pulls its own row ids
kv.init(20, mx.nd.ones((6, 2)).tostype("row_sparse"))
v = mx.nd.zeros((6, 2))
v[r % 6] = r + 1
kv.push(20, v.tostype("row_sparse"))
rows = [r % 6, (r + 1) % 6]
got = mx.nd.sparse.zeros("row_sparse", (6, 2))
kv.row_sparse_pull(20, out=got, row_ids=mx.nd.array(rows))
expect = np.zeros((6, 2), dtype=np.float32)
full = np.ones((6, 2), dtype=np.float32)
for q in range(n):
    full[q % 6] += 2 * (q + 1)
for row in rows:
    expect[row] = full[row]
same(got.tostype("default"), expect, "row_sparse_pull own rows")

# errors
try:
    kv.pull(999, out=mx.nd.zeros((1,)))
    raise AssertionError("pull of an uninitialised key must fail")
except mx.base.MXNetError as err:
    assert "999" in str(err) and "init" in str(err), err
try:
    kv.pull(20, out=mx.nd.zeros((6, 2)).tostype("row_sparse"), ignore_sparse=False)
    raise AssertionError("pull of a row_sparse key must fail")
except mx.base.MXNetError as err:
    assert "row_sparse_pull" in str(err), err

# 2bit compression: every worker quantises its own gradient with its own residual
kv2 = mx.kv.create(kind)
kv2.set_gradient_compression({"type": "2bit", "threshold": 0.5})
kv2.init(1, mx.nd.zeros((3, 7)))
residual = [np.zeros((3, 7), np.float32) for _ in range(n)]
weight = np.zeros((3, 7), np.float32)
for rnd in range(4):
    grads = [np.random.RandomState(100 * rnd + q).uniform(-1, 1, (3, 7)).astype(np.float32)
             for q in range(n)]
    kv2.push(1, mx.nd.array(grads[r]))
    total = np.zeros((3, 7), np.float32)
    for q in range(n):
        acc = residual[q] + grads[q]
        deq = np.where(acc >= 0.5, 0.5, np.where(acc <= -0.5, -0.5, 0.0)).astype(np.float32)
        residual[q] = acc - deq
        total += deq
    weight = total  # no optimizer: the stored value becomes the sum
    o = mx.nd.zeros((3, 7))
    kv2.pull(1, out=o)
    same(o, weight, "2bit round %d" % rnd)
sent = kv2.comm_stats["bytes_sent"]

kv.barrier()
print("rank", r, "of", n, "ok", kv.comm_stats["calls"], sent, flush=True)
