"""One worker of a dist_sync job running gluon.contrib.nn.SyncBatchNorm on its slice of a
batch every worker can build (seeded); writes its outputs, gradients and running statistics
to ``<outdir>/rank<r>.npz`` for tests/test_sync_batchnorm.py to compare with a BatchNorm over
the whole batch."""
import os
import sys

import numpy as np

import mxnet as mx
from mxnet import autograd, gluon

outdir = sys.argv[1]
kv = mx.kv.create("dist_sync")
r, n = kv.rank, kv.num_workers
rng = np.random.RandomState(0)
x_all = rng.randn(8, 3, 4, 5).astype("float32") * 2 + 1
w_all = rng.randn(8, 3, 4, 5).astype("float32")
gamma = rng.rand(3).astype("float32") + 0.5
beta = rng.randn(3).astype("float32")
cuts = [0, 3, 8] if n == 2 else np.linspace(0, 8, n + 1).astype(int).tolist()
lo, hi = cuts[r], cuts[r + 1]

layer = gluon.contrib.nn.SyncBatchNorm(in_channels=3, num_devices=1, momentum=0.8)
layer.initialize()
if len(sys.argv) > 2 and sys.argv[2] == "hybrid":
    layer.hybridize()
layer.gamma.set_data(mx.nd.array(gamma))
layer.beta.set_data(mx.nd.array(beta))
res = {}
for step in range(2):
    x = mx.nd.array(x_all[lo:hi] * (step + 1))
    x.attach_grad()
    with autograd.record():
        y = layer(x)
        loss = (y * mx.nd.array(w_all[lo:hi])).sum()
    loss.backward()
    res[f"y{step}"] = y.asnumpy()
    res[f"dx{step}"] = x.grad.asnumpy()
    res[f"dgamma{step}"] = layer.gamma.grad().asnumpy()
    res[f"dbeta{step}"] = layer.beta.grad().asnumpy()
    res[f"rmean{step}"] = layer.running_mean.data().asnumpy()
    res[f"rvar{step}"] = layer.running_var.data().asnumpy()
res["infer"] = layer(mx.nd.array(x_all[lo:hi])).asnumpy()
tmp = os.path.join(outdir, f".rank{r}.npz")
np.savez(tmp, **res)
os.replace(tmp, os.path.join(outdir, f"rank{r}.npz"))
print("ok", r)
