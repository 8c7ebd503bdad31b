"""``mx.contrib.quantization``: MXNet 1.9.1's post-training int8 quantization, on the CPU.

A float symbol (or a Gluon HybridBlock) becomes a quantized graph of the operators neogluon
evaluates (ndarray/quantization.py): ``_contrib_quantize_v2`` before the first quantized
layer, ``_sg_mkldnn_conv`` / ``_sg_mkldnn_fully_connected`` nodes with ``quantized``,
``_contrib_quantized_pooling`` / ``_flatten`` / ``_concat`` between them, ``_contrib_requantize``
(uncalibrated int32 outputs) and ``_contrib_dequantize`` back to float32.

The passes follow what MXNet 1.9.1's oneDNN build writes (its ``MKLDNN_QUANTIZE`` subgraph
backend, ``MXQuantizeSymbol``, ``MXSetCalibTableToQuantizedSymbol``): the same node names,
inputs, attributes and node order, so the JSON equals MXNet's. Calibration runs the float
graph on the calibration data and collects each calibrated layer's output: its min and max
(``naive``) or a histogram searched for the threshold of least KL divergence (``entropy``,
MXNet's ``calibrate_entropy``).

Graphs are handled as MXNet JSON (lists of node dicts), then loaded with ``sym.load_json``.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import warnings

import numpy as np

from ..base import MXNetError
from ..context import Context, cpu

__all__ = ["quantize_model", "quantize_model_mkldnn", "quantize_graph", "calib_graph",
           "quantize_net_v2", "quantize_net", "combine_histogram"]

# ------------------------------------------------------------------------------ JSON graphs
# operators whose outputs MXNet names (FListOutputNames): the name of output i
_OUTPUT_NAMES = {"Convolution": ["output"], "FullyConnected": ["output"],
                 "Pooling": ["output", "mask"], "Activation": ["output"], "Concat": ["output"],
                 "BatchNorm": ["output", "mean", "var"], "Dropout": ["output", "mask"],
                 "SoftmaxOutput": ["output"], "LeakyReLU": ["output"], "Deconvolution":
                 ["output"], "LRN": ["output", "tmp_norm"], "SoftmaxActivation": ["output"]}
_NOUT = {"BatchNorm": 3, "Dropout": 2, "LRN": 2, "_contrib_quantize_v2": 3,
         "_contrib_requantize": 3, "_contrib_quantized_pooling": 3,
         "_contrib_quantized_flatten": 3, "_contrib_quantized_concat": 3,
         "_contrib_quantized_act": 3, "_contrib_quantized_conv": 3,
         "_contrib_quantized_fully_connected": 3, "_contrib_quantized_batch_norm": 3,
         "_contrib_quantized_elemwise_add": 3}


class _N:
    """A graph node: op ('null' for variables), name, attrs, inputs [(node, index)]."""
    __slots__ = ("op", "name", "attrs", "inputs", "subgraphs", "fp32")

    def __init__(self, op, name, attrs=None, inputs=(), subgraphs=None, fp32=None):
        self.op, self.name = op, name
        self.attrs = dict(attrs or {})
        self.inputs = list(inputs)
        self.subgraphs = subgraphs
        self.fp32 = fp32      # the float node a quantized node stands for

    @property
    def nout(self):
        if self.op in ("_sg_mkldnn_conv", "_sg_mkldnn_fully_connected"):
            q = str(self.attrs.get("quantized", "")).lower() == "true"
            f = str(self.attrs.get("enable_float_output", "")).lower() == "true"
            return 3 if q and not f else 1
        if self.op == "Pooling" and self.attrs.get("pool_type", "max") == "max":
            return 2     # MXNet's oneDNN build: max pooling's workspace output
        return _NOUT.get(self.op, 1)


def _from_json(desc):
    nodes = []
    for d in desc["nodes"]:
        a = dict(d.get("attrs", d.get("attr", d.get("param", {}))) or {})
        nodes.append(_N(d["op"], d["name"], a, [(nodes[e[0]], e[1]) for e in d["inputs"]],
                        d.get("subgraphs")))
    heads = [(nodes[e[0]], e[1]) for e in desc["heads"]]
    return heads


def _topo(heads):
    """Post-order DFS from the heads, inputs in order (nnvm's node order)."""
    order, seen = [], set()
    for h, _ in heads:
        stack = [(h, 0)]
        while stack:
            n, i = stack.pop()
            if id(n) in seen:
                continue
            if i < len(n.inputs):
                stack.append((n, i + 1))
                c = n.inputs[i][0]
                if id(c) not in seen:
                    stack.append((c, 0))
            else:
                seen.add(id(n))
                order.append(n)
    return order


def _mutable_inputs(n):
    if n.op in ("BatchNorm", "_contrib_quantized_batch_norm"):
        return (3, 4)
    if n.op == "_sg_mkldnn_conv" and str(n.attrs.get("with_bn", "")).lower() == "true":
        fc = _sub_op(n, "Convolution")
        nb = str((fc or {}).get("attrs", {}).get("no_bias", "False")).lower() in ("true", "1")
        base = 2 if nb else 3
        return (base + 2, base + 3)
    return ()


def _to_json(heads, subgraph=False):
    order = _topo(heads)
    idx = {id(n): i for i, n in enumerate(order)}
    aux = set()
    for n in order:
        for j in _mutable_inputs(n):
            if j < len(n.inputs) and n.inputs[j][0].op == "null":
                aux.add(id(n.inputs[j][0]))
    nodes, ptr = [], [0]
    for n in order:
        d = {"op": n.op, "name": n.name}
        if n.attrs:
            d["attrs"] = {k: n.attrs[k] for k in sorted(n.attrs)}
        d["inputs"] = [[idx[id(s)], i, 1 if (id(s) in aux and not subgraph) else 0]
                       for s, i in n.inputs]
        if n.subgraphs:
            d["subgraphs"] = n.subgraphs
        nodes.append(d)
        ptr.append(ptr[-1] + n.nout)
    desc = {"nodes": nodes, "arg_nodes": [i for i, n in enumerate(order) if n.op == "null"],
            "node_row_ptr": ptr, "heads": [[idx[id(h)], i, 0] for h, i in heads]}
    if not subgraph:
        desc["attrs"] = {"mxnet_version": ["int", 10901]}
    return desc


def _out_name(n, i):
    """MXNet's name of output ``i`` of node ``n`` (the monitor's and calibration's)."""
    if n.op == "null":
        return n.name
    names = _OUTPUT_NAMES.get(n.op)
    if names is not None:
        return f"{n.name}_{names[i]}"
    return f"{n.name}_output" if n.nout == 1 else f"{n.name}_output{i}"


def _sub_op(n, op):
    if not n.subgraphs:
        return None
    return next((d for d in n.subgraphs[0]["nodes"] if d["op"] == op), None)


def _consumers(order, heads):
    cons = {}
    for n in order:
        for j, (s, i) in enumerate(n.inputs):
            cons.setdefault((id(s), i), []).append((n, j))
    for h, i in heads:
        cons.setdefault((id(h), i), []).append((None, -1))
    return cons


def _truthy(v):
    return str(v).lower() in ("true", "1")


# ------------------------------------------------------------------------------ fusion
def _subgraph(head_entry, members, mapped):
    """The JSON of the fused float graph: ``members`` (nodes), external inputs as variables
    (``<name><index>`` for a variable, ``<output name><index>`` for an operator's output)."""
    subs = {}
    clones = {}

    def var_for(e):
        e = mapped(e)
        key = (id(e[0]), e[1])
        if key not in subs:
            s, i = e
            nm = f"{s.name}{i}" if s.op == "null" else f"{_out_name(s, i)}{i}"
            subs[key] = _N("null", nm)
        return subs[key]

    mids = {id(m) for m in members}

    def clone(m):
        if id(m) in clones:
            return clones[id(m)]
        ins = []
        for s, i in m.inputs:
            ins.append((clone(s), i) if id(s) in mids else (var_for((s, i)), 0))
        c = _N(m.op, m.name, m.attrs, ins)
        clones[id(m)] = c
        return c
    head = clone(head_entry[0])
    return _to_json([(head, head_entry[1])], subgraph=True)


def _fuse_mkldnn(heads, quantize=True):
    """MXNet 1.9.1's MKLDNN_QUANTIZE pre-quantization fusion: Convolution [+ BatchNorm]
    [+ relu | + elemwise_add [+ relu]] into ``_sg_mkldnn_conv``, FullyConnected [+ relu]
    into ``_sg_mkldnn_fully_connected``."""
    order = _topo(heads)
    cons = _consumers(order, heads)
    claimed = set()
    replace = {}          # id(old tail node) -> new node
    nconv = nfc = 0

    def only(n):
        c = cons.get((id(n), 0), [])
        if len(c) != 1 or c[0][0] is None or id(c[0][0]) in claimed:
            return None
        if n.op == "BatchNorm" and any(cons.get((id(n), k)) for k in (1, 2)):
            return None
        return c[0]

    def mapped(e):
        return (replace[id(e[0])], 0) if id(e[0]) in replace else e

    for n in order:
        if id(n) in claimed:
            continue
        if n.op == "Convolution" and len(str(n.attrs.get("kernel", "()")).strip("()").split(",")) == 2:
            members, tail = [n], n
            bn = act = add = post = False
            nxt = only(tail)
            if nxt and nxt[0].op == "BatchNorm" and nxt[1] == 0:
                bn, tail = True, nxt[0]
                members.append(tail)
                nxt = only(tail)
            if nxt and nxt[0].op == "Activation" and nxt[0].attrs.get("act_type") == "relu":
                act, tail = True, nxt[0]
                members.append(tail)
            elif nxt and nxt[0].op == "elemwise_add":
                other = nxt[0].inputs[1 - nxt[1]]
                add, tail = True, nxt[0]
                members.append(tail)
                nxt = only(tail)
                if nxt and nxt[0].op == "Activation" and nxt[0].attrs.get("act_type") == "relu":
                    post, tail = True, nxt[0]
                    members.append(tail)
            name = "sg_mkldnn_conv" + ("_bn" if bn else "") + ("_act" if act else "") + \
                ("_add" if add else "") + ("_act" if post else "") + f"_{nconv}"
            nconv += 1
            attrs = {}
            if bn:
                attrs["with_bn"] = "true"
            if act:
                attrs["with_act"] = "true"
            if add:
                attrs["with_sum"] = "true"
            if post:
                attrs["with_postsum_act"] = "true"
            ins = list(n.inputs)
            if bn:
                ins += members[1].inputs[1:5]
            if add:
                addn = members[2 if bn else 1]
                chain = members[members.index(addn) - 1]
                pos = [k for k, (s, _) in enumerate(addn.inputs) if s is chain][0]
                other = addn.inputs[1 - pos]
                addn.inputs = [addn.inputs[pos], other]   # MXNet puts the conv chain first
                ins.append(other)
            sg = _subgraph((tail, 0), members, mapped)
            node = _N("_sg_mkldnn_conv", name, attrs, ins, [sg])
        elif n.op == "FullyConnected":
            members, tail = [n], n
            elt = False
            nxt = only(tail)
            if nxt and nxt[0].op == "Activation" and nxt[0].attrs.get("act_type") == "relu":
                elt, tail = True, nxt[0]
                members.append(tail)
            name = "sg_mkldnn_fully_connected" + ("_eltwise" if elt else "") + f"_{nfc}"
            nfc += 1
            ins = list(n.inputs)
            sg = _subgraph((tail, 0), members, mapped)
            node = _N("_sg_mkldnn_fully_connected", name,
                      {"with_eltwise": "True"} if elt else {}, ins, [sg])
        else:
            continue
        for m in members:
            claimed.add(id(m))
        replace[id(tail)] = node
    return _rewire(order, heads, lambda e: (replace[id(e[0])], 0)
                   if id(e[0]) in replace else e)


def _rewire(order, heads, fn):
    """Heads and inputs mapped through ``fn``, on every node reachable after mapping."""
    out = [fn(h) for h in heads]
    seen, stack = set(), [h for h, _ in out]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        n.inputs = [fn(e) for e in n.inputs]
        stack.extend(s for s, _ in n.inputs)
    return out


# ------------------------------------------------------------------------------ quantization
_FROM_INPUT = {"Pooling": "_contrib_quantized_pooling", "Flatten": "_contrib_quantized_flatten",
               "Concat": "_contrib_quantized_concat"}
_PLAIN = {"Convolution": "_contrib_quantized_conv",
          "FullyConnected": "_contrib_quantized_fully_connected"}
_PLAIN_FROM_INPUT = {"Activation": "_contrib_quantized_act",
                     "BatchNorm": "_contrib_quantized_batch_norm",
                     "elemwise_add": "_contrib_quantized_elemwise_add"}


def _quantizable(n):
    if n.op in ("_sg_mkldnn_conv", "_sg_mkldnn_fully_connected"):
        return "q"
    if n.op in _PLAIN:
        return "q"
    if n.op == "Pooling":
        ok = n.attrs.get("pool_type", "max") in ("max", "avg") and \
            len(str(n.attrs.get("kernel", "(1, 1)")).strip("()").split(",")) == 2
        return "i" if ok else None
    if n.op in ("Flatten", "Concat"):
        return "i"
    if n.op == "Activation" and n.attrs.get("act_type") == "relu":
        return "i"
    if n.op in ("BatchNorm", "elemwise_add"):
        return "i"
    return None


def _excluded(n, names, ops):
    if n.name in names or n.op in ops:
        return True
    if n.subgraphs:
        for d in n.subgraphs[0]["nodes"]:
            if d["op"] != "null" and (d["name"] in names or d["op"] in ops):
                return True
    return False


def _quantize_symbol(heads, excluded_symbols=(), excluded_operators=(), offline_params=(),
                     quantized_dtype="int8", quantize_mode="smart",
                     quantize_granularity="tensor-wise"):
    """MXQuantizeSymbol: (new heads, calibration layer names)."""
    order = _topo(heads)
    excl_n, excl_o = set(excluded_symbols or ()), set(excluded_operators or ())
    offline = set(offline_params or ())
    chw = quantize_granularity == "channel-wise"
    qmap = {}              # id(fp32 node) -> quantized node (its outputs: codes, min, max)
    qv2 = {}               # (id, idx) -> quantize_v2 node
    calib = []
    req_out = {}           # id(fp32 node) -> node whose 3 outputs stand for it (requantize)
    vmap = {}

    def var(name):
        if name not in vmap:
            vmap[name] = _N("null", name)
        return vmap[name]

    def qin(e):
        """The (codes, min, max) entries of fp32 entry ``e``."""
        s, i = e
        if id(s) in qmap:
            q = req_out.get(id(s), qmap[id(s)])
            return (q, 0), (q, 1), (q, 2)
        key = (id(s), i)
        if key not in qv2:
            if s.op == "null":
                nm = s.name
            else:
                names = _OUTPUT_NAMES.get(s.op)
                nm = f"{s.name}_{names[i]}" if names else f"{s.name}_{i}"
            q = _N("_contrib_quantize_v2", nm + "_quantize", {"out_type": quantized_dtype},
                   [e])
            q.fp32 = e
            qv2[key] = q
            calib.append(_out_name(s, i))
        q = qv2[key]
        return (q, 0), (q, 1), (q, 2)

    def offline_q(e):
        s, _ = e
        if s.op == "null" and s.name in offline:
            return var(s.name + "_quantize"), (var(s.name + "_quantize_min"), 0), \
                (var(s.name + "_quantize_max"), 0)
        return None

    # which nodes become quantized: the layers that always are (FQuantizable kYes: conv,
    # fully connected), and the ones that may be (kMaybe: pooling, flatten, relu, ...): all
    # of them in 'full' mode; in 'smart' mode only those both fed by a quantized layer and
    # feeding one, through other kMaybe nodes (MXNet's kFromInput | kFromOutput = kBoth)
    kinds = {}
    for n in order:
        kind = _quantizable(n)
        if kind is not None and not _excluded(n, excl_n, excl_o):
            kinds[id(n)] = kind
    yes = [n for n in order if kinds.get(id(n)) == "q"]
    if quantize_mode == "smart":
        users = {}
        for n in order:
            for s, _ in n.inputs:
                users.setdefault(id(s), []).append(n)

        def reach(nexts):
            seen, todo = set(), list(yes)
            while todo:
                for m in nexts(todo.pop()):
                    if kinds.get(id(m)) == "i" and id(m) not in seen:
                        seen.add(id(m))
                        todo.append(m)
            return seen
        feeds_q = reach(lambda n: [s for s, _ in n.inputs])
        fed_by_q = reach(lambda n: users.get(id(n), ()))
        chosen = {id(n) for n in yes} | (feeds_q & fed_by_q)
    else:
        chosen = set(kinds)

    new_of = {}
    for n in order:
        if id(n) not in chosen:
            continue
        a = dict(n.attrs)
        if n.op in ("_sg_mkldnn_conv", "_sg_mkldnn_fully_connected"):
            op = n.op
            a["quantized"] = "true" if n.op == "_sg_mkldnn_conv" else "True"
        elif n.op in _PLAIN:
            op = _PLAIN[n.op]
        elif n.op in _FROM_INPUT:
            op = _FROM_INPUT[n.op]
        else:
            op = _PLAIN_FROM_INPUT[n.op]
        if n.op == "_sg_mkldnn_conv":
            c = _sub_op(n, "Convolution")
            nb = _truthy(c.get("attrs", {}).get("no_bias", False)) if c else False
            nparam = 1 + (0 if nb else 1) + (4 if _truthy(a.get("with_bn")) else 0)
            d = qin(n.inputs[0])
            ins = [d[0]] + list(n.inputs[1:1 + nparam])
            if _truthy(a.get("with_sum")):
                sm = qin(n.inputs[1 + nparam])
                ins += [sm[0], d[1], d[2], sm[1], sm[2]]
            else:
                ins += [d[1], d[2]]
        elif n.op in ("_sg_mkldnn_fully_connected", "FullyConnected", "Convolution"):
            d = qin(n.inputs[0])
            params = list(n.inputs[1:])
            if n.op == "_sg_mkldnn_fully_connected" and chw:
                a["channel_wise_quantize"] = "True"
                ins = [d[0]] + params + [d[1], d[2]]
            else:
                qs = [offline_q(p) for p in params]
                ins = [d[0]] + [(q[0], 0) if q else p for q, p in zip(qs, params)] + \
                    [d[1], d[2]]
                for q in qs:
                    if q:
                        ins += [q[1], q[2]]
        elif n.op in ("Concat", "elemwise_add"):
            ds = [qin(e) for e in n.inputs]
            ins = [x[0] for x in ds]
            for x in ds:
                ins += [x[1], x[2]]
        elif n.op == "BatchNorm":
            d = qin(n.inputs[0])
            ins = [d[0]] + list(n.inputs[1:5]) + [d[1], d[2]]
        else:
            d = qin(n.inputs[0])
            ins = [d[0], d[1], d[2]]
        q = _N(op, "quantized_" + n.name, a, ins, n.subgraphs, fp32=n)
        qmap[id(n)] = q
        # FNeedRequantize: int32 outputs go through a requantize node, calibrated on the
        # float layer's output
        int32_out = n.op in _PLAIN or n.op in ("_sg_mkldnn_conv", "_sg_mkldnn_fully_connected",
                                               "elemwise_add")
        if n.op == "BatchNorm":
            # FNeedCalibrateOutput: int8 codes for the calibrated range of its own output
            calib.append(_out_name(n, 0))
        if int32_out:
            r = _N("_contrib_requantize", "requantize_" + n.name, {"out_type": quantized_dtype},
                   [(q, 0), (q, 1), (q, 2)], fp32=n)
            req_out[id(n)] = r
            calib.append(_out_name(n, 0))
        new_of[id(n)] = q

    deq = {}

    def fentry(e):
        """A float entry standing for fp32 entry ``e`` in the quantized graph."""
        s, i = e
        if id(s) in qmap:
            if id(s) not in deq:
                src = req_out.get(id(s), qmap[id(s)])
                deq[id(s)] = _N("_contrib_dequantize", s.name + "_dequantize", {},
                                [(src, 0), (src, 1), (src, 2)])
            return (deq[id(s)], 0)
        return e

    for n in order:
        if id(n) in qmap:
            continue
        n.inputs = [fentry(e) for e in n.inputs]
    out = [fentry(h) for h in heads]
    # calibration names in graph order
    pos = {id(m): k for k, m in enumerate(_topo(out))}
    return out, calib, pos


def _fmt(v):
    return "%f" % float(np.float32(v))


def _calibrate_quantized_graph(heads, th_dict):
    """MXSetCalibTableToQuantizedSymbol: the calibrated ranges into quantize_v2 and
    requantize nodes (their input / the float layer's output) and quantized BatchNorm (its
    output)."""
    for n in _topo(heads):
        if n.op == "_contrib_quantize_v2" and n.fp32 is not None:
            key = _out_name(*n.fp32)
        elif n.op in ("_contrib_requantize", "_contrib_quantized_batch_norm") and \
                n.fp32 is not None:
            key = _out_name(n.fp32, 0)
        else:
            continue
        if key in th_dict:
            lo, hi = th_dict[key]
            n.attrs["min_calib_range"] = _fmt(_first(lo))
            n.attrs["max_calib_range"] = _fmt(_first(hi))
    return heads


def _first(v):
    return float(np.asarray(v, dtype=np.float64).reshape(-1)[0])


def _post_quantize_fuse(heads):
    """MXNet 1.9.1's MKLDNN_QUANTIZE post-quantization fusion: a quantized ``_sg_mkldnn_*``
    node (or a quantized elemwise_add) takes the calibrated range of the requantize after
    it; a FullyConnected whose
    codes only go to a dequantize gives float32 (``enable_float_output``)."""
    order = _topo(heads)
    cons = _consumers(order, heads)
    repl = {}
    for n in order:
        if n.op != "_contrib_quantized_elemwise_add" and (
                n.op not in ("_sg_mkldnn_conv", "_sg_mkldnn_fully_connected") or
                not _truthy(n.attrs.get("quantized"))):
            continue
        c0 = cons.get((id(n), 0), [])
        users = {id(u) for k in range(3) for u, _ in cons.get((id(n), k), []) if u is not None}
        if len(c0) != 1 or c0[0][0] is None or c0[0][0].op != "_contrib_requantize" or \
                len(users) != 1:
            continue
        r = c0[0][0]
        if "min_calib_range" not in r.attrs or "max_calib_range" not in r.attrs:
            continue
        n.attrs["min_calib_range"] = r.attrs["min_calib_range"]
        n.attrs["max_calib_range"] = r.attrs["max_calib_range"]
        for k in range(3):
            repl[(id(r), k)] = (n, k)
        if n.op == "_sg_mkldnn_fully_connected":
            rc = cons.get((id(r), 0), [])
            rusers = {id(u) for k in range(3) for u, _ in cons.get((id(r), k), [])
                      if u is not None}
            if len(rc) == 1 and rc[0][0] is not None and \
                    rc[0][0].op == "_contrib_dequantize" and len(rusers) == 1:
                dq = rc[0][0]
                del n.attrs["min_calib_range"], n.attrs["max_calib_range"]
                n.attrs["enable_float_output"] = "True"
                repl[(id(dq), 0)] = (n, 0)

    def fn(e):
        while (id(e[0]), e[1]) in repl:
            e = repl[(id(e[0]), e[1])]
        return e
    return _rewire(order, heads, fn)


# ------------------------------------------------------------------------------ symbols
def _sym_json(sym):
    if isinstance(sym, str):
        from ..symbol import load
        sym = load(sym)
    return json.loads(sym.tojson())


def _load(heads):
    from ..symbol import load_json
    return load_json(json.dumps(_to_json(heads)))


def _check_ctx(ctx):
    if not isinstance(ctx, Context):
        raise ValueError('currently only supports single ctx, while received %s' % str(ctx))


def _mkldnn_fused(sym):
    return _fuse_mkldnn(_from_json(_sym_json(sym)))


# ------------------------------------------------------------------------------ calibration
def _histogram(arr, bins, th):
    """np.histogram over (-th, th), with the bin edges numpy 1.x writes (float64 steps,
    cast to the data's type; numpy 2 computes float32 edges differently)."""
    counts, _ = np.histogram(arr, bins=bins, range=(-th, th))
    arr = np.asarray(arr)
    dt = arr.dtype if arr.dtype.kind == "f" else np.float64
    lo, hi = -np.float64(th), np.float64(th)
    edges = np.arange(bins + 1, dtype=np.float64) * ((hi - lo) / bins) + lo
    edges[-1] = hi
    return counts, edges.astype(dt)


def combine_histogram(old_hist, arr, new_min, new_max, new_th):
    """Add ``arr`` to histogram ``old_hist`` = (counts, edges, min, max, threshold), widening
    it (by whole bins of the old width on each side) when ``new_th`` passes its threshold."""
    counts, edges, omin, omax, oth = old_hist
    if new_th <= oth:
        h, _ = _histogram(arr, len(counts), oth)
        return (counts + h, edges, min(omin, new_min), max(omax, new_max), oth)
    nb = len(counts)
    width = 2 * oth / nb
    extra = int((new_th - oth) // width + 1)
    th = extra * width + oth
    h, e = _histogram(arr, nb + 2 * extra, th)
    h[extra:nb + extra] += counts
    return (h, e, min(omin, new_min), max(omax, new_max), th)


def _as_numpy(arr):
    if hasattr(arr, "asnumpy"):
        return arr.asnumpy()
    return np.asarray(arr)


def _name(name):
    return name.decode("utf-8") if isinstance(name, bytes) else str(name)


class _Collector(object):
    """What both calibration collectors share: the layers they look at (``include_layer``,
    all when None) and the logger."""

    def __init__(self, include_layer=None, logger=None):
        self.include_layer = include_layer
        self.logger = logger

    def _wanted(self, name):
        """The layer's name as a str, or None when it is not collected."""
        name = _name(name)
        if self.include_layer is not None and name not in self.include_layer:
            return None
        return name


class _LayerHistogramCollector(_Collector):
    """Histograms (``num_bins`` bins over [-max|x|, max|x|]) of the layer outputs named in
    ``include_layer``, for entropy calibration: ``hist_dict[name] = (counts, edges, min,
    max, threshold)``."""

    def __init__(self, num_bins=8001, include_layer=None, logger=None):
        super().__init__(include_layer, logger)
        self.hist_dict = {}
        self.num_bins = num_bins

    def collect(self, name, arr):
        name = self._wanted(name)
        if name is None:
            return
        arr = _as_numpy(arr)
        if self.logger:
            self.logger.debug("Collecting layer %s histogram of shape %s" % (name, arr.shape))
        lo, hi = np.min(arr), np.max(arr)
        th = max(abs(lo), abs(hi))
        if name in self.hist_dict:
            self.hist_dict[name] = combine_histogram(self.hist_dict[name], arr, lo, hi, th)
        else:
            h, e = _histogram(arr, self.num_bins, th)
            self.hist_dict[name] = (h, e, lo, hi, th)


class _LayerOutputMinMaxCollector(_Collector):
    """The running (min, max) of the layer outputs named in ``include_layer``:
    ``min_max_dict[name]``, the thresholds of naive calibration."""

    def __init__(self, quantized_dtype, include_layer=None, logger=None):
        super().__init__(include_layer, logger)
        self.min_max_dict = {}
        self.quantized_dtype = quantized_dtype

    def collect(self, name, arr):
        name = self._wanted(name)
        if name is None:
            return
        a = _as_numpy(arr)
        lo, hi = np.float32(a.min()), np.float32(a.max())
        if name in self.min_max_dict:
            cur = self.min_max_dict[name]
            self.min_max_dict[name] = (min(cur[0], lo), max(cur[1], hi))
        else:
            self.min_max_dict[name] = (lo, hi)
        if self.logger:
            self.logger.debug("Collecting layer %s min_range=%f, max_range=%f"
                              % (name, lo, hi))


def _smooth_distribution(p, eps=0.0001):
    """``p`` with its zeros raised to ``eps`` and that mass taken evenly off the rest."""
    zeros = (p == 0)
    nz = p.size - int(zeros.sum())
    if not nz:
        raise ValueError('The discrete probability distribution is malformed. All entries are 0.')
    eps1 = eps * float(zeros.sum()) / float(nz)
    if eps1 >= 1.0:
        raise ValueError('n_zeros=%d, n_nonzeros=%d, eps1=%f' % (zeros.sum(), nz, eps1))
    hist = p.astype(np.float32)
    hist += eps * zeros.astype(np.float32) + (-eps1) * (~zeros).astype(np.float32)
    return hist


def calibrate_entropy(hist, hist_edges, num_quantized_bins=255):
    """MXNet's ``calibrate_entropy``: the threshold (a bin edge) whose clipped distribution,
    merged into ``num_quantized_bins`` bins, is closest (KL divergence) to the histogram.
    Returns (threshold, divergence), float32 arrays of shape (1,)."""
    hist = np.asarray(_as_numpy(hist), dtype=np.float32)
    edges = np.asarray(_as_numpy(hist_edges), dtype=np.float32)
    nbins = hist.size
    if edges.size != nbins + 1:
        raise MXNetError("calibrate_entropy: hist_edges must have one more element than hist")
    zero = nbins // 2
    half = num_quantized_bins // 2
    ths, divs = [], []
    h64 = hist.astype(np.float64)
    csum = np.concatenate([[0.0], np.cumsum(h64)])
    total = csum[-1]
    for i in range(half, zero + 1):
        start, stop = zero - i, zero + i + 1
        ths.append(edges[stop])
        sl = h64[start:stop]
        p = sl.copy()                        # outliers into the end bins
        p[0] += csum[start]
        p[-1] += total - csum[stop]
        m = sl.size // num_quantized_bins
        blk = np.minimum(np.arange(sl.size) // m, num_quantized_bins - 1)
        qb = np.bincount(blk, weights=sl, minlength=num_quantized_bins)
        norm = np.bincount(blk, weights=(sl != 0), minlength=num_quantized_bins)
        q = np.where(norm[blk] > 0, qb[blk] / np.maximum(norm[blk], 1), 0.0)
        q[p == 0] = 0
        try:
            ps = _smooth_distribution(p.astype(np.float32))
            qs = _smooth_distribution(q.astype(np.float32))
        except ValueError:
            divs.append(np.inf)
            continue
        ps = ps.astype(np.float64) / ps.sum(dtype=np.float64)
        qs = qs.astype(np.float64) / qs.sum(dtype=np.float64)
        divs.append(float(np.sum(ps * np.log(ps / qs))))
    k = int(np.argmin(divs))
    return np.array([ths[k]], dtype=np.float32), np.array([divs[k]], dtype=np.float32)


def _get_optimal_threshold(hist_data, quantized_dtype, num_quantized_bins=255):
    """(min, max, threshold, divergence) of one layer's histogram (entropy calibration);
    with non-negative data and 'auto'/'uint8' the search uses 2 * bins + 1 quantized bins."""
    hist, edges, lo, hi, _ = hist_data
    if len(hist) % 2 != 1:
        raise MXNetError("_get_optimal_threshold: the histogram must have an odd number of bins")
    if lo >= 0 and quantized_dtype in ("auto", "uint8"):
        num_quantized_bins = num_quantized_bins * 2 + 1
    th, div = calibrate_entropy(hist, edges, num_quantized_bins)
    return lo, hi, th, div


def _get_optimal_thresholds(hist_dict, quantized_dtype, num_quantized_bins=255, logger=None):
    """{name: (min, max)} thresholds of entropy calibration for each histogram (removed from
    ``hist_dict`` as they are done, as MXNet does)."""
    if not isinstance(hist_dict, dict):
        raise MXNetError("_get_optimal_thresholds: hist_dict must be a dict")
    if logger is not None:
        logger.info('Calculating optimal thresholds for quantization using KL divergence'
                    ' with num_quantized_bins=%d' % num_quantized_bins)
    th_dict = {}
    for name in list(hist_dict):
        lo, hi, th, div = _get_optimal_threshold(hist_dict[name], quantized_dtype,
                                                 num_quantized_bins=num_quantized_bins)
        th_dict[name] = (0, th) if lo >= 0 and quantized_dtype in ("auto", "uint8") \
            else (-th, th)
        del hist_dict[name]
        if logger:
            logger.debug('layer=%s, min_val=%f, max_val=%f, th=%f, divergence=%f'
                         % (name, lo, hi, th, div))
    return th_dict


def _collect_layer_statistics(fheads, arg_params, aux_params, data, collector, calib_layer,
                              ctx, max_num_examples=None, logger=None):
    """Run the float graph on ``data`` (a DataIter) and give each calibrated layer's output
    to ``collector.collect(name, NDArray)``; returns the number of examples seen."""
    from ..io import DataIter
    from ..symbol import Group
    if not isinstance(data, DataIter):
        raise ValueError('Only supports data as a type of DataIter, while received type %s'
                         % str(type(data)))
    order = _topo(fheads)
    entries = {}
    for n in order:
        for i in range(n.nout):
            nm = _out_name(n, i)
            if nm in calib_layer and nm not in entries:
                entries[nm] = (n, i)
    names = [nm for nm in calib_layer if nm in entries]
    fsym = _load(fheads)
    internals = fsym.get_internals()
    outs = internals.list_outputs()
    picks = []
    for nm in names:
        n, i = entries[nm]
        key = n.name if n.op == "null" else None
        cand = [k for k, o in enumerate(outs) if o == (key or nm)]
        if not cand and n.op != "null":
            cand = [k for k, o in enumerate(outs) if o == f"{n.name}_output"]
        picks.append(internals[cand[0]])
    group = Group(picks) if picks else None
    data_names = [d[0] if isinstance(d, (tuple, list)) else d.name for d in data.provide_data]
    num_batches = num_examples = 0
    args = {k: v.as_in_context(ctx) for k, v in arg_params.items()}
    auxs = {k: v.as_in_context(ctx) for k, v in (aux_params or {}).items()}
    for batch in data:
        feed = dict(args)
        for nm, arr in zip(data_names, batch.data):
            feed[nm] = arr.as_in_context(ctx)
        if group is not None:
            need = set(group.list_arguments())
            ex = group.bind(ctx, {k: v for k, v in feed.items() if k in need},
                            aux_states={k: v for k, v in auxs.items()
                                        if k in set(group.list_auxiliary_states())},
                            grad_req="null")
            res = ex.forward(is_train=False)
            for nm, r in zip(names, res):
                collector.collect(nm, r)
        num_batches += 1
        num_examples += data.batch_size
        if max_num_examples is not None and num_examples >= max_num_examples:
            break
    if logger is not None:
        logger.info("Collected statistics from %d batches with batch_size=%d"
                    % (num_batches, data.batch_size))
    return num_examples


# ------------------------------------------------------------------------------ parameters
def _quantize_int8(a):
    """MXNet's (v1) ``quantize`` to int8 over [min(a), max(a)]: codes sign(x) *
    min(|x| * 127 / r + 0.5, 127) truncated, r = max(|min|, |max|); range (-r, r)."""
    x = a.astype(np.float32)
    r = np.float32(max(abs(np.float32(x.min())), abs(np.float32(x.max())))) if x.size else \
        np.float32(0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        sc = np.float32(np.float32(127) / r)
        mag = np.minimum(np.abs(x) * sc + np.float32(0.5), np.float32(127))
    mag = np.nan_to_num(mag, nan=0.0)
    return (np.sign(x) * np.trunc(mag)).astype(np.int8), -r, r


def _quantize_params(qsym, params, th_dict):
    """The quantized symbol's arguments: int8 codes (and ranges) of the weights and biases
    quantized offline (``<name>_quantize``, ``_min``, ``_max``), the others as they are."""
    from .. import ndarray as nd
    out = {}
    for name in qsym.list_arguments():
        if name.endswith(("weight_quantize", "bias_quantize")):
            orig = name[:-len("_quantize")]
            val, lo, hi = _quantize_int8(_as_numpy(params[orig]))
            ctx = params[orig].context
            out[name] = nd.array(val, dtype=np.int8, ctx=ctx)
            out[name + "_min"] = nd.array([lo], ctx=ctx)
            out[name + "_max"] = nd.array([hi], ctx=ctx)
        elif name in params:
            out[name] = params[name]
        elif name.endswith("_min"):
            o = name[:-len("_min")]
            if o in th_dict:
                out[name] = nd.array([_first(th_dict[o][0])])
        elif name.endswith("_max"):
            o = name[:-len("_max")]
            if o in th_dict:
                out[name] = nd.array([_first(th_dict[o][1])])
    return out


# ------------------------------------------------------------------------------ user API
def _check_lists(excluded_sym_names, excluded_op_names):
    if excluded_sym_names is None:
        excluded_sym_names = []
    if not isinstance(excluded_sym_names, list):
        raise ValueError('excluded_sym_names must be a list of strings representing'
                         ' the names of the symbols that will not be quantized,'
                         ' while received type %s' % str(type(excluded_sym_names)))
    if excluded_op_names is None:
        excluded_op_names = []
    if not isinstance(excluded_op_names, list):
        raise ValueError('excluded_op_names must be a list of strings representing'
                         ' the names of the operators that will not be quantized,'
                         ' while received type %s' % str(type(excluded_op_names)))
    return excluded_sym_names, excluded_op_names


def _check_kinds(quantized_dtype, quantize_granularity, quantize_mode="smart"):
    if quantized_dtype not in ('int8', 'uint8', 'auto'):
        raise ValueError('unknown quantized_dtype %s received,'
                         ' expected `int8`, `uint8` or `auto`' % quantized_dtype)
    if quantize_granularity not in ('tensor-wise', 'channel-wise'):
        raise ValueError('unkonwn quantize_granularity %s received,'
                         ' expected `tensor-wise` or `channel-wise`.' % quantize_granularity)
    if quantize_mode not in ('smart', 'full'):
        raise MXNetError("quantize_mode %r is not one of 'smart', 'full'" % (quantize_mode,))


_GRAPHS = {}   # id(quantized Symbol) -> (the Symbol, its _QSym): calib_graph's input


class _QSym:
    """A quantized graph in the making: its JSON heads, the float graph its calibration
    runs, and the calibration layer names."""

    def __init__(self, heads, fheads, calib):
        self.heads, self.fheads, self.calib = heads, fheads, calib


def _quantize(sym, arg_params, excluded_sym_names, excluded_op_names, quantized_dtype,
              quantize_mode, quantize_granularity, fused):
    fheads = _from_json(_sym_json(sym))
    if fused:
        fheads = _fuse_mkldnn(fheads)
    fjson = json.dumps(_to_json(fheads))
    qheads, calib, _ = _quantize_symbol(
        _from_json(json.loads(fjson)), excluded_sym_names, excluded_op_names,
        list(arg_params.keys()), quantized_dtype, quantize_mode, quantize_granularity)
    return _QSym(qheads, _from_json(json.loads(fjson)), calib)


def _calibration_graph(fheads, ctx):
    """The float graph whose layer outputs calibration sees. MXNet 1.9.1 collects them with
    a monitor on a Module bound on the CPU, where its default subgraph backend (MKLDNN,
    unless ``MXNET_SUBGRAPH_BACKEND=NONE``) has fused Convolution [+ BatchNorm] [+ relu |
    + sum] and FullyConnected [+ relu] first: the outputs of the fused layers then go by the
    fused node's name, so the quantized graph's requantize / quantize_v2 / BatchNorm nodes
    that stand for them stay uncalibrated (their ranges are computed at run time)."""
    backend = os.environ.get("MXNET_SUBGRAPH_BACKEND", "MKLDNN").strip()
    if getattr(ctx, "device_type", "cpu") != "cpu" or backend.upper() == "NONE" or \
            not backend:
        return fheads
    return _fuse_mkldnn(fheads)


def _run_quantize_model(sym, arg_params, aux_params, data_names, ctx, excluded_sym_names,
                        excluded_op_names, calib_mode, calib_data, num_calib_examples,
                        quantized_dtype, quantize_mode, quantize_granularity, logger, fused):
    excluded_sym_names, excluded_op_names = _check_lists(excluded_sym_names, excluded_op_names)
    if logger:
        logger.info('Quantizing symbol')
    _check_kinds(quantized_dtype, quantize_granularity, quantize_mode)
    q = _quantize(sym, arg_params, excluded_sym_names, excluded_op_names, quantized_dtype,
                  quantize_mode, quantize_granularity, fused)
    th_dict = {}
    if calib_mode is not None and calib_mode != 'none':
        from ..io import DataIter
        _check_ctx(ctx)
        if calib_data is None:
            raise ValueError('calib_data must be provided when calib_mode=%s' % calib_mode)
        if not isinstance(calib_data, DataIter):
            raise ValueError('calib_data must be of DataIter type when calib_mode=%s,'
                             ' while received type %s' % (calib_mode, str(type(calib_data))))
        if calib_mode == 'entropy':
            col = _LayerHistogramCollector(include_layer=q.calib, logger=logger)
        elif calib_mode == 'naive':
            col = _LayerOutputMinMaxCollector(quantized_dtype=quantized_dtype,
                                              include_layer=q.calib, logger=logger)
        else:
            raise ValueError('unknown calibration mode %s received,'
                             ' expected `none`, `naive`, or `entropy`' % calib_mode)
        n = _collect_layer_statistics(_calibration_graph(q.fheads, ctx), arg_params,
                                      aux_params, calib_data, col, q.calib, ctx,
                                      num_calib_examples, logger)
        if logger:
            logger.info('Collected layer outputs from FP32 model using %d examples' % n)
        if calib_mode == 'entropy':
            th_dict = _get_optimal_thresholds(col.hist_dict, quantized_dtype, logger=logger)
        else:
            th_dict = col.min_max_dict
        _calibrate_quantized_graph(q.heads, th_dict)
    heads = q.heads
    if fused:
        heads = _post_quantize_fuse(heads)
    qsym = _load(heads)
    if logger:
        logger.info('Quantizing parameters')
    qarg_params = _quantize_params(qsym, arg_params, th_dict)
    return qsym, qarg_params, aux_params, th_dict


def quantize_model(sym, arg_params, aux_params, data_names=('data',),
                   label_names=('softmax_label',), ctx=cpu(), excluded_sym_names=None,
                   excluded_op_names=None, calib_mode='entropy', calib_data=None,
                   num_calib_examples=None, quantized_dtype='int8', quantize_mode='smart',
                   quantize_granularity='tensor-wise', logger=None):
    """A quantized model (qsym, qarg_params, aux_params) from a float one, as MXNet 1.9.1:
    Convolution / FullyConnected become ``_contrib_quantized_conv`` /
    ``_contrib_quantized_fully_connected`` with requantize nodes (their weights quantized
    offline), pooling / flatten / relu / BatchNorm / elemwise_add follow quantized inputs.
    ``calib_mode``: 'none', 'naive' (min/max of the layer outputs over ``calib_data``) or
    'entropy' (KL thresholds). As in MXNet 1.9.1's CPU build, the calibration sees the float
    graph after MXNet's default MKLDNN fusion (``MXNET_SUBGRAPH_BACKEND=NONE``: unfused), so
    the requantize nodes of fused layers keep run-time ranges. The graph runs where MXNet's
    does (its oneDNN ``quantized_conv`` takes uint8 data only); :func:`quantize_model_mkldnn`
    gives the fused form."""
    qsym, qargs, auxs, _ = _run_quantize_model(
        sym, arg_params, aux_params, data_names, ctx, excluded_sym_names, excluded_op_names,
        calib_mode, calib_data, num_calib_examples, quantized_dtype, quantize_mode,
        quantize_granularity, logger, fused=False)
    return qsym, qargs, auxs


def quantize_model_mkldnn(sym, arg_params, aux_params, data_names=('data',),
                          label_names=('softmax_label',), ctx=cpu(), excluded_sym_names=None,
                          excluded_op_names=None, calib_mode='entropy', calib_data=None,
                          num_calib_examples=None, quantized_dtype='int8',
                          quantize_mode='smart', quantize_granularity='tensor-wise',
                          logger=None):
    """:func:`quantize_model` with MXNet's oneDNN fusion first (Convolution + BatchNorm +
    relu / residual sum into ``_sg_mkldnn_conv``, FullyConnected + relu into
    ``_sg_mkldnn_fully_connected``) and after (the calibrated requantize folded into the
    fused node; a final FullyConnected gives float32): the graphs of GluonCV's ``*_int8``
    models. CPU only, as in MXNet."""
    _check_ctx(ctx)
    if ctx.device_type != 'cpu':
        raise ValueError(
            'quantize_model_mkldnn only support Intel cpu platform with MKL-DNN Backend')
    qsym, qargs, auxs, _ = _run_quantize_model(
        sym, arg_params, aux_params, data_names, ctx, excluded_sym_names, excluded_op_names,
        calib_mode, calib_data, num_calib_examples, quantized_dtype, quantize_mode,
        quantize_granularity, logger, fused=True)
    return qsym, qargs, auxs


class _Graph(object):
    pass


def quantize_graph(sym, arg_params, aux_params, ctx=cpu(), excluded_sym_names=None,
                   excluded_op_names=None, calib_mode='entropy', quantized_dtype='int8',
                   quantize_mode='full', quantize_granularity='tensor-wise',
                   LayerOutputCollector=None, logger=None):
    """The uncalibrated quantized graph and a collector for calibration:
    (qsym, qarg_params, aux_params, collector). Feed the collector the float graph's layer
    outputs (``collector.collect(name, array)``; the names are ``collector.include_layer``)
    and pass it to :func:`calib_graph`. ``sym`` is quantized as given (no fusion: give
    ``sym.get_backend_symbol('MKLDNN_QUANTIZE')``'s equivalent, or use
    :func:`quantize_net_v2`)."""
    excluded_sym_names, excluded_op_names = _check_lists(excluded_sym_names, excluded_op_names)
    _check_ctx(ctx)
    if logger:
        logger.info('Quantizing graph')
    _check_kinds(quantized_dtype, quantize_granularity, quantize_mode)
    q = _quantize(sym, arg_params, excluded_sym_names, excluded_op_names, quantized_dtype,
                  quantize_mode, quantize_granularity, fused=False)
    collector = None
    if calib_mode is not None and calib_mode != 'none':
        if calib_mode == 'entropy':
            collector = _LayerHistogramCollector(include_layer=q.calib, logger=logger)
        elif calib_mode == 'naive':
            collector = _LayerOutputMinMaxCollector(quantized_dtype=quantized_dtype,
                                                    include_layer=q.calib, logger=logger)
        elif calib_mode == 'customize' and LayerOutputCollector is not None:
            collector = LayerOutputCollector
        else:
            raise ValueError('unknown calibration mode %s received,'
                             ' expected `none`, `naive`, `entropy` or `customize`' % calib_mode)
    qsym = _load(q.heads)
    _GRAPHS[id(qsym)] = (qsym, q)
    qarg_params = _quantize_params(qsym, arg_params, {})
    return qsym, qarg_params, aux_params, collector


def calib_graph(qsym, arg_params, aux_params, collector, calib_mode='entropy',
                quantized_dtype='int8', logger=logging):
    """The calibrated graph from :func:`quantize_graph`'s symbol and its filled collector:
    (qsym, qarg_params, aux_params)."""
    th_dict = {}
    if calib_mode is not None and calib_mode != 'none':
        if calib_mode == 'entropy':
            if logger:
                logger.info('Calculating optimal thresholds for quantization')
            th_dict = _get_optimal_thresholds(collector.hist_dict, quantized_dtype,
                                              logger=logger)
        elif calib_mode in ('naive', 'customize'):
            th_dict = collector.min_max_dict
        else:
            raise ValueError('unknown calibration mode %s received,'
                             ' expected `none`, `naive`, `entropy` or `customize`' % calib_mode)
        q = _GRAPHS.get(id(qsym), (None, None))[1]
        heads = _reattach(qsym, q)
        _calibrate_quantized_graph(heads, th_dict)
        qsym = _load(heads)
        _GRAPHS[id(qsym)] = (qsym, _QSym(heads, q.fheads if q else None, q.calib if q else None))
    else:
        raise ValueError('please set calibration mode to naive or entropy.')
    if logger:
        logger.info('Quantizing parameters')
    qarg_params = _quantize_params(qsym, arg_params, th_dict)
    return qsym, qarg_params, aux_params


def _reattach(qsym, q):
    """The JSON heads of a quantized symbol, with each quantize_v2 / requantize node knowing
    the float output it stands for (from the graph that made it, else from its name)."""
    if q is not None:
        return q.heads
    heads = _from_json(_sym_json(qsym))
    for n in _topo(heads):
        if n.op == "_contrib_quantize_v2":
            s = n.inputs[0]
            n.fp32 = s
        elif n.op == "_contrib_requantize" and n.name.startswith("requantize_"):
            n.fp32 = _N("x", n.name[len("requantize_"):])
        elif n.op == "_contrib_quantized_batch_norm" and n.name.startswith("quantized_"):
            n.fp32 = _N("BatchNorm", n.name[len("quantized_"):])
    return heads


def _as_data_iter(calib_data):
    from ..io import DataIter, DataDesc, DataBatch
    if isinstance(calib_data, DataIter):
        return calib_data, calib_data.provide_data

    class _Wrap(DataIter):
        def __init__(self, data):
            super().__init__()
            self._data = data
            try:
                it = iter(data)
            except TypeError as e:
                raise TypeError('calib_data is not a valid iterator. {}'.format(str(e)))
            ex = next(it)
            ex = list(ex) if isinstance(ex, (list, tuple)) else [ex]
            if len(ex[0].shape) > 4:
                ex[0] = ex[0].reshape((-1,) + ex[0].shape[2:])
            self.provide_data = [DataDesc(name='data', shape=ex[0].shape)]
            self.provide_data += [DataDesc(name='data{}'.format(i), shape=x.shape)
                                  for i, x in enumerate(ex[1:])]
            if len(ex) >= 3:
                self.provide_data = [DataDesc(name='data{}'.format(i), shape=x.shape)
                                     for i, x in enumerate(ex)]
            self.batch_size = ex[0].shape[0]
            self.reset()

        def reset(self):
            self._iter = iter(self._data)

        def next(self):
            nxt = next(self._iter)
            nxt = list(nxt) if isinstance(nxt, (list, tuple)) else [nxt]
            if len(nxt[0].shape) > 4:
                nxt[0] = nxt[0].reshape((-1,) + nxt[0].shape[2:])
            return DataBatch(data=nxt)
    w = _Wrap(calib_data)
    return w, w.provide_data


def quantize_net_v2(network, quantized_dtype='auto', quantize_mode='full',
                    quantize_granularity='tensor-wise', exclude_layers=None,
                    exclude_layers_match=None, exclude_operators=None, calib_data=None,
                    data_shapes=None, calib_mode='none', num_calib_examples=None, ctx=cpu(),
                    LayerOutputCollector=None, logger=None):
    """A quantized SymbolBlock from a Gluon HybridBlock (CPU: oneDNN fusion, then
    quantization, calibration on ``calib_data`` (a DataIter or an iterable such as a
    DataLoader) and fusion again), as MXNet 1.9.1."""
    from .. import model as _model
    from .. import ndarray as nd
    from .. import symbol as _sym
    from ..io import DataIter
    if logger:
        logger.info('Export HybridBlock')
    network.hybridize()
    if calib_data is not None:
        if isinstance(calib_data, DataIter):
            dshapes = calib_data.provide_data
        else:
            calib_data, dshapes = _as_data_iter(calib_data)
        if not data_shapes:
            data_shapes = dshapes
    if not data_shapes:
        raise ValueError('data_shapes required')
    data_nd = [nd.zeros(s.shape) for s in data_shapes]
    while True:
        try:
            network(*data_nd)
        except TypeError:
            del data_nd[-1]
            del calib_data.provide_data[-1]
            continue
        else:
            break
    tmp = tempfile.mkdtemp()
    try:
        prefix = os.path.join(tmp, 'tmp')
        network.export(prefix, epoch=0)
        symnet, args, auxs = _model.load_checkpoint(prefix, 0)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    exclude_layers = list(exclude_layers or [])
    exclude_operators = list(exclude_operators or [])
    for m in (exclude_layers_match or []):
        for layer in list(symnet.get_internals()):
            if layer.name.find(m) != -1:
                exclude_layers.append(layer.name)
    if logger:
        logger.info('These layers have been excluded %s' % exclude_layers)
    on_cpu = isinstance(ctx, Context) and ctx.device_type == 'cpu'
    if not on_cpu:
        raise ValueError('quantize_net_v2: neogluon quantizes for the CPU (MXNet\'s oneDNN '
                         'backend) only, got ctx=%s' % str(ctx))
    fheads = _mkldnn_fused(symnet)
    fsym = _load(fheads)
    qsym, qarg_params, aux_params, collector = quantize_graph(
        sym=fsym, arg_params=args, aux_params=auxs, ctx=ctx,
        excluded_sym_names=exclude_layers, excluded_op_names=exclude_operators,
        calib_mode=calib_mode, quantized_dtype=quantized_dtype, quantize_mode=quantize_mode,
        quantize_granularity=quantize_granularity, LayerOutputCollector=LayerOutputCollector,
        logger=logger)
    if calib_mode is not None and calib_mode != 'none':
        _check_ctx(ctx)
        if calib_data is None:
            raise ValueError('calib_data must be provided when calib_mode=%s' % calib_mode)
        if calib_mode not in ('naive', 'entropy', 'customize'):
            raise ValueError('please set calibration mode to naive or entropy.')
        data_names = [p[0] if isinstance(p, (tuple, list)) else p.name
                      for p in calib_data.provide_data]
        q = _GRAPHS[id(qsym)][1]
        n = _collect_layer_statistics(q.fheads, args, auxs, calib_data, collector,
                                      collector.include_layer if hasattr(
                                          collector, "include_layer") else q.calib,
                                      ctx, num_calib_examples, logger)
        if logger:
            logger.info('Collected layer output values from FP32 model using %d examples'
                        % n)
        qsym, qarg_params, aux_params = calib_graph(
            qsym=qsym, arg_params=args, aux_params=auxs, collector=collector,
            calib_mode=calib_mode, quantized_dtype=quantized_dtype, logger=logger)
    else:
        data_names = [p[0] if isinstance(p, (tuple, list)) else p.name for p in data_shapes]
    heads = _post_quantize_fuse(_GRAPHS[id(qsym)][1].heads)
    qsym = _load(heads)
    from ..gluon import SymbolBlock
    net = SymbolBlock(qsym, [_sym.var(nm) for nm in data_names])
    params = net.collect_params()
    for k, v in list(qarg_params.items()) + list(aux_params.items()):
        if k in params:
            params[k]._load_init(v, ctx) if hasattr(params[k], "_load_init") else \
                params[k].set_data(v)
    return net


def quantize_net(network, quantized_dtype='auto', quantize_mode='full', exclude_layers=None,
                 exclude_layers_match=None, exclude_operators=None, calib_data=None,
                 data_shapes=None, calib_mode='none', num_calib_examples=None, ctx=cpu(),
                 logger=None):
    """:func:`quantize_net_v2` with tensor-wise quantization (deprecated in MXNet)."""
    warnings.warn('WARNING: This will be deprecated after MXNet 2.0, please use quantize_net_v2.')
    return quantize_net_v2(network=network, quantized_dtype=quantized_dtype,
                           quantize_mode=quantize_mode, quantize_granularity='tensor-wise',
                           exclude_layers=exclude_layers,
                           exclude_layers_match=exclude_layers_match,
                           exclude_operators=exclude_operators, calib_data=calib_data,
                           data_shapes=data_shapes, calib_mode=calib_mode,
                           num_calib_examples=num_calib_examples, ctx=ctx,
                           LayerOutputCollector=None, logger=logger)


# Names MXNet 1.9.1's quantization module exposes because it imports them.
def __getattr__(name):
    from .. import io as _io, module as _module, ndarray as _nd, symbol as _sym, base as _base
    table = {"DataBatch": lambda: _io.DataBatch, "DataDesc": lambda: _io.DataDesc,
             "DataIter": lambda: _io.DataIter, "Module": lambda: _module.Module,
             "NDArray": lambda: _nd.NDArray, "Symbol": lambda: _sym.Symbol,
             "nd_load": lambda: _nd.load, "nd_save": lambda: _nd.save, "ndarray": lambda: _nd,
             "py_str": lambda: _base.py_str, "sym_load": lambda: _sym.load}
    if name in table:
        return table[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
