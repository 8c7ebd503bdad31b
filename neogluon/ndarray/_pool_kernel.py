"""Max pooling on the CPU, forward and backward, as one compiled C loop each.

torch's CPU max pooling for NCHW tensors (``max_pool2d_with_indices``) scans each output's
window with a data-dependent branch per element; on random-looking activations that branch
is mispredicted about half the time, so LeNet's first pooling layer cost about as much as its
convolution and a ResNet stem's 3x3/2 pooling of a 112x112 map ~0.3 s a step. The forward
below walks each output row once per window offset, keeping the running maximum and its
position for the whole row with branch-free selects, which the compiler vectorises.

Same results as torch's kernel, bit for bit: the window is scanned in the same row-major
order, a strictly greater value (or a NaN) takes over, so the first maximum wins (the last NaN
if any); the position is the flat index ``h * W + w`` in the input plane, torch's convention,
so torch's ``max_pool2d_with_indices_backward`` can use it too (double backward). The backward
adds each output's gradient at its position, in output order, as torch's does (same bits where
windows overlap).

Used for float32/float64 CPU tensors outside any tracing (make_fx, FX, TorchScript, dispatch
modes), when the library builds (see ``neogluon._cbuild``) and unless
``NEOGLUON_POOL_KERNELS=0``; otherwise torch's pooling runs (same numbers).
"""
from __future__ import annotations

import ctypes
import os
import time

import torch

from .. import _cbuild

SOURCE = _cbuild.PARALLEL_C + r"""
#include <stdint.h>
#include <string.h>
#include <math.h>

typedef struct {
  int dt;                       /* 0 float32, 1 float64 */
  const void *x; void *out; int32_t *idx; const void *g; void *gi;
  int64_t p0, p1;               /* planes [p0, p1) */
  int H, W, Ho, Wo, kh, kw, sh, sw, ph, pw;
} job_t;

#define FWD(T)                                                                             \
  static void fwd_##T(const job_t *j) {                                                   \
    const int H = j->H, W = j->W, Ho = j->Ho, Wo = j->Wo;                                 \
    for (int64_t p = j->p0; p < j->p1; ++p) {                                             \
      const T *xp = (const T *)j->x + p * (int64_t)H * W;                                 \
      T *op = (T *)j->out + p * (int64_t)Ho * Wo;                                         \
      int32_t *ip = j->idx + p * (int64_t)Ho * Wo;                                        \
      for (int oh = 0; oh < Ho; ++oh) {                                                   \
        T *restrict m = op + (int64_t)oh * Wo;                                            \
        int32_t *restrict mi = ip + (int64_t)oh * Wo;                                     \
        int hs = oh * j->sh - j->ph, hf = hs < 0 ? 0 : hs;                                \
        for (int ow = 0; ow < Wo; ++ow) {                                                 \
          int ws = ow * j->sw - j->pw;                                                    \
          m[ow] = -INFINITY;                                                              \
          mi[ow] = hf * W + (ws < 0 ? 0 : ws);                                            \
        }                                                                                 \
        for (int i = 0; i < j->kh; ++i) {                                                 \
          int h = hs + i;                                                                 \
          if (h < 0 || h >= H) continue;                                                  \
          const T *row = xp + (int64_t)h * W;                                             \
          for (int k = 0; k < j->kw; ++k) {                                               \
            /* outputs whose window column k lies inside the row: 0 <= ow*sw-pw+k < W */  \
            int off = k - j->pw, lo = 0, hi;                                              \
            if (off < 0) lo = (-off + j->sw - 1) / j->sw;                                 \
            hi = (W - 1 - off) / j->sw + 1;                                               \
            if (hi > Wo) hi = Wo;                                                         \
            const int32_t base = h * W + off;                                             \
            const int s = j->sw;                                                          \
            for (int ow = lo; ow < hi; ++ow) {                                            \
              T v = row[ow * s + off];                                                    \
              int t = (v > m[ow]) | (v != v);                                             \
              m[ow] = t ? v : m[ow];                                                      \
              mi[ow] = t ? base + ow * s : mi[ow];                                        \
            }                                                                             \
          }                                                                               \
        }                                                                                 \
      }                                                                                   \
    }                                                                                     \
  }                                                                                       \
  static void bwd_##T(const job_t *j) {                                                   \
    const int64_t HW = (int64_t)j->H * j->W, HoWo = (int64_t)j->Ho * j->Wo;               \
    for (int64_t p = j->p0; p < j->p1; ++p) {                                             \
      const T *gp = (const T *)j->g + p * HoWo;                                           \
      const int32_t *ip = j->idx + p * HoWo;                                              \
      T *o = (T *)j->gi + p * HW;                                                         \
      memset(o, 0, sizeof(T) * HW);                                                       \
      for (int64_t i = 0; i < HoWo; ++i) o[ip[i]] += gp[i];                               \
    }                                                                                     \
  }

FWD(float)
FWD(double)

static void *run_fwd(void *a) {
  const job_t *j = (const job_t *)a;
  if (j->dt) fwd_double(j); else fwd_float(j);
  return 0;
}
static void *run_bwd(void *a) {
  const job_t *j = (const job_t *)a;
  if (j->dt) bwd_double(j); else bwd_float(j);
  return 0;
}

/* Split the planes over nthreads threads (this one included). */
static void split(job_t *base, int64_t P, int nthreads, void *(*fn)(void *)) {
  job_t jobs[64];
  if (nthreads > 64) nthreads = 64;
  if (nthreads > P) nthreads = (int)P;
  if (nthreads < 1) nthreads = 1;
  int64_t per = (P + nthreads - 1) / nthreads;
  for (int t = 0; t < nthreads; ++t) {
    jobs[t] = *base;
    jobs[t].p0 = per * t < P ? per * t : P;
    jobs[t].p1 = per * (t + 1) < P ? per * (t + 1) : P;
  }
  ng_run_parallel(fn, jobs, sizeof(job_t), nthreads);
}

void ng_maxpool2d_fwd(int dt, const void *x, void *out, int32_t *idx, int64_t P, int H, int W,
                      int Ho, int Wo, int kh, int kw, int sh, int sw, int ph, int pw,
                      int nthreads) {
  job_t j = {dt, x, out, idx, 0, 0, 0, P, H, W, Ho, Wo, kh, kw, sh, sw, ph, pw};
  split(&j, P, nthreads, run_fwd);
}

void ng_maxpool2d_bwd(int dt, const void *g, const int32_t *idx, void *gi, int64_t P, int H,
                      int W, int Ho, int Wo, int nthreads) {
  job_t j = {dt, 0, 0, (int32_t *)idx, g, gi, 0, P, H, W, Ho, Wo, 0, 0, 0, 0, 0, 0};
  split(&j, P, nthreads, run_bwd);
}
"""

_FLAGS = ["-O3", "-fPIC", "-shared", "-pthread", "-fno-math-errno", "-fno-trapping-math"]
# below this many output values a second thread costs more than it saves
_PER_THREAD = 1 << 15


def _build():
    # 256-bit vectors first: for AVX-512, gcc 12 assembles the strided window loads element
    # by element (vinsertps/vpinsrd) and the result is slower than its AVX2 code on this kind
    # of CPU (AMD EPYC, one thread, 3x3/2 over 128x64x48x48: 39-48 -> 29-33 ms, same bits);
    # a compiler or CPU without the option falls through to the next set
    lib = _cbuild.build("maxpool_kernels", SOURCE,
                        [_FLAGS + ["-march=native", "-mno-avx512f"],
                         _FLAGS + ["-march=native"], _FLAGS],
                        "max-pooling kernel")
    vp, i64, i = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
    lib.ng_maxpool2d_fwd.argtypes = [i, vp, vp, vp, i64] + [i] * 11
    lib.ng_maxpool2d_fwd.restype = None
    lib.ng_maxpool2d_bwd.argtypes = [i, vp, vp, vp, i64, i, i, i, i, i]
    lib.ng_maxpool2d_bwd.restype = None
    return lib


_LIB = _cbuild.LazyLibrary(_build, "max-pooling kernel unavailable, using torch's pooling",
                           switch="NEOGLUON_POOL_KERNELS")
set_enabled = _LIB.set_enabled  # turn the kernel on or off; returns the old setting
_DTYPES = (torch.float32, torch.float64)


def usable(x) -> bool:
    """Whether ``x`` (N, C, H, W) can go through the kernel: a plain CPU float32/float64
    tensor, nothing tracing or intercepting torch calls, and the library available."""
    return (_LIB.enabled and x.dtype in _DTYPES and x.shape[2] * x.shape[3] < 2 ** 31
            and _cbuild.untraced_cpu(x) and _LIB.get() is not None)


def _threads(n_out):
    return max(1, min(torch.get_num_threads(), n_out // _PER_THREAD))


def _cl_mode() -> str:
    """``auto`` (time both ways per shape), ``on`` or ``off``, from NEOGLUON_POOL_CL."""
    m = os.environ.get("NEOGLUON_POOL_CL", "auto").strip().lower() or "auto"
    return m if m in ("auto", "on", "off") else "auto"


_MAX_CL_PIXELS = 1024   # larger planes: the layout changes cost more than the pooling saves
_MIN_CL_CHANNELS = 8
_cl_choice: dict = {}   # (shape, kernel, stride, pad, ceil, threads) -> channels-last faster


def _plane_forward(x, kernel, stride, pad, outs):
    """The C kernel: (out, int32 positions), both NCHW."""
    n, c, h, w = x.shape
    ho, wo = outs
    out = torch.empty((n, c, ho, wo), dtype=x.dtype)
    idx = torch.empty((n, c, ho, wo), dtype=torch.int32)
    if out.numel():
        _LIB.get().ng_maxpool2d_fwd(
            int(x.dtype is torch.float64), x.data_ptr(), out.data_ptr(), idx.data_ptr(),
            n * c, h, w, ho, wo, kernel[0], kernel[1], stride[0], stride[1], pad[0],
            pad[1], _threads(out.numel()))
    return out, idx


def _channels_last_forward(x, kernel, stride, pad, outs, ceil):
    """torch's channels-last pooling, which takes a vector of channels per window position,
    between two layout changes: the same maxima and positions as the C kernel (torch's
    rule: a strictly greater value or a NaN takes over; positions ``h * W + w``)."""
    y, i = torch.ops.aten.max_pool2d_with_indices(
        x.contiguous(memory_format=torch.channels_last), list(kernel), list(stride),
        list(pad), [1, 1], ceil)
    if tuple(y.shape[2:]) != tuple(outs):
        return None
    idx = torch.empty(y.shape, dtype=torch.int32)
    idx.copy_(i)
    return y.contiguous(), idx


def _timed(fn):
    t = time.perf_counter()
    r = fn()
    return time.perf_counter() - t, r


def _forward(x, kernel, stride, pad, outs, ceil):
    """(out, positions) of the max pooling: the C kernel walks one NCHW plane at a time with
    strided loads; on small planes with many channels torch's channels-last kernel is faster
    even with the two layout changes (96x22x22 -> 10x10, batch 128: 34 against 55 ms;
    384x4x4: 1.6 against 11.6), on large planes far slower (64x48x48: 250 against 88). Which
    one runs is timed on the first call per shape and thread count (both give the same
    numbers); NEOGLUON_POOL_CL=on/off fixes it."""
    n, c, h, w = x.shape
    mode = _cl_mode()
    if mode == "off" or (mode == "auto" and (c < _MIN_CL_CHANNELS or h * w > _MAX_CL_PIXELS)):
        return _plane_forward(x, kernel, stride, pad, outs)
    key = (tuple(x.shape), x.dtype, kernel, stride, pad, ceil, torch.get_num_threads())
    hit = True if mode == "on" else _cl_choice.get(key)
    if hit is not None:
        r = _channels_last_forward(x, kernel, stride, pad, outs, ceil) if hit else None
        return r if r is not None else _plane_forward(x, kernel, stride, pad, outs)
    t_cl, r_cl = _timed(lambda: _channels_last_forward(x, kernel, stride, pad, outs, ceil))
    t_pl, r_pl = _timed(lambda: _plane_forward(x, kernel, stride, pad, outs))
    if r_cl is None:
        _cl_choice[key] = False
        return r_pl
    t_cl = min(t_cl, _timed(lambda: _channels_last_forward(x, kernel, stride, pad, outs,
                                                           ceil))[0])
    t_pl = min(t_pl, _timed(lambda: _plane_forward(x, kernel, stride, pad, outs))[0])
    _cl_choice[key] = t_cl < t_pl
    return r_cl if _cl_choice[key] else r_pl


class _MaxPool2d(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, kernel, stride, pad, outs, ceil):
        x = x.contiguous()
        out, idx = _forward(x, kernel, stride, pad, outs, ceil)
        ctx.save_for_backward(x, idx)
        ctx.geometry = (kernel, stride, pad, ceil)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, idx = ctx.saved_tensors
        kernel, stride, pad, ceil = ctx.geometry
        if torch.is_grad_enabled() or grad.dtype != x.dtype:
            # a graph of the backward itself (create_graph=True): torch's differentiable op,
            # which reads the same positions
            g = torch.ops.aten.max_pool2d_with_indices_backward(
                grad, x, list(kernel), list(stride), list(pad), [1, 1], ceil, idx.long())
            return g, None, None, None, None, None
        grad = grad.contiguous()
        n, c, h, w = x.shape
        gi = torch.empty_like(x)
        _LIB.get().ng_maxpool2d_bwd(int(x.dtype is torch.float64), grad.data_ptr(),
                                    idx.data_ptr(), gi.data_ptr(), n * c, h, w, idx.shape[2],
                                    idx.shape[3], _threads(x.numel()))
        return gi, None, None, None, None, None


def max_pool2d(x, kernel, stride, pad, outs, ceil=False):
    """Max pooling of a 4-D tensor (see ``usable``) to the output size ``outs`` = (Ho, Wo),
    which torch's ``max_pool2d`` with ``ceil_mode=ceil`` gives too; every window must hold at
    least one input position (the caller's output sizes ensure it). Differentiable."""
    return _MaxPool2d.apply(x, tuple(kernel), tuple(stride), tuple(pad), tuple(outs),
                            bool(ceil))
