"""Record MXNet 1.9.1's SVRGModule and _SVRGOptimizer numbers for tests/test_svrg.py.

    /tmp/mxref/bin/python tools/gen_svrg_fixtures.py
        # writes tests/fixtures/svrg/svrg_mxnet.npz

The scenarios (a small linear regression with fixed data and initial values, full
gradients, fit, a KVStore object, two contexts, a frozen bias, the optimizer alone in a
KVStore) are in tests/svrg_cases.py and run unchanged by both libraries. MXNet runs them with
``fix_mxnet=True``: the two MXNet bugs neogluon fixes (stale full gradients, zero weights
after init_optimizer with a KVStore) are worked around there, see that file.
"""
from __future__ import annotations

import logging
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
OUT = os.path.join(ROOT, "tests", "fixtures", "svrg")


def main():
    import mxnet as mx
    import svrg_cases as cases
    logging.basicConfig(level=logging.WARNING)
    arrays = {}
    for name in cases.CASES:
        res = cases.run_case(mx, name, fix_mxnet=True)
        for key, value in res.items():
            arrays[f"{name}/{key}"] = np.asarray(value, dtype=np.float64)
        print(name, len(res), "arrays")
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "svrg_mxnet.npz")
    np.savez(path, mxnet_version=np.array(mx.__version__), **arrays)
    print("wrote", path)


if __name__ == "__main__":
    main()
