"""SGLD's fused CPU kernel: Gaussian noise drawn inside the update loop, one pass, no buffer.

Drawing 25 M Gaussian numbers with torch's generator and then adding them costs several times
the update itself. Here every weight's noise is computed where it is used:

* the random bits come from Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy
  as 1, 2, 3", SC 2011; torch's CUDA generator, TensorFlow's default, one of cuRAND's),
  keyed by a 64-bit seed drawn once per kernel call from neogluon's seeded CPU generator and
  indexed by the element's position in the call's tensor list, so a value never depends on
  the number of threads or on how the range is split between them;
* the standard normals come from the Box-Muller transform computed in float32 with its own
  vectorisable logarithm, square root, sine and cosine (IEEE operations only, no fast-math;
  fused multiply-adds where the build targets a CPU with FMA).

Layout: element ``e`` of a call lies in block ``b = e // 64``; with ``o = e % 64``, lane
``j = o % 16`` and word ``k = o // 16``, it takes Philox counter ``(16*b + j)`` (a 64-bit
number in the first two counter words, the other two zero). Words 0 and 1 make one
Box-Muller pair (k = 0: ``r*cos``, k = 1: ``r*sin``), words 2 and 3 the other.

The library is compiled like :mod:`._ckernels` (same compiler, cache directory and switch
``NEOGLUON_OPTIMIZER_KERNELS=0``); without it SGLD draws its noise with torch.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import warnings

import torch

from . import _ckernels as ck

_FLAGS = ["-O3", "-fPIC", "-shared", "-pthread", "-ffp-contract=off", "-fno-math-errno",
          "-fno-trapping-math"]
_lock = threading.Lock()
_libs: dict = {}
_tried: set = set()


def _build(native=True):
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise OSError("no C compiler found (set $CC)")
    tag = "native" if native else "portable"
    key = hashlib.sha256((SOURCE + " ".join(_FLAGS) + tag + ck._cpu_signature() + cc)
                         .encode()).hexdigest()[:16]
    d = ck._cache_dir()
    os.makedirs(d, exist_ok=True)
    so = os.path.join(d, f"sgld_kernels_{key}.so")
    if not os.path.exists(so):
        with tempfile.TemporaryDirectory() as tmp:
            c_path = os.path.join(tmp, "sgld.c")
            with open(c_path, "w") as f:
                f.write(SOURCE)
            out = os.path.join(tmp, "sgld.so")
            ok, err = False, ""
            if native:
                # AVX-512 Philox when the machine has it; the cache key holds the CPU's flags
                ok, err = ck._compile(cc, _FLAGS + ["-march=native"], out, c_path)
            if not ok:
                ok, err = ck._compile(cc, _FLAGS, out, c_path)
            if not ok:
                raise OSError(f"compiling the SGLD kernel failed: {err[-2000:]}")
            fd, tmp_so = tempfile.mkstemp(dir=d, suffix=".so.tmp")
            os.close(fd)
            shutil.copyfile(out, tmp_so)
            os.chmod(tmp_so, 0o644)
            os.replace(tmp_so, so)  # atomic: concurrent processes see a whole file or none
    lib = ctypes.CDLL(so)
    vp, i64, dbl = ctypes.c_void_p, ctypes.c_int64, ctypes.c_double
    lib.ng_sgld_update.argtypes = [ctypes.c_int, i64, vp, vp, vp, dbl, dbl, dbl, dbl, dbl,
                                   ctypes.c_uint64, ctypes.c_int]
    lib.ng_sgld_update.restype = ctypes.c_int
    lib.ng_normal_fill.argtypes = [ctypes.c_uint64, i64, i64, vp]
    lib.ng_normal_fill.restype = None
    lib.ng_philox4x32_10.argtypes = [vp, vp, vp]
    lib.ng_philox4x32_10.restype = None
    lib.ng_simd_width.argtypes = []
    lib.ng_simd_width.restype = ctypes.c_int
    return lib


def library(native=True):
    """The loaded SGLD library (``native=False``: the build without ``-march=native``, for
    tests), or None when it cannot be built here."""
    lib = _libs.get(native)
    if lib is not None or native in _tried:
        return lib
    with _lock:
        if native not in _tried:
            try:
                _libs[native] = _build(native)
            except (OSError, subprocess.SubprocessError) as e:
                warnings.warn(f"neogluon: SGLD kernel unavailable, using torch's generator "
                              f"({e})", RuntimeWarning, stacklevel=3)
            _tried.add(native)
    return _libs.get(native)


def usable(ws, gs):
    """Whether the fused kernel can update these lists (CPU, float32/64, contiguous)."""
    if not ck._enabled or not ws:
        return False
    dt = ws[0].dtype
    if dt not in (torch.float32, torch.float64):
        return False
    for lst in (ws, gs):
        for t in lst:
            if not t.is_cpu or t.dtype is not dt or not t.is_contiguous():
                return False
    return library() is not None


def draw_seed(generator):
    """A 64-bit Philox key from a torch CPU generator (one per kernel call)."""
    lo, hi = torch.randint(0, 2 ** 32, (2,), dtype=torch.int64, generator=generator).tolist()
    return lo | (hi << 32)


def sgld_update(ws, gs, lr, wd, rescale, clip, std, seed):
    """``w = w - lr/2 * (clip(rescale*g) + wd*w) + std * z`` over the lists, in place, with z
    standard normals indexed by position in the list (``clip < 0``: no clipping)."""
    n = len(ws)
    offs = [0] * (n + 1)
    acc = 0
    for i, t in enumerate(ws):
        acc += t.numel()
        offs[i + 1] = acc
    wp = (ctypes.c_void_p * n)(*[t.data_ptr() for t in ws])
    gp = (ctypes.c_void_p * n)(*[t.data_ptr() for t in gs])
    op = (ctypes.c_int64 * (n + 1))(*offs)
    rc = library().ng_sgld_update(int(ws[0].dtype is torch.float64), n, wp, gp, op,
                                  float(lr), float(wd), float(rescale), float(clip),
                                  float(std), seed & (2 ** 64 - 1), torch.get_num_threads())
    if rc != 0:
        raise RuntimeError("the SGLD kernel failed")


def normal_fill(seed, start, n, native=True):
    """The kernel's standard normals for positions ``start .. start+n`` (float32 tensor)."""
    out = torch.empty(n, dtype=torch.float32)
    library(native).ng_normal_fill(seed & (2 ** 64 - 1), start, n, out.data_ptr())
    return out


def philox4x32_10(counter, key):
    """One Philox-4x32-10 block: four 32-bit words from a 4-word counter and 2-word key."""
    c = (ctypes.c_uint32 * 4)(*counter)
    k = (ctypes.c_uint32 * 2)(*key)
    o = (ctypes.c_uint32 * 4)()
    library().ng_philox4x32_10(ctypes.addressof(c), ctypes.addressof(k), ctypes.addressof(o))
    return tuple(o)


SOURCE = r'''
/* neogluon: SGLD update with in-kernel Gaussian noise (see _rng_kernels.py). */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#ifdef __AVX512F__
#include <immintrin.h>
#endif

#define NL 16            /* Philox instances per block */
#define BLK (4 * NL)     /* normals per block */
#define NB 4             /* blocks generated per batch (the batch stays in L1) */
#define PM0 0xD2511F53u
#define PM1 0xCD9E8D57u
#define PW0 0x9E3779B9u
#define PW1 0xBB67AE85u

/* x[b][k][j] = word k of Philox-4x32-10(counter = 16 * (blk + b) + j, key), b < nb; x must
   have room for nb rounded up to even. */
static inline void philox_blocks(uint64_t blk, int nb, uint32_t k0, uint32_t k1,
                                 uint32_t x[][4][NL]) {
#ifdef __AVX512F__
  /* Two blocks (four groups of 8 instances, one per 64-bit lane) at a time, for enough
     independent work to hide the multiplies' latency. Only the low 32 bits of a lane matter:
     vpmuludq reads only those, so the high halves can hold garbage and no blends are needed. */
  const __m512i m0 = _mm512_set1_epi64(PM0), m1 = _mm512_set1_epi64(PM1);
  const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  for (int b = 0; b < nb; b += 2) {
    __m512i A[4], B[4], C[4], D[4];
    for (int q = 0; q < 4; ++q) {
      __m512i n = _mm512_add_epi64(
          _mm512_set1_epi64((long long)((blk + (uint64_t)b) * NL + 8 * (uint64_t)q)), lane);
      A[q] = n; B[q] = _mm512_srli_epi64(n, 32);
      C[q] = _mm512_setzero_si512(); D[q] = C[q];
    }
    uint32_t K0 = k0, K1 = k1;
    for (int r = 0; r < 10; ++r) {
      const __m512i V0 = _mm512_set1_epi64(K0), V1 = _mm512_set1_epi64(K1);
      for (int q = 0; q < 4; ++q) {
        __m512i p = _mm512_mul_epu32(A[q], m0), t = _mm512_mul_epu32(C[q], m1);
        A[q] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(t, 32), B[q], V0, 0x96);
        C[q] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p, 32), D[q], V1, 0x96);
        B[q] = t; D[q] = p;
      }
      K0 += PW0; K1 += PW1;
    }
    for (int q = 0; q < 4; ++q) {
      uint32_t(*y)[NL] = x[b + q / 2];
      int o = 8 * (q % 2);
      _mm256_storeu_si256((__m256i *)(y[0] + o), _mm512_cvtepi64_epi32(A[q]));
      _mm256_storeu_si256((__m256i *)(y[1] + o), _mm512_cvtepi64_epi32(B[q]));
      _mm256_storeu_si256((__m256i *)(y[2] + o), _mm512_cvtepi64_epi32(C[q]));
      _mm256_storeu_si256((__m256i *)(y[3] + o), _mm512_cvtepi64_epi32(D[q]));
    }
  }
#else
  for (int b = 0; b < nb; ++b)
    for (int j = 0; j < NL; ++j) {
      uint64_t n = (blk + (uint64_t)b) * NL + (uint64_t)j;
      uint32_t c0 = (uint32_t)n, c1 = (uint32_t)(n >> 32), c2 = 0, c3 = 0, K0 = k0, K1 = k1;
      for (int r = 0; r < 10; ++r) {
        uint64_t p0 = (uint64_t)PM0 * c0, p1 = (uint64_t)PM1 * c2;
        c0 = (uint32_t)(p1 >> 32) ^ c1 ^ K0; c1 = (uint32_t)p1;
        c2 = (uint32_t)(p0 >> 32) ^ c3 ^ K1; c3 = (uint32_t)p0;
        K0 += PW0; K1 += PW1;
      }
      x[b][0][j] = c0; x[b][1][j] = c1; x[b][2][j] = c2; x[b][3][j] = c3;
    }
#endif
}

/* Box-Muller: two independent N(0, 1) from two 32-bit words, in float32 IEEE operations only
   (no libm vector calls, no fast-math).
   Radius: r = sqrt(-2 ln u), u = (floor(a/2) + 1/2) 2^-31 in (0, 1), so the tails reach
   6.66 sigma. With v = u 2^31 = m 2^e, m in [sqrt(1/2), sqrt(2)):
   -2 ln u = -2 ln2 (e - 31) - 4 atanh(s), s = (m-1)/(m+1), |s| <= 0.172, and the series
   4 (s + s^3/3 + ... + s^9/9) leaves out less than 2e-9 relative (m - 1 is exact, so small
   radii keep their relative accuracy).
   Angle: theta = (pi/4) (o + f) with the octant o the top three bits of b; f, from the other
   29 bits, is reflected to 1 - f (exactly, in integers) in odd octants, so sin and cos are
   only needed on [0, pi/4], where Taylor series to x^11 and x^10 leave out < 2e-9. */
#ifdef __FMA__
/* fused where the hardware has it (a portable build on such a machine differs in the last
   bit of some values; every build is the same from run to run and across thread counts) */
#define MADD(a, b, c) __builtin_fmaf((a), (b), (c))
#else
#define MADD(a, b, c) ((a) * (b) + (c))
#endif

static inline void box_muller(uint32_t a, uint32_t b, float *z0, float *z1) {
  float v = (float)(int32_t)(a >> 1) + 0.5f;
  int32_t bits;
  memcpy(&bits, &v, 4);
  int32_t e = ((bits >> 23) & 0xff) - 127 - 31;
  int32_t mb = (bits & 0x7fffff) | 0x3f800000;
  float m;
  memcpy(&m, &mb, 4);
  int big = m > 1.41421356f;
  m = big ? m * 0.5f : m;
  e += big;
  float s = (m - 1.0f) / (m + 1.0f), z = s * s;
  float p = MADD(z, MADD(z, MADD(z, MADD(z, -4.0f / 9, -4.0f / 7), -4.0f / 5), -4.0f / 3),
                 -4.0f);
  float r = sqrtf(MADD((float)e, -1.38629436112f, s * p));

  uint32_t o = b >> 29, fb = b & 0x1fffffffu;
  fb = (o & 1) ? 0x20000000u - fb : fb;
  float f = (float)(int32_t)fb * 0x1p-29f, f2 = f * f;
  /* (pi/4)^k / k! with alternating signs */
  float sn = MADD(f2, MADD(f2, MADD(f2, MADD(f2, -1.75724767344e-9f, 3.13361689038e-7f),
                                    -0.0000365762041822f), 0.00249039457019f),
                  -0.0807455121883f);
  sn = f * MADD(f2, sn, 0.785398163397f);
  float cs = MADD(f2, MADD(f2, MADD(f2, -2.46113695049e-8f, 3.59086044859e-6f),
                           -0.000325991886927f), 0.0158543442438f);
  cs = MADD(f2, MADD(f2, cs, -0.308425137534f), 1.0f);
  int swap = ((o + 1) & 2) != 0;          /* octants 1, 2, 5, 6 */
  float c = swap ? sn : cs, t = swap ? cs : sn;
  c = ((o + 2) & 4) ? -c : c;             /* octants 2..5 */
  t = (o & 4) ? -t : t;                   /* octants 4..7 */
  *z0 = r * c;
  *z1 = r * t;
}

/* z[0 .. 64*nb) = the normals of blocks blk .. blk+nb (nb <= NB) */
static void normals_batch(uint64_t blk, int nb, uint32_t k0, uint32_t k1, float *z) {
  uint32_t x[NB + 1][4][NL];
  philox_blocks(blk, nb, k0, k1, x);
  for (int b = 0; b < nb; ++b) {
    float *zb = z + BLK * b;
    for (int j = 0; j < NL; ++j) {
      box_muller(x[b][0][j], x[b][1][j], &zb[j], &zb[NL + j]);
      box_muller(x[b][2][j], x[b][3][j], &zb[2 * NL + j], &zb[3 * NL + j]);
    }
  }
}

void ng_philox4x32_10(const uint32_t *ctr, const uint32_t *key, uint32_t *out) {
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], K0 = key[0], K1 = key[1];
  for (int r = 0; r < 10; ++r) {
    uint64_t p0 = (uint64_t)PM0 * c0, p1 = (uint64_t)PM1 * c2;
    c0 = (uint32_t)(p1 >> 32) ^ c1 ^ K0; c1 = (uint32_t)p1;
    c2 = (uint32_t)(p0 >> 32) ^ c3 ^ K1; c3 = (uint32_t)p0;
    K0 += PW0; K1 += PW1;
  }
  out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

int ng_simd_width(void) {
#ifdef __AVX512F__
  return 512;
#else
  return 0;
#endif
}

/* out[i] = the normal of position start + i */
void ng_normal_fill(uint64_t seed, int64_t start, int64_t n, float *out) {
  float z[NB * BLK];
  int64_t end = start + n;
  for (int64_t cs = start - start % BLK; cs < end; cs += NB * BLK) {
    int64_t ce = cs + NB * BLK < end ? cs + NB * BLK : end;
    int nb = (int)((ce - cs + BLK - 1) / BLK);
    normals_batch((uint64_t)cs / BLK, nb, (uint32_t)seed, (uint32_t)(seed >> 32), z);
    for (int64_t e = cs > start ? cs : start; e < ce; ++e) out[e - start] = z[e - cs];
  }
}

typedef struct {
  int is_double;
  int64_t n;
  void **w, **g;
  const int64_t *offs;
  double lr, wd, rescale, clip, sd;
  uint64_t seed;
  int64_t begin, end;
} sgld_job_t;

#define CLIPV(x, cl) ((x) > (cl) ? (cl) : ((x) < -(cl) ? -(cl) : (x)))

/* elements [a, b) of the call (global positions) inside tensor k, which starts at offs[k] */
#define DEFINE_SGLD(NAME, T)                                                                   \
  static void NAME(const sgld_job_t *J, int64_t k, int64_t a, int64_t b, float *z) {           \
    T *w = (T *)J->w[k];                                                                       \
    const T *g = (const T *)J->g[k];                                                           \
    const int64_t off = J->offs[k];                                                            \
    const T r = (T)J->rescale, cl = (T)J->clip, lr = (T)J->lr, wd = (T)J->wd;                  \
    const T sd = (T)J->sd, hl = -lr / (T)2;                                                    \
    const int do_clip = J->clip >= 0;                                                          \
    const uint32_t k0 = (uint32_t)J->seed, k1 = (uint32_t)(J->seed >> 32);                     \
    for (int64_t cs = a - a % BLK; cs < b; cs += NB * BLK) {                                   \
      int64_t ce = cs + NB * BLK < b ? cs + NB * BLK : b;                                      \
      normals_batch((uint64_t)cs / BLK, (int)((ce - cs + BLK - 1) / BLK), k0, k1, z);          \
      const int64_t i0 = (cs > a ? cs : a) - off, i1 = ce - off, zo = off - cs;               \
      for (int64_t i = i0; i < i1; ++i) {                                                      \
        T gi = g[i] * r;                                                                       \
        if (do_clip) gi = CLIPV(gi, cl);                                                       \
        T wn = w[i] + hl * (gi + wd * w[i]);                                                   \
        w[i] = wn + sd * (T)z[i + zo];                                                         \
      }                                                                                        \
    }                                                                                          \
  }

DEFINE_SGLD(sgld_f32, float)
DEFINE_SGLD(sgld_f64, double)

static void *sgld_slice(void *arg) {
  const sgld_job_t *J = (const sgld_job_t *)arg;
  float z[NB * BLK] __attribute__((aligned(64)));
  int64_t lo = 0, hi = J->n;
  while (lo < hi) { /* first tensor whose range ends after `begin` */
    int64_t mid = (lo + hi) / 2;
    if (J->offs[mid + 1] <= J->begin) lo = mid + 1; else hi = mid;
  }
  for (int64_t k = lo; k < J->n && J->offs[k] < J->end; ++k) {
    int64_t a = J->begin > J->offs[k] ? J->begin : J->offs[k];
    int64_t b = J->end < J->offs[k + 1] ? J->end : J->offs[k + 1];
    if (b <= a) continue;
    if (J->is_double) sgld_f64(J, k, a, b, z); else sgld_f32(J, k, a, b, z);
  }
  return 0;
}

int ng_sgld_update(int is_double, int64_t n, void **w, void **g, const int64_t *offs,
                   double lr, double wd, double rescale, double clip, double sd,
                   uint64_t seed, int nthreads) {
  sgld_job_t jobs[64];
  pthread_t th[64];
  int64_t total = offs[n];
  if (nthreads < 1) nthreads = 1;
  if (total < (int64_t)nthreads * 65536) nthreads = (int)(total / 65536) + 1;
  if (nthreads > 64) nthreads = 64;
  int64_t chunk = (total + nthreads - 1) / nthreads;
  chunk = (chunk + BLK - 1) / BLK * BLK;
  for (int t = 0; t < nthreads; ++t) {
    sgld_job_t *J = &jobs[t];
    J->is_double = is_double; J->n = n; J->w = w; J->g = g; J->offs = offs;
    J->lr = lr; J->wd = wd; J->rescale = rescale; J->clip = clip; J->sd = sd; J->seed = seed;
    J->begin = (int64_t)t * chunk < total ? (int64_t)t * chunk : total;
    J->end = (int64_t)(t + 1) * chunk < total ? (int64_t)(t + 1) * chunk : total;
  }
  int started = 0;
  for (int t = 1; t < nthreads; ++t) {
    if (pthread_create(&th[t], 0, sgld_slice, &jobs[t]) != 0) break;
    started = t;
  }
  sgld_slice(&jobs[0]);
  for (int t = started + 1; t < nthreads; ++t) sgld_slice(&jobs[t]); /* not started */
  for (int t = 1; t <= started; ++t) pthread_join(th[t], 0);
  return 0;
}
'''
