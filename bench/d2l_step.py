"""One training step of d2l's modern CNNs at the book's CPU sizes: MXNet 1.9.1 vs neogluon.

The networks of d2l-en v1.0.3's MXNet sections (ResNet-18, RegNetX-32 of "CNN design", NiN,
DenseNet) built from the ``d2l`` package's blocks, NumPy mode, 96x96 single-channel images,
batch 128, SGD through ``gluon.Trainer``: each timed step is forward under ``record``, the
mean softmax cross-entropy, ``backward``, ``Trainer.step`` and ``waitall`` (MXNet's engine is
asynchronous: without it the backward of one step is timed in the next). Then two forward
passes in prediction mode. Every configuration runs in its own process, alternating, for
``--rounds`` rounds; reported are the median of the steady steps (all but the first of each
process), the median first step and the median of the prediction passes.

Configurations: ``mxnet`` (``--mx-python``), ``neogluon`` (``--ng-python`` through
``python -m neogluon.run``) and ``neogluon-keep0`` (the same with ``NEOGLUON_KEEP_MEMORY=0``:
freed memory handed back to the C library's defaults, the behaviour before training kept it).

Usage::

    python bench/d2l_step.py [--rounds 3] [--steps 5] [--configs mxnet,neogluon] NET ...
    python bench/d2l_step.py --worker NET STEPS      # one process, as the driver runs it
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NETS = ("resnet", "regnet", "nin", "densenet")


def worker(which, steps, batch=128):
    import mxnet as mx
    from mxnet import autograd, gluon, init, np, npx
    from mxnet.gluon import nn
    from d2l import mxnet as d2l
    npx.set_np()

    def b1():   # the 7x7/2 stem ResNet and DenseNet share in the book
        blk = nn.Sequential()
        blk.add(nn.Conv2D(64, kernel_size=7, strides=2, padding=3), nn.BatchNorm(),
                nn.Activation('relu'), nn.MaxPool2D(pool_size=3, strides=2, padding=1))
        return blk

    def resnet18():
        net = nn.Sequential()
        net.add(b1())
        for i, c in enumerate((64, 128, 256, 512)):
            blk = nn.Sequential()
            for j in range(2):
                first = j == 0 and i != 0
                blk.add(d2l.Residual(c, use_1x1conv=first, strides=2 if first else 1))
            net.add(blk)
        net.add(nn.GlobalAvgPool2D(), nn.Dense(10))
        return net

    def regnet():   # RegNetX32 of the "CNN design" section: stem 32, stages (4, 32), (6, 80)
        net = nn.Sequential()
        stem = nn.Sequential()
        stem.add(nn.Conv2D(32, kernel_size=3, padding=1, strides=2), nn.BatchNorm(),
                 nn.Activation('relu'))
        net.add(stem)
        for depth, ch in ((4, 32), (6, 80)):
            st = nn.Sequential()
            for i in range(depth):
                # (the book's own call for the later blocks, argument order and all:
                # ResNeXtBlock(num_channels, num_channels, groups, bot_mul))
                st.add(d2l.ResNeXtBlock(ch, 16, 1, use_1x1conv=True, strides=2) if i == 0
                       else d2l.ResNeXtBlock(ch, ch, 16, 1))
            net.add(st)
        net.add(nn.GlobalAvgPool2D(), nn.Dense(10))
        return net

    def nin():
        def block(c, k, s, p):
            b = nn.Sequential()
            b.add(nn.Conv2D(c, k, s, p, activation='relu'),
                  nn.Conv2D(c, 1, activation='relu'), nn.Conv2D(c, 1, activation='relu'))
            return b
        net = nn.Sequential()
        net.add(block(96, 11, 4, 0), nn.MaxPool2D(3, 2), block(256, 5, 1, 2),
                nn.MaxPool2D(3, 2), block(384, 3, 1, 1), nn.MaxPool2D(3, 2), nn.Dropout(0.5),
                block(10, 3, 1, 1), nn.GlobalAvgPool2D(), nn.Flatten())
        return net

    class DenseBlock(nn.Block):
        def __init__(self, n, c):
            super().__init__()
            self.net = nn.Sequential()
            for _ in range(n):
                b = nn.Sequential()
                b.add(nn.BatchNorm(), nn.Activation('relu'), nn.Conv2D(c, 3, padding=1))
                self.net.add(b)

        def forward(self, X):
            for blk in self.net:
                X = np.concatenate((X, blk(X)), axis=1)
            return X

    def densenet():
        net = nn.Sequential()
        net.add(b1())
        ch = 64
        for i in range(4):
            net.add(DenseBlock(4, 32))
            ch += 4 * 32
            if i != 3:
                ch //= 2
                t = nn.Sequential()
                t.add(nn.BatchNorm(), nn.Activation('relu'), nn.Conv2D(ch, 1),
                      nn.AvgPool2D(2, 2))
                net.add(t)
        net.add(nn.BatchNorm(), nn.Activation('relu'), nn.GlobalAvgPool2D(), nn.Dense(10))
        return net

    net = {"resnet": resnet18, "regnet": regnet, "nin": nin, "densenet": densenet}[which]()
    net.initialize(init.Xavier())
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.01})
    X = np.random.uniform(size=(batch, 1, 96, 96))
    y = np.array(np.random.randint(0, 10, size=(batch,)), dtype='float32')
    for _ in range(steps):
        t = time.perf_counter()
        with autograd.record():
            l = loss(net(X), y).mean()
        l.backward()
        trainer.step(1)
        l.item()
        mx.nd.waitall()
        print(f"STEP {time.perf_counter() - t:.4f}", flush=True)
    with autograd.predict_mode():
        for _ in range(2):
            t = time.perf_counter()
            net(X).asnumpy()
            print(f"EVAL {time.perf_counter() - t:.4f}", flush=True)


def run_config(config, net, steps, args):
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), MPLBACKEND="Agg")
    me = os.path.abspath(__file__)
    if config == "mxnet":
        env.pop("PYTHONPATH", None)
        cmd = [args.mx_python, me, "--worker", net, str(steps)]
    else:
        env["PYTHONPATH"] = REPO
        if config == "neogluon-keep0":
            env["NEOGLUON_KEEP_MEMORY"] = "0"
        cmd = [args.ng_python, "-m", "neogluon.run", me, "--worker", net, str(steps)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    if out.returncode:
        raise SystemExit(f"{config} {net} failed:\n{out.stderr[-2000:]}")
    steps_s = [float(l.split()[1]) for l in out.stdout.splitlines() if l.startswith("STEP ")]
    evals = [float(l.split()[1]) for l in out.stdout.splitlines() if l.startswith("EVAL ")]
    return steps_s, evals


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=2, metavar=("NET", "STEPS"))
    ap.add_argument("--mx-python", default="/tmp/d2l-ref/bin/python")
    ap.add_argument("--ng-python", default="/tmp/d2l-ng/bin/python")
    ap.add_argument("--configs", default="mxnet,neogluon,neogluon-keep0")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=1200)
    ap.add_argument("nets", nargs="*")
    args = ap.parse_args()
    if args.worker:
        worker(args.worker[0], int(args.worker[1]))
        return
    configs = args.configs.split(",")
    print("| net | configuration | steady step s (median) | first step s | prediction pass s |")
    print("|---|---|---|---|---|")
    for net in args.nets or ["resnet"]:
        res = {c: ([], [], []) for c in configs}
        for r in range(args.rounds):
            order = configs if r % 2 == 0 else configs[::-1]
            for c in order:
                steps_s, evals = run_config(c, net, args.steps, args)
                res[c][0].extend(steps_s[1:])
                res[c][1].append(steps_s[0])
                res[c][2].extend(evals)
        for c in configs:
            steady, first, ev = res[c]
            print(f"| {net} | {c} | {statistics.median(steady):.3f} | "
                  f"{statistics.median(first):.3f} | {statistics.median(ev):.3f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
