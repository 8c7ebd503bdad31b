"""MXNet JSON graphs of single quantized operators, in the form MXNet's quantization pass (and
GluonCV's ``*_int8`` symbol files) writes them: ``_sg_mkldnn_conv`` nodes carry a nested
``subgraphs`` symbol with the fused Convolution / BatchNorm / Activation / elemwise_add.

Pure Python (json only): tools/gen_quantized_fixtures.py builds the graphs under MXNet 1.9.1
and tests/test_quantized.py loads the same JSON under neogluon.
"""
import json


class Graph:
    """A small MXNet graph writer: ``var`` and ``op`` append nodes, ``tojson`` writes it."""

    def __init__(self):
        self.nodes = []
        self.arg_nodes = []
        self.nout = []

    def var(self, name, shape=None):
        node = {"op": "null", "name": name, "inputs": []}
        if shape is not None:
            node["attrs"] = {"__shape__": str(tuple(shape))}
        self.nodes.append(node)
        self.nout.append(1)
        self.arg_nodes.append(len(self.nodes) - 1)
        return (len(self.nodes) - 1, 0)

    def op(self, op, name, inputs, attrs=None, nout=1, subgraphs=None):
        node = {"op": op, "name": name, "inputs": [[i, j, 0] for i, j in inputs]}
        if attrs:
            node["attrs"] = {k: str(v) for k, v in attrs.items()}
        if subgraphs:
            node["subgraphs"] = subgraphs
        self.nodes.append(node)
        self.nout.append(nout)
        idx = len(self.nodes) - 1
        return [(idx, k) for k in range(nout)] if nout > 1 else (idx, 0)

    def desc(self, heads):
        ptr = [0]
        for n in self.nout:
            ptr.append(ptr[-1] + n)
        return {"nodes": self.nodes, "arg_nodes": self.arg_nodes, "node_row_ptr": ptr,
                "heads": [[i, j, 0] for i, j in heads],
                "attrs": {"mxnet_version": ["int", 10901]}}

    def tojson(self, heads):
        return json.dumps(self.desc(heads))


def conv_subgraph(conv_attrs, no_bias, with_bn, act, with_sum, postsum_act, bn_attrs=None):
    """The fused float graph an ``_sg_mkldnn_conv`` node holds; its variables come in the
    order of the node's inputs (data, weight, [bias], [gamma, beta, mean, var], [sum])."""
    g = Graph()
    data = g.var("data0")
    w = g.var("weight0")
    ins = [data, w]
    if not no_bias:
        ins.append(g.var("bias0"))
    a = dict(conv_attrs, no_bias=str(bool(no_bias)))
    out = g.op("Convolution", "conv", ins, a)
    if with_bn:
        bn = [g.var(n + "0") for n in ("gamma", "beta", "mean", "var")]
        out = g.op("BatchNorm", "bn", [out] + bn, bn_attrs or
                   {"eps": "1e-05", "fix_gamma": "False", "momentum": "0.9",
                    "use_global_stats": "False", "axis": "1"}, nout=3)[0]
    if act:
        out = g.op("Activation", "act", [out], {"act_type": act})
    if with_sum:
        s = g.var("sum0")
        out = g.op("elemwise_add", "add", [out, s])
        if postsum_act:
            out = g.op("Activation", "postsum_act", [out], {"act_type": postsum_act})
    return g.desc([out])


def quantized_conv_graph(data_shape, num_filter, kernel, stride=(1, 1), pad=(0, 0),
                         num_group=1, dilate=(1, 1), no_bias=True, with_bn=False,
                         act=None, with_sum=False, postsum_act=None, data_calib=(-1.0, 1.0),
                         sum_calib=None, out_calib=(-1.0, 1.0), legacy_names=False,
                         dequantize=True, bn_eps=1e-5, fix_gamma=False):
    """quantize_v2 (data) -> _sg_mkldnn_conv -> dequantize; with_sum adds a second quantized
    input ``sumdata``. ``out_calib=None`` leaves the calibration range out (int32 output).
    ``legacy_names`` writes MXNet 1.5's ``with_relu``/``with_postsum_relu``."""
    g = Graph()
    x = g.var("data", data_shape)
    qx = g.op("_contrib_quantize_v2", "data_quantize", [x],
              {"out_type": "auto", "min_calib_range": "%.6f" % data_calib[0],
               "max_calib_range": "%.6f" % data_calib[1]}, nout=3)
    ins = [qx[0], g.var("weight")]
    if not no_bias:
        ins.append(g.var("bias"))
    if with_bn:
        ins += [g.var(n) for n in ("gamma", "beta", "moving_mean", "moving_var")]
    if with_sum:
        s = g.var("sumdata")
        qs = g.op("_contrib_quantize_v2", "sum_quantize", [s],
                  {"out_type": "auto", "min_calib_range": "%.6f" % sum_calib[0],
                   "max_calib_range": "%.6f" % sum_calib[1]}, nout=3)
        ins.append(qs[0])
    ins += [qx[1], qx[2]]
    if with_sum:
        ins += [qs[1], qs[2]]
    attrs = {"quantized": "true"}
    if out_calib is not None:
        attrs["min_calib_range"] = "%.6f" % out_calib[0]
        attrs["max_calib_range"] = "%.6f" % out_calib[1]
    if with_bn:
        attrs["with_bn"] = "true"
    if act:
        attrs["with_relu" if legacy_names else "with_act"] = "true"
    if with_sum:
        attrs["with_sum"] = "true"
        if postsum_act:
            attrs["with_postsum_relu" if legacy_names else "with_postsum_act"] = "true"
    conv_attrs = {"kernel": str(tuple(kernel)), "stride": str(tuple(stride)),
                  "pad": str(tuple(pad)), "dilate": str(tuple(dilate)),
                  "num_filter": str(num_filter), "num_group": str(num_group),
                  "layout": "NCHW"}
    bn_attrs = {"eps": repr(bn_eps), "fix_gamma": str(bool(fix_gamma)), "momentum": "0.9",
                "use_global_stats": "False", "axis": "1"}
    sub = conv_subgraph(conv_attrs, no_bias, with_bn, act, with_sum, postsum_act, bn_attrs)
    out = g.op("_sg_mkldnn_conv", "quantized_conv", ins, attrs, nout=3, subgraphs=[sub])
    heads = out
    if dequantize:
        heads = [g.op("_contrib_dequantize", "conv_dequantize", out)]
    return g.tojson(heads)


def quantize_graph(data_shape, out_type="auto", calib=None, dequantize=False):
    g = Graph()
    x = g.var("data", data_shape)
    attrs = {"out_type": out_type}
    if calib is not None:
        attrs["min_calib_range"] = "%.6f" % calib[0]
        attrs["max_calib_range"] = "%.6f" % calib[1]
    q = g.op("_contrib_quantize_v2", "data_quantize", [x], attrs, nout=3)
    if dequantize:
        return g.tojson([g.op("_contrib_dequantize", "data_dequantize", q)])
    return g.tojson(q)


def pooling_graph(data_shape, calib, **pool_attrs):
    g = Graph()
    x = g.var("data", data_shape)
    q = g.op("_contrib_quantize_v2", "data_quantize", [x],
             {"out_type": "auto", "min_calib_range": "%.6f" % calib[0],
              "max_calib_range": "%.6f" % calib[1]}, nout=3)
    p = g.op("_contrib_quantized_pooling", "quantized_pool", q, pool_attrs, nout=3)
    return g.tojson(p)


def concat_graph(shapes, calibs, dim=1, dequantize=False):
    g = Graph()
    qs = []
    for i, (shp, cal) in enumerate(zip(shapes, calibs)):
        x = g.var("data%d" % i, shp)
        qs.append(g.op("_contrib_quantize_v2", "data%d_quantize" % i, [x],
                       {"out_type": "auto", "min_calib_range": "%.6f" % cal[0],
                        "max_calib_range": "%.6f" % cal[1]}, nout=3))
    ins = [q[0] for q in qs] + [e for q in qs for e in q[1:]]
    c = g.op("_contrib_quantized_concat", "quantized_concat", ins,
             {"dim": dim, "num_args": len(shapes)}, nout=3)
    if dequantize:
        return g.tojson([g.op("_contrib_dequantize", "concat_dequantize", c)])
    return g.tojson(c)


def fc_graph(data_shape, num_hidden, no_bias=False, with_eltwise=False, flatten=True):
    """A float ``_sg_mkldnn_fully_connected`` (FullyConnected [+ relu] fused)."""
    sub = Graph()
    ins = [sub.var("data0"), sub.var("weight0")]
    if not no_bias:
        ins.append(sub.var("bias0"))
    out = sub.op("FullyConnected", "fc", ins, {"num_hidden": num_hidden,
                                               "no_bias": str(bool(no_bias)),
                                               "flatten": str(bool(flatten))})
    if with_eltwise:
        out = sub.op("Activation", "fc_relu", [out], {"act_type": "relu"})
    g = Graph()
    outer = [g.var("data", data_shape), g.var("weight")]
    if not no_bias:
        outer.append(g.var("bias"))
    attrs = {"with_eltwise": "True"} if with_eltwise else None
    return g.tojson([g.op("_sg_mkldnn_fully_connected", "fc", outer, attrs,
                          subgraphs=[sub.desc([out])])])


def pool_fc_graph(pool_type):
    """quantize_v2 -> quantized_pooling (``pool_type`` 'max'/'avg') or quantized_concat
    (``'concat'``, of the codes with themselves) -> dequantize -> a float FullyConnected."""
    g = Graph()
    x = g.var("data", (1, 4, 6, 6))
    q = g.op("_contrib_quantize_v2", "dq", [x], {"out_type": "auto", "min_calib_range": "0.0",
                                                 "max_calib_range": "2.0"}, nout=3)
    if pool_type == "concat":
        p = g.op("_contrib_quantized_concat", "qc", [q[0], q[0], q[1], q[2], q[1], q[2]],
                 {"dim": 1, "num_args": 2}, nout=3)
    else:
        p = g.op("_contrib_quantized_pooling", "qp", q, {"kernel": "(2, 2)",
                                                          "stride": "(2, 2)",
                                                          "pool_type": pool_type}, nout=3)
    d = g.op("_contrib_dequantize", "deq", p)
    f = g.op("FullyConnected", "fc", [d, g.var("fc_weight"), g.var("fc_bias")],
             {"num_hidden": 3})
    return g.tojson([f])
