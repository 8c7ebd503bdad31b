"""The weight gradient of a one-channel-input 2-D convolution on the CPU, as one C loop.

A network's first convolution on grayscale images (LeNet on MNIST: 1 input channel, 5x5
kernels) is where torch's oneDNN path is slowest in a training step: oneDNN computes on
channel blocks of 8, so the one-channel input and the output gradient are reordered into
blocked, zero-padded copies before each backward, and its weight-gradient kernel then
computes 8 channels for one (LeNet, batch 64, one thread: 2.4 ms for the weight and bias
gradients against 0.55 ms for the whole forward).

Here the weight gradient ``gw[o, 0, i, j] = sum over n, y, x of go[n, o, y, x] *
x[n, 0, y + i - ph, x + j - pw]`` is computed directly from the NCHW tensors: for each output
channel and kernel row, the ``kw`` kernel columns' sums are kept in vector registers while
the output gradient's rows stream through once (so each loaded output-gradient vector feeds
``kw`` multiply-adds). Stride and dilation 1, no groups, float32, ``kw`` up to 7; padding is
applied to a copy of the input first. The bias gradient is torch's sum. The input gradient,
when needed, and everything else stay torch's.

Sums are accumulated in another order than oneDNN's (float32 rounding differs, as MXNet's
own oneDNN build differs from torch's). Used outside any tracing, when the library builds
(``neogluon._cbuild``) and unless ``NEOGLUON_CONV_KERNELS=0``.
"""
from __future__ import annotations

import ctypes

import torch
import torch.nn.functional as F

from .. import _cbuild

SOURCE = _cbuild.PARALLEL_C + r"""
#include <stdint.h>

typedef float v8 __attribute__((vector_size(32), aligned(4)));

typedef struct {
  const float *x, *go; float *gw;
  int N, H, W, O, Ho, Wo, kh, kw, o0, o1;
} job_t;

#define KERN(KW)                                                                           \
  static void wg_##KW(const job_t *t) {                                                   \
    const int Wv = t->Wo / 8 * 8, H = t->H, W = t->W, Ho = t->Ho, Wo = t->Wo;             \
    for (int o = t->o0; o < t->o1; ++o)                                                   \
      for (int i = 0; i < t->kh; ++i) {                                                   \
        v8 acc[KW];                                                                       \
        float tail[KW];                                                                   \
        for (int j = 0; j < KW; ++j) { acc[j] = (v8){0}; tail[j] = 0.f; }                 \
        for (int n = 0; n < t->N; ++n) {                                                  \
          const float *xp = t->x + (int64_t)n * H * W + (int64_t)i * W;                   \
          const float *gp = t->go + ((int64_t)n * t->O + o) * Ho * Wo;                    \
          for (int y = 0; y < Ho; ++y) {                                                  \
            const float *xr = xp + (int64_t)y * W, *gr = gp + (int64_t)y * Wo;            \
            int q = 0;                                                                    \
            for (; q < Wv; q += 8) {                                                      \
              v8 g = *(const v8 *)(gr + q);                                               \
              for (int j = 0; j < KW; ++j) acc[j] += g * *(const v8 *)(xr + q + j);       \
            }                                                                             \
            for (; q < Wo; ++q)                                                           \
              for (int j = 0; j < KW; ++j) tail[j] += gr[q] * xr[q + j];                  \
          }                                                                               \
        }                                                                                 \
        for (int j = 0; j < KW; ++j) {                                                    \
          float s = 0.f;                                                                  \
          for (int l = 0; l < 8; ++l) s += acc[j][l];                                     \
          t->gw[((int64_t)o * t->kh + i) * KW + j] = s + tail[j];                         \
        }                                                                                 \
      }                                                                                   \
  }
KERN(1) KERN(2) KERN(3) KERN(4) KERN(5) KERN(6) KERN(7)

static void *run(void *a) {
  const job_t *t = (const job_t *)a;
  switch (t->kw) {
    case 1: wg_1(t); break; case 2: wg_2(t); break; case 3: wg_3(t); break;
    case 4: wg_4(t); break; case 5: wg_5(t); break; case 6: wg_6(t); break;
    case 7: wg_7(t); break;
  }
  return 0;
}

/* x: (N, 1, H, W) already padded; go: (N, O, Ho, Wo); gw: (O, 1, kh, kw). Output channels
   are split over nthreads threads (this one included). */
int ng_conv1ch_wgrad(const float *x, const float *go, float *gw, int N, int H, int W, int O,
                     int Ho, int Wo, int kh, int kw, int nthreads) {
  if (kw < 1 || kw > 7) return -1;
  job_t jobs[64];
  if (nthreads > 64) nthreads = 64;
  if (nthreads > O) nthreads = O;
  if (nthreads < 1) nthreads = 1;
  int per = (O + nthreads - 1) / nthreads;
  for (int k = 0; k < nthreads; ++k) {
    job_t j = {x, go, gw, N, H, W, O, Ho, Wo, kh, kw, per * k < O ? per * k : O,
               per * (k + 1) < O ? per * (k + 1) : O};
    jobs[k] = j;
  }
  ng_run_parallel(run, jobs, sizeof(job_t), nthreads);
  return 0;
}
"""

_FLAGS = ["-O3", "-fPIC", "-shared", "-pthread", "-fno-math-errno", "-fno-trapping-math"]
# below this many multiply-adds a second thread costs more than it saves
_PER_THREAD = 1 << 20


def _build():
    lib = _cbuild.build("conv_kernels", SOURCE, [_FLAGS + ["-march=native"], _FLAGS],
                        "convolution weight-gradient kernel")
    vp, i = ctypes.c_void_p, ctypes.c_int
    lib.ng_conv1ch_wgrad.argtypes = [vp, vp, vp] + [i] * 9
    lib.ng_conv1ch_wgrad.restype = ctypes.c_int
    return lib


_LIB = _cbuild.LazyLibrary(_build, "convolution kernel unavailable, using torch's",
                           switch="NEOGLUON_CONV_KERNELS")
set_enabled = _LIB.set_enabled  # turn the kernel on or off; returns the old setting


def usable(x, w, stride, dilate, num_group) -> bool:
    """Whether a 2-D convolution of ``x`` (N, C, H, W) by ``w`` takes this path: one input
    channel, stride and dilation 1, no groups, kernel width 1-7, plain contiguous float32 CPU
    tensors with nothing tracing or intercepting torch calls, and the library available."""
    return (_LIB.enabled and x.dim() == 4 and x.shape[1] == 1 and w.dim() == 4
            and w.shape[1] == 1 and num_group == 1 and 1 <= w.shape[3] <= 7
            and tuple(stride) == (1, 1) and tuple(dilate) == (1, 1)
            and x.dtype == torch.float32 and w.dtype == torch.float32
            and x.numel() < 2 ** 31 and _cbuild.untraced_cpu(x, w) and _LIB.get() is not None)


def torch_conv_backward(grad, x, w, stride, pad, mask, has_bias=False):
    """torch's 2-D convolution backward (dilation 1, no groups) for the ``mask`` of (input,
    weight, bias) gradients: ``(gx, gw, gb)``, None where not asked. Differentiable, so it
    also serves a ``create_graph=True`` backward."""
    return tuple(torch.ops.aten.convolution_backward(
        grad, x, w, [w.shape[0]] if has_bias else None, list(stride), list(pad), [1, 1],
        False, [0, 0], 1, list(mask)))


class _Conv1ch(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b, pad):
        ctx.save_for_backward(x, w)
        ctx.pad = pad
        ctx.has_bias = b is not None
        return F.conv2d(x, w, b, 1, pad)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        pad = ctx.pad
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        if torch.is_grad_enabled() or grad.dtype != torch.float32 or grad.device.type != "cpu":
            # a graph of the backward itself (create_graph=True): torch's differentiable op
            return torch_conv_backward(grad, x, w, (1, 1), pad,
                                       (need_x, need_w, need_b and ctx.has_bias),
                                       ctx.has_bias) + (None,)
        grad = grad.contiguous()
        gx = gw = gb = None
        if need_x:
            gx = torch_conv_backward(grad, x, w, (1, 1), pad, (True, False, False))[0]
        if need_w:
            xp = x.contiguous()
            if pad[0] or pad[1]:
                xp = F.pad(xp, (pad[1], pad[1], pad[0], pad[0]))
            n, _, h, wd = xp.shape
            o, _, kh, kw = w.shape
            ho, wo = grad.shape[2], grad.shape[3]
            gw = torch.empty((o, 1, kh, kw), dtype=torch.float32)
            macs = n * o * ho * wo * kh * kw
            threads = max(1, min(torch.get_num_threads(), macs // _PER_THREAD))
            if _LIB.get().ng_conv1ch_wgrad(xp.data_ptr(), grad.data_ptr(), gw.data_ptr(), n, h,
                                           wd, o, ho, wo, kh, kw, threads) != 0:
                raise RuntimeError("convolution kernel refused its arguments")
        if need_b and ctx.has_bias:
            gb = grad.sum((0, 2, 3))
        return gx, gw, gb, None


def conv2d(x, w, b, pad):
    """``F.conv2d(x, w, b, 1, pad)`` whose weight gradient comes from the kernel (see
    ``usable``). Differentiable, twice (through torch's op)."""
    return _Conv1ch.apply(x, w, b, tuple(int(p) for p in pad))
