"""Generate the ndarray/autograd fixtures from real MXNet 1.9.1.

Run with the oracle interpreter:

    /tmp/mxref/bin/python tools/gen_nd_fixtures.py            # write tests/fixtures/nd/*
    /tmp/mxref/bin/python tools/gen_nd_fixtures.py --verify-neogluon-file F.params
        # load a file written by neogluon's nd.save in MXNet and record what MXNet sees

Op cases are data: each names an ``mx.nd`` operator, its positional inputs (arrays drawn here
with a fixed seed), keyword arguments, which inputs get gradients and whether it runs in
training mode. MXNet runs each case under ``autograd.record``, back-propagates a fixed random
head gradient and the generator stores inputs, outputs, gradients and the inputs' values after
the call (for in-place updates such as BatchNorm's moving statistics). Cases where MXNet
raises record the error instead. tests/test_ndarray_ops.py replays every case in neogluon.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "nd")
sys.path.insert(0, HERE)

rng = np.random.RandomState(1234)


def R(*shape, low=None, high=None, dtype="float32"):
    if low is not None:
        return rng.uniform(low, high, size=shape).astype(dtype)
    return rng.randn(*shape).astype(dtype)


def I(*shape, high=5, dtype="float32"):  # noqa: E743 - integer-valued data
    return rng.randint(0, high, size=shape).astype(dtype)


CASES = []


def case(name, op, inputs, kwargs=None, grad=(), train=True, tol=None, record=True,
         head_all=False, backward_train=True, compare=None):
    """One op case; ``inputs`` is a list of numpy arrays (or None for an absent input)."""
    CASES.append(dict(name=name, op=op, inputs=inputs, kwargs=kwargs or {}, grad=list(grad),
                      train=train, tol=tol, record=record, head_all=head_all,
                      backward_train=backward_train, compare=compare))


# ----------------------------------------------------------------------------- nn ops
def nn_cases():
    x4 = R(2, 3, 6, 6)
    case("conv2d", "Convolution", [x4, R(4, 3, 3, 3), R(4)],
         dict(kernel=(3, 3), num_filter=4), grad=(0, 1, 2))
    case("conv2d_stride_pad_dilate", "Convolution", [x4, R(4, 3, 3, 2), R(4)],
         dict(kernel=(3, 2), stride=(2, 1), pad=(1, 2), dilate=(2, 1), num_filter=4),
         grad=(0, 1, 2))
    case("conv2d_group_nobias", "Convolution", [R(2, 4, 5, 5), R(6, 2, 3, 3)],
         dict(kernel=(3, 3), num_filter=6, num_group=2, no_bias=True), grad=(0, 1))
    case("conv1d", "Convolution", [R(2, 3, 9), R(5, 3, 3), R(5)],
         dict(kernel=(3,), stride=(2,), pad=(1,), num_filter=5, layout="NCW"), grad=(0, 1, 2))
    case("conv3d", "Convolution", [R(1, 2, 4, 5, 5), R(3, 2, 2, 3, 3), R(3)],
         dict(kernel=(2, 3, 3), pad=(0, 1, 1), num_filter=3), grad=(0, 1, 2))
    case("conv2d_bad_weight", "Convolution", [x4, R(4, 2, 3, 3)],
         dict(kernel=(3, 3), num_filter=4, no_bias=True))
    case("deconv2d", "Deconvolution", [R(2, 3, 4, 4), R(3, 2, 3, 3)],
         dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), adj=(1, 1), num_filter=2),
         grad=(0, 1))
    case("deconv2d_bias", "Deconvolution", [R(1, 2, 3, 3), R(2, 4, 2, 2), R(4)],
         dict(kernel=(2, 2), stride=(2, 2), num_filter=4, no_bias=False), grad=(0, 1, 2))
    case("deconv2d_target", "Deconvolution", [R(1, 2, 3, 3), R(2, 4, 3, 3)],
         dict(kernel=(3, 3), stride=(2, 2), num_filter=4, target_shape=(7, 7)), grad=(0, 1))
    case("deconv2d_group", "Deconvolution", [R(1, 4, 3, 3), R(4, 3, 3, 3)],
         dict(kernel=(3, 3), num_filter=6, num_group=2), grad=(0, 1))
    case("deconv1d", "Deconvolution", [R(2, 3, 5), R(3, 2, 4)],
         dict(kernel=(4,), stride=(2,), pad=(1,), num_filter=2), grad=(0, 1))
    p = R(2, 2, 7, 7)
    for pt in ("max", "avg", "sum"):
        for conv in ("valid", "full"):
            for pad in ((0, 0), (1, 1)):
                case(f"pool_{pt}_{conv}_{pad[0]}", "Pooling", [p],
                     dict(kernel=(3, 3), stride=(2, 2), pad=pad, pool_type=pt,
                          pooling_convention=conv), grad=(0,))
    case("pool_avg_full_edge", "Pooling", [R(1, 1, 5, 5)],
         dict(kernel=(2, 2), stride=(2, 2), pad=(1, 1), pool_type="avg",
              pooling_convention="full"), grad=(0,))
    case("pool_avg_nopad_count", "Pooling", [p],
         dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
              count_include_pad=False), grad=(0,))
    case("pool_avg_bigpad", "Pooling", [p],
         dict(kernel=(2, 2), stride=(1, 1), pad=(2, 2), pool_type="avg"), grad=(0,))
    case("pool_lp2", "Pooling", [p], dict(kernel=(2, 2), stride=(2, 2), pool_type="lp",
                                          p_value=2), grad=(0,))
    case("pool_lp1", "Pooling", [p], dict(kernel=(2, 2), stride=(2, 2), pool_type="lp",
                                          p_value=1), grad=(0,))
    for pt in ("max", "avg", "sum"):
        case(f"pool_global_{pt}", "Pooling", [p], dict(kernel=(1, 1), pool_type=pt,
                                                        global_pool=True), grad=(0,))
    case("pool1d_max", "Pooling", [R(2, 3, 9)], dict(kernel=(3,), stride=(2,), pad=(1,)),
         grad=(0,))
    case("pool1d_avg_full", "Pooling", [R(2, 3, 8)],
         dict(kernel=(3,), stride=(2,), pool_type="avg", pooling_convention="full"), grad=(0,))
    case("pool3d_max", "Pooling", [R(1, 2, 4, 5, 5)],
         dict(kernel=(2, 2, 2), stride=(2, 2, 2), pool_type="max"), grad=(0,))
    case("pool3d_avg", "Pooling", [R(1, 2, 4, 5, 5)],
         dict(kernel=(2, 3, 3), stride=(1, 2, 2), pad=(1, 1, 1), pool_type="avg"), grad=(0,))
    xa = R(3, 4, 5)
    for act in ("leaky", "elu", "gelu"):
        case(f"leakyrelu_{act}", "LeakyReLU", [xa], dict(act_type=act, slope=0.3), grad=(0,))
    # MXNet 1.9.1's selu gradient is not the derivative of its output for x < 0 (checked by
    # hand); neogluon keeps the analytic gradient, so only the forward is compared.
    case("leakyrelu_selu", "LeakyReLU", [xa], dict(act_type="selu"))
    case("leakyrelu_prelu", "LeakyReLU", [xa, R(4, low=0.05, high=0.5)],
         dict(act_type="prelu"), grad=(0, 1))
    case("leakyrelu_prelu_scalar", "LeakyReLU", [xa, np.array([0.2], np.float32)],
         dict(act_type="prelu"), grad=(0, 1))
    # MXNet returns [out, mask]; in predict mode its mask is uninitialised memory.
    case("leakyrelu_rrelu_predict", "LeakyReLU", [xa], dict(act_type="rrelu"), train=False,
         record=False, compare=1)
    for act in ("relu", "sigmoid", "tanh", "softrelu", "softsign", "log_sigmoid", "mish"):
        case(f"activation_{act}", "Activation", [xa], dict(act_type=act), grad=(0,))
    case("fc", "FullyConnected", [R(4, 3, 2), R(5, 6), R(5)], dict(num_hidden=5),
         grad=(0, 1, 2))
    case("fc_noflatten", "FullyConnected", [R(4, 3, 2), R(5, 2), R(5)],
         dict(num_hidden=5, flatten=False), grad=(0, 1, 2))
    case("fc_nobias", "FullyConnected", [R(4, 6), R(5, 6)], dict(num_hidden=5, no_bias=True),
         grad=(0, 1))
    xb = R(4, 3, 2, 2)
    bn_in = lambda: [xb, R(3, low=0.5, high=1.5), R(3), R(3), R(3, low=0.5, high=1.5)]  # noqa
    case("bn_train", "BatchNorm", bn_in(), dict(fix_gamma=False, momentum=0.8), grad=(0, 1, 2))
    case("bn_train_fixgamma", "BatchNorm", bn_in(), dict(fix_gamma=True), grad=(0, 1, 2))
    # MXNet's backward(train_mode=True) after a predict-mode forward mixes the batch formula
    # with moving statistics; with train_mode=False it is the plain affine gradient.
    case("bn_predict", "BatchNorm", bn_in(), dict(fix_gamma=False), grad=(0, 1, 2),
         train=False, backward_train=False)
    case("bn_global_stats", "BatchNorm", bn_in(), dict(fix_gamma=False, use_global_stats=True),
         grad=(0, 1, 2))
    case("bn_axis_last", "BatchNorm", [R(4, 2, 3), R(3, low=0.5, high=1.5), R(3), R(3),
                                       R(3, low=0.5, high=1.5)],
         dict(fix_gamma=False, axis=-1, eps=1e-5), grad=(0, 1, 2))
    case("bn_output_mean_var", "BatchNorm", bn_in(), dict(fix_gamma=False,
                                                          output_mean_var=True), grad=(0,))
    case("bn_2d", "BatchNorm", [R(5, 3), R(3, low=0.5, high=1.5), R(3), R(3),
                                R(3, low=0.5, high=1.5)], dict(fix_gamma=False), grad=(0, 1, 2))
    case("layernorm", "LayerNorm", [R(3, 4, 5), R(5), R(5)], {}, grad=(0, 1, 2))
    case("layernorm_axis1", "LayerNorm", [R(3, 4, 5), R(4), R(4)], dict(axis=1, eps=1e-3),
         grad=(0, 1, 2))
    case("layernorm_mean_var", "LayerNorm", [R(3, 4, 5), R(5), R(5)],
         dict(output_mean_var=True), grad=(0,))
    case("instancenorm", "InstanceNorm", [R(2, 3, 4, 4), R(3), R(3)], {}, grad=(0, 1, 2))
    case("groupnorm", "GroupNorm", [R(2, 6, 3, 3), R(3), R(3)], dict(num_groups=3),
         grad=(0, 1, 2))
    case("groupnorm_mean_var", "GroupNorm", [R(2, 4, 5), R(2), R(2)],
         dict(num_groups=2, output_mean_var=True), grad=(0,))
    case("dropout_predict", "Dropout", [xa], dict(p=0.5), train=False, grad=(0,))
    case("embedding", "Embedding", [np.array([[0, 2, 9], [1.7, -1, 3]], np.float32), R(5, 3)],
         dict(input_dim=5, output_dim=3), grad=(1,))
    case("softmax_ce", "softmax_cross_entropy", [R(4, 5), I(4, high=5)], {}, grad=(0,))
    case("seqmask_axis0", "SequenceMask", [R(4, 3, 2), np.array([1, 4, 2], np.float32)],
         dict(use_sequence_length=True, value=-1.0), grad=(0,))
    case("seqmask_axis1", "SequenceMask", [R(3, 4, 2), np.array([1, 4, 2], np.float32)],
         dict(use_sequence_length=True, axis=1), grad=(0,))
    case("seqmask_nolen", "SequenceMask", [R(3, 4)], {}, grad=(0,))
    case("seqlast", "SequenceLast", [R(4, 3, 2), np.array([1, 4, 2], np.float32)],
         dict(use_sequence_length=True), grad=(0,))
    case("seqlast_axis1", "SequenceLast", [R(3, 4, 2), np.array([1, 4, 2], np.float32)],
         dict(use_sequence_length=True, axis=1), grad=(0,))
    case("seqreverse", "SequenceReverse", [R(4, 3, 2), np.array([1, 4, 2], np.float32)],
         dict(use_sequence_length=True), grad=(0,))
    case("l2norm_instance", "L2Normalization", [R(2, 3, 4)], {}, grad=(0,))
    case("l2norm_channel", "L2Normalization", [R(2, 3, 4)], dict(mode="channel"), grad=(0,))
    case("l2norm_spatial", "L2Normalization", [R(2, 3, 2, 2)], dict(mode="spatial"), grad=(0,))
    case("smooth_l1", "smooth_l1", [R(3, 4) * 2], dict(scalar=1.5), grad=(0,))
    case("pad_constant", "Pad", [R(1, 2, 3, 3)],
         dict(mode="constant", pad_width=(0, 0, 0, 0, 1, 2, 2, 1), constant_value=0.5),
         grad=(0,))
    case("pad_edge", "Pad", [R(1, 2, 3, 3)], dict(mode="edge", pad_width=(0, 0, 0, 0, 1, 1, 2, 2)),
         grad=(0,))
    case("pad_reflect", "Pad", [R(1, 2, 3, 3)],
         dict(mode="reflect", pad_width=(0, 0, 0, 0, 2, 1, 1, 2)), grad=(0,))
    case("upsampling", "UpSampling", [R(1, 2, 2, 3)], dict(scale=2, sample_type="nearest"),
         grad=(0,))
    case("lrn", "LRN", [R(2, 6, 3, 3)], dict(nsize=3), grad=(0,))
    # MXNet's backward of 3-D 'instance' SoftmaxActivation does not match its forward (a
    # softmax over the last axis); neogluon differentiates the forward it computes.
    case("softmax_activation", "SoftmaxActivation", [R(2, 3, 4)], {})
    case("softmax_activation_channel", "SoftmaxActivation", [R(2, 3, 4)], dict(mode="channel"),
         grad=(0,))
    case("softmax_output", "SoftmaxOutput", [R(4, 5), np.array([1, 0, 4, 2], np.float32)], {},
         grad=(0,))
    case("softmax_output_batch_norm", "SoftmaxOutput", [R(4, 5), np.array([1, 0, 4, 2],
                                                                          np.float32)],
         dict(normalization="batch", grad_scale=2.0), grad=(0,))
    case("softmax_output_ignore", "SoftmaxOutput", [R(4, 5), np.array([1, -1, 4, -1],
                                                                      np.float32)],
         dict(use_ignore=True, ignore_label=-1, normalization="valid"), grad=(0,))
    case("softmax_output_multi", "SoftmaxOutput", [R(2, 3, 4), np.array([[0, 1, 2, 0],
                                                                          [2, 2, 1, 0]],
                                                                         np.float32)],
         dict(multi_output=True), grad=(0,))
    case("make_loss", "MakeLoss", [R(3, 4)], dict(grad_scale=0.5), grad=(0,))
    case("make_loss_batch", "MakeLoss", [R(3, 4)], dict(normalization="batch"), grad=(0,))
    case("ctc_loss", "CTCLoss", [R(6, 2, 4), np.array([[1, 2, 0], [3, 3, 1]], np.float32)], {},
         grad=(0,))


def op_cases():
    """Forward and gradient of the general operators."""
    x = R(3, 4)
    y = R(3, 4)
    pos = R(3, 4, low=0.5, high=2.0)
    for op in ["sqrt", "rsqrt", "log", "log2", "log10", "log1p", "reciprocal", "gammaln",
               "cbrt"]:
        case(f"grad_{op}", op, [pos], grad=(0,))
    for op in ["square", "exp", "expm1", "relu", "sigmoid", "tanh", "sin", "cos", "arctan",
               "sinh", "cosh", "arcsinh", "softsign", "erf", "abs", "negative", "sign",
               "floor", "round"]:
        case(f"grad_{op}", op, [x], grad=(0,))
    for op in ["broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
               "broadcast_maximum", "broadcast_minimum", "broadcast_hypot"]:
        case(f"grad_{op}", op, [R(3, 1), R(1, 4)], grad=(0, 1))
    case("grad_broadcast_power", "broadcast_power", [R(3, 1, low=0.5, high=2), R(1, 4)],
         grad=(0, 1))
    for op in ["elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "maximum",
               "minimum"]:
        case(f"grad_{op}", op, [x, y], grad=(0, 1))
    case("grad_clip", "clip", [x], dict(a_min=-0.5, a_max=0.5), grad=(0,))
    x3 = R(2, 3, 4)
    for op in ["sum", "mean", "max", "min", "prod", "nansum"]:
        case(f"grad_{op}_all", op, [x3], grad=(0,))
        case(f"grad_{op}_axis", op, [x3], dict(axis=1), grad=(0,))
        case(f"grad_{op}_exclude", op, [x3], dict(axis=(0, 2), exclude=True, keepdims=True),
             grad=(0,))
    case("grad_norm", "norm", [x3], grad=(0,))
    case("grad_norm_axis", "norm", [x3], dict(axis=2, ord=1), grad=(0,))
    case("grad_norm_l2_axis", "norm", [x3], dict(axis=(1, 2), keepdims=True), grad=(0,))
    case("grad_softmax", "softmax", [x3], grad=(0,))
    case("grad_softmax_axis_temp", "softmax", [x3], dict(axis=1, temperature=2.0), grad=(0,))
    case("grad_log_softmax", "log_softmax", [x3], dict(axis=0), grad=(0,))
    case("grad_softmin", "softmin", [x3], grad=(0,))
    case("grad_dot", "dot", [R(3, 4), R(4, 5)], grad=(0, 1))
    case("grad_dot_t", "dot", [R(4, 3), R(5, 4)], dict(transpose_a=True, transpose_b=True),
         grad=(0, 1))
    case("grad_dot_nd", "dot", [R(2, 3, 4), R(4, 5)], grad=(0, 1))
    case("grad_dot_1d", "dot", [R(4), R(4)], grad=(0, 1))
    case("grad_batch_dot", "batch_dot", [R(2, 3, 4), R(2, 4, 5)], grad=(0, 1))
    case("grad_batch_dot_t", "batch_dot", [R(2, 4, 3), R(2, 5, 4)],
         dict(transpose_a=True, transpose_b=True), grad=(0, 1))
    case("grad_transpose", "transpose", [x3], dict(axes=(2, 0, 1)), grad=(0,))
    case("grad_reshape", "reshape", [x3], dict(shape=(-1, 0), reverse=True), grad=(0,))
    case("grad_expand_dims", "expand_dims", [x], dict(axis=1), grad=(0,))
    case("grad_flatten", "flatten", [x3], grad=(0,))
    case("grad_concat", "concat", [x, y, R(3, 2)], dict(dim=1), grad=(0, 1, 2))
    case("grad_stack", "stack", [x, y], dict(axis=1), grad=(0, 1))
    case("grad_split", "split", [x3], dict(num_outputs=2, axis=2), grad=(0,), head_all=True)
    case("grad_slice", "slice", [x3], dict(begin=(0, 1, None), end=(2, 3, None),
                                            step=(1, 1, 2)), grad=(0,))
    case("grad_slice_axis", "slice_axis", [x3], dict(axis=2, begin=1, end=3), grad=(0,))
    case("grad_take", "take", [x, np.array([[0, 2], [2, 2]], np.float32)], grad=(0,))
    case("grad_take_axis1", "take", [x, np.array([3, 0, 3], np.float32)], dict(axis=1),
         grad=(0,))
    case("grad_pick", "pick", [x, np.array([0, 3, 1], np.float32)], dict(axis=1), grad=(0,))
    case("grad_where", "where", [np.array([[1, 0, 1, 0]] * 3, np.float32), x, y],
         grad=(1, 2))
    case("grad_broadcast_to", "broadcast_to", [R(1, 4)], dict(shape=(3, 4)), grad=(0,))
    case("grad_broadcast_axis", "broadcast_axis", [R(3, 1)], dict(axis=1, size=5), grad=(0,))
    case("grad_tile", "tile", [x], dict(reps=(2, 1)), grad=(0,))
    case("grad_repeat", "repeat", [x], dict(repeats=2, axis=0), grad=(0,))
    case("grad_flip", "flip", [x], dict(axis=1), grad=(0,))
    case("grad_squeeze", "squeeze", [R(3, 1, 4)], dict(axis=1), grad=(0,))
    case("grad_swapaxes", "swapaxes", [x3], dict(dim1=0, dim2=2), grad=(0,))
    case("grad_topk_value", "topk", [x], dict(k=2, ret_typ="value"), grad=(0,))
    case("grad_sort", "sort", [x], dict(axis=0), grad=(0,))
    case("grad_add_n", "add_n", [x, y, x], grad=(0, 1))
    case("grad_one_hot", "one_hot", [np.array([0, 2, 1], np.float32)], dict(depth=3))
    case("grad_smooth_l1", "smooth_l1", [x], dict(scalar=2.0), grad=(0,))
    case("grad_cast", "cast", [x], dict(dtype="float64"), grad=(0,))
    case("grad_stop_gradient", "stop_gradient", [x], grad=(0,))
    case("grad_log_softmax_pick", "pick", [np.log(R(3, 4, low=0.1, high=1)),
                                           np.array([1, 0, 3], np.float32)], grad=(0,))


def run_case(mx, c):
    from mxnet import nd, autograd
    arrs = [None if a is None else nd.array(a, dtype=a.dtype) for a in c["inputs"]]
    for i in c["grad"]:
        arrs[i].attach_grad()
    fn = getattr(nd, c["op"])
    kwargs = c["kwargs"]
    res = {"outputs": [], "grads": {}, "after": []}
    try:
        if c["record"]:
            with autograd.record(train_mode=c["train"]):
                out = fn(*[a for a in arrs if a is not None], **kwargs)
        else:
            with autograd.train_mode() if c["train"] else autograd.predict_mode():
                out = fn(*[a for a in arrs if a is not None], **kwargs)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        res["outputs"] = [o.asnumpy() for o in outs]
        if c["grad"]:
            heads = outs if c["head_all"] else outs[:1]
            hg = [nd.array(R(*h.shape), dtype=h.dtype) for h in heads]
            res["head_grads"] = [h.asnumpy() for h in hg]
            autograd.backward(heads, hg, train_mode=c["backward_train"])
            res["grads"] = {str(i): arrs[i].grad.asnumpy() for i in c["grad"]}
        res["after"] = [None if a is None else a.asnumpy() for a in arrs]
    except mx.base.MXNetError as err:
        res = {"error": type(err).__name__, "message": str(err).splitlines()[-1][:300]}
    return res


# ----------------------------------------------------------------------------- writing
def write_cases(mx, group):
    meta = []
    arrays = {}
    for k, c in enumerate(CASES):
        res = run_case(mx, c)
        m = dict(name=c["name"], op=c["op"], kwargs=c["kwargs"], grad=c["grad"],
                 train=c["train"], record=c["record"], tol=c["tol"], head_all=c["head_all"],
                 backward_train=c["backward_train"], compare=c["compare"],
                 n_inputs=len(c["inputs"]))
        key = c["name"]
        for i, a in enumerate(c["inputs"]):
            if a is not None:
                arrays[f"{key}/in/{i}"] = a
        if "error" in res:
            m["error"] = res["error"]
            m["message"] = res["message"]
        else:
            m["n_outputs"] = len(res["outputs"])
            for i, o in enumerate(res["outputs"]):
                arrays[f"{key}/out/{i}"] = o
            for i, g in res["grads"].items():
                arrays[f"{key}/grad/{i}"] = g
            for i, g in enumerate(res.get("head_grads", [])):
                arrays[f"{key}/hg/{i}"] = g
            for i, a in enumerate(res["after"]):
                if a is not None:
                    arrays[f"{key}/after/{i}"] = a
        meta.append(m)
    CASES.clear()
    np.savez_compressed(os.path.join(OUT, f"{group}.npz"), **arrays)
    with open(os.path.join(OUT, f"{group}.json"), "w") as f:
        json.dump(meta, f, indent=1, default=_json_default)
    print(f"{group}: {len(meta)} cases")


def _json_default(o):
    if isinstance(o, tuple):
        return list(o)
    if isinstance(o, np.generic):
        return o.item()
    raise TypeError(type(o))


# ----------------------------------------------------------------------------- snippets
# Behaviour cases as code that runs unchanged on MXNet and on neogluon (names available: mx,
# nd, autograd, np). Each snippet sets ``result``; an exception is recorded as the result.
SNIPPETS = {}


def snip(group, name, code, tol=None):
    SNIPPETS.setdefault(group, []).append(dict(name=name, code=code, tol=tol))


def snippet_cases():
    S = snip
    # ---- creation, dtype, properties, repr
    for name, code in [
        ("array_list", "result = nd.array([[1, 2], [3, 4]])"),
        ("array_scalar", "result = nd.array(5)"),
        ("array_np_int_default_float32", "result = nd.array(np.array([1, 2]))"),
        ("array_np_f64_default_float32", "result = nd.array(np.array([1.5, 2]))"),
        ("array_dtype", "result = nd.array([1.7, -1.7], dtype='int32')"),
        ("array_from_nd_keeps_dtype", "result = nd.array(nd.array([1, 2], dtype='int64'))"),
        ("array_nested_ctx", "result = nd.array([1, 2], ctx=mx.cpu(1))"),
        ("zeros", "result = nd.zeros((2, 3), dtype='int32')"),
        ("zeros_int_shape", "result = nd.zeros(3)"),
        ("ones", "result = nd.ones((2,), dtype=np.float64)"),
        ("full", "result = nd.full((2, 2), 3)"),
        ("full_int", "result = nd.full((2,), 2.7, dtype='int32')"),
        ("empty_shape", "result = (nd.empty((2, 3)).shape, nd.empty((2, 3)).dtype)"),
        ("arange", "result = nd.arange(5)"),
        ("arange_step_repeat", "result = nd.arange(2, 10, 3, repeat=2)"),
        ("arange_float", "result = nd.arange(0, 1, 0.3)"),
        ("arange_int", "result = nd.arange(1, 7, 2, dtype='int32')"),
        ("linspace", "result = nd.linspace(0, 1, 5)"),
        ("linspace_noend", "result = nd.linspace(0, 1, 5, endpoint=False)"),
        ("linspace_int", "result = nd.linspace(0, 10, 4, dtype='int32')"),
        ("eye", "result = nd.eye(3)"),
        ("eye_k", "result = nd.eye(3, 4, 1)"),
        ("eye_neg_k", "result = nd.eye(4, 3, -2, dtype='int32')"),
        ("zeros_like", "result = nd.zeros_like(nd.array([1, 2], dtype='int32'))"),
        ("ones_like", "result = nd.ones_like(nd.ones((2, 2)))"),
        ("fluent_zeros_like", "result = nd.ones((2,)).zeros_like()"),
        ("properties", "x = nd.zeros((2, 3, 4)); result = [x.shape, x.size, x.ndim, x.dtype, "
                       "x.context, x.ctx, x.stype, x.T.shape, len(x)]"),
        ("dtype_types", "result = [nd.zeros(1, dtype=d).dtype for d in ['float32', 'float64', "
                        "'float16', 'uint8', 'int8', 'int32', 'int64']]"),
        ("repr_3d", "result = repr(nd.arange(24).reshape((2, 3, 4)))"),
        ("repr_1d", "result = repr(nd.array([1.5, 2.5, 3.5]))"),
        ("repr_int", "result = repr(nd.array([1, 2, 3], dtype='int32'))"),
        ("repr_ctx", "result = repr(nd.ones((1, 2), ctx=mx.cpu(3)))"),
        ("str", "result = str(nd.array([[1, 2]]))"),
        ("asnumpy", "result = nd.array([[1, 2]]).asnumpy()"),
        ("asscalar", "result = nd.array([2.5]).asscalar()"),
        ("asscalar_error", "result = nd.array([1, 2]).asscalar()"),
        ("astype", "result = nd.array([1.7, -1.7]).astype('int32')"),
        ("astype_u8", "result = nd.array([3, 250]).astype('uint8')"),
        ("astype_f16", "result = nd.array([1.0009765625, 3]).astype('float16')"),
        ("astype_nocopy", "x = nd.ones(2); result = x.astype('float32', copy=False) is x"),
        ("astype_copy", "x = nd.ones(2); result = x.astype('float32') is x"),
        ("copy", "x = nd.ones(2); y = x.copy(); y[:] = 5; result = [x, y]"),
        ("copyto_ctx", "result = nd.ones(2).copyto(mx.cpu(1))"),
        ("copyto_arr", "x = nd.ones(2); y = nd.zeros(2); r = x.copyto(y); result = [y, r is y]"),
        ("copyto_bad_shape", "nd.ones(2).copyto(nd.zeros(3))"),
        ("as_in_context", "x = nd.ones(2); result = [x.as_in_context(mx.cpu(1)).context, "
                          "x.as_in_context(mx.cpu(0)) is x]"),
        ("bool_single", "result = [bool(nd.array([0])), bool(nd.array([2]))]"),
        ("bool_multi_error", "result = bool(nd.array([0, 1]))"),
        ("len_iter", "result = [a for a in nd.array([[1, 2], [3, 4]])]"),
        ("contains", "result = [2.5 in nd.array([1.5, 2.5]), 3 in nd.array([1.5, 2.5])]"),
    ]:
        S("creation", name, code)
    # ---- arithmetic and dtype rules
    for name, code in [
        ("add_bcast", "result = nd.ones((2, 3)) + nd.array([1, 2, 3])"),
        ("add_bcast_both", "result = nd.ones((2, 1)) * nd.array([[1, 2, 3]])"),
        ("add_bad_shape", "result = nd.zeros((2, 3)) + nd.ones((3, 2))"),
        ("scalar_ops", "x = nd.array([1., 2., 4.]); result = [x + 1, 1 + x, x - 1, 1 - x, x * 2, "
                       "2 * x, x / 2, 2 / x, x ** 2, 2 ** x, -x, abs(-x)]"),
        ("int_float_scalar", "a = nd.array([1, 2, 3], dtype='int32'); result = [a + 0.5, a * 1.5, "
                             "a - 1.5, 1.5 - a, a / 2, 7 / a, a ** 0.5, 2 ** a, a * -1.5]"),
        ("int_div_int", "result = nd.array([-7, 7, 3], dtype='int32') / nd.array([2, 2, 2], "
                        "dtype='int32')"),
        ("mod_float", "result = [nd.array([-7., 7., 5.5]) % 3, nd.array([-7., 7.]) % -3, "
                      "7 % nd.array([-3., 3.])]"),
        ("mod_int", "result = nd.array([-7, 7], dtype='int32') % 3"),
        ("modulo_fn", "result = nd.modulo(nd.array([-7.]), nd.array([3.]))"),
        ("mixed_dtype_error", "result = nd.ones(2) + nd.ones(2, dtype='float64')"),
        ("mixed_dtype_int_error", "result = nd.ones(2, dtype='int32') * nd.ones(2)"),
        ("mixed_cmp_error", "result = nd.ones(2) == nd.ones(2, dtype='int32')"),
        ("compare", "x = nd.array([1., 2., 3.]); result = [x > 2, x >= 2, x < 2, x <= 2, "
                    "x == 2, x != 2, 2 < x, x == nd.array([1., 0., 3.])]"),
        ("compare_int", "result = nd.array([1, 2, 3], dtype='int32') > 1.5"),
        ("inplace", "x = nd.ones((2, 3)); y = x; x += nd.array([1, 2, 3]); x *= 2; x -= 1; "
                    "x /= 2; result = [x, y is x]"),
        ("inplace_scalar_int", "x = nd.array([5, 6], dtype='int32'); x += 1.7; result = x"),
        ("inplace_bad", "x = nd.zeros((2, 3)); x += nd.ones((3, 2)); result = x"),
        ("inplace_mod", "x = nd.array([-7., 7.]); x %= 3; result = x"),
        ("maximum_minimum", "x = nd.array([1., 5., 3.]); result = [nd.maximum(x, 2), "
                            "nd.minimum(x, 2), nd.maximum(x, nd.array([3., 0., 4.])), "
                            "nd.minimum(2, x)]"),
        ("broadcast_fns", "a = nd.array([[1., 2., 3.]]); b = nd.array([[2.], [4.]]); result = ["
                          "nd.broadcast_add(a, b), nd.broadcast_sub(a, b), nd.broadcast_mul(a, b),"
                          " nd.broadcast_div(a, b), nd.broadcast_power(a, b), "
                          "nd.broadcast_maximum(a, b), nd.broadcast_minimum(a, b), "
                          "nd.broadcast_mod(a, b), nd.broadcast_equal(a, b), "
                          "nd.broadcast_greater(a, b), nd.broadcast_lesser_equal(a, b)]"),
        ("elemwise_fns", "a = nd.array([1., 2.]); b = nd.array([3., 5.]); result = ["
                         "nd.elemwise_add(a, b), nd.elemwise_sub(a, b), nd.elemwise_mul(a, b), "
                         "nd.elemwise_div(a, b), nd.add(a, b), nd.subtract(a, 1), "
                         "nd.multiply(a, b), nd.divide(a, b), nd.power(a, 2), nd.equal(a, 2), "
                         "nd.not_equal(a, 2), nd.greater(a, 1), nd.lesser(a, 2), "
                         "nd.greater_equal(a, 2), nd.lesser_equal(a, 1)]"),
        ("elemwise_bad_shape", "result = nd.elemwise_add(nd.ones(2), nd.ones(3))"),
        ("add_n", "result = [nd.add_n(nd.ones(2), nd.ones(2) * 2, nd.ones(2) * 3), "
                  "nd.ElementWiseSum(nd.ones(2), nd.ones(2))]"),
    ]:
        S("arith", name, code)
    # ---- elementwise unary
    xs = "x = nd.array([-2.5, -1.5, -0.5, 0., 0.5, 1.5, 2.5, 3.7])"
    pos = "p = nd.array([0.1, 0.5, 1., 2., 9.])"
    unit = "u = nd.array([-0.9, -0.3, 0., 0.4, 0.8])"
    for fn in ["abs", "sign", "round", "rint", "fix", "floor", "ceil", "trunc", "square",
               "relu", "sigmoid", "tanh", "exp", "expm1", "negative", "sin", "cos", "arctan",
               "sinh", "cosh", "arcsinh", "softsign", "erf", "degrees", "radians", "cbrt",
               "logical_not"]:
        S("unary", fn, f"{xs}; result = nd.{fn}(x)")
    for fn in ["sqrt", "rsqrt", "log", "log2", "log10", "log1p", "reciprocal", "gamma",
               "gammaln", "rcbrt", "arccosh"]:
        S("unary", fn, f"{pos} + 1; result = nd.{fn}(p)" if fn == "arccosh"
          else f"{pos}; result = nd.{fn}(p)")
    for fn in ["arcsin", "arccos", "arctanh", "erfinv", "tan"]:
        S("unary", fn, f"{unit}; result = nd.{fn}(u)")
    S("unary", "int_unary", "a = nd.array([1, 4, 9], dtype='int32'); result = [nd.sqrt(a), "
                            "nd.exp(a), nd.abs(a * -1), nd.relu(a - 3), nd.square(a), "
                            "nd.sigmoid(a), nd.negative(a), nd.sign(a - 4)]")
    S("unary", "fluent", f"{xs}; result = [x.abs(), x.exp(), x.relu(), x.sigmoid(), x.tanh(), "
                         "x.square(), x.sign(), x.clip(-1, 1), x.round(), x.floor()]")
    S("unary", "clip", f"{xs}; result = [nd.clip(x, -1, 2), nd.clip(x, a_min=0, a_max=1)]")
    S("unary", "isnan_isinf", "x = nd.array([np.nan, np.inf, -np.inf, 1.]); result = ["
                              "nd.contrib.isnan(x), nd.contrib.isinf(x), "
                              "nd.contrib.isfinite(x)]")
    S("unary", "softmax", "x = nd.array([[1., 2., 3.], [1., 1., 5.]]); result = ["
                          "nd.softmax(x), nd.softmax(x, axis=0), nd.log_softmax(x), "
                          "nd.softmax(x, temperature=2.), nd.log_softmax(x, axis=0), "
                          "nd.softmin(x)]")
    S("unary", "softmax_length", "x = nd.array([[1., 2., 3.], [1., 1., 5.]]); result = "
                                 "nd.softmax(x, length=nd.array([2, 1], dtype='int32'), "
                                 "use_length=True)")
    # ---- reductions
    x3 = "x = nd.array(np.arange(24).reshape((2, 3, 4)) % 7 - 3.)"
    for fn in ["sum", "mean", "max", "min", "prod", "nansum", "nanprod"]:
        S("reduce", fn, f"{x3}; result = [nd.{fn}(x), nd.{fn}(x, axis=1), "
                        f"nd.{fn}(x, axis=(0, 2)), nd.{fn}(x, axis=1, keepdims=True), "
                        f"nd.{fn}(x, axis=1, exclude=True), nd.{fn}(x, axis=-1), "
                        f"x.{fn}(axis=0)]")
    S("reduce", "int_sum_mean", "a = nd.array([[1, 2], [4, 4]], dtype='int32'); result = ["
                                "nd.sum(a), nd.mean(a), nd.mean(a, axis=1), nd.max(a), "
                                "nd.prod(a)]")
    S("reduce", "norm", f"{x3}; result = [nd.norm(x), nd.norm(x, axis=1), "
                        "nd.norm(x, ord=1, axis=(1, 2)), nd.norm(x, axis=2, keepdims=True), "
                        "x.norm()]")
    S("reduce", "argmax", f"{x3}; result = [nd.argmax(x, axis=1), nd.argmin(x, axis=2), "
                          "nd.argmax(x), nd.argmax(x, axis=0, keepdims=True), "
                          "x.argmax(axis=-1), nd.argmax_channel(x), "
                          "nd.argmax(nd.array([3, 1, 4], dtype='int32'), axis=0)]")
    S("reduce", "topk", f"{x3}; result = [nd.topk(x, k=2), nd.topk(x, axis=1, k=2, "
                        "ret_typ='value'), nd.topk(x, k=2, ret_typ='both', is_ascend=True), "
                        "nd.topk(x, axis=0, ret_typ='mask'), nd.topk(x, k=3, dtype='int32')]")
    S("reduce", "sort", "x = nd.array([[3., 1., 2.], [0., 5., 4.]]); result = [nd.sort(x), "
                        "nd.sort(x, axis=0, is_ascend=False), nd.argsort(x), "
                        "nd.argsort(x, is_ascend=False, dtype='int32'), x.sort(), "
                        "nd.argsort(nd.array([2, 1, 3], dtype='int32'))]")
    # ---- shape manipulation
    for name, code in [
        ("reshape_codes", f"{x3}; result = [x.reshape((-3, 4)).shape, x.reshape((-4, 1, 2, -2))"
                          ".shape, x.reshape((0, -1)).shape, x.reshape((-2,)).shape, "
                          "x.reshape((4, -1)).shape, x.reshape((0, 0, 2, 2)).shape, "
                          "x.reshape((-1,)).shape, x.reshape((-4, -1, 1, 0, 0)).shape, "
                          "x.reshape((0, -3)).shape]"),
        ("reshape_reverse", "x = nd.ones((10, 5, 4)); result = [x.reshape((-1, 0), reverse=True)"
                            ".shape, x.reshape((0, -1), reverse=True).shape, "
                            "nd.reshape(x, shape=(-1, 0), reverse=True).shape]"),
        ("reshape_reverse_m3", "result = nd.ones((2, 3, 4, 5)).reshape((-3, 0), reverse=True)"),
        ("reshape_reverse_m4", "result = nd.ones((2, 3, 4, 5)).reshape((0, -4, 2, -1), "
                               "reverse=True).shape"),
        ("reshape_reverse_m2", "result = nd.ones((2, 3, 4, 5)).reshape((-2, 10), "
                               "reverse=True).shape"),
        ("reshape_reverse_infer", "x = nd.ones((2, 3, 4, 5)); result = [x.reshape((6, -1, 0), "
                                  "reverse=True).shape, x.reshape((-1, 0, 0), reverse=True)"
                                  ".shape, x.reshape((0, -3, 0), reverse=True).shape]"),
        ("reshape_more_codes", "x = nd.ones((2, 3, 4, 5)); result = ["
                               "x.reshape((0, -3, 0)).shape, x.reshape((-4, -1, 2, 0, -2)).shape,"
                               " x.reshape((-3, -3)).shape, x.reshape((0, 0, -1)).shape, "
                               "x.reshape((-2, 1, 1)).shape, x.reshape((2, -4, 3, 1, -2)).shape]"),
        ("reshape_values", f"{x3}; result = [x.reshape((4, 6)), nd.reshape(x, shape=(3, -1))]"),
        ("reshape_forms", f"{x3}; result = [x.reshape(4, 6).shape, x.reshape(shape=(4, 6)).shape,"
                          " x.reshape([4, 6]).shape]"),
        ("reshape_bad", f"{x3}; result = x.reshape((5, 5))"),
        ("reshape_bad_infer", f"{x3}; result = x.reshape((5, -1))"),
        ("reshape_like", f"{x3}; result = [x.reshape_like(nd.ones((4, 6))).shape, "
                         "nd.reshape_like(x, nd.ones((6, 4))).shape]"),
        ("transpose", f"{x3}; result = [nd.transpose(x), nd.transpose(x, axes=(1, 0, 2)), x.T, "
                      "x.transpose((2, 0, 1)), nd.swapaxes(x, 0, 2), x.swapaxes(1, 2)]"),
        ("expand_squeeze", "x = nd.ones((1, 3, 1)); result = [nd.expand_dims(x, 0).shape, "
                           "nd.expand_dims(x, -1).shape, nd.squeeze(x).shape, "
                           "nd.squeeze(x, axis=2).shape, nd.squeeze(x, axis=(0, 2)).shape, "
                           "nd.squeeze(nd.ones((1, 1))).shape, x.expand_dims(1).shape, "
                           "x.squeeze().shape]"),
        ("squeeze_bad", "result = nd.squeeze(nd.ones((2, 3)), axis=0)"),
        ("flatten", f"{x3}; result = [nd.flatten(x).shape, x.flatten().shape, "
                    "nd.Flatten(nd.ones((4,))).shape]"),
        ("concat_stack", "a = nd.ones((2, 3)); b = nd.zeros((2, 3)); result = ["
                         "nd.concat(a, b), nd.concat(a, b, dim=0), nd.stack(a, b), "
                         "nd.stack(a, b, axis=2), nd.concat(*[a, b], dim=1).shape, "
                         "nd.Concat(a, b, dim=0).shape]"),
        ("concat_bad", "result = nd.concat(nd.ones((2, 3)), nd.ones((3, 3)), dim=1)"),
        ("split", f"{x3}; result = [nd.split(x, 2, axis=2), nd.split(x, 3, axis=1, "
                  "squeeze_axis=True), nd.split(x, num_outputs=2, axis=0)[1].shape, "
                  "nd.SliceChannel(x, 3).__len__(), nd.split(x, 1, axis=0).shape]"),
        ("split_bad", f"{x3}; result = nd.split(x, 5, axis=2)"),
        ("slice", f"{x3}; result = [nd.slice(x, begin=(0, 1), end=(2, None)), "
                  "nd.slice(x, begin=(None, -1), end=(None, None), step=(1, -1)), "
                  "nd.slice(x, (1, 0, 1), (2, 3, 4), (1, 2, 2)), "
                  "x.slice(begin=(0,), end=(1,)).shape]"),
        ("slice_axis", f"{x3}; result = [nd.slice_axis(x, axis=2, begin=1, end=-1), "
                       "nd.slice_axis(x, axis=0, begin=-1, end=None), "
                       "x.slice_axis(axis=1, begin=0, end=2).shape]"),
        ("slice_like", f"{x3}; result = [nd.slice_like(x, nd.ones((1, 2, 3))).shape, "
                       "nd.slice_like(x, nd.ones((1, 2, 3)), axes=(2,)).shape]"),
        ("take", f"{x3}; i = nd.array([[0, 1], [1, 5]]); result = [nd.take(x, i), "
                 "nd.take(x, i, axis=1), nd.take(x, nd.array([-1, 4]), axis=2, mode='wrap'), "
                 "nd.take(x, nd.array([-1, 4]), axis=2), x.take(nd.array([1]))]"),
        ("pick", f"{x3}; result = [nd.pick(x, nd.array([[0, 1, 2], [3, 0, 1]]), axis=2), "
                 "nd.pick(x, nd.array([[0, 1, 2, 0], [2, 1, 0, 1]]), axis=1, keepdims=True), "
                 "nd.pick(x, nd.array([[5, -1, 2], [3, 0, 1]]), axis=-1, mode='wrap'), "
                 "nd.pick(nd.array([[1., 2.], [3., 4.]]), nd.array([1, 0]))]"),
        ("one_hot", "result = [nd.one_hot(nd.array([1, 0, 3]), 3), nd.one_hot(nd.array([[1, 2]]),"
                    " 4, on_value=5, off_value=-1, dtype='int32')]"),
        ("where", "x = nd.array([[1., 2.], [3., 4.]]); y = x * 10; result = [nd.where(nd.array("
                  "[[1, 0], [0, 1]]), x, y), nd.where(nd.array([0, 1]), x, y)]"),
        ("broadcast_to_like", "x = nd.array([[1., 2., 3.]]); result = [nd.broadcast_to(x, (2, 3)),"
                              " nd.broadcast_to(x, (2, 0)).shape, x.broadcast_to((4, 3)).shape, "
                              "nd.broadcast_like(x, nd.ones((2, 3))).shape, "
                              "nd.broadcast_axis(nd.ones((1, 3, 1)), axis=(0, 2), size=(2, 4))"
                              ".shape, x.broadcast_like(nd.ones((5, 3))).shape]"),
        ("broadcast_bad", "result = nd.broadcast_to(nd.ones((2, 3)), (4, 3))"),
        ("tile_repeat_flip", "x = nd.array([[1., 2.], [3., 4.]]); result = [nd.tile(x, (2, 1)), "
                             "nd.tile(x, (2,)), nd.repeat(x, 2), nd.repeat(x, 2, axis=1), "
                             "nd.flip(x, 0), nd.flip(x, axis=1), nd.reverse(x, axis=0), "
                             "x.tile((1, 2)).shape, x.repeat(3, axis=0).shape, x.flip(1)]"),
        ("shape_size_array", "x = nd.ones((2, 3)); result = [nd.shape_array(x), "
                             "nd.size_array(x)]"),
        ("cast_stopgrad", "x = nd.array([1.7]); result = [nd.cast(x, 'int32'), "
                          "nd.Cast(x, dtype='float64'), nd.stop_gradient(x), nd.BlockGrad(x),"
                          " nd.identity(x)]"),
    ]:
        S("shape", name, code)
    # ---- indexing
    xi = "x = nd.array(np.arange(24).reshape((2, 3, 4)))"
    for name, key in [("int", "1"), ("neg_int", "-1"), ("two_ints", "1, 2"),
                      ("three_ints", "1, 2, 3"), ("slice", "0:1"), ("colon_int", ":, 1"),
                      ("ellipsis", "..., 1"), ("none", "None"), ("list", "[0, 1]"),
                      ("step", "::-1"), ("mixed", "0, ::2, 1:3"), ("list_mid", ":, [0, 2], 1"),
                      ("nd_index", "nd.array([1, 0])"), ("np_index", "np.array([1])"),
                      ("two_lists", "[0, 1], [2, 0]"), ("out_of_range", "5"),
                      ("cmp_index", "nd.array([1, 0]) > 0"), ("int_slice_none", "1, None"),
                      ("neg_step", "1, ::-2, 3"), ("empty_slice", "2:")]:
        S("index", f"get_{name}", f"{xi}; result = x[{key}]")
    S("index", "get_1d", "x = nd.array([1.5, 2.5, 3.5]); result = [x[1], x[-1], x[1:], x[[2, 0]]]")
    S("index", "get_is_view", f"{xi}; y = x[1]; y[:] = 0; result = x")
    for name, key, val in [("row_scalar", "0", "5"), ("colon", ":", "nd.array([1, 2, 3, 4])"),
                           ("slice_nd", "0, 1:", "nd.ones((2, 4)) * 7"),
                           ("adv", "[0, 1], [1, 2]", "nd.array([[7, 7, 7, 7], [8, 8, 8, 8]])"),
                           ("adv_scalar", "1, [0, 2]", "-1"),
                           ("int_1d", "1, 2, 3", "99"), ("ellipsis", "..., 0", "3"),
                           ("numpy_value", "0, 0", "np.array([1, 2, 3, 4])"),
                           ("list_value", "1, 1", "[5, 6, 7, 8]"),
                           ("bad_shape", ":", "nd.ones((2,))"),
                           ("nd_key", "nd.array([1])", "0"),
                           ("float64_value", "0", "nd.ones((3, 4), dtype='float64')")]:
        S("index", f"set_{name}", f"{xi}; x[{key}] = {val}; result = x")
    S("index", "set_1d", "x = nd.zeros(3); x[1] = 9; x[-1] = 2; result = x")
    S("index", "set_slice_all", "x = nd.zeros((2, 2)); y = x; x[:] = 4; result = [x, y is x]")
    # ---- linear algebra
    for name, code in [
        ("dot_2d", "a = nd.array(np.arange(6).reshape(2, 3)); b = nd.array(np.arange(12)"
                   ".reshape(3, 4)); result = [nd.dot(a, b), nd.dot(b, a, "
                   "transpose_a=True, transpose_b=True)]"),
        ("dot_1d", "a = nd.array([1., 2., 3.]); result = [nd.dot(a, a), nd.dot(a, nd.ones((3, 2))),"
                   " nd.dot(nd.ones((2, 3)), a)]"),
        ("dot_nd", "x = nd.array(np.arange(24).reshape((2, 3, 4))); result = [nd.dot(x, "
                   "nd.ones((4, 2))), nd.dot(x, nd.ones((2, 5)), transpose_a=True), "
                   "nd.dot(nd.ones((5, 4)), x, transpose_b=True), nd.dot(nd.ones((5, 2)), x)]"),
        ("dot_bad", "result = nd.dot(nd.ones((2, 3)), nd.ones((2, 3)))"),
        ("batch_dot", "x = nd.array(np.arange(24).reshape((2, 3, 4))); result = [nd.batch_dot("
                      "x, x, transpose_b=True), nd.batch_dot(x, x, transpose_a=True), "
                      "nd.batch_dot(x, nd.ones((2, 4, 5)))]"),
        ("batch_dot_bad", "result = nd.batch_dot(nd.ones((2, 3, 4)), nd.ones((3, 4, 5)))"),
    ]:
        S("linalg", name, code)
    # ---- context
    for name, code in [
        ("str_eq", "result = [str(mx.cpu()), repr(mx.cpu(2)), str(mx.gpu(1)), mx.cpu(0) == mx.cpu(1),"
                   " mx.cpu(1) == mx.Context('cpu', 1), mx.gpu(0) == mx.cpu(0), "
                   "mx.Context(mx.gpu(3)), mx.cpu(1).device_type, mx.gpu(2).device_id, "
                   "mx.cpu().device_typeid, mx.gpu().device_typeid, mx.current_context()]"),
        ("hash", "result = [hash(mx.cpu(0)) == hash(mx.Context('cpu', 0)), "
                 "len({mx.cpu(0), mx.cpu(0), mx.cpu(1)})]"),
        ("with", "with mx.Context('cpu', 2):\n    a = nd.ones(2)\n    c = mx.current_context()\n"
                 "result = [a.context, c, mx.current_context()]"),
        ("with_gpu_ctx", "with mx.gpu(0):\n    c = mx.current_context()\nresult = c"),
        ("gpu_unavailable", "result = nd.ones((2,), ctx=mx.gpu(0))"),
        ("gpu_copyto", "result = nd.ones((2,)).copyto(mx.gpu(0))"),
        ("num_gpus", "result = mx.context.num_gpus()"),
        ("bad_device", "result = mx.Context('tpu', 0)"),
    ]:
        S("context", name, code)


def autograd_snippets():
    A = lambda name, code: snip("autograd", name, code)  # noqa: E731
    A("flags", "r = [autograd.is_recording(), autograd.is_training()]\n"
               "with autograd.record():\n    r += [autograd.is_recording(), autograd.is_training()]\n"
               "    with autograd.pause():\n        r += [autograd.is_recording(), autograd.is_training()]\n"
               "    with autograd.predict_mode():\n        r += [autograd.is_recording(), autograd.is_training()]\n"
               "with autograd.record(train_mode=False):\n    r += [autograd.is_recording(), autograd.is_training()]\n"
               "    with autograd.train_mode():\n        r += [autograd.is_training()]\n"
               "    with autograd.pause(train_mode=True):\n        r += [autograd.is_recording(), autograd.is_training()]\n"
               "with autograd.train_mode():\n    r += [autograd.is_recording(), autograd.is_training()]\n"
               "r += [autograd.is_recording(), autograd.is_training()]\nresult = r")
    A("set_flags", "a = autograd.set_recording(True); b = autograd.set_training(True); "
                   "c = [autograd.is_recording(), autograd.is_training()]; "
                   "d = autograd.set_recording(False); e = autograd.set_training(False); "
                   "result = [a, b, c, d, e, autograd.is_recording(), autograd.is_training()]")
    A("basic", "x = nd.array([1., 2., 3.]); x.attach_grad()\nwith autograd.record():\n"
               "    y = x * x + 2 * x\ny.backward()\nresult = [y, x.grad]")
    A("head_grad", "x = nd.array([1., 2., 3.]); x.attach_grad()\nwith autograd.record():\n"
                   "    y = x * x\ny.backward(nd.array([1., 0.5, 2.]))\nresult = x.grad")
    A("backward_fn_multi_heads", "x = nd.array([1., 2.]); x.attach_grad()\n"
                                 "with autograd.record():\n    a = x * 2\n    b = x * x\n"
                                 "autograd.backward([a, b], [nd.ones(2), nd.array([1., 3.])])\n"
                                 "result = x.grad")
    A("write_overwrites", "x = nd.array([1., 2.]); x.attach_grad()\nfor i in range(2):\n"
                          "    with autograd.record():\n        y = x * 3\n    y.backward()\n"
                          "result = x.grad")
    A("grad_req_add", "x = nd.array([1., 2.]); x.attach_grad(grad_req='add')\nfor i in range(3):\n"
                      "    with autograd.record():\n        y = x * x\n    y.backward()\n"
                      "result = x.grad")
    A("grad_req_null", "x = nd.array([1., 2.]); x.attach_grad(grad_req='null'); w = nd.ones(2); "
                       "w.attach_grad()\nwith autograd.record():\n    y = x * w\ny.backward()\n"
                       "result = [x.grad, w.grad]")
    A("grad_req_bad", "x = nd.ones(2); x.attach_grad(grad_req='sum')")
    A("attach_twice_resets", "x = nd.array([1., 2.]); x.attach_grad()\nwith autograd.record():\n"
                             "    y = x * 2\ny.backward(); g1 = x.grad.copy(); x.attach_grad()\n"
                             "result = [g1, x.grad]")
    A("no_record_error", "x = nd.ones(2); x.attach_grad(); y = x * 2; y.backward()")
    A("no_variable_error", "with autograd.record():\n    y = nd.ones(2) * 2\ny.backward()")
    A("retain_graph_error", "x = nd.ones(2); x.attach_grad()\nwith autograd.record():\n"
                            "    y = (x * x).sum()\ny.backward()\ny.backward()")
    A("retain_graph_ok", "x = nd.array([1., 2.]); x.attach_grad()\nwith autograd.record():\n"
                         "    y = (x * x).sum()\ny.backward(retain_graph=True); g1 = x.grad.copy()\n"
                         "y.backward()\nresult = [g1, x.grad]")
    A("pause_blocks_grad", "x = nd.array([1., 2.]); x.attach_grad()\nwith autograd.record():\n"
                           "    y = x * 2\n    with autograd.pause():\n        z = y * 3\n"
                           "    w = y + z\nw.backward()\nresult = x.grad")
    A("detach", "x = nd.array([1., 2.]); x.attach_grad()\nwith autograd.record():\n"
                "    y = x * 2\n    z = y.detach() * x\nz.backward()\nresult = x.grad")
    A("grad_fn", "x = nd.array([1., 2., 3.]); x.attach_grad()\nwith autograd.record():\n"
                 "    y = (x ** 3).sum()\ng = autograd.grad(y, [x])\nresult = [g, x.grad]")
    A("grad_fn_single_var", "x = nd.array([1., 2.]); x.attach_grad()\nwith autograd.record():\n"
                            "    y = x * x\ng = autograd.grad(y, x)\nresult = g")
    A("grad_fn_head_grads", "x = nd.array([1., 2.]); x.attach_grad()\nwith autograd.record():\n"
                            "    y = x * x\nresult = autograd.grad(y, [x], head_grads=nd.array([2., 3.]))")
    # Second-order gradients (only some MXNet 1.9.1 operators have them: sin, cos, log, ...).
    A("higher_order_sin", "x = nd.array([0.5, 1.5, -2.]); x.attach_grad()\nwith autograd.record():\n"
                          "    y = nd.sin(x)\n    dy = autograd.grad(y, [x], create_graph=True, "
                          "retain_graph=True)[0]\ndy.backward()\nresult = [dy, x.grad]")
    A("higher_order_log", "x = nd.array([0.5, 1.5, 2.]); x.attach_grad()\nwith autograd.record():\n"
                          "    y = nd.log(x)\n    dy = autograd.grad(y, [x], create_graph=True)[0]\n"
                          "    z = nd.cos(dy)\nz.backward()\nresult = [dy, z, x.grad]")
    A("higher_order_third", "x = nd.array([0.3, 1.1]); x.attach_grad()\nwith autograd.record():\n"
                            "    y = nd.sin(x)\n    d1 = autograd.grad(y, [x], create_graph=True)[0]\n"
                            "    d2 = autograd.grad(d1, [x], create_graph=True)[0]\n"
                            "d2.backward()\nresult = [d1, d2, x.grad]")
    A("mark_variables", "x = nd.array([1., 2.]); g = nd.zeros(2)\n"
                        "autograd.mark_variables([x], [g])\nwith autograd.record():\n"
                        "    y = x * 5\ny.backward()\nresult = [g, x.grad]")
    A("mark_variables_add", "x = nd.array([1., 2.]); g = nd.ones(2)\n"
                            "autograd.mark_variables(x, g, grad_reqs='add')\nwith autograd.record():\n"
                            "    y = x * x\ny.backward()\nresult = g")
    A("function", "class Sq(autograd.Function):\n    def forward(self, x):\n"
                  "        self.save_for_backward(x)\n        return x * x\n"
                  "    def backward(self, dy):\n        x, = self.saved_tensors\n        return dy * 2 * x\n"
                  "x = nd.array([1., 2., 3.]); x.attach_grad()\nwith autograd.record():\n"
                  "    y = Sq()(x) * 3\ny.backward()\nresult = [y, x.grad]")
    A("function_two_io", "class F2(autograd.Function):\n    def forward(self, a, b):\n"
                         "        self.save_for_backward(a, b)\n        return a * b, a + b\n"
                         "    def backward(self, d1, d2):\n        a, b = self.saved_tensors\n"
                         "        return d1 * b + d2, d1 * a + d2\n"
                         "a = nd.array([1., 2.]); b = nd.array([3., 4.]); a.attach_grad(); b.attach_grad()\n"
                         "with autograd.record():\n    p, s = F2()(a, b)\n    z = p * 2 + s\n"
                         "z.backward()\nresult = [p, s, a.grad, b.grad]")
    A("function_custom_grad", "class Ident(autograd.Function):\n    def forward(self, x):\n"
                              "        return x.copy()\n    def backward(self, dy):\n        return dy * 10\n"
                              "x = nd.array([1., 2.]); x.attach_grad()\nwith autograd.record():\n"
                              "    y = Ident()(x)\ny.backward()\nresult = x.grad")
    A("inplace_on_variable_in_record", "x = nd.ones(2); x.attach_grad()\nwith autograd.record():\n"
                                       "    x += 1\n")
    A("train_mode_arg", "x = nd.ones((4, 5)); x.attach_grad()\nwith autograd.record(train_mode=False):\n"
                        "    y = nd.Dropout(x, p=0.5)\ny.backward()\nresult = [y, x.grad]")
    A("grad_attribute_none", "result = nd.ones(2).grad")
    A("grad_of_intermediate_attached", "x = nd.array([1., 2.]); x.attach_grad()\n"
                                       "with autograd.record():\n    y = x * 2\n    y.attach_grad()\n"
                                       "    z = y * y\nz.backward()\nresult = [x.grad, y.grad]")
    A("backward_nonscalar_default_ones", "x = nd.array([[1., 2.], [3., 4.]]); x.attach_grad()\n"
                                         "with autograd.record():\n    y = nd.dot(x, x)\ny.backward()\n"
                                         "result = x.grad")
    A("unused_variable_grad_unchanged", "x = nd.array([1., 2.]); w = nd.array([5., 5.]); "
                                        "x.attach_grad(); w.attach_grad(); w.grad[:] = 7\n"
                                        "with autograd.record():\n    y = x * 2\ny.backward()\n"
                                        "result = [x.grad, w.grad]")
    A("int_variable", "x = nd.array([1, 2], dtype='int32'); x.attach_grad(); result = x.grad")
    A("seed_repro", "mx.random.seed(42); a = nd.random.uniform(shape=(3,)); "
                    "mx.random.seed(42); b = nd.random.uniform(shape=(3,)); "
                    "result = [(a == b).asnumpy().all(), a.shape, a.dtype]")


def random_snippets():
    """Shapes, dtypes and errors of the samplers (values differ by design)."""
    desc = "def d(r):\n    return [d(a) for a in r] if isinstance(r, list) else [r.shape, r.dtype, r.context]\n"
    for name, call in [
        ("uniform_default", "nd.random.uniform()"),
        ("uniform_shape", "nd.random.uniform(0, 1, shape=(2, 3))"),
        ("uniform_int_shape", "nd.random.uniform(0, 1, shape=5)"),
        ("uniform_f64", "nd.random.uniform(shape=(2,), dtype='float64')"),
        ("uniform_nd", "nd.random.uniform(nd.zeros(3), nd.ones(3), shape=(2,))"),
        ("uniform_nd_noshape", "nd.random.uniform(nd.zeros(3), nd.ones(3))"),
        ("uniform_ctx", "nd.random.uniform(shape=(2,), ctx=mx.cpu(1))"),
        ("uniform_out", "nd.random.uniform(out=nd.zeros((2, 3)))"),
        ("normal", "nd.random.normal(0, 1, shape=(2, 2))"),
        ("normal_nd", "nd.random.normal(nd.zeros((2, 2)), nd.ones((2, 2)), shape=3)"),
        ("randn", "nd.random.randn(2, 3)"),
        ("randint", "nd.random.randint(0, 5, shape=(3,))"),
        ("randint_int64", "nd.random.randint(0, 5, shape=(3,), dtype='int64')"),
        ("randint_noshape", "nd.random.randint(0, 5)"),
        ("randint_float_error", "nd.random.randint(0, 5, shape=(2,), dtype='float32')"),
        ("exponential", "nd.random.exponential(2, shape=(2,))"),
        ("gamma", "nd.random.gamma(2, 3, shape=(2,))"),
        ("poisson", "nd.random.poisson(2, shape=(2,))"),
        ("negative_binomial", "nd.random.negative_binomial(3, 0.5, shape=(2,))"),
        ("generalized_negative_binomial", "nd.random.generalized_negative_binomial(3, 0.5, "
                                          "shape=(2,))"),
        ("multinomial", "nd.random.multinomial(nd.array([[0.1, 0.9], [0.5, 0.5]]))"),
        ("multinomial_shape", "nd.random.multinomial(nd.array([[0.1, 0.9], [0.5, 0.5]]), "
                              "shape=3)"),
        ("multinomial_1d", "nd.random.multinomial(nd.array([0.1, 0.9]), shape=(2, 2))"),
        ("multinomial_prob", "nd.random.multinomial(nd.array([0.1, 0.9]), get_prob=True)"),
        ("shuffle", "nd.random.shuffle(nd.arange(6).reshape((3, 2)))"),
        ("mx_random_uniform", "mx.random.uniform(shape=(2,))"),
        ("mx_random_normal", "mx.random.normal(shape=(2, 1))"),
    ]:
        snip("random", name, desc + f"result = d({call})")
    snip("random", "seed_bad", "mx.random.seed('a')")
    snip("random", "seed_ctx", "result = mx.random.seed(1, ctx=mx.cpu())")
    snip("random", "multinomial_values", "result = nd.random.multinomial(nd.array([[0., 1., 0.], "
                                         "[0., 0., 1.]]), shape=2)")
    snip("random", "shuffle_is_permutation", "x = nd.arange(10); y = nd.random.shuffle(x); "
                                             "result = [nd.sort(y), x]")


def misc_snippets():
    for name, code in [
        ("ctx_mix_lhs_wins", "result = [nd.ones(2, ctx=mx.cpu(0)) + nd.ones(2, ctx=mx.cpu(1)), "
                             "nd.ones(2, ctx=mx.cpu(1)) * nd.ones(2, ctx=mx.cpu(0)), "
                             "nd.concat(nd.ones(2, ctx=mx.cpu(1)), nd.ones(2), dim=0), "
                             "nd.dot(nd.ones((2, 2), ctx=mx.cpu(1)), nd.ones((2, 2)))]"),
        ("grad_ctx", "x = nd.ones(2, ctx=mx.cpu(1)); x.attach_grad(); result = x.grad"),
        ("setitem_from_other_ctx", "x = nd.zeros(2); x[:] = nd.ones(2, ctx=mx.cpu(1)); result = x"),
        ("copyto_from_other_ctx", "result = nd.ones(2, ctx=mx.cpu(1)).copyto(nd.zeros(2))"),
        ("repr_0d", "result = repr(nd.array(5))"),
        ("zero_d", "x = nd.array(5); result = [x.shape, x.size, x.reshape((1,)), x.asscalar()]"),
        ("bool_list", "result = nd.array([True, False])"),
        ("float16", "result = [nd.ones(2, dtype='float16') + 0.1, "
                    "nd.mean(nd.ones(3, dtype='float16'))]"),
        ("softmax_int_error", "result = nd.softmax(nd.array([1, 2], dtype='int32'))"),
        ("ties", "result = [nd.argmax(nd.array([1., 3., 3.]), axis=0), "
                 "nd.topk(nd.array([1., 3., 3., 2.]), k=2), "
                 "nd.argsort(nd.array([2., 1., 2., 1.])), "
                 "nd.argmin(nd.array([[2., 1., 1.]]), axis=1)]"),
        ("one_hot_negative", "result = nd.one_hot(nd.array([-1, 1]), 3)"),
        ("gather_scatter", "x = nd.array(np.arange(24).reshape((2, 3, 4))); result = ["
                           "nd.gather_nd(x, nd.array([[0, 1], [2, 0]])), nd.gather_nd(x, "
                           "nd.array([[1, 0, 1]])), nd.scatter_nd(nd.array([1., 2.]), "
                           "nd.array([[0, 1], [1, 0]]), shape=(2, 2)), nd.scatter_nd("
                           "nd.array([[1., 2.], [3., 4.]]), nd.array([[1, 0]]), shape=(3, 2))]"),
        ("diag_moments", "x = nd.array(np.arange(24).reshape((2, 3, 4))); result = ["
                         "nd.diag(nd.array(np.arange(9).reshape((3, 3)))), "
                         "nd.diag(nd.array(np.arange(12).reshape((3, 4))), k=1), "
                         "nd.diag(nd.array([1., 2.]), k=-1), nd.moments(x, axes=(1,)), "
                         "nd.moments(x, axes=(0, 2), keepdims=True)]"),
        ("logical", "a = nd.array([[1., 0., 2.]]); b = nd.array([[1.], [0.]]); result = ["
                    "nd.logical_and(nd.array([1., 0., 2.]), nd.array([1., 1., 0.])), "
                    "nd.logical_or(nd.array([1., 0., 0.]), nd.array([0., 0., 3.])), "
                    "nd.logical_xor(nd.array([1., 0., 2.]), nd.array([1., 1., 0.])), "
                    "nd.broadcast_logical_and(a, b), nd.broadcast_logical_or(a, b), "
                    "nd.broadcast_logical_xor(a, b)]"),
        ("more_ops", "x = nd.array(np.arange(24).reshape((2, 3, 4))); result = ["
                     "nd.moveaxis(x, 0, 2).shape, nd.concatenate([x, x], axis=1).shape, "
                     "nd.hard_sigmoid(nd.array([-5., 0., 1., 5.])), "
                     "nd.batch_take(nd.array([[1., 2.], [3., 4.], [5., 6.]]), nd.array([1, 0, 1], dtype='int32')), "
                     "nd.Reshape(x, shape=(4, -1)).shape, nd.broadcast_plus(x, nd.ones((1, 1, 4))), "
                     "nd.max_axis(x, axis=1), nd.min_axis(x, axis=2), nd.true_divide(x, x + 1), "
                     "x.softmin(axis=0), x.argmax_channel(), "
                     "nd.ones((1, 3)).broadcast_axes(axis=0, size=2).shape]"),
        ("broadcast_axis_not_one", "result = nd.broadcast_axis(nd.ones((2, 3)), axis=0, size=4)"),
        ("depth_space", "x = nd.array(np.arange(32).reshape((1, 8, 2, 2))); y = nd.depth_to_space(x, 2);"
                        " result = [y, nd.space_to_depth(y, 2), x.depth_to_space(2).shape]"),
        ("split_v2", "x = nd.array(np.arange(24).reshape((2, 3, 4))); result = ["
                     "nd.split_v2(x, 2, axis=2), nd.split_v2(x, (1, 3), axis=2), "
                     "nd.split_v2(x, 3, axis=1, squeeze_axis=True), x.split_v2(2)]"),
        ("finite_sumsq", "result = [nd.all_finite(nd.array([1., 2.])), "
                         "nd.all_finite(nd.array([1., np.inf])), nd.multi_all_finite(nd.ones(2), "
                         "nd.array([np.nan]), num_arrays=2), nd.multi_sum_sq(nd.array([1., 2.]), "
                         "nd.array([3.]), num_arrays=2)]"),
        ("ravel", "result = [nd.ravel_multi_index(nd.array([[1, 2], [0, 3]]), shape=(3, 4)), "
                  "nd.unravel_index(nd.array([5, 11]), shape=(3, 4))]"),
        ("reset_arrays", "a = nd.ones(2); b = nd.ones((2, 2)); nd.reset_arrays(a, b, num_arrays=2);"
                         " result = [a, b]"),
        ("pad_fluent", "result = nd.ones((1, 1, 2, 2)).pad(mode='constant', "
                       "pad_width=(0, 0, 0, 0, 1, 1, 1, 1), constant_value=3)"),
        ("contrib", "x = nd.array(np.arange(24).reshape((2, 3, 4))); result = ["
                    "nd.contrib.arange_like(x, axis=1), nd.contrib.arange_like(nd.ones((2, 3)), "
                    "start=1, step=0.5), nd.contrib.arange_like(nd.ones((5,)), repeat=2), "
                    "nd.contrib.boolean_mask(nd.array(np.arange(6).reshape((3, 2))), "
                    "nd.array([1, 0, 1])), nd.contrib.index_copy(nd.zeros((3, 2)), "
                    "nd.array([2, 0]), nd.ones((2, 2))), nd.contrib.div_sqrt_dim(nd.ones((2, 4)))]"),
        ("special_values", "result = [nd.sqrt(nd.array([-1.])), nd.log(nd.array([0.])), "
                           "nd.array([1., -1.]) / 0, nd.array([2., 3.]) ** nd.array([2., 2.]), "
                           "2.0 ** nd.array([2., 3.]), abs(nd.array([-1.5]))]"),
    ]:
        snip("misc", name, code)


def encode(v):
    """JSON form of a result (arrays with shape and dtype, contexts, types, errors)."""
    import mxnet as mx
    if isinstance(v, mx.nd.NDArray):
        a = v.asnumpy()
        return {"__nd__": a.tolist(), "shape": list(a.shape), "dtype": a.dtype.name,
                "ctx": str(v.context)}
    if isinstance(v, np.ndarray):
        return {"__np__": v.tolist(), "shape": list(v.shape), "dtype": v.dtype.name}
    if isinstance(v, np.generic):
        return {"__npscalar__": v.item(), "dtype": v.dtype.name}
    if isinstance(v, type):
        return {"__type__": v.__name__}
    if isinstance(v, mx.Context):
        return {"__ctx__": str(v)}
    if isinstance(v, BaseException):
        return {"__error__": type(v).__name__, "message": str(v).strip().splitlines()[-1][:200]
                if str(v).strip() else ""}
    if isinstance(v, (list, tuple)):
        return [encode(a) for a in v]
    if isinstance(v, dict):
        return {"__dict__": [[k, encode(a)] for k, a in v.items()]}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return {"__repr__": repr(v)}


def run_snippets(mx, group):
    from mxnet import nd, autograd
    out = []
    for s_ in SNIPPETS.get(group, []):
        mx.random.seed(0)
        env = {"mx": mx, "nd": nd, "autograd": autograd, "np": np}
        try:
            exec(s_["code"], env)  # noqa: S102 - our own test snippets
            enc = encode(env.get("result"))  # (MXNet raises some errors only on reading)
        except Exception as err:  # noqa: BLE001 - the error is the recorded result
            enc = encode(err)
        out.append(dict(name=s_["name"], code=s_["code"], tol=s_["tol"], result=enc))
    with open(os.path.join(OUT, f"snippets_{group}.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(f"snippets {group}: {len(out)}")


# ----------------------------------------------------------------------------- nd.save files
def io_content():
    """What both sides write: the same arrays, made without randomness."""
    return {
        "weight": (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 7,
        "f64": np.linspace(-1, 1, 5).astype(np.float64),
        "f16": (np.arange(6, dtype=np.float16) / 3).reshape(2, 3),
        "u8": np.arange(5, dtype=np.uint8) * 50,
        "i8": np.array([-128, -1, 0, 127], dtype=np.int8),
        "i32": np.array([[-7, 0], [3, 2 ** 30]], dtype=np.int32),
        "i64": np.array([-(2 ** 40), 5, 2 ** 50], dtype=np.int64),
        "flag": np.array([True, False, True]),
        "big.name/with:chars": np.ones((2, 1, 2), dtype=np.float32),
    }


def io_fixtures(mx):
    from mxnet import nd
    content = io_content()
    nd.save(os.path.join(OUT, "mx_dict.params"),
            {k: nd.array(v, dtype=v.dtype) for k, v in content.items()})
    nd.save(os.path.join(OUT, "mx_list.params"),
            [nd.array(content["weight"]), nd.array(content["i64"], dtype=np.int64)])
    nd.save(os.path.join(OUT, "mx_single.params"), nd.array([3.5, -1.0]))
    nd.save(os.path.join(OUT, "mx_empty.params"), [])
    rsp = nd.sparse.row_sparse_array((np.arange(6, dtype=np.float32).reshape(2, 3),
                                      np.array([1, 3], dtype=np.int64)), shape=(5, 3))
    csr = nd.sparse.csr_matrix((np.array([1., 2., 3.], np.float32), np.array([0, 2, 1]),
                                np.array([0, 2, 2, 3])), shape=(3, 4))
    nd.save(os.path.join(OUT, "mx_sparse.params"), {"rsp": rsp, "csr": csr,
                                                    "dense": nd.ones((2, 2))})
    np.savez(os.path.join(OUT, "io_content.npz"), **content)
    print("io: MXNet files written")


def write_neogluon_file(path):
    """Run with neogluon's interpreter: write ``io_content`` with neogluon's nd.save."""
    sys.path.insert(0, os.path.join(HERE, ".."))
    from neogluon import nd
    content = io_content()
    nd.save(path, {k: nd.array(v, dtype=v.dtype) for k, v in content.items()})
    nd.save(path + ".list", [nd.array(content["weight"]), nd.array(content["i64"], dtype="int64")])


def verify_neogluon_file(mx, path):
    """Load a neogluon-written file in MXNet and check every array, name, dtype and value."""
    from mxnet import nd
    content = io_content()
    report = {"file": os.path.basename(path), "mxnet": mx.__version__, "checks": {}}
    loaded = nd.load(path)
    ok = isinstance(loaded, dict) and sorted(loaded) == sorted(content)
    report["checks"]["names"] = bool(ok)
    for k, v in content.items():
        a = loaded.get(k) if isinstance(loaded, dict) else None
        good = (a is not None and a.shape == v.shape and np.dtype(a.dtype) == v.dtype
                and np.array_equal(a.asnumpy(), v) and str(a.context) == "cpu(0)")
        report["checks"][k] = bool(good)
    lst = nd.load(path + ".list")
    report["checks"]["list"] = bool(
        isinstance(lst, list) and len(lst) == 2
        and np.array_equal(lst[0].asnumpy(), content["weight"])
        and np.array_equal(lst[1].asnumpy(), content["i64"]) and lst[1].dtype == np.int64)
    report["all_ok"] = all(report["checks"].values())
    with open(os.path.join(OUT, "neogluon_file_in_mxnet.json"), "w") as f:
        json.dump(report, f, indent=1)
    print("neogluon file loaded in MXNet:", "OK" if report["all_ok"] else report)
    return report


def roundtrip_check(mx):
    """Write a file with neogluon (the dev venv) and verify it in MXNet."""
    import subprocess
    import tempfile
    venv = os.path.join(HERE, "..", ".venv", "bin", "python")
    if not os.path.exists(venv):
        print("no .venv: skipping the neogluon -> MXNet check")
        return
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "neogluon.params")
        subprocess.run([venv, os.path.abspath(__file__), "--write-neogluon-file", path],
                       check=True)
        verify_neogluon_file(mx, path)


def main():
    import mxnet as mx
    os.makedirs(OUT, exist_ok=True)
    mx.random.seed(0)
    nn_cases()
    write_cases(mx, "nn_ops")
    op_cases()
    write_cases(mx, "ops")
    snippet_cases()
    autograd_snippets()
    random_snippets()
    misc_snippets()
    for group in sorted(SNIPPETS):
        run_snippets(mx, group)
    io_fixtures(mx)
    roundtrip_check(mx)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--verify-neogluon-file":
        import mxnet as mx
        verify_neogluon_file(mx, sys.argv[2])
    elif len(sys.argv) > 2 and sys.argv[1] == "--write-neogluon-file":
        write_neogluon_file(sys.argv[2])
    else:
        main()
