"""nd.contrib.calibrate_entropy against MXNet 1.9.1 (tools/gen_calibrate_entropy_fixtures.py),
and mx.contrib.quant / the names MXNet's quantization module exposes."""
import json
import os
import sys

import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
from gen_calibrate_entropy_fixtures import data  # noqa: E402

with open(os.path.join(HERE, "fixtures", "quantization", "calibrate_entropy.json")) as _f:
    CASES = json.load(_f)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['law']}-{c['bins']}")
def test_calibrate_entropy_matches_mxnet(case):
    h, e = np.histogram(data(case["law"], case["seed"]), bins=case["bins"],
                        range=(-case["range"], case["range"]))
    th, div = mx.nd.contrib.calibrate_entropy(mx.nd.array(h), mx.nd.array(e),
                                              num_quantized_bins=case["num_quantized_bins"])
    assert th.shape == (1,) and div.shape == (1,) and th.dtype == np.float32
    assert th.asscalar() == pytest.approx(case["threshold"], rel=1e-6)
    assert div.asscalar() == pytest.approx(case["divergence"], rel=1e-3)


def test_calibrate_entropy_bad_input_and_module_names():
    with pytest.raises(MXNetError, match="hist must be an NDArray"):
        mx.nd.contrib.calibrate_entropy([1, 2, 3], mx.nd.array([0, 1, 2, 3]))
    with pytest.raises(MXNetError, match="one more element"):
        mx.nd.contrib.calibrate_entropy(mx.nd.ones((5,)), mx.nd.ones((5,)))
    q = mx.contrib.quant
    assert q is mx.contrib.quantization
    assert q.Module is mx.mod.Module and q.sym_load is mx.sym.load and q.nd_save is mx.nd.save
    assert q.DataBatch is mx.io.DataBatch and q.ndarray is mx.nd
    with pytest.raises(AttributeError):
        q.no_such_name
