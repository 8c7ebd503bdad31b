"""Learning-rate schedules, as in MXNet 1.9.1's ``mx.lr_scheduler``.

A scheduler is called with the optimizer's ``num_update`` and returns the learning rate for that
update. Like MXNet's, the factor-style schedules keep state (``base_lr`` decays as updates pass),
so :meth:`LRScheduler.state_dict` / :meth:`LRScheduler.load_state_dict` expose that state for
``Updater.get_states(dump_optimizer=True)``.
"""
from __future__ import annotations

import logging
from math import cos, pi

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler",
           "CosineScheduler"]


class LRScheduler:
    """Base class of learning-rate schedules.

    Parameters
    ----------
    base_lr : float, default 0.01
        The learning rate after warm-up.
    warmup_steps : int, default 0
        Number of warm-up updates.
    warmup_begin_lr : float, default 0
        The learning rate at update 0 of the warm-up.
    warmup_mode : {'linear', 'constant'}, default 'linear'
        'linear' rises from ``warmup_begin_lr`` to ``base_lr``; 'constant' stays at
        ``warmup_begin_lr``.
    """

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"):
        self.base_lr = base_lr
        if not isinstance(warmup_steps, int):
            raise AssertionError(f"warmup_steps must be an int, got {warmup_steps!r}")
        self.warmup_steps = warmup_steps
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        if self.warmup_begin_lr > self.warmup_final_lr:
            raise ValueError("Base lr has to be higher than warmup_begin_lr")
        if self.warmup_steps < 0:
            raise ValueError("Warmup steps has to be positive or 0")
        if warmup_mode not in ("linear", "constant"):
            raise ValueError("Supports only linear and constant modes of warmup")
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update):
        """The learning rate at ``num_update`` (< ``warmup_steps``) during warm-up."""
        if num_update >= self.warmup_steps:
            raise AssertionError(f"num_update {num_update} is past warmup_steps "
                                 f"{self.warmup_steps}")
        if self.warmup_mode == "linear":
            rise = (self.warmup_final_lr - self.warmup_begin_lr) * float(num_update) \
                / float(self.warmup_steps)
            return self.warmup_begin_lr + rise
        if self.warmup_mode == "constant":
            return self.warmup_begin_lr
        raise ValueError(f"Invalid warmup mode {self.warmup_mode}")

    def __call__(self, num_update):
        raise NotImplementedError("must override this")

    # -------------------------------------------------------------- state for checkpoints
    def state_dict(self):
        """The scheduler's attributes that are plain numbers, strings or lists of numbers.

        Returns
        -------
        dict
            JSON-serialisable; :meth:`load_state_dict` restores it.
        """
        out = {}
        for k, v in vars(self).items():
            if isinstance(v, (bool, int, float, str)) or v is None:
                out[k] = v
            elif isinstance(v, (list, tuple)) and all(isinstance(x, (int, float)) for x in v):
                out[k] = list(v)
        return {"class": type(self).__name__, "attrs": out}

    def load_state_dict(self, state):
        """Restore what :meth:`state_dict` returned.

        Raises
        ------
        ValueError
            When the state is for another scheduler class or is malformed.
        """
        if not isinstance(state, dict) or not isinstance(state.get("attrs"), dict):
            raise ValueError("lr_scheduler state must be a dict with an 'attrs' dict")
        if state.get("class") != type(self).__name__:
            raise ValueError(f"lr_scheduler state is for {state.get('class')!r}, not "
                             f"{type(self).__name__!r}")
        for k, v in state["attrs"].items():
            setattr(self, k, v)


class FactorScheduler(LRScheduler):
    """Multiply the learning rate by ``factor`` every ``step`` updates.

    Parameters
    ----------
    step : int
        Updates between two reductions (>= 1).
    factor : float, default 1
        Reduction factor (<= 1).
    stop_factor_lr : float, default 1e-8
        The learning rate never goes below this.
    base_lr, warmup_steps, warmup_begin_lr, warmup_mode
        See :class:`LRScheduler`.
    """

    def __init__(self, step, factor=1, stop_factor_lr=1e-8, base_lr=0.01, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise ValueError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        # The decay is applied lazily and remembered, so the schedule only moves forward.
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                logging.info("Update[%d]: now learning rate arrived at %0.5e, will not "
                             "change in the future", num_update, self.base_lr)
            else:
                logging.info("Update[%d]: Change learning rate to %0.5e", num_update,
                             self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiply the learning rate by ``factor`` after each update count listed in ``step``.

    Parameters
    ----------
    step : list of int
        Increasing update counts (each >= 1).
    factor : float, default 1
        Reduction factor (<= 1).
    base_lr, warmup_steps, warmup_begin_lr, warmup_mode
        See :class:`LRScheduler`.
    """

    def __init__(self, step, factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not (isinstance(step, list) and len(step) >= 1):
            raise AssertionError("step must be a non-empty list of ints")
        for i, s in enumerate(step):
            if i != 0 and step[i] <= step[i - 1]:
                raise ValueError("Schedule step must be an increasing integer list")
            if s < 1:
                raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise ValueError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind <= len(self.step) - 1:
            if num_update > self.step[self.cur_step_ind]:
                self.count = self.step[self.cur_step_ind]
                self.cur_step_ind += 1
                self.base_lr *= self.factor
                logging.info("Update[%d]: Change learning rate to %0.5e", num_update,
                             self.base_lr)
            else:
                return self.base_lr
        return self.base_lr


class PolyScheduler(LRScheduler):
    """Polynomial decay from ``base_lr`` to ``final_lr`` over ``max_update`` updates.

    Parameters
    ----------
    max_update : int
        Updates at which the learning rate reaches ``final_lr`` (>= 1).
    base_lr : float, default 0.01
        Learning rate after warm-up.
    pwr : float, default 2
        Power of the decay.
    final_lr : float, default 0
        Learning rate after ``max_update``.
    warmup_steps, warmup_begin_lr, warmup_mode
        See :class:`LRScheduler`.
    """

    def __init__(self, max_update, base_lr=0.01, pwr=2, final_lr=0, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(max_update, int):
            raise AssertionError(f"max_update must be an int, got {max_update!r}")
        if max_update < 1:
            raise ValueError("maximum number of updates must be strictly positive")
        self.power = pwr
        self.base_lr_orig = self.base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = self.max_update - self.warmup_steps

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            frac = float(num_update - self.warmup_steps) / float(self.max_steps)
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * \
                pow(1 - frac, self.power)
        return self.base_lr


class CosineScheduler(LRScheduler):
    """Cosine decay from ``base_lr`` to ``final_lr`` over ``max_update`` updates.

    Parameters
    ----------
    max_update : int
        Updates at which the learning rate reaches ``final_lr`` (>= 1).
    base_lr : float, default 0.01
        Learning rate after warm-up.
    final_lr : float, default 0
        Learning rate after ``max_update``.
    warmup_steps, warmup_begin_lr, warmup_mode
        See :class:`LRScheduler`.
    """

    def __init__(self, max_update, base_lr=0.01, final_lr=0, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(max_update, int):
            raise AssertionError(f"max_update must be an int, got {max_update!r}")
        if max_update < 1:
            raise ValueError("maximum number of updates must be strictly positive")
        self.base_lr_orig = base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = self.max_update - self.warmup_steps

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            # MXNet's order of operations ((pi * steps) / max_steps): the same double
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * \
                (1 + cos(pi * (num_update - self.warmup_steps) / self.max_steps)) / 2
        return self.base_lr
