"""``mx.misc``: MXNet's legacy learning-rate schedulers (called with the iteration number).

The schedulers optimizers use are in :mod:`neogluon.lr_scheduler`; these older ones compute
``base_lr * factor ** (iteration // step)`` from the iteration count they are called with.
"""
import logging
import math

__all__ = ["LearningRateScheduler", "FactorScheduler"]


class LearningRateScheduler:
    """Base class: ``scheduler(iteration)`` returns the learning rate; ``base_lr`` is 0.01."""

    def __init__(self):
        self.base_lr = 0.01

    def __call__(self, iteration):
        raise NotImplementedError("must override this")


class FactorScheduler(LearningRateScheduler):
    """The learning rate multiplied by ``factor`` (< 1) every ``step`` (>= 1) iterations."""

    def __init__(self, step, factor=0.1):
        super().__init__()
        if step < 1:
            raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor >= 1.0:
            raise ValueError("Factor must be less than 1 to make lr reduce")
        self.step = step
        self.factor = factor
        self.old_lr = self.base_lr
        self.init = False

    def __call__(self, iteration):
        if not self.init:
            self.init = True
            self.old_lr = self.base_lr
        lr = self.base_lr * math.pow(self.factor, int(iteration / self.step))
        if lr != self.old_lr:
            self.old_lr = lr
            logging.info("At Iteration [%d]: Swith to new learning rate %.5f", iteration, lr)
        return lr
