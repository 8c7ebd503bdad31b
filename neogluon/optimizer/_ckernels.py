"""Multi-tensor CPU kernels for the built-in optimizers, compiled on first use.

torch's ``_foreach_*`` ops allocate a full-size temporary per operation, which on CPU costs far
more than the update itself, and torch's fused kernels only have torch's maths. These C loops
update every tensor of a list in one pass, in MXNet's order of operations and in the tensor's
precision, split over ``torch.get_num_threads()`` POSIX threads.

The source below is built by ``neogluon._cbuild`` (once per machine with the system C
compiler, cached under ``$NEOGLUON_CACHE_DIR``) and loaded with ctypes. Without a compiler,
or with ``NEOGLUON_OPTIMIZER_KERNELS=0``, the optimizers use their torch paths (same numbers,
slower).
"""
from __future__ import annotations

import array
import ctypes
import itertools
import operator

import torch

from .. import _cbuild

K_SGD, K_SGD_MOM, K_NAG, K_SIGNUM, K_SIGNSGD, K_ADAM, K_ADAMW = range(7)
(K_ADAGRAD, K_ADADELTA, K_RMSPROP, K_RMSPROPALEX, K_FTRL, K_FTML, K_ADAMAX, K_NADAM,
 K_DCASGD, K_LAMB1, K_LAMB2, _K_RESERVED, K_SUMSQ) = range(7, 20)  # 18: was SGLD
N_PARAMS = 12  # scalar parameters a kernel call takes (unused ones are 0)

# -fno-trapping-math lets comparisons vectorise; neither flag changes any result.
_FLAGS = ["-O3", "-fPIC", "-shared", "-pthread", "-ffp-contract=off", "-fno-math-errno",
          "-fno-trapping-math"]
def _setup(lib):
    f = lib.ng_multi_update
    vp = ctypes.c_void_p
    f.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, vp, vp, vp, vp, vp, vp, vp, vp,
                  vp, vp, vp, vp, vp, ctypes.c_int]
    f.restype = ctypes.c_int
    return lib


def _build():
    # The loops are memory-bound only with wide vectors (sqrt and division are slow 4 at a
    # time); -march=native is safe as the cache key holds the CPU's flags.
    return _setup(_cbuild.build("optimizer_kernels", SOURCE,
                                [_FLAGS + ["-march=native"], _FLAGS], "optimizer kernels"))


_LIB = _cbuild.LazyLibrary(_build, "optimizer kernels unavailable, using torch ops",
                           switch="NEOGLUON_OPTIMIZER_KERNELS")
set_enabled = _LIB.set_enabled  # turn the kernels on or off; returns the old setting


def library():
    """The loaded kernel library, or None when it cannot be built here."""
    return _LIB.get()


_OK_DTYPES = (torch.float32, torch.float64)


def usable(*lists):
    """Whether the kernels can update these tensor lists (CPU, float32/64, contiguous)."""
    if not _LIB.enabled or not lists_fit(*lists):
        return False
    return _LIB._lib is not None or _LIB.get() is not None


def lists_fit(*lists):
    """Whether parallel tensor lists (None entries skipped) can go to a C kernel: CPU,
    contiguous, one float32/float64 dtype, and each tensor the size of its weight (the first
    list's), since the kernels index every list by the weights' offsets."""
    ws = lists[0]
    if not ws:
        return False
    dt = ws[0].dtype
    if dt not in _OK_DTYPES or ws[0].device.type != "cpu":
        return False
    sizes = None
    for lst in lists:
        if lst is None:
            continue
        # C-level passes over the list (this runs on every step, for every tensor); a tensor
        # of another dtype or device fails one of them, a None raises TypeError in the first.
        # The callers check shapes; the size check keeps the C code in bounds anyway.
        try:
            if (not all(map(_is_contig, lst)) or not all(map(_is_cpu, lst))
                    or set(map(_dtype_of, lst)) != {dt}):
                return False
            if sizes is None:
                sizes = list(map(_numel, lst))
            elif list(map(_numel, lst)) != sizes:
                return False
        except TypeError:
            return False
    return True


_is_contig = torch.Tensor.is_contiguous
_is_cpu = operator.attrgetter("is_cpu")
_dtype_of = operator.attrgetter("dtype")
_data_ptr = torch.Tensor.data_ptr
_numel = torch.Tensor.numel


def _ptrs(lst):
    if lst is None:
        return None
    return array.array("Q", map(_data_ptr, lst))


def _dbl(vals, n):
    if vals is None:
        return None
    if not isinstance(vals, (list, tuple)):
        return array.array("d", [float(vals)]) * n
    return array.array("d", vals)


def _addr(buf):
    return None if buf is None else buf.buffer_info()[0]


def run(kind, ws, gs, s0=None, s1=None, s2=None, lr=0.0, wd=0.0, a=None, b=None, c=None,
        params=(), want_sums=False):
    """Run one kernel over parallel lists; returns per-tensor (sum w^2, sum u^2) for LAMB1."""
    n = len(ws)
    # array.array buffers, not ctypes arrays: building them costs far less per step
    offs = array.array("q", itertools.accumulate(map(_numel, ws), initial=0))
    p = list(params) + [0.0] * (N_PARAMS - len(params))
    part = array.array("d", bytes(16 * n)) if want_sums else None
    keep = [_ptrs(ws), _ptrs(gs), _ptrs(s0), _ptrs(s1), _ptrs(s2), offs, _dbl(lr, n),
            _dbl(wd, n), _dbl(a, n), _dbl(b, n), _dbl(c, n), _dbl(p, N_PARAMS)]
    lib = _LIB._lib or _LIB.get()
    rc = lib.ng_multi_update(kind, int(ws[0].dtype is torch.float64), n, *map(_addr, keep),
                             _addr(part), torch.get_num_threads())
    if rc != 0:
        raise MemoryError("optimizer kernel could not allocate its scratch space")
    if want_sums:
        return part[0::2].tolist(), part[1::2].tolist()
    return None


SOURCE = _cbuild.PARALLEL_C + r'''
/* neogluon's multi-tensor optimizer kernels for CPU (see _ckernels.py).
 *
 * One call updates every tensor of a list in a single pass over memory: the rescale, the
 * clipping, the weight decay and the state updates all happen per element, in the order of
 * MXNet 1.9.1's operators, in the tensor's own precision. The element range of all tensors
 * together is split evenly between `nthreads` POSIX threads.
 *
 * Scalars: p[0] rescale_grad, p[1] clip_gradient (< 0: none), p[2..] per optimizer; per-tensor
 * arrays lr[], wd[], a[], b[], c[].
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
  K_SGD = 0, K_SGD_MOM = 1, K_NAG = 2, K_SIGNUM = 3, K_SIGNSGD = 4, K_ADAM = 5, K_ADAMW = 6,
  K_ADAGRAD = 7, K_ADADELTA = 8, K_RMSPROP = 9, K_RMSPROPALEX = 10, K_FTRL = 11, K_FTML = 12,
  K_ADAMAX = 13, K_NADAM = 14, K_DCASGD = 15, K_LAMB1 = 16, K_LAMB2 = 17, /* 18: was SGLD (now _rng_kernels.py) */
  K_SUMSQ = 19
};

typedef struct {
  int kind;
  int is_double;
  int64_t n;
  void **w, **g, **s0, **s1, **s2;
  const int64_t *offs; /* n + 1 prefix sums of sizes */
  const double *lr, *wd, *a, *b, *c, *p;
  double *part; /* LAMB: per thread, 2 * n sums */
  int64_t begin, end;
} job_t;

#define CLIPV(x, cl) ((x) > (cl) ? (cl) : ((x) < -(cl) ? -(cl) : (x)))
#define SIGNV(T, x) ((T)(((x) > 0) - ((x) < 0)))

/* acc (double) += sum of x[0..n)^2 with explicit 32-byte vectors of T (a serial sum does not
   vectorise without reassociation); the lanes are added in double at the end of each call */
#define VSUMSQ(T, x, n, acc)                                                                   \
  do {                                                                                         \
    typedef T vec_t __attribute__((vector_size(32)));                                          \
    enum { NL = 32 / sizeof(T) };                                                              \
    vec_t va = {0}, vb = {0};                                                                  \
    int64_t q = 0;                                                                             \
    for (; q + 2 * NL <= (n); q += 2 * NL) {                                                   \
      vec_t a, b;                                                                              \
      memcpy(&a, (x) + q, sizeof a);                                                           \
      memcpy(&b, (x) + q + NL, sizeof b);                                                      \
      va += a * a;                                                                             \
      vb += b * b;                                                                             \
    }                                                                                          \
    va += vb;                                                                                  \
    double tot = 0.0;                                                                          \
    for (int l = 0; l < NL; ++l) tot += (double)va[l];                                         \
    for (; q < (n); ++q) tot += (double)(x)[q] * (double)(x)[q];                               \
    (acc) += tot;                                                                              \
  } while (0)

#define DEFINE_SEGMENT(NAME, T, SQRT, FABS, POW)                                                 \
  static void NAME(const job_t *J, int64_t k, int64_t i0, int64_t i1, double *part) {        \
    T *w = (T *)J->w[k];                                                                       \
    const T *g = J->g ? (const T *)J->g[k] : 0;                                                \
    T *s0 = J->s0 ? (T *)J->s0[k] : 0;                                                         \
    T *s1 = J->s1 ? (T *)J->s1[k] : 0;                                                         \
    T *s2 = J->s2 ? (T *)J->s2[k] : 0;                                                         \
    const T r = (T)J->p[0];                                                                    \
    const T cl = (T)J->p[1];                                                                   \
    const int do_clip = J->p[1] >= 0;                                                          \
    const T lr = (T)J->lr[k], wd = (T)J->wd[k];                                                \
    const T p2 = (T)J->p[2], p3 = (T)J->p[3], p4 = (T)J->p[4], p5 = (T)J->p[5];                \
    const T ka = J->a ? (T)J->a[k] : 0, kb = J->b ? (T)J->b[k] : 0;                            \
    const T kc = J->c ? (T)J->c[k] : 0;                                                        \
    int64_t i;                                                                                 \
    switch (J->kind) {                                                                         \
    case K_SGD: /* MXNet's multi_sgd_update (the Updater's list path): w + (0 - lr*wd*w - step), \
                   step = (lr*rescale)*g, or lr*clip(rescale*g) */                             \
      for (i = i0; i < i1; ++i) {                                                              \
        T step = do_clip ? lr * CLIPV(r * g[i], cl) : (lr * r) * g[i];                         \
        w[i] = w[i] + ((T)0 - lr * wd * w[i] - step);                                          \
      }                                                                                        \
      break;                                                                                   \
    case K_SGD_MOM: /* multi_sgd_mom_update / sgd_mom_update, the same order */                \
      for (i = i0; i < i1; ++i) {                                                              \
        T step = do_clip ? lr * CLIPV(r * g[i], cl) : (lr * r) * g[i];                         \
        T m = p2 * s0[i] - lr * wd * w[i] - step;                                              \
        s0[i] = m;                                                                             \
        w[i] = w[i] + m;                                                                       \
      }                                                                                        \
      break;                                                                                   \
    case K_NAG:                                                                                \
      for (i = i0; i < i1; ++i) {                                                              \
        T gi = r * g[i];                                                                       \
        if (do_clip) gi = CLIPV(gi, cl);                                                       \
        T u = gi + wd * w[i];                                                                  \
        T wn = w[i] - lr * u + p2 * (p2 * s0[i] - lr * u);                                     \
        w[i] = wn;                                                                             \
        s0[i] = p2 * s0[i] - lr * (gi + wd * wn);                                              \
      }                                                                                        \
      break;                                                                                   \
    case K_SIGNUM:                                                                             \
      for (i = i0; i < i1; ++i) {                                                              \
        T gi = r * g[i];                                                                       \
        if (do_clip) gi = CLIPV(gi, cl);                                                       \
        T m = p2 * s0[i] - ((T)1 - p2) * wd * w[i] - ((T)1 - p2) * gi;                         \
        s0[i] = m;                                                                             \
        w[i] = ((T)1 - lr * p3) * w[i] + lr * SIGNV(T, m);                                        \
      }                                                                                        \
      break;                                                                                   \
    case K_SIGNSGD:                                                                            \
      for (i = i0; i < i1; ++i) {                                                              \
        T gi = r * g[i];                                                                       \
        if (do_clip) gi = CLIPV(gi, cl);                                                       \
        w[i] = ((T)1 - lr * p3) * (((T)1 - lr * wd) * w[i]) - lr * SIGNV(T, gi);                 \
      }                                                                                        \
      break;                                                                                   \
    case K_ADAM:                                                                               \
      for (i = i0; i < i1; ++i) {                                                              \
        T gi = r * g[i] + wd * w[i];                                                           \
        if (do_clip) gi = CLIPV(gi, cl);                                                       \
        T m = p2 * s0[i] + ((T)1 - p2) * gi;                                                   \
        T v = p3 * s1[i] + ((T)1 - p3) * gi * gi;                                              \
        s0[i] = m;                                                                             \
        s1[i] = v;                                                                             \
        w[i] = w[i] - lr * m / (SQRT(v) + p4);                                                 \
      }                                                                                        \
      break;                                                                                   \
    case K_ADAMW:                                                                              \
      for (i = i0; i < i1; ++i) {                                                              \
        T gi = r * g[i];                                                                       \
        if (do_clip) gi = CLIPV(gi, cl);                                                       \
        T m = p2 * s0[i] + ((T)1 - p2) * gi;                                                   \
        T v = p3 * s1[i] + ((T)1 - p3) * gi * gi;                                              \
        s0[i] = m;                                                                             \
        s1[i] = v;                                                                             \
        w[i] = w[i] - lr * (m / (SQRT(v) + p4) + wd * w[i]);                                   \
      }                                                                                        \
      break;                                                                                   \
    case K_ADAGRAD:                                                                            \
      for (i = i0; i < i1; ++i) {                                                              \
        T gi = g[i] * r;                                                                       \
        if (do_clip) gi = CLIPV(gi, cl);                                                       \
        T h = s0[i] + gi * gi;                                                                 \
        s0[i] = h;                                                                             \
        w[i] = w[i] + (gi / SQRT(h + p2) + w[i] * wd) * (-lr);                                 \
      }                                                                                        \
      break;                                                                                   \
    case K_ADADELTA:                                                                           \
      for (i = i0; i < i1; ++i) {                                                              \
        T gi = g[i] * r;                                                                       \
        if (do_clip) gi = CLIPV(gi, cl);                                                       \
        T ag = s0[i] * p2 + p4 * gi * gi; /* p4: 1 - rho, rounded once (MXNet's Python) */     \
        s0[i] = ag;                                                                            \
        T d = SQRT(s1[i] + p3) / SQRT(ag + p3) * gi;                                           \
        s1[i] = s1[i] * p2 + p4 * d * d;                                                       \
        w[i] = w[i] - (d + wd * w[i]);                                                         \
      }                                                                                        \
      break;                                                                                   \
    case K_RMSPROP:                                                                            \
      for (i = i0; i < i1; ++i) {                                                              \
        T gi = r * g[i] + wd * w[i];                                                           \
        if (do_clip) gi = CLIPV(gi, cl);                                                       \
        T nn = ((T)1 - p2) * gi * gi + p2 * s0[i];                                             \
        s0[i] = nn;                                                                            \
        T wn = w[i] - lr * (gi / SQRT(nn + p3));                                               \
        if (p4 >= 0) wn = CLIPV(wn, p4);                                                       \
        w[i] = wn;                                                                             \
      }                                                                                        \
      break;                                                                                   \
    case K_RMSPROPALEX:                                                                        \
      for (i = i0; i < i1; ++i) {                                                              \
        T gi = r * g[i] + wd * w[i];                                                           \
        if (do_clip) gi = CLIPV(gi, cl);                                                       \
        T nn = ((T)1 - p2) * gi * gi + p2 * s0[i];                                             \
        T gm = ((T)1 - p2) * gi + p2 * s1[i];                                                  \
        T d = p5 * s2[i] - lr * (gi / SQRT(nn - gm * gm + p3));                                \
        s0[i] = nn;                                                                            \
        s1[i] = gm;                                                                            \
        s2[i] = d;                                                                             \
        T wn = w[i] + d;                                                                       \
        if (p4 >= 0) wn = CLIPV(wn, p4);                                                       \
        w[i] = wn;                                                                             \
      }                                                                                        \
      break;                                                                                   \
    case K_FTRL:                                                                               \
      for (i = i0; i < i1; ++i) {                                                              \
        T gi = g[i] * r;                                                                       \
        if (do_clip) gi = CLIPV(gi, cl);                                                       \
        T nn = s1[i];                                                                          \
        T z = s0[i] + gi - (SQRT(nn + gi * gi) - SQRT(nn)) * w[i] / lr;                        \
        nn = nn + gi * gi;                                                                     \
        s0[i] = z;                                                                             \
        s1[i] = nn;                                                                            \
        w[i] = (SIGNV(T, z) * p2 - z) / ((p3 + SQRT(nn)) / lr + wd) * (T)(FABS(z) > p2);          \
      }                                                                                        \
      break;                                                                                   \
    case K_FTML: {                                                                             \
      /* MXNet evaluates the powers in the tensor's precision; c[k] is t */                     \
      const T fa = (T)1 - POW(p2, kc), fb = (T)1 - POW(p3, kc);                                \
      for (i = i0; i < i1; ++i) {                                                              \
        T gi = g[i] * r + wd * w[i];                                                           \
        if (do_clip) gi = CLIPV(gi, cl);                                                       \
        T v = p3 * s1[i] + ((T)1 - p3) * gi * gi;                                              \
        T dt = fa / lr * (SQRT(v / fb) + p4);                                                  \
        T z = p2 * s2[i] + ((T)1 - p2) * gi - (dt - p2 * s0[i]) * w[i];                        \
        s1[i] = v;                                                                             \
        s0[i] = dt;                                                                            \
        s2[i] = z;                                                                             \
        w[i] = -z / dt;                                                                        \
      }                                                                                        \
    } break;                                                                                   \
    case K_ADAMAX:                                                                             \
      for (i = i0; i < i1; ++i) {                                                              \
        T gi = g[i] * r + wd * w[i];                                                           \
        if (do_clip) gi = CLIPV(gi, cl);                                                       \
        T m = s0[i] * p2 + p4 * gi; /* p4: 1 - beta1, rounded once (MXNet's Python) */         \
        T bu = p3 * s1[i], ag = FABS(gi);                                                      \
        T u = bu > ag ? bu : ag;                                                               \
        s0[i] = m;                                                                             \
        s1[i] = u;                                                                             \
        w[i] = w[i] - lr * m / u;                                                              \
      }                                                                                        \
      break;                                                                                   \
    case K_NADAM: {                                                                            \
      /* MXNet's Nadam is Python NDArray code: every scalar is a double rounded once to T, and \
         it divides by 1 - m_schedule (ka), 1 - m_schedule_next (kb) and 1 - beta2^t */       \
      const T om1 = (T)J->p[5], om2 = (T)J->p[6], cm = (T)J->p[7], m1 = (T)J->p[8];            \
      const T bc2 = (T)J->p[9];                                                                \
      for (i = i0; i < i1; ++i) {                                                              \
        T gi = g[i] * r + wd * w[i];                                                           \
        if (do_clip) gi = CLIPV(gi, cl);                                                       \
        T m = s0[i] * p2 + om1 * gi;                                                           \
        T v = s1[i] * p3 + om2 * gi * gi;                                                      \
        s0[i] = m;                                                                             \
        s1[i] = v;                                                                             \
        T bar = cm * (gi / ka) + m1 * (m / kb);                                                \
        w[i] = w[i] - lr * bar / (SQRT(v / bc2) + p4);                                         \
      }                                                                                        \
      break;                                                                                   \
    }                                                                                          \
    case K_DCASGD:                                                                             \
      if (s0) {                                                                                \
        for (i = i0; i < i1; ++i) {                                                            \
          T gi = g[i] * r;                                                                     \
          if (do_clip) gi = CLIPV(gi, cl);                                                     \
          T step = -lr * (gi + wd * w[i] + p3 * gi * gi * (w[i] - s1[i]));                     \
          step = s0[i] * p2 + step;                                                            \
          s0[i] = step;                                                                        \
          s1[i] = w[i];                                                                        \
          w[i] = w[i] + step;                                                                  \
        }                                                                                      \
      } else {                                                                                 \
        for (i = i0; i < i1; ++i) {                                                            \
          T gi = g[i] * r;                                                                     \
          if (do_clip) gi = CLIPV(gi, cl);                                                     \
          T step = -lr * (gi + wd * w[i] + p3 * gi * gi * (w[i] - s1[i]));                     \
          s1[i] = w[i];                                                                        \
          w[i] = w[i] + step;                                                                  \
        }                                                                                      \
      }                                                                                        \
      break;                                                                                   \
    case K_LAMB1: {                                                                            \
      /* blocks: a vectorisable update loop into a buffer, then vector sums of squares */      \
      double su = 0.0, sw = 0.0;                                                               \
      /* bias corrections as reciprocals: one division per element, not three */               \
      const T ia = (T)1 / ka, ib = (T)1 / kb;                                                  \
      T ub[512] __attribute__((aligned(64)));                                                  \
      for (int64_t b0 = i0; b0 < i1; b0 += 512) {                                              \
        int64_t len = i1 - b0 < 512 ? i1 - b0 : 512, j;                                        \
        for (j = 0; j < len; ++j) {                                                            \
          i = b0 + j;                                                                          \
          T gi = g[i] * r;                                                                     \
          if (do_clip) gi = CLIPV(gi, cl);                                                     \
          T m = p2 * s0[i] + ((T)1 - p2) * gi;                                                 \
          T v = p3 * s1[i] + ((T)1 - p3) * gi * gi;                                            \
          s0[i] = m;                                                                           \
          s1[i] = v;                                                                           \
          ub[j] = (m * ia) / (SQRT(v * ib) + p4) + wd * w[i];                                  \
        }                                                                                      \
        VSUMSQ(T, ub, len, su);                                                                \
        VSUMSQ(T, (w + b0), len, sw);                                                          \
      }                                                                                        \
      part[2 * k] += sw;                                                                       \
      part[2 * k + 1] += su;                                                                   \
    } break;                                                                                   \
    case K_SUMSQ: { /* per-tensor sums of w^2 and g^2 (LARS) */                                \
      double sw = 0.0, sg = 0.0;                                                               \
      for (int64_t b0 = i0; b0 < i1; b0 += 512) {                                              \
        int64_t len = i1 - b0 < 512 ? i1 - b0 : 512;                                           \
        VSUMSQ(T, (w + b0), len, sw);                                                          \
        VSUMSQ(T, (g + b0), len, sg);                                                          \
      }                                                                                        \
      part[2 * k] += sw;                                                                       \
      part[2 * k + 1] += sg;                                                                   \
    } break;                                                                                   \
    case K_LAMB2: {                                                                            \
      const T ia = (T)1 / ka, ib = (T)1 / kb;                                                  \
      for (i = i0; i < i1; ++i) {                                                              \
        T u = (s0[i] * ia) / (SQRT(s1[i] * ib) + p4) + wd * w[i];                              \
        w[i] = w[i] - lr * u;                                                                  \
      }                                                                                        \
    } break;                                                                                   \
    }                                                                                          \
    (void)s2; (void)kc; (void)p5;                                                              \
  }

DEFINE_SEGMENT(segment_f32, float, sqrtf, fabsf, powf)
DEFINE_SEGMENT(segment_f64, double, sqrt, fabs, pow)

typedef struct {
  const job_t *job;
  int64_t begin, end;
  double *part;
} slice_t;

static void *run_slice(void *arg) {
  slice_t *s = (slice_t *)arg;
  const job_t *J = s->job;
  int64_t lo = 0, hi = J->n;
  /* first tensor whose range ends after `begin` */
  while (lo < hi) {
    int64_t mid = (lo + hi) / 2;
    if (J->offs[mid + 1] <= s->begin) lo = mid + 1; else hi = mid;
  }
  for (int64_t k = lo; k < J->n && J->offs[k] < s->end; ++k) {
    int64_t a = s->begin > J->offs[k] ? s->begin : J->offs[k];
    int64_t b = s->end < J->offs[k + 1] ? s->end : J->offs[k + 1];
    if (b <= a) continue;
    if (J->is_double)
      segment_f64(J, k, a - J->offs[k], b - J->offs[k], s->part);
    else
      segment_f32(J, k, a - J->offs[k], b - J->offs[k], s->part);
  }
  return 0;
}

/* Returns 0 on success. `part` (LAMB only) receives 2 * n sums. */
int ng_multi_update(int kind, int is_double, int64_t n, void **w, void **g, void **s0,
                    void **s1, void **s2, const int64_t *offs, const double *lr,
                    const double *wd, const double *a, const double *b, const double *c,
                    const double *p, double *part, int nthreads) {
  job_t J;
  J.kind = kind; J.is_double = is_double; J.n = n;
  J.w = w; J.g = g; J.s0 = s0; J.s1 = s1; J.s2 = s2; J.offs = offs;
  J.lr = lr; J.wd = wd; J.a = a; J.b = b; J.c = c; J.p = p; J.part = part;
  int64_t total = offs[n];
  if (nthreads < 1) nthreads = 1;
  /* small updates are not worth a thread */
  if (total < (int64_t)nthreads * 65536) nthreads = (int)(total / 65536) + 1;
  if (nthreads > 64) nthreads = 64;
  slice_t sl[64];
  double *parts = 0;
  if (part) {
    parts = (double *)calloc((size_t)nthreads * 2 * (size_t)n, sizeof(double));
    if (!parts) return 1;
  }
  int64_t chunk = (total + nthreads - 1) / nthreads;
  chunk = (chunk + 63) / 64 * 64; /* keep slice starts aligned for vector loads */
  for (int t = 0; t < nthreads; ++t) {
    sl[t].job = &J;
    sl[t].begin = (int64_t)t * chunk < total ? (int64_t)t * chunk : total;
    sl[t].end = (int64_t)(t + 1) * chunk < total ? (int64_t)(t + 1) * chunk : total;
    sl[t].part = parts ? parts + (size_t)t * 2 * (size_t)n : 0;
  }
  ng_run_parallel(run_slice, sl, sizeof(slice_t), nthreads);
  if (part) {
    memset(part, 0, 2 * (size_t)n * sizeof(double));
    for (int t = 0; t < nthreads; ++t)
      for (int64_t j = 0; j < 2 * n; ++j) part[j] += parts[(size_t)t * 2 * (size_t)n + j];
    free(parts);
  }
  return 0;
}
'''
