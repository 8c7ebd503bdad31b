"""Offline shim for running the d2l book's MXNet chapters on local stand-in data.

Imported (``install()``) at the top of every script tools/d2l_chapters.py extracts, identically
for real MXNet 1.9.1 and for neogluon (``python -m neogluon.run``). It changes no model, loss or
optimiser code; it only

1. makes ``d2l.download`` (d2l 1.0.3 downloads whenever a file is missing *or* its SHA-1
   differs from the real data set's) return the file already placed in the folder it looks in,
   and fail with a clear message when it is missing: the stand-ins from tools/make_d2l_data.py
   cannot have the real files' SHA-1;
2. likewise lets Gluon's downloadable vision datasets (``FashionMNIST``) accept the local IDX
   files: ``check_sha1`` in ``gluon.utils`` and ``gluon.data.vision.datasets`` becomes "the
   file exists";
3. records what the book's ``d2l.ProgressBoard`` is given to plot (train/val loss, accuracy)
   and how long each ``d2l.Trainer.fit_epoch`` takes, and prints them at exit as one
   ``D2L_RESULT {json}`` line.
4. with ``D2L_SEED=n``, seeds MXNet's generator (``mx.random.seed(n)``): real MXNet starts every
   process from the same seed, so repeated runs alone understate its run-to-run spread. The drawing itself (matplotlib figures, IPython display) is
   skipped unless ``D2L_PLOT=1``: it is the same pure-Python cost for both frameworks.
"""
import atexit
import json
import os
import time

_points = {}
_epoch_s = []


def _local_download(url, folder="../data", sha1_hash=None):
    import d2l.mxnet as d2l
    if not url.startswith("http"):
        url, sha1_hash = d2l.DATA_HUB[url]
    fname = os.path.join(folder, url.split("/")[-1])
    if os.path.exists(fname):
        return fname
    raise RuntimeError(f"d2l shim: {fname} is missing and nothing can be downloaded; "
                       "make it with tools/make_d2l_data.py")


def _summary():
    out = {"epoch_s": _epoch_s}
    for label, pts in _points.items():
        last_x = max(x for x, _ in pts)
        tail = [y for x, y in pts if x > last_x - 1 + 1e-9]
        out[label] = sum(tail) / len(tail)
    return out


def install():
    import d2l.mxnet as d2l
    from mxnet.gluon import utils as gluon_utils
    from mxnet.gluon.data.vision import datasets

    seed = os.environ.get("D2L_SEED")
    if seed:  # MXNet's generator starts from a fixed seed in every process; vary it on purpose
        import mxnet
        mxnet.random.seed(int(seed))
    d2l.download = _local_download
    # MNIST/FashionMNIST go through gluon.utils.download, which consults its own module's
    # check_sha1; CIFAR checks in the datasets module
    exists = lambda filename, sha1_hash: os.path.exists(filename)
    datasets.check_sha1 = exists
    gluon_utils.check_sha1 = exists

    draw = d2l.ProgressBoard.draw
    plot = os.environ.get("D2L_PLOT", "0") == "1"

    def recording_draw(self, x, y, label, every_n=1):
        _points.setdefault(label, []).append((float(x), float(y)))
        if plot:
            draw(self, x, y, label, every_n)

    d2l.ProgressBoard.draw = recording_draw

    def timed(fit_epoch):
        def timed_fit_epoch(self):
            t0 = time.perf_counter()
            r = fit_epoch(self)
            _epoch_s.append(time.perf_counter() - t0)
            return r
        return timed_fit_epoch

    d2l.Trainer.fit_epoch = timed(d2l.Trainer.fit_epoch)
    add_to_class = d2l.add_to_class

    def timing_add_to_class(Class):
        # chapters (re)define Trainer.fit_epoch with @d2l.add_to_class(d2l.Trainer)
        wrapper = add_to_class(Class)

        def add(obj):
            if getattr(obj, "__name__", "") == "fit_epoch" and issubclass(Class, d2l.Trainer):
                obj = timed(obj)
            return wrapper(obj)
        return add

    d2l.add_to_class = timing_add_to_class
    atexit.register(lambda: print("D2L_RESULT " + json.dumps(_summary()), flush=True))
