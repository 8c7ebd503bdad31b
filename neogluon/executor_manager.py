"""``mx.executor_manager``: the batch-splitting helpers of MXNet 1.x's legacy data-parallel
executor manager, which Module's executor group and ``mx.model.FeedForward`` use."""
from __future__ import annotations

from .base import MXNetValueError

__all__ = []


def _split_input_slice(batch_size, work_load_list):
    """Split ``batch_size`` examples into consecutive slices, one per device, sized in
    proportion to ``work_load_list`` (the last slice takes what rounding leaves).

    Raises
    ------
    ValueError
        When a slice would be empty (more devices than examples).
    """
    total = sum(work_load_list)
    if total <= 0:
        raise MXNetValueError(f"work_load_list must add up to more than 0, got {work_load_list}")
    sizes = [round(w * batch_size / total) for w in work_load_list]
    if sum(sizes) < batch_size:
        sizes[-1] += batch_size - sum(sizes)
    slices = []
    end = 0
    for n in sizes:
        begin = int(min(end, batch_size))
        end = int(min(begin + n, batch_size))
        if begin >= end:
            raise MXNetValueError(f"Too many slices: a batch of {batch_size} cannot be split "
                                  f"over {len(work_load_list)} devices with work loads "
                                  f"{list(work_load_list)}; some would get no data")
        slices.append(slice(begin, end))
    return slices
