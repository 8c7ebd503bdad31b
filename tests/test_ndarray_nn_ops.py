"""nn operators against MXNet 1.9.1 (fixtures from tools/gen_nd_fixtures.py)."""
import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, nd

from nd_cases import load_group, replay

META, ARRAYS = load_group("nn_ops")


@pytest.mark.parametrize("case", META, ids=[c["name"] for c in META])
def test_nn_op_matches_mxnet(case):
    replay(case, ARRAYS)


OPS_META, OPS_ARRAYS = load_group("ops")


@pytest.mark.parametrize("case", OPS_META, ids=[c["name"] for c in OPS_META])
def test_op_and_gradient_match_mxnet(case):
    replay(case, OPS_ARRAYS)
