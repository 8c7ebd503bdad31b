"""mx.io.ImageRecordIter's augmentation arguments against MXNet 1.9.1
(tools/gen_image_record_aug_fixtures.py): exact batches with augmentation off or fixed,
statistics within stated tolerances with it on, clear errors for bad values."""
import importlib.util
import json
import os
import random

import numpy as np
import pytest

import neogluon as mx

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "gen_image_record_aug_fixtures",
    os.path.join(HERE, "..", "tools", "gen_image_record_aug_fixtures.py"))
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)
ROOT = cases.ROOT
REC = os.path.join(ROOT, "images.rec")

# Tolerances for the statistics (values are in 0-255 pixel units unless normalised; the
# draws are not MXNet's, so only the distributions agree). Over 144 samples:
TOL = dict(
    mean=3.0,          # per-channel mean, plus 6 standard errors of the per-image means
    std=6.0,           # per-channel std
    minmax=12.0,       # batch min / max
    mirrored=0.17,     # fraction of samples whose red ramp falls left to right
    img_mean_std=0.35,  # relative, spread of per-image means (brightness-like jitter)
    spread=0.15,       # relative, mean per-pixel channel spread (saturation-like)
    fill=0.06,         # fraction of pure white / black (fill_value) pixels
    dist_plain=0.30,   # relative, mean |augmented - plain centre crop|
)

# Per-configuration overrides of TOL (none needed at present).
TOL_OVERRIDE = {}


@pytest.fixture(scope="module")
def expected():
    with open(os.path.join(ROOT, "stats.json")) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def plain():
    return cases.plain_images(mx, REC)


@pytest.mark.parametrize("name", sorted(cases.EXACT))
def test_exact_batches_match_mxnet(name):
    arrays = np.load(os.path.join(ROOT, "exact.npz"))
    it = cases.make_iter(mx, REC, name, cases.EXACT[name])
    batches = list(it)
    data = batches[0].data[0].asnumpy()
    want = arrays[f"{name}/data"]
    assert data.dtype == want.dtype and data.shape == want.shape
    np.testing.assert_allclose(data, want, rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(np.stack([b.label[0].asnumpy() for b in batches]),
                                  arrays[f"{name}/labels"])
    assert [b.pad for b in batches] == arrays[f"{name}/pads"].tolist()


def _close_rel(got, want, rel, floor=1.0):
    return abs(got - want) <= rel * max(abs(want), floor)


@pytest.mark.parametrize("name", sorted(cases.RANDOM))
def test_augmented_statistics_close_to_mxnet(name, expected, plain):
    random.seed(7)
    got = cases.statistics(mx, REC, cases.RANDOM[name], plain)
    want = expected[name]
    assert got["shape"] == want["shape"] and got["dtype"] == want["dtype"]
    assert got["n"] == want["n"]
    scale = max(1.0, max(want["std"]) / 40.0) if max(want["std"]) > 5 else \
        max(want["std"]) / 45.0  # normalised outputs: tolerances in their units
    # Sampling noise of a mean over n images whose own means spread by img_mean_std.
    mean_tol = TOL["mean"] * scale + 6 * want["img_mean_std"] / np.sqrt(want["n"])
    problems = []
    for c in range(3):
        if abs(got["mean"][c] - want["mean"][c]) > mean_tol:
            problems.append(("mean", c, got["mean"][c], want["mean"][c]))
        if abs(got["std"][c] - want["std"][c]) > TOL["std"] * scale:
            problems.append(("std", c, got["std"][c], want["std"][c]))
    for k in ("min", "max"):
        if abs(got[k] - want[k]) > TOL["minmax"] * scale:
            problems.append((k, got[k], want[k]))
    if abs(got["mirrored"] - want["mirrored"]) > TOL["mirrored"]:
        problems.append(("mirrored", got["mirrored"], want["mirrored"]))
    tol = dict(TOL, **TOL_OVERRIDE.get(name, {}))
    for k in ("img_mean_std", "spread", "dist_plain"):
        if not _close_rel(got[k], want[k], tol[k], floor=2.0 * scale):
            problems.append((k, got[k], want[k]))
    for k in ("white", "black") if scale >= 1 else ():  # pixel units only
        if abs(got[k] - want[k]) > TOL["fill"]:
            problems.append((k, got[k], want[k]))
    assert not problems, problems


def test_statistics_do_not_depend_on_threads():
    kw = dict(cases.RANDOM["imagenet_train"])
    outs = []
    for threads in (1, 2):
        random.seed(11)
        it = cases.make_iter(mx, REC, None, kw, preprocess_threads=threads)
        outs.append(np.concatenate([b.data[0].asnumpy() for b in it]))
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("kw, match", [
    (dict(random_resized_crop=True, min_random_area=-0.1), "min_random_area"),
    (dict(random_resized_crop=True, min_random_area=0.5, max_random_area=0.3),
     "min_random_area"),
    (dict(random_resized_crop=True, rand_crop=True), "rand_crop"),
    (dict(random_resized_crop=True, max_random_scale=2), "max_random_scale"),
    (dict(random_resized_crop=True, min_aspect_ratio=2.0, max_aspect_ratio=1.0),
     "min_aspect_ratio"),
    (dict(max_aspect_ratio=1.5), "max_aspect_ratio"),
    (dict(min_random_scale=2, max_random_scale=1), "min_random_scale"),
    (dict(max_crop_size=10, min_crop_size=20), "min_crop_size"),
    (dict(max_crop_size=30), "min_crop_size"),
    (dict(brightness=-1), "brightness"),
    (dict(contrast=-0.1), "contrast"),
    (dict(saturation=-0.1), "saturation"),
    (dict(pca_noise=-1), "pca_noise"),
    (dict(max_rotate_angle=-5), "max_rotate_angle"),
    (dict(max_shear_ratio=-0.1), "max_shear_ratio"),
    (dict(pad=-1), "pad"),
    (dict(fill_value=300), "fill_value"),
    (dict(random_h=-3), "random_h"),
    (dict(min_img_size=50, max_img_size=40), "min_img_size"),
    (dict(max_rotate_angle=10, inter_method=0), "inter_method"),
    (dict(inter_method=7), "inter_method"),
    (dict(prefetch_buffer=-1), "prefetch_buffer"),
    (dict(no_such_argument=1), "unsupported argument"),
])
def test_bad_values_raise(kw, match):
    with pytest.raises(mx.MXNetError, match=match):
        mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 32, 32), batch_size=4, **kw)


def test_crop_larger_than_image_raises():
    it = mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 32, 32), batch_size=4,
                               max_crop_size=200, min_crop_size=100)
    with pytest.raises(mx.MXNetError, match="max_crop_size"):
        it.next()


def test_prefetch_buffer_and_gray_images_accepted():
    it = mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(1, 24, 24), batch_size=4,
                               prefetch_buffer=8, max_rotate_angle=20, brightness=0.3,
                               random_h=10, pca_noise=0.1, pad=2)
    b = it.next()
    assert b.data[0].shape == (4, 1, 24, 24)


# ---------------------------------------------------------------------------------------
# HSL jitter (random_h / random_s / random_l) against MXNet 1.9.1's bytes and its law of
# offsets (tools/gen_image_record_hls_fixtures.py).

from neogluon.io import image_record as _ir  # noqa: E402

HLS = os.path.join(HERE, "fixtures", "image_record_hls", "hls.npz")


@pytest.fixture(scope="module")
def hls_fix():
    with np.load(HLS) as z:
        return {k: z[k] for k in z.files}


@pytest.fixture(params=["opencv", "numpy"])
def hls_backend(request, monkeypatch):
    """Run with OpenCV's HLS->RGB when installed, and with the numpy fallback."""
    if request.param == "opencv":
        monkeypatch.delenv("NEOGLUON_OPENCV", raising=False)
        if _ir._cv2() is None:
            pytest.skip("opencv-python is not installed")
    else:
        monkeypatch.setenv("NEOGLUON_OPENCV", "0")
        assert _ir._cv2() is None
    return request.param


@pytest.mark.parametrize("name", ["wide", "narrow", "hue_full", "round_trip"])
def test_hls_jitter_is_mxnets_bytes(name, hls_fix, hls_backend):
    src = hls_fix["colours/source"]
    for want, (dh, ds, dl) in zip(hls_fix[f"colours/{name}/data"],
                                  hls_fix[f"colours/{name}/offsets"]):
        got = _ir._hls_jitter(src, int(dh), int(ds), int(dl))
        assert got.dtype == np.uint8 and got.shape == src.shape
        bad = np.argwhere((got != want).any(-1))
        assert not len(bad), (name, (dh, ds, dl), len(bad),
                              [(src[y, x].tolist(), got[y, x].tolist(), want[y, x].tolist())
                               for y, x in bad[:5]])


def test_hls_forward_conversion_rounds_like_mxnets_opencv():
    # Hue 81 degrees (40.5 in OpenCV's 8-bit half degrees) rounds to even, 40, and 91
    # degrees to 46; a grey has hue and saturation 0. (MXNet's OpenCV 3.4; OpenCV 4's
    # uint8 conversion gives 41 and 45 here.)
    px = np.array([[[89, 110, 50], [96, 127, 67], [7, 7, 7], [255, 0, 0]]], np.uint8)
    hls = _ir._rgb_to_hls_u8(px)
    assert hls[0, :, 0].tolist() == [40, 46, 0, 0]
    assert hls[0, 2].tolist() == [0, 7, 0] and hls[0, 3].tolist() == [0, 128, 255]


@pytest.fixture(scope="module")
def plain_u8():
    it = mx.io.ImageRecordUInt8Iter(path_imgrec=REC, data_shape=(3, 32, 32), batch_size=12)
    out = {}
    for b in it:
        for d, lab in zip(b.data[0].asnumpy(), b.label[0].asnumpy()):
            out.setdefault(int(lab), d)
    return out


@pytest.mark.parametrize("name", ["h36", "s50", "l50", "hsl"])
def test_hls_offsets_reproduce_mxnets_iterator_outputs(name, hls_fix, plain_u8):
    """Each of MXNet's 144 jittered crops, byte for byte (CRC-32), from the plain crop and
    the recorded offsets: checks the transform and the recorded offsets together."""
    import zlib
    labels = hls_fix[f"law/{name}/labels"]
    offsets = hls_fix[f"law/{name}/offsets"]
    crcs = hls_fix[f"law/{name}/crc32"]
    wrong = []
    for i, (lab, (dh, ds, dl), crc) in enumerate(zip(labels, offsets, crcs)):
        hwc = plain_u8[int(lab)].transpose(1, 2, 0)
        got = _ir._hls_jitter(hwc, int(dh), int(ds), int(dl)).transpose(2, 0, 1)
        if zlib.crc32(np.ascontiguousarray(got).tobytes()) != int(crc):
            wrong.append((i, int(lab), (int(dh), int(ds), int(dl))))
    assert not wrong, wrong


def _law_samples(hls_fix):
    """MXNet's offsets over radius, for every jittered channel of the law configurations."""
    out = []
    for name in ("h36", "s50", "l50", "hsl"):
        radii = hls_fix[f"law/{name}/radii"]
        offs = hls_fix[f"law/{name}/offsets"]
        for k in range(3):
            if radii[k]:
                out.append((int(radii[k]), offs[:, k]))
    return out


def _chi2(samples, draw, n_sim=40000, bins=8):
    """Pearson's chi-square of the offsets/radius in ``samples`` against the law of
    ``draw(rng, r)``, estimated by simulation, over ``bins`` equal bins of (-1, 1)."""
    rng = random.Random(3)
    edges = np.linspace(-1, 1, bins + 1)
    stat = 0.0
    for r, offs in samples:
        sim = np.array([draw(rng, r) for _ in range(n_sim)]) / r
        p = np.histogram(sim, edges)[0] / n_sim
        obs = np.histogram(offs / r, edges)[0]
        exp = p * len(offs)
        stat += float(((obs - exp) ** 2 / np.maximum(exp, 1e-9)).sum())
    return stat, len(samples) * (bins - 1)


def test_hls_offsets_follow_mxnets_law(hls_fix):
    samples = _law_samples(hls_fix)  # 6 channels x 144 offsets, checked byte for byte above
    ours = lambda rng, r: _ir._hls_draws(rng, r, 0, 0)[0]  # noqa: E731
    stat, dof = _chi2(samples, ours)
    # 0.1% upper quantile of chi-square with 42 degrees of freedom: 77.0.
    assert dof == 42 and stat < 77.0, stat
    # The law neogluon used before (one uniform draw, int(U(-1, 1) * r)) is far off: MXNet
    # averages two draws, (u1 + 4 u2) / 5, which makes large offsets rarer.
    old = lambda rng, r: int(rng.uniform(-1, 1) * r)  # noqa: E731
    assert _chi2(samples, old)[0] > 77.0
    # Mean |offset| / radius: MXNet's sample against neogluon's law (about 0.41; 0.5 for
    # the old law), within 4 standard errors.
    rng = random.Random(5)
    sim = np.array([abs(_ir._hls_draws(rng, 100, 0, 0)[0]) / 100 for _ in range(40000)])
    mxs = np.concatenate([np.abs(o) / r for r, o in samples])
    assert abs(mxs.mean() - sim.mean()) < 4 * sim.std() / np.sqrt(len(mxs)), \
        (mxs.mean(), sim.mean())


def test_hls_draws_take_every_channel_in_turn():
    # Two uniforms per channel, h then s then l: with radius 0 a channel still consumes its
    # draws (as MXNet's engine does), so the other channels' offsets do not move.
    a = _ir._hls_draws(random.Random(9), 0, 40, 0)
    b = _ir._hls_draws(random.Random(9), 40, 40, 40)
    assert a[0] == 0 and a[2] == 0 and a[1] == b[1]
    rng = random.Random(1)
    d = np.array([_ir._hls_draws(rng, 10, 10, 10) for _ in range(20000)])
    assert d.min() == -9 and d.max() == 9  # int() truncates: |offset| < radius
    # 0 collects (-1, 1): twice as often as 1 or -1 in the middle of the trapezoid.
    counts = np.array([(d == v).mean() for v in (-1, 0, 1)])
    assert abs(counts[1] / counts[[0, 2]].mean() - 2) < 0.2, counts


@pytest.mark.parametrize("name", ["h36", "s50", "l50", "hsl"])
def test_hls_iterator_changes_images_as_much_as_mxnet(name, hls_fix):
    """End to end: mean |jittered - plain| over the fixture images (neogluon over 12
    epochs) against MXNet's 4, within 3 standard errors of the two means."""
    rh, rs_, rl = (int(v) for v in hls_fix[f"law/{name}/radii"])
    want = hls_fix[f"law/{name}/dist"]
    it = mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 32, 32), batch_size=12,
                               random_h=rh, random_s=rs_, random_l=rl)
    plain = cases.plain_images(mx, REC)
    random.seed(17)
    dists = []
    for _ in range(12):
        for b in it:
            for d, lab in zip(b.data[0].asnumpy(), b.label[0].asnumpy()):
                dists.append(np.abs(d.astype(np.float64) - plain[int(lab)]).mean())
        it.reset()
    dists = np.array(dists)
    se = np.sqrt(want.var() / len(want) + dists.var() / len(dists))
    assert abs(dists.mean() - want.mean()) < 3 * se, (dists.mean(), want.mean(), se)


def test_random_hsl_must_be_integers():
    with pytest.raises(mx.MXNetError, match="random_s"):
        mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 32, 32), batch_size=4,
                              random_s=10.5)
