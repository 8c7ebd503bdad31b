"""Data-parallel training on several contexts through the kvstore.

Each batch is split across the contexts with ``gluon.utils.split_and_load``; every context runs
forward and backward on its slice; ``trainer.step`` sums the gradients of all contexts through
the kvstore and applies the same update everywhere, so the copies of each parameter stay equal.
On a machine with GPUs, pass ``--ctx gpu:0,gpu:1``; on a CPU, ``cpu:0,cpu:1`` shows the same
mechanics (both map to the host).

The script also trains the same model on one context and checks that the results agree: the
sum of per-slice gradients equals the gradient of the whole batch.

Run: ``python examples/data_parallel.py [--ctx cpu:0,cpu:1] [--kvstore device]``
"""
import argparse

import numpy as np

import neogluon as mx
from neogluon import autograd, gluon


def parse_ctx(text):
    out = []
    for item in text.split(","):
        kind, _, idx = item.strip().partition(":")
        out.append(mx.gpu(int(idx or 0)) if kind == "gpu" else mx.cpu(int(idx or 0)))
    return out


def train(ctxs, kvstore, epochs, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(512, 20).astype("float32")
    # three classes, each the argmax of a fixed linear projection: learnable in a few epochs
    y = np.argmax(x @ np.random.RandomState(seed + 1).randn(20, 3), axis=1).astype("float32")
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), batch_size=64)

    mx.random.seed(seed)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(64, activation="relu"), gluon.nn.Dense(3))
    net.initialize(mx.init.Xavier(), ctx=ctxs)
    net.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": 0.1, "momentum": 0.9}, kvstore=kvstore)
    metric = mx.metric.Accuracy()
    for epoch in range(epochs):
        metric.reset()
        for data, label in loader:
            datas = gluon.utils.split_and_load(data, ctxs)
            labels = gluon.utils.split_and_load(label, ctxs)
            with autograd.record():
                outs = [net(d) for d in datas]
                losses = [loss_fn(o, l) for o, l in zip(outs, labels)]
            autograd.backward(losses)
            trainer.step(data.shape[0])
            metric.update(labels, outs)
        print(f"  {len(ctxs)} context(s), epoch {epoch + 1}: train {metric.get()[0]} "
              f"{metric.get()[1]:.4f}")
    return net, metric.get()[1]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ctx", default="cpu:0,cpu:1")
    p.add_argument("--kvstore", default="device", help="device or local")
    p.add_argument("--epochs", type=int, default=3)
    args = p.parse_args(argv)
    ctxs = parse_ctx(args.ctx)

    print(f"data-parallel on {ctxs} with kvstore={args.kvstore!r}:")
    net, acc = train(ctxs, args.kvstore, args.epochs)
    params = net.collect_params()
    for name, param in params.items():
        copies = [param.data(c).asnumpy() for c in ctxs]
        for c in copies[1:]:
            np.testing.assert_array_equal(c, copies[0], err_msg=name)
    print("  every context holds the same weights")

    print("the same training on one context:")
    single, acc1 = train(ctxs[:1], args.kvstore, args.epochs)
    for (name, a), b in zip(params.items(), single.collect_params().values()):
        np.testing.assert_allclose(a.data(ctxs[0]).asnumpy(), b.data(ctxs[0]).asnumpy(),
                                   rtol=1e-3, atol=1e-4, err_msg=name)
    print(f"  same weights (to float rounding); accuracy {acc:.4f} vs {acc1:.4f}")
    assert acc > 0.8
    return acc


if __name__ == "__main__":
    main()
