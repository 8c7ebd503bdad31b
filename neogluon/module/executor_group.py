"""``DataParallelExecutorGroup``: one executor per context, each bound to its slice of the
batch (``work_load_list`` decides the slice sizes), as MXNet 1.x's
``mxnet.module.executor_group``. The parameters of the executors are separate copies; the
Module keeps them equal through the KVStore or by updating each copy the same way."""
from __future__ import annotations

import logging
from collections import OrderedDict

from .. import context as ctx
from .. import ndarray as nd
from ..base import MXNetError, MXNetValueError
from ..executor_manager import _split_input_slice
from ..gluon._executor import _copy_into
from ..io import DataDesc
from ..ndarray.ndarray import NDArray, _DTYPE_MX_TO_NP

__all__ = ["DataParallelExecutorGroup"]


def _load_general(data, targets, major_axis):
    """Copy each source array into its targets: whole, or the slice each executor takes
    along the batch axis."""
    for d_src, d_targets, axis in zip(data, targets, major_axis):
        if isinstance(d_targets, NDArray):
            d_src.copyto(d_targets)
        elif isinstance(d_src, (list, tuple)):
            for src, dst in zip(d_src, d_targets):
                src.copyto(dst)
        else:
            for slice_idx, d_dst in d_targets:
                if axis >= 0:
                    n = d_src.shape[axis]
                    if slice_idx.start != 0 or n != slice_idx.stop:
                        part = d_src[slice_idx.start:slice_idx.stop] if axis == 0 else \
                            nd.slice_axis(d_src, axis=axis, begin=slice_idx.start,
                                          end=slice_idx.stop)
                        _copy_into(part, d_dst, "the batch's array")
                        continue
                _copy_into(d_src, d_dst, "the batch's array")


def _load_data(batch, targets, major_axis):
    if isinstance(batch, list):
        new_batch = [[b.data[i] for b in batch] for i in range(len(targets))]
        new_targets = [[dst for _, dst in t] for t in targets]
        _load_general(new_batch, new_targets, major_axis)
    else:
        _load_general(batch.data, targets, major_axis)


def _load_label(batch, targets, major_axis):
    if isinstance(batch, list):
        new_batch = [[b.label[i] for b in batch] for i in range(len(targets))]
        new_targets = [[dst for _, dst in t] for t in targets]
        _load_general(new_batch, new_targets, major_axis)
    else:
        _load_general(batch.label, targets, major_axis)


def _merge_multi_context(outputs, major_axis):
    """One array per output: the executors' parts concatenated along the batch axis (the
    first executor's array where the output has no batch axis)."""
    rets = []
    for tensors, axis in zip(outputs, major_axis):
        if axis >= 0 and len(tensors) > 1:
            first = tensors[0].context
            rets.append(nd.concat(*[t.as_in_context(first) for t in tensors], dim=axis))
        else:
            rets.append(tensors[0])
    return rets


def _prepare_group2ctxs(group2ctxs, ctx_len):
    """One group2ctx dict (or None) per executor, from a list of dicts or a dict of group to
    a context or a list of contexts."""
    if group2ctxs is None:
        return [None] * ctx_len
    if isinstance(group2ctxs, list):
        if len(group2ctxs) != ctx_len:
            raise MXNetValueError(f"length of group2ctxs should be {ctx_len}, got "
                                  f"{len(group2ctxs)}")
        return group2ctxs
    if isinstance(group2ctxs, dict):
        ret = [{} for _ in range(ctx_len)]
        for k, v in group2ctxs.items():
            if isinstance(v, ctx.Context):
                ctxs = [v] * ctx_len
            elif len(v) == 1:
                ctxs = list(v) * ctx_len
            else:
                if len(v) != ctx_len:
                    raise MXNetValueError(f"length of group2ctxs[{k}] should be {ctx_len} or 1, "
                                          f"got {len(v)}")
                ctxs = list(v)
            for i in range(ctx_len):
                ret[i][k] = ctxs[i]
        return ret
    raise MXNetValueError("group2ctxs should be a list of dict of str to context, or a dict of "
                          "str to context or list of context")


class DataParallelExecutorGroup:
    """Executors of one symbol on several contexts, splitting each batch among them.

    Parameters
    ----------
    symbol : Symbol
    contexts : list of Context
    workload : list of float
        Relative share of the batch per context.
    data_shapes, label_shapes : list of DataDesc or (name, shape)
    param_names : list of str
        The arguments that are parameters (shared when ``shared_group`` is given).
    for_training, inputs_need_grad : bool
    shared_group : DataParallelExecutorGroup, optional
        Share parameters and memory with it (bucketing).
    fixed_param_names : list of str, optional
        Parameters that get no gradient.
    grad_req : str, list or dict, default 'write'
    state_names : list of str, optional
    group2ctxs : dict or list, optional
    """

    def __init__(self, symbol, contexts, workload, data_shapes, label_shapes, param_names,
                 for_training, inputs_need_grad, shared_group=None, logger=logging,
                 fixed_param_names=None, grad_req="write", state_names=None, group2ctxs=None):
        self.param_names = param_names
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.symbol = symbol
        self.contexts = contexts
        self.workload = workload
        self.group2ctxs = _prepare_group2ctxs(group2ctxs, len(contexts))
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.logger = logger
        self._total_exec_bytes = 0
        self.fixed_param_names = list(fixed_param_names or [])
        self.state_names = list(state_names or [])
        if not for_training:
            grad_req = "null"
        data_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in data_shapes]
        if label_shapes is not None:
            label_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in label_shapes]
        data_names = [x.name for x in data_shapes]

        def default_req(name, req):
            if name in self.param_names:
                return "null" if name in self.fixed_param_names else req
            if name in data_names:
                return req if self.inputs_need_grad else "null"
            return "null"

        if isinstance(grad_req, str):
            self.grad_req = {k: default_req(k, grad_req) for k in self.arg_names}
        elif isinstance(grad_req, (list, tuple)):
            if len(grad_req) != len(self.arg_names):
                raise MXNetValueError(f"grad_req has {len(grad_req)} entries for "
                                      f"{len(self.arg_names)} arguments")
            self.grad_req = dict(zip(self.arg_names, grad_req))
        elif isinstance(grad_req, dict):
            self.grad_req = {k: default_req(k, "write") for k in self.arg_names}
            self.grad_req.update(grad_req)
        else:
            raise MXNetValueError("grad_req must be one of str, list, tuple, or dict.")

        if shared_group is not None:
            self.shared_data_arrays = shared_group.shared_data_arrays
        else:
            self.shared_data_arrays = [{} for _ in contexts]
        self.batch_size = None
        self.slices = None
        self.execs = []
        self._default_execs = None
        self.data_arrays = None
        self.label_arrays = None
        self.param_arrays = None
        self.state_arrays = None
        self.grad_arrays = None
        self.aux_arrays = None
        self.input_grad_arrays = None
        self.data_shapes = None
        self.label_shapes = None
        self.data_names = None
        self.label_names = None
        self.data_layouts = None
        self.label_layouts = None
        self.output_names = self.symbol.list_outputs()
        self.num_outputs = len(self.output_names)
        self.output_layouts = [DataDesc.get_batch_axis(self.symbol[i].attr("__layout__"))
                               for i in range(self.num_outputs)]
        self.bind_exec(data_shapes, label_shapes, shared_group)

    def decide_slices(self, data_shapes):
        """The batch axis of each input; sets ``batch_size`` and the per-context slices."""
        if not data_shapes:
            raise MXNetValueError("the module needs at least one data input")
        major_axis = [DataDesc.get_batch_axis(x.layout) for x in data_shapes]
        for (name, shape), axis in zip(data_shapes, major_axis):
            if axis == -1:
                continue
            batch_size = shape[axis]
            if self.batch_size is not None:
                if batch_size != self.batch_size:
                    raise MXNetValueError(f"all data must have the same batch size: "
                                          f"batch_size = {self.batch_size}, but {name} has "
                                          f"shape {shape}")
            else:
                self.batch_size = batch_size
                self.slices = _split_input_slice(self.batch_size, self.workload)
        return major_axis

    def _collect_arrays(self):
        if self.slices:
            self.data_arrays = [[(self.slices[i], e.arg_dict[name])
                                 for i, e in enumerate(self.execs)]
                                for name, _ in self.data_shapes]
        else:
            self.data_arrays = [[(slice(i, i + 1), e.arg_dict[name])
                                 for i, e in enumerate(self.execs)]
                                for name, _ in self.data_shapes]
        self.state_arrays = [[e.arg_dict[name] for e in self.execs] for name in self.state_names]
        if self.label_shapes is not None:
            self.label_arrays = [[(self.slices[i], e.arg_dict[name])
                                  for i, e in enumerate(self.execs)]
                                 for name, _ in self.label_shapes]
        else:
            self.label_arrays = None
        self.param_arrays = [[e.arg_arrays[i] for e in self.execs]
                             for i, name in enumerate(self.arg_names) if name in self.param_names]
        if self.for_training:
            self.grad_arrays = [[e.grad_arrays[i] for e in self.execs]
                                for i, name in enumerate(self.arg_names)
                                if name in self.param_names]
        else:
            self.grad_arrays = None
        data_names = [x[0] for x in self.data_shapes]
        if self.inputs_need_grad:
            self.input_grad_arrays = [[e.grad_arrays[self.arg_names.index(name)]
                                       for e in self.execs]
                                      for name in data_names if name in self.arg_names]
        else:
            self.input_grad_arrays = None
        self.aux_arrays = [[e.aux_arrays[i] for e in self.execs]
                           for i in range(len(self.aux_names))]

    def bind_exec(self, data_shapes, label_shapes, shared_group=None, reshape=False):
        """Bind (or, with ``reshape``, re-shape) one executor per context."""
        if not reshape and self.execs:
            raise MXNetError("bind_exec: the executors are already bound")
        self.batch_size = None
        self.data_layouts = self.decide_slices(data_shapes)
        if label_shapes is not None:
            self.label_layouts = self.decide_slices(label_shapes)
        for i in range(len(self.contexts)):
            data_shapes_i = self._sliced_shape(data_shapes, i, self.data_layouts)
            label_shapes_i = (self._sliced_shape(label_shapes, i, self.label_layouts)
                              if label_shapes is not None else [])
            if reshape:
                self.execs[i] = self._default_execs[i].reshape(
                    allow_up_sizing=True, **dict(data_shapes_i + label_shapes_i))
            else:
                self.execs.append(self._bind_ith_exec(i, data_shapes_i, label_shapes_i,
                                                      shared_group))
        self.data_shapes = data_shapes
        self.label_shapes = label_shapes
        self.data_names = [i.name for i in self.data_shapes]
        if label_shapes is not None:
            self.label_names = [i.name for i in self.label_shapes]
        self._collect_arrays()

    def reshape(self, data_shapes, label_shapes):
        """Re-shape the executors for new input shapes (sharing their arrays)."""
        if data_shapes == self.data_shapes and label_shapes == self.label_shapes:
            return
        if self._default_execs is None:
            self._default_execs = list(self.execs)
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    def set_params(self, arg_params, aux_params, allow_extra=False):
        """Copy parameter values into every executor."""
        for exec_ in self.execs:
            exec_.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params, aux_params):
        """Write the executors' average parameter values into ``arg_params``/``aux_params``."""
        for name, block in zip(self.param_names, self.param_arrays):
            _average_into(block, arg_params[name])
        for name, block in zip(self.aux_names, self.aux_arrays):
            _average_into(block, aux_params[name])

    def forward(self, data_batch, is_train=None):
        """Load the batch (sliced per context) and run every executor forward."""
        _load_data(data_batch, self.data_arrays, self.data_layouts)
        if is_train is None:
            is_train = self.for_training
        if isinstance(data_batch, list):
            if self.label_arrays is not None and data_batch and data_batch[0].label:
                _load_label(data_batch, self.label_arrays, self.label_layouts)
        elif self.label_arrays is not None and data_batch.label:
            _load_label(data_batch, self.label_arrays, self.label_layouts)
        for exec_ in self.execs:
            exec_.forward(is_train=is_train)

    def get_output_shapes(self):
        """(name, shape) of each output, with the whole batch."""
        shapes = [out.shape for out in self.execs[0].outputs]
        res = []
        for key, shape, axis in zip(self.symbol.list_outputs(), shapes, self.output_layouts):
            shape = list(shape)
            if axis >= 0:
                shape[axis] = self.batch_size
            res.append((key, tuple(shape)))
        return res

    def get_outputs(self, merge_multi_context=True, begin=0, end=None):
        """Outputs ``begin:end``: merged over contexts, or one list per output."""
        if end is None:
            end = self.num_outputs
        outputs = [[e.outputs[i] for e in self.execs] for i in range(begin, end)]
        if merge_multi_context:
            outputs = _merge_multi_context(outputs, self.output_layouts[begin:end])
        return outputs

    def get_states(self, merge_multi_context=True):
        """The state arrays (one list per state name)."""
        if merge_multi_context:
            raise MXNetError("merge_multi_context=True is not supported for get_states yet.")
        return self.state_arrays

    def set_states(self, states=None, value=None):
        """Set the states from arrays (``states``) or one number (``value``)."""
        if states is not None:
            if value is not None:
                raise MXNetValueError("Only one of states & value can be specified.")
            _load_general(states, self.state_arrays, (0,) * len(states))
        else:
            if value is None:
                raise MXNetValueError("At least one of states & value must be specified.")
            for d_dst in self.state_arrays:
                for dst in d_dst:
                    dst[:] = value

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the data inputs."""
        if not self.inputs_need_grad:
            raise MXNetError("get_input_grads: bind with inputs_need_grad=True")
        if merge_multi_context:
            return _merge_multi_context(self.input_grad_arrays, self.data_layouts)
        return self.input_grad_arrays

    def backward(self, out_grads=None):
        """Backward on every executor, each with its slice of ``out_grads``."""
        if not self.for_training:
            raise MXNetError("re-bind with for_training=True to run backward")
        if out_grads is None:
            out_grads = []
        elif isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        for i, (exec_, islice) in enumerate(zip(self.execs, self.slices)):
            part = []
            for grad, axis in zip(out_grads, self.output_layouts):
                if axis >= 0 and len(self.execs) > 1:
                    g = nd.slice_axis(grad, axis=axis, begin=islice.start, end=islice.stop)
                    part.append(g.as_in_context(self.contexts[i]))
                elif grad.context != self.contexts[i]:
                    part.append(grad.copyto(self.contexts[i]))
                else:
                    part.append(grad)
            exec_.backward(out_grads=part)

    def update_metric(self, eval_metric, labels, pre_sliced):
        """Accumulate ``eval_metric`` over each executor's outputs and label slice."""
        for current_exec, (texec, islice) in enumerate(zip(self.execs, self.slices)):
            if not pre_sliced:
                labels_slice = []
                for label, axis in zip(labels, self.label_layouts):
                    if axis == 0 and len(self.execs) > 1:
                        labels_slice.append(label[islice])
                    elif axis > 0 and len(self.execs) > 1:
                        labels_slice.append(nd.slice_axis(label, axis=axis, begin=islice.start,
                                                          end=islice.stop))
                    else:
                        labels_slice.append(label)
            else:
                labels_slice = labels[current_exec]
            labels_ = OrderedDict(zip(self.label_names or [], labels_slice))
            preds = OrderedDict(zip(self.output_names, texec.outputs))
            eval_metric.update_dict(labels_, preds)

    def _bind_ith_exec(self, i, data_shapes, label_shapes, shared_group):
        shared_exec = None if shared_group is None else shared_group.execs[i]
        context = self.contexts[i]
        input_shapes = dict(data_shapes)
        if label_shapes is not None:
            input_shapes.update(dict(label_shapes))
        input_types = {x.name: x.dtype for x in data_shapes}
        attr_dict = self.symbol.attr_dict()
        for name in self.symbol.list_inputs():
            declared = attr_dict.get(name, {}).get("__dtype__")
            if name in input_types and declared not in (None, "-1"):
                input_types[name] = _DTYPE_MX_TO_NP.get(int(declared), input_types[name])
        if label_shapes is not None:
            input_types.update({x.name: x.dtype for x in label_shapes})
        executor = self.symbol.simple_bind(ctx=context, grad_req=self.grad_req,
                                           type_dict=input_types,
                                           shared_arg_names=self.param_names,
                                           shared_exec=shared_exec,
                                           group2ctx=self.group2ctxs[i],
                                           shared_buffer=self.shared_data_arrays[i],
                                           **input_shapes)
        self._total_exec_bytes += int(executor.debug_str().split("\n")[-3].split()[1])
        return executor

    def _sliced_shape(self, shapes, i, major_axis):
        res = []
        for desc, axis in zip(shapes, major_axis):
            shape = list(desc.shape)
            if axis >= 0:
                shape[axis] = self.slices[i].stop - self.slices[i].start
            res.append(DataDesc(desc.name, tuple(shape), desc.dtype, desc.layout))
        return res

    def install_monitor(self, mon):
        """Install ``mon`` on every executor."""
        for exe in self.execs:
            mon.install(exe)


def _average_into(block, dst):
    if len(block) == 1:
        src = block[0]
    else:
        src = sum(w.copyto(ctx.cpu()) for w in block) / len(block)
    if src.dtype != dst.dtype:
        src = src.astype(dst.dtype)
    if src.stype != dst.stype:
        src = src.tostype(dst.stype)
    src.copyto(dst)
