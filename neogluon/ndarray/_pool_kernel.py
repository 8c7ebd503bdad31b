"""Max pooling on the CPU, forward and backward, as one compiled C loop each.

torch's CPU max pooling for NCHW tensors (``max_pool2d_with_indices``) scans each output's
window with a data-dependent branch per element; on random-looking activations that branch
is mispredicted about half the time, so LeNet's first pooling layer cost about as much as its
convolution and a ResNet stem's 3x3/2 pooling of a 112x112 map ~0.3 s a step. The forward
below walks each output row once per window offset, keeping the running maximum and its
position for the whole row with branch-free selects, which the compiler vectorises. On
small planes (rows of a few outputs) a second forward interleaves a vector's worth of planes
and scans each window once for all of them (``_blocked`` picks it).

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

import torch

from .. import _cbuild

SOURCE = _cbuild.PARALLEL_C + r"""
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
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

/* Small planes: rows of a few outputs leave the loop above little to vectorise (NiN's
   96x22x22 -> 10x10: 10 outputs a row). Here one vector's worth of planes (8 float32 or 4
   float64 with 256-bit registers, half as many with 128-bit ones) is interleaved into a
   scratch buffer, position-major, each window is scanned once for all lanes with the same
   rule and scan order as above, as whole-vector compares and bit selects (GCC/Clang vector
   extensions), and the maxima and positions are spread back to their planes. MXNet's oneDNN
   pools in the same way in its 8-channel blocked layout. */
#if defined(__AVX__)
#define VBYTES 32
#else
#define VBYTES 16   /* SSE2, NEON: wider generic vectors are split into poor code */
#endif
#define BLK(T, MT)                                                                        \
  enum { NL_##T = VBYTES / sizeof(T) };                                                   \
  typedef T v_##T __attribute__((vector_size(VBYTES)));                                   \
  typedef MT m_##T __attribute__((vector_size(NL_##T * sizeof(MT))));                     \
  static void blk_##T(const job_t *j) {                                                   \
    const int H = j->H, W = j->W, Ho = j->Ho, Wo = j->Wo;                                 \
    const int64_t HW = (int64_t)H * W, HoWo = (int64_t)Ho * Wo;                           \
    v_##T *buf = (v_##T *)aligned_alloc(sizeof(v_##T),                                    \
                                        sizeof(v_##T) * (size_t)(HW + HoWo));             \
    m_##T *ib = (m_##T *)aligned_alloc(sizeof(m_##T), sizeof(m_##T) * (size_t)HoWo);      \
    if (!buf || !ib) { free(buf); free(ib); fwd_##T(j); return; }                         \
    v_##T *ob = buf + HW;                                                                 \
    const v_##T ninf = (v_##T){0} - INFINITY;                                             \
    for (int64_t p = j->p0; p < j->p1; p += NL_##T) {                                     \
      const int nb = j->p1 - p < NL_##T ? (int)(j->p1 - p) : NL_##T;                      \
      const T *xp = (const T *)j->x + p * HW;                                             \
      if (nb < NL_##T) memset(buf, 0, sizeof(v_##T) * (size_t)HW);                        \
      for (int b = 0; b < nb; ++b)                                                        \
        for (int64_t q = 0; q < HW; ++q) buf[q][b] = xp[b * HW + q];                      \
      for (int oh = 0; oh < Ho; ++oh) {                                                   \
        const int hs = oh * j->sh - j->ph, hf = hs < 0 ? 0 : hs;                          \
        for (int ow = 0; ow < Wo; ++ow) {                                                 \
          const int ws = ow * j->sw - j->pw, wf = ws < 0 ? 0 : ws;                        \
          v_##T m = ninf;                                                                 \
          m_##T mi = (m_##T){0} + (MT)(hf * W + wf);                                      \
          for (int i = 0; i < j->kh; ++i) {                                               \
            const int h = hs + i;                                                         \
            if (h < 0 || h >= H) continue;                                                \
            for (int k = 0; k < j->kw; ++k) {                                             \
              const int w = ws + k;                                                       \
              if (w < 0 || w >= W) continue;                                              \
              const v_##T v = buf[(int64_t)h * W + w];                                    \
              const m_##T t = (v > m) | (v != v);  /* greater, or NaN: takes over */      \
              m = (v_##T)(((m_##T)v & t) | ((m_##T)m & ~t));                              \
              mi = (((m_##T){0} + (MT)(h * W + w)) & t) | (mi & ~t);                      \
            }                                                                             \
          }                                                                               \
          ob[(int64_t)oh * Wo + ow] = m;                                                  \
          ib[(int64_t)oh * Wo + ow] = mi;                                                 \
        }                                                                                 \
      }                                                                                   \
      T *op = (T *)j->out + p * HoWo;                                                     \
      int32_t *ip = j->idx + p * HoWo;                                                    \
      for (int b = 0; b < nb; ++b)                                                        \
        for (int64_t o = 0; o < HoWo; ++o) {                                              \
          op[b * HoWo + o] = ob[o][b];                                                    \
          ip[b * HoWo + o] = (int32_t)ib[o][b];                                           \
        }                                                                                 \
    }                                                                                     \
    free(buf); free(ib);                                                                  \
  }

BLK(float, int32_t)
BLK(double, int64_t)

static void *run_blk(void *a) {
  const job_t *j = (const job_t *)a;
  if (j->dt) blk_double(j); else blk_float(j);
  return 0;
}

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

void ng_maxpool2d_fwd_blocked(int dt, const void *x, void *out, int32_t *idx, int64_t P,
                              int H, int W, int Ho, int Wo, int kh, int kw, int sh, int sw,
                              int ph, int pw, int nthreads) {
  job_t j = {dt, x, out, idx, 0, 0, 0, P, H, W, Ho, Wo, kh, kw, sh, sw, ph, pw};
  split(&j, P, nthreads, run_blk);
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
    lib.ng_maxpool2d_fwd_blocked.argtypes = lib.ng_maxpool2d_fwd.argtypes
    lib.ng_maxpool2d_fwd_blocked.restype = None
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


def _blocked(planes, h, w, ho, wo, kh, kw) -> bool:
    """Whether the interleaved kernel (``blk_*``) pools these planes rather than the row
    loop. Its cost is mostly the interleaving (~2 passes over the input), the row loop's the
    windows (kh * kw per output, poorly vectorised when rows are short). One thread, batch
    128, float32 (ms, row/interleaved): 96x22x22 3x3/2 24/11, 256x10x10 13/2.8, 384x4x4
    3x3/2 3.7/0.5, 192x12x12 3x3/1 51/16, 6x28x28 2x2/2 1.1/0.6, 64x56x56 3x3/2 59/48; but
    64x64x64 3x3/2 61/65, 32x40x40 2x2/2 7.4/10.6, 64x112x112 3x3/2 168/192. Small planes
    always, mid-sized ones when the windows read each input at least twice over."""
    if planes < 4:
        return False
    px = h * w
    return px <= 1024 or (px < 4096 and kh * kw * ho * wo >= 2 * px)


def _forward(x, kernel, stride, pad, outs):
    """(out, int32 positions), both NCHW, from one of the two C kernels (same numbers)."""
    n, c, h, w = x.shape
    ho, wo = outs
    out = torch.empty((n, c, ho, wo), dtype=x.dtype)
    idx = torch.empty((n, c, ho, wo), dtype=torch.int32)
    if out.numel():
        lib = _LIB.get()
        fn = (lib.ng_maxpool2d_fwd_blocked
              if _blocked(n * c, h, w, ho, wo, kernel[0], kernel[1]) else lib.ng_maxpool2d_fwd)
        fn(int(x.dtype is torch.float64), x.data_ptr(), out.data_ptr(), idx.data_ptr(),
           n * c, h, w, ho, wo, kernel[0], kernel[1], stride[0], stride[1], pad[0], pad[1],
           _threads(out.numel()))
    return out, idx


class _MaxPool2d(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, kernel, stride, pad, outs, ceil):
        x = x.contiguous()
        out, idx = _forward(x, kernel, stride, pad, outs)
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
