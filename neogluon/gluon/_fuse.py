"""Graph-level fusion of the LSTM cell's pointwise part in a captured graph.

An LSTM cell unrolled inside one captured graph (``gluon.rnn.LSTMCell`` in a hybridized
block, ``mx.rnn.LSTMCell`` through an executor) runs, per cell and step, after its two
FullyConnected layers::

    x = elemwise_add(i2h, h2h)
    p0, p1, p2, p3 = SliceChannel(x, num_outputs=4, axis=1)
    i, f, g, o = sigmoid(p0), sigmoid(p1), tanh(p2), sigmoid(p3)
    c' = elemwise_add(elemwise_mul(f, c), elemwise_mul(i, g))
    h' = elemwise_mul(o, tanh(c'))

ten operators forward and about fifteen autograd nodes backward, each a Python call through
the operator layer for a few thousand values. :func:`fuse_lstm_cells` finds that exact
subgraph in a graph's op list (the dataflow, not the order the nodes were recorded in; either
operand order of the commutative ``elemwise_*`` operators; ``Activation(act_type=...)`` or the
named activation operators) and replaces it with one program entry that runs
:class:`_LSTMPointwise`, one ``torch.autograd.Function``: forward calls the same torch
functions on the same memory layouts as the operators would (the parts are views of ``x``
where the unfused replay's split gives views, contiguous copies where it copies; tanh is
``_act_kernel.tanh``'s choice), and backward is written out with the same ATen formulas the
unfused autograd nodes use (``sigmoid_backward``, ``tanh_backward``, products with the saved
values, one ``cat`` for the split). So values and gradients are bit-identical to the unfused
replay (one exception: when ``c'`` itself takes gradients from two or more other operators,
autograd adds those first, and float addition of three terms depends on the order).

A match requires every value inside the pattern to be used only inside it (not a graph output,
no other consumer); ``x`` is computed inside the fused entry only when the ``elemwise_add``
producing it has that property too. Anything else (a different activation, gate order, a
broadcast operator, a wrapper cell that reads a gate) does not match, and the operators
replay as recorded. At run time the entry falls back to the recorded operators unless the
arrays are plain dense NDArrays of one floating dtype, device and context with the shapes
``(B, 4H)``, ``(B, 4H)``, ``(B, H)``, and nothing traces torch calls (make_fx, TorchScript,
functorch, a CUDA graph capture). ``NEOGLUON_FUSE_LSTM=0`` (read when a graph is captured;
:func:`set_enabled`) turns the pass off.

A backward with ``create_graph=True`` recomputes the unfused forward from the saved inputs and
differentiates it, so higher-order gradients are those of the operators.
"""
from __future__ import annotations

import os

import torch

from ..ndarray import _act_kernel
from ..ndarray.ndarray import NDArray, _new, _run, _state

__all__ = ["fuse_lstm_cells", "fuse_dropout_masks", "share_fc_transposes", "set_enabled",
           "enabled", "set_masks_enabled", "set_fc_share_enabled"]

_ENABLED = [os.environ.get("NEOGLUON_FUSE_LSTM", "1").strip().lower()
            not in ("0", "false", "no", "off")]
_MASKS = [os.environ.get("NEOGLUON_FUSE_MASKS", "1").strip().lower()
          not in ("0", "false", "no", "off")]


_FC_SHARE = [os.environ.get("NEOGLUON_SHARE_FC_TRANSPOSE", "1").strip().lower()
             not in ("0", "false", "no", "off")]


def set_fc_share_enabled(flag):
    """Turn :func:`share_fc_transposes` on or off for graphs captured from now on; returns
    the old setting."""
    prev = _FC_SHARE[0]
    _FC_SHARE[0] = bool(flag)
    return prev


def set_masks_enabled(flag):
    """Turn the dropout-mask pass (:func:`fuse_dropout_masks`) on or off for graphs captured
    from now on; returns the old setting."""
    prev = _MASKS[0]
    _MASKS[0] = bool(flag)
    return prev


def set_enabled(flag):
    """Turn the fusion pass on or off for graphs captured from now on; returns the old
    setting."""
    prev = _ENABLED[0]
    _ENABLED[0] = bool(flag)
    return prev


def enabled():
    return _ENABLED[0]


_sigmoid_backward = torch.ops.aten.sigmoid_backward
_tanh_backward = torch.ops.aten.tanh_backward


def _tanh(t):
    """The tanh the ``tanh`` operator computes for ``t`` (the compiled kernel where it takes
    ``t``, else torch's), without recording."""
    if _act_kernel.usable(t):
        return _act_kernel._forward(t)
    return torch.tanh(t)


def _parts(x, views):
    parts = torch.chunk(x, 4, 1)
    if views:
        return parts
    return [p.clone(memory_format=torch.contiguous_format) for p in parts]


def _pointwise(x, c, views, f_first, i_first, fc_first, o_first, m0_first):
    """The cell's forward on tensors, operand by operand as the graph had them (the
    products' and sums' operand order only decides which tensor is ``self`` in the ATen call;
    the values are the same either way, so this is the recorded order for good measure)."""
    p0, p1, p2, p3 = _parts(x, views)
    i = torch.sigmoid(p0)
    f = torch.sigmoid(p1)
    g = _tanh(p2)
    o = torch.sigmoid(p3)
    m0 = torch.mul(f, c) if f_first else torch.mul(c, f)
    m1 = torch.mul(i, g) if i_first else torch.mul(g, i)
    c2 = torch.add(m0, m1) if m0_first else torch.add(m1, m0)
    th = _tanh(c2)
    h2 = torch.mul(o, th) if o_first else torch.mul(th, o)
    return h2, c2, (i, f, g, o, th)


def _reference(x, c, views, order):
    """The unfused forward with autograd (for create_graph=True backward)."""
    p0, p1, p2, p3 = _parts(x, views)
    i, f, o = torch.sigmoid(p0), torch.sigmoid(p1), torch.sigmoid(p3)
    g = torch.tanh(p2) if not _act_kernel.usable(p2) else _act_kernel.tanh(p2)
    f_first, i_first, _, o_first, m0_first = order
    m0 = torch.mul(f, c) if f_first else torch.mul(c, f)
    m1 = torch.mul(i, g) if i_first else torch.mul(g, i)
    c2 = torch.add(m0, m1) if m0_first else torch.add(m1, m0)
    th = torch.tanh(c2) if not _act_kernel.usable(c2) else _act_kernel.tanh(c2)
    return (torch.mul(o, th) if o_first else torch.mul(th, o)), c2


class _LSTMPointwise(torch.autograd.Function):
    """(i2h, h2h or None, c, views, order) -> (h', c'); see the module notes."""

    @staticmethod
    def forward(ctx, i2h, h2h, c, views, order):
        x = i2h if h2h is None else torch.add(i2h, h2h)
        h2, c2, saved = _pointwise(x, c, views, *order)
        ctx.set_materialize_grads(False)
        ctx.views, ctx.order, ctx.has_h2h = views, order, h2h is not None
        ctx.save_for_backward(i2h, h2h, c, *saved)
        return h2, c2

    @staticmethod
    def backward(ctx, gh, gc):
        i2h, h2h, c, i, f, g, o, th = ctx.saved_tensors
        need_x = ctx.needs_input_grad[0] or ctx.needs_input_grad[1]
        need_c = ctx.needs_input_grad[2]
        if gh is None and gc is None:
            return None, None, None, None, None
        if torch.is_grad_enabled():
            return _LSTMPointwise._differentiable_backward(ctx, i2h, h2h, c, gh, gc,
                                                           need_x, need_c)
        # h' = o * th: the product's gradients; th = tanh(c'): tanh_backward
        dc = None
        do = None
        if gh is not None:
            do = gh * th
            dc = _tanh_backward(gh * o, th)
        if gc is not None:
            dc = gc if dc is None else dc + gc
        # c' = f * c + i * g
        dx = None
        if need_x:
            di = _sigmoid_backward(dc * g, i)
            df = _sigmoid_backward(dc * c, f)
            dg = _tanh_backward(dc * i, g)
            do = torch.zeros_like(o) if do is None else _sigmoid_backward(do, o)
            dx = torch.cat([di, df, dg, do], 1)
        dcp = dc * f if need_c else None
        if ctx.has_h2h:
            return dx, (dx if ctx.needs_input_grad[1] else None), dcp, None, None
        return dx, None, dcp, None, None

    @staticmethod
    def _differentiable_backward(ctx, i2h, h2h, c, gh, gc, need_x, need_c):
        ins = [i2h] + ([h2h] if h2h is not None else []) + [c]
        with torch.enable_grad():
            x = i2h if h2h is None else torch.add(i2h, h2h)
            h2, c2 = _reference(x, c, ctx.views, ctx.order)
        outs, grads = [], []
        for t, gr in ((h2, gh), (c2, gc)):
            if gr is not None:
                outs.append(t)
                grads.append(gr)
        wanted = [t for t in ins if t.requires_grad]
        res = torch.autograd.grad(outs, wanted, grads, create_graph=True, allow_unused=True) \
            if wanted else ()
        got = dict(zip(map(id, wanted), res))
        r = [got.get(id(t)) for t in ins]
        if h2h is None:
            return r[0], None, r[1], None, None
        return r[0], r[1], r[2], None, None


# Function.apply without its Python prologue (functorch's dead-wrapper unwrapping, only
# needed under functorch transforms, where the entry falls back anyway): the C apply
_apply = super(torch.autograd.Function, _LSTMPointwise).apply


def _traced():
    # (torch._C._is_tracing is torch.jit.is_tracing() outside TorchScript, where this
    # Python never runs)
    return (torch._C._len_torch_dispatch_stack() != 0 or torch._C._is_tracing()
            or torch._C._are_functorch_transforms_active())


class _FusedCell:
    """A program entry's callable: runs the cell on ``env`` (see block._run_program)."""

    __slots__ = ("i2h", "h2h", "c", "h_out", "c_out", "views", "order", "sub")

    def __init__(self, i2h, h2h, c, h_out, c_out, views, order, sub):
        self.i2h, self.h2h, self.c = i2h, h2h, c
        self.h_out, self.c_out = h_out, c_out
        self.views, self.order, self.sub = views, order, sub

    def _tensors(self, env):
        a = env[self.i2h]
        cc = env[self.c]
        b = env[self.h2h] if self.h2h is not None else None
        if type(a) is not NDArray or type(cc) is not NDArray or (
                b is not None and type(b) is not NDArray):
            return None
        ctx = a._ctx
        if not (cc._ctx is ctx or cc._ctx == ctx) or (
                b is not None and not (b._ctx is ctx or b._ctx == ctx)):
            return None
        ta, tc = a._t, cc._t
        tb = b._t if b is not None else None
        dt = ta.dtype
        if (type(ta) is not torch.Tensor or type(tc) is not torch.Tensor
                or not dt.is_floating_point or tc.dtype is not dt or ta.dim() != 2):
            return None
        n, k = ta.shape
        if k % 4 or tc.shape != (n, k // 4) or tc.device != ta.device:
            return None
        if tb is not None and (type(tb) is not torch.Tensor or tb.dtype is not dt
                               or tb.shape != ta.shape or tb.device != ta.device):
            return None
        if ta.device.type == "cuda" and torch.cuda.is_current_stream_capturing():
            return None
        if _traced():
            return None
        return ctx, ta, tb, tc

    def __call__(self, env):
        got = self._tensors(env)
        if got is None:
            from .block import _run_program
            _run_program(self.sub, env)
            return
        ctx, ta, tb, tc = got
        if _state.recording:
            h2, c2 = _apply(ta, tb, tc, self.views, self.order)
        else:
            with torch.no_grad():
                x = ta if tb is None else torch.add(ta, tb)
                h2, c2, _ = _pointwise(x, tc, self.views, *self.order)
        env[self.h_out] = _new(h2, ctx)
        env[self.c_out] = _new(c2, ctx)


# ------------------------------------------------------------------ pattern matching
_PARAMS = {
    "SliceChannel": ("data", "num_outputs", "axis", "squeeze_axis"),
    "split": ("data", "num_outputs", "axis", "squeeze_axis"),
    "sigmoid": ("data",), "tanh": ("data",),
    "Activation": ("data", "act_type"),
    "elemwise_add": ("lhs", "rhs"), "elemwise_mul": ("lhs", "rhs"),
    "ones_like": ("data",), "where": ("condition", "x", "y"),
    "Dropout": ("data", "p", "mode", "axes", "cudnn_off"),
    "FullyConnected": ("data", "weight", "bias", "num_hidden", "no_bias", "flatten"),
}


def _ref(v):
    return v["@"] if isinstance(v, dict) and len(v) == 1 and "@" in v else None


def _canon(node):
    """The node's operator name and its arguments by parameter name (``name`` dropped), or
    None when it is not one of the operators of the pattern or takes anything else."""
    kind, name = node["op"]
    params = _PARAMS.get(name)
    if kind != "nd" or params is None:
        return None
    args = node["args"]
    if len(args) > len(params):
        return None
    got = dict(zip(params, args))
    for k, v in node["kwargs"].items():
        if k == "name":
            continue
        if k not in params or k in got:
            return None
        got[k] = v
    return name, got


def _act(canon):
    """'sigmoid' or 'tanh' when the node is that activation of one slot."""
    if canon is None:
        return None
    name, a = canon
    if name in ("sigmoid", "tanh") and len(a) == 1:
        return name if _ref(a.get("data")) is not None else None
    if name == "Activation" and set(a) == {"data", "act_type"} and \
            a["act_type"] in ("sigmoid", "tanh") and _ref(a["data"]) is not None:
        return a["act_type"]
    return None


def _binary(canon, op):
    if canon is None or canon[0] != op or set(canon[1]) != {"lhs", "rhs"}:
        return None
    lhs, rhs = _ref(canon[1]["lhs"]), _ref(canon[1]["rhs"])
    if lhs is None or rhs is None:
        return None
    return lhs, rhs


def _is_slice4(canon):
    if canon is None or canon[0] not in ("SliceChannel", "split"):
        return None
    a = canon[1]
    data = _ref(a.get("data"))
    if data is None or a.get("num_outputs") != 4:
        return None
    if a.get("axis", 1) not in (1, -1) or a.get("squeeze_axis", False) not in (False, 0):
        return None
    return data


def _slots_in(v, acc):
    if isinstance(v, dict):
        if "@" in v and len(v) == 1:
            acc.append(v["@"])
        else:
            for x in v.values():
                _slots_in(x, acc)
    elif isinstance(v, list):
        for x in v:
            _slots_in(x, acc)


def _dataflow(nodes):
    """Who reads and who writes each slot of a graph's node list: (uses: slot -> indexes of
    the nodes reading it, in order; producer: slot -> index of the node writing it)."""
    uses = {}
    producer = {}
    for idx, node in enumerate(nodes):
        acc = []
        _slots_in(node["args"], acc)
        _slots_in(node["kwargs"], acc)
        for s in acc:
            uses.setdefault(s, []).append(idx)
        for s in node["out"]:
            producer[s] = idx
    return uses, producer


def fuse_lstm_cells(graph, prog):
    """``prog`` (``graph._prog``'s entries, one per ``graph.nodes`` node) with every LSTM cell
    pointwise subgraph replaced by one fused entry; ``prog`` itself when none matches."""
    if not _ENABLED[0]:
        return prog
    from ..ndarray.ops import _split_views
    nodes = graph.nodes
    if len(nodes) != len(prog) or len(nodes) < 10:
        return prog
    if any("out" in n["kwargs"] for n in nodes):
        return prog
    uses, producer = _dataflow(nodes)
    canon = [_canon(node) for node in nodes]
    outputs = set(graph.out_slots)

    def single(slot, consumer):
        """``slot`` is produced by a node, used once, by ``consumer``, and no output."""
        return slot in producer and slot not in outputs and uses.get(slot) == [consumer]

    def sole(slot):
        u = uses.get(slot)
        return u[0] if u and len(u) == 1 and slot not in outputs and slot in producer \
            else None

    replace = {}     # node index -> fused entry placed there
    removed = set()
    for si, node in enumerate(nodes):
        data = _is_slice4(canon[si])
        if data is None or len(node["out"]) != 4:
            continue
        if node["structure"] != {"list": [0, 0, 0, 0]}:
            continue
        gate_slots = node["out"]
        acts = []
        for k, s in enumerate(gate_slots):
            ci = sole(s)
            if ci is None or ci in removed:
                break
            kind = _act(canon[ci])
            if kind != ("tanh" if k == 2 else "sigmoid"):
                break
            acts.append(ci)
        if len(acts) != 4:
            continue
        i_s, f_s, g_s, o_s = (nodes[a]["out"][0] for a in acts)
        # f * c and i * g, each used once by the state's add
        m0 = sole(f_s)
        m1 = sole(i_s)
        if m0 is None or m1 is None or sole(g_s) != m1:
            continue
        b0, b1 = _binary(canon[m0], "elemwise_mul"), _binary(canon[m1], "elemwise_mul")
        if b0 is None or b1 is None or set(b1) != {i_s, g_s} or f_s not in b0:
            continue
        f_first = b0[0] == f_s
        c_in = b0[1] if f_first else b0[0]
        if c_in == f_s or c_in in (i_s, g_s, o_s) or c_in in gate_slots:
            continue
        i_first = b1[0] == i_s
        m0_s, m1_s = nodes[m0]["out"][0], nodes[m1]["out"][0]
        st = sole(m0_s)
        if st is None or sole(m1_s) != st:
            continue
        b2 = _binary(canon[st], "elemwise_add")
        if b2 is None or set(b2) != {m0_s, m1_s}:
            continue
        m0_first = b2[0] == m0_s
        c_out = nodes[st]["out"][0]
        # h' = o * tanh(c')
        th_i = None
        for u in uses.get(c_out, ()):
            if _act(canon[u]) == "tanh" and u not in removed:
                th_s = nodes[u]["out"][0]
                if sole(th_s) is not None and sole(th_s) == sole(o_s):
                    th_i = u
                    break
        if th_i is None:
            continue
        th_s = nodes[th_i]["out"][0]
        oi = sole(o_s)
        b3 = _binary(canon[oi], "elemwise_mul")
        if b3 is None or set(b3) != {o_s, th_s}:
            continue
        o_first = b3[0] == o_s
        h_out = nodes[oi]["out"][0]
        part = [si] + acts + [m0, m1, st, th_i, oi]
        # the add producing x, when x is used by the split only
        add_i = producer.get(data)
        i2h = h2h = None
        if add_i is not None and single(data, si) and add_i not in removed:
            ba = _binary(canon[add_i], "elemwise_add")
            if ba is not None and data not in ba:
                i2h, h2h = ba
                part.insert(0, add_i)
        if i2h is None:
            i2h = data
        if c_in in (i2h, h2h) or any(p in removed for p in part):
            continue
        views = prog[si][1] is _split_views
        order = (f_first, i_first, None, o_first, m0_first)
        part.sort()
        sub = [prog[p] for p in part]
        entry = (4, _FusedCell(i2h, h2h, c_in, h_out, c_out, views, order, sub), None, None,
                 None, None)
        ins = [i2h, c_in] + ([h2h] if h2h is not None else [])
        pos = max([producer.get(s, -1) for s in ins]) + 1
        if pos > part[0]:
            # an input is made between the pattern's nodes; the entry goes where its inputs
            # are ready, which is still before any reader of h' or c'
            if pos > min(st, oi):
                continue
        else:
            pos = part[0]
        if pos in replace:
            continue
        removed.update(part)
        replace[pos] = entry
    if not replace:
        return prog
    out = []
    for idx, e in enumerate(prog):
        r = replace.get(idx)
        if r is not None:
            out.append(r)
        if idx not in removed:
            out.append(e)
    return out


# ------------------------------------------------------------------ zoneout masks
class _MaskedWhere:
    """A program entry for ``where(Dropout(ones_like(like), p), x, y)`` (ZoneoutCell's
    choice between a new and an old state; see :func:`fuse_dropout_masks`)."""

    __slots__ = ("like", "x", "y", "out", "keep", "always", "sub")

    def __init__(self, like, x, y, out, p, always, sub):
        self.like, self.x, self.y, self.out = like, x, y, out
        self.keep = 1.0 - p
        self.always, self.sub = always, sub

    def __call__(self, env):
        lk, a, b = env[self.like], env[self.x], env[self.y]
        if type(lk) is NDArray and type(a) is NDArray and type(b) is NDArray and (
                self.always or _state.training):
            tl, ta, tb = lk._t, a._t, b._t
            if (type(tl) is torch.Tensor and type(ta) is torch.Tensor
                    and type(tb) is torch.Tensor and tl.device.type == "cpu"
                    and tl.dtype.is_floating_point and ta.dtype is tb.dtype
                    and tl.shape == ta.shape and not _traced()):
                # aten's CPU dropout of ``ones``: noise = empty_like(ones).bernoulli_(1 - p),
                # noise /= 1 - p, ones * noise, and where() asks which entries are nonzero.
                # The CPU bernoulli_'s draws do not depend on the tensor's dtype (one double
                # per element from the generator; on Intel CPUs with MKL, an MKL stream
                # seeded by one draw, converted from int): a bool tensor of the same layout
                # gets that condition directly from the same draws (tests/test_fuse_masks.py
                # checks it on the running CPU).
                m = torch.empty_like(tl, dtype=torch.bool).bernoulli_(self.keep)
                if _state.recording:
                    r = torch.where(m, ta, tb)
                else:
                    r = _run(torch.where, m, ta, tb)
                env[self.out] = _new(r, a._ctx)
                return
        from .block import _run_program
        _run_program(self.sub, env)


def fuse_dropout_masks(graph, prog):
    """``prog`` (one entry per ``graph.nodes`` node) with every
    ``where(Dropout(ones_like(like), p=p), x, y)`` chain (gluon's ``ZoneoutCell``) whose mask
    and ones are used by that chain only replaced by one entry at the Dropout's place; the
    ones_like's and the where's places become None (the caller drops them), so the list
    keeps its length for :func:`fuse_lstm_cells`. Only ``0 < p < 1`` without ``axes``
    matches. The entry draws the mask as aten's CPU dropout does (the same generator, the
    same number of draws in the same order, so the same masks) without the ones, the scale
    and the product, and hands over to the recorded operators off the CPU (CUDA's dropout is
    another kernel with its own draws), outside training for ``mode='training'``, for
    non-float or non-NDArray values, shapes where() would broadcast, and under tracing."""
    if not _MASKS[0]:
        return prog
    nodes = graph.nodes
    if len(nodes) != len(prog) or any("out" in n["kwargs"] for n in nodes):
        return prog
    uses, producer = _dataflow(nodes)
    outputs = set(graph.out_slots)

    def sole(slot):
        u = uses.get(slot)
        return u[0] if u and len(u) == 1 and slot not in outputs and slot in producer \
            else None

    prog = list(prog)
    for di, node in enumerate(nodes):
        c = _canon(node)
        if c is None or c[0] != "Dropout" or node["structure"] != 0:
            continue
        a = c[1]
        o_s = _ref(a.get("data"))
        p = a.get("p", 0.5)
        mode = a.get("mode", "training")
        if o_s is None or isinstance(p, bool) or not isinstance(p, (int, float)) or \
                not 0 < p < 1 or mode not in ("training", "always") or \
                a.get("axes", ()) not in ((), [], None) or \
                any(_ref(v) is not None for k, v in a.items() if k != "data"):
            continue
        oi = producer.get(o_s)
        if oi is None or sole(o_s) != di or prog[oi] is None:
            continue
        co = _canon(nodes[oi])
        if co is None or co[0] != "ones_like" or nodes[oi]["structure"] != 0:
            continue
        like = _ref(co[1].get("data"))
        m_s = node["out"][0]
        wi = sole(m_s)
        if like is None or wi is None or prog[wi] is None:
            continue
        cw = _canon(nodes[wi])
        if cw is None or cw[0] != "where" or set(cw[1]) != {"condition", "x", "y"} or \
                nodes[wi]["structure"] != 0:
            continue
        x, y = _ref(cw[1]["x"]), _ref(cw[1]["y"])
        if _ref(cw[1]["condition"]) != m_s or x is None or y is None or m_s in (x, y):
            continue
        # x and y must be ready at the Dropout's place: the draw keeps its place among the
        # graph's other draws
        if producer.get(x, -1) >= di or producer.get(y, -1) >= di:
            continue
        sub = [prog[oi], prog[di], prog[wi]]
        prog[di] = (4, _MaskedWhere(like, x, y, nodes[wi]["out"][0], float(p),
                                    mode == "always", sub), None, None, None, None)
        prog[oi] = prog[wi] = None
    return prog


# ------------------------------------------------------------------ shared weight transposes
class _SharedFC:
    """A program entry for a ``FullyConnected`` whose weight other FullyConnected entries of
    the graph use too: ``addmm(bias, x, wT)`` with one ``wT = weight.t()`` per replay,
    kept in an extra env slot (see :func:`share_fc_transposes`)."""

    __slots__ = ("x", "w", "b", "wt", "out", "first", "num_hidden", "sub")

    def __init__(self, x, w, b, wt, out, first, num_hidden, sub):
        self.x, self.w, self.b, self.wt, self.out = x, w, b, wt, out
        self.first, self.num_hidden, self.sub = first, num_hidden, sub

    def __call__(self, env):
        if self.first:
            wt = None
            w = env[self.w]
            if _state.recording and type(w) is NDArray:
                tw = w._t
                if type(tw) is torch.Tensor and tw.dim() == 2 and not _traced():
                    wt = tw.t()
            env[self.wt] = wt
        else:
            wt = env[self.wt]
        if wt is not None:
            a, b = env[self.x], env[self.b]
            if type(a) is NDArray and type(b) is NDArray:
                tx, tb = a._t, b._t
                n, k = wt.shape
                if (type(tx) is torch.Tensor and type(tb) is torch.Tensor and tx.dim() == 2
                        and tb.dim() == 1 and tx.shape[1] == n and tb.shape[0] == k
                        and (self.num_hidden is None or self.num_hidden == k)
                        and tx.dtype is wt.dtype and tb.dtype is wt.dtype
                        and tx.device == wt.device and tb.device == wt.device):
                    # what F.linear runs for a 2-D input with a bias: addmm(b, x, w.t())
                    env[self.out] = _new(torch.addmm(tb, tx, wt), a._ctx)
                    return
        from .block import _run_program
        _run_program(self.sub, env)


def share_fc_transposes(graph, prog):
    """``prog`` (one entry per ``graph.nodes`` node, None for nodes another pass took) with
    each ``FullyConnected(data, weight, bias)`` whose weight slot two or more such nodes read
    replaced by a :class:`_SharedFC` entry. ``F.linear`` of a 2-D input with a bias is
    ``addmm(bias, x, weight.t())``, and under autograd every call records its own transpose
    node; an RNN unrolled over T steps records T of them per weight. The entries compute
    the transpose once per replay (at the first of them, recording only) and call
    ``addmm`` on it: the same ATen calls on the same operands, so the same values; the
    weight's gradient is the same per-use products summed in the same order, transposed once
    instead of per use. Anything else (not recording, a non-2-D input, no bias, mixed
    dtypes or devices, tracing) runs the recorded operator. Sets ``graph._nenv`` (the env
    length with the transposes' slots)."""
    if not _FC_SHARE[0]:
        return prog
    nodes = graph.nodes
    if len(nodes) != len(prog) or any("out" in n["kwargs"] for n in nodes):
        return prog     # (a node writing into an array could change a weight between uses)
    users = {}
    for idx, node in enumerate(nodes):
        if prog[idx] is None or "out" in node["kwargs"] or node["structure"] != 0:
            continue
        c = _canon(node)
        if c is None or c[0] != "FullyConnected":
            continue
        a = c[1]
        x, w, b = _ref(a.get("data")), _ref(a.get("weight")), _ref(a.get("bias"))
        nh = a.get("num_hidden")
        if x is None or w is None or b is None or a.get("no_bias", False) not in (False, 0) \
                or not (nh is None or (isinstance(nh, int) and not isinstance(nh, bool))) \
                or _ref(a.get("flatten")) is not None:
            continue
        users.setdefault(w, []).append((idx, x, b, nh))
    nenv = graph.nslots
    prog = list(prog)
    for w, us in users.items():
        if len(us) < 2:
            continue
        slot = nenv
        nenv += 1
        for k, (idx, x, b, nh) in enumerate(us):
            prog[idx] = (4, _SharedFC(x, w, b, slot, nodes[idx]["out"][0], k == 0, nh,
                                      [prog[idx]]), None, None, None, None)
    graph._nenv = nenv
    return prog
