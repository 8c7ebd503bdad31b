"""One-input-channel convolutions' weight gradient: neogluon's kernel against torch's oneDNN
backward (issue 17).

Usage: python bench/conv1ch.py [--threads 1] [--rounds 7]

For each shape (LeNet's first layer at batch 64 and 256, a 3x3 'same' layer on 28x28, a 7x7
layer on 64x64) times the weight+bias gradient (``convolution_backward`` with the input
gradient off, as for a network's first layer) with the kernel and with torch's op, then a
whole LeNet training step (hybridized, SGD momentum) with ``NEOGLUON_CONV_KERNELS`` on and off,
interleaved in one process. Prints the best per-call milliseconds of process CPU time over
--rounds rounds and the speed-up.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import neogluon as mx  # noqa: E402
from neogluon.ndarray import _conv_kernel as ck  # noqa: E402
from maxpool import _time as _best  # noqa: E402  (best per-call CPU ms of rounds)

CASES = [  # name, (N, H, W), out channels, kernel, pad
    ("LeNet conv 1, batch 64", (64, 28, 28), 6, 5, 0),
    ("LeNet conv 1, batch 256", (256, 28, 28), 6, 5, 0),
    ("3x3 same, 32 filters, 28x28, batch 64", (64, 28, 28), 32, 3, 1),
    ("7x7, 16 filters, 64x64, batch 16", (16, 64, 64), 16, 7, 3),
]


def grads(rounds):
    print("weight+bias gradient, ms per call (best of rounds, process CPU time)")
    for name, (n, h, w), o, k, p in CASES:
        g = torch.Generator().manual_seed(0)
        x = torch.randn(n, 1, h, w, generator=g)
        wt = torch.randn(o, 1, k, k, generator=g)
        b = torch.randn(o, generator=g)
        ho, wo = h + 2 * p - k + 1, w + 2 * p - k + 1
        go = torch.randn(n, o, ho, wo, generator=g)

        def torch_op():
            torch.ops.aten.convolution_backward(go, x, wt, [o], [1, 1], [p, p], [1, 1], False,
                                                [0, 0], 1, [False, True, True])
        wk = wt.clone().requires_grad_()
        bk = b.clone().requires_grad_()
        y = ck.conv2d(x, wk, bk, (p, p))

        def kernel():
            torch.autograd.grad(y, (wk, bk), go, retain_graph=True)
        calls = max(3, int(2e7 / (n * o * ho * wo * k * k)))
        t_torch = min(_best(torch_op, rounds, calls), _best(torch_op, rounds, calls))
        t_kern = min(_best(kernel, rounds, calls), _best(kernel, rounds, calls))
        print(f"  {name:42s} torch {t_torch:8.3f}  kernel {t_kern:8.3f}  x{t_torch / t_kern:.2f}")


def lenet_step(rounds):
    import hybridize_compile as H
    from neogluon import autograd, gluon, nd
    mx.random.seed(0)
    net = H._gluon_net(mx, "lenet")
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    x = nd.random.uniform(shape=(64, 1, 28, 28))
    y = nd.array(np.random.RandomState(0).randint(0, 10, 64))
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01, "momentum": 0.9})

    def step():
        with autograd.record():
            ls = loss(net(x), y)
        ls.backward()
        tr.step(64)
        ls.wait_to_read()
    res = {True: float("inf"), False: float("inf")}
    for _ in range(rounds):
        for on in (True, False):
            old = ck.set_enabled(on)
            try:
                res[on] = min(res[on], _best(step, 1, 40))
            finally:
                ck.set_enabled(old)
    print(f"LeNet training step (batch 64, hybridized), ms: kernel off {res[False]:.2f}, "
          f"on {res[True]:.2f}, x{res[False] / res[True]:.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    print(f"torch {torch.__version__}, {a.threads} thread(s)")
    grads(a.rounds)
    lenet_step(a.rounds)


if __name__ == "__main__":
    main()
