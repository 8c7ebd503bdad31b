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
    case("ctc_loss", "CTCLoss", [R(6, 2, 4), np.array([[1, 2, 0], [3, 3, 1]], np.float32)], {},
         grad=(0,))


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
    np.savez(os.path.join(OUT, "io_content.npz"), **content)
    print("io: MXNet files written")


def write_neogluon_file(path):
    """Run with neogluon's interpreter: write ``io_content`` with neogluon's nd.save."""
    sys.path.insert(0, os.path.join(HERE, ".."))
    from neogluon import nd
    content = io_content()
    nd.save(path, {k: nd.array(v, dtype=v.dtype) for k, v in content.items()})
    nd.save(path + ".list", [nd.array(content["weight"]), nd.array(content["i64"])])


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
    for name in EXTRA:
        name(mx)
    io_fixtures(mx)
    roundtrip_check(mx)


EXTRA = []

if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--verify-neogluon-file":
        import mxnet as mx
        verify_neogluon_file(mx, sys.argv[2])
    elif len(sys.argv) > 2 and sys.argv[1] == "--write-neogluon-file":
        write_neogluon_file(sys.argv[2])
    else:
        main()
