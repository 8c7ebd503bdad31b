"""DeepAR training step per batch in one process, alternating: A = before (split copies in
replay, whole-graph lifetime walk), B = after (views, armed pre-hooks). Two networks with the
same initial parameters, each with its own trainer.

    GTS_DATA=/tmp/gtsw/data.jsonl PYTHONPATH=. OMP_NUM_THREADS=1 /tmp/gtsng/bin/python \
        -m neogluon.run bench/deepar_step_ab.py ROUNDS [prof]

(data from bench/gluonts_data.py; GluonTS 0.14 in the neogluon venv, see gluonts_models.py)
"""
import sys, time, json, itertools, cProfile, pstats
import os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import alternate_ab  # noqa: E402
import numpy as np
import mxnet as mx
from mxnet import autograd
import neogluon.autograd as ag
import neogluon.gluon.block as blk
import gluonts_models as gm
from gluonts.dataset.common import ListDataset
from gluonts.mx.trainer import Trainer
rows = [json.loads(l) for l in open(os.environ.get("GTS_DATA", "/tmp/gtsw/data.jsonl"))]
train = ListDataset([{"start": r["start"], "target": r["target"][:-24]} for r in rows], freq="H")
mx.random.seed(1); np.random.seed(1)
est = gm.build("deepar", "H", Trainer(epochs=1, num_batches_per_epoch=10))
tr = est.create_transformation()
loader = est.create_training_data_loader(tr.apply(train))
batches = list(itertools.islice(iter(loader), 5))
VIEWS, ARMED = blk._split_views_fn, ag._Armed
def make(views):
    blk._split_views_fn = VIEWS if views else blk._split_fn
    mx.random.seed(1)
    net = est.create_training_network()
    net.initialize(ctx=mx.cpu(), init="xavier")
    net.hybridize(static_alloc=True, static_shape=True)
    t = mx.gluon.Trainer(net.collect_params(), mx.optimizer.Adam(learning_rate=1e-3), kvstore="device")
    with autograd.record():
        net(*batches[0].values())   # capture now, with this split choice
    blk._split_views_fn = VIEWS
    return net, t
nets = {"A": make(False), "B": make(True)}
arm = {"A": lambda: None, "B": ARMED}
def step(k, b):
    net, trainer = nets[k]
    ag._Armed = arm[k]
    t0 = time.perf_counter()
    with autograd.record():
        out = net(*b.values())
        loss = out[0] if isinstance(out, (list, tuple)) else out
    loss.backward()
    trainer.step(loss.shape[0])
    mx.nd.waitall()
    return time.perf_counter() - t0, float(loss.asnumpy().mean())
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 6
res, losses = alternate_ab(step, batches[:5], rounds)
print("last losses (dropout masks differ between the two):", losses["A"][-1], losses["B"][-1])
if len(sys.argv) > 2:
    for k in "AB":
        pr = cProfile.Profile(); pr.enable()
        for i in range(5): step(k, batches[i])
        pr.disable(); st = pstats.Stats(pr); st.total_tt
        print(k, "profiled 5 batches: total %.3f s" % st.total_tt)
        st.sort_stats("tottime").print_stats(8)
