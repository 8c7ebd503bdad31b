"""Object-detection operators of ``nd.contrib`` (and ``nd.ROIPooling``), as MXNet 1.9.1 computes
them on the CPU: box_nms / box_non_maximum_suppression, box_iou, box_encode, box_decode,
bipartite_matching, MultiBoxPrior, MultiBoxTarget, MultiBoxDetection, ROIAlign, ROIPooling,
Proposal and MultiProposal.

Written with vectorised torch ops. The only loops left in Python are the inherently sequential
greedy steps (non-maximum suppression over the sorted candidates, the greedy matchings), each
step working on whole tensors.

Gradients follow MXNet: ROIAlign and ROIPooling pass gradients to ``data`` (not to ``rois``),
box_nms copies each kept output row's gradient back to its input row; the other operators give
zero gradients to their inputs.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ..base import MXNetError
from .ndarray import NDArray, _new, _assign_out

__all__ = ["box_nms", "box_non_maximum_suppression", "box_iou", "box_encode", "box_decode",
           "bipartite_matching", "MultiBoxPrior", "MultiBoxTarget", "MultiBoxDetection",
           "ROIAlign", "ROIPooling", "Proposal", "MultiProposal"]

_FORMATS = ("corner", "center")


def _tensor(x, op, what):
    if not isinstance(x, NDArray):
        raise TypeError(f"{op}: {what} must be an NDArray, got {type(x).__name__}")
    return x._t


def _fmt(v, op, arg):
    if v not in _FORMATS:
        raise MXNetError(f"{op}: {arg}={v!r} is not one of 'corner', 'center'")
    return v


def _f32(v):
    """A float parameter as MXNet stores it (C float), widened back to a Python float."""
    return float(np.float32(v))


def _tuple(v, op, arg, n=None):
    if isinstance(v, (int, float)):
        v = (v,)
    try:
        v = tuple(float(a) for a in v)
    except TypeError:
        raise MXNetError(f"{op}: {arg}={v!r} must be a number or a tuple of numbers") from None
    if n is not None and len(v) != n:
        raise MXNetError(f"{op}: {arg} must have {n} values, got {len(v)}")
    return v


def _grad_wanted(*ts):
    return torch.is_grad_enabled() and any(t.requires_grad for t in ts)


class _ZeroGrad(torch.autograd.Function):
    """``out`` in the graph of ``inputs``, each of which gets a zero gradient (as MXNet's
    backward of these operators writes)."""

    # the head gradient is not read: MXNet's executor neither needs nor checks it
    ignores_head_grad = True

    @staticmethod
    def forward(ctx, out, *inputs):
        ctx.metas = [(i.shape, i.dtype, i.device) for i in inputs]
        return out.clone()

    @staticmethod
    def backward(ctx, g):
        return (None,) + tuple(torch.zeros(s, dtype=d, device=dev) for s, d, dev in ctx.metas)


def _wrap(outs, inputs, ctx):
    """NDArrays of ``outs`` (a tensor or a tuple), zero-gradient-linked to ``inputs``."""
    single = isinstance(outs, torch.Tensor)
    outs = (outs,) if single else tuple(outs)
    if _grad_wanted(*inputs):
        outs = tuple(_ZeroGrad.apply(o, *inputs) if o.is_floating_point() else o for o in outs)
    res = tuple(_new(o, ctx) for o in outs)
    return res[0] if single else list(res)


def _out(result, out):
    if out is None:
        return result
    if isinstance(result, list):
        for o, r in zip(out, result):
            o[:] = r
        return out
    return _assign_out(result, out)


# ----------------------------------------------------------------------------- box geometry

def _intersect_1d(a0, a1, b0, b1, fmt):
    """Overlap length along one axis; ``a0, a1`` are (min, max) for corner, (centre, size)
    for center; never negative. (``clamp`` with a tensor bound and ``relu`` are the fast CPU
    forms of min/max here.)"""
    if fmt == "corner":
        w = b1.clamp(max=a1) - b0.clamp(min=a0)
    else:
        ah, bh = a1 / 2, b1 / 2
        w = (b0 + bh).clamp(max=a0 + ah) - (b0 - bh).clamp(min=a0 - ah)
    return torch.relu(w)


def _area(b, fmt):
    if fmt == "corner":
        w = b[..., 2] - b[..., 0]
        h = b[..., 3] - b[..., 1]
    else:
        w, h = b[..., 2], b[..., 3]
    a = w * h
    return torch.where((w < 0) | (h < 0), torch.zeros_like(a), a)


def _cols(a):
    return [a[..., k].contiguous() for k in range(4)]


def _pair_inter(a, b, fmt):
    """Intersection areas of boxes ``a`` (..., P, 4) against ``b`` (..., Q, 4) -> (..., P, Q)."""
    a0, a1, a2, a3 = (v.unsqueeze(-1) for v in _cols(a))
    b0, b1, b2, b3 = (v.unsqueeze(-2) for v in _cols(b))
    iw = _intersect_1d(a0, a2, b0, b2, fmt)
    ih = _intersect_1d(a1, a3, b1, b3, fmt)
    return iw * ih


def box_iou(lhs, rhs, format="corner", out=None, name=None):
    """Intersection over union of every box of ``lhs`` (..., 4) with every box of ``rhs``
    (..., 4); shape ``lhs.shape[:-1] + rhs.shape[:-1]``. ``format`` 'corner' is
    [xmin, ymin, xmax, ymax], 'center' is [x, y, width, height]."""
    op = "box_iou"
    fmt = _fmt(format, op, "format")
    lt = _tensor(lhs, op, "lhs")
    rt = _tensor(rhs, op, "rhs")
    for nm, t in (("lhs", lt), ("rhs", rt)):
        if t.dim() < 2 or t.shape[-1] != 4:
            raise MXNetError(f"{op}: {nm} of shape {tuple(t.shape)} must have dim >= 2 and a "
                             f"last dimension of 4 (one box per row)")
    with torch.no_grad():
        a = lt.detach().reshape(-1, 4)
        b = rt.detach().to(a.dtype).reshape(-1, 4)
        inter = _pair_inter(a, b, fmt)
        union = _area(a, fmt)[:, None] + _area(b, fmt)[None, :] - inter
        iou = torch.where(inter <= 0, torch.zeros_like(inter), inter / union)
        iou = iou.reshape(tuple(lt.shape[:-1]) + tuple(rt.shape[:-1]))
    return _out(_wrap(iou, (lt, rt), lhs._ctx), out)


# ----------------------------------------------------------------------------- box_nms

def _to_center(c):
    l, t, r, b = c.unbind(-1)
    return torch.stack(((l + r) / 2, (t + b) / 2, r - l, b - t), -1)


def _to_corner(c):
    x, y, w, h = c.unbind(-1)
    w2, h2 = w / 2, h / 2
    return torch.stack((x - w2, y - h2, x + w2, y + h2), -1)


def _greedy_suppress(cand_rows, keep, limit, max_keep=None, chunk=64):
    """Greedy NMS over boxes sorted by descending score. ``keep`` (B, K) holds the valid
    boxes; ``cand_rows(rows)`` gives (B, len(rows), K): whether box i (for i in ``rows``)
    suppresses box j. Walking i = 0..limit-1, a kept box i suppresses the later boxes (j > i)
    it is a candidate for. Overlaps are computed for blocks of ``chunk`` rows, only for the
    rows still kept when their block is reached. With ``max_keep`` (one batch row) the walk
    stops once that many boxes are kept, and later boxes are dropped. Returns the new keep."""
    B, K = keep.shape
    limit = min(limit, K)
    keep = keep.clone()
    nk = 0
    for s0 in range(0, limit, chunk):
        s1 = min(s0 + chunk, limit)
        rows = torch.nonzero(keep[:, s0:s1].any(0)).reshape(-1) + s0
        if rows.numel() == 0:
            continue
        cand = cand_rows(rows)
        if max_keep is None:
            # a row that suppresses nothing after itself changes nothing: skip it
            later = torch.arange(K, device=keep.device)[None, :] > rows[:, None]
            acts = (cand & later[None]).any(2).any(0).tolist()
        else:
            acts = [True] * rows.numel()
        for r, i in enumerate(rows.tolist()):
            if not acts[r]:
                continue
            ki = keep[:, i:i + 1]
            if not bool(ki.any()):
                continue
            if max_keep is not None:
                nk += 1
                if nk >= max_keep:
                    keep[:, i + 1:] = False
                    return keep
            keep[:, i + 1:] &= ~(cand[:, r, i + 1:] & ki)
    return keep


def _nms_forward(data, overlap_thresh, valid_thresh, topk, cs, si, ii, background_id, force,
                 in_fmt, out_fmt):
    """(out, record) for data (B, N, W); record (B, N) holds the flat input row of each output
    row, -1 for the filler rows."""
    B, N, W = data.shape
    dev = data.device
    k = N if topk < 0 else min(N, topk)
    if k < 1:
        return data.clone(), torch.arange(B * N, device=dev).reshape(B, N)
    scores = data[:, :, si]
    valid = scores.double() > _f32(valid_thresh)
    if ii >= 0:   # (MXNet drops the background id whatever it is, -1 included)
        valid &= data[:, :, ii] != background_id
    key = torch.where(valid, scores.double(), torch.full_like(scores, -math.inf,
                                                               dtype=torch.float64))
    order = torch.sort(key, dim=1, descending=True, stable=True).indices[:, :k]
    nvalid = valid.sum(1)
    keep = torch.arange(k, device=dev)[None, :] < nvalid[:, None]
    rows = torch.gather(data, 1, order[:, :, None].expand(B, k, W))
    boxes = rows[:, :, cs:cs + 4]
    area = _area(boxes, in_fmt)
    thr = _f32(overlap_thresh)
    cid = rows[:, :, ii].long() if (not force and ii >= 0) else None

    def iou_gt(bx, ar, r):
        inter = _pair_inter(bx[:, r], bx, in_fmt)
        return inter / (ar[:, r, None] + ar[:, None, :] - inter) > thr
    limit = int(nvalid.max()) if B else 0
    if cid is None:
        keep = _greedy_suppress(lambda r: iou_gt(boxes, area, r), keep, limit)
    else:
        # suppression stays within a class and each class keeps its sorted order: walk the
        # classes of each batch one at a time
        keep = keep.clone()
        for b in range(B):
            n = int(nvalid[b])
            if n < 2:
                continue
            cls_sorted, perm = torch.sort(cid[b, :n], stable=True)
            counts = torch.unique_consecutive(cls_sorted, return_counts=True)[1].tolist()
            for g in torch.split(perm, counts):
                if len(g) < 2:
                    continue
                gb = boxes[b:b + 1, g]
                ga = area[b:b + 1, g]
                keep[b, g] = _greedy_suppress(lambda r, gb=gb, ga=ga: iou_gt(gb, ga, r),
                                              keep[b:b + 1, g], len(g))[0]
    out = torch.full_like(data, -1)
    record = torch.full((B, N), -1, dtype=torch.long, device=dev)
    rank = torch.cumsum(keep.long(), 1) - 1
    bi, ki = torch.nonzero(keep, as_tuple=True)
    out[bi, rank[bi, ki]] = rows[bi, ki]
    record[bi, rank[bi, ki]] = bi * N + order[bi, ki]
    if in_fmt != out_fmt:
        c = out[:, :, cs:cs + 4]
        conv = _to_center(c) if out_fmt == "center" else _to_corner(c)
        out[:, :, cs:cs + 4] = torch.where((c[:, :, :1] < 0), c, conv)
    return out, record


class _NMSFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, data, params):
        out, record = _nms_forward(data, *params)
        ctx.save_for_backward(record)
        ctx.shape = data.shape
        return out

    @staticmethod
    def backward(ctx, g):
        record, = ctx.saved_tensors
        B, N, W = ctx.shape
        gin = torch.zeros((B * N, W), dtype=g.dtype, device=g.device)
        rec = record.reshape(-1)
        sel = rec >= 0
        gin[rec[sel]] = g.reshape(-1, W)[sel]
        return gin.reshape(B, N, W), None


def box_nms(data, overlap_thresh=0.5, valid_thresh=0, topk=-1, coord_start=2, score_index=1,
            id_index=-1, background_id=-1, force_suppress=False, in_format="corner",
            out_format="corner", out=None, name=None):
    """Non-maximum suppression of boxes ``data`` (..., N, W), rows like
    ``[id, score, xmin, ymin, xmax, ymax]``.

    Per batch, rows with ``score > valid_thresh`` (and, with ``id_index`` >= 0 and
    ``background_id`` >= 0, whose id is not ``background_id``) are sorted by descending score
    (ties in input order), the first ``topk`` kept, and a row is dropped when it overlaps
    (IoU > ``overlap_thresh``) a kept higher-scored row (of the same id unless
    ``force_suppress`` or ``id_index`` < 0). The kept rows come first, by descending score; the
    remaining rows are all -1. ``out_format`` converts the coordinates of rows whose first
    coordinate is not negative. The gradient of each kept output row goes to its input row.
    """
    op = "box_nms"
    t = _tensor(data, op, "data")
    in_fmt = _fmt(in_format, op, "in_format")
    out_fmt = _fmt(out_format, op, "out_format")
    if t.dim() < 2:
        raise MXNetError(f"{op}: data of shape {tuple(t.shape)} must have dim >= 2 "
                         "(..., num_box, box_width)")
    W = t.shape[-1]
    need = 6 if id_index > 0 else 5
    if W < need:
        raise MXNetError(f"{op}: box width (last dimension of data) is {W}, at least {need} "
                         "expected (score and 4 coordinates, and id when id_index is given)")
    cs, si, ii = int(coord_start), int(score_index), int(id_index)
    if not 0 <= si < W:
        raise MXNetError(f"{op}: score_index={si} out of range [0, {W})")
    if cs <= si <= cs + 3:
        raise MXNetError(f"{op}: score_index={si} conflicts with the coordinates "
                         f"[{cs}, {cs + 3}] (coord_start={cs})")
    if cs < 0 or cs + 3 >= W:
        raise MXNetError(f"{op}: coord_start={cs}: coordinates [{cs}, {cs + 3}] out of range "
                         f"[0, {W})")
    if ii >= 0:
        if ii >= W:
            raise MXNetError(f"{op}: id_index={ii} out of range [0, {W})")
        if cs <= ii <= cs + 3:
            raise MXNetError(f"{op}: id_index={ii} conflicts with the coordinates "
                             f"[{cs}, {cs + 3}] (coord_start={cs})")
        if ii == si:
            raise MXNetError(f"{op}: id_index={ii} conflicts with score_index={si}")
    shape = t.shape
    t3 = t.reshape(-1, shape[-2], W)
    params = (float(overlap_thresh), float(valid_thresh), int(topk), cs, si, ii,
              float(background_id), bool(force_suppress), in_fmt, out_fmt)
    if _grad_wanted(t3):
        res = _NMSFn.apply(t3, params)
    else:
        with torch.no_grad():
            res = _nms_forward(t3.detach(), *params)[0]
    return _assign_out(_new(res.reshape(shape), data._ctx), out)


box_non_maximum_suppression = box_nms


# ----------------------------------------------------------------------------- matching

def bipartite_matching(data, threshold=None, is_ascend=False, topk=-1, out=None, name=None):
    """Greedy bipartite matching of a score matrix ``data`` (..., N, M): repeatedly the best
    remaining (row, column) pair (descending scores, ascending with ``is_ascend``; ties in
    row-major order) whose row and column are both free is matched, until the best free pair
    fails ``threshold`` (score > threshold, < with ``is_ascend``). With ``topk`` > 0 matching
    stops once more than ``topk`` pairs are matched (MXNet's count).

    Returns ``[row_marker (..., N), col_marker (..., M)]``: the matched column of each row and
    the matched row of each column, -1 where unmatched.
    """
    op = "bipartite_matching"
    if threshold is None:
        raise MXNetError(f"{op}: required parameter threshold is missing")
    t = _tensor(data, op, "data")
    if t.dim() < 2:
        raise MXNetError(f"{op}: data (score matrix) of shape {tuple(t.shape)} must have "
                         "dim >= 2")
    N, M = t.shape[-2], t.shape[-1]
    lead = tuple(t.shape[:-2])
    thr = _f32(threshold)
    with torch.no_grad():
        # The best free pair is the first maximum (row-major, as MXNet's stable sort orders
        # ties) of the score matrix with matched rows and columns masked out.
        s = t.detach().reshape(-1, N, M)
        s = s.float() if s.dtype in (torch.float16, torch.bfloat16) else s.clone()
        B = s.shape[0]
        dev = s.device
        fill = math.inf if is_ascend else -math.inf
        rowm = torch.full((B, N), -1, dtype=torch.long, device=dev)
        colm = torch.full((B, M), -1, dtype=torch.long, device=dev)
        active = torch.ones(B, dtype=torch.bool, device=dev)
        count = torch.zeros(B, dtype=torch.long, device=dev)
        bidx = torch.arange(B, device=dev)
        for _ in range(min(N, M)):
            flat = s.reshape(B, N * M)
            pick = torch.argmin(flat, 1) if is_ascend else torch.argmax(flat, 1)
            v = flat[bidx, pick].double()
            ok = (v < thr) if is_ascend else (v > thr)
            active &= ok
            if not bool(active.any()):
                break
            b = bidx[active]
            rr = pick[active] // M
            cc = pick[active] % M
            rowm[b, rr] = cc
            colm[b, cc] = rr
            s[b, rr, :] = fill
            s[b, :, cc] = fill
            count += active.long()
            if topk > 0:
                active &= count <= topk
        rowm = rowm.to(t.dtype).reshape(lead + (N,))
        colm = colm.to(t.dtype).reshape(lead + (M,))
    return _out(_wrap((rowm, colm), (t,), data._ctx), out)


# ----------------------------------------------------------------------------- box coding

def box_encode(samples, matches, anchors, refs, means, stds, out=None, name=None):
    """Regression targets of matched boxes: ``samples`` (B, N) (> 0.5 marks a positive),
    ``matches`` (B, N) (index into ``refs``), ``anchors`` (B, N, 4) and ``refs`` (B, M, 4),
    corner format; ``means``/``stds`` (4,).

    Returns ``[targets (B, N, 4), masks (B, N, 4)]``: for positives
    ``((dx/aw - means[0]) / stds[0], ..., (log(gw/aw) - means[2]) / stds[2], ...)`` and
    mask 1; zeros elsewhere.
    """
    op = "box_encode"
    S = _tensor(samples, op, "samples")
    Mt = _tensor(matches, op, "matches")
    A = _tensor(anchors, op, "anchors")
    R = _tensor(refs, op, "refs")
    mu = _tensor(means, op, "means")
    sd = _tensor(stds, op, "stds")
    if S.dim() != 2 or Mt.shape != S.shape:
        raise MXNetError(f"{op}: samples {tuple(S.shape)} and matches {tuple(Mt.shape)} must "
                         "be the same 2-D shape (batch, num_anchors)")
    B, N = S.shape
    if A.dim() != 3 or A.shape[-1] != 4 or A.shape[1] != N:
        raise MXNetError(f"{op}: anchors of shape {tuple(A.shape)} must be (batch, {N}, 4)")
    if R.dim() != 3 or R.shape[-1] != 4 or R.shape[0] != B:
        raise MXNetError(f"{op}: refs of shape {tuple(R.shape)} must be ({B}, num_refs, 4)")
    if mu.numel() != 4 or sd.numel() != 4:
        raise MXNetError(f"{op}: means {tuple(mu.shape)} and stds {tuple(sd.shape)} must have "
                         "4 values")
    with torch.no_grad():
        dt = A.dtype
        A_ = A.detach().expand(B, N, 4)
        idx = Mt.detach().long().clamp(0, R.shape[1] - 1)
        g = torch.gather(R.detach().to(dt), 1, idx[:, :, None].expand(B, N, 4))
        mu_ = mu.detach().to(dt).reshape(4)
        sd_ = sd.detach().to(dt).reshape(4)
        gw = g[..., 2] - g[..., 0]
        gh = g[..., 3] - g[..., 1]
        gx = g[..., 0] + gw * 0.5
        gy = g[..., 1] + gh * 0.5
        aw = A_[..., 2] - A_[..., 0]
        ah = A_[..., 3] - A_[..., 1]
        ax = A_[..., 0] + aw * 0.5
        ay = A_[..., 1] + ah * 0.5
        tg = torch.stack((((gx - ax) / aw - mu_[0]) / sd_[0],
                          ((gy - ay) / ah - mu_[1]) / sd_[1],
                          (torch.log(gw / aw) - mu_[2]) / sd_[2],
                          (torch.log(gh / ah) - mu_[3]) / sd_[3]), -1)
        pos = (S.detach() > 0.5)[:, :, None]
        tg = torch.where(pos, tg, torch.zeros_like(tg))
        mask = pos.expand(B, N, 4).to(dt)
    return _out(_wrap((tg, mask), (S, Mt, A, R, mu, sd), anchors._ctx), out)


def box_decode(data, anchors, std0=1.0, std1=1.0, std2=1.0, std3=1.0, clip=-1.0,
               format="center", out=None, name=None):
    """Boxes (corner format) from regression outputs ``data`` (B, N, 4) and ``anchors``
    (1, N, 4) in ``format``: centre ``data[0]*std0*aw + ax``..., half sizes
    ``exp(min(data[2]*std2, clip)) * aw / 2``... (no clipping when ``clip`` <= 0)."""
    op = "box_decode"
    fmt = _fmt(format, op, "format")
    D = _tensor(data, op, "data")
    A = _tensor(anchors, op, "anchors")
    if D.dim() != 3 or D.shape[-1] != 4:
        raise MXNetError(f"{op}: data of shape {tuple(D.shape)} must be (batch, N, 4)")
    if A.dim() != 3 or A.shape[-1] != 4 or A.shape[0] != 1 or A.shape[1] != D.shape[1]:
        raise MXNetError(f"{op}: anchors of shape {tuple(A.shape)} must be (1, {D.shape[1]}, 4)")
    with torch.no_grad():
        d = D.detach()
        a = A.detach().to(d.dtype)
        if fmt == "corner":
            aw = a[..., 2] - a[..., 0]
            ah = a[..., 3] - a[..., 1]
            ax = a[..., 0] + aw * 0.5
            ay = a[..., 1] + ah * 0.5
        else:
            ax, ay, aw, ah = a.unbind(-1)
        ox = d[..., 0] * _f32(std0) * aw + ax
        oy = d[..., 1] * _f32(std1) * ah + ay
        dw = d[..., 2] * _f32(std2)
        dh = d[..., 3] * _f32(std3)
        if clip > 0:
            c = torch.tensor(_f32(clip), dtype=d.dtype, device=d.device)
            dw = torch.minimum(dw, c)
            dh = torch.minimum(dh, c)
        ow = torch.exp(dw) * aw * 0.5
        oh = torch.exp(dh) * ah * 0.5
        res = torch.stack((ox - ow, oy - oh, ox + ow, oy + oh), -1)
    return _out(_wrap(res, (D, A), data._ctx), out)


# ----------------------------------------------------------------------------- MultiBox

def MultiBoxPrior(data, sizes=(1.0,), ratios=(1.0,), clip=False, steps=(-1.0, -1.0),
                  offsets=(0.5, 0.5), out=None, name=None):
    """SSD anchor boxes for the feature map ``data`` (B, C, H, W): shape
    (1, H*W*(len(sizes)+len(ratios)-1), 4), corner format, normalised to [0, 1]. At each cell
    (row-major) come first one box per size (with ``ratios[0]``), then one per ``ratios[1:]``
    with ``sizes[0]``. ``steps`` (y, x) default to 1/H, 1/W."""
    op = "MultiBoxPrior"
    t = _tensor(data, op, "data")
    if t.dim() != 4:
        raise MXNetError(f"{op}: data of shape {tuple(t.shape)} must be 4-D (batch, channel, "
                         "height, width)")
    sizes = _tuple(sizes, op, "sizes")
    ratios = _tuple(ratios, op, "ratios")
    steps = _tuple(steps, op, "steps", 2)
    offsets = _tuple(offsets, op, "offsets", 2)
    if not sizes or not ratios:
        raise MXNetError(f"{op}: sizes and ratios must not be empty")
    for s in sizes:
        if not 0 < s <= 1:
            raise MXNetError(f"{op}: sizes must be in (0, 1], got {sizes}")
    for r in ratios:
        if r <= 0:
            raise MXNetError(f"{op}: ratios must be > 0, got {ratios}")
    H, W = t.shape[2], t.shape[3]
    f = torch.float32
    dev = t.device
    with torch.no_grad():
        one = torch.tensor(1.0, dtype=f)
        sy = (one / H) if steps[0] <= 0 else torch.tensor(steps[0], dtype=f)
        sx = (one / W) if steps[1] <= 0 else torch.tensor(steps[1], dtype=f)
        cy = (torch.arange(H, dtype=f) + torch.tensor(offsets[0], dtype=f)) * sy
        cx = (torch.arange(W, dtype=f) + torch.tensor(offsets[1], dtype=f)) * sx
        half = []
        r0 = torch.sqrt(torch.tensor(ratios[0], dtype=f))
        for s in sizes:
            s_ = torch.tensor(s, dtype=f)
            half.append((s_ * H / W * r0 / 2, s_ / r0 / 2))
        s0 = torch.tensor(sizes[0], dtype=f)
        for r in ratios[1:]:
            rr = torch.sqrt(torch.tensor(r, dtype=f))
            half.append((s0 * H / W * rr / 2, s0 / rr / 2))
        hw = torch.stack([h[0] for h in half])
        hh = torch.stack([h[1] for h in half])
        CY = cy[:, None, None].expand(H, W, len(half))
        CX = cx[None, :, None].expand(H, W, len(half))
        res = torch.stack((CX - hw, CY - hh, CX + hw, CY + hh), -1).reshape(1, -1, 4)
        if clip:
            res = res.clamp(0, 1)
        res = res.to(dev)
    return _out(_wrap(res, (t,), data._ctx), out)


def MultiBoxTarget(anchor, label, cls_pred, overlap_threshold=0.5, ignore_label=-1.0,
                   negative_mining_ratio=-1.0, negative_mining_thresh=0.5,
                   minimum_negative_samples=0, variances=(0.1, 0.1, 0.2, 0.2), out=None,
                   name=None):
    """SSD training targets.

    ``anchor`` (1, N, 4) corner boxes, ``label`` (B, M, W>=5) rows
    ``[class, xmin, ymin, xmax, ymax, ...]`` (a row with class -1 ends the list),
    ``cls_pred`` (B, C, N) class scores (background class 0), for hard negative mining.

    Returns ``[loc_target (B, N*4), loc_mask (B, N*4), cls_target (B, N)]``: anchors matched to
    a ground truth (greedy best-IoU matching of every ground truth first, then each other
    anchor whose best IoU > ``overlap_threshold``) get class + 1 and encoded offsets; with
    ``negative_mining_ratio`` > 0, ``ratio`` times as many negatives (IoU below
    ``negative_mining_thresh``, lowest background probability first) get class 0 and the
    rest ``ignore_label``; without mining every other anchor is a negative.
    ``minimum_negative_samples`` is accepted and, as in MXNet 1.9.1's CPU operator, not used.
    """
    op = "MultiBoxTarget"
    A = _tensor(anchor, op, "anchor")
    L = _tensor(label, op, "label")
    P = _tensor(cls_pred, op, "cls_pred")
    var = _tuple(variances, op, "variances", 4)
    if A.dim() != 3 or A.shape[-1] != 4 or A.shape[0] != 1:
        raise MXNetError(f"{op}: anchor of shape {tuple(A.shape)} must be (1, num_anchors, 4)")
    if L.dim() != 3 or L.shape[-1] < 5:
        raise MXNetError(f"{op}: label of shape {tuple(L.shape)} must be (batch, num_labels, "
                         ">=5) with rows [class, xmin, ymin, xmax, ymax]")
    N = A.shape[1]
    if P.dim() != 3 or P.shape[0] != L.shape[0] or P.shape[2] != N:
        raise MXNetError(f"{op}: cls_pred of shape {tuple(P.shape)} must be "
                         f"({L.shape[0]}, num_classes, {N})")
    B = L.shape[0]
    dt = A.dtype
    dev = A.device
    with torch.no_grad():
        anc = A.detach()[0]
        lab = L.detach().to(dt)
        pred = P.detach().to(dt)
        loc_t = torch.zeros((B, N, 4), dtype=dt, device=dev)
        loc_m = torch.zeros((B, N, 4), dtype=dt, device=dev)
        cls_t = torch.full((B, N), _f32(ignore_label), dtype=dt, device=dev)
        ar = torch.arange(N, device=dev)
        for b in range(B):
            cls_col = lab[b, :, 0].float()
            ends = torch.nonzero(cls_col == -1.0)
            ng = int(ends[0, 0]) if len(ends) else lab.shape[1]
            if ng == 0:
                continue
            gts = lab[b, :ng, 1:5]
            bad = ends[:1]
            if len(bad) and not bool((lab[b, int(bad[0, 0]), 1:5].float() == -1.0).all()):
                raise MXNetError(f"{op}: label row {int(bad[0, 0])} of batch {b} has class -1 "
                                 "(end of the list) but coordinates other than -1")
            ov = _pair_inter(anc, gts, "corner")
            ov = ov / (_area(anc, "corner")[:, None] + _area(gts, "corner")[None, :] - ov)
            ov = ov.float()
            flags = torch.full((N,), -1, dtype=torch.long, device=dev)
            match = torch.full((N,), -1, dtype=torch.long, device=dev)
            best = torch.full((N,), -1.0, dtype=torch.float32, device=dev)
            gt_done = torch.zeros(ng, dtype=torch.bool, device=dev)
            npos = 0
            for _ in range(ng):
                m = ov.masked_fill(flags[:, None] == 1, -math.inf)
                m = m.masked_fill(gt_done[None, :], -math.inf)
                flat = torch.argmax(m.reshape(-1))  # first maximum in (anchor, gt) order
                v = m.reshape(-1)[flat]
                if not bool(v > 1e-6):
                    break
                j, k = int(flat) // ng, int(flat) % ng
                best[j] = v
                match[j] = k
                flags[j] = 1
                gt_done[k] = True
                npos += 1
            free = flags != 1
            mx_iou, mx_gt = torch.max(ov, 1)  # first maximum
            if overlap_threshold > 0:
                best = torch.where(free, mx_iou, best)
                match = torch.where(free, mx_gt, match)
                newpos = free & (mx_iou > _f32(overlap_threshold))
                flags[newpos] = 1
                npos += int(newpos.sum())
            if negative_mining_ratio > 0:
                if not negative_mining_thresh > 0:
                    raise MXNetError(f"{op}: negative_mining_thresh must be > 0, got "
                                     f"{negative_mining_thresh}")
                nneg = int(npos * _f32(negative_mining_ratio))
                nneg = min(nneg, N - npos)
                if nneg > 0:
                    unset = (flags != 1) & (best < 0)
                    best = torch.where(unset, mx_iou, best)
                    cand = (flags == -1) & (best < _f32(negative_mining_thresh))
                    p = pred[b]
                    mxv = p.max(0).values
                    prob = torch.exp(p[0] - mxv) / torch.exp(p - mxv).sum(0)
                    idx = ar[cand]
                    if len(idx) < nneg:
                        raise MXNetError(f"{op}: {len(idx)} negative candidates for "
                                         f"{nneg} negatives (negative_mining_thresh="
                                         f"{negative_mining_thresh})")
                    o = torch.sort(-prob[idx].float(), descending=True, stable=True).indices[:nneg]
                    flags[idx[o]] = 0
            else:
                flags[flags != 1] = 0
            pos = flags == 1
            g = gts[match.clamp(min=0)].float()
            a = anc.float()
            aw = a[:, 2] - a[:, 0]
            ah = a[:, 3] - a[:, 1]
            ax = (a[:, 0] + a[:, 2]) * 0.5
            ay = (a[:, 1] + a[:, 3]) * 0.5
            gw = g[:, 2] - g[:, 0]
            gh = g[:, 3] - g[:, 1]
            gx = (g[:, 0] + g[:, 2]) * 0.5
            gy = (g[:, 1] + g[:, 3]) * 0.5
            enc = torch.stack(((gx - ax) / aw / _f32(var[0]), (gy - ay) / ah / _f32(var[1]),
                               torch.log(gw / aw) / _f32(var[2]),
                               torch.log(gh / ah) / _f32(var[3])), -1).to(dt)
            loc_t[b][pos] = enc[pos]
            loc_m[b][pos] = 1
            cls_t[b][pos] = lab[b, match[pos], 0] + 1
            cls_t[b][flags == 0] = 0
        res = (loc_t.reshape(B, N * 4), loc_m.reshape(B, N * 4), cls_t)
    return _out(_wrap(res, (A, L, P), anchor._ctx), out)


def _iou_corner_md(a, b):
    """MultiBoxDetection's overlap of corner boxes a (P, 4) x b (Q, 4) -> (P, Q)."""
    a0, a1, a2, a3 = (v[:, None] for v in _cols(a))
    b0, b1, b2, b3 = (v[None, :] for v in _cols(b))
    w = torch.relu(b2.clamp(max=a2) - b0.clamp(min=a0))
    h = torch.relu(b3.clamp(max=a3) - b1.clamp(min=a1))
    i = w * h
    u = (a2 - a0) * (a3 - a1) + (b2 - b0) * (b3 - b1) - i
    return torch.where(u <= 0, torch.zeros_like(u), i / u)


def MultiBoxDetection(cls_prob, loc_pred, anchor, clip=True, threshold=0.01, background_id=0,
                      nms_threshold=0.5, force_suppress=False,
                      variances=(0.1, 0.1, 0.2, 0.2), nms_topk=-1, out=None, name=None):
    """SSD detections (B, N, 6) rows ``[class, score, xmin, ymin, xmax, ymax]`` from
    ``cls_prob`` (B, C, N) (class 0 background), ``loc_pred`` (B, N*4) and ``anchor``
    (1, N, 4).

    As MXNet 1.9.1 on the CPU: each anchor takes its best non-background class (first on
    ties); those scoring at least ``threshold`` are kept, in anchor order, then sorted by
    descending score (the first ``nms_topk`` sorted rows; past them the anchor-order rows
    stay, with class -1); NMS (IoU >= ``nms_threshold``) sets the class of suppressed rows to
    -1 and leaves their score and box. Rows past the kept ones are all -1.
    ``background_id`` is accepted and, as in MXNet's CPU operator, not used.
    """
    op = "MultiBoxDetection"
    C_ = _tensor(cls_prob, op, "cls_prob")
    Lp = _tensor(loc_pred, op, "loc_pred")
    A = _tensor(anchor, op, "anchor")
    var = _tuple(variances, op, "variances", 4)
    if C_.dim() != 3:
        raise MXNetError(f"{op}: cls_prob of shape {tuple(C_.shape)} must be (batch, "
                         "num_classes, num_anchors)")
    B, C, N = C_.shape
    if A.dim() != 3 or A.shape[-1] != 4 or A.shape[1] != N:
        raise MXNetError(f"{op}: anchor of shape {tuple(A.shape)} must be (1, {N}, 4) to match "
                         f"cls_prob {tuple(C_.shape)}")
    if Lp.dim() != 2 or Lp.shape[0] != B or Lp.shape[1] != N * 4:
        raise MXNetError(f"{op}: loc_pred of shape {tuple(Lp.shape)} must be ({B}, {N * 4})")
    dt = C_.dtype
    with torch.no_grad():
        prob = C_.detach().cpu()  # a per-image walk: done on the CPU
        loc = Lp.detach().to(dt).cpu().reshape(B, N, 4)
        a = A.detach()[0].to(dt).cpu()
        aw = a[:, 2] - a[:, 0]
        ah = a[:, 3] - a[:, 1]
        ax = (a[:, 0] + a[:, 2]) / 2
        ay = (a[:, 1] + a[:, 3]) / 2
        ox = loc[..., 0] * _f32(var[0]) * aw + ax
        oy = loc[..., 1] * _f32(var[1]) * ah + ay
        ow = torch.exp(loc[..., 2] * _f32(var[2])) * aw / 2
        oh = torch.exp(loc[..., 3] * _f32(var[3])) * ah / 2
        boxes = torch.stack((ox - ow, oy - oh, ox + ow, oy + oh), -1)
        if clip:
            boxes = boxes.clamp(0, 1)
        if C > 1:
            fg = prob[:, 1:, :]
            score, cid = torch.max(fg, 1)  # first maximum
            neg1 = torch.tensor(-1, dtype=dt)
            # MXNet starts from score -1: a class wins only when > -1
            cid = torch.where(score > neg1, cid + 1, torch.zeros_like(cid))
            score = torch.where(score > neg1, score, neg1.expand_as(score))
        else:
            cid = torch.zeros((B, N), dtype=torch.long)
            score = torch.full((B, N), -1, dtype=dt)
        cid = torch.where((cid > 0) & (score < _f32(threshold)), torch.zeros_like(cid), cid)
        res = torch.full((B, N, 6), -1, dtype=dt)
        nms_ok = 0 < nms_threshold <= 1
        for b in range(B):
            v = torch.nonzero(cid[b] > 0).reshape(-1)
            nv = len(v)
            if nv == 0:
                continue
            rows = torch.cat(((cid[b, v] - 1).to(dt)[:, None], score[b, v][:, None],
                              boxes[b, v]), 1)
            if not nms_ok:
                res[b, :nv] = rows
                continue
            order = torch.sort(rows[:, 1], descending=True, stable=True).indices
            nkeep = nv if not (0 < nms_topk < nv) else int(nms_topk)
            rows = rows.clone()
            rows[:nkeep] = rows[order[:nkeep]].clone()
            rows[nkeep:, 0] = -1
            alive = rows[:, 0] >= 0
            bx = rows[:, 2:]
            thr = _f32(nms_threshold)

            if force_suppress:
                groups = [torch.arange(nv)]
            else:
                # suppression stays within a class, and each class keeps its sorted order:
                # the classes can be walked one at a time
                cls_sorted, perm = torch.sort(rows[:, 0], stable=True)
                counts = torch.unique_consecutive(cls_sorted, return_counts=True)[1].tolist()
                groups = torch.split(perm, counts)
            for g in groups:
                if not bool(alive[g].any()):
                    continue
                gb = bx[g]

                def cand_rows(r, gb=gb, thr=thr):
                    return (_iou_corner_md(gb[r], gb) >= thr)[None]
                alive[g] = _greedy_suppress(cand_rows, alive[g][None], len(g))[0]
            rows[~alive, 0] = -1
            res[b, :nv] = rows
        res = res.to(C_.device)
    return _out(_wrap(res, (C_, Lp, A), cls_prob._ctx), out)


# ----------------------------------------------------------------------------- ROI ops

def _roi_inputs(data, rois, pooled_size, spatial_scale, op):
    """The checked (data, rois, (pooled height, pooled width)) of an ROI pooling op."""
    X = _tensor(data, op, "data")
    Rt = _tensor(rois, op, "rois")
    if pooled_size is None:
        raise MXNetError(f"{op}: required parameter pooled_size is missing")
    p = pooled_size if isinstance(pooled_size, (list, tuple)) else (pooled_size,)
    p = tuple(int(v) for v in p)
    if len(p) == 1:
        p = p * 2
    if len(p) != 2 or min(p) <= 0:
        raise MXNetError(f"{op}: pooled_size={pooled_size!r} must be (height, width) > 0")
    if spatial_scale is None:
        raise MXNetError(f"{op}: required parameter spatial_scale is missing")
    if X.dim() != 4:
        raise MXNetError(f"{op}: data of shape {tuple(X.shape)} must be 4-D (batch, "
                         "channel, height, width)")
    if Rt.dim() != 2 or Rt.shape[1] != 5:
        raise MXNetError(f"{op}: rois of shape {tuple(Rt.shape)} must be (num_rois, 5) with "
                         "rows [batch_index, x1, y1, x2, y2]")
    return X, Rt, p


def _c_round(x):
    """C's round(): halves away from zero."""
    return torch.sign(x) * torch.floor(torch.abs(x) + 0.5)


def ROIPooling(data, rois, pooled_size=None, spatial_scale=None, out=None, name=None):
    """Max pooling of each region ``rois`` (R, 5) ``[batch_index, x1, y1, x2, y2]`` (image
    coordinates, scaled by ``spatial_scale`` and rounded) of ``data`` (B, C, H, W) into
    ``pooled_size`` bins: (R, C, PH, PW). Empty bins give 0. The gradient goes to the first
    maximum of each bin."""
    op = "ROIPooling"
    X, Rt, (PH, PW) = _roi_inputs(data, rois, pooled_size, spatial_scale, op)
    Bn, C, H, W = X.shape
    R = Rt.shape[0]
    dev = X.device
    with torch.no_grad():
        r = Rt.detach().to(X.dtype)
        bidx = r[:, 0].long()
        sc = _f32(spatial_scale)
        rs = _c_round(r[:, 1:] * sc).long()
        sw, sh, ew, eh = rs.unbind(1)
        rh = (eh - sh + 1).clamp(min=1).float()
        rw = (ew - sw + 1).clamp(min=1).float()
        dtp = X.dtype if X.dtype == torch.float64 else torch.float32
        bh = rh.to(dtp) / PH
        bw = rw.to(dtp) / PW
        ph = torch.arange(PH, device=dev, dtype=dtp)
        pw = torch.arange(PW, device=dev, dtype=dtp)
        hs = (torch.floor(ph[None] * bh[:, None]).long() + sh[:, None]).clamp(0, H)
        he = (torch.ceil((ph[None] + 1) * bh[:, None]).long() + sh[:, None]).clamp(0, H)
        ws = (torch.floor(pw[None] * bw[:, None]).long() + sw[:, None]).clamp(0, W)
        we = (torch.ceil((pw[None] + 1) * bw[:, None]).long() + sw[:, None]).clamp(0, W)
        okb = (bidx >= 0) & (bidx < Bn)
        base = bidx.clamp(0, max(Bn - 1, 0)) * (H * W)
        maxh = int((he - hs).max()) if R else 0
        maxw = int((we - ws).max()) if R else 0
    # every (image, y, x) a row of C channels: a bin's value is one entry of its column
    Xr = X.permute(0, 2, 3, 1).reshape(Bn * H * W, C)
    P = PH * PW
    with torch.no_grad():
        Xd = Xr.detach()
        best = torch.full((R * P, C), -math.inf, dtype=X.dtype, device=dev)
        arg = torch.full((R * P, C), -1, dtype=torch.long, device=dev)
        for dy in range(maxh):
            y = hs + dy  # (R, PH)
            for dx in range(maxw):
                x = ws + dx  # (R, PW)
                inb = ((y < he)[:, :, None] & (x < we)[:, None, :]).reshape(-1, 1)
                flat = (base[:, None, None] + y.clamp(max=H - 1)[:, :, None] * W
                        + x.clamp(max=W - 1)[:, None, :]).reshape(-1)  # (R*P,)
                vals = Xd.index_select(0, flat)
                upd = inb & (vals > best)
                best = torch.where(upd, vals, best)
                arg = torch.where(upd, flat[:, None], arg)
        arg = torch.where(okb.repeat_interleave(P)[:, None], arg, torch.full_like(arg, -1))
        valid = arg >= 0
    res = torch.gather(Xr, 0, arg.clamp(min=0))
    res = (res * valid.to(res.dtype)).reshape(R, PH, PW, C).permute(0, 3, 1, 2).contiguous()
    if not _grad_wanted(X):
        res = res.detach()
    return _assign_out(_new(res, data._ctx), out)


def _bilinear_weights(y, x, H, W):
    """MXNet's ROIAlign bilinear rule at points y, x (R, P) of an H x W map: the flat pixel
    indices (R, P, 4) of the four corners and their weights (R, P, 4); points outside
    [-1, H] x [-1, W] weigh 0."""
    out_side = (y < -1.0) | (y > H) | (x < -1.0) | (x > W)
    y = torch.where(y <= 0, torch.zeros_like(y), y)
    x = torch.where(x <= 0, torch.zeros_like(x), x)
    y0 = y.long()
    x0 = x.long()
    ylast = y0 >= H - 1
    xlast = x0 >= W - 1
    y0 = torch.where(ylast, torch.full_like(y0, H - 1), y0)
    x0 = torch.where(xlast, torch.full_like(x0, W - 1), x0)
    y1 = torch.where(ylast, y0, y0 + 1)
    x1 = torch.where(xlast, x0, x0 + 1)
    y = torch.where(ylast, y0.to(y.dtype), y)
    x = torch.where(xlast, x0.to(x.dtype), x)
    ly = y - y0
    lx = x - x0
    hy = 1 - ly
    hx = 1 - lx
    idx = torch.stack((y0 * W + x0, y0 * W + x1, y1 * W + x0, y1 * W + x1), -1)
    w = torch.stack((hy * hx, hy * lx, ly * hx, ly * lx), -1)
    return idx, w * (~out_side)[..., None].to(w.dtype)


def ROIAlign(data, rois, pooled_size=None, spatial_scale=None, sample_ratio=-1,
             position_sensitive=False, aligned=False, out=None, name=None):
    """ROI Align (Mask R-CNN) of ``data`` (B, C, H, W) over ``rois`` (R, 5)
    ``[batch_index, x1, y1, x2, y2]``: each of the ``pooled_size`` bins averages
    ``sample_ratio``^2 bilinear samples (``ceil(roi size / pooled size)`` per axis when
    ``sample_ratio`` <= 0). ``aligned`` shifts by half a pixel (no minimum roi size of 1);
    ``position_sensitive`` (R-FCN) reads channel group ``ph*PW + pw`` for bin (ph, pw) and
    gives C / (PH*PW) channels. Gradients flow to ``data``; ``rois`` get zeros."""
    op = "ROIAlign"
    X, Rt, (PH, PW) = _roi_inputs(data, rois, pooled_size, spatial_scale, op)
    Bn, C, H, W = X.shape
    if position_sensitive and C % (PH * PW):
        raise MXNetError(f"{op}: with position_sensitive, the {C} channels of data must be a "
                         f"multiple of pooled_size {PH}x{PW}")
    R = Rt.shape[0]
    dev = X.device
    dt = X.dtype
    with torch.no_grad():
        r = Rt.detach().to(dt)
        bidx = r[:, 0].long()
        okb = bidx >= 0
        bsafe = bidx.clamp(0, Bn - 1)
        sc = _f32(spatial_scale)
        off = 0.5 if aligned else 0.0
        x1 = r[:, 1] * sc - off
        y1 = r[:, 2] * sc - off
        x2 = r[:, 3] * sc - off
        y2 = r[:, 4] * sc - off
        rw = x2 - x1
        rh = y2 - y1
        if not aligned:
            rw = torch.clamp(rw, min=1.0)
            rh = torch.clamp(rh, min=1.0)
        else:
            bad = torch.nonzero((rw <= 0) | (rh <= 0)).reshape(-1)
            if bad.numel():
                i = int(bad[0])
                raise MXNetError(f"{op}: roi {i} {Rt[i].tolist()} has an empty scaled box "
                                 f"(width {float(rw[i])}, height {float(rh[i])}); with "
                                 "aligned=True rois must have a positive width and height")
        bh = rh / PH
        bw = rw / PW
        if sample_ratio > 0:
            gh = torch.full((R,), int(sample_ratio), dtype=torch.long, device=dev)
            gw = gh.clone()
        else:
            gh = torch.ceil(rh / PH).long()
            gw = torch.ceil(rw / PW).long()
        count = (gh * gw).clamp(min=1).to(dt)
        Gh = int(gh.max()) if R else 0
        Gw = int(gw.max()) if R else 0
        ph = torch.arange(PH, device=dev, dtype=dt)
        pw = torch.arange(PW, device=dev, dtype=dt)
        # Every output bin is a weighted sum of input pixels: collect the bilinear weights of
        # all its samples as one sparse (R*PH*PW, B*H*W) matrix and apply it to the
        # (B*H*W, C) pixels; its transpose gives the gradient.
        P = PH * PW
        base = (bsafe * (H * W))[:, None, None]
        rows_i, cols_i, vals_i = [], [], []
        rowid = torch.arange(R * P, device=dev).reshape(R, P, 1).expand(R, P, 4)
        scale = okb.to(dt) / count  # (R,)
        for iy in range(Gh):
            yy = (y1[:, None] + ph[None] * bh[:, None]
                  + (iy + 0.5) * bh[:, None] / gh[:, None].to(dt))  # (R, PH)
            for ix in range(Gw):
                xx = (x1[:, None] + pw[None] * bw[:, None]
                      + (ix + 0.5) * bw[:, None] / gw[:, None].to(dt))  # (R, PW)
                m = ((iy < gh) & (ix < gw)).to(dt) * scale
                Y = yy[:, :, None].expand(R, PH, PW).reshape(R, P)
                Xq = xx[:, None, :].expand(R, PH, PW).reshape(R, P)
                idx, w = _bilinear_weights(Y, Xq, H, W)
                rows_i.append(rowid.reshape(-1))
                cols_i.append((base + idx).reshape(-1))
                vals_i.append((w * m[:, None, None]).reshape(-1))
        if rows_i:
            ind = torch.stack((torch.cat(rows_i), torch.cat(cols_i)))
            wmat = torch.sparse_coo_tensor(ind, torch.cat(vals_i), (R * P, Bn * H * W),
                                           check_invariants=False)
        else:
            wmat = torch.sparse_coo_tensor(torch.zeros((2, 0), dtype=torch.long, device=dev),
                                           torch.zeros(0, dtype=dt, device=dev),
                                           (R * P, Bn * H * W), check_invariants=False)
    xf = X.permute(0, 2, 3, 1).reshape(Bn * H * W, C)
    if not _grad_wanted(X):
        xf = xf.detach()
    res = torch.sparse.mm(wmat, xf).reshape(R, PH, PW, C)
    res = res.permute(0, 3, 1, 2)  # (R, C, PH, PW)
    if position_sensitive:
        Co = C // (PH * PW)
        res = res.reshape(R, Co, PH, PW, PH, PW)
        ii = torch.arange(PH, device=dev)
        jj = torch.arange(PW, device=dev)
        res = res[:, :, ii[:, None], jj[None, :], ii[:, None], jj[None, :]]
    res = res.contiguous()
    if _grad_wanted(X, Rt) and Rt.requires_grad:
        res = res + _ZeroGrad.apply(torch.zeros((), dtype=dt, device=dev), Rt)
    return _assign_out(_new(res, data._ctx), out)


# ----------------------------------------------------------------------------- proposals

def _rpn_anchors(feature_stride, scales, ratios):
    """Faster R-CNN base anchors (len(ratios) * len(scales), 4), ratios outer, in pixels."""
    f32 = np.float32
    w = f32(feature_stride - 1.0) - f32(0) + f32(1)
    ctr = f32(0.5 * (w - 1.0))
    size = f32(w * w)
    out = []
    for r in ratios:
        size_ratios = f32(np.floor(f32(size / f32(r))))
        for s in scales:
            nw = f32(np.floor(f32(np.sqrt(size_ratios) + f32(0.5))) * f32(s))
            nh = f32(np.floor(f32(nw / f32(s) * f32(r)) + f32(0.5)) * f32(s))
            out.append([ctr - f32(0.5) * (nw - f32(1)), ctr - f32(0.5) * (nh - f32(1)),
                        ctr + f32(0.5) * (nw - f32(1)), ctr + f32(0.5) * (nh - f32(1))])
    return torch.tensor(np.array(out, dtype=np.float32))


def _proposal_image(fg, deltas, info, anchors, p):
    """One image: fg (A, H, W) scores, deltas (4A, H, W), info (3,). Returns (rois (P, 4),
    scores (P,)) with P = rpn_post_nms_top_n rows (the kept ones repeated cyclically)."""
    A, H, W = fg.shape
    fs = p["feature_stride"]
    f = torch.float32
    d = torch.float64
    sh = torch.arange(H, dtype=f)[:, None, None] * fs
    sw = torch.arange(W, dtype=f)[None, :, None] * fs
    x1 = anchors[:, 0] + sw
    y1 = anchors[:, 1] + sh
    x2 = anchors[:, 2] + sw
    y2 = anchors[:, 3] + sh
    x1, y1, x2, y2 = (v.expand(H, W, A).reshape(-1) for v in (x1, y1, x2, y2))
    score = fg.permute(1, 2, 0).reshape(-1).to(f).clone()
    dl = deltas.reshape(A, 4, H, W).permute(2, 3, 0, 1).reshape(-1, 4).to(f)
    im_h, im_w, im_scale = (float(v) for v in info.to(f))
    if p["iou_loss"]:
        px1, py1, px2, py2 = x1 + dl[:, 0], y1 + dl[:, 1], x2 + dl[:, 2], y2 + dl[:, 3]
    else:
        width = (x2 - x1 + 1.0).to(f)
        height = (y2 - y1 + 1.0).to(f)
        cx = (x1.to(d) + 0.5 * (width.to(d) - 1.0)).to(f)
        cy = (y1.to(d) + 0.5 * (height.to(d) - 1.0)).to(f)
        pcx = dl[:, 0] * width + cx
        pcy = dl[:, 1] * height + cy
        pw = (torch.exp(dl[:, 2].to(d)) * width.to(d)).to(f)
        ph = (torch.exp(dl[:, 3].to(d)) * height.to(d)).to(f)
        px1 = (pcx.to(d) - 0.5 * (pw.to(d) - 1.0)).to(f)
        py1 = (pcy.to(d) - 0.5 * (ph.to(d) - 1.0)).to(f)
        px2 = (pcx.to(d) + 0.5 * (pw.to(d) - 1.0)).to(f)
        py2 = (pcy.to(d) + 0.5 * (ph.to(d) - 1.0)).to(f)
    wmax = torch.tensor(im_w - 1.0, dtype=f)
    hmax = torch.tensor(im_h - 1.0, dtype=f)
    z = torch.zeros((), dtype=f)
    px1 = torch.maximum(torch.minimum(px1, wmax), z)
    py1 = torch.maximum(torch.minimum(py1, hmax), z)
    px2 = torch.maximum(torch.minimum(px2, wmax), z)
    py2 = torch.maximum(torch.minimum(py2, hmax), z)
    real_h = int(np.float32(im_h) / np.float32(fs))
    real_w = int(np.float32(im_w) / np.float32(fs))
    if H < real_h or W < real_w:
        raise MXNetError(f"{p['op']}: im_info {im_h}x{im_w} (/ feature_stride {fs} = "
                         f"{real_h}x{real_w}) is larger than the score map {H}x{W}")
    hh = torch.arange(H)[:, None, None].expand(H, W, A).reshape(-1)
    ww = torch.arange(W)[None, :, None].expand(H, W, A).reshape(-1)
    score[(hh >= real_h) | (ww >= real_w)] = -1.0
    min_size = np.float32(p["rpn_min_size"]) * np.float32(im_scale)
    small = ((px2 - px1 + 1.0) < min_size) | ((py2 - py1 + 1.0) < min_size)
    half = float(np.float32(min_size / np.float32(2)))
    px1 = torch.where(small, px1 - half, px1)
    py1 = torch.where(small, py1 - half, py1)
    px2 = torch.where(small, px2 + half, px2)
    py2 = torch.where(small, py2 + half, py2)
    score[small] = -1.0
    count = score.numel()
    pre = p["rpn_pre_nms_top_n"]
    pre = count if pre <= 0 else min(pre, count)
    post = min(p["rpn_post_nms_top_n"], pre)
    order = torch.sort(score, descending=True, stable=True).indices[:pre]
    boxes = torch.stack((px1, py1, px2, py2), 1)[order]
    sc = score[order]
    area = (boxes[:, 2] - boxes[:, 0] + 1) * (boxes[:, 3] - boxes[:, 1] + 1)
    thr = _f32(p["threshold"])
    bcols = _cols(boxes)

    def cand_rows(r):
        b = boxes[r]
        xx1 = bcols[0][None, :].clamp(min=b[:, 0:1])
        yy1 = bcols[1][None, :].clamp(min=b[:, 1:2])
        xx2 = bcols[2][None, :].clamp(max=b[:, 2:3])
        yy2 = bcols[3][None, :].clamp(max=b[:, 3:4])
        iw = torch.relu(xx2 - xx1 + 1.0)
        ih = torch.relu(yy2 - yy1 + 1.0)
        inter = iw * ih
        return (inter / (area[r, None] + area[None, :] - inter) > thr)[None]
    kept_mask = _greedy_suppress(cand_rows, torch.ones((1, pre), dtype=torch.bool), pre,
                                 max_keep=post)[0]
    keep = torch.nonzero(kept_mask).reshape(-1)[:post].tolist()
    P = p["rpn_post_nms_top_n"]
    if not keep:
        raise MXNetError(f"{p['op']}: no proposal survived (empty score map)")
    kept = torch.tensor(keep, dtype=torch.long)
    sel = kept[torch.arange(P) % len(keep)]
    return boxes[sel], sc[sel]


def _proposal_params(op, rpn_pre_nms_top_n, rpn_post_nms_top_n, threshold, rpn_min_size,
                     scales, ratios, feature_stride, iou_loss):
    return dict(op=op, rpn_pre_nms_top_n=int(rpn_pre_nms_top_n),
                rpn_post_nms_top_n=int(rpn_post_nms_top_n), threshold=float(threshold),
                rpn_min_size=int(rpn_min_size), scales=_tuple(scales, op, "scales"),
                ratios=_tuple(ratios, op, "ratios"), feature_stride=int(feature_stride),
                iou_loss=bool(iou_loss))


def _proposals(op, cls_prob, bbox_pred, im_info, p, output_score, single):
    S = _tensor(cls_prob, op, "cls_prob")
    D = _tensor(bbox_pred, op, "bbox_pred")
    I = _tensor(im_info, op, "im_info")
    if S.dim() != 4 or S.shape[1] % 2:
        raise MXNetError(f"{op}: cls_prob of shape {tuple(S.shape)} must be (batch, "
                         "2*num_anchors, height, width)")
    B, A2, H, W = S.shape
    A = A2 // 2
    if A != len(p["scales"]) * len(p["ratios"]):
        raise MXNetError(f"{op}: cls_prob has {A} anchors per position (channels / 2), but "
                         f"scales {p['scales']} x ratios {p['ratios']} give "
                         f"{len(p['scales']) * len(p['ratios'])}")
    if tuple(D.shape) != (B, 4 * A, H, W):
        raise MXNetError(f"{op}: bbox_pred of shape {tuple(D.shape)} must be "
                         f"{(B, 4 * A, H, W)}")
    if I.dim() != 2 or I.shape[0] != B or I.shape[1] < 3:
        raise MXNetError(f"{op}: im_info of shape {tuple(I.shape)} must be ({B}, 3) rows "
                         "[height, width, scale]")
    if single and B != 1:
        raise MXNetError(f"{op}: works on one image (batch 1); got batch {B}, use "
                         "MultiProposal")
    if p["rpn_post_nms_top_n"] <= 0:
        raise MXNetError(f"{op}: rpn_post_nms_top_n must be > 0")
    dev = S.device
    with torch.no_grad():
        anchors = _rpn_anchors(p["feature_stride"], p["scales"], p["ratios"])
        s_cpu = S.detach().float().cpu()
        d_cpu = D.detach().float().cpu()
        i_cpu = I.detach().float().cpu()
        rois, scores = [], []
        for b in range(B):
            r, sc = _proposal_image(s_cpu[b, A:], d_cpu[b], i_cpu[b], anchors, p)
            rois.append(torch.cat((torch.full((r.shape[0], 1), float(b)), r), 1))
            scores.append(sc[:, None])
        rois = torch.cat(rois).to(dev)
        scores = torch.cat(scores).to(dev)
    res = _wrap((rois, scores), (S, D, I), cls_prob._ctx)
    return res if output_score else res[0]


def Proposal(cls_prob, bbox_pred, im_info, rpn_pre_nms_top_n=6000, rpn_post_nms_top_n=300,
             threshold=0.7, rpn_min_size=16, scales=(4.0, 8.0, 16.0, 32.0),
             ratios=(0.5, 1.0, 2.0), feature_stride=16, output_score=False, iou_loss=False,
             out=None, name=None):
    """Faster R-CNN region proposals of one image (RPN): anchors (``ratios`` x ``scales`` of
    ``feature_stride``) at every position of ``cls_prob`` (1, 2A, H, W) (foreground scores in
    channels A..2A), moved by ``bbox_pred`` (1, 4A, H, W) and clipped to ``im_info``
    [height, width, scale]; boxes smaller than ``rpn_min_size * scale`` and positions past
    the image get score -1; the best ``rpn_pre_nms_top_n`` go through NMS (IoU >
    ``threshold``, +1 pixel areas) until ``rpn_post_nms_top_n`` are kept (repeated cyclically
    when fewer). Returns rois (post, 5) ``[0, x1, y1, x2, y2]`` (and scores (post, 1) with
    ``output_score``)."""
    p = _proposal_params("Proposal", rpn_pre_nms_top_n, rpn_post_nms_top_n, threshold,
                         rpn_min_size, scales, ratios, feature_stride, iou_loss)
    return _out(_proposals("Proposal", cls_prob, bbox_pred, im_info, p, output_score, True),
                out)


def MultiProposal(cls_prob, bbox_pred, im_info, rpn_pre_nms_top_n=6000,
                  rpn_post_nms_top_n=300, threshold=0.7, rpn_min_size=16,
                  scales=(4.0, 8.0, 16.0, 32.0), ratios=(0.5, 1.0, 2.0), feature_stride=16,
                  output_score=False, iou_loss=False, out=None, name=None):
    """:func:`Proposal` for a batch: rois (batch * rpn_post_nms_top_n, 5) whose first column
    is the image index (and scores (batch * post, 1) with ``output_score``)."""
    p = _proposal_params("MultiProposal", rpn_pre_nms_top_n, rpn_post_nms_top_n, threshold,
                         rpn_min_size, scales, ratios, feature_stride, iou_loss)
    return _out(_proposals("MultiProposal", cls_prob, bbox_pred, im_info, p, output_score,
                           False), out)
