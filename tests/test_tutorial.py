"""The Trainer tutorial (seed 003) run with ``import neogluon as mx``, checking its maths.

The cells are the tutorial's own; the checks are the rules the tutorial states: plain SGD is
``w - lr/b * grad``, Adam through an optimizer instance follows MXNet's Adam formula, and
``learning_rate`` / ``set_learning_rate`` read and change the rate. The fixed-data variant is
compared with MXNet 1.9.1 in test_trainer.py::test_tutorial_maths.
"""
import numpy as np

import neogluon as mx
from neogluon import gluon, nd, autograd, optimizer


def test_tutorial_runs_and_reproduces_its_maths():
    mx.random.seed(0)
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
    trainer = gluon.Trainer(net.collect_params(),
                            optimizer='sgd', optimizer_params={'learning_rate': 1})
    cur_weight = net.weight.data().copy()
    trainer.step(batch_size)
    updated = net.weight.data()
    # w = w - eta/b * grad, to the bit (1/8 is exact in float32)
    expected = cur_weight - net.weight.grad() * 1 / batch_size
    np.testing.assert_array_equal(updated.asnumpy(), expected.asnumpy())
    assert not np.array_equal(updated.asnumpy(), cur_weight.asnumpy())

    optim = optimizer.Adam(learning_rate=1)
    trainer = gluon.Trainer(net.collect_params(), optim)
    forward_backward()
    w0 = net.weight.data().asnumpy().astype(np.float64)
    g = net.weight.grad().asnumpy().astype(np.float64) / batch_size
    trainer.step(batch_size)
    # MXNet's Adam, first step: m = (1-b1) g, v = (1-b2) g^2,
    # w -= lr * sqrt(1-b2)/(1-b1) * m / (sqrt(v) + eps)
    b1, b2, eps, lr = 0.9, 0.999, 1e-8, 1.0
    m, v = (1 - b1) * g, (1 - b2) * g * g
    want = w0 - lr * np.sqrt(1 - b2) / (1 - b1) * m / (np.sqrt(v) + eps)
    np.testing.assert_allclose(net.weight.data().asnumpy(), want, rtol=1e-5, atol=1e-6)

    assert trainer.learning_rate == 1
    trainer.set_learning_rate(0.1)
    assert trainer.learning_rate == 0.1
    assert optim.learning_rate == 0.1
