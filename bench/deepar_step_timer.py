"""GluonTS 0.14 DeepAR training step timer, the same script for both libraries (one process
per library; alternate them yourself):

    GTS_DATA=/tmp/gtsw/data.jsonl OMP_NUM_THREADS=1 MXNET_CPU_WORKER_NTHREADS=1 \\
        /tmp/gtsref/bin/python bench/deepar_step_timer.py [STEPS]
    GTS_DATA=/tmp/gtsw/data.jsonl OMP_NUM_THREADS=1 PYTHONPATH=. \\
        /tmp/gtsng/bin/python -m neogluon.run bench/deepar_step_timer.py [STEPS]

Hybridized static network, Adam, 3 batches in turn, the first 3 steps dropped. Prints the
median wall time per step of forward, backward and trainer step + waitall (MXNet's engine is
asynchronous: its work lands in the last), the total and the process CPU time per step.
"""
import sys, os, time, itertools, json
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import mxnet as mx
from mxnet import autograd
import gluonts_models as gm
from gluonts.dataset.common import ListDataset
from gluonts.mx.trainer import Trainer

rows = [json.loads(l) for l in open(os.environ.get("GTS_DATA", "/tmp/gtsw/data.jsonl"))]
train = ListDataset([{"start": r["start"], "target": r["target"][:-24]} for r in rows], freq="H")
mx.random.seed(1); np.random.seed(1)
est = gm.build("deepar", "H", Trainer(epochs=1, num_batches_per_epoch=10))
loader = est.create_training_data_loader(est.create_transformation().apply(train))
batches = list(itertools.islice(iter(loader), 3))
mx.random.seed(1)
net = est.create_training_network()
net.initialize(ctx=mx.cpu(), init="xavier")
net.hybridize(static_alloc=True, static_shape=True)
t = mx.gluon.Trainer(net.collect_params(), mx.optimizer.Adam(learning_rate=1e-3),
                     kvstore="device")
T = {"fwd": [], "bwd": [], "step": [], "total": [], "cpu": []}
for i in range(int(sys.argv[1]) if len(sys.argv) > 1 else 20):
    b = batches[i % 3]
    mx.random.seed(i)
    t0 = time.perf_counter()
    c0 = time.process_time()
    with autograd.record():
        out = net(*b.values())
        loss = out[0] if isinstance(out, (list, tuple)) else out
    t1 = time.perf_counter()
    loss.backward()
    t2 = time.perf_counter()
    t.step(loss.shape[0])
    mx.nd.waitall()
    t3 = time.perf_counter()
    if i >= 3:
        T["fwd"].append(t1 - t0); T["bwd"].append(t2 - t1); T["step"].append(t3 - t2)
        T["total"].append(t3 - t0); T["cpu"].append(time.process_time() - c0)
print({k: "%.1f ms" % (np.median(v) * 1e3) for k, v in T.items()})
