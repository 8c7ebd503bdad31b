"""Write tests/fixtures/legacy_rnn/* from MXNet 1.9.1 (run with /tmp/mxref/bin/python).

The scenarios live in tests/legacy_rnn_cases.py, written against the MXNet API, so that
tests/test_legacy_rnn.py runs the same code on neogluon: the graphs the ``mx.rnn`` cells
build (names, JSON nodes, shapes, outputs for fixed weights; outputs and gradients through
``simple_bind``), unpack/pack of gate and fused weights and fused-vs-unfused outputs, the
initializers set on the weight variables, ``BucketSentenceIter`` batches for fixed seeds,
``encode_sentences``, and a checkpoint written by ``save_rnn_checkpoint``
(ckpt-symbol.json, ckpt-0003.params).
"""
import json
import os
import sys
import warnings

import numpy as np
import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import legacy_rnn_cases as C  # noqa: E402
from fixture_record import Recorder  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "fixtures", "legacy_rnn")


def fresh(fn, *args):
    with mx.name.NameManager():
        return fn(mx, *args)


def checkpoint(rec):
    """A fused LSTM model saved by save_rnn_checkpoint."""
    cell = mx.rnn.FusedRNNCell(2, num_layers=1, mode="lstm", prefix="ck_")
    with mx.name.NameManager():
        out, _ = cell.unroll(2, mx.sym.Variable("data"), layout="TNC", merge_outputs=True)
        sym = mx.sym.FullyConnected(out, num_hidden=3, name="fc", flatten=False)
    args, _, _ = sym.infer_shape(data=(2, 1, 3))
    arg_params = {name: mx.nd.array(C.det(shape, 40 + j))
                  for j, (name, shape) in enumerate(zip(sym.list_arguments(), args))
                  if name != "data"}
    mx.rnn.save_rnn_checkpoint(cell, os.path.join(OUT, "ckpt"), 3, sym, arg_params, {})
    rec.put("checkpoint", {"arg_params": {k: v.asnumpy() for k, v in arg_params.items()}})


def main():
    os.makedirs(OUT, exist_ok=True)
    warnings.simplefilter("ignore")
    rec = Recorder()
    for fn in C.GRAPH_SCENARIOS:
        rec.put(f"graph.{fn.__name__}", fresh(fn))
    for name in C.FUSED_CONFIGS:
        rec.put(f"fused.{name}", fresh(C.fused_weights, name))
    for name in C.BOUND_CASES:
        rec.put(f"bound.{name}", fresh(C.bound, name))
    rec.put("cell_weights", fresh(C.cell_weights))
    rec.put("initializers", fresh(C.initializers))
    for name, case in C.BUCKET_CASES.items():
        rec.put(f"bucket.{name}", C.bucket_iter(mx, *case))
    rec.put("encode", C.encode(mx))
    checkpoint(rec)
    rec.put("exports", sorted(n for n in dir(mx.rnn) if not n.startswith("_")))
    with open(os.path.join(OUT, "legacy_rnn.json"), "w") as f:
        json.dump(rec.meta, f, sort_keys=True)
    np.savez_compressed(os.path.join(OUT, "legacy_rnn.npz"), **rec.arrays)
    print(f"wrote {len(rec.meta)} entries, {len(rec.arrays)} arrays to {OUT}")


if __name__ == "__main__":
    main()
