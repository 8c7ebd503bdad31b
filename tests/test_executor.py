"""Symbol.bind / simple_bind and the Executor, against MXNet 1.9.1's results
(fixtures from tools/gen_executor_fixtures.py) and its documented semantics."""
import json
import re

import numpy as np
import pytest

import neogluon as mx
from neogluon.base import MXNetError


def _load(fixture_path, name):
    return dict(np.load(fixture_path("executor", name)))


def _convnet(fixture_path):
    with open(fixture_path("executor", "convnet.json")) as f:
        meta = json.load(f)
    return mx.sym.load_json(meta["symbol"]), meta


@pytest.mark.parametrize("req", ["write", "add"])
def test_convnet_matches_mxnet(fixture_path, req):
    sym, meta = _convnet(fixture_path)
    ref = _load(fixture_path, "convnet.npz")
    exe = sym.simple_bind(mx.cpu(), grad_req=req, **{k: tuple(v) for k, v in
                                                      meta["shapes"].items()})
    for n in meta["arguments"]:
        exe.arg_dict[n][:] = ref[f"in_{n}"]
    for n in meta["aux"]:
        exe.aux_dict[n][:] = ref[f"auxin_{n}"]
    for g in exe.grad_arrays:
        g[:] = 0.5 if req == "add" else 0
    for _ in range(2):
        exe.forward(is_train=True)
        exe.backward()
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), ref[f"{req}_out"], rtol=1e-5,
                               atol=1e-6)
    for n, g in exe.grad_dict.items():
        np.testing.assert_allclose(g.asnumpy(), ref[f"{req}_grad_{n}"], rtol=1e-4, atol=1e-5,
                                   err_msg=n)
    for n, a in exe.aux_dict.items():
        np.testing.assert_allclose(a.asnumpy(), ref[f"{req}_aux_{n}"], rtol=1e-5, atol=1e-6,
                                   err_msg=n)
    exe.forward(is_train=False)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), ref[f"{req}_infer_out"], rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("head", ["lin", "logi", "mae", "svm", "makeloss"])
def test_loss_heads_and_per_argument_grad_req(fixture_path, head):
    ref = _load(fixture_path, "heads.npz")
    x, w = mx.sym.var("x"), mx.sym.var("w")
    h = mx.sym.FullyConnected(x, weight=w, num_hidden=3, no_bias=True, name="fc")
    sym = {"lin": lambda: mx.sym.LinearRegressionOutput(h, name="lin"),
           "logi": lambda: mx.sym.LogisticRegressionOutput(h, name="logi"),
           "mae": lambda: mx.sym.MAERegressionOutput(h, name="mae"),
           "svm": lambda: mx.sym.SVMOutput(h, name="svm", margin=0.5),
           "makeloss": lambda: mx.sym.MakeLoss(mx.sym.sum(mx.sym.square(h)), grad_scale=0.3,
                                               name="ml")}[head]()
    exe = sym.simple_bind(mx.cpu(), grad_req={"w": "write", "x": "add"}, x=(4, 5))
    assert set(exe.grad_dict) == {"x", "w"}
    exe.arg_dict["x"][:] = ref["in_x"]
    exe.arg_dict["w"][:] = ref["in_w"]
    if f"{head}_label" in ref:
        lab = [n for n in sym.list_arguments() if n.endswith("label")][0]
        exe.arg_dict[lab][:] = ref[f"{head}_label"]
    for _ in range(2):
        exe.forward(is_train=True)
        exe.backward()
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), ref[f"{head}_out"], rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(exe.grad_dict["w"].asnumpy(), ref[f"{head}_grad_w"], rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), ref[f"{head}_grad_x"], rtol=1e-5,
                               atol=1e-6)


def _fc_relu():
    x, w = mx.sym.var("x"), mx.sym.var("w")
    return mx.sym.relu(mx.sym.FullyConnected(x, weight=w, num_hidden=3, no_bias=True,
                                             name="fc"), name="r")


def test_outputs_are_the_same_arrays_across_forwards():
    sym = _fc_relu()
    exe = sym.bind(mx.cpu(), args={"x": mx.nd.ones((2, 4)), "w": mx.nd.ones((3, 4))})
    assert exe.outputs[0].shape == (2, 3)          # allocated at bind, as in MXNet
    first = exe.forward()[0]
    exe.arg_dict["x"][:] = 2
    exe.forward()
    assert first is exe.outputs[0]
    assert first.asnumpy()[0, 0] == 8.0
    assert exe.output_dict["r_output"] is first


def test_bind_with_gradients_and_out_grads():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    c = 2 * a + b * a
    av, bv = np.array([1., 2.], np.float32), np.array([3., 5.], np.float32)
    ga, gb = mx.nd.empty((2,)), mx.nd.empty((2,))
    exe = c.bind(mx.cpu(), args={"a": mx.nd.array(av), "b": mx.nd.array(bv)},
                 args_grad={"a": ga, "b": gb})
    exe.forward(is_train=True)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), 2 * av + bv * av)
    og = mx.nd.array([1., 10.])
    exe.backward(og)
    np.testing.assert_allclose(ga.asnumpy(), (2 + bv) * og.asnumpy())
    np.testing.assert_allclose(gb.asnumpy(), av * og.asnumpy())
    # by output name
    exe.forward(is_train=True)
    exe.backward({c.list_outputs()[0]: mx.nd.ones((2,))})
    np.testing.assert_allclose(gb.asnumpy(), av)


def test_grad_add_accumulates_and_write_zeroes_unreached():
    x, lab = mx.sym.var("x"), mx.sym.var("lab")
    sym = mx.sym.SoftmaxOutput(x, lab, name="sm")
    gx, gl = mx.nd.ones((2, 3)), mx.nd.ones((2,)) * 7
    exe = sym.bind(mx.cpu(), args={"x": mx.nd.zeros((2, 3)), "lab": mx.nd.array([0, 2])},
                   args_grad={"x": gx, "lab": gl}, grad_req={"x": "add", "lab": "write"})
    exe.forward(is_train=True)
    exe.backward()
    p = np.full((2, 3), 1 / 3, np.float32)
    p[0, 0] -= 1
    p[1, 2] -= 1
    np.testing.assert_allclose(gx.asnumpy(), 1 + p, rtol=1e-6)
    # the label takes no gradient from SoftmaxOutput: MXNet writes zeros there
    np.testing.assert_array_equal(gl.asnumpy(), [0, 0])
    exe.forward(is_train=True)
    exe.backward()
    np.testing.assert_allclose(gx.asnumpy(), 1 + 2 * p, rtol=1e-6)


def test_backward_after_inference_forward():
    sym = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=3, name="fc"),
                               name="sm")
    exe = sym.simple_bind(mx.cpu(), x=(2, 4))
    exe.arg_dict["x"][:] = 1
    exe.arg_dict["fc_weight"][:] = 0.1
    exe.forward(is_train=True)
    exe.backward()
    ref = exe.grad_dict["fc_weight"].asnumpy().copy()
    exe.grad_dict["fc_weight"][:] = 0
    exe.forward(is_train=False)
    exe.backward()          # allowed in MXNet: its graph is static
    np.testing.assert_allclose(exe.grad_dict["fc_weight"].asnumpy(), ref, rtol=1e-6)


def test_non_loss_head_needs_out_grads():
    exe = _fc_relu().simple_bind(mx.cpu(), x=(2, 4))
    exe.forward(is_train=True)
    with pytest.raises(MXNetError, match="head gradient is required"):
        exe.backward()


def test_executor_does_not_touch_autograd_of_bound_arrays():
    sym = _fc_relu()
    x, w = mx.nd.ones((2, 4)), mx.nd.ones((3, 4))
    exe = sym.bind(mx.cpu(), args=[x, w], args_grad=[mx.nd.zeros((2, 4)), mx.nd.zeros((3, 4))])
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((2, 3)))
    assert x._ag is None and w._ag is None
    # a Gluon-style backward elsewhere leaves the executor's buffers alone
    y = mx.nd.ones((3,))
    y.attach_grad()
    with mx.autograd.record():
        z = (y * 2).sum()
    z.backward()
    np.testing.assert_allclose(exe.grad_dict["w"].asnumpy(), np.full((3, 4), 2.0))


def test_simple_bind_types_stypes_and_ctx_groups():
    sym = _fc_relu()
    exe = sym.simple_bind(mx.cpu(), x=(2, 4), type_dict={"x": "float64"})
    assert [a.dtype for a in exe.arg_arrays] == [np.float64, np.float64]
    assert exe.outputs[0].dtype == np.float64
    exe = sym.simple_bind(mx.cpu(), x=(2, 4), grad_req="null")
    assert exe.grad_arrays == [None, None] and exe.grad_dict == {}
    lhs = mx.sym.var("lhs", stype="csr")
    rhs = mx.sym.var("rhs")
    exe = mx.sym.dot(lhs, rhs).simple_bind(mx.cpu(), lhs=(3, 4), rhs=(4, 2), grad_req="null")
    assert exe.arg_dict["lhs"].stype == "csr"


def test_bind_errors_name_the_culprit():
    sym = _fc_relu()
    with pytest.raises(MXNetError, match="x: None, w: None"):
        sym.simple_bind(mx.cpu())
    with pytest.raises(ValueError, match="key `w` is missing"):
        sym.bind(mx.cpu(), args={"x": mx.nd.ones((2, 4))})
    with pytest.raises(MXNetError, match=r"'w'.*\(3, 5\).*\(3, 4\)"):
        sym.bind(mx.cpu(), args={"x": mx.nd.ones((2, 4)), "w": mx.nd.ones((3, 5))})
    with pytest.raises(ValueError, match="grad_req='foo' for argument 'x'"):
        sym.simple_bind(mx.cpu(), x=(2, 4), grad_req="foo")
    with pytest.raises(TypeError, match="Unknown argument q"):
        sym.simple_bind(mx.cpu(), x=(2, 4)).forward(q=mx.nd.ones((2, 4)))
    with pytest.raises(ValueError, match=r"Length of args \(1\)"):
        sym.bind(mx.cpu(), args=[mx.nd.ones((2, 4))])
    with pytest.raises(ValueError, match=r"need: \(2, 4\), received: \(3, 4\)"):
        sym.simple_bind(mx.cpu(), x=(2, 4)).forward(x=mx.nd.ones((3, 4)))
    # MXNet 1.9.1 ignores keywords that name no argument
    assert sym.simple_bind(mx.cpu(), x=(2, 4), nope=(1,), axis=1).arg_dict["x"].shape == (2, 4)
    bn = mx.sym.BatchNorm(mx.sym.var("d"), name="bn")
    with pytest.raises(ValueError, match="auxiliary states"):
        bn.bind(mx.cpu(), args={"d": mx.nd.ones((2, 3)), "bn_gamma": mx.nd.ones((3,)),
                                "bn_beta": mx.nd.ones((3,))})


def test_reshape_shares_memory():
    x = mx.sym.var("x")
    y = mx.sym.FullyConnected(x, num_hidden=4)
    exe = y.simple_bind(mx.cpu(), x=(5, 4), grad_req="null")
    exe.arg_arrays[0][:] = 1
    exe.arg_arrays[1][:] = mx.nd.ones((4, 4))
    exe.arg_arrays[2][:] = 0
    small = exe.reshape(x=(3, 4))
    small.forward()
    assert np.all(small.outputs[0].asnumpy() == 4)
    assert np.all(exe.outputs[0].asnumpy()[:3] == 4)     # MXNet: the output memory is shared
    assert small.arg_arrays[1] is exe.arg_arrays[1]
    with pytest.raises(ValueError, match="allow_up_sizing"):
        exe.reshape(x=(6, 4))
    big = exe.reshape(allow_up_sizing=True, x=(6, 4))
    big.arg_arrays[0][:] = 0
    assert np.all(exe.arg_arrays[0].asnumpy() == 1)


def test_copy_params_from():
    exe = _fc_relu().simple_bind(mx.cpu(), x=(2, 4), type_dict={"x": "float64"})
    exe.copy_params_from({"w": mx.nd.ones((3, 4), dtype="float32")})
    assert exe.arg_dict["w"].dtype == np.float64 and exe.arg_dict["w"].asnumpy().sum() == 12
    with pytest.raises(ValueError, match="nope"):
        exe.copy_params_from({"nope": mx.nd.ones((1,))})
    exe.copy_params_from({"nope": mx.nd.ones((1,))}, allow_extra_params=True)


def test_monitor_callback_names():
    x = mx.sym.var("x")
    y = mx.sym.FullyConnected(x, num_hidden=3, name="fc")
    z = mx.sym.SliceChannel(y, num_outputs=3, axis=1, name="sl")
    w = mx.sym.Group([mx.sym.relu(z[0], name="r"), z[2]])
    exe = w.simple_bind(mx.cpu(), x=(2, 4))
    seen = []
    exe.set_monitor_callback(lambda n, a: seen.append((n, a.shape)))
    exe.forward(is_train=True)
    # names arrive as bytes, as MXNet's C callback hands them over
    assert [n for n, _ in seen] == [b"fc_output", b"sl_output0", b"sl_output1", b"sl_output2",
                                    b"r_output"]
    assert seen[0][1] == (2, 3)
    seen.clear()
    exe.set_monitor_callback(lambda n, a: seen.append(n), monitor_all=True)
    exe.forward(is_train=True)
    # MXNet 1.9.1: each input of a node, a variable input first under its own name, then
    # '<node>_<input name>' (input0, input1... for operators that declare no input names:
    # relu; arg0, arg1... for variadic ones), then the node's outputs
    assert seen == [b"x", b"fc_data", b"fc_weight", b"fc_weight", b"fc_bias", b"fc_bias",
                    b"fc_output", b"sl_data", b"sl_output0", b"sl_output1", b"sl_output2",
                    b"r_input0", b"r_output"]
    assert mx.base.py_str(seen[1]) == "fc_data" and mx.base.py_str("fc_data") == "fc_data"


def test_monitor_all_input_names_follow_mxnet():
    def names(sym, **shapes):
        exe = sym.simple_bind(mx.cpu(), grad_req="null", **shapes)
        seen = []
        exe.set_monitor_callback(lambda n, a: seen.append(mx.base.py_str(n)), monitor_all=True)
        exe.forward()
        return seen
    d = mx.sym.var("data")
    assert names(mx.sym.concat(d, d, dim=0, name="cc"), data=(2, 3)) == \
        ["data", "cc_arg0", "data", "cc_arg1", "cc_output"]
    assert names(mx.sym.add_n(d, d, name="an"), data=(2, 3)) == \
        ["data", "an_arg0", "data", "an_arg1", "an_output"]
    assert names(mx.sym.SoftmaxActivation(d, name="sa"), data=(2, 3)) == \
        ["data", "sa_input0", "sa_output"]
    assert names(mx.sym.Activation(d, act_type="relu", name="act"), data=(2, 3)) == \
        ["data", "act_input0", "act_output"]
    assert names(mx.sym.softmax(d, name="sm") + 1, data=(2, 3)) == \
        ["data", "sm_data", "sm_output", "_plusscalar0_input0", "_plusscalar0_output"]
    x = mx.sym.var("x", shape=(1, 2, 3, 3))
    assert names(mx.sym.UpSampling(x, scale=2, sample_type="nearest", name="up")) == \
        ["x", "up_arg0", "up_output"]
    assert names(mx.sym.elemwise_add(d, d, name="ea"), data=(2, 3)) == \
        ["data", "ea_lhs", "data", "ea_rhs", "ea_output"]
    assert names(mx.sym.Reshape(d, shape=(-1,), name="r"), data=(2, 3)) == \
        ["data", "r_input0", "r_output"]


def test_monitor_callback_array_handle_round_trip():
    # MXNet's tests turn the handle they get back into an array:
    # NDArray(ctypes.cast(arr, NDArrayHandle), writable=False)
    import ctypes
    from neogluon.operator import NDArray, NDArrayHandle
    x = mx.sym.var("x")
    exe = mx.sym.relu(x, name="r").simple_bind(mx.cpu(), x=(2, 2))
    exe.arg_dict["x"][:] = mx.nd.array([[-1, 2], [3, -4]])
    mins = {}

    def cb(name, arr):
        arr = NDArray(ctypes.cast(arr, NDArrayHandle), writable=False)
        mins[mx.base.py_str(name)] = float(mx.nd.min(arr).asscalar())
    exe.set_monitor_callback(cb, monitor_all=True)
    exe.forward()
    assert mins == {"x": -4.0, "r_input0": -4.0, "r_output": 0.0}
    with pytest.raises(mx.base.MXNetError, match="handle"):
        NDArray(NDArrayHandle(12345))


def test_group2ctx_places_arrays_and_matches_single_context():
    with mx.AttrScope(ctx_group="dev1"):
        a, b = mx.sym.var("a"), mx.sym.var("b")
        net = (a + b) * 3
    with mx.AttrScope(ctx_group="dev2"):
        c = mx.sym.var("c")
        net = net + c
    g2c = {"dev1": mx.cpu(1), "dev2": mx.cpu(2)}
    exe = net.simple_bind(mx.cpu(0), group2ctx=g2c, a=(2, 2), b=(2, 2), c=(2, 2))
    assert exe.arg_dict["a"].context == mx.cpu(1) and exe.arg_dict["c"].context == mx.cpu(2)
    for k, v in (("a", 1), ("b", 2), ("c", 3)):
        exe.arg_dict[k][:] = v
    exe.forward(is_train=True)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), np.full((2, 2), 12.0))
    exe.backward(mx.nd.ones((2, 2)))
    np.testing.assert_allclose(exe.grad_dict["a"].asnumpy(), np.full((2, 2), 3.0))
    assert "ctx_group dev1" in exe.debug_str()


def test_common_subexpressions_merged(monkeypatch):
    a, b = mx.sym.var("a"), mx.sym.var("b")
    sym = (a + b) + (a + b)
    monkeypatch.setenv("MXNET_ELIMINATE_COMMON_EXPR", "0")
    plain = sym.simple_bind(mx.cpu(), a=(2,), b=(2,))
    monkeypatch.setenv("MXNET_ELIMINATE_COMMON_EXPR", "1")
    cse = sym.simple_bind(mx.cpu(), a=(2,), b=(2,))
    assert len(plain.get_optimized_symbol().get_internals()) == \
        len(cse.get_optimized_symbol().get_internals()) + 1
    for e in (plain, cse):
        e.forward(is_train=True, a=mx.nd.array([1, 2]), b=mx.nd.array([3, 4]))
        e.backward(mx.nd.ones((2,)))
    np.testing.assert_array_equal(plain.outputs[0].asnumpy(), cse.outputs[0].asnumpy())
    np.testing.assert_array_equal(cse.grad_dict["a"].asnumpy(), [2, 2])
    # two outputs that merge stay two arrays
    d = a * (a + 1)
    g = mx.sym.Group([d, a * (a + 1)]).simple_bind(mx.cpu(), a=(2,))
    g.forward()
    assert g.outputs[0] is not g.outputs[1]


def test_debug_str_reports_plan_memory():
    data = mx.sym.var("data")
    for _ in range(4):
        data = data * data
    mb = {}
    for name, sym, req in (("write", data, "write"), ("null", data, "null"),
                           ("stop", mx.sym.stop_gradient(data), "write")):
        exe = sym.simple_bind(mx.cpu(), data=(10, 3, 64, 64), grad_req=req)
        mb[name] = int(re.search(r"Total (\d+) MB allocated", exe.debug_str()).group(1))
    assert mb["write"] > mb["stop"] == mb["null"] > 0


def test_executor_replays_captured_graph():
    exe = _fc_relu().simple_bind(mx.cpu(), x=(2, 4))
    for _ in range(3):
        exe.forward(is_train=True)
        exe.backward(mx.nd.ones((2, 3)))
    assert exe._runner._graphs, "the executor's graph was not captured"
    # the monitor path evaluates node by node and gives the same numbers
    out = exe.outputs[0].asnumpy().copy()
    exe.set_monitor_callback(lambda n, a: None)
    exe.forward(is_train=True)
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), out)


def test_repeated_forward_reuses_graph_and_follows_changes():
    """An executor's repeated forward runs its captured graph directly
    (_GraphRunner.run_bound); what the checks it skips would notice still counts: the
    training mode (Dropout), new values written into the bound arrays, an array whose
    tensor was replaced, and a monitor callback."""
    data = mx.sym.Variable("data")
    w = mx.sym.Variable("w")
    net = mx.sym.Dropout(mx.sym.FullyConnected(data, weight=w, no_bias=True, num_hidden=4),
                         p=0.5)
    ex = net.simple_bind(mx.cpu(), data=(3, 5), grad_req="null")
    x = np.arange(15, dtype=np.float32).reshape(3, 5) / 10
    wv = np.ones((4, 5), np.float32)
    ex.arg_dict["data"][:] = x
    ex.arg_dict["w"][:] = wv
    plain = x @ wv.T
    for _ in range(3):
        out = ex.forward(is_train=True)[0].asnumpy()
        kept = out != 0
        np.testing.assert_allclose(out[kept], plain[kept] * 2, rtol=1e-6)
    assert ex._runner._fast_run is not None
    for _ in range(2):   # inference after training: no dropout
        np.testing.assert_allclose(ex.forward(is_train=False)[0].asnumpy(), plain, rtol=1e-6)
    ex.arg_dict["w"][:] = 2 * wv   # written in place
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), 2 * plain, rtol=1e-6)
    # the bound array's tensor replaced (same shape): the new tensor is read
    import torch
    ex.arg_dict["data"]._t = torch.zeros(3, 5)
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), np.zeros((3, 4)))
    seen = []
    ex.set_monitor_callback(lambda name, arr: seen.append(name))
    ex.forward()
    assert seen
