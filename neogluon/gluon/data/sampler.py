"""Samplers: iterables of dataset indices (or of batches of indices)."""
from __future__ import annotations

import numpy as np

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "FilterSampler", "BatchSampler"]

_LAST_BATCH = ("keep", "discard", "rollover")


class Sampler:
    """Base class for samplers: subclasses define ``__iter__`` and ``__len__``."""

    def __iter__(self):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """The indices ``start, start + 1, ..., start + length - 1`` in order.

    Parameters
    ----------
    length : int
        Number of indices.
    start : int, default 0
        The first index.
    """

    def __init__(self, length, start=0):
        self._length = length
        self._start = start

    def __iter__(self):
        return iter(range(self._start, self._start + self._length))

    def __len__(self):
        return self._length


class RandomSampler(Sampler):
    """A random permutation of ``[0, length)``, drawn anew on every pass.

    The permutation comes from numpy's global generator (``np.random.shuffle``), as in MXNet,
    so ``np.random.seed`` fixes the order.

    Parameters
    ----------
    length : int
        Number of indices.
    """

    def __init__(self, length):
        self._length = length

    def __iter__(self):
        indices = np.arange(self._length)
        np.random.shuffle(indices)
        return iter(indices)

    def __len__(self):
        return self._length


class FilterSampler(Sampler):
    """The indices of the samples of ``dataset`` for which ``fn(sample)`` is true.

    Parameters
    ----------
    fn : callable
        Takes a sample, returns a bool.
    dataset : Dataset
        The dataset to filter (read once, when the sampler is made).
    """

    def __init__(self, fn, dataset):
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i, sample in enumerate(dataset) if fn(sample)]

    def __iter__(self):
        return iter(self._indices)

    def __len__(self):
        return len(self._indices)


def _check_last_batch(last_batch):
    if last_batch not in _LAST_BATCH:
        raise ValueError("last_batch must be one of 'keep', 'discard', or 'rollover', "
                         f"but got {last_batch}")


class BatchSampler(Sampler):
    """Group the indices of another sampler into lists of ``batch_size``.

    Parameters
    ----------
    sampler : Sampler
        The source of indices.
    batch_size : int
        Size of each mini-batch.
    last_batch : {'keep', 'discard', 'rollover'}, default 'keep'
        What to do with a final incomplete batch: return it (``keep``), drop it
        (``discard``), or carry its indices over to the start of the next pass
        (``rollover``).

    Examples
    --------
    >>> list(BatchSampler(SequentialSampler(10), 3, 'keep'))
    [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    """

    def __init__(self, sampler, batch_size, last_batch="keep"):
        self._sampler = sampler
        self._batch_size = batch_size
        self._last_batch = last_batch
        self._prev = []

    def __iter__(self):
        batch, self._prev = self._prev, []
        size = self._batch_size
        for i in self._sampler:
            batch.append(i)
            if len(batch) == size:
                yield batch
                batch = []
        if batch:
            _check_last_batch(self._last_batch)
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "rollover":
                self._prev = batch

    def __len__(self):
        _check_last_batch(self._last_batch)
        if self._last_batch == "keep":
            return (len(self._sampler) + self._batch_size - 1) // self._batch_size
        if self._last_batch == "discard":
            return len(self._sampler) // self._batch_size
        return (len(self._prev) + len(self._sampler)) // self._batch_size
