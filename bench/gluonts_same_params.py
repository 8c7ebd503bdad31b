"""Same parameters, same batch: a GluonTS training network's loss and gradients, MXNet vs neogluon.

Usage (MXNet first: it writes the batch, the parameters and its loss and gradients to WORK;
then neogluon reads them and compares):
    /tmp/gtsref/bin/python bench/gluonts_same_params.py MODEL ref --data DATA.jsonl --work DIR
    /tmp/gtsng/bin/python -m neogluon.run bench/gluonts_same_params.py MODEL ng \
        --data DATA.jsonl --work DIR

MODEL is one of bench/gluonts_models.py's (deepar, simplefeedforward, mqcnn, nbeats), built
with the same hyperparameters. The batch is the first one of GluonTS's training data loader
(seeded); the network is hybridized; the loss is computed in predict mode (no dropout) inside
``autograd.record`` and differentiated. Prints the loss on both sides and the largest relative
gradient difference (any parameter above 1e-3 is listed).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import mxnet as mx
from mxnet import autograd
import gluonts_models as gm
from gluonts.dataset.common import ListDataset
from gluonts.mx.trainer import Trainer

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("model", choices=gm.MODELS)
ap.add_argument("mode", choices=["ref", "ng"])
ap.add_argument("--data", required=True)
ap.add_argument("--work", required=True)
a = ap.parse_args()
model, mode = a.model, a.mode
os.makedirs(a.work, exist_ok=True)
pre = os.path.join(a.work, "same_%s" % model)
rows = [json.loads(line) for line in open(a.data)]
train = ListDataset([{"start": r["start"], "target": r["target"][:-24]} for r in rows], freq="H")
mx.random.seed(1); np.random.seed(1)
est = gm.build(model, "H", Trainer(epochs=1, num_batches_per_epoch=10))
net = est.create_training_network()
net.initialize(ctx=mx.cpu(), init="xavier")
if mode == "ref":
    tr = est.create_transformation()
    loader = est.create_training_data_loader(tr.apply(train))
    b = next(iter(loader))
    np.savez(pre + "_batch.npz", **{k: v.asnumpy() for k, v in b.items()})
    keys = list(b.keys())
    json.dump(keys, open(pre + "_keys.json", "w"))
    batch = [b[k] for k in keys]
else:
    d = np.load(pre + "_batch.npz")
    keys = json.load(open(pre + "_keys.json"))
    batch = [mx.nd.array(d[k], dtype=d[k].dtype) for k in keys]
net.hybridize()
net(*batch)
if mode == "ref":
    net.save_parameters(pre + ".params")
else:
    net.load_parameters(pre + ".params")
with autograd.record(train_mode=False):
    out = net(*batch)
    loss = out[0] if isinstance(out, (list, tuple)) else out
loss.backward()
grads = {k: p.grad().asnumpy() for k, p in net._collect_params_with_prefix().items() if p.grad_req != "null"}
res = {"loss": loss.asnumpy()}
if mode == "ref":
    np.savez(pre + "_ref.npz", loss=res["loss"], **{"g_" + k: v for k, v in grads.items()})
    print(model, "ref loss", float(res["loss"].mean()))
else:
    ref = np.load(pre + "_ref.npz")
    print(model, "loss ref %.6f ng %.6f  max|d| %.2e" % (ref["loss"].mean(), res["loss"].mean(), np.abs(ref["loss"] - res["loss"]).max()))
    worst = 0
    for k, g in grads.items():
        r = ref["g_" + k]
        rel = np.abs(g - r).max() / (np.abs(r).max() + 1e-12)
        worst = max(worst, rel)
        if rel > 1e-3:
            print("  grad", k, "rel diff %.2e" % rel)
    print("  %d grads, worst rel diff %.2e" % (len(grads), worst))
