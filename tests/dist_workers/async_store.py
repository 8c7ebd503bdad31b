"""One worker of a dist_async job: pushes are applied on rank 0 as they arrive."""
import json
import sys

import numpy as np

import mxnet as mx
from mxnet import autograd, gluon

kv = mx.kv.create("dist_async")
r, n = kv.rank, kv.num_workers
kv.init(3, mx.nd.ones((2, 3)) * (r + 1))
out = mx.nd.zeros((2, 3))
kv.pull(3, out=out)
assert (out.asnumpy() == 1).all(), ("rank 0's init wins", r, out)
kv.set_optimizer(mx.optimizer.create("test", rescale_grad=2))
seen = []
for i in range(10):
    kv.push(3, mx.nd.ones((2, 3)) * (r + 1))
    kv.pull(3, out=out)
    seen.append(float(out.asnumpy()[0, 0]))
# No rounds: a worker's pulls see its own pushes (and whatever others pushed meanwhile).
assert all(b > a for a, b in zip(seen, seen[1:])), seen
kv.barrier()
kv.pull(3, out=out)
final = float(out.asnumpy()[0, 0])
assert final == 1 + 10 * 2 * n * (n + 1) / 2, final

# A Trainer on dist_async always updates on the store (update_on_kvstore=False is refused).
probe = gluon.nn.Dense(2, in_units=3)
probe.initialize()
try:
    gluon.Trainer(probe.collect_params(), "sgd", kvstore=mx.kv.create("dist_async"),
                  update_on_kvstore=False)._init_kvstore()
    raise AssertionError("update_on_kvstore=False must be refused in async mode")
except ValueError:
    pass
net = gluon.nn.Dense(2, in_units=3)
net.initialize(mx.init.Constant(0.5))
tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                   kvstore=mx.kv.create("dist_async"))
for _ in range(3):
    with autograd.record():
        y = net(mx.nd.ones((4, 3))).sum()
    y.backward()
    tr.step(4)
assert tr._update_on_kvstore is True
kv.barrier()
# every push is one SGD step of lr 0.1 on a gradient of 1 (d sum / d w, rescaled by 1/4 * 4)
w = net.weight.data().asnumpy()

# A checkpoint set of the async Trainer, resumed by a new Trainer on every worker (rank 1,
# which holds no optimizer, takes the file's: its first step after the load does not see a
# changed batch size).
resumed = None
if len(sys.argv) > 1:
    from mxnet.contrib import checkpoint
    checkpoint.save_checkpoint(sys.argv[1], 3, net, tr)
    net2 = gluon.nn.Dense(2, in_units=3)
    net2.initialize()
    tr2 = gluon.Trainer(net2.collect_params(), "sgd", {"learning_rate": 0.5},
                        kvstore=mx.kv.create("dist_async"))
    resumed = checkpoint.load_checkpoint(sys.argv[1], net2, tr2)
    assert tr2.learning_rate == 0.1, tr2.learning_rate
    with autograd.record():
        y = net2(mx.nd.ones((4, 3))).sum()
    y.backward()
    tr2.step(4)
    kv.barrier()
print(json.dumps({"rank": r, "final": final, "w_first": float(w.ravel()[0]),
                  "resumed": resumed}), flush=True)
