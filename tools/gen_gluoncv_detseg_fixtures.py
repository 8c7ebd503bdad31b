"""Fixtures of GluonCV 0.10.5's detection and segmentation models (tests/gluoncv_detseg_cases.py)
and of the operators behind them, from MXNet 1.9.1 with GluonCV installed in the reference venv
(``pip install --no-deps gluoncv==0.10.5.post0``; it needs numpy < 1.24).

    /tmp/mxref/bin/python tools/gen_gluoncv_detseg_fixtures.py [case ...]

Writes tests/fixtures/gluoncv_detseg/models.npz and ops.npz. The model cases run twice: as
they are, and with Gaussian noise of scale 1e-6 added to the input images. For every result
``key@floor`` = (max |difference|, ||difference|| / ||clean||) between the two runs records how
far MXNet's own numbers move under a perturbation far below float32's reach through these
networks; the tests allow neogluon a few times that (a gradient through training-mode
BatchNorm at batch 1 jumps when one near-zero ReLU input changes sign). Detection ids that
change under the noise would mean near-tied scores: the generator reports them.
Given case names, only those cases are rerun and replaced in models.npz.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUTDIR = os.path.join(HERE, "..", "tests", "fixtures", "gluoncv_detseg")
CASES = os.path.join(HERE, "..", "tests", "gluoncv_detseg_cases.py")
NOISE = "1e-6"


def _run(cases, noise, out):
    env = dict(os.environ, DETSEG_INPUT_NOISE=noise, OMP_NUM_THREADS="1")
    subprocess.check_call([sys.executable, CASES, out] + cases, env=env)
    return dict(np.load(out))


def _floors(clean, noisy):
    res = {}
    for k, a in clean.items():
        if a.dtype.kind not in "fiub" or k.endswith(("@shape", "/seconds")) or k not in noisy:
            continue
        b = noisy[k]
        if a.shape != b.shape:
            res[k + "@floor"] = np.array([np.inf, np.inf])
            continue
        d = np.abs(a.astype(np.float64) - b.astype(np.float64))
        norm = float(np.linalg.norm(a.astype(np.float64)))
        res[k + "@floor"] = np.array([d.max() if d.size else 0.0,
                                      float(np.linalg.norm(d)) / norm if norm else 0.0])
    return res


def models(cases):
    with tempfile.TemporaryDirectory() as tmp:
        clean = _run(cases, "0", os.path.join(tmp, "clean.npz"))
        noisy = _run(cases, NOISE, os.path.join(tmp, "noisy.npz"))
    errors = [k for k in clean if k.endswith("/error")]
    if errors:
        raise SystemExit("cases failed under MXNet: " + ", ".join(errors))
    res = dict(clean)
    res.update(_floors(clean, noisy))
    for k in sorted(res):
        ids = res.get(k[:-len("@floor")])
        if k.endswith("/infer0@floor") and res[k][0] != 0 and np.all(ids == np.round(ids)):
            print(f"warning: {k[:-6]} (detection ids) changes under input noise {NOISE}: "
                  "near-tied scores", file=sys.stderr)
    return res


def ops():
    """argsort / topk on ties (MXNet's std::sort / std::partial_sort order) and SoftmaxOutput's
    gradient normalisation with multi_output."""
    import mxnet as mx
    rng = np.random.RandomState(0)
    res = {}
    for t, (n, nv, k) in enumerate([(10, 3, 4), (16, 2, 16), (17, 2, 17), (40, 3, 5),
                                    (68, 3, 16), (100, 5, 12), (257, 2, 40), (2000, 4, 300),
                                    (20480, 50, 40)]):
        v = rng.randint(0, nv, (2, n)).astype("float32")
        v[1] = np.sort(v[1])
        x = mx.nd.array(v)
        res[f"sort{t}/data"] = v
        res[f"sort{t}/k"] = np.array(k)
        for asc in (True, False):
            tag = "asc" if asc else "desc"
            if n <= 2000:   # (CenterNet's size is there for topk's partial sort)
                res[f"sort{t}/argsort_{tag}"] = mx.nd.argsort(x, is_ascend=asc).asnumpy()
            res[f"sort{t}/topk_{tag}"] = mx.nd.topk(x, k=k, is_ascend=asc).asnumpy()
            res[f"sort{t}/topk_axis0_{tag}"] = mx.nd.topk(x.T, axis=0, k=k,
                                                         is_ascend=asc).asnumpy()
            res[f"sort{t}/mask_{tag}"] = mx.nd.topk(x, k=k, is_ascend=asc,
                                                    ret_typ="mask").asnumpy()
    x = mx.nd.array(rng.normal(size=(2, 4, 3, 5)))
    label = mx.nd.array(rng.randint(-1, 4, (2, 3, 5)))
    res["softmax_output/data"] = x.asnumpy()
    res["softmax_output/label"] = label.asnumpy()
    for norm in ("null", "batch", "valid"):
        x.attach_grad()
        with mx.autograd.record():
            y = mx.nd.SoftmaxOutput(x, label, ignore_label=-1, multi_output=True,
                                    use_ignore=True, normalization=norm, grad_scale=1.5)
        y.backward()
        res[f"softmax_output/grad_{norm}"] = x.grad.asnumpy()
    return res


if __name__ == "__main__":
    os.makedirs(OUTDIR, exist_ok=True)
    path = os.path.join(OUTDIR, "models.npz")
    sys.path.insert(0, os.path.dirname(CASES))
    import gluoncv_detseg_cases
    names = sys.argv[1:] or sorted(gluoncv_detseg_cases.CASES)
    new = models(names)
    if sys.argv[1:] and os.path.exists(path):
        old = {k: v for k, v in np.load(path).items()
               if k.split("/", 1)[0] not in names}
        old.update(new)
        new = old
    np.savez_compressed(path, **new)
    np.savez_compressed(os.path.join(OUTDIR, "ops.npz"), **ops())
    print("wrote", path, os.path.getsize(path), "bytes")
