"""Gradient clipping by global norm with ``Trainer.allreduce_grads`` and ``Trainer.update``.

``trainer.step(batch_size)`` is ``allreduce_grads()`` (sum the gradients of all contexts)
followed by ``update(batch_size)``. Splitting the two lets you look at, and change, the summed
gradients in between -- here to clip their global norm, the usual recipe for RNNs. The Trainer
must be created with ``update_on_kvstore=False`` for this.

Run: ``python examples/gradient_clipping.py [--ctx cpu:0,cpu:1]``
"""
import argparse

import numpy as np

import neogluon as mx
from neogluon import autograd, gluon, nd


def make_data(n=256, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 10).astype("float32")
    w = rng.randn(10, 1).astype("float32")
    y = (x @ w + 0.1 * rng.randn(n, 1)).astype("float32")
    return x, y


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ctx", default="cpu:0", help="comma-separated contexts, e.g. cpu:0,cpu:1")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--max-norm", type=float, default=1.0)
    args = p.parse_args(argv)
    ctxs = [mx.cpu(int(c.split(":")[1])) if c.startswith("cpu") else mx.gpu(int(c.split(":")[1]))
            for c in args.ctx.split(",")]

    mx.random.seed(0)
    x, y = make_data()
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), batch_size=32, shuffle=False)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(32, activation="tanh"), gluon.nn.Dense(1))
    net.initialize(mx.init.Xavier(), ctx=ctxs)
    net.hybridize()
    loss_fn = gluon.loss.L2Loss()
    # A large learning rate: without clipping, the first steps would overshoot.
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5},
                            update_on_kvstore=False)

    clipped_steps = 0
    for epoch in range(args.epochs):
        total, count = 0.0, 0
        for data, label in loader:
            xs = gluon.utils.split_and_load(data, ctxs)
            ys = gluon.utils.split_and_load(label, ctxs)
            with autograd.record():
                losses = [loss_fn(net(a), b) for a, b in zip(xs, ys)]
            autograd.backward(losses)

            trainer.allreduce_grads()   # every context now holds the summed gradients
            # step() will divide by the batch size, so clip the sum at max_norm * batch size.
            # Each context holds its own copy of the sum: clip every copy the same way.
            params = [p for p in net.collect_params().values() if p.grad_req != "null"]
            for c in ctxs:
                norm = gluon.utils.clip_global_norm([p.grad(c) for p in params],
                                                    args.max_norm * data.shape[0])
            clipped_steps += norm > args.max_norm * data.shape[0]
            trainer.update(data.shape[0])
            total += sum(float(l.sum().asscalar()) for l in losses)
            count += data.shape[0]
        print(f"epoch {epoch + 1}: mean L2 loss {total / count:.4f}")

    # Every context applied the same clipped update, so the copies of the weights agree.
    for p in net.collect_params().values():
        ref = p.data(ctxs[0]).asnumpy()
        for c in ctxs[1:]:
            np.testing.assert_array_equal(p.data(c).asnumpy(), ref)
    final = total / count
    print(f"{clipped_steps} step(s) clipped to global norm {args.max_norm}; final loss "
          f"{final:.4f}")
    assert final < 0.5, "training with clipped gradients should fit this linear data"
    return final


if __name__ == "__main__":
    main()
