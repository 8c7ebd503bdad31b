"""ImageRecordIter throughput: neogluon against MXNet 1.9.1 on the same .rec file.

    python bench/image_record_iter.py [--images 192] [--rounds 3] [--mxnet /tmp/mxref/bin/python]

Writes a .rec/.idx of ImageNet-sized JPEGs (500x375, quality 90, smooth random content), then
reads it with ``mx.io.ImageRecordIter(data_shape=(3, 224, 224), resize=256, rand_crop=True,
rand_mirror=True, mean/std normalisation, batch_size=32, preprocess_threads=T)`` for T = 1 and
2, in MXNet 1.9.1 and in neogluon, alternating processes, and reports images/s (two epochs
after one warm-up batch; medians over rounds; the ratio is taken per round). Without the
MXNet interpreter only neogluon is timed.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

READER = r"""
import sys, time, json
which, rec, idx, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
if which == "mxnet":
    import mxnet as mx
else:
    import neogluon as mx
it = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=(3, 224, 224),
                           batch_size=32, resize=256, rand_crop=True, rand_mirror=True,
                           mean_r=123.68, mean_g=116.78, mean_b=103.94, std_r=58.4,
                           std_g=57.12, std_b=57.38, preprocess_threads=threads)
it.next().data[0].asnumpy()
it.reset()
n = 0
t = time.perf_counter()
for epoch in range(2):
    for batch in it:
        batch.data[0].asnumpy()
        n += batch.data[0].shape[0] - batch.pad
    it.reset()
print(json.dumps({"images_per_s": n / (time.perf_counter() - t)}))
"""


def make_rec(folder, count):
    from PIL import Image
    sys.path.insert(0, ROOT)
    from neogluon import recordio
    rec, idx = os.path.join(folder, "bench.rec"), os.path.join(folder, "bench.idx")
    writer = recordio.MXIndexedRecordIO(idx, rec, "w")
    rng = np.random.RandomState(0)
    yy, xx = np.mgrid[0:375, 0:500].astype(np.float32)
    for i in range(count):
        f = rng.uniform(0.005, 0.05, size=(3, 2))
        chans = [127 + 100 * np.sin(xx * f[c, 0] + yy * f[c, 1] + i) for c in range(3)]
        img = np.stack(chans, axis=2) + rng.normal(0, 12, (375, 500, 3))
        buf = io.BytesIO()
        Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).save(buf, "JPEG", quality=90)
        writer.write_idx(i, recordio.pack(recordio.IRHeader(0, float(i % 10), i, 0),
                                          buf.getvalue()))
    writer.close()
    return rec, idx


def run(python, which, rec, idx, threads, timeout=600):
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=ROOT)
    out = subprocess.run([python, "-c", READER, which, rec, idx, str(threads)], env=env,
                         capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"{which} with {threads} thread(s) failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])["images_per_s"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=192)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--mxnet", default="/tmp/mxref/bin/python")
    args = ap.parse_args(argv)
    have_mx = os.path.exists(args.mxnet)
    with tempfile.TemporaryDirectory() as folder:
        rec, idx = make_rec(folder, args.images)
        rows = []
        for threads in args.threads:
            ng, mx, ratio = [], [], []
            for _ in range(args.rounds):
                a = run(sys.executable, "neogluon", rec, idx, threads)
                ng.append(a)
                if have_mx:
                    b = run(args.mxnet, "mxnet", rec, idx, threads)
                    mx.append(b)
                    ratio.append(a / b)
            rows.append((threads, statistics.median(ng),
                         statistics.median(mx) if mx else None,
                         statistics.median(ratio) if ratio else None))
    print(f"{args.images} JPEGs 500x375 q90 -> 224x224 (resize 256, random crop and mirror, "
          f"normalised), batch 32, {args.rounds} rounds\n")
    print("| preprocess_threads | neogluon images/s | MXNet 1.9.1 images/s | neogluon / MXNet |")
    print("| ---: | ---: | ---: | ---: |")
    for threads, a, b, r in rows:
        print(f"| {threads} | {a:.0f} | {'-' if b is None else f'{b:.0f}'} | "
              f"{'-' if r is None else f'{r:.2f}x'} |")


if __name__ == "__main__":
    main()
