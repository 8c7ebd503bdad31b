"""Convolutions of small images with many channels as matrix products, where that is faster.

For the weight gradient of a 2-D convolution whose output has few pixels and whose input has
many channels (ResNet's last stage on small images: 512 channels, 3x3 kernels, 2x2 pixels),
oneDNN picks a gemm-based algorithm on AVX2 processors that runs far below the machine's
speed and does not use a second thread (ResNet-18 on 64x64 images, batch 16: three such
layers took 22-25 ms each of a ~450 ms training step, at one thread and at two; MXNet 1.9.1's
oneDNN does the same). The gradient is a matrix product:
``gw (O, C*kh*kw) = go (O, N*L) @ im2col(x) (N*L, C*kh*kw)``, with ``L`` the output pixels
per image. With ``L`` small, ``im2col`` is small too, and the product runs in MKL's sgemm,
which uses every thread (those layers: 7 ms at one thread, 6 ms at two). The forward is the
same kind of product, ``y (O, N*L) = w (O, C*kh*kw) @ im2col(x)`` (those layers: 6 ms against
oneDNN's 9); when it is taken, its ``im2col`` is kept for the weight gradient (up to 16 MiB
per layer), which is then one product with no measuring.

Which way is faster depends on the shape, the processor and the thread count, so it is
measured: the first forward (and, where the forward stays oneDNN's, the first weight
gradient) of each shape and thread count runs both ways, a first call and three timed calls
each (one when a call takes over 20 ms; none when both first calls take over 20 ms and one
is 1.5 times the other), alternating, and keeps the faster. Only shapes where the product
can win are tried (``L <= 64`` output pixels per image and ``N*L <= 1024`` in the batch,
``C*kh*kw >= 512``, ``im2col`` under 64 MiB). With more output pixels oneDNN's algorithm is
as fast or faster and measuring is only a cost: d2l's ResNet-18 at 96x96 and batch 128
(``N*L`` 1,152 and 4,608 in its last two stages) kept oneDNN for all but one of the nine
measured passes, that one within noise, and paid 1.2-1.9 s of its first step for measuring.
``NEOGLUON_CONV_WGRAD=gemm`` always takes the products for those shapes, ``=onednn`` never
(for runs that must round identically from one process to the next). The input gradient
is measured the same way against ``col2im(w^T (C*kh*kw, O) @ go (O, N*L))``:
oneDNN's is faster for most of these shapes, the product for the widest (ResNet-18's
512-channel 2x2 layers: 7 ms against 11.5 at one thread). Float32 on the CPU, groups 1,
dilation 1, while recording for autograd, outside any tracing. ``im2col`` is a small C loop
that writes the product's layout directly (torch's ``unfold`` plus the transposing copy took
4-14 ms per ResNet-18 layer, the loop 0.2-0.5), and ``col2im`` one that reads it (``F.fold`` needs
a transposed copy first: 4.0-4.6 ms against 3.3-3.8 for a whole input gradient of
ResNet-18's strided layers); ``NEOGLUON_CONV_KERNELS=0`` or no compiler: ``unfold`` and
``fold``.
"""
from __future__ import annotations

import ctypes
import os
import threading
import time

import torch
import torch.nn.functional as F

from .. import _cbuild
from ._conv_kernel import torch_conv_backward

_MAX_L = 64             # output pixels per image
_MAX_NL = 1024          # output pixels in the batch (the products' columns)
_MIN_K = 512            # input channels x kernel pixels
_MAX_COLS = 16 << 20    # im2col elements (64 MiB of float32)
_MAX_KEPT = 4 << 20     # im2col elements a product forward may keep for the backward (16 MiB)

_LONG = 0.02            # seconds: a call this long is timed once when measuring
_DECISIVE = 1.5         # first calls over _LONG this far apart decide without more timing
_choice: dict = {}      # (shapes, stride, pad, threads) -> True (product) / False (oneDNN)
_lock = threading.Lock()


def mode() -> str:
    """``auto`` (measure per shape), ``gemm`` or ``onednn``, from NEOGLUON_CONV_WGRAD."""
    m = os.environ.get("NEOGLUON_CONV_WGRAD", "auto").strip().lower() or "auto"
    return m if m in ("auto", "gemm", "onednn") else "auto"


def _autocast() -> bool:
    """Whether torch.autocast is on for the CPU (its casts inside the products would not be
    undone in their backward: such calls take torch's own differentiable path)."""
    try:
        return torch.is_autocast_enabled("cpu")
    except TypeError:  # torch < 2.4
        return torch.is_autocast_cpu_enabled()


def _out_hw(x_shape, w_shape, stride, pad):
    """Output height and width of a 2-D convolution (dilation 1)."""
    return ((int(x_shape[2]) + 2 * pad[0] - int(w_shape[2])) // stride[0] + 1,
            (int(x_shape[3]) + 2 * pad[1] - int(w_shape[3])) // stride[1] + 1)


def _per_filter(w_shape):
    """Elements of one filter (C*kh*kw) of a (O, C, kh, kw) weight."""
    return int(w_shape[1]) * int(w_shape[2]) * int(w_shape[3])


def usable(x, w, stride, pad, dilate, num_group) -> bool:
    """Whether a 2-D convolution may take the products (see above)."""
    if not (x.dim() == 4 and w.dim() == 4 and num_group == 1 and tuple(dilate) == (1, 1)
            and x.dtype == torch.float32 and w.dtype == torch.float32
            and mode() != "onednn" and _cbuild.untraced_cpu(x, w) and not _autocast()):
        return False
    oh, ow = _out_hw(x.shape, w.shape, stride, pad)
    if oh <= 0 or ow <= 0:
        return False
    k, L = _per_filter(w.shape), oh * ow   # (shape arithmetic: w[0] would be an aten call)
    n = x.shape[0]
    return L <= _MAX_L and n * L <= _MAX_NL and k >= _MIN_K and n * k * L <= _MAX_COLS


def _grad_matrix(grad):
    """The output gradient (N, O, oh, ow) as an (O, N*L) matrix."""
    n, o = grad.shape[:2]
    return grad.reshape(n, o, -1).transpose(0, 1).reshape(o, -1)


# im2col straight into the (C*kh*kw, N*L) layout the products take, channels split over
# threads. torch's unfold writes (N, C*kh*kw, L), a second copy transposes it, and both took
# 1-2 ms per ResNet layer. Each input plane is first copied into a zero-bordered buffer, so
# that every window offset (i, j) reads its L values through one table of offsets with no
# bounds test (the per-value tests of a direct loop cost ~4 ns a value on these small
# images: 1.3 ms for a 512-channel 2x2 layer, 0.4 ms this way).
SOURCE = _cbuild.PARALLEL_C + r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const float *x; float *cols;
  int N, C, H, W, kh, kw, sh, sw, ph, pw, oh, ow, r0, r1;
  float *buf;        /* this job's padded plane, (H + 2ph) x (W + 2pw), borders zero */
  const int *off;    /* each output pixel's window corner in the padded plane */
} job_t;

/* im2col, channels [r0, r1): cols[(c, i, j)][n * L + l] = padded x[n][c] at window l's
   corner + (i, j). */
static void *run(void *a) {
  const job_t *t = (const job_t *)a;
  const int L = t->oh * t->ow, KK = t->kh * t->kw, Wp = t->W + 2 * t->pw;
  const int64_t NL = (int64_t)t->N * L, HW = (int64_t)t->H * t->W;
  float *buf = t->buf;
  const int *off = t->off;
  for (int c = t->r0; c < t->r1; ++c) {
    for (int n = 0; n < t->N; ++n) {
      const float *src = t->x + ((int64_t)n * t->C + c) * HW;
      for (int y = 0; y < t->H; ++y)
        memcpy(buf + (int64_t)(y + t->ph) * Wp + t->pw, src + (int64_t)y * t->W,
               sizeof(float) * t->W);
      for (int i = 0; i < t->kh; ++i)
        for (int j = 0; j < t->kw; ++j) {
          float *restrict dst = t->cols + ((int64_t)c * KK + i * t->kw + j) * NL
                                + (int64_t)n * L;
          const float *restrict b = buf + i * Wp + j;
          if (t->sw == 1 && t->ow >= 8) {   /* rows of ow neighbours: vectorised copies */
            for (int oy = 0; oy < t->oh; ++oy, dst += t->ow) {
              const float *restrict r = b + (int64_t)oy * t->sh * Wp;
              for (int ox = 0; ox < t->ow; ++ox) dst[ox] = r[ox];
            }
          } else {
            for (int l = 0; l < L; ++l) dst[l] = b[off[l]];
          }
        }
    }
  }
  return 0;
}

/* col2im, the adjoint of run(), channels [r0, r1): each plane gathers its kernel offsets' rows
   in the padded buffer, offsets in row-major order (the order of a direct loop, so the same
   sums), and its inside is copied out. */
static void *run_col2im(void *a) {
  const job_t *t = (const job_t *)a;
  const int L = t->oh * t->ow, KK = t->kh * t->kw, Hp = t->H + 2 * t->ph,
            Wp = t->W + 2 * t->pw;
  const int64_t NL = (int64_t)t->N * L, HW = (int64_t)t->H * t->W;
  float *gx = (float *)t->x;
  float *buf = t->buf;
  const int *off = t->off;
  for (int c = t->r0; c < t->r1; ++c) {
    for (int n = 0; n < t->N; ++n) {
      memset(buf, 0, sizeof(float) * (size_t)Hp * Wp);
      for (int i = 0; i < t->kh; ++i)
        for (int j = 0; j < t->kw; ++j) {
          const float *restrict src = t->cols + ((int64_t)c * KK + i * t->kw + j) * NL
                                      + (int64_t)n * L;
          float *restrict b = buf + i * Wp + j;
          if (t->sw == 1 && t->ow >= 8) {
            for (int oy = 0; oy < t->oh; ++oy, src += t->ow) {
              float *restrict r = b + (int64_t)oy * t->sh * Wp;
              for (int ox = 0; ox < t->ow; ++ox) r[ox] += src[ox];
            }
          } else {
            for (int l = 0; l < L; ++l) b[off[l]] += src[l];
          }
        }
      float *dst = gx + ((int64_t)n * t->C + c) * HW;
      for (int y = 0; y < t->H; ++y)
        memcpy(dst + (int64_t)y * t->W, buf + (int64_t)(y + t->ph) * Wp + t->pw,
               sizeof(float) * t->W);
    }
  }
  return 0;
}

/* Run fn over channels [0, C) split into nthreads jobs, each with a padded plane buffer of
   its own; returns -1 (nothing done) when out of memory. */
static int split_channels(void *(*fn)(void *), float *x, float *cols, int N, int C, int H,
                          int W, int kh, int kw, int sh, int sw, int ph, int pw, int oh, int ow,
                          int nthreads) {
  job_t jobs[64];
  if (nthreads > 64) nthreads = 64;
  if (nthreads > C) nthreads = C;
  if (nthreads < 1) nthreads = 1;
  const int per = (C + nthreads - 1) / nthreads, L = oh * ow;
  const int64_t Hp = H + 2 * ph, Wp = W + 2 * pw;
  int *off = (int *)malloc(sizeof(int) * (size_t)(L > 0 ? L : 1));
  int ok = off != 0, made = 0;
  for (int k = 0; ok && k < nthreads; ++k, ++made) {
    job_t j = {x, cols, N, C, H, W, kh, kw, sh, sw, ph, pw, oh, ow,
               per * k < C ? per * k : C, per * (k + 1) < C ? per * (k + 1) : C,
               (float *)calloc((size_t)(Hp * Wp), sizeof(float)), off};
    jobs[k] = j;
    ok = j.buf != 0;
  }
  if (ok) {
    for (int oy = 0, l = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox, ++l) off[l] = (int)(oy * sh * Wp + ox * sw);
    ng_run_parallel(fn, jobs, sizeof(job_t), nthreads);
  }
  for (int k = 0; k < made; ++k) free(jobs[k].buf);
  free(off);
  return ok ? 0 : -1;
}

int ng_col2im_kn(float *gx, const float *cols, int N, int C, int H, int W, int kh, int kw,
                 int sh, int sw, int ph, int pw, int oh, int ow, int nthreads) {
  return split_channels(run_col2im, gx, (float *)cols, N, C, H, W, kh, kw, sh, sw, ph, pw,
                        oh, ow, nthreads);
}

int ng_im2col_kn(const float *x, float *cols, int N, int C, int H, int W, int kh, int kw,
                 int sh, int sw, int ph, int pw, int oh, int ow, int nthreads) {
  return split_channels(run, (float *)x, cols, N, C, H, W, kh, kw, sh, sw, ph, pw, oh, ow,
                        nthreads);
}
"""
_FLAGS = ["-O3", "-fPIC", "-shared", "-pthread"]
_PER_THREAD = 1 << 16     # values written below which a second thread costs more than it saves


def _build():
    lib = _cbuild.build("conv_im2col", SOURCE, [_FLAGS + ["-march=native"], _FLAGS],
                        "im2col kernel")
    lib.ng_im2col_kn.argtypes = [ctypes.c_void_p, ctypes.c_void_p] + [ctypes.c_int] * 13
    lib.ng_im2col_kn.restype = ctypes.c_int
    lib.ng_col2im_kn.argtypes = [ctypes.c_void_p, ctypes.c_void_p] + [ctypes.c_int] * 13
    lib.ng_col2im_kn.restype = ctypes.c_int
    return lib


_LIB = _cbuild.LazyLibrary(_build, "im2col kernel unavailable, using torch's unfold",
                           switch="NEOGLUON_CONV_KERNELS")


def _threads(n):
    """Threads for a C loop writing ``n`` values."""
    return max(1, min(torch.get_num_threads(), n // _PER_THREAD))


def _cols(x, w_shape, stride, pad):
    """im2col(x) as a (C*kh*kw, N*L) matrix."""
    kh, kw = int(w_shape[2]), int(w_shape[3])
    if _LIB.enabled and x.is_contiguous() and _LIB.get() is not None:
        n, c, h, wd = (int(v) for v in x.shape)
        oh, ow = _out_hw(x.shape, w_shape, stride, pad)
        cols = torch.empty((c * kh * kw, n * oh * ow), dtype=torch.float32)
        if _LIB.get().ng_im2col_kn(x.data_ptr(), cols.data_ptr(), n, c, h, wd, kh, kw,
                                   stride[0], stride[1], pad[0], pad[1], oh, ow,
                                   _threads(cols.numel())) == 0:
            return cols
        # (the loop's plane buffers could not be allocated: torch's unfold below)
    cols = F.unfold(x, (kh, kw), padding=pad, stride=stride)   # (N, C*kh*kw, L)
    return cols.transpose(0, 1).reshape(cols.shape[1], -1)


def product_wgrad(grad, x, w_shape, stride, pad, cols=None):
    """The weight gradient of ``conv2d(x, w, stride=stride, padding=pad)`` for the output
    gradient ``grad``, as ``grad (O, N*L) @ im2col(x) (N*L, C*kh*kw)`` (``cols``: the
    forward's im2col matrix, when it kept one)."""
    if cols is None:
        cols = _cols(x, w_shape, stride, pad)
    return torch.mm(_grad_matrix(grad), cols.t()).view(w_shape)


def product_dgrad(grad, x_shape, w, stride, pad):
    """The input gradient of ``conv2d(x, w, stride=stride, padding=pad)`` for the output
    gradient ``grad``: ``col2im(w^T (C*kh*kw, O) @ grad (O, N*L))``."""
    n, c, h, wd = (int(v) for v in x_shape)
    o, kh, kw = int(w.shape[0]), int(w.shape[2]), int(w.shape[3])
    cols = torch.mm(w.reshape(o, -1).t(), _grad_matrix(grad))
    if _LIB.enabled and _LIB.get() is not None:
        oh, ow = _out_hw(x_shape, w.shape, stride, pad)
        gx = torch.empty((n, c, h, wd), dtype=torch.float32)
        if _LIB.get().ng_col2im_kn(gx.data_ptr(), cols.data_ptr(), n, c, h, wd, kh, kw,
                                   stride[0], stride[1], pad[0], pad[1], oh, ow,
                                   _threads(gx.numel())) == 0:
            return gx
        # (no memory for the loop's plane buffers: torch's fold below)
    cols = cols.view(c * kh * kw, n, -1).transpose(0, 1)
    return F.fold(cols, (h, wd), (kh, kw), padding=pad, stride=stride)


def _onednn_dgrad(grad, x, w, stride, pad):
    return torch_conv_backward(grad, x, w, stride, pad, (True, False, False))[0]


def product_forward(x, w, b, stride, pad):
    """``conv2d(x, w, b, stride, pad)`` as ``w (O, C*kh*kw) @ im2col(x) (C*kh*kw, N*L)``;
    returns the output and the im2col matrix."""
    n, o = x.shape[0], w.shape[0]
    oh, ow = _out_hw(x.shape, w.shape, stride, pad)
    cols = _cols(x, w.shape, stride, pad)
    y = torch.mm(w.reshape(o, -1), cols) if b is None else \
        torch.addmm(b.view(o, 1), w.reshape(o, -1), cols)
    return y.view(o, n, oh, ow).transpose(0, 1).contiguous(), cols


def _onednn_wgrad(grad, x, w, stride, pad):
    return torch_conv_backward(grad, x, w, stride, pad, (False, True, False))[1]


def _timed(fn, which):
    """(seconds, result) of ``fn()``; ``which`` ("onednn" or "product") is for tests."""
    t = time.perf_counter()
    r = fn()
    return time.perf_counter() - t, r


def _faster(kind, key, onednn, product):
    """Whether ``product()`` beats ``onednn()`` for ``(kind, key)``, measured on the first
    call and kept; returns ``(choice, result)``, the result when this call measured (else
    None). ``NEOGLUON_CONV_WGRAD=gemm|onednn`` fixes the choice."""
    m = mode()
    if m != "auto":
        return m == "gemm", None
    key = (kind,) + key + (torch.get_num_threads(),)
    hit = _choice.get(key)
    if hit is not None:
        return hit, None
    with _lock:
        hit = _choice.get(key)
        if hit is not None:
            return hit, None
        # the first call each way is timed too (oneDNN creates its primitive in it): calls
        # over _LONG s that differ by _DECISIVE or more are decided on it, which leaves only
        # the slower way's one call as the price of measuring (d2l's ResNet-18 at batch 128:
        # most of its measured layers, 50-150 ms a call). Otherwise up to three timed calls
        # each, alternating, and the best of each: the host's noise is not one-sided; calls
        # over _LONG s are timed once, their noise being small against them.
        t_dnn, r_dnn = _timed(onednn, "onednn")
        t_mm, r_mm = _timed(product, "product")
        fast, slow = min(t_dnn, t_mm), max(t_dnn, t_mm)
        if not (fast > _LONG and slow >= _DECISIVE * fast):
            t_dnn = t_mm = float("inf")
            for _ in range(3):
                t_dnn = min(t_dnn, _timed(onednn, "onednn")[0])
                t_mm = min(t_mm, _timed(product, "product")[0])
                if min(t_dnn, t_mm) > _LONG:
                    break
        _choice[key] = t_mm < t_dnn
        return _choice[key], (r_mm if _choice[key] else r_dnn)


class _ConvProduct(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b, stride, pad):
        key = (tuple(x.shape), tuple(w.shape), stride, pad)
        cols = None
        oh, ow = _out_hw(x.shape, w.shape, stride, pad)
        if x.shape[0] * _per_filter(w.shape) * oh * ow <= _MAX_KEPT:
            product, r = _faster("forward", key, lambda: F.conv2d(x, w, b, stride, pad),
                                 lambda: product_forward(x, w, b, stride, pad))
            if r is None:
                r = product_forward(x, w, b, stride, pad) if product else \
                    F.conv2d(x, w, b, stride, pad)
            y, cols = r if product else (r, None)
        else:
            y = F.conv2d(x, w, b, stride, pad)
        ctx.save_for_backward(x, w, cols)
        ctx.stride, ctx.pad, ctx.has_bias, ctx.key = stride, pad, b is not None, key
        return y

    @staticmethod
    def backward(ctx, grad):
        x, w, cols = ctx.saved_tensors
        stride, pad = ctx.stride, ctx.pad
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        need_b = need_b and ctx.has_bias
        if torch.is_grad_enabled() or grad.dtype != torch.float32 or \
                not _cbuild.untraced_cpu(grad):
            # a graph of the backward itself (create_graph=True): torch's differentiable op
            return torch_conv_backward(grad, x, w, stride, pad, (need_x, need_w, need_b),
                                       ctx.has_bias) + (None, None)
        grad = grad.contiguous()
        gx = gw = gb = None
        if need_x:
            product, gx = _faster(
                "dgrad", ctx.key, lambda: _onednn_dgrad(grad, x, w, stride, pad),
                lambda: product_dgrad(grad, x.shape, w, stride, pad))
            if gx is None:
                gx = product_dgrad(grad, x.shape, w, stride, pad) if product else \
                    _onednn_dgrad(grad, x, w, stride, pad)
        if need_w:
            if cols is not None:
                # the forward's product was the faster way: the weight gradient's product
                # (same size, im2col already made) is taken without measuring
                gw = product_wgrad(grad, x, w.shape, stride, pad, cols)
            else:
                product, gw = _faster(
                    "wgrad", ctx.key, lambda: _onednn_wgrad(grad, x, w, stride, pad),
                    lambda: product_wgrad(grad, x, w.shape, stride, pad))
                if gw is None:
                    gw = product_wgrad(grad, x, w.shape, stride, pad) if product else \
                        _onednn_wgrad(grad, x, w, stride, pad)
        if need_b:
            gb = grad.sum((0, 2, 3))
        return gx, gw, gb, None, None


def conv2d(x, w, b, stride, pad):
    """``F.conv2d(x, w, b, stride, pad)`` whose forward and weight gradient may be the
    products (see ``usable``). Differentiable, twice (through torch's op)."""
    return _ConvProduct.apply(x, w, b, tuple(int(s) for s in stride),
                                   tuple(int(p) for p in pad))
