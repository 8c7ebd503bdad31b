"""GluonCV's quantized ``*_int8`` models on fixed inputs and parameters, run the same way on
MXNet 1.9.1 (tools/gen_quantized_fixtures.py) and on neogluon through the mxnet alias
(tests/test_quantized.py runs this file with ``python -m neogluon.run``).

    python quantized_cases.py OUT.npz [case ...]

Each model is built by ``gluoncv.model_zoo.get_model(name, pretrained=False)`` (the float
model it builds to read the class names gets ``pretrained_base=False``, so nothing is
downloaded), initialised, and given parameters drawn from a seed made from each parameter's
name. Recorded: the inference outputs, the int8/uint8 codes of a few internal quantized nodes,
and what a recorded forward + backward does (MXNet 1.9.1 fails for graphs with a quantized max
pooling; elsewhere the quantized operators get zero gradients).
"""
import sys
import warnings
import zlib

import numpy as np

warnings.filterwarnings("ignore")

# name: (input shape, internal outputs whose codes are recorded)
MODELS = {
    "resnet50_v1_int8": ((1, 3, 64, 64), ["quantized_resnetv10_pool0_fwd_output",
                                          "quantized_sg_mkldnn_conv_bn_add_relu_26_output",
                                          "quantized_resnetv10_pool1_fwd_output"]),
    "mobilenet1.0_int8": ((1, 3, 64, 64), ["quantized_sg_mkldnn_conv_bn_relu_1_output",
                                           "quantized_sg_mkldnn_conv_bn_relu_26_output"]),
    "simple_pose_resnet18_v1b_int8": ((1, 3, 64, 48), []),
    "ssd_512_mobilenet1.0_voc_int8": ((1, 3, 128, 128), []),
}


def get_int8(name):
    """The model as the sweep builds it (tools/gluoncv_zoo_sweep.py: ``pretrained=False``,
    and ``pretrained_base=False`` for the float model it reads the classes from)."""
    import os
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "tools"))
    from gluoncv_zoo_sweep import int8_model
    return int8_model(name)


def fill(mx, net):
    for name, p in net.collect_params().items():
        rng = np.random.RandomState(zlib.crc32(name.encode()) % (2 ** 31))
        shape = p.shape
        if name.endswith(("running_var", "moving_var")):
            v = rng.uniform(0.5, 1.5, shape)
        elif name.endswith(("running_mean", "moving_mean")):
            v = rng.uniform(-0.1, 0.1, shape)
        elif name.endswith("gamma"):
            v = rng.uniform(0.8, 1.5, shape)
        elif name.endswith(("beta", "bias")):
            v = rng.uniform(-0.1, 0.2, shape)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
            v = rng.uniform(-1, 1, shape) * np.sqrt(6.0 / max(fan_in, 1))
        p.set_data(mx.nd.array(v.astype("float32")))


def model_json(name):
    """The symbol JSON GluonCV ships for ``name``."""
    import os
    from gluoncv.model_zoo.quantized import quantized
    path = os.path.join(os.path.dirname(quantized.__file__), name + "-symbol.json")
    if os.path.exists(path):
        with open(path) as f:
            return f.read()
    from gluoncv.utils.compress_json import get_compressed_model
    return get_compressed_model(name, quantized._compressed_int8_json)


def _seeded_outputs(mx, net, shape, key, res):
    """Initialise ``net``, run the seeded input once (deferred shapes), set the seeded
    parameters, run it again and record its outputs under ``key``; returns the input."""
    net.collect_params().initialize()
    x = mx.nd.array(np.random.RandomState(7).normal(0, 1, shape).astype("float32"))
    net(x)
    fill(mx, net)
    outs = net(x)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    for j, o in enumerate(outs):
        res[f"{key}/out{j}"] = o.asnumpy()
    return x


def run_model(mx, name, res):
    shape, internals = MODELS[name]
    net = get_int8(name)
    x = _seeded_outputs(mx, net, shape, name, res)
    if internals:
        sym = mx.sym.load_json(model_json(name)).get_internals()
        sub = mx.gluon.SymbolBlock([sym[n] for n in internals], [mx.sym.var("data")],
                                   params=net.collect_params())
        codes = sub(x)
        codes = list(codes) if isinstance(codes, (list, tuple)) else [codes]
        for n, c in zip(internals, codes):
            res[f"{name}/internal/{n}"] = c.asnumpy()
    # recorded forward + backward
    try:
        with mx.autograd.record():
            o = net(x)
            o = o[0] if isinstance(o, (list, tuple)) else o
            loss = o.astype("float32").mean()
        loss.backward()
        grads = [(k, p.grad().asnumpy()) for k, p in net.collect_params().items()
                 if p.grad_req != "null"]
        res[f"{name}/backward_ok"] = np.array(1)
        res[f"{name}/grads_nonzero"] = np.array(sorted(k for k, g in grads
                                                       if np.abs(g).sum() > 0))
        res[f"{name}/grads_total"] = np.array(len(grads))
    except Exception as e:  # noqa: BLE001 - what MXNet does is what is recorded
        res[f"{name}/backward_ok"] = np.array(0)
        res[f"{name}/backward_error"] = np.array(str(e).strip().splitlines()[-1][:300])


# Every int8 graph GluonCV ships, loaded straight into a SymbolBlock (6 of the 22 models
# cannot be built through get_model without a network, in MXNet 1.9.1 as here): input shapes
# for ``graph:<name>`` cases.
GRAPH_INPUTS = {"fcn": (1, 3, 128, 128), "psp": (1, 3, 480, 480), "deeplab": (1, 3, 480, 480),
                "simple_pose": (1, 3, 64, 48), "ssd_300": (1, 3, 300, 300),
                "ssd_512_vgg16": (1, 3, 512, 512), "ssd_512": (1, 3, 256, 256),
                "vgg16_ucf101": (3, 3, 224, 224),
                "inceptionv3_ucf101": (3, 3, 299, 299),
                "inceptionv3_kinetics400": (3, 3, 299, 299),
                "resnet18_v1b_kinetics400": (7, 3, 64, 64),
                "resnet50_v1b_kinetics400": (7, 3, 64, 64)}


def run_graph(mx, name, res):
    shape = next((v for k, v in GRAPH_INPUTS.items() if name.startswith(k)), (1, 3, 64, 64))
    net = mx.gluon.SymbolBlock(mx.sym.load_json(model_json(name)), [mx.sym.var("data")])
    _seeded_outputs(mx, net, shape, f"graph:{name}", res)


def main(argv):
    import mxnet as mx
    out = argv[0]
    names = argv[1:] or list(MODELS)
    res = {}
    for name in names:
        if name.startswith("graph:"):
            try:
                run_graph(mx, name[6:], res)
            except Exception as e:  # noqa: BLE001 - recorded, the next graph runs
                res[f"{name}/error"] = np.array(str(e).strip().splitlines()[-1][:300])
        else:
            run_model(mx, name, res)
    np.savez(out, **res)


if __name__ == "__main__":
    main(sys.argv[1:])
