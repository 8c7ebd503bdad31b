"""SGLD's fused CPU kernel: Gaussian noise drawn inside the update loop, one pass, no buffer.

Drawing 25 M Gaussian numbers with torch's generator and then adding them costs several times
the update itself. Here every weight's noise is computed where it is used:

* the random bits come from ARS-7, the AES-round counter-based generator of Salmon et al.,
  "Parallel random numbers: as easy as 1, 2, 3" (SC 2011; ``ars4x32`` in Random123), keyed by
  a 64-bit seed drawn once per kernel call from neogluon's seeded CPU generator and indexed
  by the element's position in the call's tensor list, so a value never depends on the
  number of threads or on how the range is split between them. AES rounds are one
  instruction on x86 CPUs with AES-NI (two blocks at once with VAES), which makes ARS several
  times cheaper than Philox there; builds without AES instructions compute the same rounds
  in software;
* the standard normals come from the Box-Muller transform computed in float32 with its own
  vectorisable logarithm, square root, sine and cosine (IEEE operations only, no fast-math;
  fused multiply-adds where the build targets a CPU with FMA).

Layout: element ``e`` of a call lies in block ``b = e // 64`` (16 counters, ``16*b`` to
``16*b + 15``, a 64-bit number in the first two counter words, the other two zero). The
block's 64 words ``x`` are the counters' four words in order; with ``j = (e % 64) % 32``,
words ``x[j]`` (radius) and ``x[32 + j]`` (angle) make one Box-Muller pair, whose cosine is
element ``64*b + j`` and sine element ``64*b + 32 + j``.

The library is compiled like :mod:`._ckernels` (same compiler, cache directory and switch
``NEOGLUON_OPTIMIZER_KERNELS=0``); without it SGLD draws its noise with torch.
"""
from __future__ import annotations

import ctypes

import torch

from .. import _cbuild
from . import _ckernels as ck

# test builds besides the native one: no -march (software AES rounds) and plain AES-NI
_VARIANT_FLAGS = {False: [], "aesni": ["-maes", "-msse4.1"]}


def _build(native=True):
    if native is True:
        # AES-NI / VAES rounds when the machine has them; the cache key holds the CPU's flags
        flag_sets = [ck._FLAGS + ["-march=native"], ck._FLAGS]
    else:
        flag_sets = [ck._FLAGS + _VARIANT_FLAGS[native]]
    tag = {True: "native", False: "portable"}.get(native, native)
    lib = _cbuild.build("sgld_kernels", SOURCE, flag_sets, "SGLD kernel", tag=tag)
    vp, i64, dbl = ctypes.c_void_p, ctypes.c_int64, ctypes.c_double
    lib.ng_sgld_update.argtypes = [ctypes.c_int, i64, vp, vp, vp, dbl, dbl, dbl, dbl, dbl,
                                   ctypes.c_uint64, ctypes.c_int]
    lib.ng_sgld_update.restype = ctypes.c_int
    lib.ng_normal_fill.argtypes = [ctypes.c_uint64, i64, i64, vp]
    lib.ng_normal_fill.restype = None
    lib.ng_ars4x32.argtypes = [vp, vp, ctypes.c_int, ctypes.c_int, vp]
    lib.ng_ars4x32.restype = None
    lib.ng_ars_words.argtypes = [ctypes.c_uint64, ctypes.c_uint64, i64, vp]
    lib.ng_ars_words.restype = None
    lib.ng_simd_width.argtypes = []
    lib.ng_simd_width.restype = ctypes.c_int
    return lib


_LIBS = {v: _cbuild.LazyLibrary(lambda v=v: _build(v),
                                "SGLD kernel unavailable, using torch's generator")
         for v in (True, False, "aesni")}


def library(native=True):
    """The loaded SGLD library, or None when it cannot be built here. For tests:
    ``native=False`` is the build without ``-march=native`` (AES rounds in software),
    ``native="aesni"`` the one with plain AES-NI (one block a register, x86 only)."""
    return _LIBS[native].get()


def usable(ws, gs):
    """Whether the fused kernel can update these lists (CPU, float32/64, contiguous)."""
    return ck._LIB.enabled and ck.lists_fit(ws, gs) and library() is not None


def draw_seed(generator):
    """A 64-bit ARS key from a torch CPU generator (one per kernel call)."""
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


def ars_words(seed, first, count, native=True):
    """The noise generator's words for counters ``first .. first+count``: a (count, 4)
    uint32 array (ARS-7, key = the 64-bit seed in words 0-1)."""
    import numpy as np
    out = np.empty((count, 4), dtype=np.uint32)
    library(native).ng_ars_words(seed & (2 ** 64 - 1), first, count, out.ctypes.data)
    return out


def ars4x32(counter, key, rounds=7, software=False, native=True):
    """One ARS-``rounds`` block: four 32-bit words from a 4-word counter and 4-word key
    (``software=True``: the table-driven AES round the portable build uses)."""
    if not 1 <= rounds <= 15:
        raise ValueError(f"ARS rounds must be in 1..15, got {rounds}")
    c = (ctypes.c_uint32 * 4)(*counter)
    k = (ctypes.c_uint32 * 4)(*key)
    o = (ctypes.c_uint32 * 4)()
    library(native).ng_ars4x32(ctypes.addressof(c), ctypes.addressof(k), int(rounds),
                               int(bool(software)), ctypes.addressof(o))
    return tuple(o)


SOURCE = _cbuild.PARALLEL_C + r'''
/* neogluon: SGLD update with in-kernel Gaussian noise (see _rng_kernels.py). */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#if defined(__AES__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#define BLK 64           /* normals per block: 16 ARS counters */
#define NB 4             /* blocks generated per batch (the batch stays in L1) */

/* ARS-R (Salmon et al. 2011, "ARS" in Random123): a counter-based generator built on the AES
   round function. Block = counter XOR key; then R-1 rounds of aesenc and one aesenclast, the
   round key being the previous one plus the Weyl constant (two 64-bit additions). 128-bit
   values here are four little-endian 32-bit words, word 0 lowest, as in x86 registers. */
#define ARS_W0 0x9E3779B97F4A7C15ull /* added to words 0-1 */
#define ARS_W1 0xBB67AE8584CAA73Bull /* added to words 2-3 */
#define ARS_R 7 /* rounds in the noise generator (Random123 finds 5 Crush-resistant) */

static void ars_round_keys(uint64_t klo, uint64_t khi, int rounds, uint64_t rk[][2]) {
  for (int r = 0; r <= rounds; ++r) {
    rk[r][0] = klo; rk[r][1] = khi;
    klo += ARS_W0; khi += ARS_W1;
  }
}

/* The AES round in software (tables built once): the portable build, and the reference the
   tests hold the hardware path to. */
static uint32_t TE[4][256];
static uint8_t SBOX[256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static uint8_t gmul(uint8_t a, uint8_t b) {
  uint8_t p = 0;
  while (b) {
    if (b & 1) p ^= a;
    a = (uint8_t)((a << 1) ^ ((a & 0x80) ? 0x1b : 0));
    b >>= 1;
  }
  return p;
}

static void build_tables(void) {
  for (int x = 0; x < 256; ++x) {
    uint8_t inv = 0;
    if (x)
      for (int y = 1; y < 256; ++y)
        if (gmul((uint8_t)x, (uint8_t)y) == 1) { inv = (uint8_t)y; break; }
    uint8_t s = inv, t = inv;
    for (int i = 0; i < 4; ++i) { t = (uint8_t)((t << 1) | (t >> 7)); s ^= t; }
    SBOX[x] = s ^ 0x63;
  }
  for (int x = 0; x < 256; ++x) {
    uint8_t s = SBOX[x];
    uint32_t w = (uint32_t)gmul(s, 2) | ((uint32_t)s << 8) | ((uint32_t)s << 16) |
                 ((uint32_t)gmul(s, 3) << 24);
    for (int i = 0; i < 4; ++i) TE[i][x] = i ? (w << (8 * i)) | (w >> (32 - 8 * i)) : w;
  }
}

/* aesenc (last = 0: ShiftRows, SubBytes, MixColumns, then the round key) or aesenclast
   (no MixColumns) on v, in place */
static inline void aes_round_sw(uint32_t v[4], const uint32_t k[4], int last) {
  uint32_t o[4];
  for (int c = 0; c < 4; ++c) {
    uint8_t a0 = (uint8_t)v[c], a1 = (uint8_t)(v[(c + 1) & 3] >> 8),
            a2 = (uint8_t)(v[(c + 2) & 3] >> 16), a3 = (uint8_t)(v[(c + 3) & 3] >> 24);
    if (last)
      o[c] = (uint32_t)SBOX[a0] | ((uint32_t)SBOX[a1] << 8) | ((uint32_t)SBOX[a2] << 16) |
             ((uint32_t)SBOX[a3] << 24);
    else
      o[c] = TE[0][a0] ^ TE[1][a1] ^ TE[2][a2] ^ TE[3][a3];
  }
  for (int c = 0; c < 4; ++c) v[c] = o[c] ^ k[c];
}

static void ars_sw(const uint32_t ctr[4], uint64_t rk[][2], int rounds, uint32_t out[4]) {
  uint32_t k[4], v[4];
  for (int c = 0; c < 4; ++c) {
    k[c] = (uint32_t)(rk[0][c >> 1] >> (32 * (c & 1)));
    v[c] = ctr[c] ^ k[c];
  }
  for (int r = 1; r <= rounds; ++r) {
    for (int c = 0; c < 4; ++c) k[c] = (uint32_t)(rk[r][c >> 1] >> (32 * (c & 1)));
    aes_round_sw(v, k, r == rounds);
  }
  memcpy(out, v, 16);
}

/* w[4i .. 4i+4) = ARS-7 of counter c0 + i (a 64-bit number in words 0-1), i < nc */
static void ars_words(uint64_t c0, int nc, uint64_t rk[][2], uint32_t *w) {
  int i = 0;
#if defined(__AES__)
  __m128i K[ARS_R + 1];
  for (int r = 0; r <= ARS_R; ++r) K[r] = _mm_set_epi64x((long long)rk[r][1], (long long)rk[r][0]);
#if defined(__VAES__) && defined(__AVX2__)
  __m256i K2[ARS_R + 1];
  for (int r = 0; r <= ARS_R; ++r) K2[r] = _mm256_broadcastsi128_si256(K[r]);
  const __m256i two = _mm256_set_epi64x(0, 2, 0, 2);
  for (; i + 16 <= nc; i += 16) { /* eight registers of two blocks hide aesenc's latency */
    __m256i v[8];
    __m256i c = _mm256_set_epi64x(0, (long long)(c0 + i + 1), 0, (long long)(c0 + i));
    for (int q = 0; q < 8; ++q) {
      v[q] = _mm256_xor_si256(c, K2[0]);
      c = _mm256_add_epi64(c, two);
    }
    for (int r = 1; r < ARS_R; ++r)
      for (int q = 0; q < 8; ++q) v[q] = _mm256_aesenc_epi128(v[q], K2[r]);
    for (int q = 0; q < 8; ++q)
      _mm256_storeu_si256((__m256i *)(w + 4 * i + 8 * q),
                          _mm256_aesenclast_epi128(v[q], K2[ARS_R]));
  }
#endif
  for (; i + 8 <= nc; i += 8) {
    __m128i v[8];
    for (int q = 0; q < 8; ++q)
      v[q] = _mm_xor_si128(_mm_set_epi64x(0, (long long)(c0 + i + q)), K[0]);
    for (int r = 1; r < ARS_R; ++r)
      for (int q = 0; q < 8; ++q) v[q] = _mm_aesenc_si128(v[q], K[r]);
    for (int q = 0; q < 8; ++q)
      _mm_storeu_si128((__m128i *)(w + 4 * (i + q)), _mm_aesenclast_si128(v[q], K[ARS_R]));
  }
  for (; i < nc; ++i) {
    __m128i v = _mm_xor_si128(_mm_set_epi64x(0, (long long)(c0 + i)), K[0]);
    for (int r = 1; r < ARS_R; ++r) v = _mm_aesenc_si128(v, K[r]);
    _mm_storeu_si128((__m128i *)(w + 4 * i), _mm_aesenclast_si128(v, K[ARS_R]));
  }
#else
  pthread_once(&tables_once, build_tables);
  for (; i < nc; ++i) {
    uint64_t c = c0 + (uint64_t)i;
    uint32_t ctr[4] = {(uint32_t)c, (uint32_t)(c >> 32), 0, 0};
    ars_sw(ctr, rk, ARS_R, w + 4 * i);
  }
#endif
}

/* Box-Muller: two independent N(0, 1) from two 32-bit words, in float32 IEEE operations only
   (no libm vector calls, no fast-math).
   Radius: r = sqrt(-2 ln u), u = (floor(a/2) + 1/2) 2^-31 in (0, 1], so the tails reach
   6.66 sigma. v = u 2^31 = m 2^k with m in [sqrt(1/2), sqrt(2)), k and m taken from v's bits
   by subtracting sqrt(1/2)'s bit pattern (no compare): -2 ln u = -2 ln2 (k - 31) - 4 atanh(s),
   s = (m-1)/(m+1), |s| <= 0.172; 4 atanh(s) / s is a degree-3 polynomial in s^2 (minimax,
   relative error < 1e-9; m - 1 is exact, so small radii keep their relative accuracy).
   Angle: phi = (pi/4) f with f the low 29 bits of b over 2^29, in [0, pi/4), where sin and cos
   are polynomials in f^2 (minimax, relative error < 1e-10: degree 3 for sin/f, 4 for cos).
   The top three bits of b, independent of f, move (cos phi, sin phi) into one of the eight
   octants by the symmetries of the square: bit 29 swaps the two, bit 30 negates the cosine
   output, bit 31 the sine output. Each of the eight maps carries [0, pi/4) onto its own
   octant, so theta is uniform on the circle. */
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
  int32_t t = bits - 0x3f3504f3;                 /* sqrt(1/2) */
  int32_t mb = bits - (t & (int32_t)0xff800000); /* v = m 2^(t >> 23) */
  float m;
  memcpy(&m, &mb, 4);
  float s = (m - 1.0f) / (m + 1.0f), z = s * s;
  float p = MADD(z, MADD(z, MADD(z, -0.598509184f, -0.799496095f), -1.33333632f),
                 -3.99999999725f);
  float r = sqrtf(MADD((float)((t >> 23) - 31), -1.38629436112f, s * p));

  float f = (float)(int32_t)(b & 0x1fffffffu) * 0x1p-29f, f2 = f * f;
  float sn = f * MADD(f2, MADD(f2, MADD(f2, -3.59505366e-05f, 0.00249000117f),
                               -0.0807454326f), 0.785398161f);
  float cs = MADD(f2, MADD(f2, MADD(f2, MADD(f2, 3.52876675e-06f, -0.000325936512f),
                                    0.0158543239f), -0.308425135f), 1.0f);
  int swap = (b >> 29) & 1;
  float c = swap ? sn : cs, q = swap ? cs : sn;
  uint32_t cb, qb; /* signs by XOR: no compare, no blend */
  memcpy(&cb, &c, 4);
  memcpy(&qb, &q, 4);
  cb ^= (b << 1) & 0x80000000u;
  qb ^= b & 0x80000000u;
  memcpy(&c, &cb, 4);
  memcpy(&q, &qb, 4);
  *z0 = r * c;
  *z1 = r * q;
}

/* z[0 .. 64*nb) = the normals of blocks blk .. blk+nb (nb <= NB): position e takes words
   2p, 2p+1 (p = (e >> 1) & 1) of counter e >> 2; even e the cosine, odd e the sine */
static void normals_batch(uint64_t blk, int nb, uint64_t rk[][2], float *z) {
  uint32_t x[NB * BLK] __attribute__((aligned(32)));
  ars_words(blk * (BLK / 4), nb * (BLK / 4), rk, x);
  for (int b = 0; b < nb; ++b) {
    const uint32_t *xb = x + BLK * b;
    float *zb = z + BLK * b;
    for (int j = 0; j < BLK / 2; ++j)
      box_muller(xb[j], xb[BLK / 2 + j], &zb[j], &zb[BLK / 2 + j]);
  }
}

/* one ARS block of any round count (software = 1: the table-driven rounds even where the
   build has AES instructions) */
void ng_ars4x32(const uint32_t *ctr, const uint32_t *key, int rounds, int software,
                uint32_t *out) {
  uint64_t rk[16][2];
  if (rounds < 1 || rounds > 15) return;
  ars_round_keys(key[0] | ((uint64_t)key[1] << 32), key[2] | ((uint64_t)key[3] << 32), rounds,
                 rk);
  if (software || rounds != ARS_R || ctr[2] || ctr[3]) {
    pthread_once(&tables_once, build_tables);
    ars_sw(ctr, rk, rounds, out);
  } else {
    ars_words(ctr[0] | ((uint64_t)ctr[1] << 32), 1, rk, out);
  }
}

/* out[4i .. 4i+4) = the ARS-7 words of counter c0 + i under the noise key for seed, i < nc */
void ng_ars_words(uint64_t seed, uint64_t c0, int64_t nc, uint32_t *out) {
  uint64_t rk[ARS_R + 1][2];
  ars_round_keys(seed, 0, ARS_R, rk);
  for (int64_t i = 0; i < nc; i += 1 << 20) {
    int64_t m = nc - i < (1 << 20) ? nc - i : (1 << 20);
    ars_words(c0 + (uint64_t)i, (int)m, rk, out + 4 * i);
  }
}

/* which ARS path this build has: 2 = VAES (two blocks a register), 1 = AES-NI, 0 = software */
int ng_simd_width(void) {
#if defined(__VAES__) && defined(__AVX2__)
  return 2;
#elif defined(__AES__)
  return 1;
#else
  return 0;
#endif
}

/* out[i] = the normal of position start + i */
void ng_normal_fill(uint64_t seed, int64_t start, int64_t n, float *out) {
  float z[NB * BLK];
  uint64_t rk[ARS_R + 1][2];
  ars_round_keys(seed, 0, ARS_R, rk);
  int64_t end = start + n;
  for (int64_t cs = start - start % BLK; cs < end; cs += NB * BLK) {
    int64_t ce = cs + NB * BLK < end ? cs + NB * BLK : end;
    int nb = (int)((ce - cs + BLK - 1) / BLK);
    normals_batch((uint64_t)cs / BLK, nb, rk, z);
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
    uint64_t rk[ARS_R + 1][2];                                                                 \
    ars_round_keys(J->seed, 0, ARS_R, rk);                                                     \
    for (int64_t cs = a - a % BLK; cs < b; cs += NB * BLK) {                                   \
      int64_t ce = cs + NB * BLK < b ? cs + NB * BLK : b;                                      \
      normals_batch((uint64_t)cs / BLK, (int)((ce - cs + BLK - 1) / BLK), rk, z);               \
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
  ng_run_parallel(sgld_slice, jobs, sizeof(sgld_job_t), nthreads);
  return 0;
}
'''
