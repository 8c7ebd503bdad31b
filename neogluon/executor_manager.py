"""``mx.executor_manager``: MXNet 1.x's legacy data-parallel executor manager, which
``mx.model.FeedForward`` trains with (``DataParallelExecutorManager`` and its
``DataParallelExecutorGroup``), and the batch-splitting helper Module's executor group uses
too (``_split_input_slice``)."""
from __future__ import annotations

import logging

import numpy as np

from . import ndarray as nd
from .base import MXNetError, MXNetValueError, mx_real_t
from .context import cpu
from .io import DataDesc

__all__ = ["DataParallelExecutorGroup", "DataParallelExecutorManager"]


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


def _check_arguments(symbol):
    """Refuse a symbol in which two arguments, or two auxiliary states, have the same name
    (two layers left to the same default name): their arrays could not be told apart.

    Raises
    ------
    ValueError
        Naming the repeated name and listing the symbol's names.
    """
    arg_names = symbol.list_arguments()
    _refuse_repeats(arg_names, "argument", f"arguments are {arg_names}")
    aux_names = symbol.list_auxiliary_states()
    _refuse_repeats(aux_names, "auxiliary param",
                    f"arguments are {arg_names}, auxiliary params are {aux_names}")


def _refuse_repeats(names, kind, listing):
    seen = set()
    for name in names:
        if name in seen:
            raise MXNetValueError(f'Find duplicated {kind} name "{name}", please make the '
                                  "weight name non-duplicated(using name arguments), "
                                  f"{listing}")
        seen.add(name)


def _load_general(data, targets):
    """Copy each source array into its targets: one array whole, or ``(slice, array)``
    pairs, each array taking its slice of the batch (axis 0).

    Raises
    ------
    ValueError
        When a source's batch is not the size the executors were bound for.
    """
    for d_src, d_targets in zip(data, targets):
        if not isinstance(d_src, nd.NDArray):
            d_src = nd.array(d_src)
        if isinstance(d_targets, nd.NDArray):
            d_src.copyto(d_targets)
            continue
        expected = d_targets[-1][0].stop
        if d_src.shape[0] != expected:
            raise MXNetValueError(f"Batch size miss match. Expected {expected}, got "
                                  f"{d_src.shape[0]} (the executors were bound for batches "
                                  f"of {expected}; every batch, validation data included, "
                                  "must have that size)")
        for slice_idx, d_dst in d_targets:
            part = d_src if (slice_idx.start in (0, None) and slice_idx.stop == expected) \
                else d_src[slice_idx]
            part.copyto(d_dst)


def _load_data(batch, targets):
    """Copy ``batch.data`` into the executors' data arrays (see :func:`_load_general`)."""
    _load_general(batch.data, targets)


def _load_label(batch, targets):
    """Copy ``batch.label`` into the executors' label arrays (see :func:`_load_general`)."""
    _load_general(batch.label, targets)


def _bind_exec(sym, ctx, input_shapes, param_names, need_grad=False, base_exec=None,
               shared_data_arrays=None, input_types=None, logger=logging):
    """Bind ``sym`` on ``ctx`` for ``input_shapes``, optionally sharing arrays (bucketing).

    Parameters
    ----------
    sym : Symbol
    ctx : Context
    input_shapes : dict of str to tuple
        The data and label shapes; the other shapes are inferred.
    param_names : list of str
        The arguments that are parameters: taken from ``base_exec`` when given.
    need_grad : bool or set of str
        ``True``: gradients for every argument that is not an input; a set: for those.
    base_exec : Executor, optional
        Its parameter, gradient and auxiliary arrays are reused (they must have the shapes
        and dtypes this symbol needs).
    shared_data_arrays : dict of str to NDArray, optional
        Input arrays by name, reused (reshaped) when large enough, else replaced by a
        bigger one; new ones are added.
    input_types : dict of str to dtype, optional
        Default float32 for every input.
    logger : logging.Logger or module

    Returns
    -------
    Executor
    """
    arg_names = sym.list_arguments()
    aux_names = sym.list_auxiliary_states()
    arg_shapes, _, aux_shapes = sym.infer_shape(**input_shapes)
    if arg_shapes is None:
        raise MXNetValueError(f"_bind_exec: the input shapes {input_shapes} do not determine "
                              "every argument's shape")
    if input_types is None:
        input_types = {name: mx_real_t for name in input_shapes}
    arg_types, _, aux_types = sym.infer_type(**input_types)
    if arg_types is None:
        raise MXNetValueError(f"_bind_exec: the input types {input_types} do not determine "
                              "every argument's type")

    if need_grad is False:
        need_grad = set()
    elif need_grad is True:
        need_grad = set(arg_names) - set(input_shapes)
    elif not isinstance(need_grad, set):
        raise MXNetValueError(f"_bind_exec: need_grad must be a bool or a set of names, got "
                              f"{type(need_grad).__name__}")
    grad_req = {name: ("write" if name in need_grad else "null") for name in arg_names}
    grad_arrays = {} if need_grad else None

    arg_arrays = []
    for name, shape, dtype in zip(arg_names, arg_shapes, arg_types):
        if name in param_names:
            if base_exec is None:
                arr = nd.zeros(shape, ctx, dtype=dtype)
                if name in need_grad:
                    grad_arrays[name] = nd.zeros(shape, ctx, dtype=dtype)
            else:
                arr = base_exec.arg_dict[name]
                _check_shared(name, arr, shape, dtype)
                if name in need_grad:
                    grad_arrays[name] = base_exec.grad_dict[name]
        else:
            arr = _input_array(name, shape, dtype, ctx, shared_data_arrays, logger)
        arg_arrays.append(arr)

    if base_exec is None:
        aux_arrays = [nd.zeros(s, ctx, dtype=t) for s, t in zip(aux_shapes, aux_types)]
    else:
        aux_arrays = list(base_exec.aux_arrays)
        for name, arr, shape, dtype in zip(aux_names, aux_arrays, aux_shapes, aux_types):
            _check_shared(name, arr, shape, dtype)
    return sym.bind(ctx=ctx, args=arg_arrays, args_grad=grad_arrays, aux_states=aux_arrays,
                    grad_req=grad_req, shared_exec=base_exec)


def _check_shared(name, arr, shape, dtype):
    if tuple(arr.shape) != tuple(shape) or np.dtype(arr.dtype) != np.dtype(dtype):
        raise MXNetValueError(f"_bind_exec: the shared array {name!r} is {arr.shape} "
                              f"{np.dtype(arr.dtype).name} but this symbol needs {tuple(shape)} "
                              f"{np.dtype(dtype).name}")


def _input_array(name, shape, dtype, ctx, shared_data_arrays, logger):
    """The array of a data or label input: a view of the shared one when that is large
    enough (bucketing binds the largest bucket first), else a new one."""
    if shared_data_arrays is None:
        return nd.zeros(shape, ctx, dtype=dtype)
    if name in shared_data_arrays:
        shared = shared_data_arrays[name]
        if int(np.prod(shared.shape)) >= int(np.prod(shape)):
            if np.dtype(shared.dtype) != np.dtype(dtype):
                raise MXNetValueError(f"_bind_exec: input {name!r} was allocated as "
                                      f"{np.dtype(shared.dtype).name} but this symbol needs "
                                      f"{np.dtype(dtype).name}")
            # MXNet's reshape to fewer elements views the front of the buffer; neogluon's
            # reshape keeps the size, so view the front explicitly
            size = int(np.prod(shape))
            return shared.reshape((-1,))[0:size].reshape(shape)
        logger.warning('bucketing: data "%s" has a shape %s, which is larger than already '
                       "allocated shape %s. Need to re-allocate. Consider putting "
                       "default_bucket_key to be the bucket taking the largest input for "
                       "better memory sharing.", name, tuple(shape), tuple(shared.shape))
    arr = nd.zeros(shape, ctx, dtype=dtype)
    shared_data_arrays[name] = arr
    return arr


def _provided_types(provided):
    """Name to dtype of provide_data/provide_label entries (float32 for plain pairs)."""
    return {x.name if isinstance(x, DataDesc) else x[0]:
            (x.dtype if isinstance(x, DataDesc) else mx_real_t) for x in provided}


class DataParallelExecutorGroup:
    """Training executors of one symbol, one per context, each bound to its slice of the
    batch (the legacy group ``mx.model.FeedForward`` trains with; Module has its own in
    ``mx.module.executor_group``).

    Parameters
    ----------
    sym : Symbol
    arg_names : list of str
        ``sym.list_arguments()``.
    param_names : list of str
        The trainable parameters (they get gradients).
    ctx : list of Context
    slices : list of slice
        The part of each batch each context takes (axis 0).
    train_data : DataIter or DataBatch
        Anything with ``provide_data`` and ``provide_label``: the input names and shapes.
    shared_group : DataParallelExecutorGroup, optional
        Share its parameters, gradients, auxiliary states and input memory (bucketing).
    """

    def __init__(self, sym, arg_names, param_names, ctx, slices, train_data, shared_group=None):
        _check_arguments(sym)
        if shared_group is None:
            self.shared_data_arrays = [{} for _ in ctx]
        else:
            self.shared_data_arrays = shared_group.shared_data_arrays
        provided = list(train_data.provide_data) + list(train_data.provide_label or [])
        self.data_names = [x[0] for x in train_data.provide_data]
        self.label_names = [x[0] for x in train_data.provide_label or []]
        self.aux_names = sym.list_auxiliary_states()
        self.param_idx = [i for i, name in enumerate(arg_names) if name in param_names]
        self.param_names = [arg_names[i] for i in self.param_idx]
        unknown = [x[0] for x in provided if x[0] not in arg_names]
        if unknown:
            raise MXNetValueError(f"the data iterator provides {unknown}, which the symbol "
                                  f"does not take (its arguments: {', '.join(arg_names)})")
        types = _provided_types(provided)

        self.train_execs = []
        for i, context in enumerate(ctx):
            part = slices[i].stop - slices[i].start
            shapes = {x[0]: (part,) + tuple(x[1][1:]) for x in provided}
            shared_exec = None if shared_group is None else shared_group.train_execs[i]
            self.train_execs.append(_bind_exec(
                sym, context, shapes, self.param_names, need_grad=True, base_exec=shared_exec,
                shared_data_arrays=self.shared_data_arrays[i], input_types=types))

        self.data_arrays = [[(slices[i], e.arg_dict[name]) for i, e in enumerate(self.train_execs)]
                            for name in self.data_names]
        self.label_arrays = [[(slices[i], e.arg_dict[name])
                              for i, e in enumerate(self.train_execs)]
                             for name in self.label_names]
        self.param_arrays = [[e.arg_arrays[i] for e in self.train_execs] for i in self.param_idx]
        self.grad_arrays = [[e.grad_arrays[i] for e in self.train_execs] for i in self.param_idx]
        self.aux_arrays = [[e.aux_arrays[i] for e in self.train_execs]
                           for i in range(len(self.aux_names))]
        self.slices = slices

    def load_data_batch(self, data_batch):
        """Copy the batch's data and labels into the executors (each its slice)."""
        _load_data(data_batch, self.data_arrays)
        _load_label(data_batch, self.label_arrays)

    def forward(self, is_train=False):
        """Forward on every executor."""
        for texec in self.train_execs:
            texec.forward(is_train=is_train)

    def backward(self):
        """Backward on every executor (the outputs are losses)."""
        for texec in self.train_execs:
            texec.backward()

    def update_metric(self, metric, labels, pre_sliced=False):
        """Accumulate ``metric`` over each executor's outputs and its slice of ``labels``
        (``labels[i]`` already is executor i's when ``pre_sliced``)."""
        for i, (texec, islice) in enumerate(zip(self.train_execs, self.slices)):
            labels_slice = labels[i] if pre_sliced else [label[islice] for label in labels]
            metric.update(labels_slice, texec.outputs)


class DataParallelExecutorManager:
    """The executors ``mx.model.FeedForward`` trains with: one group for the symbol (and,
    with ``sym_gen``, one more per bucket, sharing the first group's arrays).

    Parameters
    ----------
    symbol : Symbol
    ctx : list of Context
    train_data : DataIter
        Its ``batch_size`` is split over the contexts; its ``provide_data`` and
        ``provide_label`` give the input shapes.
    arg_names, param_names, aux_names : list of str
        The symbol's arguments, the trainable ones among them, its auxiliary states.
    work_load_list : list of number, optional
        Relative share of each context (equal by default).
    logger : logging.Logger or module, optional
    sym_gen : callable, optional
        ``sym_gen(bucket_key)`` gives the symbol of a bucket (``train_data`` then has a
        ``default_bucket_key``).
    """

    def __init__(self, symbol, ctx, train_data, arg_names, param_names, aux_names,
                 work_load_list=None, logger=None, sym_gen=None):
        if logger is None:
            logger = logging
        logger.info("Start training with %s", str(ctx))
        if work_load_list is None:
            work_load_list = [1] * len(ctx)
        if not isinstance(work_load_list, list) or len(work_load_list) != len(ctx):
            raise MXNetValueError(f"Invalid settings for work load: work_load_list must be a "
                                  f"list with one entry per context ({len(ctx)}), got "
                                  f"{work_load_list!r}")
        self.slices = _split_input_slice(train_data.batch_size, work_load_list)
        self.arg_names = arg_names
        self.param_names = param_names
        self.aux_names = aux_names
        self.ctx = ctx
        self.symbol = symbol
        self.execgrp = DataParallelExecutorGroup(symbol, self.arg_names, self.param_names,
                                                 self.ctx, self.slices, train_data)
        self.sym_gen = sym_gen
        # the group of the batch last loaded
        self.curr_execgrp = None
        if self.sym_gen is not None:
            self.execgrp_bucket = {train_data.default_bucket_key: self.execgrp}

    def install_monitor(self, monitor):
        """Install ``monitor`` on every training executor."""
        if self.sym_gen is not None:
            raise NotImplementedError("Monitoring is not implemented for bucketing")
        for train_exec in self.execgrp.train_execs:
            monitor.install(train_exec)

    def set_params(self, arg_params, aux_params):
        """Copy parameter and auxiliary-state values into every executor."""
        for texec in self.execgrp.train_execs:
            texec.copy_params_from(arg_params, aux_params)

    def copy_to(self, arg_params, aux_params):
        """Write the executors' values, averaged over the contexts, into ``arg_params`` and
        ``aux_params`` (in place, in their dtypes)."""
        for name, block in zip(self.param_names, self.param_arrays):
            _mean_into(block, arg_params[name])
        for name, block in zip(self.aux_names, self.aux_arrays):
            _mean_into(block, aux_params[name])

    @property
    def param_arrays(self):
        """Per parameter, its array on each context (shared by every bucket's group)."""
        return self.execgrp.param_arrays

    @property
    def grad_arrays(self):
        """Per parameter, its gradient on each context (shared by every bucket's group)."""
        return self.execgrp.grad_arrays

    @property
    def aux_arrays(self):
        """Per auxiliary state, its array on each context (shared by every bucket's
        group)."""
        return self.execgrp.aux_arrays

    def load_data_batch(self, data_batch):
        """Copy a batch into the executors of its bucket (binding that bucket's group the
        first time it is seen)."""
        if self.sym_gen is not None:
            key = data_batch.bucket_key
            if key not in self.execgrp_bucket:
                self.execgrp_bucket[key] = DataParallelExecutorGroup(
                    self.sym_gen(key), self.arg_names, self.param_names, self.ctx,
                    self.slices, data_batch, shared_group=self.execgrp)
            self.curr_execgrp = self.execgrp_bucket[key]
        else:
            self.curr_execgrp = self.execgrp
        self.curr_execgrp.load_data_batch(data_batch)

    def _current(self, what):
        if self.curr_execgrp is None:
            raise MXNetError(f"DataParallelExecutorManager.{what}: load a batch first "
                             "(load_data_batch)")
        return self.curr_execgrp

    def forward(self, is_train=False):
        """Forward on the executors of the batch last loaded."""
        self._current("forward").forward(is_train=is_train)

    def backward(self):
        """Backward on the executors of the batch last loaded."""
        self._current("backward").backward()

    def update_metric(self, metric, labels, pre_sliced=False):
        """Accumulate ``metric`` over the outputs of the batch last loaded."""
        self._current("update_metric").update_metric(metric, labels, pre_sliced)


def _mean_into(block, dst):
    # Every context's copy should be equal; the mean is what MXNet writes back all the same.
    mean = sum(w.copyto(cpu()) for w in block) / len(block)
    mean.astype(dst.dtype).copyto(dst)
