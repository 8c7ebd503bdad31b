"""Record MXNet 1.9.1's BucketingModule, SequentialModule, PythonLossModule and AMP's
convert_bucketing_module for tests/test_module_family.py.

    /tmp/mxref/bin/python tools/gen_module_family_fixtures.py
        # writes tests/fixtures/module_family/:
        #   bucketing.npz      an LSTM language model trained three steps over buckets 6, 4, 6
        #                      (outputs of each step, parameters after, an inference pass)
        #   mxnet_lm-*         MXNet's BucketingModule.save_checkpoint of that model
        #   sequential.npz     SequentialModule (with and without auto_wiring), the same
        #                      network as one Module, and a PythonLossModule chain
        #   amp.npz/amp.json   convert_bucketing_module to bfloat16: inference outputs, and
        #                      which parameters cast_optional_params stores in bfloat16

The scenarios are defined once, in tests/module_family_cases.py, and run unchanged by both
libraries.
"""
from __future__ import annotations

import json
import logging
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
OUT = os.path.join(ROOT, "tests", "fixtures", "module_family")


def _dtype_label(arr):
    # MXNet's bfloat16 arrays have a structured numpy dtype [('bfloat16', '<u2')]
    dt = arr.dtype
    return "bfloat16" if "bfloat16" in str(dt) else np.dtype(dt).name


def main():
    import mxnet as mx
    from mxnet.contrib.amp import amp
    import module_family_cases as cases
    logging.basicConfig(level=logging.WARNING)
    os.makedirs(OUT, exist_ok=True)

    mod = cases.lm_module(mx)
    res = cases.run_bucketing(mx, mod)
    np.savez(os.path.join(OUT, "bucketing.npz"), **res)
    mod.save_checkpoint(os.path.join(OUT, "mxnet_lm"), 3)

    seq = {}
    for name, fn in (("wired", lambda: cases.run_sequential(mx, True)),
                     ("named", lambda: cases.run_sequential(mx, False)),
                     ("fused", lambda: cases.run_fused(mx)),
                     ("pyloss", lambda: cases.run_python_loss(mx))):
        for k, v in fn().items():
            seq[f"{name}/{k}"] = v
    np.savez(os.path.join(OUT, "sequential.npz"), **seq)

    # AMP: the trained model (both buckets bound), converted to bfloat16
    amp_res, meta = {}, {}
    conv = amp.convert_bucketing_module(mod, target_dtype="bfloat16")
    conv.bind(data_shapes=[("data", (cases.BATCH, cases.DEFAULT_KEY))],
              label_shapes=[("softmax_label", (cases.BATCH, cases.DEFAULT_KEY))],
              for_training=False)
    amp_res["eval"] = cases.lm_eval(mx, conv)
    meta["buckets"] = sorted(int(k) for k in conv._buckets)
    conv = amp.convert_bucketing_module(mod, target_dtype="bfloat16", cast_optional_params=True)
    meta["optional_param_dtypes"] = {k: _dtype_label(v) for k, v in
                                     sorted(conv._curr_module._arg_params.items())}
    np.savez(os.path.join(OUT, "amp.npz"), **amp_res)
    with open(os.path.join(OUT, "amp.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    print("wrote", sorted(os.listdir(OUT)))


if __name__ == "__main__":
    main()
