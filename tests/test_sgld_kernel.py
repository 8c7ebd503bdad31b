"""SGLD: the noise MXNet's SGLD draws (``nd.random.normal``'s, by default) and the fused CPU
kernel with in-kernel noise (``fast_noise=True``, neogluon/optimizer/_rng_kernels.py).

* the deterministic part of the update against MXNet 1.9.1 with its noise taken out
  (tools/gen_sgld_fixtures.py), on the kernel path and on the torch path;
* the generator: ARS (AES rounds) against Random123's published known-answer vectors, the
  hardware paths (VAES, AES-NI) against the software rounds word for word, and the normals
  against a float64 Box-Muller written here from words of a numpy ARS;
* the noise is a standard normal (moments, Kolmogorov-Smirnov), independent between
  neighbouring elements and between steps, the same with any thread count and in the
  portable build, and repeats under ``mx.random.seed``.
"""
import json
import math
import os

import numpy as np
import pytest
import torch
from scipy import stats

import neogluon as mx
from neogluon.optimizer import _ckernels, _rng_kernels as rk
from neogluon.optimizer import sgd as sgd_mod

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "sgld")
with open(os.path.join(HERE, "sgld.json")) as f:
    SCENARIOS = json.load(f)
DATA = dict(np.load(os.path.join(HERE, "sgld.npz")))

needs_kernel = pytest.mark.skipif(not _ckernels._LIB.enabled or rk.library() is None,
                                  reason="no C compiler, or NEOGLUON_OPTIMIZER_KERNELS=0")


class FakeParam:
    def __init__(self, lr_mult, wd_mult):
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult


# ----------------------------------------------------------------------------- reference
def _gmul(a, b):
    p = 0
    while b:
        if b & 1:
            p ^= a
        a = ((a << 1) ^ (0x1B if a & 0x80 else 0)) & 0xFF
        b >>= 1
    return p


def _aes_tables():
    inv = [0] * 256
    for x in range(1, 256):
        inv[x] = next(y for y in range(1, 256) if _gmul(x, y) == 1)
    sbox = []
    for x in range(256):
        s = t = inv[x]
        for _ in range(4):
            t = ((t << 1) | (t >> 7)) & 0xFF
            s ^= t
        sbox.append(s ^ 0x63)
    te0 = [_gmul(s, 2) | s << 8 | s << 16 | _gmul(s, 3) << 24 for s in sbox]
    te = [np.array([((w << 8 * i) | (w >> (32 - 8 * i))) & 0xFFFFFFFF for w in te0],
                   dtype=np.uint32) for i in range(4)]
    return np.array(sbox, dtype=np.uint32), te


SBOX, TE = _aes_tables()
U64 = 2 ** 64


def ars_np(ctr, key, rounds):
    """ARS-``rounds`` (Salmon et al. 2011) on numpy arrays of 32-bit words: the counter XOR
    the key, then AES rounds (the last without MixColumns), each round key the previous one
    plus the Weyl constants as two 64-bit numbers."""
    c = [np.asarray(w, dtype=np.uint32) for w in ctr]
    klo, khi = key[0] | key[1] << 32, key[2] | key[3] << 32
    v = [c[i] ^ np.uint32((klo, khi)[i >> 1] >> 32 * (i & 1) & 0xFFFFFFFF) for i in range(4)]
    for r in range(1, rounds + 1):
        klo, khi = (klo + 0x9E3779B97F4A7C15) % U64, (khi + 0xBB67AE8584CAA73B) % U64
        k = [np.uint32((klo, khi)[i >> 1] >> 32 * (i & 1) & 0xFFFFFFFF) for i in range(4)]
        b = [[(v[(col + row) & 3] >> np.uint32(8 * row)) & np.uint32(0xFF) for row in range(4)]
             for col in range(4)]
        if r < rounds:
            v = [TE[0][b[col][0]] ^ TE[1][b[col][1]] ^ TE[2][b[col][2]] ^ TE[3][b[col][3]] ^
                 k[col] for col in range(4)]
        else:
            v = [(SBOX[b[col][0]] | SBOX[b[col][1]] << np.uint32(8) |
                  SBOX[b[col][2]] << np.uint32(16) | SBOX[b[col][3]] << np.uint32(24)) ^ k[col]
                 for col in range(4)]
    return v


def noise_words(seed, n_counters):
    """The kernel's ARS-7 words for counters 0 .. n_counters, as one flat uint32 array."""
    ctr = np.arange(n_counters, dtype=np.uint64)
    zero = np.zeros(n_counters, dtype=np.uint32)
    w = ars_np(((ctr & np.uint64(0xFFFFFFFF)).astype(np.uint32),
                (ctr >> np.uint64(32)).astype(np.uint32), zero, zero),
               (seed & 0xFFFFFFFF, seed >> 32, 0, 0), 7)
    return np.stack(w, axis=1).ravel()


def normals_reference(seed, n):
    """The kernel's layout (see _rng_kernels) with a float64 Box-Muller."""
    e = np.arange(n)
    blk, o = e // 64, e % 64
    j = o % 32
    x = noise_words(seed, 16 * (blk[-1] + 1)).astype(np.float64)
    a, b = x[64 * blk + j], x[64 * blk + 32 + j]
    # the uniforms as the kernel quantises them to float32; the rest in float64
    u = (np.floor(a / 2).astype(np.float32) * np.float32(2.0 ** -31) +
         np.float32(2.0 ** -32)).astype(np.float64)
    r = np.sqrt(-2 * np.log(u))
    # the angle's fraction from the low 29 bits, made float32; the top three bits swap
    # (bit 29) and negate (bit 30: the cosine output, bit 31: the sine output)
    bi = b.astype(np.uint64)
    f = ((bi % 2 ** 29).astype(np.float32) * np.float32(2.0 ** -29)).astype(np.float64)
    cs, sn = np.cos(np.pi / 4 * f), np.sin(np.pi / 4 * f)
    swap = (bi >> np.uint64(29)) & np.uint64(1) == 1
    c, s = np.where(swap, sn, cs), np.where(swap, cs, sn)
    c = np.where((bi >> np.uint64(30)) & np.uint64(1) == 1, -c, c)
    s = np.where(bi >> np.uint64(31) == 1, -s, s)
    return np.where(o < 32, r * c, r * s)


# Random123 tests/kat_vectors, "ars4x32 10" lines (counter, key, result)
ARS10_KAT = [
    ((0, 0, 0, 0), (0, 0, 0, 0), (0x8D73EE19, 0x506401EF, 0x13C2DBE4, 0x0CBE9C0D)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
     (0xA4093822, 0x299F31D0, 0x082EFA98, 0xEC4E6C89),
     (0xA516E7D6, 0x8357AD74, 0x5B59B3EC, 0x8763FFF3)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF, 0xFFFFFFFF, 0, 0),
     (0xBB3743B1, 0x9F635551, 0xECBC87FC, 0xA19478A9))]


@needs_kernel
@pytest.mark.parametrize("ctr, key, want", ARS10_KAT)
def test_ars_known_answers(ctr, key, want):
    assert rk.ars4x32(ctr, key, rounds=10, software=True) == want
    assert tuple(int(w[0]) for w in ars_np([[c] for c in ctr], key, 10)) == want


def _build_or_skip(variant):
    lib = rk.library(variant)
    if lib is None:
        pytest.skip(f"no {variant} build here")
    return lib


@needs_kernel
@pytest.mark.parametrize("variant, width", [(True, None), (False, 0), ("aesni", 1)])
def test_every_build_draws_the_same_words(variant, width):
    """The VAES, AES-NI and software rounds give the same words, in the batched loops and
    the single-block tail, across a 2^32 carry and the 2^64 wrap of the counter."""
    lib = _build_or_skip(variant)
    if width is not None:
        assert lib.ng_simd_width() == width
    rng = np.random.default_rng(0)
    for seed in (0, 0x0123456789ABCDEF, 2 ** 64 - 1):
        for first in (0, 2 ** 32 - 21, 2 ** 64 - 37):
            got = rk.ars_words(seed, first, 77, native=variant)
            ctr = (first + np.arange(77, dtype=object)) % U64
            want = ars_np((np.array([c & 0xFFFFFFFF for c in ctr], dtype=np.uint32),
                           np.array([c >> 32 for c in ctr], dtype=np.uint32),
                           np.zeros(77, np.uint32), np.zeros(77, np.uint32)),
                          (seed & 0xFFFFFFFF, seed >> 32, 0, 0), 7)
            np.testing.assert_array_equal(got, np.stack(want, axis=1))
    for _ in range(20):
        ctr = tuple(int(x) for x in rng.integers(0, 2 ** 32, 2)) + (0, 0)
        key = tuple(int(x) for x in rng.integers(0, 2 ** 32, 2)) + (0, 0)
        assert (rk.ars4x32(ctr, key, native=variant) ==
                rk.ars4x32(ctr, key, software=True, native=variant))


@needs_kernel
@pytest.mark.parametrize("seed", [0, 0x0123456789ABCDEF, 2 ** 64 - 1])
def test_normals_match_float64_box_muller(seed):
    n = 20000
    got = rk.normal_fill(seed, 0, n).double().numpy()
    want = normals_reference(seed, n)
    # float32 arithmetic: about 1e-7 relative, larger only where a float32 radius is rounded
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
    # any start position gives the same numbers as the whole range
    np.testing.assert_array_equal(rk.normal_fill(seed, 1234, 5000).numpy(),
                                  got[1234:6234].astype(np.float32))


@needs_kernel
@pytest.mark.parametrize("variant", [False, "aesni"])
def test_other_builds_draw_the_same_numbers(variant):
    """The builds without -march=native (software or AES-NI rounds, no FMA) are the same
    generator: equal words (above), normals equal to rounding (bit-equal where both builds
    have FMA or neither has)."""
    _build_or_skip(variant)
    for seed in (3, 2 ** 40 + 5):
        a = rk.normal_fill(seed, 17, 70000, native=variant).double().numpy()
        b = rk.normal_fill(seed, 17, 70000).double().numpy()
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(a, normals_reference(seed, 70017)[17:], rtol=2e-6,
                                   atol=2e-6)


# ----------------------------------------------------------------------------- the noise
SIZES = [1000003, 3, 64 * 1000 + 7, 129, 250000]  # odd sizes: blocks straddle tensors


def pure_noise(seed, dtype="float32", threads=None, lr=1.0, n_steps=1):
    """SGLD with w = 0, g = 0, lr = 1: the weights after a step are the noise itself."""
    old = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    try:
        mx.random.seed(seed)
        upd = mx.optimizer.get_updater(mx.optimizer.create("sgld", learning_rate=lr,
                                                           fast_noise=True))
        ws = [mx.nd.zeros((n,), dtype=dtype) for n in SIZES]
        gs = [mx.nd.zeros((n,), dtype=dtype) for n in SIZES]
        out = []
        for _ in range(n_steps):
            for w in ws:
                w[:] = 0
            upd(list(range(len(ws))), gs, ws)
            out.append(np.concatenate([w.asnumpy() for w in ws]))
        return out
    finally:
        torch.set_num_threads(old)


@needs_kernel
def test_noise_is_standard_normal():
    z = pure_noise(11)[0].astype(np.float64)
    n = z.size
    assert n > 1_300_000
    assert abs(z.mean()) < 5 / math.sqrt(n)
    assert abs(z.var() - 1) < 5 * math.sqrt(2 / n)
    assert abs(stats.skew(z)) < 5 * math.sqrt(6 / n)
    assert abs(stats.kurtosis(z)) < 5 * math.sqrt(24 / n)
    # seeded, so this is a fixed outcome; a wrong transform fails it by orders of magnitude
    assert stats.kstest(z, "norm").pvalue > 1e-3
    # tails: P(|z| > 4) = 6.33e-5
    assert abs((np.abs(z) > 4).mean() - 6.334e-5) < 5 * math.sqrt(6.334e-5 / n)
    # lr scales the standard deviation to sqrt(lr)
    z2 = pure_noise(11, lr=0.04)[0].astype(np.float64)
    np.testing.assert_allclose(z2, z * np.float32(0.2), rtol=1e-6, atol=1e-7)


@needs_kernel
def test_box_muller_pairs_have_uniform_angle_and_exponential_radius():
    """The two outputs of a pair (positions 64b + j and 64b + 32 + j) are a point whose angle
    is uniform on the circle, octant by octant, and whose squared radius is Exp(mean 2): the
    swap and sign bits place the [0, pi/4) arc on all eight octants alike."""
    z = rk.normal_fill(17, 0, 64 * 40000).double().numpy().reshape(-1, 64)
    c, s = z[:, :32].ravel(), z[:, 32:].ravel()
    theta = np.arctan2(s, c)
    assert stats.kstest(theta, "uniform", args=(-np.pi, 2 * np.pi)).pvalue > 1e-3
    assert stats.kstest(c * c + s * s, "expon", args=(0, 2)).pvalue > 1e-3
    octant = np.floor((theta + np.pi) / (np.pi / 4)).astype(int).clip(0, 7)
    counts = np.bincount(octant, minlength=8)
    expect = theta.size / 8
    assert np.all(np.abs(counts - expect) < 5 * math.sqrt(expect)), counts
    # within each octant the angle is uniform too (no arc folded onto another)
    for k in range(8):
        part = theta[octant == k] - (-np.pi + k * np.pi / 4)
        assert stats.kstest(part, "uniform", args=(0, np.pi / 4)).pvalue > 1e-3, k


@needs_kernel
def test_noise_is_independent_between_elements_and_steps():
    a, b = pure_noise(12, n_steps=2)
    a, b = a.astype(np.float64), b.astype(np.float64)
    lim = 5 / math.sqrt(a.size)
    # lag 32: the two outputs of one Box-Muller pair; 1-4, 8: words of one ARS block;
    # 64: the next block
    for lag in (1, 2, 3, 4, 8, 16, 31, 32, 33, 64, 1000):
        assert abs(np.corrcoef(a[:-lag], a[lag:])[0, 1]) < lim, lag
        assert abs(np.corrcoef(a[:-lag] ** 2, a[lag:] ** 2)[0, 1]) < lim, lag
    assert abs(np.corrcoef(a, b)[0, 1]) < lim
    assert abs(np.corrcoef(a ** 2, b ** 2)[0, 1]) < lim


@needs_kernel
def test_same_noise_with_any_thread_count():
    ref = pure_noise(13, threads=1)[0]
    for th in (2, 3, 7):
        np.testing.assert_array_equal(pure_noise(13, threads=th)[0], ref)


@needs_kernel
def test_seed_repeats_and_steps_differ():
    a1, a2 = pure_noise(21, n_steps=2)
    b1, b2 = pure_noise(21, n_steps=2)
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)
    assert not np.array_equal(a1, a2)
    assert (a1 == a2).mean() < 1e-4
    assert not np.array_equal(a1, pure_noise(22)[0])


@needs_kernel
def test_float64_widens_the_float32_draws():
    z32 = pure_noise(31)[0]
    z64 = pure_noise(31, dtype="float64")[0]
    assert z64.dtype == np.float64
    np.testing.assert_array_equal(z64, z32.astype(np.float64))


@needs_kernel
def test_one_kernel_call_per_list(monkeypatch):
    calls = []
    real = rk.sgld_update
    monkeypatch.setattr(rk, "sgld_update", lambda ws, *a: (calls.append(len(ws)),
                                                           real(ws, *a))[1])
    upd = mx.optimizer.get_updater(mx.optimizer.create("sgld", aggregate_num=64,
                                                       fast_noise=True))
    ws = [mx.nd.ones((5, 3)) for _ in range(40)]
    gs = [mx.nd.ones((5, 3)) * 0.1 for _ in range(40)]
    upd(list(range(40)), gs, ws)
    assert calls == [40]


# ----------------------------------------------------------------------------- vs MXNet
def run_against_mxnet(meta, mode, monkeypatch):
    """Each step starts from MXNet's weights; ours minus our recorded noise must equal
    MXNet's update minus its noise."""
    key, dt = meta["key"], meta["dtype"]
    n = len(meta["shapes"])
    kw = dict(meta["kwargs"], fast_noise=(mode == "kernels"))
    if meta["sched"]:
        kw["lr_scheduler"] = getattr(mx.lr_scheduler, meta["sched"]["kind"])(
            **meta["sched"]["kwargs"])
    params = {i: FakeParam(*m) for i, m in enumerate(meta["mults"])}
    opt = mx.optimizer.create("sgld", param_dict=params, **kw)
    upd = mx.optimizer.get_updater(opt)
    ws = [mx.nd.zeros(tuple(s), dtype=dt) for s in meta["shapes"]]
    noises = {}  # id(weight tensor) -> the noise added this step

    def rec_kernel(w, g, lr, wd, rescale, clip, std, seed):
        z = rk.normal_fill(seed, 0, sum(t.numel() for t in w)).numpy().astype(dt)
        off = 0
        for t in w:
            noises[t.data_ptr()] = (np.array(std, dt) * z[off:off + t.numel()]).reshape(
                t.shape)
            off += t.numel()
        return real_kernel(w, g, lr, wd, rescale, clip, std, seed)

    def rec_torch(self, w, std):
        out = real_noise(self, w, std)
        for t, z in zip(w, out):
            noises[t.data_ptr()] = z.numpy().copy()
        return out

    real_kernel, real_noise = rk.sgld_update, sgd_mod.SGLD._noise
    monkeypatch.setattr(rk, "sgld_update", rec_kernel)
    monkeypatch.setattr(sgd_mod.SGLD, "_noise", rec_torch)
    old = _ckernels.set_enabled(mode == "kernels")
    tol = dict(rtol=1e-5, atol=1e-6) if dt == "float32" else dict(rtol=1e-12, atol=1e-13)
    try:
        for step in range(meta["steps"]):
            for i in range(n):
                ws[i][:] = mx.nd.array(DATA[f"{key}/w{step}_{i}"], dtype=dt)
            gs = [mx.nd.array(DATA[f"{key}/g{step}_{i}"], dtype=dt) for i in range(n)]
            noises.clear()
            upd(list(range(n)), gs, ws)
            for i in range(n):
                np.testing.assert_array_equal(gs[i].asnumpy(), DATA[f"{key}/g{step}_{i}"])
                z = noises[ws[i]._t.data_ptr()]
                np.testing.assert_allclose(ws[i].asnumpy() - z, DATA[f"{key}/det{step}_{i}"],
                                           **tol, err_msg=f"{key} step {step} weight {i}")
    finally:
        _ckernels.set_enabled(old)
    assert opt.num_update == meta["num_update"]


@pytest.mark.filterwarnings("ignore:learning rate from")
@pytest.mark.parametrize("meta", SCENARIOS, ids=[m["key"] for m in SCENARIOS])
@pytest.mark.parametrize("mode", ["kernels", "torch"])
def test_matches_mxnet_without_noise(meta, mode, monkeypatch):
    if mode == "kernels" and rk.library() is None:
        pytest.skip("no C compiler")
    run_against_mxnet(meta, mode, monkeypatch)


def test_torch_path_for_float16_and_when_kernels_are_off():
    """float16 (no multi-precision) and a disabled kernel library use torch's generator;
    the kernel is never asked for lists it cannot take."""
    assert not rk.usable([torch.zeros(3, dtype=torch.float16)], [torch.zeros(3,
                                                                         dtype=torch.float16)])
    assert not rk.usable([torch.zeros(3)], [torch.zeros(3, dtype=torch.float64)])
    assert not rk.usable([torch.zeros(4, 4).t()], [torch.zeros(4, 4)])
    with pytest.warns(UserWarning):
        upd = mx.optimizer.get_updater(mx.optimizer.create("sgld", learning_rate=0.01))
        w = mx.nd.ones((400, 500), dtype="float16")
        upd(0, mx.nd.ones((400, 500), dtype="float16"), w)
    a = w.asnumpy().astype(np.float64)
    # 1 - lr/2 * 1 + N(0, 0.1)
    assert a.mean() == pytest.approx(1 - 0.005, abs=2e-3)
    assert a.std() == pytest.approx(0.1, rel=0.02)
    old = _ckernels.set_enabled(False)
    try:
        assert not rk.usable([torch.zeros(3)], [torch.zeros(3)])
        mx.random.seed(5)
        w = mx.nd.zeros((1000, 100))
        mx.optimizer.get_updater(mx.optimizer.create("sgld", learning_rate=1.0))(
            0, mx.nd.zeros((1000, 100)), w)
        z = w.asnumpy().ravel().astype(np.float64)
        assert stats.kstest(z, "norm").pvalue > 1e-3
    finally:
        _ckernels.set_enabled(old)


@needs_kernel
def test_empty_and_tiny_tensors_in_a_list():
    """Zero-size tensors and tensors smaller than one 64-value block, between larger ones."""
    mx.random.seed(41)
    sizes = [0, 5, 64, 0, 65, 1]
    upd = mx.optimizer.get_updater(mx.optimizer.create("sgld", learning_rate=1.0,
                                                       fast_noise=True))
    # (nd.array: nd.zeros refuses zero-size shapes outside np_shape, as MXNet's does)
    ws = [mx.nd.array(np.zeros(n, dtype="float32")) for n in sizes]
    upd(list(range(len(sizes))), [mx.nd.array(np.zeros(n, dtype="float32")) for n in sizes],
        ws)
    got = np.concatenate([w.asnumpy() for w in ws])
    mx.random.seed(41)
    seed = rk.draw_seed(mx.random.generator(torch.device("cpu")))
    np.testing.assert_array_equal(got, rk.normal_fill(seed, 0, sum(sizes)).numpy())


@needs_kernel
def test_float16_multi_precision_uses_the_kernel_on_float32_masters(monkeypatch):
    seen = []
    real = rk.sgld_update
    monkeypatch.setattr(rk, "sgld_update", lambda ws, *a: (seen.append(ws[0].dtype),
                                                           real(ws, *a))[1])
    mx.random.seed(1)
    upd = mx.optimizer.get_updater(mx.optimizer.create("sgld", learning_rate=0.01,
                                                       multi_precision=True,
                                                       fast_noise=True))
    w = mx.nd.ones((300, 400), dtype="float16")
    upd(0, mx.nd.ones((300, 400), dtype="float16"), w)
    assert seen == [torch.float32] and w.dtype == np.float16
    a = w.asnumpy().astype(np.float64)
    assert a.mean() == pytest.approx(1 - 0.005, abs=2e-3)
    assert a.std() == pytest.approx(0.1, rel=0.02)


@pytest.mark.parametrize("dtype,mp", [("float32", False), ("float64", False),
                                      ("float16", True)])
def test_default_noise_is_nd_random_normal(dtype, mp):
    """As in MXNet, after mx.random.seed(n) the noise of each weight is what
    mx.nd.random.normal(0, sqrt(lr), shape, dtype) draws next, weight by weight in the
    order of the update, also when the weights' learning rates differ (MXNet 1.9.1's
    test_optimizer.py::test_sgld relies on it)."""
    shapes = [(3, 4, 5), (7,), (2, 3)]
    mults = [1.0, 0.25, 1.0]   # (lr, wd) groups interleave: 0 and 2 share one
    params = {i: FakeParam(m, 1.0) for i, m in enumerate(mults)}
    opt = mx.optimizer.create("sgld", learning_rate=0.04, wd=0.1, rescale_grad=0.5,
                              clip_gradient=0.3, param_dict=params, multi_precision=mp)
    upd = mx.optimizer.get_updater(opt)
    rng = np.random.RandomState(0)
    w0 = [rng.uniform(-1, 1, s) for s in shapes]
    g0 = [rng.uniform(-1, 1, s) for s in shapes]
    ws = [mx.nd.array(w, dtype=dtype) for w in w0]
    gs = [mx.nd.array(g, dtype=dtype) for g in g0]
    mx.random.seed(7)
    upd(list(range(len(shapes))), gs, ws)
    mx.random.seed(7)
    ndt = "float32" if mp else dtype
    for i, s in enumerate(shapes):
        lr = 0.04 * mults[i]
        z = mx.nd.random.normal(0, math.sqrt(lr), shape=s, dtype=ndt).asnumpy()
        w = mx.nd.array(w0[i], dtype=dtype).astype(ndt).asnumpy()
        g = np.clip(mx.nd.array(g0[i], dtype=dtype).astype(ndt).asnumpy() * 0.5, -0.3, 0.3)
        want = w + (-lr / 2) * (g + 0.1 * w) + z
        tol = 1e-3 if mp else 1e-6
        np.testing.assert_allclose(ws[i].asnumpy().astype(ndt), want.astype(ndt), rtol=tol,
                                   atol=tol)
