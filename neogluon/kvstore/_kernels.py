"""Compiled CPU kernels for the store: one source copied into several outputs, and the
two-context sum written back to both sources.

Copying the stored value into each context's array is pure memory traffic. torch's copy
writes through the cache, so every destination line is first read (read-for-ownership):
copying one source into two outputs moves six array sizes. This kernel reads the source once
and writes all outputs with streaming (non-temporal) stores, moving three, which halves the
time of the pull on ResNet-50-sized parameter sets. Values are copied bit for bit.

The C source is compiled once per machine with the system compiler (``$CC`` or ``cc``) into
``$NEOGLUON_CACHE_DIR`` (default ``~/.cache/neogluon``), written atomically, and loaded with
ctypes. Without a compiler, on tensors that are not float32 CPU tensors, or with
``NEOGLUON_KVSTORE_KERNELS=0``, the store uses torch's copy (same values).
"""
from __future__ import annotations

import ctypes

import torch

from .. import _cbuild

_SOURCE = _cbuild.PARALLEL_C + r"""
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#if defined(__x86_64__)
#include <immintrin.h>
#define NG_SSE 1
#endif

/* One job: copy src[0:n] into the n_out arrays dst[0..n_out). Jobs are split by element
   ranges over up to nthreads POSIX threads. */
typedef struct { const float* src; float** dst; int64_t n; } job_t;
typedef struct { const job_t* jobs; int64_t njobs; int n_out; int64_t lo, hi; } part_t;

/* The thread count for n elements (one thread below 64 Ki elements a thread, at most 64)
   and each thread's share, a multiple of 16 elements. */
static int split(int64_t n, int nthreads, int64_t* per) {
    if (nthreads < 1) nthreads = 1;
    if (n < ((int64_t)1 << 16) * nthreads) nthreads = 1;
    if (nthreads > 64) nthreads = 64;
    *per = ((n + nthreads - 1) / nthreads + 15) & ~(int64_t)15;
    return nthreads;
}

static void copy_range(const float* s, float** d, int n_out, int64_t lo, int64_t hi) {
    int64_t i = lo;
#ifdef NG_SSE
    int aligned = 1;
    for (int k = 1; k < n_out; ++k)
        if ((((uintptr_t)d[k]) & 15) != (((uintptr_t)d[0]) & 15)) aligned = 0;
    if (aligned) {
        while (i < hi && (((uintptr_t)(d[0] + i)) & 15)) {
            for (int k = 0; k < n_out; ++k) d[k][i] = s[i];
            ++i;
        }
        for (; i + 4 <= hi; i += 4) {
            __m128 x = _mm_loadu_ps(s + i);
            for (int k = 0; k < n_out; ++k) _mm_stream_ps(d[k] + i, x);
        }
        _mm_sfence();
    }
#endif
    for (; i < hi; ++i)
        for (int k = 0; k < n_out; ++k) d[k][i] = s[i];
}

static void* run_part(void* arg) {
    const part_t* p = (const part_t*)arg;
    int64_t base = 0;
    for (int64_t j = 0; j < p->njobs && base < p->hi; ++j) {
        int64_t n = p->jobs[j].n;
        int64_t lo = p->lo > base ? p->lo - base : 0;
        int64_t hi = p->hi < base + n ? p->hi - base : n;
        if (lo < hi) copy_range(p->jobs[j].src, p->jobs[j].dst, p->n_out, lo, hi);
        base += n;
    }
    return NULL;
}

int ng_copy_multi(const float** srcs, float** dsts, const int64_t* sizes, int64_t njobs,
                  int n_out, int nthreads) {
    job_t* jobs = (job_t*)malloc(sizeof(job_t) * (size_t)(njobs > 0 ? njobs : 1));
    if (jobs == NULL) return -1;
    int64_t total = 0;
    for (int64_t j = 0; j < njobs; ++j) {
        jobs[j].src = srcs[j];
        jobs[j].dst = dsts + j * n_out;
        jobs[j].n = sizes[j];
        total += sizes[j];
    }
    int64_t per;
    nthreads = split(total, nthreads, &per);
    part_t parts[64];
    for (int t = 0; t < nthreads; ++t) {
        parts[t].jobs = jobs; parts[t].njobs = njobs; parts[t].n_out = n_out;
        parts[t].lo = per * t; parts[t].hi = per * (t + 1) < total ? per * (t + 1) : total;
    }
    ng_run_parallel(run_part, parts, sizeof parts[0], nthreads);
    free(jobs);
    return 0;
}

/* o = a + b, then a = b = o, in one pass (a store's two-context push-pull in place): reads
   two arrays and writes three, where a sum followed by a copy into both moves seven or more.
   o gets streaming stores (a fresh buffer: no read-for-ownership); a and b were just read,
   so plain stores hit the cache. */
typedef struct { float *a, *b, *o; int64_t lo, hi; } sum2_t;

static void* sum2_part(void* arg) {
    const sum2_t* p = (const sum2_t*)arg;
    float *a = p->a, *b = p->b, *o = p->o;
    int64_t i = p->lo;
#ifdef NG_SSE
    while (i < p->hi && (((uintptr_t)(o + i)) & 15)) {
        float x = a[i] + b[i];
        o[i] = x; a[i] = x; b[i] = x;
        ++i;
    }
    for (; i + 4 <= p->hi; i += 4) {
        __m128 x = _mm_add_ps(_mm_loadu_ps(a + i), _mm_loadu_ps(b + i));
        _mm_stream_ps(o + i, x);
        _mm_storeu_ps(a + i, x);
        _mm_storeu_ps(b + i, x);
    }
    _mm_sfence();
#endif
    for (; i < p->hi; ++i) {
        float x = a[i] + b[i];
        o[i] = x; a[i] = x; b[i] = x;
    }
    return NULL;
}

void ng_sum2_bcast(float* a, float* b, float* o, int64_t n, int nthreads) {
    int64_t per;
    nthreads = split(n, nthreads, &per);
    sum2_t parts[64];
    for (int t = 0; t < nthreads; ++t) {
        parts[t].a = a; parts[t].b = b; parts[t].o = o;
        parts[t].lo = per * t < n ? per * t : n;
        parts[t].hi = per * (t + 1) < n ? per * (t + 1) : n;
    }
    ng_run_parallel(sum2_part, parts, sizeof parts[0], nthreads);
}
"""

def _build():
    lib = _cbuild.build("kvstore_copy", _SOURCE, [["-O2", "-fPIC", "-shared", "-pthread"]],
                        "KVStore copy kernel")
    fn = lib.ng_copy_multi
    fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p),
                   ctypes.POINTER(ctypes.c_int64), ctypes.c_int64, ctypes.c_int,
                   ctypes.c_int]
    fn.restype = ctypes.c_int
    f2 = lib.ng_sum2_bcast
    f2.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                   ctypes.c_int]
    f2.restype = None
    return lib


# no compiler or cache folder: quietly use torch's copy
_LIB = _cbuild.LazyLibrary(_build, switch="NEOGLUON_KVSTORE_KERNELS")
_library = _LIB.get
set_enabled = _LIB.set_enabled  # turn the kernel on or off; returns the old setting


def _fits(t):
    return t.dtype is torch.float32 and t.device.type == "cpu" and t.is_contiguous()


def copy_multi(pairs):
    """Copy each ``src`` into all of its ``dsts``: ``pairs`` is a list of ``(src, [dst, ...])``
    with the same number of destinations each. Returns the pairs it could not handle."""
    if not _LIB.enabled or not pairs:
        return pairs
    lib = _library()
    if lib is None:
        return pairs
    n_out = len(pairs[0][1])
    done, rest = [], []
    for src, dsts in pairs:
        if (len(dsts) == n_out and _fits(src) and all(_fits(d) and d.numel() == src.numel()
                                                       for d in dsts)
                and all(d.data_ptr() != src.data_ptr() for d in dsts)):
            done.append((src, dsts))
        else:
            rest.append((src, dsts))
    if done:
        m = len(done)
        srcs = (ctypes.c_void_p * m)(*[s.data_ptr() for s, _ in done])
        dsts = (ctypes.c_void_p * (m * n_out))(*[d.data_ptr() for _, ds in done for d in ds])
        sizes = (ctypes.c_int64 * m)(*[s.numel() for s, _ in done])
        if lib.ng_copy_multi(srcs, dsts, sizes, m, n_out, max(1, torch.get_num_threads())):
            return pairs  # out of memory for the job table: let torch copy everything
    return rest


def sum2_bcast(out, a, b):
    """``out = a + b`` and then ``a[:] = b[:] = out``, in one pass (float32 CPU, contiguous,
    equal sizes, no overlap). Returns False, touching nothing, when it cannot."""
    if not _LIB.enabled:
        return False
    ts = (out, a, b)
    if not all(_fits(t) for t in ts) or not (out.numel() == a.numel() == b.numel()):
        return False
    spans = sorted((t.data_ptr(), t.data_ptr() + 4 * t.numel()) for t in ts)
    if spans[0][1] > spans[1][0] or spans[1][1] > spans[2][0]:
        return False
    lib = _library()
    if lib is None:
        return False
    lib.ng_sum2_bcast(a.data_ptr(), b.data_ptr(), out.data_ptr(), out.numel(),
                      max(1, torch.get_num_threads()))
    return True

