"""Operator cases for the MXNet 1.9.1 operators of neogluon/ndarray/nn_legacy.py,
contrib_more.py and rnn_op.py (loss heads, Crop, im2col/col2im, GridGenerator,
BilinearSampler, SpatialTransformer, Correlation, *_v1, nd.RNN, PSROIPooling & co), run the
same way on MXNet 1.9.1 (tools/gen_extra_ops_fixtures.py writes tests/fixtures/extra_ops/) and
on neogluon (tests/test_extra_ops.py).

A case is a dict: ``name``, ``op`` (the nd path: 'Crop', 'contrib.PSROIPooling'), ``inputs``
(an ordered list of (name, array), passed positionally), ``kwargs``, ``grad`` (the inputs
whose gradients are recorded), ``nd`` (False: MXNet cannot call it imperatively, only through
a symbol), ``sym`` (False: no symbol graph), ``rtol``, ``train`` (False: predict mode
outside ``autograd.record``, no gradients).
"""
import numpy as np


def _rand(seed, shape, lo=None, hi=None):
    rs = np.random.RandomState(seed)
    if lo is not None:
        return rs.uniform(lo, hi, shape).astype("float32")
    return rs.standard_normal(shape).astype("float32")


CASES = []


def case(name, op, inputs, kwargs=None, grad=None, nd=True, sym=True, rtol=1e-5, train=True):
    grad = [n for n, a in inputs if a.dtype.kind == "f"] if grad is None else list(grad)
    if not train:
        grad = []
    CASES.append({"name": name, "op": op, "inputs": inputs, "kwargs": kwargs or {},
                  "grad": grad, "nd": nd, "sym": sym, "rtol": rtol, "train": train})


# ---------------------------------------------------------------- loss heads
def _loss_cases():
    x = _rand(1, (3, 4))
    case("linreg", "LinearRegressionOutput", [("data", x), ("label", _rand(2, (3, 4)))])
    case("linreg_col", "LinearRegressionOutput",
         [("data", _rand(3, (4, 1))), ("label", _rand(4, (4,)))], {"grad_scale": 0.5})
    case("linreg_3d", "LinearRegressionOutput",
         [("data", _rand(5, (2, 3, 4))), ("label", _rand(6, (2, 12)))], {"grad_scale": 3.0})
    case("logreg", "LogisticRegressionOutput",
         [("data", x), ("label", _rand(7, (3, 4), 0, 1))], {"grad_scale": 2.0})
    case("logreg_col", "LogisticRegressionOutput",
         [("data", _rand(8, (5, 1))), ("label", np.array([0, 1, 1, 0, 1], "float32"))])
    lab = _rand(9, (3, 4))
    lab[0, 1], lab[2, 3] = x[0, 1], x[2, 3]        # equal values: MXNet's sign gives -1
    case("mae", "MAERegressionOutput", [("data", x), ("label", lab)], {"grad_scale": 1.5})
    d = _rand(10, (4, 5))
    case("svm_l2", "SVMOutput", [("data", d), ("label", np.array([0, 3, 4, 1], "float32"))])
    case("svm_l1", "SVMOutput", [("data", d), ("label", np.array([2, 2, 0, 4], "float32"))],
         {"margin": 0.5, "regularization_coefficient": 0.3, "use_linear": True})
    case("svm_l2_opts", "SVMOutput",
         [("data", d * 2), ("label", np.array([1, 0, 4, 3], "float32"))],
         {"margin": 2.0, "regularization_coefficient": 0.7})
    case("svm_3d", "SVMOutput",
         [("data", _rand(11, (2, 3, 4))), ("label", np.array([[0, 1, 3], [2, 2, 0]], "float32"))])
    case("svm_label_outside", "SVMOutput",
         [("data", d), ("label", np.array([7, -1, 4, 1.7], "float32"))])
    case("kl_sparse_reg", "IdentityAttachKLSparseReg",
         [("data", _rand(12, (5, 3), 0.05, 0.95)),
          ("moving_avg", np.array([0.3, 0.1, 0.6], "float32"))],
         {"sparseness_target": 0.2, "penalty": 0.01, "momentum": 0.8}, grad=["data"], nd=False)
    case("kl_sparse_reg_default", "IdentityAttachKLSparseReg",
         [("data", _rand(13, (4, 2), 0.05, 0.95)),
          ("moving_avg", np.array([0.5, 0.2], "float32"))], grad=["data"], nd=False)


# ---------------------------------------------------------------- spatial operators
def _spatial_cases():
    x = _rand(20, (2, 3, 6, 7))
    case("crop_hw", "Crop", [("data", x)], {"h_w": (3, 4), "offset": (1, 2), "num_args": 1})
    case("crop_center", "Crop", [("data", x)], {"h_w": (4, 3), "center_crop": True,
                                                "num_args": 1})
    case("crop_like", "Crop", [("data", x), ("like", _rand(21, (1, 1, 3, 5)))],
         {"offset": (2, 1), "num_args": 2})
    case("crop_like_center", "Crop", [("data", x), ("like", _rand(22, (2, 3, 5, 2)))],
         {"center_crop": True, "num_args": 2})
    case("im2col_2d", "im2col", [("data", x)],
         {"kernel": (3, 2), "stride": (2, 1), "dilate": (1, 2), "pad": (1, 0)})
    case("im2col_2d_default", "im2col", [("data", _rand(23, (1, 2, 4, 4)))], {"kernel": (2, 2)})
    # (MXNet 1.9.1's 1-D and 3-D im2col/col2im fail (a 4th axis read from 3-D data, a shape
    # check on 5-D data): 2-D cases only; tests/test_extra_ops.py checks 1-D and 3-D)
    case("col2im_2d", "col2im", [("data", _rand(26, (2, 3 * 6, 3 * 5)))],
         {"output_size": (6, 7), "kernel": (3, 2), "stride": (2, 1), "dilate": (1, 2),
          "pad": (1, 0)})
    case("grid_affine", "GridGenerator", [("data", _rand(29, (2, 6)))],
         {"transform_type": "affine", "target_shape": (3, 4)})
    case("grid_warp", "GridGenerator", [("data", _rand(30, (2, 2, 3, 4)))],
         {"transform_type": "warp"})
    g = _rand(31, (2, 2, 4, 7), -1.3, 1.3)
    g[0, :, 0, 0] = [1.0, 1.0]
    g[0, :, 0, 1] = [-1.0, -1.0]
    g[0, :, 0, 2] = [0.2, 1.0]
    g[1, :, 1, 1] = [0.0, 0.0]
    case("bilinear_sampler", "BilinearSampler", [("data", _rand(32, (2, 3, 5, 6))),
                                                 ("grid", g)])
    loc = (np.array([[0.8, 0.1, 0.05, -0.1, 0.9, 0.1]] * 2) +
           _rand(33, (2, 6)) * 0.1).astype("float32")
    case("spatial_transformer", "SpatialTransformer",
         [("data", _rand(34, (2, 3, 5, 6))), ("loc", loc)],
         {"target_shape": (4, 5), "transform_type": "affine", "sampler_type": "bilinear"})
    zoom = np.array([[1.4, 0.2, -0.1, -0.3, 1.2, 0.2], [0.5, 0.0, 0.3, 0.0, 0.5, -0.2]],
                    "float32")
    case("spatial_transformer_zoom", "SpatialTransformer",
         [("data", _rand(35, (2, 2, 4, 5))), ("loc", zoom)],
         {"target_shape": (6, 3), "transform_type": "affine", "sampler_type": "bilinear"})
    a, b = _rand(36, (1, 3, 5, 6)), _rand(37, (1, 3, 5, 6))
    case("correlation", "Correlation", [("data1", a), ("data2", b)])
    case("correlation_pad", "Correlation", [("data1", a), ("data2", b)],
         {"kernel_size": 3, "max_displacement": 2, "pad_size": 2})
    a2, b2 = _rand(38, (2, 2, 9, 8)), _rand(39, (2, 2, 9, 8))
    case("correlation_strides", "Correlation", [("data1", a2), ("data2", b2)],
         {"kernel_size": 1, "max_displacement": 4, "stride1": 2, "stride2": 2, "pad_size": 4})
    case("correlation_sub", "Correlation", [("data1", a), ("data2", b)],
         {"kernel_size": 3, "max_displacement": 1, "pad_size": 1, "is_multiply": False})
    case("correlation_sub_same", "Correlation", [("data1", a), ("data2", a.copy())],
         {"kernel_size": 1, "max_displacement": 1, "pad_size": 1, "is_multiply": False})
    case("correlation_k3_s2", "Correlation", [("data1", a2), ("data2", b2)],
         {"kernel_size": 3, "max_displacement": 2, "stride1": 2, "stride2": 1, "pad_size": 1})


# ---------------------------------------------------------------- legacy v1 operators
def _v1_cases():
    x = _rand(40, (2, 4, 7, 6))
    case("conv_v1", "Convolution_v1",
         [("data", x), ("weight", _rand(41, (5, 4, 3, 3)) * 0.3), ("bias", _rand(42, (5,)))],
         {"kernel": (3, 3), "num_filter": 5, "stride": (2, 1), "pad": (1, 2), "dilate": (1, 2)},
         rtol=1e-4)
    case("conv_v1_group_nobias", "Convolution_v1",
         [("data", x), ("weight", _rand(43, (6, 2, 2, 3)) * 0.3)],
         {"kernel": (2, 3), "num_filter": 6, "num_group": 2, "no_bias": True}, rtol=1e-4)
    # (MXNet 1.9.1's CPU Convolution_v1 has no 3-D kernel: 'Volume convolution is not
    # implmented in mshadow'; neogluon computes it as Convolution)
    neg = -np.abs(_rand(47, (2, 3, 7, 8))) - 0.1      # all negative: zero padding wins max
    relu = np.maximum(_rand(48, (2, 3, 7, 8)), 0)     # many tied zeros
    for tag, data in (("neg", neg), ("relu", relu), ("rand", _rand(49, (2, 3, 7, 8)))):
        case(f"pool_v1_max_{tag}", "Pooling_v1", [("data", data)],
             {"kernel": (3, 3), "stride": (2, 2), "pool_type": "max"})
        case(f"pool_v1_max_pad_{tag}", "Pooling_v1", [("data", data)],
             {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": "max"})
        case(f"pool_v1_max_full_{tag}", "Pooling_v1", [("data", data)],
             {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": "max",
              "pooling_convention": "full"})
    r = _rand(50, (2, 3, 7, 8))
    case("pool_v1_avg_full", "Pooling_v1", [("data", r)],
         {"kernel": (3, 3), "stride": (2, 2), "pool_type": "avg", "pooling_convention": "full"})
    case("pool_v1_avg_pad", "Pooling_v1", [("data", r)],
         {"kernel": (3, 2), "stride": (2, 1), "pad": (1, 1), "pool_type": "avg"})
    case("pool_v1_sum_full", "Pooling_v1", [("data", r)],
         {"kernel": (3, 3), "stride": (2, 3), "pad": (1, 1), "pool_type": "sum",
          "pooling_convention": "full"})
    case("pool_v1_global_avg", "Pooling_v1", [("data", r)],
         {"kernel": (3, 3), "global_pool": True, "pool_type": "avg"})
    case("pool_v1_global_max", "Pooling_v1", [("data", relu)],
         {"kernel": (1, 1), "global_pool": True, "pool_type": "max"})
    case("pool_v1_default", "Pooling_v1", [("data", r)], {"kernel": (2, 2)})


# ---------------------------------------------------------------- nd.RNN
_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def rnn_param_size(mode, layers, dirs, inp, hid, proj=None):
    g = _GATES[mode]
    size, width = 0, inp
    for _ in range(layers):
        per = g * hid * width + g * hid * (proj or hid) + 2 * g * hid + (proj * hid if proj else 0)
        size += dirs * per
        width = (proj or hid) * dirs
    return size


def _rnn_case(name, mode, layers=1, bidir=False, proj=None, seq=None, state_outputs=True,
              seed=60, train=True):
    T, N, I, H = 5, 3, 4, 6
    dirs = 2 if bidir else 1
    ins = [("data", _rand(seed, (T, N, I))),
           ("parameters", _rand(seed + 1, (rnn_param_size(mode, layers, dirs, I, H, proj),)) *
            0.4),
           ("state", _rand(seed + 2, (layers * dirs, N, proj or H)) * 0.5)]
    if mode == "lstm":
        ins.append(("state_cell", _rand(seed + 3, (layers * dirs, N, H)) * 0.5))
    kw = {"state_size": H, "num_layers": layers, "mode": mode, "bidirectional": bidir,
          "state_outputs": state_outputs}
    if proj:
        kw["projection_size"] = proj
    if seq is not None:
        ins.append(("sequence_length", np.array(seq, "float32")))
        kw["use_sequence_length"] = True
    grad = [n for n, _ in ins if n != "sequence_length"]
    case(name, "RNN", ins, kw, grad=grad, rtol=1e-4, train=train)


def _rnn_cases():
    _rnn_case("rnn_lstm", "lstm")
    _rnn_case("rnn_lstm_2layer_bidir", "lstm", layers=2, bidir=True)
    _rnn_case("rnn_gru", "gru", state_outputs=False)
    _rnn_case("rnn_gru_2layer_bidir", "gru", layers=2, bidir=True)
    _rnn_case("rnn_tanh", "rnn_tanh")
    _rnn_case("rnn_relu_bidir", "rnn_relu", bidir=True, layers=2)
    # (MXNet 1.9.1 has no CPU training of LSTMs with a projection: predict mode only)
    _rnn_case("rnn_lstm_proj", "lstm", proj=3, train=False)
    _rnn_case("rnn_lstm_proj_bidir_2layer", "lstm", layers=2, bidir=True, proj=4, train=False)
    _rnn_case("rnn_lstm_seqlen", "lstm", seq=[3, 5, 1])
    _rnn_case("rnn_gru_seqlen_bidir", "gru", bidir=True, seq=[2, 5, 4])
    _rnn_case("rnn_tanh_seqlen_2layer", "rnn_tanh", layers=2, seq=[5, 1, 3])


# ---------------------------------------------------------------- contrib
def _contrib_cases():
    case("index_array", "contrib.index_array", [("data", _rand(70, (3, 2)))], grad=[])
    case("index_array_axes", "contrib.index_array", [("data", _rand(71, (3, 2, 4)))],
         {"axes": (1, -3)}, grad=[])
    x = _rand(72, (3, 4))
    case("quadratic", "contrib.quadratic", [("data", x)], {"a": 1.5, "b": -2.0, "c": 0.5})
    case("quadratic_default", "contrib.quadratic", [("data", x)])
    y = x + np.float32(1e-6) * x
    case("allclose_true", "contrib.allclose", [("a", x), ("b", y)], grad=[])
    case("allclose_false", "contrib.allclose", [("a", x), ("b", y)],
         {"rtol": 1e-8, "atol": 1e-9}, grad=[])
    nan = np.array([np.nan, 1.0, 2.0], "float32")
    case("allclose_nan", "contrib.allclose", [("a", nan), ("b", nan.copy())], grad=[])
    case("allclose_nan_unequal", "contrib.allclose", [("a", nan), ("b", nan.copy())],
         {"equal_nan": False}, grad=[])
    halves = np.array([[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5], [2.7, -0.3, 0.0, -3.49, 0.49999997,
                                                            -7.0]], "float32")
    case("round_ste", "contrib.round_ste", [("data", halves)])
    case("sign_ste", "contrib.sign_ste", [("data", halves)])
    case("gradientmultiplier", "contrib.gradientmultiplier", [("data", x)], {"scalar": -0.5})
    case("gradientmultiplier_int", "contrib.gradientmultiplier", [("data", x)],
         {"scalar": 3, "is_int": True})
    data = _rand(73, (2, 2 * 3 * 3, 7, 8))
    rois = np.array([[0, 0, 0, 4, 4], [1, 1.4, 2.6, 6.5, 5.2], [0, -3, 2, 20, 30],
                     [1, 5, 5, 5, 5], [0, 3.5, 0.5, 9.49, 4.5]], "float32")
    case("psroi", "contrib.PSROIPooling", [("data", data), ("rois", rois)],
         {"spatial_scale": 1.0, "output_dim": 2, "pooled_size": 3}, grad=["data"])
    rois2 = rois.copy()
    rois2[:, 1:] *= 2                              # image coordinates; batch indices stay
    case("psroi_scale", "contrib.PSROIPooling", [("data", data), ("rois", rois2)],
         {"spatial_scale": 0.5, "output_dim": 2, "pooled_size": 3, "group_size": 3},
         grad=["data"])
    case("psroi_group", "contrib.PSROIPooling",
         [("data", _rand(74, (2, 3 * 2 * 2, 6, 6))), ("rois", rois)],
         {"spatial_scale": 0.8, "output_dim": 3, "pooled_size": 4, "group_size": 2},
         grad=["data"])
    case("dpsroi_notrans", "contrib.DeformablePSROIPooling", [("data", data), ("rois", rois)],
         {"spatial_scale": 1.0, "output_dim": 2, "group_size": 3, "pooled_size": 3,
          "no_trans": True}, grad=["data"])
    trans = _rand(75, (5, 4, 2, 2)) * 0.5
    case("dpsroi_trans", "contrib.DeformablePSROIPooling",
         [("data", data), ("rois", rois), ("trans", trans)],
         {"spatial_scale": 0.9, "output_dim": 2, "group_size": 3, "pooled_size": 3,
          "part_size": 2, "sample_per_part": 2, "trans_std": 0.1}, grad=["data", "trans"],
         rtol=1e-4)
    case("dpsroi_trans_1class", "contrib.DeformablePSROIPooling",
         [("data", data), ("rois", rois), ("trans", _rand(76, (5, 2, 3, 3)) * 0.5)],
         {"spatial_scale": 1.0, "output_dim": 2, "group_size": 3, "pooled_size": 3,
          "sample_per_part": 3, "trans_std": 0.2}, grad=["data", "trans"], rtol=1e-4)
    N, T, K = 3, 5, 2
    lags = _rand(77, (N, T), 0.1, 1.5)
    marks = np.array([[0, 1, 1, 0, 1], [1, 1, 0, 0, 0], [0, 0, 0, 1, 1]], "int32")
    case("hawkesll", "contrib.hawkesll",
         [("lda", _rand(78, (N, K), 0.5, 2.0)), ("alpha", np.array([0.3, 0.6], "float32")),
          ("beta", np.array([1.5, 0.7], "float32")), ("state", _rand(79, (N, K), 0, 0.5)),
          ("lags", lags), ("marks", marks), ("valid_length", np.array([5, 3, 0], "float32")),
          ("max_time", lags.sum(1) + 0.5)], grad=["lda", "alpha", "beta"])
    lags2 = np.array([[6, 7, 8, 9], [1, 2, 3, 4], [3, 4, 5, 6], [8, 9, 10, 11]], "float32")
    case("hawkesll_doc", "contrib.hawkesll",
         [("lda", np.tile(np.array([1.5, 2.0, 3.0], "float32"), (4, 1))),
          ("alpha", np.array([0.2, 0.3, 0.4], "float32")),
          ("beta", np.array([1.0, 2.0, 3.0], "float32")), ("state", np.zeros((4, 3), "float32")),
          ("lags", lags2), ("marks", np.zeros((4, 4), "int32")),
          ("valid_length", np.array([1, 2, 3, 4], "float32")),
          ("max_time", np.ones(4, "float32") * 100)], grad=["lda", "alpha", "beta"])


_loss_cases()
_spatial_cases()
_v1_cases()
_rnn_cases()
_contrib_cases()
BY_NAME = {c["name"]: c for c in CASES}


def _ns(mx, op):
    target = mx.nd
    for part in op.split("."):
        target = getattr(target, part)
    return target


def heads_for(shapes):
    return [_rand(900 + i, s) for i, s in enumerate(shapes)]


def run_nd(mx, c, heads=None):
    """Call the operator imperatively under autograd; returns (outputs, heads, grads)."""
    arrays = {n: mx.nd.array(a, dtype=a.dtype) for n, a in c["inputs"]}
    for n in c["grad"]:
        arrays[n].attach_grad()
    call = [arrays[n] for n, _ in c["inputs"]]
    if c.get("train", True):
        with mx.autograd.record():
            res = _ns(mx, c["op"])(*call, **c["kwargs"])
    else:
        res = _ns(mx, c["op"])(*call, **c["kwargs"])
    outs = list(res) if isinstance(res, (list, tuple)) else [res]
    if heads is None:
        heads = heads_for([o.shape for o in outs])
    float_outs = [(o, h) for o, h in zip(outs, heads) if np.dtype(o.dtype).kind == "f"]
    if c["grad"] and float_outs:
        mx.autograd.backward([o for o, _ in float_outs], [mx.nd.array(h) for _, h in float_outs])
    grads = {n: arrays[n].grad.asnumpy() for n in c["grad"]}
    return [o.asnumpy() for o in outs], heads, grads


# Bad calls each implementation must refuse: (name, op, input shapes, kwargs).
ERRORS = [
    ("linreg_label_shape", "LinearRegressionOutput", [(4, 6), (6, 4)], {}),
    ("linreg_label_size", "LinearRegressionOutput", [(4, 6), (4, 3)], {}),
    ("svm_label_shape", "SVMOutput", [(2, 3), (3,)], {}),
    ("crop_too_big", "Crop", [(1, 2, 4, 4)], {"h_w": (5, 2), "num_args": 1}),
    ("crop_offset", "Crop", [(1, 2, 4, 4)], {"h_w": (2, 2), "offset": (3, 0), "num_args": 1}),
    ("crop_3d", "Crop", [(2, 4, 4)], {"h_w": (2, 2), "num_args": 1}),
    ("im2col_rank", "im2col", [(2, 3, 4)], {"kernel": (2, 2)}),
    ("col2im_blocks", "col2im", [(1, 8, 5)], {"output_size": (4, 4), "kernel": (2, 2)}),
    ("grid_affine_shape", "GridGenerator", [(2, 5)], {"transform_type": "affine",
                                                      "target_shape": (3, 3)}),
    ("grid_bad_type", "GridGenerator", [(2, 6)], {"transform_type": "perspective",
                                                  "target_shape": (3, 3)}),
    ("sampler_grid", "BilinearSampler", [(1, 2, 4, 4), (1, 3, 4, 4)], {}),
    ("correlation_even_kernel", "Correlation", [(1, 2, 5, 5), (1, 2, 5, 5)],
     {"kernel_size": 2}),
    ("correlation_shapes", "Correlation", [(1, 2, 5, 5), (1, 3, 5, 5)], {}),
    ("pool_v1_3d", "Pooling_v1", [(1, 1, 4, 4, 4)], {"kernel": (2, 2, 2)}),
    ("pool_v1_type", "Pooling_v1", [(1, 1, 4, 4)], {"kernel": (2, 2), "pool_type": "lp"}),
    ("rnn_mode", "RNN", [(3, 2, 4), (10,), (1, 2, 5)], {"state_size": 5, "num_layers": 1,
                                                        "mode": "lstmx"}),
    ("rnn_param_size", "RNN", [(3, 2, 4), (10,), (1, 2, 5)], {"state_size": 5,
                                                              "num_layers": 1,
                                                              "mode": "gru"}),
    ("psroi_channels", "contrib.PSROIPooling", [(1, 7, 5, 5), (2, 5)],
     {"spatial_scale": 1.0, "output_dim": 2, "pooled_size": 2}),
    # a roi's batch index (1 for rois of ones) outside a batch of 1: MXNet reads and, in
    # backward, writes outside the data (garbage, heap corruption); neogluon refuses
    ("psroi_batch_index", "contrib.PSROIPooling", [(1, 8, 5, 5), (2, 5)],
     {"spatial_scale": 1.0, "output_dim": 2, "pooled_size": 2}),
    ("dpsroi_batch_index", "contrib.DeformablePSROIPooling", [(1, 8, 5, 5), (2, 5)],
     {"spatial_scale": 1.0, "output_dim": 2, "group_size": 2, "pooled_size": 2,
      "no_trans": True}),
    ("allclose_shapes", "contrib.allclose", [(2, 3), (3,)], {}),
]
