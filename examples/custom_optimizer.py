"""A custom optimizer, registered by name and used by a Trainer.

Subclass ``mx.optimizer.Optimizer``, implement ``create_state`` and ``update``, and decorate
the class with ``@mx.optimizer.register``: ``gluon.Trainer(params, 'yourname', {...})`` then
finds it by its lower-cased class name, exactly as in MXNet 1.x.

The example writes SGD with momentum by hand, with MXNet's update rule

    mom    = momentum * mom - lr * (rescale_grad * grad + wd * weight)
    weight = weight + mom

and checks that it trains exactly like the built-in ``'sgd'``.

Run: ``python examples/custom_optimizer.py``
"""
import numpy as np

import neogluon as mx
from neogluon import autograd, gluon, nd


@mx.optimizer.register
class HandMomentumSGD(mx.optimizer.Optimizer):
    """SGD with momentum, written with NDArray operations.

    Parameters
    ----------
    momentum : float, default 0.9
    **kwargs
        learning_rate, wd, rescale_grad, clip_gradient, ... as for any Optimizer.
    """

    def __init__(self, momentum=0.9, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state(self, index, weight):
        return nd.zeros(weight.shape, ctx=weight.context, dtype=weight.dtype)

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        g = grad * self.rescale_grad
        if self.clip_gradient is not None:
            g = nd.clip(g, -self.clip_gradient, self.clip_gradient)
        state[:] = self.momentum * state - lr * (g + wd * weight)
        weight[:] = weight + state


def train(optimizer_name, steps=20):
    rng = np.random.RandomState(0)
    x = nd.array(rng.randn(64, 8).astype("float32"))
    y = nd.array((rng.randn(64) > 0).astype("float32"))
    mx.random.seed(0)
    net = gluon.nn.Dense(2)
    net.initialize(mx.init.Xavier())
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), optimizer_name,
                            {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3})
    for _ in range(steps):
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(x.shape[0])
    return net, float(loss.mean().asscalar()), trainer


def main():
    net, loss, trainer = train("handmomentumsgd")
    print(f"'handmomentumsgd' -> {type(trainer.optimizer).__name__}, final loss {loss:.5f}")
    assert isinstance(trainer.optimizer, HandMomentumSGD)
    ref, ref_loss, _ = train("sgd")
    print(f"built-in 'sgd' final loss {ref_loss:.5f}")
    for a, b in zip(net.collect_params().values(), ref.collect_params().values()):
        np.testing.assert_allclose(a.data().asnumpy(), b.data().asnumpy(), rtol=1e-5,
                                   atol=1e-6)
    # create() finds it too, case-insensitively
    assert isinstance(mx.optimizer.create("HandMomentumSGD", learning_rate=0.1),
                      HandMomentumSGD)
    print("custom optimizer: same weights as the built-in SGD. OK")


if __name__ == "__main__":
    main()
