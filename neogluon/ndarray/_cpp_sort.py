"""The order in which MXNet 1.9.1's CPU ``topk`` / ``argsort`` / ``sort`` leave equal values.

MXNet sorts an index array per row with the C++ standard library (``std::sort`` when
``k * 8 > n``, else ``std::partial_sort`` for the first ``k``), comparing the values with
``<`` (ascending) or ``>`` (descending). Neither algorithm is stable: above 16 elements,
equal values come out in an order decided by the algorithm's steps (introsort's median-of-three
partitions, heap sifts), and GluonCV relies on that order (Faster R-CNN's RCNNTargetSampler
sorts a mask of a few distinct values; CenterNet's decoder takes the top 40 of a heatmap whose
scores may tie). This module replays GNU libstdc++'s algorithms (the library MXNet 1.9.1's
Linux wheels are built with) step by step on Python lists, so ties come out in MXNet's order.

Only rows where ties can change the result are replayed (the callers check); a row of distinct
values sorts the same with any correct algorithm.
"""
from __future__ import annotations

_THRESHOLD = 16   # libstdc++'s _S_threshold: introsort leaves runs this short to insertion sort


def _lg(n):
    return n.bit_length() - 1


class _Sorter:
    """Sorts ``idx`` (a list of positions into ``key``) in place by ``key[i] < key[j]``."""

    __slots__ = ("a", "k")

    def __init__(self, idx, key):
        self.a = idx
        self.k = key

    # -- heap (std::make_heap / __adjust_heap / __push_heap / __pop_heap) -------------------
    def _push_heap(self, first, hole, top, value):
        a, k = self.a, self.k
        parent = (hole - 1) // 2
        while hole > top and k[a[first + parent]] < k[value]:
            a[first + hole] = a[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        a[first + hole] = value

    def _adjust_heap(self, first, hole, length, value):
        a, k = self.a, self.k
        top = hole
        child = hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if k[a[first + child]] < k[a[first + child - 1]]:
                child -= 1
            a[first + hole] = a[first + child]
            hole = child
        if (length & 1) == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            a[first + hole] = a[first + child - 1]
            hole = child - 1
        self._push_heap(first, hole, top, value)

    def _make_heap(self, first, last):
        length = last - first
        if length < 2:
            return
        parent = (length - 2) // 2
        while True:
            self._adjust_heap(first, parent, length, self.a[first + parent])
            if parent == 0:
                return
            parent -= 1

    def _pop_heap(self, first, last, result):
        a = self.a
        value = a[result]
        a[result] = a[first]
        self._adjust_heap(first, 0, last - first, value)

    def partial_sort(self, first, middle, last):
        """std::partial_sort: heap-select the smallest ``middle - first``, then heap-sort them."""
        a, k = self.a, self.k
        self._make_heap(first, middle)
        for i in range(middle, last):
            if k[a[i]] < k[a[first]]:
                self._pop_heap(first, middle, i)
        while middle - first > 1:
            middle -= 1
            self._pop_heap(first, middle, middle)

    # -- introsort (std::sort) -------------------------------------------------------------
    def _median_to_first(self, result, x, y, z):
        a, k = self.a, self.k
        kx, ky, kz = k[a[x]], k[a[y]], k[a[z]]
        if kx < ky:
            if ky < kz:
                m = y
            elif kx < kz:
                m = z
            else:
                m = x
        elif kx < kz:
            m = x
        elif ky < kz:
            m = z
        else:
            m = y
        a[result], a[m] = a[m], a[result]

    def _partition_pivot(self, first, last):
        a, k = self.a, self.k
        mid = first + (last - first) // 2
        self._median_to_first(first, first + 1, mid, last - 1)
        pivot = k[a[first]]
        lo, hi = first + 1, last
        while True:
            while k[a[lo]] < pivot:
                lo += 1
            hi -= 1
            while pivot < k[a[hi]]:
                hi -= 1
            if not lo < hi:
                return lo
            a[lo], a[hi] = a[hi], a[lo]
            lo += 1

    def _introsort_loop(self, first, last, depth):
        while last - first > _THRESHOLD:
            if depth == 0:
                self.partial_sort(first, last, last)
                return
            depth -= 1
            cut = self._partition_pivot(first, last)
            self._introsort_loop(cut, last, depth)
            last = cut

    def _linear_insert(self, pos):
        a, k = self.a, self.k
        val = a[pos]
        kv = k[val]
        nxt = pos - 1
        while kv < k[a[nxt]]:
            a[pos] = a[nxt]
            pos = nxt
            nxt -= 1
        a[pos] = val

    def _insertion_sort(self, first, last):
        a, k = self.a, self.k
        for i in range(first + 1, last):
            if k[a[i]] < k[a[first]]:
                val = a[i]
                a[first + 1:i + 1] = a[first:i]
                a[first] = val
            else:
                self._linear_insert(i)

    def sort(self, first, last):
        if last - first < 2:
            return
        self._introsort_loop(first, last, 2 * _lg(last - first))
        if last - first > _THRESHOLD:
            self._insertion_sort(first, first + _THRESHOLD)
            for i in range(first + _THRESHOLD, last):
                self._linear_insert(i)
        else:
            self._insertion_sort(first, last)


def mxnet_order(values, k, ascending):
    """Positions of the first ``k`` of ``values`` (a list of numbers) as MXNet 1.9.1's CPU
    TopKSort orders them: ``std::sort`` of all when ``k * 8 > n``, else
    ``std::partial_sort`` of the first ``k``; ``<`` ascending, ``>`` descending."""
    n = len(values)
    # '>' on the values is '<' on their negations (also for -0.0 and NaN, which compare
    # false either way)
    key = list(values) if ascending else [-v for v in values]
    idx = list(range(n))
    s = _Sorter(idx, key)
    if k * 8 > n:
        s.sort(0, n)
    else:
        s.partial_sort(0, k, n)
    return idx[:k]
