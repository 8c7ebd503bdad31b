"""Replay passes of neogluon/gluon/_fuse.py (fuse_dropout_masks: zoneout masks;
share_fc_transposes: one weight transpose per replay) A/B for the GluonTS 0.14 DeepAR
training step in one process, alternating by round: A = the passes named in OFF (default
both: ``masks,fc``) off, B = all on (chosen when each side's graph is captured; the LSTM
cell fusion is on for both).

    GTS_DATA=/tmp/gtsw/data.jsonl PYTHONPATH=. OMP_NUM_THREADS=1 [OFF=masks|fc|masks,fc] \\
        /tmp/gtsng/bin/python -m neogluon.run bench/deepar_masks_ab.py ROUNDS [prof]

The same initial parameters and batches; the random generator seeded alike before the n-th
step of each side (the same zoneout masks). Prints the median per-step time of each side,
whether every step's loss and, at the end, every parameter agree bit for bit, and with
``prof`` cProfile's Python call count, torch.profiler's aten op count and the autograd node
count per step.
"""
import sys, os, time, itertools, json, hashlib
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import alternate_ab, step_counts  # noqa: E402
import numpy as np
import mxnet as mx
import torch
from neogluon import autograd
from neogluon.gluon import _fuse
import gluonts_models as gm
from gluonts.dataset.common import ListDataset
from gluonts.mx.trainer import Trainer

torch.set_num_threads(1)
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 6
rows = [json.loads(l) for l in open(os.environ.get("GTS_DATA", "/tmp/gtsw/data.jsonl"))]
train = ListDataset([{"start": r["start"], "target": r["target"][:-24]} for r in rows], freq="H")
mx.random.seed(1); np.random.seed(1)
est = gm.build("deepar", "H", Trainer(epochs=1, num_batches_per_epoch=10))
loader = est.create_training_data_loader(est.create_transformation().apply(train))
batches = list(itertools.islice(iter(loader), 5))


OFF = os.environ.get("OFF", "masks,fc").split(",")


def make(on):
    prev = _fuse.set_masks_enabled(on or "masks" not in OFF)
    prev_fc = _fuse.set_fc_share_enabled(on or "fc" not in OFF)
    mx.random.seed(1)
    net = est.create_training_network()
    net.initialize(ctx=mx.cpu(), init="xavier")
    net.hybridize(static_alloc=True, static_shape=True)
    t = mx.gluon.Trainer(net.collect_params(), mx.optimizer.Adam(learning_rate=1e-3),
                         kvstore="device")
    mx.random.seed(0)
    with autograd.record():
        net(*batches[0].values())    # capture now, with this setting
    _fuse.set_masks_enabled(prev)
    _fuse.set_fc_share_enabled(prev_fc)
    return net, t


nets = {"A": make(False), "B": make(True)}
count = {"A": 0, "B": 0}
cpu = {"A": [], "B": []}


def step(k, b):
    net, trainer = nets[k]
    count[k] += 1
    mx.random.seed(count[k])
    t0 = time.perf_counter()
    c0 = time.process_time()
    with autograd.record():
        out = net(*b.values())
        loss = out[0] if isinstance(out, (list, tuple)) else out
    loss.backward()
    trainer.step(loss.shape[0])
    mx.nd.waitall()
    cpu[k].append(time.process_time() - c0)
    return time.perf_counter() - t0, hashlib.sha1(loss.asnumpy().tobytes()).hexdigest()


res, vals = alternate_ab(step, batches[:5], rounds,
                         on_warm=lambda: [cpu[k].clear() for k in "AB"])
print("CPU time (process_time) median A %.1f ms, B %.1f ms, B/A %.3f"
      % (np.median(cpu["A"]) * 1e3, np.median(cpu["B"]) * 1e3,
         np.median(cpu["B"]) / np.median(cpu["A"])))
print("losses identical A vs B (every step, bit for bit):", vals["A"] == vals["B"])
pa = [p.data().asnumpy().tobytes() for p in nets["A"][0].collect_params().values()]
pb = [p.data().asnumpy().tobytes() for p in nets["B"][0].collect_params().values()]
print("parameters identical after %d steps:" % count["A"], pa == pb)
if len(sys.argv) > 2 and sys.argv[2] == "prof":
    for k in "AB":
        print(k, "per step: python calls %d, aten ops (incl. nested) %d, autograd nodes %d"
              % step_counts(step, k, batches[0], batches[1]))
