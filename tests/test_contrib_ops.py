"""Non-detection ``nd.contrib`` operators that GluonCV/GluonNLP models call (BilinearResize2D in
every mode and both align_corners, AdaptiveAvgPooling2D, interleaved_matmul_* attention,
div_sqrt_dim, arange_like, SyncBatchNorm, foreach/while_loop/cond): outputs and input
gradients against MXNet 1.9.1 (tools/gen_contrib_ops_fixtures.py), the same ops through F in a
hybridized block, and errors."""
import json
import os

import numpy as np
import pytest

import neogluon as mx
from neogluon import nd
from neogluon.base import MXNetError

import contrib_ops_cases

FX = os.path.join(os.path.dirname(__file__), "fixtures", "contrib_ops")
with open(os.path.join(FX, "contrib_ops.json")) as _f:
    INDEX = json.load(_f)
ARR = np.load(os.path.join(FX, "contrib_ops.npz"))


@pytest.mark.parametrize("case", contrib_ops_cases.CASES, ids=lambda c: c[0])
def test_matches_mxnet(case):
    name = case[0]
    out, grads, aux = contrib_ops_cases.run_case(mx, case)
    exp = ARR[f"{name}/out"]
    assert out.shape == exp.shape and str(out.dtype) == INDEX["cases"][name]["out_dtype"]
    np.testing.assert_allclose(out, exp, rtol=1e-5, atol=1e-5)
    assert [g is not None for g in grads] == INDEX["cases"][name]["grads"]
    for i, g in enumerate(grads):
        if g is not None:
            np.testing.assert_allclose(g, ARR[f"{name}/grad{i}"], rtol=1e-4, atol=1e-5,
                                       err_msg=f"gradient of input {i}")
    for i, a in enumerate(aux):
        np.testing.assert_allclose(a, ARR[f"{name}/aux{i}"], rtol=1e-5, atol=1e-6,
                                   err_msg=f"moving statistic {i}")


ERRORS = {
    "bilinear_one_scale": lambda: nd.contrib.BilinearResize2D(
        nd.ones((1, 1, 5, 6)), scale_height=2.0, mode="size"),
    "bilinear_like_without_mode": lambda: nd.contrib.BilinearResize2D(
        nd.ones((1, 1, 5, 6)), nd.ones((1, 1, 3, 3))),
    "bilinear_3d": lambda: nd.contrib.BilinearResize2D(nd.ones((1, 5, 6)), height=2, width=2),
    "adaptive_3d": lambda: nd.contrib.AdaptiveAvgPooling2D(nd.ones((1, 5, 6)), output_size=2),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_refused_as_mxnet(name):
    assert INDEX["errors"][name] == "MXNetError"
    with pytest.raises(MXNetError):
        ERRORS[name]()


def test_attention_shape_errors_name_the_input():
    with pytest.raises(MXNetError, match="queries_keys_values"):
        nd.contrib.interleaved_matmul_selfatt_qk(nd.ones((4, 2, 30)), heads=4)
    with pytest.raises(MXNetError, match="attention"):
        nd.contrib.interleaved_matmul_selfatt_valatt(nd.ones((4, 2, 30)), nd.ones((3, 4, 4)),
                                                     heads=2)
    with pytest.raises(MXNetError, match="mode"):
        nd.contrib.BilinearResize2D(nd.ones((1, 1, 2, 2)), mode="scale")


def test_hybridized_block_uses_them():
    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x, qkv):
            y = F.contrib.BilinearResize2D(x, height=7, width=5, align_corners=False)
            y = F.contrib.AdaptiveAvgPooling2D(y, output_size=(3, 2))
            att = F.softmax(F.contrib.interleaved_matmul_selfatt_qk(qkv, heads=2), axis=-1)
            return y, F.contrib.interleaved_matmul_selfatt_valatt(qkv, att, heads=2)

    x = nd.array(contrib_ops_cases._rand(1, (2, 3, 5, 6)))
    qkv = nd.array(contrib_ops_cases._rand(4, (4, 3, 30)))
    net = Net()
    ref = [o.asnumpy() for o in net(x, qkv)]
    net.hybridize()
    for _ in range(2):
        got = [o.asnumpy() for o in net(x, qkv)]
        for a, b in zip(got, ref):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    assert got[0].shape == (2, 3, 3, 2) and got[1].shape == (4, 3, 10)


def test_control_flow_matches_mxnet():
    assert contrib_ops_cases.run_control_flow(mx) == INDEX["control_flow"]


def test_control_flow_errors():
    with pytest.raises(ValueError, match="max_iterations"):
        nd.contrib.while_loop(lambda i: i < 1, lambda i: (i, i), [nd.zeros(1)])
    with pytest.raises(MXNetError, match="init_states"):
        nd.contrib.foreach(lambda d, s: (d, s), nd.zeros((2, 2)), "state")
