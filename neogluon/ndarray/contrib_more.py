"""More of MXNet 1.9.1's ``nd.contrib`` operators: ``index_array``, ``quadratic``,
``allclose``, ``round_ste``, ``sign_ste``, ``gradientmultiplier``, ``count_sketch``,
``fft``/``ifft``, ``PSROIPooling``, ``DeformablePSROIPooling``, ``edge_id``, ``hawkesll``.

MXNet 1.9.1 computes ``count_sketch``, ``fft`` and ``ifft`` on GPUs only (a CPU call is an
error); here they run on any device, with the maths of MXNet's CUDA kernels (unnormalised
transforms, MXNet's interleaved complex layout). Everything else follows MXNet's CPU kernels.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from ..base import MXNetError
from .ndarray import _new, _run, _assign_out
from .nn_legacy import _ft, _tt  # noqa: F401  (shared argument checks)

__all__ = ["index_array", "quadratic", "allclose", "round_ste", "sign_ste",
           "gradientmultiplier", "count_sketch", "fft", "ifft", "PSROIPooling",
           "DeformablePSROIPooling", "edge_id", "hawkesll", "calibrate_entropy", "RROIAlign"]
# nd.contrib.dgl_*: the graph operators for DGL
from .dgl_graph import __all__ as _dgl_all  # noqa: E402
from .dgl_graph import *  # noqa: E402,F401,F403
__all__ += _dgl_all


def _f32(v):
    """A float attribute as MXNet stores it (a C float)."""
    return float(np.float32(v))


# ------------------------------------------------------------------------ small elementwise
def index_array(data, axes=None, out=None, name=None):
    """``(*data.shape, len(axes))`` int64 indices: ``out[i_1, ..., i_n, j] = i_{axes[j]}``
    (all axes in order when ``axes`` is None; negative axes count from the end)."""
    t = _tt(data, "index_array")
    nd = t.dim()
    if nd == 0:
        # (np_shape: a 0-d array has no axis to index: a (0,) result, as MXNet)
        return _assign_out(_new(torch.zeros((0,), dtype=torch.int64, device=t.device),
                                data._ctx), out)
    if axes is None:
        ax = list(range(nd))
    else:
        ax = [int(a) for a in ((axes,) if isinstance(axes, int) else axes)]
        for a in ax:
            if not -nd <= a < nd:
                raise MXNetError(f"index_array: axis {a} is out of range for {nd}-D data")
        ax = [a % nd for a in ax]
    grids = torch.meshgrid(*[torch.arange(n, dtype=torch.int64, device=t.device)
                             for n in t.shape], indexing="ij")
    r = torch.stack([grids[a] for a in ax], -1) if ax else \
        torch.zeros(tuple(t.shape) + (0,), dtype=torch.int64, device=t.device)
    return _assign_out(_new(r, data._ctx), out)


def quadratic(data, a=0.0, b=0.0, c=0.0, out=None, name=None):
    """``a * data ** 2 + b * data + c``, elementwise; a csr ``data`` gives a csr result when
    ``c`` is 0 (zeros stay zeros), as MXNet's storage-type inference decides."""
    a, b, c = _f32(a), _f32(b), _f32(c)
    if getattr(data, "stype", "default") == "csr" and c == 0:
        from . import sparse
        return _assign_out(sparse._unary_sparse(lambda x: a * x * x + b * x, data), out)
    t = _tt(data, "quadratic")
    r = _run(lambda: a * t * t + b * t + c)
    return _assign_out(_new(r, data._ctx), out)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=True, out=None, name=None):
    """1 (a 0-d uint8 array) when every ``|a - b| <= atol + rtol * |b|`` (NaNs equal to
    NaNs with ``equal_nan``), else 0; ``a`` and ``b`` must have the same shape."""
    x = _tt(a, "allclose", "a")
    y = _tt(b, "allclose", "b")
    if tuple(x.shape) != tuple(y.shape):
        raise MXNetError(f"allclose: a and b must have the same shape, got {tuple(x.shape)} "
                         f"and {tuple(y.shape)}")
    with torch.no_grad():
        y = y.to(x.dtype)
        if x.is_floating_point():
            na, nb = torch.isnan(x), torch.isnan(y)
            close = (x == y) | ((x - y).abs() <= _f32(atol) + _f32(rtol) * y.abs())
            ok = torch.where(na | nb, (na == nb) & bool(equal_nan), close)
        else:
            xd, yd = x.double(), y.double()
            ok = (xd == yd) | ((xd - yd).abs() <= _f32(atol) + _f32(rtol) * yd.abs())
        r = ok.all().to(torch.uint8)
    return _assign_out(_new(r, a._ctx), out)


class _StraightThrough(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, kind):
        if kind == "sign":
            return torch.sign(x)
        whole = torch.trunc(x)
        # C's round: halves away from zero
        return torch.where((x - whole).abs() >= 0.5, whole + torch.sign(x), whole)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def _ste(kind, opname):
    def op(data, out=None, name=None):
        t = _tt(data, opname)
        if t.is_floating_point():
            r = _run(_StraightThrough.apply, t, kind)
        else:
            r = torch.sign(t) if kind == "sign" else t.clone()
        return _assign_out(_new(r, data._ctx), out)
    op.__name__ = op.__qualname__ = opname
    op.__doc__ = (f"Straight-through estimator of ``{kind}``: the forward pass gives "
                  f"``{kind}(data)`` ({'halves away from zero' if kind == 'round' else '0 at 0'}),"
                  " the backward pass passes the head gradient through unchanged.")
    return op


round_ste = _ste("round", "round_ste")
sign_ste = _ste("sign", "sign_ste")


class _GradMul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scalar):
        ctx.scalar = scalar
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scalar, None


def gradientmultiplier(data, scalar=1.0, is_int=True, out=None, name=None):
    """The identity whose backward pass multiplies the head gradient by ``scalar`` (a
    negative ``scalar`` gives gradient reversal)."""
    t = _tt(data, "gradientmultiplier")
    r = _run(_GradMul.apply, t, float(scalar)) if t.is_floating_point() else t.clone()
    return _assign_out(_new(r, data._ctx), out)


# ------------------------------------------------------------------------ sketches and FFTs
def count_sketch(data, h, s, out_dim, processing_batch_size=32, out=None, name=None):
    """Count sketch of the last axis of ``(N, d)`` or ``(N1, N2, N3, d)`` data:
    ``out[..., h[i]] += data[..., i] * s[i]`` with hash indices ``h`` in ``[0, out_dim)`` and
    signs ``s`` (both ``(1, d)``). (MXNet 1.9.1: GPU only.)"""
    x = _ft(data, "count_sketch")
    hh = _tt(h, "count_sketch", "h").detach().reshape(-1)
    ss = _tt(s, "count_sketch", "s").detach().reshape(-1)
    k = int(out_dim)
    if x.dim() not in (2, 4):
        raise MXNetError(f"count_sketch: data must be 2-D or 4-D, got shape {tuple(x.shape)}")
    d = x.shape[-1]
    if hh.numel() != d or ss.numel() != d:
        raise MXNetError(f"count_sketch: h and s must hold {d} values (data's last axis), got "
                         f"shapes {tuple(h.shape)} and {tuple(s.shape)}")
    idx = hh.to(torch.float64).trunc().long()
    if k < 1 or (idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= k)):
        raise MXNetError(f"count_sketch: h must hold indices in [0, out_dim={k})")

    def fn():
        signed = x * ss.to(x.dtype)
        flat = signed.reshape(-1, d)
        res = torch.zeros((flat.shape[0], k), dtype=x.dtype, device=x.device)
        res = res.index_add(1, idx.to(x.device), flat)
        return res.reshape(tuple(x.shape[:-1]) + (k,))
    r = _run(fn)
    return _assign_out(_new(r, data._ctx), out)


def _complex_dtype(t):
    return torch.complex128 if t.dtype == torch.float64 else torch.complex64


def fft(data, compute_size=128, out=None, name=None):
    """Unnormalised 1-D FFT of the last axis of real data; the result interleaves real and
    imaginary parts, ``[re0, im0, re1, im1, ...]`` (last axis twice as long). (MXNet 1.9.1:
    GPU only.)"""
    x = _ft(data, "fft")
    if x.dim() < 1:
        raise MXNetError("fft: data must have at least one axis")

    def fn():
        z = torch.fft.fft(x.to(_complex_dtype(x)), dim=-1)
        return torch.view_as_real(z).reshape(tuple(x.shape[:-1]) + (2 * x.shape[-1],)) \
            .to(x.dtype)
    r = _run(fn)
    return _assign_out(_new(r, data._ctx), out)


def ifft(data, compute_size=128, out=None, name=None):
    """Unnormalised inverse 1-D FFT (no division by the length, as MXNet) of complex data
    interleaved along the last axis (``[re0, im0, ...]``, even length); the result is its real
    part (last axis half as long). (MXNet 1.9.1: GPU only.)"""
    x = _ft(data, "ifft")
    if x.dim() < 1 or x.shape[-1] % 2:
        raise MXNetError(f"ifft: the last axis must have an even length (real, imaginary "
                         f"pairs), got shape {tuple(x.shape)}")

    def fn():
        pairs = x.reshape(tuple(x.shape[:-1]) + (x.shape[-1] // 2, 2))
        z = torch.view_as_complex(pairs.to(torch.float64 if x.dtype == torch.float64
                                           else torch.float32).contiguous())
        return torch.fft.ifft(z, dim=-1, norm="forward").real.to(x.dtype)
    r = _run(fn)
    return _assign_out(_new(r, data._ctx), out)


# ------------------------------------------------------------------------ PS-ROI pooling
def _c_round(t):
    """C's round() (halves away from zero), exact for float32 values."""
    d = t.to(torch.float64)
    return torch.sign(d) * torch.floor(d.abs() + 0.5)


def _roi_frame(rois, op, scale, shift, dtype):
    r = _tt(rois, op, "rois").detach()
    if r.dim() != 2 or r.shape[1] != 5:
        raise MXNetError(f"{op}: rois must be (num_rois, 5) [batch_index, x1, y1, x2, y2], "
                         f"got shape {tuple(r.shape)}")
    r = r.to(dtype)
    batch = r[:, 0].to(torch.float64).trunc().long()
    sc = torch.tensor(_f32(scale), dtype=dtype, device=r.device)
    x1 = _c_round(r[:, 1]).to(dtype) * sc - shift
    y1 = _c_round(r[:, 2]).to(dtype) * sc - shift
    x2 = (_c_round(r[:, 3]) + 1.0).to(dtype) * sc - shift
    y2 = (_c_round(r[:, 4]) + 1.0).to(dtype) * sc - shift
    tenth = torch.tensor(0.1, dtype=dtype, device=r.device)
    return batch, x1, y1, torch.maximum(x2 - x1, tenth), torch.maximum(y2 - y1, tenth)


def _groups(pooled, group, device):
    p = torch.arange(pooled, dtype=torch.float32, device=device)
    g = torch.floor(p * group / pooled).long()
    return g.clamp(0, group - 1)


def _check_batch(op, batch, n):
    if batch.numel() and (int(batch.min()) < 0 or int(batch.max()) >= n):
        raise MXNetError(f"{op}: a roi's batch index is outside the data's batch of {n}")


def PSROIPooling(data, rois, spatial_scale, output_dim, pooled_size, group_size=0, out=None,
                 name=None):
    """Position-sensitive ROI average pooling (R-FCN): for each roi
    ``[batch, x1, y1, x2, y2]`` (image coordinates, times ``spatial_scale``), bin (i, j) of
    output channel ``c`` averages input channel ``(c * group_size + gi) * group_size + gj``
    over the bin's pixels (0 for an empty bin). Output ``(num_rois, output_dim, pooled_size,
    pooled_size)``; ``data`` has ``output_dim * group_size ** 2`` channels
    (``group_size`` 0 means ``pooled_size``)."""
    x = _ft(data, "PSROIPooling")
    P, D = int(pooled_size), int(output_dim)
    G = int(group_size) or P
    if x.dim() != 4:
        raise MXNetError(f"PSROIPooling: data must be 4-D (NCHW), got shape {tuple(x.shape)}")
    if P < 1 or D < 1:
        raise MXNetError(f"PSROIPooling: pooled_size and output_dim must be positive, got "
                         f"{pooled_size} and {output_dim}")
    if x.shape[1] != D * G * G:
        raise MXNetError(f"PSROIPooling: data must have output_dim * group_size^2 = {D * G * G}"
                         f" channels, got {x.shape[1]}")
    n, C, H, W = x.shape
    batch, x1, y1, rw, rh = _roi_frame(rois, "PSROIPooling", spatial_scale, 0.0, x.dtype)
    _check_batch("PSROIPooling", batch, n)
    dev = x.device
    p = torch.arange(P, dtype=x.dtype, device=dev)
    bh, bw = rh / P, rw / P                                    # (R,)
    hs = torch.floor(p * bh[:, None] + y1[:, None]).long().clamp(0, H)   # (R, P)
    he = torch.ceil((p + 1) * bh[:, None] + y1[:, None]).long().clamp(0, H)
    ws = torch.floor(p * bw[:, None] + x1[:, None]).long().clamp(0, W)
    we = torch.ceil((p + 1) * bw[:, None] + x1[:, None]).long().clamp(0, W)
    g = _groups(P, G, dev)
    # channel of (roi, c, i, j): (c * G + g[i]) * G + g[j]
    ch = (torch.arange(D, device=dev)[:, None, None] * G + g[None, :, None]) * G + \
        g[None, None, :]                                         # (D, P, P)
    area = ((he - hs)[:, :, None] * (we - ws)[:, None, :]).to(x.dtype)  # (R, P, P)
    empty = area <= 0

    def fn():
        # integral image (in float64: the corner differences stay exact enough)
        S = F.pad(x.to(torch.float64).cumsum(2).cumsum(3), (1, 0, 1, 0)).reshape(-1)
        hw1 = (H + 1) * (W + 1)
        base = (batch[:, None, None, None] * C + ch[None]) * hw1      # (R, D, P, P)

        def at(hh, ww):     # S[roi's image, channel, hh, ww] for every output bin
            return S[base + hh[:, None, :, None] * (W + 1) + ww[:, None, None, :]]
        total = at(he, we) - at(hs, we) - at(he, ws) + at(hs, ws)
        avg = total.to(x.dtype) / torch.where(empty, torch.ones_like(area), area)[:, None]
        return torch.where(empty[:, None], torch.zeros_like(avg), avg)
    r = _run(fn)
    return _assign_out(_new(r, data._ctx), out)


def RROIAlign(data, rois, pooled_size=None, spatial_scale=None, sampling_ratio=-1, out=None,
              name=None):
    """Rotated ROI align, as MXNet 1.9.1's CPU kernel: each roi ``[batch, center_x,
    center_y, width, height, theta]`` (image coordinates times ``spatial_scale``, ``theta``
    in degrees; width and height at least 1) is split into ``pooled_size`` bins, and each bin
    averages ``grid_h * grid_w`` bilinear samples (``sampling_ratio`` each way, or
    ``ceil(roi_size / pooled_size)``) taken on the rotated grid. Samples outside
    ``[-1, size]`` count as 0. Output ``(num_rois, channels, pooled_h, pooled_w)``; the
    arithmetic is float32 in MXNet's order. MXNet 1.9.1 has no gradient for it."""
    op = "RROIAlign"
    x = _ft(data, op)
    r = _tt(rois, op, "rois")
    if pooled_size is None or spatial_scale is None:
        raise MXNetError(f"{op}: pooled_size and spatial_scale are required")
    ps = (int(pooled_size),) * 2 if isinstance(pooled_size, int) else \
        tuple(int(v) for v in pooled_size)
    if len(ps) != 2 or min(ps) <= 0:
        raise MXNetError(f"{op}: pooled_size must be two positive sizes (h, w), got "
                         f"{pooled_size}")
    ss = np.float32(spatial_scale)
    if not 0.0 <= ss <= 1.0:
        raise MXNetError(f"{op}: spatial_scale must be in [0, 1], got {spatial_scale}")
    if x.dim() != 4:
        raise MXNetError(f"{op}: data should be a 4D tensor, got shape {tuple(x.shape)}")
    if r.dim() != 2 or r.shape[1] != 6:
        raise MXNetError(f"{op}: rois should be a 2D tensor of shape [num_rois, 6], got "
                         f"{tuple(r.shape)}")
    if r.dtype != x.dtype:
        raise MXNetError(f"{op}: rois must have the data's type "
                         f"{str(x.dtype).replace('torch.', '')}, got "
                         f"{str(r.dtype).replace('torch.', '')}")
    N, C, H, W = x.shape
    PH, PW = ps
    R = r.shape[0]
    sr = int(sampling_ratio)
    if x.device.type == "meta":
        return _assign_out(_new(torch.empty((R, C, PH, PW), dtype=x.dtype, device="meta"),
                                data._ctx), out)
    ct = torch.float64 if x.dtype == torch.float64 else torch.float32
    npt = np.float64 if ct == torch.float64 else np.float32
    dev = x.device
    with torch.no_grad():
        xs = x.detach().to(ct)
        rv = r.detach().to(torch.float64).cpu().numpy().astype(npt)
        res = torch.zeros((R, C, PH, PW), dtype=ct, device=dev)
        one = npt(1)
        for n in range(R):
            b = int(rv[n, 0])
            if not 0 <= b < N:
                raise MXNetError(f"{op}: roi {n}'s batch index {b} is outside the data's "
                                 f"batch of {N}")
            cw, ch, rw, rh = (npt(v * npt(ss)) for v in rv[n, 1:5])
            theta = npt(np.float64(rv[n, 5]) * np.pi / 180.0)
            rw, rh = max(rw, one), max(rh, one)
            start_h, start_w = npt(-np.float64(rh) / 2.0), npt(-np.float64(rw) / 2.0)
            bin_h, bin_w = npt(rh / npt(PH)), npt(rw / npt(PW))
            gh = sr if sr > 0 else int(np.ceil(rh / npt(PH)))
            gw = sr if sr > 0 else int(np.ceil(rw / npt(PW)))
            count = npt(gh * gw)
            cos_t = torch.tensor(npt(np.cos(np.float64(theta))), dtype=ct, device=dev)
            sin_t = torch.tensor(npt(np.sin(np.float64(theta))), dtype=ct, device=dev)

            def t(v):
                return torch.as_tensor(v, dtype=ct, device=dev)
            ph = torch.arange(PH, device=dev).to(ct)[:, None, None, None]
            pw = torch.arange(PW, device=dev).to(ct)[None, :, None, None]
            iy = (torch.arange(gh, device=dev).to(ct) + 0.5)[None, None, :, None]
            ix = (torch.arange(gw, device=dev).to(ct) + 0.5)[None, None, None, :]
            yy = (t(start_h) + ph * t(bin_h)) + iy * t(bin_h) / t(npt(gh))
            xx = (t(start_w) + pw * t(bin_w)) + ix * t(bin_w) / t(npt(gw))
            yy, xx = torch.broadcast_tensors(yy, xx)          # (PH, PW, gh, gw)
            px = (xx * cos_t + yy * sin_t) + t(cw)
            py = (yy * cos_t - xx * sin_t) + t(ch)
            outside = (py < -1.0) | (py > H) | (px < -1.0) | (px > W)
            py = torch.where(py <= 0, torch.zeros_like(py), py)
            px = torch.where(px <= 0, torch.zeros_like(px), px)
            y_lo = py.to(torch.int64)
            x_lo = px.to(torch.int64)
            top_y, top_x = y_lo >= H - 1, x_lo >= W - 1
            y_lo = torch.where(top_y, torch.full_like(y_lo, H - 1), y_lo)
            x_lo = torch.where(top_x, torch.full_like(x_lo, W - 1), x_lo)
            y_hi = torch.where(top_y, y_lo, y_lo + 1)
            x_hi = torch.where(top_x, x_lo, x_lo + 1)
            py = torch.where(top_y, y_lo.to(ct), py)
            px = torch.where(top_x, x_lo.to(ct), px)
            ly, lx = py - y_lo.to(ct), px - x_lo.to(ct)
            hy, hx = 1.0 - ly, 1.0 - lx
            ws = [hy * hx, hy * lx, ly * hx, ly * lx]
            ws = [torch.where(outside, torch.zeros_like(w), w) for w in ws]
            pos = [y_lo * W + x_lo, y_lo * W + x_hi, y_hi * W + x_lo, y_hi * W + x_hi]
            pos = [torch.where(outside, torch.zeros_like(p), p) for p in pos]
            img = xs[b].reshape(C, H * W)
            acc = torch.zeros((C, PH, PW), dtype=ct, device=dev)
            for a in range(gh):
                for c in range(gw):
                    v = [img[:, p[:, :, a, c]] * w[:, :, a, c] for p, w in zip(pos, ws)]
                    acc = acc + (((v[0] + v[1]) + v[2]) + v[3])
            res[n] = acc / t(count)
        res = res.to(x.dtype)
    return _assign_out(_new(res, data._ctx), out)


def DeformablePSROIPooling(data, rois, trans=None, spatial_scale=None, output_dim=None,
                           group_size=None, pooled_size=None, part_size=0, sample_per_part=1,
                           trans_std=0.0, no_trans=False, out=None, name=None):
    """Deformable position-sensitive ROI pooling (Deformable ConvNets): like
    ``PSROIPooling``, but each bin averages ``sample_per_part ** 2`` bilinear samples, and
    (unless ``no_trans``) the bins move by ``trans`` ``(num_rois, 2 * num_classes, part_size,
    part_size)`` times ``trans_std`` times the roi's size. Roi coordinates are rounded, scaled
    and shifted by -0.5; samples outside ``[-0.5, size - 0.5]`` are skipped."""
    x = _ft(data, "DeformablePSROIPooling")
    for v, what in ((spatial_scale, "spatial_scale"), (output_dim, "output_dim"),
                    (group_size, "group_size"), (pooled_size, "pooled_size")):
        if v is None:
            raise MXNetError(f"DeformablePSROIPooling: {what} is required")
    P, D, G = int(pooled_size), int(output_dim), int(group_size)
    part = int(part_size) or P
    spp = int(sample_per_part)
    if x.dim() != 4:
        raise MXNetError(f"DeformablePSROIPooling: data must be 4-D (NCHW), got shape "
                         f"{tuple(x.shape)}")
    if min(P, D, G, spp) < 1:
        raise MXNetError("DeformablePSROIPooling: pooled_size, output_dim, group_size and "
                         "sample_per_part must be positive")
    if x.shape[1] != D * G * G:
        raise MXNetError(f"DeformablePSROIPooling: data must have output_dim * group_size^2 = "
                         f"{D * G * G} channels, got {x.shape[1]}")
    n, C, H, W = x.shape
    batch, x1, y1, rw, rh = _roi_frame(rois, "DeformablePSROIPooling", spatial_scale, 0.5,
                                       x.dtype)
    _check_batch("DeformablePSROIPooling", batch, n)
    R = batch.shape[0]
    dev = x.device
    no_trans = bool(no_trans)
    if not no_trans:
        if trans is None:
            raise MXNetError("DeformablePSROIPooling: trans is required unless no_trans=True")
        tr = _ft(trans, "DeformablePSROIPooling", "trans")
        if tr.dim() != 4 or tr.shape[0] != R or tr.shape[1] % 2 or tr.shape[1] == 0 or \
                tuple(tr.shape[2:]) != (part, part):
            raise MXNetError(f"DeformablePSROIPooling: trans must be ({R}, 2 * num_classes, "
                             f"{part}, {part}), got {tuple(tr.shape)}")
        ncls = tr.shape[1] // 2
        if D % ncls:
            raise MXNetError(f"DeformablePSROIPooling: output_dim {D} is not a multiple of the "
                             f"{ncls} classes of trans")
        per_cls = D // ncls
    p = torch.arange(P, dtype=x.dtype, device=dev)
    bh, bw = rh / P, rw / P
    sbh, sbw = bh / spp, bw / spp
    part_idx = torch.floor(p / P * part).long()                  # (P,)
    g = _groups(P, G, dev)
    ch = (torch.arange(D, device=dev)[:, None, None] * G + g[None, :, None]) * G + \
        g[None, None, :]                                         # (D, P, P)
    it = torch.arange(spp, dtype=x.dtype, device=dev)

    def fn():
        ws = (p * bw[:, None] + x1[:, None])[:, None, None, :]  # (R, 1, 1, Pw)
        hs = (p * bh[:, None] + y1[:, None])[:, None, :, None]  # (R, 1, Ph, 1)
        if not no_trans:
            cls = torch.arange(D, device=dev) // per_cls            # (D,)
            tsel = tr.to(x.dtype)[:, :, part_idx][:, :, :, part_idx]   # (R, 2K, P, P)
            tx = tsel[:, 2 * cls] * _f32(trans_std)                  # (R, D, P, P)
            ty = tsel[:, 2 * cls + 1] * _f32(trans_std)
            ws = ws + tx * rw[:, None, None, None]
            hs = hs + ty * rh[:, None, None, None]
        ws = ws.expand(R, D, P, P)
        hs = hs.expand(R, D, P, P)
        # samples: (R, D, P, P, spp_h, spp_w)
        wsmp = ws[..., None, None] + it[None, :] * sbw[:, None, None, None, None, None]
        hsmp = hs[..., None, None] + it[:, None] * sbh[:, None, None, None, None, None]
        wsmp, hsmp = torch.broadcast_tensors(wsmp, hsmp)
        valid = (wsmp >= -0.5) & (wsmp <= W - 0.5) & (hsmp >= -0.5) & (hsmp <= H - 0.5)
        wc = wsmp.clamp(0, W - 1)
        hc = hsmp.clamp(0, H - 1)
        xf, yf = torch.floor(wc.detach()), torch.floor(hc.detach())
        xc, yc = torch.ceil(wc.detach()), torch.ceil(hc.detach())
        dx, dy = wc - xf, hc - yf
        xflat = x.reshape(-1)
        base = ((batch.reshape(R, 1, 1, 1, 1, 1) * C + ch.reshape(1, D, P, P, 1, 1)) *
                (H * W))

        def val(yy, xx):
            return xflat[base + yy.long() * W + xx.long()]
        v = (1 - dx) * (1 - dy) * val(yf, xf) + (1 - dx) * dy * val(yc, xf) + \
            dx * (1 - dy) * val(yf, xc) + dx * dy * val(yc, xc)
        v = torch.where(valid, v, torch.zeros_like(v))
        count = valid.sum((-2, -1)).to(x.dtype)
        total = v.sum((-2, -1))
        return torch.where(count > 0, total / count.clamp(min=1), torch.zeros_like(total))
    r = _run(fn)
    return _assign_out(_new(r, data._ctx), out)


# ------------------------------------------------------------------------ graphs, processes
def edge_id(data, u, v, out=None, name=None):
    """For a graph stored as a CSR matrix whose values are edge ids: ``out[i] =
    data[u[i], v[i]]`` where that entry is stored, else -1."""
    if getattr(data, "stype", "default") != "csr":
        raise MXNetError("edge_id: data must be a CSR matrix (CSRNDArray), as in MXNet")
    uu = _tt(u, "edge_id", "u").detach().reshape(-1)
    vv = _tt(v, "edge_id", "v").detach().reshape(-1)
    if uu.numel() != vv.numel():
        raise MXNetError(f"edge_id: u and v must have the same length, got {uu.numel()} and "
                         f"{vv.numel()}")
    rows, cols = data.shape
    vals = data.data._t.detach()
    indptr = data.indptr._t.long()
    indices = data.indices._t.long()
    ui = uu.to(torch.float64).trunc().long()
    vi = vv.to(torch.float64).trunc().long()
    if ui.numel() and (int(ui.min()) < 0 or int(ui.max()) >= rows or int(vi.min()) < 0 or
                       int(vi.max()) >= cols):
        raise MXNetError(f"edge_id: u and v must index the {rows}x{cols} matrix")
    row_of = torch.repeat_interleave(torch.arange(rows, device=indptr.device),
                                     indptr[1:] - indptr[:-1])
    keys = row_of * cols + indices
    order = torch.argsort(keys, stable=True)
    sk = keys[order]
    q = ui * cols + vi
    pos = torch.searchsorted(sk, q).clamp(max=max(sk.numel() - 1, 0))
    if sk.numel():
        hit = sk[pos] == q
        found = vals[order[pos]]
    else:
        hit = torch.zeros_like(q, dtype=torch.bool)
        found = torch.zeros(q.shape, dtype=vals.dtype)
    r = torch.where(hit, found, torch.full_like(found, -1))
    return _assign_out(_new(r.to(vals.dtype), u._ctx), out)


class _BlockGrad(torch.autograd.Function):
    """Identity in the graph whose backward passes no gradient (a head gradient reaching it
    is dropped, as MXNet's hawkesll drops its returned state's)."""
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return torch.zeros_like(grad)


def hawkesll(lda, alpha, beta, state, lags, marks, valid_length, max_time, out=None,
             name=None):
    """Log likelihood of K-variate (marked) Hawkes processes with exponential kernels,
    MXNet's ``contrib.hawkesll``: ``lda`` (N, K) background intensities, ``alpha`` (K,)
    branching ratios, ``beta`` (K,) decay rates, ``state`` (N, K) memory at time 0, ``lags``
    (N, T) interarrival times, ``marks`` (N, T) process ids, ``valid_length`` (N,) points per
    row, ``max_time`` (N,) observation period. Returns ``[loglike (N,), state at max_time
    (N, K)]``. As in MXNet 1.9.1, the returned state carries no gradient (its head gradient
    is ignored); the log likelihood's gradients reach every float input (MXNet computes them
    for lda, alpha and beta only and refuses to write the others)."""
    mu = _ft(lda, "hawkesll", "lda")
    a = _ft(alpha, "hawkesll", "alpha")
    b = _ft(beta, "hawkesll", "beta")
    s0 = _ft(state, "hawkesll", "state")
    lg = _ft(lags, "hawkesll", "lags")
    mk = _tt(marks, "hawkesll", "marks").detach()
    vl = _tt(valid_length, "hawkesll", "valid_length").detach()
    mt = _ft(max_time, "hawkesll", "max_time")
    if mu.dim() != 2 or lg.dim() != 2:
        raise MXNetError(f"hawkesll: lda must be (N, K) and lags (N, T), got {tuple(mu.shape)} "
                         f"and {tuple(lg.shape)}")
    N, T = lg.shape
    K = mu.shape[1]
    want = {"lda": ((N, K), mu), "alpha": ((K,), a), "beta": ((K,), b), "state": ((N, K), s0),
            "marks": ((N, T), mk), "valid_length": ((N,), vl), "max_time": ((N,), mt)}
    for what, (shape, t) in want.items():
        if tuple(t.shape) != shape:
            raise MXNetError(f"hawkesll: {what} must have shape {shape}, got {tuple(t.shape)}")
    mki = mk.to(torch.float64).trunc().long()
    if mki.numel() and (int(mki.min()) < 0 or int(mki.max()) >= K):
        raise MXNetError(f"hawkesll: marks must be in [0, {K})")
    dt = mu.dtype

    def fn():
        al, be, lgs, mx_t, st = a.to(dt), b.to(dt), lg.to(dt), mt.to(dt), s0.to(dt)
        ks = torch.arange(K, device=mu.device)
        t = torch.zeros(N, dtype=dt, device=mu.device)
        last = torch.zeros((N, K), dtype=dt, device=mu.device)
        ll = torch.zeros(N, dtype=dt, device=mu.device)
        vlen = vl.to(torch.float64)
        for j in range(T):
            valid = j < vlen                                   # (N,)
            ci = mki[:, j].clamp(0, K - 1)
            t = torch.where(valid, t + lgs[:, j], t)
            onehot = (ks[None, :] == ci[:, None]) & valid[:, None]
            last_c = last.gather(1, ci[:, None])[:, 0]
            st_c = st.gather(1, ci[:, None])[:, 0]
            mu_c = mu.gather(1, ci[:, None])[:, 0]
            a_c, b_c = al[ci], be[ci]
            d = t - last_c
            ed = torch.exp(-b_c * d)
            lam = mu_c + a_c * b_c * st_c * ed
            comp = mu_c * d + a_c * st_c * (1 - ed)
            lam = torch.where(valid, lam, torch.ones_like(lam))
            ll = ll + torch.where(valid, torch.log(lam) - comp, torch.zeros_like(comp))
            st = torch.where(onehot, (1 + st_c * ed)[:, None], st)
            last = torch.where(onehot, t[:, None], last)
        d = mx_t[:, None] - last
        ed = torch.exp(-be[None, :] * d)
        rem = mu * d + al[None, :] * st * (1 - ed)
        return ll - rem.sum(1), _BlockGrad.apply(ed * st)
    ll, st = _run(fn)
    res = [_new(ll, lda._ctx), _new(st, lda._ctx)]
    if out is not None:
        outs = out if isinstance(out, (list, tuple)) else [out]
        for o, r_ in zip(outs, res):
            o[:] = r_
        return out
    return res


def calibrate_entropy(hist, hist_edges, num_quantized_bins=255, out=None, name=None):
    """MXNet's entropy (KL divergence) calibration of one histogram: ``(threshold,
    divergence)``, float32 arrays of shape (1,), the threshold a bin edge (see
    :func:`neogluon.contrib.quantization.calibrate_entropy`, which computes it)."""
    from ..contrib.quantization import calibrate_entropy as _calibrate
    for what, v in (("hist", hist), ("hist_edges", hist_edges)):
        if not hasattr(v, "asnumpy"):
            raise MXNetError(f"calibrate_entropy: {what} must be an NDArray, got "
                             f"{type(v).__name__}")
    th, div = _calibrate(hist.asnumpy(), hist_edges.asnumpy(), int(num_quantized_bins))
    ctx = hist.context
    return [_new(torch.from_numpy(th), ctx), _new(torch.from_numpy(div), ctx)]



def _guard_all():
    from .ops import _guard
    g = globals()
    for name in __all__:
        g[name] = _guard(g[name])


_guard_all()

