"""The Gluon Trainer tutorial (MXNet 1.x docs), as a script that checks what it shows.

From MXNet, only the import line changes: ``import neogluon as mx`` and
``from neogluon import gluon, nd, autograd, optimizer``.

Run: ``python examples/trainer_tutorial.py``
"""
import numpy as np

import neogluon as mx
from neogluon import autograd, gluon, nd, optimizer


def main():
    mx.random.seed(1)

    # A one-output perceptron, an L2 loss and a batch of 8 random samples.
    loss = gluon.loss.L2Loss()
    net = gluon.nn.Dense(1)
    net.initialize()
    batch_size = 8
    X = nd.random.uniform(shape=(batch_size, 4))
    y = nd.random.uniform(shape=(batch_size,))

    def forward_backward():
        with autograd.record():
            l = loss(net(X), y)
        l.backward()

    forward_backward()

    # Plain SGD with learning rate 1: Trainer picks the optimizer by name.
    trainer = gluon.Trainer(net.collect_params(), optimizer="sgd",
                            optimizer_params={"learning_rate": 1})
    cur_weight = net.weight.data().copy()
    trainer.step(batch_size)   # step() divides the gradient by the batch size
    print("weight after one SGD step:\n", net.weight.data())

    # SGD's rule: w <- w - lr / batch_size * grad
    expected = cur_weight - net.weight.grad() * 1 / batch_size
    np.testing.assert_allclose(net.weight.data().asnumpy(), expected.asnumpy(), rtol=1e-6)
    print("matches w - lr/b * grad:", expected)

    # An optimizer instance works too, here Adam.
    optim = optimizer.Adam(learning_rate=1)
    trainer = gluon.Trainer(net.collect_params(), optim)
    before = net.weight.data().copy()
    forward_backward()
    trainer.step(batch_size)
    print("weight after one Adam step:\n", net.weight.data())
    # Adam's first step moves every weight by about lr (m/sqrt(v) = sign(grad)).
    moved = np.abs((net.weight.data() - before).asnumpy())
    np.testing.assert_allclose(moved, 1.0, rtol=1e-3)

    # The learning rate can be read and changed.
    print("learning rate:", trainer.learning_rate)
    assert trainer.learning_rate == 1
    trainer.set_learning_rate(0.1)
    print("after set_learning_rate(0.1):", trainer.learning_rate)
    assert trainer.learning_rate == 0.1

    # Schedules live in mx.lr_scheduler: halve the rate every 2 updates.
    schedule = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=0.1)
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": 0.1, "lr_scheduler": schedule})
    rates = []
    for _ in range(6):
        forward_backward()
        trainer.step(batch_size)
        rates.append(trainer.learning_rate)
    print("learning rate under FactorScheduler(step=2, factor=0.5):", rates)
    assert rates[-1] < rates[0]
    print("trainer tutorial: OK")


if __name__ == "__main__":
    main()
