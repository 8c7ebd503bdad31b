"""tanh of float32 CPU tensors as one compiled, vectorised C loop.

torch's CPU ``tanh`` is several times slower per value than its ``sigmoid`` or ``exp`` on this
kind of machine (one thread, 737k values: tanh 2.8 ms, sigmoid 0.38 ms, exp 0.81 ms), and
tanh is the activation of MXNet's LeNet and of every LSTM/GRU cell: three tanh layers were
a tenth of a LeNet training step. The loop below has no calls in it, so the compiler
vectorises it with the machine's widest vectors:

- ``|x| < 0.625``: an odd polynomial, ``x + x z P(z)`` with ``z = x*x`` (P of degree 4, the
  classic single-precision minimax fit), exact to about 1 ulp where tanh(x) ~ x;
- otherwise ``1 - 2 / (exp(2|x|) + 1)`` (no cancellation: the result is above 0.55), with
  ``exp`` by range reduction (``2^n e^r``, ``|r| <= ln2/2``, ln2 split in two parts) and a
  degree-7 polynomial for ``e^r``; ``|x|`` is capped at 10, past which tanh rounds to 1 in
  float32;
- the sign put back with ``copysign`` (so tanh(-0) = -0), NaN passed through.

Agreement with torch (float64 tanh as the truth): at most 2 ulp over the whole float32 range
(tests/test_act_kernel.py checks it on a dense sweep); torch's own is within 1 ulp, and MXNet's
oneDNN tanh is not bit-identical to either. Used for contiguous (any memory format) float32 CPU
tensors of at least ``_MIN_NUMEL`` values outside any tracing, when the library builds
(``neogluon._cbuild``) and unless ``NEOGLUON_ACT_KERNELS=0``; the gradient is torch's
``tanh_backward`` on the saved output (differentiable, so double backward works).
"""
from __future__ import annotations

import ctypes

import torch

from .. import _cbuild

SOURCE = _cbuild.PARALLEL_C + r"""
#include <stdint.h>
#include <string.h>
#include <math.h>

typedef struct { const float *x; float *y; int64_t i0, i1; } job_t;

static inline float exp_pos(float v) {       /* e^v for 0 <= v <= 20 */
  const float log2e = 1.44269504088896341f;
  const float ln2_hi = 0.693145751953125f, ln2_lo = 1.428606765330187e-06f;
  float n = floorf(v * log2e + 0.5f);
  float r = (v - n * ln2_hi) - n * ln2_lo;
  float p = 1.9841269841269841e-04f;           /* 1/5040 */
  p = p * r + 1.3888888888888889e-03f;         /* 1/720 */
  p = p * r + 8.3333333333333333e-03f;         /* 1/120 */
  p = p * r + 4.1666666666666667e-02f;         /* 1/24 */
  p = p * r + 1.6666666666666667e-01f;         /* 1/6 */
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  int32_t bits = ((int32_t)n + 127) << 23;
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

static void *run_tanh(void *arg) {
  const job_t *j = (const job_t *)arg;
  const float *restrict x = j->x;
  float *restrict y = j->y;
  for (int64_t i = j->i0; i < j->i1; ++i) {
    float v = x[i];
    float a = fabsf(v);
    float z = a * a;
    float small = (((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z
                   + 1.33314422036e-1f) * z - 3.33332819422e-1f;
    small = a + a * z * small;
    float c = a < 10.0f ? a : 10.0f;
    float large = 1.0f - 2.0f / (exp_pos(2.0f * c) + 1.0f);
    float t = a < 0.625f ? small : large;
    t = copysignf(t, v);
    y[i] = v != v ? v : t;
  }
  return 0;
}

void ng_tanh_f32(const float *x, float *y, int64_t n, int nthreads) {
  job_t jobs[64];
  if (nthreads > 64) nthreads = 64;
  if (nthreads < 1) nthreads = 1;
  int64_t per = (n + nthreads - 1) / nthreads;
  per = (per + 15) & ~(int64_t)15;
  int used = 0;
  for (int t = 0; t < nthreads; ++t) {
    int64_t i0 = per * t, i1 = per * (t + 1);
    if (i0 >= n) break;
    jobs[t].x = x; jobs[t].y = y; jobs[t].i0 = i0; jobs[t].i1 = i1 < n ? i1 : n;
    used = t + 1;
  }
  if (used) ng_run_parallel(run_tanh, jobs, sizeof(job_t), used);
}
"""

_FLAGS = ["-O3", "-fPIC", "-shared", "-pthread", "-fno-math-errno", "-fno-trapping-math"]
# below this many values torch's call is as quick as the ctypes round trip
_MIN_NUMEL = 4096
# below this many values per thread a second thread costs more than it saves
_PER_THREAD = 1 << 16


def _build():
    lib = _cbuild.build("act_kernels", SOURCE, [_FLAGS + ["-march=native"], _FLAGS],
                        "activation kernel")
    lib.ng_tanh_f32.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                ctypes.c_int]
    lib.ng_tanh_f32.restype = None
    return lib


_LIB = _cbuild.LazyLibrary(_build, "activation kernel unavailable, using torch's tanh",
                           switch="NEOGLUON_ACT_KERNELS")
set_enabled = _LIB.set_enabled  # turn the kernel on or off; returns the old setting


def _dense(x) -> bool:
    return x.is_contiguous() or (x.dim() == 4 and
                                 x.is_contiguous(memory_format=torch.channels_last))


def usable(x) -> bool:
    """Whether ``tanh(x)`` runs in the kernel: a dense float32 CPU tensor of at least
    ``_MIN_NUMEL`` values, nothing tracing or intercepting torch calls, the library built."""
    return (_LIB.enabled and x.dtype == torch.float32 and x.numel() >= _MIN_NUMEL
            and _dense(x) and _cbuild.untraced_cpu(x) and _LIB.get() is not None)


def _forward(x):
    y = torch.empty_like(x)  # same strides as a dense x
    n = x.numel()
    threads = max(1, min(torch.get_num_threads(), n // _PER_THREAD))
    _LIB.get().ng_tanh_f32(x.data_ptr(), y.data_ptr(), n, threads)
    return y


class _Tanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = _forward(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return torch.ops.aten.tanh_backward(grad, y)


def tanh(x):
    """``torch.tanh(x)``, through the kernel where ``usable``; differentiable."""
    if not usable(x):
        return torch.tanh(x)
    if x.requires_grad and torch.is_grad_enabled():
        return _Tanh.apply(x)
    return _forward(x)
