"""3x3 convolutions (stride 1, padding 1) as Winograd F(2x2, 3x3) products on the CPU.

Each 2x2 block of the output is computed from the 4x4 block of the input around it with 16
multiplications per (input channel, output channel) pair where direct convolution needs 36
(Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", 2016):

    y = A^T [ (G g G^T) * (B^T d B) ] A       (per 4x4 input tile d, 3x3 kernel g)

so a convolution becomes 16 independent matrix products, ``M[k] (O, T) = U[k] (O, C) @
V[k] (C, T)`` for the 16 positions ``k`` of the 4x4 transformed tile (``T``: the tiles of all
images), run by MKL's batched sgemm, between small C loops that transform the inputs (``V``),
the weights (``U``) and the products back (``A``). The gradients are the same construction:
the input gradient is the forward with the kernel flipped and its channels swapped (a stride-1,
padding-1 convolution's transpose), the weight gradient is ``dU[k] = dM[k] @ V[k]^T`` mapped
back through the weight transform's adjoint, ``dM`` being the output transform's adjoint applied
to the output gradient. The forward's ``V`` is kept for the weight gradient.

Neither torch nor MXNet 1.9.1 uses Winograd convolutions on AVX2 processors (oneDNN has them
for AVX-512 only). On this project's 2-core AVX2 host it wins for some passes of ResNet-18's
3x3 layers at 64x64 input and one thread, not all: the 16 products have ``K = C`` (64-256),
where MKL runs at 35-50 GFLOPS against oneDNN's direct convolution's 45-55, and the transforms
write four times the input. The weight gradient gains most (its products have ``K = T``).
The transforms add, subtract and halve, so the rounding differs from direct convolution's in
the last bits only (tests/test_conv_winograd.py holds it to direct float32 convolution's
accuracy against float64).

Which way runs, for each pass and shape, is measured with oneDNN (and the matrix products of
``_conv_gemm``) on the first call: see ``_conv_gemm``. This module only computes.
"""
from __future__ import annotations

import ctypes

import torch

from .. import _cbuild

_MAX_TILES = 8 << 20    # elements of V (16 x channels x tiles) above which it is not tried
_MAX_W = 4094           # image width the C loops' row buffers take (WMAX there, less 2)

SOURCE = _cbuild.PARALLEL_C + r"""
#include <stdint.h>
#include <string.h>

typedef struct {
  const float *src; float *dst; const float *bias;
  int N, C, H, W, th, tw, c0, c1, flip;
  int64_t T;
} job_t;

/* The 16 transformed values of a tile go to 16 rows of the (16, C, T) layout, which lie a
   multiple of 4 KiB apart for most shapes: written (or read) one value at a time they would
   fight over the same cache sets. So tiles are handled in blocks of BT, through a local
   16 x BT buffer, each row copied as one contiguous run. */
#define BT 64
#define WMAX 4096   /* widest row in_tf takes (eligible() checks) */

/* V[k][c][t] = (B^T d B)[k] for the 4x4 input tile d of tile t (zeros outside the image).
   One row of tiles at a time: its four input rows, zero-padded, combined vertically over
   the whole width (B^T's rows), then horizontally per tile (B's columns). With swap, the
   4x4 positions are written with indices 0 and 3 exchanged on both axes (see dgrad()). */
static void *in_tf(void *a) {
  const job_t *j = (const job_t *)a;
  const int H = j->H, W = j->W, th = j->th, tw = j->tw, Wp = 2 * tw + 2;
  const int64_t CT = (int64_t)j->C * j->T;
  static const int sw[4] = {3, 1, 2, 0}, id[4] = {0, 1, 2, 3};
  const int *ix = j->flip ? sw : id;
  float d[4][WMAX + 2], e[4][WMAX + 2];
  for (int c = j->c0; c < j->c1; ++c) {
    int64_t t = 0;
    for (int n = 0; n < j->N; ++n) {
      const float *x = j->src + ((int64_t)n * j->C + c) * H * W;
      for (int ti = 0; ti < th; ++ti, t += tw) {
        for (int r = 0; r < 4; ++r) {
          const int y = 2 * ti - 1 + r;
          memset(d[r], 0, sizeof(float) * Wp);
          if (y >= 0 && y < H) memcpy(d[r] + 1, x + (int64_t)y * W, sizeof(float) * W);
        }
        for (int q = 0; q < Wp; ++q) {
          e[0][q] = d[0][q] - d[2][q];
          e[1][q] = d[1][q] + d[2][q];
          e[2][q] = d[2][q] - d[1][q];
          e[3][q] = d[1][q] - d[3][q];
        }
        for (int r = 0; r < 4; ++r) {
          const float *er = e[r];
          float *v0 = j->dst + (4 * ix[r] + ix[0]) * CT + (int64_t)c * j->T + t;
          float *v1 = j->dst + (4 * ix[r] + ix[1]) * CT + (int64_t)c * j->T + t;
          float *v2 = j->dst + (4 * ix[r] + ix[2]) * CT + (int64_t)c * j->T + t;
          float *v3 = j->dst + (4 * ix[r] + ix[3]) * CT + (int64_t)c * j->T + t;
          for (int q = 0; q < tw; ++q) {
            const float a0 = er[2 * q], a1 = er[2 * q + 1], a2 = er[2 * q + 2];
            const float a3 = er[2 * q + 3];
            v0[q] = a0 - a2;
            v1[q] = a1 + a2;
            v2[q] = a2 - a1;
            v3[q] = a1 - a3;
          }
        }
      }
    }
  }
  return 0;
}

/* y[n][c] (H x W) = A^T M A per tile, plus bias[c] when given (c: output channel here);
   one row of tiles at a time, combined vertically (A^T's rows) over the row, then
   horizontally. With swap, M's 4x4 positions are read with indices 0 and 3 exchanged on
   both axes (the input gradient's products, see dgrad()). */
static void *out_tf(void *a) {
  const job_t *j = (const job_t *)a;
  const int H = j->H, W = j->W, th = j->th, tw = j->tw;
  const int64_t CT = (int64_t)j->C * j->T;
  static const int sw[4] = {3, 1, 2, 0}, id[4] = {0, 1, 2, 3};
  const int *ix = j->flip ? sw : id;
  float s0[4][WMAX / 2 + 1], s1[4][WMAX / 2 + 1];
  for (int c = j->c0; c < j->c1; ++c) {
    const float bc = j->bias ? j->bias[c] : 0.f;
    int64_t t = 0;
    for (int n = 0; n < j->N; ++n) {
      float *y = j->dst + ((int64_t)n * j->C + c) * H * W;
      for (int ti = 0; ti < th; ++ti, t += tw) {
        for (int q = 0; q < 4; ++q) {
          const float *m0 = j->src + (4 * ix[0] + ix[q]) * CT + (int64_t)c * j->T + t;
          const float *m1 = j->src + (4 * ix[1] + ix[q]) * CT + (int64_t)c * j->T + t;
          const float *m2 = j->src + (4 * ix[2] + ix[q]) * CT + (int64_t)c * j->T + t;
          const float *m3 = j->src + (4 * ix[3] + ix[q]) * CT + (int64_t)c * j->T + t;
          for (int p = 0; p < tw; ++p) {
            s0[q][p] = m0[p] + m1[p] + m2[p];
            s1[q][p] = m1[p] - m2[p] - m3[p];
          }
        }
        for (int i = 0; i < 2 && 2 * ti + i < H; ++i) {
          float (*s)[WMAX / 2 + 1] = i ? s1 : s0;
          float *row = y + (int64_t)(2 * ti + i) * W;
          const int full = W / 2;
          for (int p = 0; p < full; ++p) {
            row[2 * p] = s[0][p] + s[1][p] + s[2][p] + bc;
            row[2 * p + 1] = s[1][p] - s[2][p] - s[3][p] + bc;
          }
          if (W & 1) row[W - 1] = s[0][full] + s[1][full] + s[2][full] + bc;
        }
      }
    }
  }
  return 0;
}

/* dM[k][c][t] = (A dY A^T)[k]: the adjoint of out_tf for the output gradient dY. */
static void *out_adj(void *a) {
  const job_t *j = (const job_t *)a;
  const int H = j->H, W = j->W, th = j->th, tw = j->tw;
  const int64_t CT = (int64_t)j->C * j->T;
  float e[2][WMAX + 2];
  for (int c = j->c0; c < j->c1; ++c) {
    int64_t t = 0;
    for (int n = 0; n < j->N; ++n) {
      const float *g = j->src + ((int64_t)n * j->C + c) * H * W;
      for (int ti = 0; ti < th; ++ti, t += tw) {
        for (int i = 0; i < 2; ++i) {
          e[i][2 * tw - 1] = 0.f;
          if (2 * ti + i < H) memcpy(e[i], g + (int64_t)(2 * ti + i) * W, sizeof(float) * W);
          else memset(e[i], 0, sizeof(float) * W);
        }
        for (int r = 0; r < 4; ++r) {
          float *d0 = j->dst + (4 * r) * CT + (int64_t)c * j->T + t;
          float *d1 = d0 + CT, *d2 = d1 + CT, *d3 = d2 + CT;
          for (int p = 0; p < tw; ++p) {
            const float a0 = e[0][2 * p], b0 = e[0][2 * p + 1];
            const float a1 = e[1][2 * p], b1 = e[1][2 * p + 1];
            /* rows of A dY: (a0, b0), (a0 + a1, b0 + b1), (a0 - a1, b0 - b1), (-a1, -b1) */
            const float u = r == 0 ? a0 : r == 1 ? a0 + a1 : r == 2 ? a0 - a1 : -a1;
            const float w = r == 0 ? b0 : r == 1 ? b0 + b1 : r == 2 ? b0 - b1 : -b1;
            d0[p] = u;
            d1[p] = u + w;
            d2[p] = u - w;
            d3[p] = -w;
          }
        }
      }
    }
  }
  return 0;
}

/* U[k][o][c] = (G g G^T)[k] for g = w[o][c] (O = N here, C input channels). */
static void *wt_tf(void *a) {
  const job_t *j = (const job_t *)a;
  const int O = j->N, C = j->C;
  const int64_t OC = (int64_t)O * C;
  float buf[16][BT];
  for (int o = j->c0; o < j->c1; ++o) {
    for (int c0 = 0; c0 < C; c0 += BT) {
      const int nb = C - c0 < BT ? C - c0 : BT;
      for (int b = 0; b < nb; ++b) {
        const float *g = j->src + ((int64_t)o * C + c0 + b) * 9;
        float p[4][3];
        for (int k = 0; k < 3; ++k) {
          p[0][k] = g[k];
          p[1][k] = 0.5f * (g[k] + g[3 + k] + g[6 + k]);
          p[2][k] = 0.5f * (g[k] - g[3 + k] + g[6 + k]);
          p[3][k] = g[6 + k];
        }
        for (int i = 0; i < 4; ++i) {
          buf[4 * i + 0][b] = p[i][0];
          buf[4 * i + 1][b] = 0.5f * (p[i][0] + p[i][1] + p[i][2]);
          buf[4 * i + 2][b] = 0.5f * (p[i][0] - p[i][1] + p[i][2]);
          buf[4 * i + 3][b] = p[i][2];
        }
      }
      float *u = j->dst + (int64_t)o * C + c0;
      for (int k = 0; k < 16; ++k) memcpy(u + k * OC, buf[k], sizeof(float) * nb);
    }
  }
  return 0;
}

/* dw[o][c] = G^T dU[.][o][c] G: the adjoint of wt_tf (no flip). */
static void *wt_adj(void *a) {
  const job_t *j = (const job_t *)a;
  const int O = j->N, C = j->C;
  const int64_t OC = (int64_t)O * C;
  float buf[16][BT];
  for (int o = j->c0; o < j->c1; ++o) {
    for (int c0 = 0; c0 < C; c0 += BT) {
      const int nb = C - c0 < BT ? C - c0 : BT;
      const float *u = j->src + (int64_t)o * C + c0;
      for (int k = 0; k < 16; ++k) memcpy(buf[k], u + k * OC, sizeof(float) * nb);
      for (int b = 0; b < nb; ++b) {
        float d[4][4];
        for (int k = 0; k < 16; ++k) d[k / 4][k % 4] = buf[k][b];
        float p[3][4];
        for (int q = 0; q < 4; ++q) {
          p[0][q] = d[0][q] + 0.5f * (d[1][q] + d[2][q]);
          p[1][q] = 0.5f * (d[1][q] - d[2][q]);
          p[2][q] = 0.5f * (d[1][q] + d[2][q]) + d[3][q];
        }
        float *w = j->dst + ((int64_t)o * C + c0 + b) * 9;
        for (int i = 0; i < 3; ++i) {
          w[i * 3 + 0] = p[i][0] + 0.5f * (p[i][1] + p[i][2]);
          w[i * 3 + 1] = 0.5f * (p[i][1] - p[i][2]);
          w[i * 3 + 2] = 0.5f * (p[i][1] + p[i][2]) + p[i][3];
        }
      }
    }
  }
  return 0;
}

/* Run fn over channels [0, span) split into nthreads jobs. */
static void split(void *(*fn)(void *), job_t base, int span, int nthreads) {
  job_t jobs[64];
  if (nthreads > 64) nthreads = 64;
  if (nthreads > span) nthreads = span;
  if (nthreads < 1) nthreads = 1;
  const int per = (span + nthreads - 1) / nthreads;
  for (int k = 0; k < nthreads; ++k) {
    jobs[k] = base;
    jobs[k].c0 = per * k < span ? per * k : span;
    jobs[k].c1 = per * (k + 1) < span ? per * (k + 1) : span;
  }
  ng_run_parallel(fn, jobs, sizeof(job_t), nthreads);
}

void ng_wino_in(const float *x, float *v, int N, int C, int H, int W, int swap,
                int nthreads) {
  job_t b = {x, v, 0, N, C, H, W, (H + 1) / 2, (W + 1) / 2, 0, 0, swap, 0};
  b.T = (int64_t)N * b.th * b.tw;
  split(in_tf, b, C, nthreads);
}

void ng_wino_out(const float *m, float *y, const float *bias, int N, int C, int H, int W,
                 int swap, int nthreads) {
  job_t b = {m, y, bias, N, C, H, W, (H + 1) / 2, (W + 1) / 2, 0, 0, swap, 0};
  b.T = (int64_t)N * b.th * b.tw;
  split(out_tf, b, C, nthreads);
}

void ng_wino_out_adj(const float *g, float *dm, int N, int C, int H, int W, int nthreads) {
  job_t b = {g, dm, 0, N, C, H, W, (H + 1) / 2, (W + 1) / 2, 0, 0, 0, 0};
  b.T = (int64_t)N * b.th * b.tw;
  split(out_adj, b, C, nthreads);
}

void ng_wino_wt(const float *w, float *u, int O, int C, int nthreads) {
  job_t b = {w, u, 0, O, C, 0, 0, 0, 0, 0, 0, 0, 0};
  split(wt_tf, b, O, nthreads);
}

void ng_wino_wt_adj(const float *du, float *w, int O, int C, int nthreads) {
  job_t b = {du, w, 0, O, C, 0, 0, 0, 0, 0, 0, 0, 0};
  split(wt_adj, b, O, nthreads);
}
"""

_FLAGS = ["-O3", "-fPIC", "-shared", "-pthread"]
_PER_THREAD = 1 << 16     # values written below which a second thread costs more than it saves


def _build():
    lib = _cbuild.build("conv_winograd", SOURCE, [_FLAGS + ["-march=native"], _FLAGS],
                        "Winograd convolution kernels")
    vp, i = ctypes.c_void_p, ctypes.c_int
    lib.ng_wino_in.argtypes = [vp, vp] + [i] * 6
    lib.ng_wino_out.argtypes = [vp, vp, vp] + [i] * 6
    lib.ng_wino_out_adj.argtypes = [vp, vp] + [i] * 5
    lib.ng_wino_wt.argtypes = [vp, vp] + [i] * 3
    lib.ng_wino_wt_adj.argtypes = [vp, vp] + [i] * 3
    for f in (lib.ng_wino_in, lib.ng_wino_out, lib.ng_wino_out_adj, lib.ng_wino_wt,
              lib.ng_wino_wt_adj):
        f.restype = None
    return lib


_LIB = _cbuild.LazyLibrary(_build, None, switch="NEOGLUON_CONV_WINOGRAD")
set_enabled = _LIB.set_enabled


def _threads(n):
    return max(1, min(torch.get_num_threads(), n // _PER_THREAD))


def _tiles(shape):
    n, _, h, w = (int(v) for v in shape)
    return n * ((h + 1) // 2) * ((w + 1) // 2)


def eligible(x, w, stride, pad) -> bool:
    """Whether the Winograd way applies: a 3x3 kernel, stride 1, padding 1, float32, the
    kernels available, rows no wider than ``_MAX_W`` and the transformed input under
    ``_MAX_TILES`` values. (The caller has
    checked groups, dilation, tracing and autocast.)"""
    return (_LIB.enabled and tuple(w.shape[2:]) == (3, 3) and tuple(stride) == (1, 1)
            and tuple(pad) == (1, 1) and x.dtype == torch.float32 and x.shape[3] <= _MAX_W
            and 16 * max(int(x.shape[1]), int(w.shape[0])) * _tiles(x.shape) <= _MAX_TILES
            and _LIB.get() is not None)


def transform_input(x, swap=False):
    """V (16, C, T) of a contiguous (N, C, H, W) float32 tensor (``swap``: see ``dgrad``)."""
    n, c, h, w = (int(v) for v in x.shape)
    v = torch.empty((16, c, _tiles(x.shape)), dtype=torch.float32)
    _LIB.get().ng_wino_in(x.data_ptr(), v.data_ptr(), n, c, h, w, int(swap),
                          _threads(v.numel()))
    return v


def transform_weight(w):
    """U (16, O, C) of the (O, C, 3, 3) weight."""
    w = w.contiguous()
    o, c = int(w.shape[0]), int(w.shape[1])
    u = torch.empty((16, o, c), dtype=torch.float32)
    _LIB.get().ng_wino_wt(w.data_ptr(), u.data_ptr(), o, c, _threads(u.numel()))
    return u


def _output(m, n, h, w, bias=None, swap=False):
    """(N, O, H, W) from the products M (16, O, T)."""
    o = int(m.shape[1])
    y = torch.empty((n, o, h, w), dtype=torch.float32)
    b = None if bias is None else bias.contiguous()
    _LIB.get().ng_wino_out(m.data_ptr(), y.data_ptr(), None if b is None else b.data_ptr(),
                           n, o, h, w, int(swap), _threads(y.numel()))
    return y


def forward(x, w, b):
    """``conv2d(x, w, b, stride=1, padding=1)`` for a 3x3 ``w``; returns the output, V and
    U (the transformed input and weight, for the gradients)."""
    x = x.contiguous()
    n, _, h, wd = (int(v) for v in x.shape)
    v, u = transform_input(x), transform_weight(w)
    return _output(torch.bmm(u, v), n, h, wd, b), v, u


def dgrad(grad, x_shape, w, u=None):
    """The input gradient of ``conv2d(x, w, stride=1, padding=1)`` for the output gradient
    ``grad`` (contiguous): the forward of ``grad`` with the kernel turned by 180 degrees and
    its channel axes swapped. The turned kernel's transform is the forward's ``U`` with each
    (O, C) matrix transposed and positions 0 and 3 exchanged on both axes of the 4x4 tile
    (G's first and last rows are each other's mirror, its middle rows their own), so ``U`` is
    reused: the exchange is made while transforming ``grad`` and undone on the way out."""
    n, _, h, wd = (int(v) for v in x_shape)
    if u is None:
        u = transform_weight(w)
    m = torch.bmm(u.transpose(1, 2), transform_input(grad, swap=True))
    return _output(m, n, h, wd, swap=True)


def wgrad(grad, x, w_shape, v=None):
    """The weight gradient for the output gradient ``grad`` (contiguous), from the forward's
    V when given (else made from ``x``)."""
    if v is None:
        v = transform_input(x.contiguous())
    n, o, h, wd = (int(s) for s in grad.shape)
    dm = torch.empty((16, o, v.shape[2]), dtype=torch.float32)
    _LIB.get().ng_wino_out_adj(grad.data_ptr(), dm.data_ptr(), n, o, h, wd,
                               _threads(dm.numel()))
    du = torch.bmm(dm, v.transpose(1, 2))
    gw = torch.empty(tuple(w_shape), dtype=torch.float32)
    _LIB.get().ng_wino_wt_adj(du.data_ptr(), gw.data_ptr(), o, int(w_shape[1]),
                              _threads(gw.numel()))
    return gw
