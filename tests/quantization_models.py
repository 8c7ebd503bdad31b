"""Float models, parameters and calibration data shared by tools/gen_quantization_fixtures.py
(run under MXNet 1.9.1) and tests/test_quantization.py (run under neogluon).

Everything is built from ``mx.sym`` calls and numpy RandomStates, so the two sides see the
same float32 values without storing parameters.
"""
import gzip
import os

import numpy as np

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "quantization")


def mlp(mx):
    d = mx.sym.var("data")
    x = mx.sym.FullyConnected(d, num_hidden=32, name="fc1")
    x = mx.sym.Activation(x, act_type="relu", name="relu1")
    x = mx.sym.FullyConnected(x, num_hidden=16, name="fc2")
    x = mx.sym.Activation(x, act_type="relu", name="relu2")
    return mx.sym.FullyConnected(x, num_hidden=10, name="fc3")


def cnn(mx):
    d = mx.sym.var("data")
    x = mx.sym.Convolution(d, kernel=(3, 3), num_filter=8, pad=(1, 1), name="conv0")
    x = mx.sym.BatchNorm(x, fix_gamma=False, name="bn0")
    x = mx.sym.Activation(x, act_type="relu", name="relu0")
    x = mx.sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool0")
    x = mx.sym.Convolution(x, kernel=(3, 3), num_filter=16, pad=(1, 1), no_bias=True,
                           name="conv1")
    x = mx.sym.BatchNorm(x, fix_gamma=False, name="bn1")
    x = mx.sym.Activation(x, act_type="relu", name="relu1")
    x = mx.sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="avg", name="pool1")
    x = mx.sym.Flatten(x, name="flat0")
    return mx.sym.FullyConnected(x, num_hidden=10, name="fc0")


def resnet18(mx):
    """GluonCV/MXNet model zoo resnet18_v1 (1000 classes) as MXNet 1.9.1 exports it."""
    with gzip.open(os.path.join(FIX, "resnet18_v1-symbol.json.gz"), "rt") as f:
        return mx.sym.load_json(f.read())


def mixed(mx):
    """A BatchNorm + relu on a pooled input (not fused into a convolution), a convolution
    summed with that pooled input, a relu after the sum and a sigmoid after the last
    layer (not quantizable)."""
    d = mx.sym.var("data")
    p = mx.sym.Pooling(d, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool0")
    b = mx.sym.BatchNorm(p, fix_gamma=False, name="bn0")
    r = mx.sym.Activation(b, act_type="relu", name="relu0")
    c = mx.sym.Convolution(r, kernel=(3, 3), num_filter=3, pad=(1, 1), name="conv0")
    a = mx.sym.elemwise_add(c, p, name="add0")
    r2 = mx.sym.Activation(a, act_type="relu", name="relu1")
    f = mx.sym.FullyConnected(r2, num_hidden=10, name="fc0")
    return mx.sym.Activation(f, act_type="sigmoid", name="sig0")


def addpool(mx):
    """Two poolings of one convolution summed (a quantized elemwise_add of its own, outside
    any convolution) before the classifier."""
    d = mx.sym.var("data")
    c = mx.sym.Convolution(d, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv0")
    r = mx.sym.Activation(c, act_type="relu", name="relu0")
    p1 = mx.sym.Pooling(r, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool0")
    p2 = mx.sym.Pooling(r, kernel=(2, 2), stride=(2, 2), pool_type="avg", name="pool1")
    a = mx.sym.elemwise_add(p1, p2, name="add0")
    return mx.sym.FullyConnected(a, num_hidden=10, name="fc0")


MODELS = {"mlp": (mlp, (20,)), "cnn": (cnn, (3, 12, 12)), "resnet18": (resnet18, (3, 32, 32)),
          "mixed": (mixed, (3, 12, 12)), "addpool": (addpool, (3, 12, 12))}


def params(mx, sym, in_shape, seed=0):
    """Seeded float parameters (arg_params, aux_params) as numpy float32 arrays: He-scaled
    weights, small biases, BatchNorm statistics around (0, 1)."""
    arg_shapes, _, aux_shapes = sym.infer_shape(data=(1,) + tuple(in_shape))
    rng = np.random.RandomState(seed)
    args, auxs = {}, {}
    for name, shape in zip(sym.list_arguments(), arg_shapes):
        if name == "data":
            continue
        shape = tuple(shape)
        if name.endswith("weight"):
            fan_in = int(np.prod(shape[1:]))
            v = rng.randn(*shape) * np.sqrt(2.0 / fan_in)
        elif name.endswith("gamma"):
            v = rng.uniform(0.5, 1.5, shape)
        else:
            v = rng.randn(*shape) * 0.1
        args[name] = v.astype(np.float32)
    for name, shape in zip(sym.list_auxiliary_states(), aux_shapes):
        shape = tuple(shape)
        if name.endswith("var"):
            v = rng.uniform(0.5, 1.5, shape)
        else:
            v = rng.randn(*shape) * 0.1
        auxs[name] = v.astype(np.float32)
    return args, auxs


def calib_data(in_shape, n=8, seed=1):
    return np.random.RandomState(seed).randn(n, *in_shape).astype(np.float32)


def test_data(in_shape, n=4, seed=2):
    return np.random.RandomState(seed).randn(n, *in_shape).astype(np.float32)


def hist_cases():
    """Arrays for the entropy (KL) threshold search: name -> list of batches."""
    rng = np.random.RandomState(3)
    out = {}
    out["normal"] = [rng.randn(4000).astype(np.float32), rng.randn(3000).astype(np.float32) * 1.5]
    out["relu"] = [np.maximum(rng.randn(5000), 0).astype(np.float32)]
    out["laplace_outliers"] = [np.concatenate([rng.laplace(0, 0.3, 6000), [25.0, -9.0]]).astype(
        np.float32)]
    out["uniform"] = [rng.uniform(-2, 3, 2000).astype(np.float32)]
    out["sparse"] = [np.where(rng.rand(3000) < 0.9, 0, rng.randn(3000)).astype(np.float32)]
    out["grow"] = [rng.randn(1000).astype(np.float32) * 0.5, rng.randn(1000).astype(np.float32) * 4,
                   rng.randn(1000).astype(np.float32) * 2]
    return out
