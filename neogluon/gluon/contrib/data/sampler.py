"""Contributed samplers."""
from __future__ import annotations

from ...data import sampler

__all__ = ["IntervalSampler"]


class IntervalSampler(sampler.Sampler):
    """Visit ``[0, length)`` in strides of ``interval``.

    Parameters
    ----------
    length : int
        Number of items.
    interval : int
        The stride; at most ``length``.
    rollover : bool, default True
        After reaching the end, start again from the next skipped item (1, then 2, ...) until
        every item was visited. With False, only ``0, interval, 2*interval, ...``.

    Examples
    --------
    >>> list(IntervalSampler(13, interval=3))
    [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    >>> list(IntervalSampler(13, interval=3, rollover=False))
    [0, 3, 6, 9, 12]
    """

    def __init__(self, length, interval, rollover=True):
        assert interval <= length, \
            f"Interval {interval} must be smaller than or equal to length {length}"
        self._length = length
        self._interval = interval
        self._rollover = rollover

    def __iter__(self):
        starts = range(self._interval) if self._rollover else range(1)
        for start in starts:
            yield from range(start, self._length, self._interval)

    def __len__(self):
        # MXNet reports the full length even with rollover=False.
        return self._length
