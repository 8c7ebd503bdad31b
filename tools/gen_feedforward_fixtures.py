"""Record MXNet 1.9.1's mx.model.FeedForward for tests/test_feedforward.py.

    .venv/bin/python tools/gen_feedforward_fixtures.py --write-neogluon-checkpoint
        # step 1: neogluon's FeedForward checkpoint of the conv net (neogluon_ff-*)
    /tmp/mxref/bin/python tools/gen_feedforward_fixtures.py
        # step 2: writes tests/fixtures/feedforward/: the fit scenarios' results (parameters,
        # predictions, scores, callback arguments, log lines); MXNet's checkpoint of the
        # conv net and what MXNet gets loading it and training on; and what MXNet gets
        # loading neogluon's checkpoint of step 1 (neogluon_ff_mxnet_continued.npz)
    /tmp/mxref/bin/python tools/gen_feedforward_fixtures.py --check PREFIX EPOCH
        # MXNet's FeedForward.load on a checkpoint neogluon wrote (PREFIX-symbol.json,
        # PREFIX-EPOCH.params): predicts, trains one epoch, writes
        # PREFIX-mxnet-continued.npz

The scenarios are defined once, in tests/feedforward_cases.py, and run unchanged by both
libraries.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
OUT = os.path.join(ROOT, "tests", "fixtures", "feedforward")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", nargs=2, metavar=("PREFIX", "EPOCH"),
                    help="load neogluon's checkpoint PREFIX at EPOCH in MXNet, train on")
    ap.add_argument("--write-neogluon-checkpoint", action="store_true",
                    help="run with neogluon's interpreter: write neogluon_ff-* (step 1)")
    args = ap.parse_args()
    import feedforward_cases as cases
    os.makedirs(OUT, exist_ok=True)
    if args.write_neogluon_checkpoint:
        import neogluon as ng
        prefix = os.path.join(OUT, "neogluon_ff")
        np.savez(prefix + "_predict.npz", predict=cases.make_checkpoint(ng, prefix))
        # the copy saved at epoch 7 is only checked in the test, where it is written again
        os.remove(prefix + "-0007.params")
        print("wrote", prefix + "-*")
        return
    import mxnet as mx
    if args.check:
        prefix, epoch = args.check
        res = cases.continue_checkpoint(mx, prefix, int(epoch))
        np.savez(prefix + "-mxnet-continued.npz", **res)
        print("wrote", prefix + "-mxnet-continued.npz")
        return
    for name in cases.FIT_CASES:
        res = cases.run_fit(mx, name)
        np.savez(os.path.join(OUT, f"fit_{name}.npz"), **res)
        print(name, "\n  ".join(str(line) for line in res["log_lines"]))
    prefix = os.path.join(OUT, "mxnet_ff")
    predict = cases.make_checkpoint(mx, prefix)
    os.remove(prefix + "-0007.params")
    res = cases.continue_checkpoint(mx, prefix, 2)
    res["saved_predict"] = predict
    np.savez(os.path.join(OUT, "mxnet_ff_continued.npz"), **res)
    ng = os.path.join(OUT, "neogluon_ff")
    if os.path.exists(ng + "-0002.params"):
        res = cases.continue_checkpoint(mx, ng, 2)
        np.savez(ng + "_mxnet_continued.npz", **res)
    else:
        print("no neogluon checkpoint: run the --write-neogluon-checkpoint step first")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
