"""Max pooling on the CPU: neogluon's compiled kernel against torch's max_pool2d (issue 17).

Usage: python bench/maxpool.py [--threads 1] [--rounds 7]

For each shape (LeNet's two pooling layers at batch 64, a ResNet stem's 3x3/2 pooling at
64x64 and at 224x224 inputs, a 3x3/1 'same' pooling), times forward and forward+backward of
``nd.Pooling`` with the kernel on and off, interleaved in one process, and prints the best
per-call milliseconds of --rounds rounds (process CPU time) and the speed-up; "fwd rows" is the
kernel's forward with the small-plane (interleaved) forward turned off, so the column pair
shows what ``_blocked`` chose. All paths give the same bits (tests/test_pool_kernel.py).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

import neogluon as mx  # noqa: E402
from neogluon.ndarray import _pool_kernel as pk  # noqa: E402

CASES = [  # name, shape, kernel, stride, pad
    ("LeNet pool 1", (64, 6, 24, 24), 2, 2, 0),
    ("LeNet pool 2", (64, 16, 8, 8), 2, 2, 0),
    ("ResNet stem, 64x64 input", (16, 64, 32, 32), 3, 2, 1),
    ("ResNet stem, 224x224 input", (32, 64, 112, 112), 3, 2, 1),
    ("3x3/1 same", (8, 32, 28, 28), 3, 1, 1),
    ("d2l NiN pool 1 (96x96 input)", (128, 96, 22, 22), 3, 2, 0),
    ("d2l NiN pool 2", (128, 256, 10, 10), 3, 2, 0),
    ("d2l NiN pool 3", (128, 384, 4, 4), 3, 2, 0),
    ("d2l GoogLeNet Inception 3x3/1", (128, 192, 12, 12), 3, 1, 1),
]


def _time(fn, rounds, calls):
    fn()
    best = float("inf")
    for _ in range(rounds):
        t = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - t) / calls)
    return best * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    assert pk._LIB.get() is not None, "the kernel did not build here"
    print(f"torch {torch.__version__}, {args.threads} thread(s); ms per call, best of "
          f"{args.rounds} (CPU time)")
    print("| pooling | shape | fwd torch | fwd rows | fwd kernel | fwd+bwd torch | "
          "fwd+bwd kernel | fwd+bwd speed-up |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, shape, k, s, p in CASES:
        x = mx.nd.random.normal(shape=shape)
        x.attach_grad()
        calls = max(1, int(2e6 // x.size))
        kw = dict(kernel=(k, k), stride=(s, s), pad=(p, p), pool_type="max")

        def fwd():
            mx.nd.Pooling(x, **kw).wait_to_read()

        def fwd_bwd():
            with mx.autograd.record():
                y = mx.nd.Pooling(x, **kw)
            y.backward()
            x.grad.wait_to_read()

        res = {}
        for on in (False, True):
            pk.set_enabled(on)
            res[on] = (_time(fwd, args.rounds, calls), _time(fwd_bwd, args.rounds, calls))
        pk.set_enabled(True)
        chooser, pk._blocked = pk._blocked, lambda *a: False
        try:
            rows = _time(fwd, args.rounds, calls)
        finally:
            pk._blocked = chooser
        print(f"| {name} | {'x'.join(map(str, shape))} k{k} s{s} p{p} | {res[False][0]:.3f} | "
              f"{rows:.3f} | {res[True][0]:.3f} | {res[False][1]:.3f} | {res[True][1]:.3f} | "
              f"{res[False][1] / res[True][1]:.2f}x |")


if __name__ == "__main__":
    main()
