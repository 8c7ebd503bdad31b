"""Record MXNet 1.9.1's Module training for tests/test_module.py.

    .venv/bin/python tools/gen_module_fixtures.py --write-neogluon-checkpoint
        # step 1: neogluon's checkpoint of the 'convbn' Adam run (neogluon_ckpt-*)
    /tmp/mxref/bin/python tools/gen_module_fixtures.py
        # step 2: writes tests/fixtures/module/: fit results of small networks under several
        # context/kvstore/optimizer settings; MXNet's checkpoint of the same run (symbol,
        # params, optimizer states) and the parameters after MXNet resumes it for one
        # epoch; and MXNet resuming neogluon's checkpoint of step 1
    /tmp/mxref/bin/python tools/gen_module_fixtures.py --check-neogluon-checkpoint PREFIX EPOCH
        # MXNet loads a checkpoint written by neogluon's Module (PREFIX-symbol.json,
        # PREFIX-EPOCH.params, PREFIX-EPOCH.states), trains one epoch on the shared data
        # and writes PREFIX-mxnet-continued.npz for the test to compare

The scenarios (network, data, initial values, settings) are defined once, in
tests/module_cases.py, and run unchanged by both libraries.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
OUT = os.path.join(ROOT, "tests", "fixtures", "module")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check-neogluon-checkpoint", nargs=2, metavar=("PREFIX", "EPOCH"))
    ap.add_argument("--write-neogluon-checkpoint", action="store_true",
                    help="run with neogluon's interpreter: write neogluon_ckpt-* (step 1)")
    args = ap.parse_args()
    import module_cases as cases
    if args.write_neogluon_checkpoint:
        import neogluon as ng
        os.makedirs(OUT, exist_ok=True)
        cases.make_checkpoint(ng, os.path.join(OUT, "neogluon_ckpt"))
        print("wrote", os.path.join(OUT, "neogluon_ckpt-*"))
        return
    import mxnet as mx
    logging.basicConfig(level=logging.WARNING)
    if args.check_neogluon_checkpoint:
        prefix, epoch = args.check_neogluon_checkpoint
        res = cases.continue_checkpoint(mx, prefix, int(epoch))
        np.savez(prefix + "-mxnet-continued.npz", **res)
        print("wrote", prefix + "-mxnet-continued.npz")
        return
    os.makedirs(OUT, exist_ok=True)
    for name in cases.FIT_CASES:
        res = cases.run_fit(mx, name)
        np.savez(os.path.join(OUT, f"fit_{name}.npz"), **res)
        print(name, sorted(res)[:4], "...")
    prefix = os.path.join(OUT, "mxnet_ckpt")
    cases.make_checkpoint(mx, prefix)
    np.savez(os.path.join(OUT, "mxnet_ckpt_resumed.npz"), **cases.continue_checkpoint(mx, prefix, 1))
    # neogluon's checkpoint of the same run (written beforehand with
    # `.venv/bin/python tools/gen_module_fixtures.py --write-neogluon-checkpoint`), resumed by
    # MXNet: the test resumes it with neogluon and compares
    ng = os.path.join(OUT, "neogluon_ckpt")
    if os.path.exists(ng + "-0001.states"):
        np.savez(ng + "_mxnet_resumed.npz", **cases.continue_checkpoint(mx, ng, 1))
    else:
        print("no neogluon checkpoint: run the --write-neogluon-checkpoint step first")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
