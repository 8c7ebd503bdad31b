"""Shape inference with unknown dimensions (MXNet 1.x's partial shapes, 0 = unknown).

``symbol._Inference`` computes an operator's output shapes once all its input shapes are
known. With some dimensions unknown (a batch size of 0, an input known only from the
outputs) MXNet's operators still infer what they can, forward and backward; this module
holds that part:

* :func:`explicit`: rules written for operators whose partial inference MXNet relies on
  both ways (SliceChannel/split, Concat, where, a Convolution's data from its output);
* :data:`PROBE_OPS` and :func:`probe_inputs`/:func:`probe_result`: forward inference for
  operators whose output dimensions each follow from some input dimensions without
  depending on whether another dimension is small: the operator's shape is computed twice,
  with the unknown dimensions set to two different sizes, and a dimension that comes out
  the same both times is known. (Operators that clip or squeeze by size, such as ``slice``
  or ``squeeze``, are left out: their output could depend on the unknown size.)
"""
from __future__ import annotations

import ast

__all__ = ["explicit", "PROBE_OPS", "probe_inputs", "probe_result"]

# Two sizes for the unknown dimensions of a probe: far apart, prime, and small enough that
# a shape holding several of them stays within int64 element counts.
PROBE_SIZES = (509, 8191)

PROBE_OPS = frozenset((
    "dot", "batch_dot", "Embedding", "transpose", "SwapAxis", "pick", "expand_dims",
    "sum", "mean", "prod", "nansum", "nanprod", "max", "min", "norm", "argmax", "argmin",
    "Pooling", "Convolution", "Deconvolution", "Reshape", "Flatten", "one_hot", "take",
    "batch_take", "Pad", "tile", "repeat", "SequenceLast", "sort", "argsort", "topk",
    "stack", "UpSampling", "LRN", "L2Normalization", "moments", "reverse", "space_to_depth",
    "depth_to_space", "gather_nd", "RNN", "broadcast_to", "broadcast_like",
    "reshape_like"))


def is_probe_op(op):
    return op in PROBE_OPS or (op.startswith("broadcast_") and op != "broadcast_axis")


def _merge(a, b):
    """Two partial shapes of one array merged (0 unknown); None when they disagree."""
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b):
        return None
    out = []
    for x, y in zip(a, b):
        if x and y and x != y:
            return None
        out.append(x or y)
    return tuple(out)


def _known(shape):
    return shape is not None and len(shape) > 0


def _full(shape):
    return _known(shape) and all(d > 0 for d in shape)


def _int(v, default):
    if v is None or v == "None":
        return default
    return int(v)


def _ints(v):
    if v is None or v == "None":
        return ()
    if isinstance(v, int):
        return (v,)
    return tuple(int(x) for x in v)


def _truthy(v):
    if isinstance(v, str):
        return v.lower() in ("true", "1")
    return bool(v)


# ---------------------------------------------------------------------------- rules
def _slice_channel(attrs, ins, outs, n, squeeze):
    """SliceChannel / split: every output one equal part of the input along ``axis``."""
    x = ins[0]
    axis = _int(attrs.get("axis"), 1)
    out = None
    for o in outs:
        out = _merge(out, o) if _known(o) else out
    new_in, new_out = None, None
    if _known(x):
        ax = axis % len(x)
        part = list(x)
        if part[ax]:
            if part[ax] % n:
                return None, None   # (the operator's own error, at full inference)
            part[ax] //= n
        if squeeze:
            if part[ax] not in (0, 1):
                return None, None
            del part[ax]
        new_out = tuple(part)
    if _known(out):
        ndim = len(out) + (1 if squeeze else 0)
        ax = axis % ndim
        whole = list(out)
        if squeeze:
            whole.insert(ax, n)
        else:
            whole[ax] = whole[ax] * n
        new_in = tuple(whole)
    merged_out = _merge(new_out, out) if new_out is not None else out
    return [new_in], [merged_out] * len(outs)


def _concat(attrs, ins, outs):
    dim = _int(attrs.get("dim"), 1)
    known = [s for s in list(ins) + outs[:1] if _known(s)]
    if not known:
        return None, None
    ndim = len(known[0])
    if any(len(s) != ndim for s in known):
        return None, None
    ax = dim % ndim
    # every dimension but the joined one is shared by the inputs and the output
    shared = [0] * ndim
    for s in known:
        for i, d in enumerate(s):
            if i != ax and d:
                if shared[i] and shared[i] != d:
                    return None, None   # (reported by the full inference)
                shared[i] = d

    def with_shared(s, along):
        res = list(shared)
        res[ax] = along
        return tuple(res)
    sizes = [s[ax] if _known(s) else 0 for s in ins]
    out = outs[0] if outs else None
    total = out[ax] if _known(out) else 0
    if all(sizes):
        total = sum(sizes)
    elif total and sizes.count(0) == 1:
        rest = total - sum(sizes)
        if rest > 0:
            sizes[sizes.index(0)] = rest
    return [with_shared(s, d) for s, d in zip(ins, sizes)], [with_shared(out, total)]


def _where(attrs, ins, outs):
    cond, x, y = ins
    out = outs[0] if outs else None
    if not _full(cond):   # (MXNet's where infers nothing before the condition is known)
        return None, None
    shape = None
    for s in (x, y, out):
        if _known(s):
            shape = _merge(shape, s)
            if shape is None:
                return None, None
    if shape is None:
        return None, None
    if len(cond) == len(shape):
        shape = _merge(shape, cond)
    elif len(cond) == 1:
        shape = _merge(shape, (cond[0],) + (0,) * (len(shape) - 1))
    if shape is None:
        return None, None
    return [cond, shape, shape], [shape]


def _conv_data(attrs, ins, outs):
    """A Convolution's data from its output: the batch size, and each spatial size whose
    stride is 1 (as MXNet's Convolution back-fills it)."""
    d = ins[0] if ins else None
    o = outs[0] if outs else None
    if not _known(o) or (_known(d) and len(d) != len(o)):
        return None, None
    layout = attrs.get("layout")
    if layout not in (None, "None", "NCW", "NCHW", "NCDHW"):
        return [(o[0],) + (0,) * (len(o) - 1)], None
    kernel = _ints(attrs.get("kernel"))
    nd = len(o) - 2
    if len(kernel) != nd:
        return [(o[0],) + (0,) * (len(o) - 1)], None
    stride = _ints(attrs.get("stride")) or (1,) * nd
    dilate = _ints(attrs.get("dilate")) or (1,) * nd
    pad = _ints(attrs.get("pad")) or (0,) * nd
    spatial = []
    for i in range(nd):
        size = 0
        if o[2 + i] and stride[i] == 1:
            size = o[2 + i] + dilate[i] * (kernel[i] - 1) - 2 * pad[i]
        spatial.append(max(size, 0))
    return [(o[0], 0) + tuple(spatial)], None


def _pick(attrs, ins, outs):
    """pick: the output (and the index) is the data without ``axis`` (kept as 1 with
    ``keepdims``)."""
    x, index = ins
    out = outs[0] if outs else None
    keep = _truthy(attrs.get("keepdims", False))
    axis = attrs.get("axis", -1)
    if axis is None or axis == "None":
        return None, None
    axis = int(axis)
    reduced = None
    if _known(x):
        ax = axis % len(x)
        reduced = tuple(x[:ax]) + ((1,) if keep else ()) + tuple(x[ax + 1:])
    for s in (index, out):
        if _known(s):
            reduced = _merge(reduced, s)
            if reduced is None:
                return None, None
    if reduced is None:
        return None, None
    new_x = None
    if not _known(x) or not all(x):
        ndim = len(reduced) + (0 if keep else 1)
        ax = axis % ndim
        rest = list(reduced)
        if keep:
            rest[ax] = 0
        else:
            rest.insert(ax, 0)
        new_x = tuple(rest)
    return [new_x, reduced], [reduced]


def _slice_axis(attrs, ins, outs):
    """slice_axis: the data's shape, the sliced axis's size computed once it is known."""
    x = ins[0]
    if not _known(x):
        return None, None
    ax = _int(attrs.get("axis"), 0) % len(x)
    size = 0
    if x[ax]:
        begin = _int(attrs.get("begin"), 0)
        end = attrs.get("end")
        end = None if end is None or end == "None" else int(end)
        size = len(range(*slice(begin, end).indices(x[ax])))
        if size <= 0:
            return None, None   # (the operator's own error)
    out = list(x)
    out[ax] = size
    return [None], [tuple(out)]


def _opt_ints(v):
    """A begin/end/step attribute of slice: a tuple of ints and Nones (strings parsed)."""
    if isinstance(v, str):
        v = v.strip()
        if v in ("", "None", "()", "[]"):
            return ()
        try:
            v = ast.literal_eval(v)
        except (ValueError, SyntaxError):
            return None
    if v is None:
        return ()
    if isinstance(v, int):
        return (v,)
    try:
        return tuple(None if d is None or d == "None" else int(d) for d in v)
    except (TypeError, ValueError):
        return None


def _slice(attrs, ins, outs):
    """slice: each sliced dimension's size computed where the data's is known, unknown
    where it is not; the dimensions past ``begin``'s length are the data's."""
    x = ins[0]
    if not _known(x):
        return None, None
    begin, end = _opt_ints(attrs.get("begin")), _opt_ints(attrs.get("end"))
    step = _opt_ints(attrs.get("step"))
    if begin is None or end is None or step is None or len(begin) != len(end) or \
            len(begin) > len(x):
        return None, None
    step = step or (None,) * len(begin)
    if len(step) != len(begin):
        return None, None
    out = list(x)
    for i, (b, e, s) in enumerate(zip(begin, end, step)):
        if s == 0:
            return None, None   # (the operator's own error, at full inference)
        if x[i] > 0:
            out[i] = len(range(*slice(b, e, s).indices(x[i])))
            if out[i] <= 0:
                return None, None
        else:
            out[i] = 0
    return [None], [tuple(out)]


def _transpose(attrs, ins, outs):
    """transpose: output dimension i is the data's dimension ``axes[i]``, both ways."""
    x = ins[0]
    out = outs[0] if outs else None
    ndim = len(x) if _known(x) else len(out) if _known(out) else 0
    if not ndim or (_known(x) and _known(out) and len(x) != len(out)):
        return None, None
    axes = _opt_ints(attrs.get("axes"))
    if axes is None or any(a is None for a in axes):
        return None, None
    axes = tuple(axes) or tuple(range(ndim - 1, -1, -1))
    if len(axes) != ndim or sorted(a % ndim for a in axes) != list(range(ndim)):
        return None, None   # (the operator's own error, at full inference)
    axes = [a % ndim for a in axes]
    new_out = [x[a] if _known(x) else 0 for a in axes]
    new_in = [0] * ndim
    for i, a in enumerate(axes):
        new_in[a] = out[i] if _known(out) else 0
    return [tuple(new_in)], [tuple(new_out)]


def _reshape_data(attrs, ins, outs):
    """Reshape: a data shape with one unknown dimension, once the output's is known, gets
    that dimension from the element count (MXNet infers it backward so); otherwise the
    forward probe applies."""
    x = ins[0] if ins else None
    out = outs[0] if outs else None
    if not _known(x) or not _full(out) or sum(1 for d in x if d <= 0) != 1:
        return None, None
    total = 1
    for d in out:
        total *= d
    known = 1
    for d in x:
        known *= d if d > 0 else 1
    if total % known:
        return None, None   # (the operator's own error, at full inference)
    return [tuple(d if d > 0 else total // known for d in x)], [None]


def explicit(op, attrs, ins, outs):
    """``(input shapes, output shapes)`` a node's partial shapes give, by the operator's own
    rule (lists aligned with the node's inputs and outputs, None where nothing is learnt),
    or ``(None, None)`` for operators without one."""
    if op == "SliceChannel":
        return _slice_channel(attrs, ins, outs, _int(attrs.get("num_outputs"), 1),
                              _truthy(attrs.get("squeeze_axis", False)))
    if op in ("_split_v2", "split_v2"):
        sections = attrs.get("sections", attrs.get("indices_or_sections"))
        sections = sections if isinstance(sections, int) else _int(sections, 0) \
            if isinstance(sections, str) and sections.isdigit() else 0
        if sections:
            return _slice_channel(attrs, ins, outs, sections,
                                  _truthy(attrs.get("squeeze_axis", False)))
        return None, None
    if op == "Concat":
        return _concat(attrs, ins, outs)
    if op == "where" and len(ins) == 3:
        return _where(attrs, ins, outs)
    if op == "Convolution":
        return _conv_data(attrs, ins, outs)
    if op == "pick" and len(ins) == 2:
        return _pick(attrs, ins, outs)
    if op == "slice_axis":
        return _slice_axis(attrs, ins, outs)
    if op == "transpose" and len(ins) == 1:
        return _transpose(attrs, ins, outs)
    if op == "slice" and len(ins) == 1:
        return _slice(attrs, ins, outs)
    if op in ("Reshape", "reshape") and len(ins) == 1:
        return _reshape_data(attrs, ins, outs)
    if op in ("dot", "np.dot", "np.matmul") and len(ins) == 2:
        return _dot(op, attrs, ins)
    return None, None


def _dot(op, attrs, ins):
    """The contracted axes of a matrix product agree: an unknown one (0) takes the other's
    size (a deferred weight ``w`` in ``x.dot(w)`` learns its input size from ``x``)."""
    a, b = ins
    if a is None or b is None or not len(a) or not len(b):
        return None, None
    if op == "dot":
        ka = 0 if _truthy(attrs.get("transpose_a", False)) else len(a) - 1
        kb = len(b) - 1 if _truthy(attrs.get("transpose_b", False)) else 0
    else:
        ka, kb = len(a) - 1, (len(b) - 2 if len(b) >= 2 else 0)
    if (a[ka] == 0) == (b[kb] == 0):
        return None, None
    a, b = list(a), list(b)
    if a[ka] == 0:
        a[ka] = b[kb]
        return [tuple(a), None], None
    b[kb] = a[ka]
    return [None, tuple(b)], None


# ---------------------------------------------------------------------------- probing
def probe_inputs(ins, size):
    """The input shapes with every unknown dimension set to ``size``."""
    return [tuple(d if d > 0 else size for d in s) for s in ins]


def probe_result(first, second):
    """Output shapes from two probes: a dimension equal in both is known, else 0; an output
    whose rank differs between the probes is unknown (None)."""
    res = []
    for a, b in zip(first, second):
        if a is None or b is None or len(a) != len(b):
            res.append(None)
        else:
            res.append(tuple(x if x == y else 0 for x, y in zip(a, b)))
    return res
