"""DataLoader: mini-batches from a Dataset, in the main process, threads or worker processes.

Worker processes are torch's (``torch.utils.data.DataLoader`` with MXNet's batch sampler and
batchify function plugged in): batches come back through shared memory, in sampler order. With
``thread_pool=True`` a thread pool does the work instead.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import gc
import math
import multiprocessing
import threading
import warnings

import numpy as np
import torch

from ...context import Context, cpu_pinned, current_context
from ...ndarray.ndarray import NDArray, _new, _new_on, array as _nd_array, stack as _nd_stack
from . import sampler as _sampler
from ... import util as _util
from ... import random as _random
from ...numpy.multiarray import _np_tree

__all__ = ["DataLoader", "default_batchify_fn", "default_mp_batchify_fn"]

_CPU_SHARED = Context("cpu_shared", 0)


def default_batchify_fn(data):
    """Collate a list of samples into a batch.

    NDArrays are stacked along a new first axis; tuples are collated element-wise into a list;
    anything else goes through ``numpy.asarray`` and becomes an NDArray of numpy's dtype.
    """
    first = data[0]
    if isinstance(first, NDArray):
        return _nd_stack(*data)
    if isinstance(first, tuple):
        return [default_batchify_fn(list(field)) for field in zip(*data)]
    arr = np.asarray(data)
    return _nd_array(arr, dtype=arr.dtype)


def _array_fields(dataset):
    """The arrays behind ``dataset`` when default batching can gather whole batches at once:
    ``(fields, single)`` for an array or an ArrayDataset of numeric numpy arrays and NDArrays,
    else None."""
    from .dataset import ArrayDataset

    def ok(a):
        if isinstance(a, NDArray) and a.stype == "default":
            return True
        return type(a) is np.ndarray and a.dtype.kind in "biuf" and a.dtype.itemsize > 0

    if type(dataset) is ArrayDataset:
        fields = dataset._data
        if all(ok(a) for a in fields):
            return fields, len(fields) == 1
        return None
    if ok(dataset) and len(dataset.shape) > 0:
        return [dataset], True
    return None


def _gather_batch(spec, indices):
    """``default_batchify_fn([dataset[i] for i in indices])`` by one gather per field: the
    same values, dtypes and structure."""
    fields, single = spec
    idx = np.asarray(indices, dtype=np.int64)
    out = []
    for a in fields:
        if isinstance(a, NDArray):
            t = a._t.detach()
            r = torch.index_select(t, 0, torch.from_numpy(idx).to(t.device))
            if r.dim() == 1 and type(a) is NDArray and not _util.is_np_array():
                # items of a 1-D NDArray are (1,)-shaped arrays, so the batch is (n, 1)
                r = r.reshape(-1, 1)
            out.append(_new(r, a._ctx))
        else:
            # np.take makes the one copy the batch needs; wrap it without another
            b = np.take(a, idx, axis=0)
            ctx = current_context()
            t = torch.from_numpy(b) if b.ndim else torch.from_numpy(b.reshape(1))
            if ctx.torch_device.type != "cpu":
                t = t.to(ctx.torch_device)
            out.append(_new(t, ctx))
    return out[0] if single else out


def _to_shared_ctx(batch):
    if isinstance(batch, NDArray):
        return _new_on(batch._t, _CPU_SHARED)
    if isinstance(batch, list):
        return [_to_shared_ctx(b) for b in batch]
    return batch


def default_mp_batchify_fn(data):
    """:func:`default_batchify_fn` for worker pools: the arrays are reported on the
    ``cpu_shared(0)`` context, as MXNet's shared-memory batches are."""
    return _to_shared_ctx(default_batchify_fn(data))


class _Packed:
    """An NDArray on its way out of a worker process: torch moves the tensor through shared
    memory, and the context comes back as MXNet reports it (``cpu_shared``)."""

    __slots__ = ("t",)

    def __init__(self, t):
        self.t = t

    def __reduce__(self):
        return (_Packed, (self.t,))


def _pack(obj):
    if isinstance(obj, NDArray):
        t = obj._t
        if t.requires_grad:
            t = t.detach()
        return _Packed(t)
    if isinstance(obj, list):
        return [_pack(o) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_pack(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _pack(v) for k, v in obj.items()}
    return obj


def _unpack(obj):
    if isinstance(obj, _Packed):
        return _new_on(obj.t, _CPU_SHARED)
    if isinstance(obj, list):
        return [_unpack(o) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_unpack(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _unpack(v) for k, v in obj.items()}
    return obj


class _WorkerCollate:
    """The collate function torch runs inside each worker (a class, so it pickles)."""

    def __init__(self, batchify_fn):
        self.batchify_fn = batchify_fn

    def __call__(self, samples):
        return _pack(self.batchify_fn(samples))


def _as_in_context(data, ctx):
    if isinstance(data, NDArray):
        return data.as_in_context(ctx)
    if isinstance(data, (list, tuple)):
        return [_as_in_context(d, ctx) for d in data]
    return data


def _pin(data, ctx):
    """Move a batch to ``cpu_pinned``: page-locked when CUDA is present (for fast, async
    host-to-device copies), plain CPU memory otherwise."""
    if isinstance(data, NDArray):
        t = data._t
        if t.device.type == "cpu" and torch.cuda.is_available():
            t = t.pin_memory()
        elif t.device.type != "cpu":
            t = t.to("cpu")
        return _new_on(t, ctx)
    if isinstance(data, (list, tuple)):
        return [_pin(d, ctx) for d in data]
    return data


class _BatchSamplerView(torch.utils.data.Sampler):
    """Lets torch iterate MXNet's batch sampler (in the main process, so a ``rollover``
    remainder is carried over exactly as without workers)."""

    def __init__(self, batch_sampler):
        self.batch_sampler = batch_sampler
        self.idle = False   # passes yield nothing (while the workers are started)

    def __iter__(self):
        return iter(()) if self.idle else iter(self.batch_sampler)

    def __len__(self):
        return len(self.batch_sampler)


def _timeout_error(timeout, threads):
    msg = (f"Worker timed out after {timeout} seconds. This might be caused by a slow "
           "transform: increase timeout to allow slower data loading in each worker.")
    if not threads:
        msg += (" If timeout is large enough, shared memory may be exhausted: reduce "
                "num_workers or increase the shared memory of the system.")
    return multiprocessing.TimeoutError(msg)


def _worker_base_seed():
    """Seed of the generator torch derives the workers' seeds (torch, numpy, random) from.

    It is a function of numpy's global state, read without drawing from it (numpy's stream
    decides the shuffle order, as in MXNet, and must not move). So, as with MXNet's forked
    workers, which inherit numpy's state: ``np.random.seed`` makes the workers' random draws
    repeat, unseeded runs differ, and loaders started at the same numpy state draw alike.
    """
    import hashlib
    state = np.random.get_state()
    h = hashlib.sha256(state[1].tobytes())
    h.update(np.array([state[2]], dtype=np.int64).tobytes())
    return int.from_bytes(h.digest()[:8], "little") % 2**63


class DataLoader:
    """Load mini-batches of data from a dataset.

    Parameters
    ----------
    dataset : Dataset
        The source of samples (numpy arrays and NDArrays work directly).
    batch_size : int
        Size of each mini-batch. Required unless ``batch_sampler`` is given.
    shuffle : bool, default False
        Visit the samples in a new random order every epoch (numpy's global generator).
    sampler : Sampler
        The order of the samples. Give either ``sampler`` or ``shuffle``, not both.
    last_batch : {'keep', 'discard', 'rollover'}, default 'keep'
        What to do with a final incomplete batch (see :class:`BatchSampler`).
    batch_sampler : Sampler
        Yields lists of indices. When given, ``batch_size``, ``shuffle``, ``sampler`` and
        ``last_batch`` must not be.
    batchify_fn : callable
        Turns a list of samples into a batch; by default :func:`default_batchify_fn`
        (:func:`default_mp_batchify_fn` when ``num_workers > 0``).
    num_workers : int, default 0
        Number of worker processes (or threads, with ``thread_pool``) that load and batchify
        samples. 0 loads in the main process.
    pin_memory : bool, default False
        Return batches on the ``cpu_pinned`` context (page-locked memory where CUDA is
        available), which makes copies to a GPU faster.
    pin_device_id : int, default 0
        The device id of the ``cpu_pinned`` context.
    prefetch : int, default ``2 * num_workers``
        Number of batches requested ahead from the workers.
    thread_pool : bool, default False
        Use threads instead of processes for the workers.
    timeout : int, default 120
        Seconds to wait for a worker to deliver a batch before raising
        ``multiprocessing.TimeoutError``.
    auto_reload : bool, default False
        Start fetching the next epoch's first batches as soon as an epoch ends.

    Notes
    -----
    Batches come in the order of the batch sampler whatever the number of workers. Worker
    processes are started once, on the first iteration, and reused for later epochs. Arrays
    made by worker processes report the ``cpu_shared(0)`` context, as in MXNet.
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None,
                 batch_sampler=None, batchify_fn=None, num_workers=0, pin_memory=False,
                 pin_device_id=0, prefetch=None, thread_pool=False, timeout=120,
                 auto_reload=False):
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._thread_pool = thread_pool
        self._timeout = timeout
        assert timeout > 0, f"timeout must be positive, given {timeout}"

        if batch_sampler is None:
            if batch_size is None:
                raise ValueError("batch_size must be specified unless batch_sampler is "
                                 "specified")
            if sampler is None:
                if shuffle:
                    sampler = _sampler.RandomSampler(len(dataset))
                else:
                    sampler = _sampler.SequentialSampler(len(dataset))
            elif shuffle:
                raise ValueError("shuffle must not be specified if sampler is specified")
            batch_sampler = _sampler.BatchSampler(sampler, batch_size,
                                                  last_batch if last_batch else "keep")
        elif batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise ValueError("batch_size, shuffle, sampler and last_batch must not be "
                             "specified if batch_sampler is specified.")

        self._batch_sampler = batch_sampler
        self._num_workers = num_workers if num_workers >= 0 else 0
        self._prefetch = max(0, int(prefetch) if prefetch is not None else 2 * self._num_workers)
        if batchify_fn is None:
            batchify_fn = default_mp_batchify_fn if num_workers > 0 else default_batchify_fn
        self._batchify_fn = batchify_fn
        self._torch_loader = None
        self._passes = 0        # passes over _torch_loader's workers not finished
        self._executor = None
        self._lock = threading.Lock()
        self.auto_reload = auto_reload
        self._iter = None
        if self._num_workers > 0 and not thread_pool:
            self._start_workers()
        if auto_reload:
            self.refresh()

    def _start_workers(self):
        """Fork the worker processes now, as MXNet's DataLoader starts its worker pool when
        it is made: the first pass finds them ready (d2l makes its loaders before the first
        epoch; starting 4 workers took 0.2-0.3 s of that epoch). An empty pass over torch's
        persistent loader starts them without drawing the first pass's order."""
        with _starting_workers():
            loader = self._new_torch_loader(persistent=True)
            loader.batch_sampler.idle = True
            try:
                for _ in loader:
                    pass
            finally:
                loader.batch_sampler.idle = False
        self._torch_loader = loader

    # ---------------------------------------------------------------- iteration
    def __iter__(self):
        if self._iter is None:
            self.refresh()
        it, self._iter = self._iter, None
        for batch in it:
            yield batch
        if self._iter is None and self.auto_reload:
            self.refresh()

    def __len__(self):
        return len(self._batch_sampler)

    def refresh(self):
        """Prepare a fresh iterator over the data (the next epoch)."""
        self._iter = self._make_iter()

    def clean(self):
        """Drop a prepared iterator; the next ``iter()`` prepares a new one."""
        self._iter = None

    def _make_iter(self):
        if self._num_workers == 0:
            return self._same_process_iter()
        if self._thread_pool:
            return self._thread_iter()
        return self._process_iter()

    def _finish(self, batch):
        if self._pin_memory:
            batch = _pin(batch, cpu_pinned(self._pin_device_id))
        if _util.is_np_array():
            batch = _np_tree(batch)
        return batch

    def _same_process_iter(self):
        dataset, batchify = self._dataset, self._batchify_fn
        fields = _array_fields(dataset) if batchify is default_batchify_fn else None
        for indices in self._batch_sampler:
            if fields is not None:
                yield self._finish(_gather_batch(fields, indices))
            else:
                yield self._finish(batchify([dataset[i] for i in indices]))

    def _thread_iter(self):
        with self._lock:
            if self._executor is None:
                self._executor = concurrent.futures.ThreadPoolExecutor(
                    self._num_workers, thread_name_prefix="neogluon-dataloader")
        pool, dataset, batchify = self._executor, self._dataset, self._batchify_fn
        pending = []
        batches = iter(self._batch_sampler)

        def push():
            indices = next(batches, None)
            if indices is not None:
                pending.append(pool.submit(lambda ix: batchify([dataset[i] for i in ix]),
                                           indices))

        for _ in range(self._prefetch):
            push()
        while True:
            push()
            if not pending:
                return
            future = pending.pop(0)
            try:
                batch = future.result(self._timeout)
            except concurrent.futures.TimeoutError:
                raise _timeout_error(self._timeout, True) from None
            yield self._finish(batch)

    def _new_torch_loader(self, persistent):
        return torch.utils.data.DataLoader(
            self._dataset, batch_sampler=_BatchSamplerView(self._batch_sampler),
            num_workers=self._num_workers, collate_fn=_WorkerCollate(self._batchify_fn),
            prefetch_factor=max(1, math.ceil(self._prefetch / self._num_workers)),
            persistent_workers=persistent, timeout=self._timeout,
            worker_init_fn=_random._follow_torch_seed,
            generator=torch.Generator().manual_seed(_worker_base_seed()))

    def _process_iter(self):
        with self._lock, _starting_workers():
            if self._passes:
                # a pass over the kept workers is still under way (``zip(loader, loader)``,
                # an iterator kept while another starts): torch's persistent loader has one
                # iterator, which a new pass would reset under the first one, so this pass
                # gets workers of its own, as each of MXNet's iterators does
                loader, shared = self._new_torch_loader(persistent=False), False
            else:
                if self._torch_loader is None:
                    self._torch_loader = self._new_torch_loader(persistent=True)
                loader, shared = self._torch_loader, True
                self._passes += 1
            it = iter(loader)   # (starts the worker processes on a loader's first pass)
        try:
            while True:
                try:
                    batch = next(it)
                except StopIteration:
                    return
                except BaseException as err:
                    # Stop the workers now, as MXNet terminates its pool: left to the garbage
                    # collector, torch's shutdown stalls for seconds on half-finalised queues.
                    if shared:
                        self._shutdown_workers(terminate=True)
                    else:
                        _stop_workers(it, terminate=True)
                    if isinstance(err, RuntimeError) and "timed out" in str(err):
                        raise _timeout_error(self._timeout, False) from None
                    raise
                yield self._finish(_unpack(batch))
        finally:
            if shared:
                with self._lock:
                    self._passes -= 1

    def _shutdown_workers(self, terminate=False):
        loader = self._torch_loader
        self._torch_loader = None
        it = getattr(loader, "_iterator", None)
        if it is not None:
            loader._iterator = None
            _stop_workers(it, terminate)

    def __del__(self):
        if getattr(self, "_torch_loader", None) is not None:
            try:
                self._shutdown_workers()
            except Exception:  # noqa: BLE001 - interpreter shutdown; nothing left to do
                pass
        executor = getattr(self, "_executor", None)
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)


@contextlib.contextmanager
def _starting_workers():
    """Around making and first iterating a torch loader with worker processes: torch warns
    when num_workers exceeds the CPUs it counts, where MXNet starts the workers it is asked
    for without a word (scripts say num_workers=4 everywhere); and the parent's objects are
    frozen while the workers are forked (``_frozen_heap``)."""
    with warnings.catch_warnings(), _frozen_heap():
        warnings.filterwarnings("ignore", message="This DataLoader will create")
        yield


@contextlib.contextmanager
def _frozen_heap():
    """Keep the garbage collector of forked workers off the parent's objects.

    A worker forked from the training process shares its memory copy-on-write; its first
    garbage collections walk every object inherited from the parent and write their headers,
    so each page holding Python objects is copied, per worker, while the first batches are
    due: d2l's NiN (4 workers, a ~1 GB parent) spent 1.1-1.4 s of its first epoch waiting
    for batches, 0.1 s in later epochs. Objects frozen when the fork happens are outside the
    workers' collections (``gc.freeze``; Python's documentation recommends it before fork);
    the parent unfreezes them at once and collects as before. The first epoch then waited
    0.3 s. Does nothing when the collector is already frozen by the program.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _stop_workers(it, terminate=False):
    """Shut down the workers of a torch multiprocess iterator (``terminate``: after an error,
    when they may be stuck in user code: do not wait for them)."""
    if terminate:
        for w in getattr(it, "_workers", ()):
            if w.is_alive():
                w.terminate()
    shutdown = getattr(it, "_shutdown_workers", None)
    if shutdown is not None:
        shutdown()


# ----------------------------------------------------------------- MXNet's pool-based workers
# MXNet 1.x's DataLoader ran its workers as a ``multiprocessing.Pool`` and handed each batch
# back pickled. neogluon's DataLoader uses torch's workers instead, but libraries written for
# MXNet (GluonCV's RandomTransformDataLoader, GluonNLP's loaders) import these names and
# subclass ``_MultiWorkerIter`` with their own pool and worker function, so they are kept with
# MXNet's signatures and behaviour.
from multiprocessing.reduction import ForkingPickler  # noqa: E402
import io as _io  # noqa: E402
import pickle as _pickle  # noqa: E402

_worker_dataset = None


def _worker_initializer(dataset, active_shape=None, active_array=None):
    """Pool initializer: the dataset the worker function reads (one per worker process)."""
    global _worker_dataset
    _worker_dataset = dataset


def _worker_fn(samples, batchify_fn, dataset=None):
    """Pool worker: the batch of ``samples`` from the initializer's dataset, pickled."""
    batch = batchify_fn([_worker_dataset[i] for i in samples])
    buf = _io.BytesIO()
    ForkingPickler(buf, _pickle.HIGHEST_PROTOCOL).dump(batch)
    return buf.getvalue()


def _thread_worker_fn(samples, batchify_fn, dataset):
    """Thread-pool worker: the batch of ``samples`` (no pickling)."""
    return batchify_fn([dataset[i] for i in samples])


class _MultiWorkerIter:
    """Batches computed by ``worker_pool`` (``apply_async(worker_fn, (samples, batchify_fn,
    dataset))``), returned in sampler order with up to ``prefetch`` batches in flight; bytes
    results are unpickled (process pools), others used as they are (thread pools)."""

    def __init__(self, worker_pool, batchify_fn, batch_sampler, pin_memory=False,
                 pin_device_id=0, worker_fn=_worker_fn, prefetch=0, dataset=None,
                 data_loader=None, timeout=120):
        self._worker_pool = worker_pool
        self._batchify_fn = batchify_fn
        self._batch_sampler = batch_sampler
        self._data_buffer = {}
        self._rcvd_idx = 0
        self._sent_idx = 0
        self._iter = iter(self._batch_sampler)
        self._worker_fn = worker_fn
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._dataset = dataset
        self._data_loader = data_loader
        self._timeout = timeout
        for _ in range(prefetch):
            self._push_next()

    def __len__(self):
        return len(self._batch_sampler)

    def _push_next(self):
        r = next(self._iter, None)
        if r is None:
            return
        self._data_buffer[self._sent_idx] = self._worker_pool.apply_async(
            self._worker_fn, (r, self._batchify_fn, self._dataset))
        self._sent_idx += 1

    def __next__(self):
        self._push_next()
        if self._rcvd_idx == self._sent_idx:
            if self._data_buffer:
                raise RuntimeError("_MultiWorkerIter: batches left in the buffer at the end")
            raise StopIteration
        if self._rcvd_idx not in self._data_buffer:
            raise RuntimeError(f"_MultiWorkerIter: batch {self._rcvd_idx} was never sent")
        ret = self._data_buffer.pop(self._rcvd_idx)
        try:
            got = ret.get(self._timeout)
        except multiprocessing.TimeoutError:
            raise RuntimeError(f"_MultiWorkerIter: a worker took more than {self._timeout}s "
                               "for one batch (raise DataLoader's timeout if that is "
                               "expected)") from None
        batch = _pickle.loads(got) if isinstance(got, (bytes, bytearray)) else got
        if self._pin_memory:
            batch = _pin(batch, cpu_pinned(self._pin_device_id))
        self._rcvd_idx += 1
        return batch

    def next(self):
        return self.__next__()

    def __iter__(self):
        return self
