"""Leave MXNet formats: a neogluon block as a plain torch module, a ``torch.export`` program or
an ONNX file.

    from neogluon import export
    module = export.to_torch_module(net)                    # torch.nn.Module, torch tensors
    prog = export.to_torch_export(net, x)                   # torch.export.ExportedProgram
    export.to_onnx(net, "model.onnx", x)                    # ONNX, checked by torch.export

All three run the block in inference mode (autograd not recording, ``is_training()`` False:
Dropout passes its input through, BatchNorm uses its running statistics). A hybridized block
is traced through its imperative forward pass (the numbers are the same); a SymbolBlock
(imported from an MXNet ``-symbol.json``) is traced through its graph.

The torch module shares memory with the block's Parameters: a change made through one is seen
by the other. Call :meth:`Block.reset_ctx`/``collect_params().reset_ctx`` before converting
to put the block on another device.
"""
from __future__ import annotations

import inspect
import re

import numpy as np
import torch

from . import _fileio, autograd
from .base import MXNetError
from .context import current_context, context_of_device
from .ndarray.ndarray import NDArray, _new

__all__ = ["GluonModule", "to_torch_module", "to_torch_export", "to_onnx"]


def _block_desc(block):
    name = getattr(block, "name", None) or getattr(block, "_prefix", "") or "?"
    return f"{type(block).__name__} '{name}'"


def _attr_name(name, taken):
    """A valid, unused Python attribute name for the Gluon Parameter name ``name``."""
    attr = re.sub(r"\W", "_", name) or "param"
    if attr[0].isdigit():
        attr = "_" + attr
    base, i = attr, 1
    while attr in taken:
        attr = f"{base}_{i}"
        i += 1
    taken.add(attr)
    return attr


def _all_blocks(block):
    seen, out, stack = set(), [], [block]
    while stack:
        b = stack.pop()
        if id(b) in seen:
            continue
        seen.add(id(b))
        out.append(b)
        stack.extend(getattr(b, "_children", {}).values())
    return out


def _input_names(block):
    """The block's array inputs as (name, required) pairs, or None when they cannot be told
    (a ``*args`` forward)."""
    from .gluon.block import SymbolBlock, HybridBlock
    if isinstance(block, SymbolBlock):
        if getattr(block, "_graph", None) is not None:
            return None
        return [(s.name, True) for s in block._input_syms]
    own = ()
    if isinstance(block, HybridBlock) and type(block).forward is HybridBlock.forward:
        fn, skip = block.hybrid_forward, 1             # F
        own = set(getattr(block, "_reg_params", {}))  # arrive as keyword arguments
    else:
        fn, skip = block.forward, 0
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    names = []
    for p in list(sig.parameters.values())[skip:]:
        if p.kind == p.VAR_POSITIONAL:
            return None
        if p.kind in (p.VAR_KEYWORD, p.KEYWORD_ONLY) or p.name in own:
            continue
        names.append((p.name, p.default is p.empty))
    return names


def _check_arity(block, n, what):
    params = _input_names(block)
    if params is None:
        return
    required = [name for name, req in params if req]
    if len(required) <= n <= len(params):
        return
    want = (f"{len(required)}" if len(required) == len(params)
            else f"{len(required)} to {len(params)}")
    raise MXNetError(f"{what}: {_block_desc(block)} takes {want} input(s) "
                     f"{[name for name, _ in params]}, got {n} example input(s)")


def _to_tensor(x, i, what):
    if isinstance(x, NDArray):
        return x._t.detach()
    if isinstance(x, torch.Tensor):
        return x.detach()
    if isinstance(x, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(x))
    raise MXNetError(f"{what}: example input {i} is a {type(x).__name__}; give NDArrays, "
                     "numpy arrays or torch tensors")


def _flatten_out(out, flat, block, what):
    if isinstance(out, NDArray):
        flat.append(out._t)
        return 0
    if isinstance(out, (list, tuple)):
        return [_flatten_out(o, flat, block, what) for o in out]
    raise MXNetError(f"{what}: {_block_desc(block)} returned a {type(out).__name__}; only "
                     "NDArrays (or lists/tuples of them) can be exported")


def _rebuild(fmt, flat, pos):
    if fmt == 0:
        return flat[pos], pos + 1
    items = []
    for f in fmt:
        item, pos = _rebuild(f, flat, pos)
        items.append(item)
    return tuple(items), pos


class GluonModule(torch.nn.Module):
    """A plain ``torch.nn.Module`` that runs a neogluon block on torch tensors.

    The block's Parameters are registered on the module, under attribute names made from the
    Gluon names (``param_names`` maps attribute name -> Gluon name): learnable ones as
    ``torch.nn.Parameter`` (``requires_grad=False``: the module is for inference), auxiliary
    states (BatchNorm's running mean and variance) as buffers. They share memory with the
    block's Parameters. ``forward`` takes torch tensors and returns a tensor, or a tuple
    (nested as the block's output is) of tensors.
    """

    def __init__(self, block, ctx=None):
        super().__init__()
        from .gluon.block import Block
        if not isinstance(block, Block):
            raise MXNetError(f"to_torch_module: expected a neogluon Block, got "
                             f"{type(block).__name__}")
        object.__setattr__(self, "block", block)
        params = block.collect_params()
        if ctx is None:
            ctx = None
            for p in params.values():
                if p._data is not None:
                    ctx = p._data[0]._ctx
                    break
            ctx = ctx or current_context()
        self._gluon_ctx = ctx
        self.param_names = {}
        self._slots = []          # (attribute name, Parameter)
        taken = set(dir(self))
        aux = set()
        for b in _all_blocks(block):
            sym = getattr(b, "_symbol", None)
            if sym is not None and hasattr(sym, "list_auxiliary_states"):
                aux.update(sym.list_auxiliary_states())
        for name, p in params.items():
            if p._deferred_init:
                raise MXNetError(f"to_torch_module: Parameter '{name}' of {_block_desc(block)} "
                                 f"has unknown shape {p.shape}; run the block once on an input "
                                 "(or give the shapes) before converting it")
            if p._data is None:
                raise MXNetError(f"to_torch_module: Parameter '{name}' of {_block_desc(block)} "
                                 "is not initialized; call initialize() or load_parameters()")
            try:
                t = p.data(ctx)._t
            except Exception as err:  # noqa: BLE001 - say which parameter, on which context
                raise MXNetError(f"to_torch_module: Parameter '{name}' of "
                                 f"{_block_desc(block)} has no data on {ctx} ({err})") from None
            attr = _attr_name(name, taken)
            self.param_names[attr] = name
            if not p._differentiable or (p.grad_req == "null" and p.name in aux):
                self.register_buffer(attr, t)
            else:
                self.register_parameter(attr, torch.nn.Parameter(t, requires_grad=False))
            self._slots.append((attr, p))
        self.eval()

    def __repr__(self):
        return f"GluonModule({_block_desc(self.block)}, {len(self._slots)} parameters)"

    def forward(self, *inputs):
        block = self.block
        ctx = self._gluon_ctx
        args = []
        for i, x in enumerate(inputs):
            if isinstance(x, NDArray):
                x = x._t
            if not isinstance(x, torch.Tensor):
                raise MXNetError(f"{_block_desc(block)}: input {i} is a {type(x).__name__}, "
                                 "not a torch tensor")
            args.append(_new(x, ctx))
        # The module's tensors (fake ones while torch.export traces) stand in for the
        # Parameters' data for the duration of the call.
        arrays, saved = [], []
        for attr, p in self._slots:
            a = p.data(ctx)
            arrays.append(a)
            saved.append(a._t)
            a._t = getattr(self, attr)
        hybrid = [(b, b._active) for b in _all_blocks(block) if hasattr(b, "_active")]
        try:
            for b, _ in hybrid:
                b._active = False
            with autograd.predict_mode():
                out = block(*args)
        finally:
            for b, active in hybrid:
                b._active = active
            for a, t in zip(arrays, saved):
                a._t = t
        flat = []
        fmt = _flatten_out(out, flat, block, "forward")
        return _rebuild(fmt, flat, 0)[0]


def to_torch_module(block, ctx=None):
    """A :class:`GluonModule` (a ``torch.nn.Module``) running ``block`` in inference mode.

    Parameters
    ----------
    block : Block
        An initialized block (HybridBlock, hybridized or not, SymbolBlock, or Block).
    ctx : Context, optional
        Which copy of the Parameters to use (default: where the first one lives).
    """
    return GluonModule(block, ctx)


def _prepare(block, example_inputs, what):
    from .gluon.block import Block
    if not isinstance(block, Block):
        raise MXNetError(f"{what}: expected a neogluon Block, got {type(block).__name__}")
    if not example_inputs:
        raise MXNetError(f"{what}: give example inputs for {_block_desc(block)} (arrays of the "
                         "shapes and dtypes it will be called with)")
    _check_arity(block, len(example_inputs), what)
    tensors = [_to_tensor(x, i, what) for i, x in enumerate(example_inputs)]
    ctx = None
    for x in example_inputs:
        if isinstance(x, NDArray):
            ctx = x._ctx
            break
    if ctx is None:
        dev = tensors[0].device
        ctx = context_of_device(dev) if dev.type == "cuda" else current_context()
    # A first, ordinary call: it finishes deferred initialization, reports bad inputs with
    # neogluon's own errors, and fills the caches the forward pass keeps for these shapes.
    try:
        with autograd.predict_mode(), autograd.pause(train_mode=False):
            block(*[_new(t, ctx) for t in tensors])
    except MXNetError as err:
        raise MXNetError(f"{what}: {_block_desc(block)} fails on the example inputs "
                         f"{[tuple(t.shape) for t in tensors]}: {err}") from None
    return GluonModule(block, ctx), tensors


def _trace_error(block, what, err):
    msg = str(err).strip().splitlines()
    first = next((m for m in msg if m.strip()), type(err).__name__)
    if isinstance(err, MXNetError):
        return MXNetError(f"{what}: {_block_desc(block)} could not be traced: {err}")
    hint = ""
    low = str(err).lower()
    if "data-dependent" in low or "data dependent" in low or "item()" in low or \
            "numpy" in low or "asscalar" in low:
        hint = (" (its forward reads array values back into Python, e.g. asnumpy()/asscalar()"
                " or an if on an array; write it with array operators such as F.where)")
    elif "symint" in low or "symbolic" in low or "guard" in low:
        hint = (" (its forward uses a variable size, such as the batch size, as a Python "
                "value; export with a fixed shape: dynamic_batch=False)")
    return MXNetError(f"{what}: {_block_desc(block)} could not be traced by torch.export: "
                      f"{type(err).__name__}: {first}{hint}")


class _plain_grad_mode:
    """torch's grad mode off, and neogluon's operators told not to switch it per call.

    Outside ``autograd.record()`` each neogluon operator turns torch's grad mode off and back
    on around its kernel; torch.export records every such switch as a region of its own and
    then merges hundreds of them again (30 s for MobileNetV2). With grad mode already off and
    neogluon's state saying 'recording', the operators call their kernels directly; no
    tensor requires grad, so nothing is recorded either way."""

    def __enter__(self):
        self._prev = (torch.is_grad_enabled(), autograd._state.recording,
                      autograd._state.training)
        torch._C._set_grad_enabled(False)
        autograd._state.recording = True
        autograd._state.training = False
        return self

    def __exit__(self, *exc):
        grad, autograd._state.recording, autograd._state.training = self._prev
        torch._C._set_grad_enabled(grad)


def _export(module, tensors, dyn_axes, block, what, strict_axes=True):
    """torch.export over ``module``; ``dyn_axes[i]`` is the set of axes of input i that stay
    symbolic. A requested axis that tracing fixed raises MXNetError."""
    shapes = []
    for t, axes in zip(tensors, dyn_axes):
        shapes.append({a: torch.export.Dim.AUTO for a in axes} if axes else None)
    dynamic_shapes = (tuple(shapes),) if any(shapes) else None
    try:
        with _plain_grad_mode():
            prog = torch.export.export(module, tuple(tensors), dynamic_shapes=dynamic_shapes,
                                       strict=False)
    except Exception as err:  # noqa: BLE001 - reported with the block's name
        raise _trace_error(block, what, err) from None
    if dynamic_shapes is not None and strict_axes:
        from torch.fx.experimental.symbolic_shapes import is_concrete_int
        user_names = [s.arg.name for s in prog.graph_signature.input_specs
                      if s.kind == torch.export.graph_signature.InputKind.USER_INPUT]
        by_name = {n.name: n for n in prog.graph.nodes if n.op == "placeholder"}
        for i, (name, axes) in enumerate(zip(user_names, dyn_axes)):
            val = by_name[name].meta.get("val")
            for a in sorted(axes or ()):
                if val is not None and is_concrete_int(val.shape[a]):
                    raise MXNetError(
                        f"{what}: {_block_desc(block)} cannot take a variable size on axis {a} "
                        f"of input {i}: tracing fixed it to {int(val.shape[a])} (its forward uses "
                        "that size as a constant); export with a fixed shape instead "
                        "(dynamic_batch=False / dynamic=False)")
    return prog


def _batch_examples(tensors, dynamic_batch):
    """Example inputs with a batch of at least 2 (torch fixes axes of size 0 or 1)."""
    if not dynamic_batch:
        return tensors, [None] * len(tensors)
    out, axes = [], []
    for t in tensors:
        if t.dim() == 0:
            out.append(t)
            axes.append(None)
            continue
        if t.shape[0] == 1:
            t = torch.cat([t, t], 0)
        out.append(t)
        axes.append({0})
    return out, axes


def to_torch_export(block, *example_inputs, dynamic_batch=False):
    """``block`` as a ``torch.export.ExportedProgram`` (inference mode).

    Parameters
    ----------
    block : Block
        An initialized block (a HybridBlock, hybridized or not, a SymbolBlock, or a Block
        whose forward torch.export can trace).
    *example_inputs : NDArray, numpy array or torch tensor
        One per input of the block, of the shapes and dtypes it will be called with.
    dynamic_batch : bool, default False
        Leave axis 0 of every input variable. MXNetError if the forward pass fixes it.

    The program's parameters and buffers are named as in :func:`to_torch_module`; call it with
    torch tensors: ``prog.module()(x)``.
    """
    what = "to_torch_export"
    module, tensors = _prepare(block, example_inputs, what)
    tensors, axes = _batch_examples(tensors, dynamic_batch)
    return _export(module, tensors, axes, block, what)


# ---------------------------------------------------------------------------- ONNX
def _need_onnx(what):
    missing = []
    for mod in ("onnx", "onnxscript"):
        try:
            __import__(mod)
        except ImportError:
            missing.append(mod)
    if missing:
        raise ImportError(f"{what} needs the packages {', '.join(missing)} (torch.onnx's "
                          "exporter uses them): pip install 'neogluon[onnx]'")


def _onnx_bytes(prog, tensors, input_names, output_names, opset, block, what):
    import warnings
    import logging
    kw = {}
    if opset is not None:
        kw["opset_version"] = int(opset)
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            onnx_prog = torch.onnx.export(prog, tuple(tensors), None, dynamo=True, verbose=False,
                                          input_names=input_names, output_names=output_names,
                                          external_data=False, report=False, **kw)
    except Exception as err:  # noqa: BLE001 - reported with the block's name
        msg = next((m for m in str(err).splitlines() if m.strip()), type(err).__name__)
        raise MXNetError(f"{what}: {_block_desc(block)} could not be converted to ONNX "
                         f"(opset {opset or 'default'}): {type(err).__name__}: {msg}") from None
    finally:
        logger.setLevel(level)
    return onnx_prog.model_proto.SerializeToString()


def _io_names(block, n_in, out_count):
    names = _input_names(block)
    from .gluon.block import SymbolBlock
    if isinstance(block, SymbolBlock) and names is not None:
        in_names = [name for name, _ in names]
    else:
        in_names = ["data"] if n_in == 1 else [f"data{i}" for i in range(n_in)]
    out_names = ["output"] if out_count == 1 else [f"output{i}" for i in range(out_count)]
    return in_names, out_names


def _count_outputs(prog):
    return len(prog.graph_signature.user_outputs)


def _batch_dim_names(prog, n_inputs):
    """{torch's symbol for axis 0 of an input: 'batch' (or 'batch1', ...)}."""
    user = [s.arg.name for s in prog.graph_signature.input_specs
            if s.kind == torch.export.graph_signature.InputKind.USER_INPUT]
    by_name = {n.name: n for n in prog.graph.nodes if n.op == "placeholder"}
    names = {}
    for name in user[:n_inputs]:
        val = by_name[name].meta.get("val")
        if val is None or val.dim() == 0 or not isinstance(val.shape[0], torch.SymInt):
            continue
        sym = str(val.shape[0])
        if sym not in names and not sym.lstrip("-").isdigit():
            names[sym] = "batch" if not names else f"batch{len(names)}"
    return names


def _rename_dims(data, names):
    """Give the ONNX model's symbolic dimensions readable names."""
    if not names:
        return data
    import onnx
    model = onnx.load_from_string(data)
    g = model.graph
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param in names:
                d.dim_param = names[d.dim_param]
    return model.SerializeToString()


# torch's torch.export-based ONNX exporter writes opset 18 and later; older opsets come from
# its TorchScript exporter (see _legacy_onnx_bytes).
_FIRST_DYNAMO_OPSET = 18


def _legacy_onnx_bytes(module, tensors, in_names, out_names, opset, axes, prog, block, what):
    """ONNX at an opset below 18 through torch's TorchScript exporter, checked afterwards.

    That exporter traces with torch.jit.trace, which writes sizes computed in Python into the
    graph as constants; the file is therefore run in onnxruntime (when installed) on the
    example inputs and, with a variable batch, on a batch one larger, against the block."""
    import io
    import warnings
    dyn_in = {n: {0: "batch"} for n, ax in zip(in_names, axes) if ax}
    dynamic_axes = None
    if dyn_in:
        batch_syms = set(_batch_dim_names(prog, len(tensors)))
        dynamic_axes = dict(dyn_in)
        outs = [a for a in prog.graph.output_node().args[0]]
        for name, node in zip(out_names, outs):
            val = getattr(node, "meta", {}).get("val")
            if val is not None and val.dim() and str(val.shape[0]) in batch_syms:
                dynamic_axes[name] = {0: "batch"}
    buf = io.BytesIO()
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(module, tuple(tensors), buf, dynamo=False, opset_version=opset,
                              input_names=in_names, output_names=out_names,
                              dynamic_axes=dynamic_axes, do_constant_folding=True)
    except Exception as err:  # noqa: BLE001 - reported with the block's name
        msg = next((m for m in str(err).splitlines() if m.strip()), type(err).__name__)
        raise MXNetError(f"{what}: {_block_desc(block)} could not be converted to ONNX opset "
                         f"{opset} (torch's TorchScript exporter): {type(err).__name__}: {msg};"
                         f" opset {_FIRST_DYNAMO_OPSET} or later may work") from None
    data = buf.getvalue()
    _check_onnx(data, module, tensors, in_names, bool(dyn_in), opset, block, what)
    return data


def _check_onnx(data, module, tensors, in_names, dynamic, opset, block, what):
    import warnings
    try:
        import onnxruntime as ort
    except ImportError:
        warnings.warn(f"{what}: onnxruntime is not installed, so the opset-{opset} file "
                      "(TorchScript exporter) was not checked against the block", stacklevel=4)
        return
    cases = [list(tensors)]
    if dynamic:
        cases.append([torch.cat([t, t[:1]], 0) if t.dim() else t for t in tensors])
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    for case in cases:
        with torch.no_grad():
            want = module(*case)
        flat = []
        _flatten_tensors(want, flat)
        try:
            got = sess.run(None, {n: t.cpu().numpy() for n, t in zip(in_names, case)})
        except Exception as err:  # noqa: BLE001 - the file is wrong for this input
            got, why = None, f"onnxruntime fails: {str(err).splitlines()[0]}"
        else:
            why = None
            for g, w in zip(got, flat):
                w = w.detach().cpu().numpy()
                if g.shape != w.shape or not np.allclose(g, w, rtol=1e-3, atol=1e-4):
                    why = (f"its output (shape {g.shape}) differs from the block's (shape "
                           f"{w.shape})")
                    break
        if why is not None:
            raise MXNetError(
                f"{what}: the opset-{opset} ONNX file of {_block_desc(block)} is wrong for "
                f"inputs of shapes {[tuple(t.shape) for t in case]}: {why}. torch's "
                "TorchScript exporter fixed a size computed in Python; use opset "
                f"{_FIRST_DYNAMO_OPSET} or later, or dynamic_batch=False")


def _flatten_tensors(out, flat):
    if isinstance(out, torch.Tensor):
        flat.append(out)
    else:
        for o in out:
            _flatten_tensors(o, flat)


def _export_onnx(block, path, module, tensors, axes, opset, what):
    _need_onnx(what)
    prog = _export(module, tensors, axes, block, what)
    in_names, out_names = _io_names(block, len(tensors), _count_outputs(prog))
    if opset is not None and int(opset) < _FIRST_DYNAMO_OPSET:
        data = _legacy_onnx_bytes(module, tensors, in_names, out_names, int(opset), axes, prog,
                                  block, what)
    else:
        data = _onnx_bytes(prog, tensors, in_names, out_names, opset, block, what)
        data = _rename_dims(data, _batch_dim_names(prog, len(tensors)))
    _fileio.write_bytes(path, data)
    return path


def to_onnx(block, path, *example_inputs, opset=None, dynamic_batch=True):
    """Write ``block`` as an ONNX model to ``path`` (atomically); returns ``path``.

    The block is traced with ``torch.export`` (as :func:`to_torch_export`) and the program
    converted by torch's ONNX exporter (``torch.onnx.export(..., dynamo=True)``; needs the
    ``onnx`` and ``onnxscript`` packages: ``pip install 'neogluon[onnx]'``).

    Parameters
    ----------
    block : Block
    path : str
    *example_inputs : NDArray, numpy array or torch tensor
    opset : int, optional
        ONNX opset version (default: torch's exporter's default). Opsets below 18 are
        written by torch's older TorchScript exporter; the file is then run in onnxruntime
        (when installed) against the block, and MXNetError says if it differs.
    dynamic_batch : bool, default True
        Axis 0 of every input (and of the outputs that follow it) is left variable.

    Inputs are named ``data`` (``data0``, ``data1``... for several; a SymbolBlock's own input
    names), outputs ``output`` (``output0``...).
    """
    what = "to_onnx"
    module, tensors = _prepare(block, example_inputs, what)
    tensors, axes = _batch_examples(tensors, dynamic_batch)
    return _export_onnx(block, path, module, tensors, axes, opset, what)
