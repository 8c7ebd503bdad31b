"""mx.operator's registry helpers: the names MXNet 1.9.1 lists and an operator's arguments."""
import pytest

import neogluon as mx
from neogluon.base import MXNetError


def test_star_import_exposes_registry_helpers():
    ns = {}
    exec("from neogluon.operator import *", ns)
    for name in ("get_all_registered_operators", "get_operator_arguments", "OperatorArguments"):
        assert name in ns


def test_all_registered_operators_lists_backend_ops_and_aliases():
    ops = mx.operator.get_all_registered_operators()
    assert isinstance(ops, list) and ops == sorted(ops)
    for name in ("Activation", "Convolution", "Concat", "concat", "_contrib_box_nms", "norm"):
        assert name in ops
    assert len(ops) > 400


def test_activation_arguments_match_mxnet():
    args = mx.operator.get_operator_arguments("Activation")
    assert isinstance(args, mx.operator.OperatorArguments)
    assert args.narg == 2
    assert args.names == ["data", "act_type"]
    assert args.types == ["NDArray-or-Symbol",
                          "{'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}, required"]


def test_activation_act_type_is_required():
    x = mx.nd.array([-1.0, 2.0])
    with pytest.raises(MXNetError, match="act_type"):
        mx.nd.Activation(x)
    assert mx.nd.Activation(x, act_type="relu").asnumpy().tolist() == [0.0, 2.0]
    assert mx.nd.Activation(x, "relu").asnumpy().tolist() == [0.0, 2.0]
