"""Hand-made ONNX models for the import tests, built with ``onnx.helper`` only.

Shared by tools/gen_onnx_import_fixtures.py (which imports each with MXNet 1.9.1, onnx 1.14)
and tests/test_onnx_import.py (neogluon, the installed onnx). Initializers are also listed as
graph inputs (MXNet 1.9.1's importer looks parameters up among the graph's inputs), and the
opsets are ones MXNet's importer knows (<= 11). Values are deterministic.
"""
import numpy as np

OPSET = 11


def _rng(seed):
    return np.random.RandomState(seed)


def _arr(rng, *shape, positive=False):
    a = rng.uniform(-1, 1, size=shape).astype(np.float32)
    return np.abs(a) + 0.5 if positive else a


def _model(nodes, inputs, outputs, inits, name, opset=OPSET):
    from onnx import helper, numpy_helper, TensorProto
    tensors = [numpy_helper.from_array(v, k) for k, v in inits.items()]

    def vi(n, shape, dt=TensorProto.FLOAT):
        return helper.make_tensor_value_info(n, dt, shape)
    elem = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64}
    graph = helper.make_graph(
        nodes, name,
        [vi(n, s) for n, s in inputs]
        + [vi(k, v.shape, elem[v.dtype]) for k, v in inits.items()],
        [vi(n, s) for n, s in outputs], initializer=tensors)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="neogluon-tests")
    model.ir_version = 6
    return model


def cnn():
    """Conv (bias), BatchNormalization, Relu, MaxPool, AveragePool, GlobalAveragePool,
    Flatten, Gemm (transB) -- the layers of a small classifier."""
    from onnx import helper
    r = _rng(1)
    inits = {"conv_w": _arr(r, 4, 3, 3, 3), "conv_b": _arr(r, 4),
             "bn_gamma": _arr(r, 4, positive=True), "bn_beta": _arr(r, 4),
             "bn_mean": _arr(r, 4), "bn_var": _arr(r, 4, positive=True),
             "conv2_w": _arr(r, 6, 4, 1, 1),
             "fc_w": _arr(r, 5, 6), "fc_b": _arr(r, 5)}
    nodes = [
        helper.make_node("Conv", ["data", "conv_w", "conv_b"], ["c1"], name="conv0",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn_gamma", "bn_beta", "bn_mean",
                                                "bn_var"], ["b1"], name="bn0", epsilon=1e-3),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu0"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool0", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2_w"], ["c2"], name="conv1", kernel_shape=[1, 1]),
        helper.make_node("AveragePool", ["c2"], ["p2"], name="pool1", kernel_shape=[2, 2],
                         strides=[1, 1]),
        helper.make_node("GlobalAveragePool", ["p2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flat"),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["out"], name="fc", transB=1),
    ]
    return _model(nodes, [("data", [2, 3, 8, 8])], [("out", [2, 5])], inits, "cnn"), \
        {"data": _arr(_rng(11), 2, 3, 8, 8)}


def elementwise():
    """Arithmetic, unary functions and variadic Sum/Max/Min/Mean on two same-shape inputs."""
    from onnx import helper
    r = _rng(2)
    inits = {"bias": _arr(r, 3, 4)}
    n = helper.make_node
    nodes = [
        n("Add", ["x", "y"], ["a"], name="add0"),
        n("Sub", ["a", "bias"], ["s"], name="sub0"),
        n("Mul", ["s", "y"], ["m"], name="mul0"),
        n("Abs", ["m"], ["ab"], name="abs0"),
        n("Sqrt", ["ab"], ["sq"], name="sqrt0"),
        n("Neg", ["sq"], ["ng"], name="neg0"),
        n("Exp", ["ng"], ["ex"], name="exp0"),
        n("Div", ["ex", "ab"], ["dv"], name="div0"),
        n("Tanh", ["x"], ["th"], name="tanh0"),
        n("Sigmoid", ["y"], ["sg"], name="sigmoid0"),
        n("Max", ["th", "sg", "x"], ["mx"], name="max0"),
        n("Min", ["th", "sg"], ["mn"], name="min0"),
        n("Sum", ["mx", "mn", "dv"], ["sm"], name="sum0"),
        n("Floor", ["sm"], ["fl"], name="floor0"),
        n("Ceil", ["sm"], ["cl"], name="ceil0"),
        n("Add", ["fl", "cl"], ["o1"], name="add1"),
        n("Log", ["ex"], ["lg"], name="log0"),
        n("Reciprocal", ["ex"], ["rc"], name="reciprocal0"),
        n("Sum", ["lg", "rc"], ["o2"], name="sum1"),
    ]
    return _model(nodes, [("x", [3, 4]), ("y", [3, 4])], [("o1", [3, 4]), ("o2", [3, 4])],
                  inits, "elementwise"), \
        {"x": _arr(_rng(12), 3, 4), "y": _arr(_rng(13), 3, 4)}


def shapes():
    """Reshape (shape initializer), Transpose, Slice, Squeeze, Unsqueeze, Concat, Split,
    Flatten (opset 9: Slice's starts/ends as attributes, as MXNet 1.9.1 reads them; its
    opset-10 path passes them on as floats, which MXNet's slice_axis refuses)."""
    from onnx import helper
    n = helper.make_node
    inits = {"shape": np.array([2, 3, 4], dtype=np.int64)}
    nodes = [
        n("Reshape", ["x", "shape"], ["r"], name="reshape0"),
        n("Transpose", ["r"], ["t"], name="transpose0", perm=[0, 2, 1]),
        n("Slice", ["t"], ["sl"], name="slice0", starts=[0, 1], ends=[2, 3], axes=[0, 1]),
        n("Unsqueeze", ["sl"], ["u"], name="unsqueeze0", axes=[1]),
        n("Squeeze", ["u"], ["sq"], name="squeeze0", axes=[1]),
        n("Concat", ["sq", "sl"], ["c"], name="concat0", axis=1),
        n("Split", ["c"], ["s0", "s1"], name="split0", axis=1),
        n("Flatten", ["s1"], ["o2"], name="flatten0"),
        n("Identity", ["s0"], ["o1"], name="identity0"),
    ]
    return _model(nodes, [("x", [6, 4])], [("o1", [2, 2, 3]), ("o2", [2, 6])], inits,
                  "shapes", opset=9), {"x": _arr(_rng(14), 6, 4)}


def norms():
    """InstanceNormalization, LRN, LeakyRelu, Elu, Softmax, Pad (opset 11)."""
    from onnx import helper
    r = _rng(3)
    n = helper.make_node
    inits = {"in_gamma": _arr(r, 3, positive=True), "in_beta": _arr(r, 3),
             "pads": np.array([0, 0, 1, 1, 0, 0, 1, 1], dtype=np.int64)}
    nodes = [
        n("InstanceNormalization", ["x", "in_gamma", "in_beta"], ["i"], name="in0",
          epsilon=1e-4),
        n("LRN", ["i"], ["l"], name="lrn0", size=3, alpha=1e-3, beta=0.75, bias=2.0),
        n("LeakyRelu", ["l"], ["lr"], name="leaky0", alpha=0.2),
        n("Elu", ["lr"], ["e"], name="elu0", alpha=0.7),
        n("Pad", ["e", "pads"], ["pd"], name="pad0", mode="constant"),
        n("Softmax", ["x"], ["o2"], name="softmax0", axis=1),
        n("Identity", ["pd"], ["o1"], name="identity0"),
    ]
    return _model(nodes, [("x", [2, 3, 4, 4])], [("o1", [2, 3, 6, 6]), ("o2", [2, 3, 4, 4])],
                  inits, "norms"), {"x": _arr(_rng(15), 2, 3, 4, 4)}


def reduce():
    """ReduceMean/ReduceSum/ReduceMax (keepdims given), ArgMax, MatMul, Gather, Clip
    (opset-11 inputs), Dropout, Cast."""
    from onnx import helper, TensorProto
    r = _rng(4)
    n = helper.make_node
    inits = {"w": _arr(r, 4, 5), "idx": np.array([2, 0], dtype=np.int64),
             "lo": np.array(-0.3, dtype=np.float32), "hi": np.array(0.4, dtype=np.float32)}
    nodes = [
        n("MatMul", ["x", "w"], ["mm"], name="matmul0"),
        n("Clip", ["mm", "lo", "hi"], ["cp"], name="clip0"),
        n("Dropout", ["cp"], ["dp"], name="dropout0", ratio=0.5),
        n("ReduceMean", ["dp"], ["o1"], name="mean0", axes=[1], keepdims=1),
        n("ReduceSum", ["dp"], ["o2"], name="sum0", axes=[0], keepdims=0),
        n("ReduceMax", ["dp"], ["o3"], name="max0", axes=[1], keepdims=0),
        n("ArgMax", ["x"], ["am"], name="argmax0", axis=1, keepdims=0),
        n("Cast", ["am"], ["o4"], name="cast0", to=TensorProto.FLOAT),
        n("Gather", ["x", "idx"], ["o5"], name="gather0", axis=0),
    ]
    return _model(nodes, [("x", [3, 4])],
                  [("o1", [3, 1]), ("o2", [5]), ("o3", [3]), ("o4", [3]), ("o5", [2, 4])],
                  inits, "reduce"), {"x": _arr(_rng(16), 3, 4)}


def deconv():
    """ConvTranspose (stride 2, no pads), Sigmoid."""
    from onnx import helper
    r = _rng(5)
    n = helper.make_node
    inits = {"dw": _arr(r, 3, 2, 3, 3), "db": _arr(r, 2)}
    nodes = [n("ConvTranspose", ["x", "dw", "db"], ["d"], name="deconv0", kernel_shape=[3, 3],
               strides=[2, 2]),
             n("Sigmoid", ["d"], ["o"], name="sigmoid0")]
    return _model(nodes, [("x", [1, 3, 4, 4])], [("o", [1, 2, 9, 9])], inits, "deconv"), \
        {"x": _arr(_rng(17), 1, 3, 4, 4)}


def prelu():
    """PRelu with a per-channel (C, 1, 1) slope, as ONNX broadcasts it (MXNet 1.9.1's
    importer hands the slope to LeakyReLU unchanged, which cannot broadcast it)."""
    from onnx import helper
    inits = {"slope": _arr(_rng(6), 3, 1, 1)}
    nodes = [helper.make_node("PRelu", ["x", "slope"], ["o"], name="prelu0")]
    return _model(nodes, [("x", [2, 3, 4, 4])], [("o", [2, 3, 4, 4])], inits, "prelu"), \
        {"x": _arr(_rng(18), 2, 3, 4, 4)}


CASES = {"cnn": cnn, "elementwise": elementwise, "shapes": shapes, "norms": norms,
         "reduce": reduce, "deconv": deconv, "prelu": prelu}
