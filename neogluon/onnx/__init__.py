"""``mx.onnx``: MXNet 1.9.1's ONNX export API, on torch's ONNX exporter.

``export_model(sym, params, in_shapes, ...)`` builds a SymbolBlock from the symbol and the
parameters and exports it with :func:`neogluon.export.to_onnx`'s machinery (``torch.export``,
then ``torch.onnx.export(..., dynamo=True)``). The ONNX graph is torch's, not MXNet's
operator-by-operator translation: node names and the opset default differ; inputs and outputs
are named as MXNet names them.

Importing ONNX models is where MXNet 1.9.1 has it, in :mod:`neogluon.contrib.onnx`
(``import_model``, ``get_model_metadata``, ``import_to_gluon``; see
:mod:`neogluon.onnx._import`); MXNet's ``mx.onnx`` has no import functions.
"""
from __future__ import annotations

import os

import numpy as np

from .. import _fileio
from ..base import MXNetError

__all__ = ["export_model", "get_operator_support"]


def _load_params(params):
    from .. import ndarray as nd
    out = {}
    loaded = nd.load(os.fspath(params))
    if not isinstance(loaded, dict):
        raise MXNetError("the params file holds a list of unnamed arrays; export_model needs "
                         "the 'arg:name'/'aux:name' dict that save_checkpoint writes")
    for k, v in loaded.items():
        if k.startswith(("arg:", "aux:")):
            k = k[4:]
        out[k] = v
    return out


def _build_block(sym, params, in_shapes, in_types):
    from .. import ndarray as nd
    from .. import symbol as _sym
    from ..gluon.block import SymbolBlock, HybridBlock
    internals = sym.get_internals()
    label = internals[len(internals) - 1].name + "_label"
    inputs = [n for n in sym.list_inputs() if n not in params and n != label]
    if len(inputs) != len(in_shapes):
        raise MXNetError(f"export_model: the symbol has {len(inputs)} input(s) {inputs} but "
                         f"in_shapes gives {len(in_shapes)} shape(s) {list(in_shapes)}")
    if len(in_types) != len(in_shapes):
        raise MXNetError(f"export_model: in_types has {len(in_types)} entries, in_shapes "
                         f"{len(in_shapes)}; give one dtype, or one per input")
    has_label = label in sym.list_inputs() and label not in params
    label_shape = None
    if has_label:
        try:
            arg_shapes, _, _ = sym.infer_shape_partial(
                **{n: tuple(s) for n, s in zip(inputs, in_shapes)})
        except MXNetError:
            arg_shapes = None
        if arg_shapes is not None:
            label_shape = dict(zip(sym.list_arguments(), arg_shapes)).get(label)
        if not label_shape:
            # Shape inference does not know this loss's label: one label per sample.
            label_shape = (tuple(in_shapes[0])[:1] or (1,))
    dtypes = {n: np.dtype(t).type for n, t in zip(inputs, in_types)}
    in_vars = [_sym.var(n, dtype=dtypes[n]) for n in inputs]
    block = SymbolBlock(sym, in_vars + ([_sym.var(label)] if has_label else []))
    known = block.collect_params()
    for name, p in known.items():
        if name not in params:
            raise MXNetError(f"export_model: no value for parameter '{name}' in params")
        value = params[name]
        if not isinstance(value, nd.NDArray):
            value = nd.array(np.asarray(value))
        try:
            p._load_init(value, None, cast_dtype=True, dtype_source="saved")
        except (AssertionError, ValueError, MXNetError) as err:
            raise MXNetError(f"export_model: parameter '{name}': {err}") from None
    if not has_label:
        return block, inputs

    class _FeedLabel(HybridBlock):
        """Runs the SymbolBlock with a zero label (the loss output ignores it at inference)."""

        def __init__(self, inner):
            super().__init__(prefix="")
            with self.name_scope():
                self.inner = inner

        def hybrid_forward(self, F, *xs):
            x0 = xs[0]
            if (len(label_shape) == 1 and x0.ndim >= 1
                    and label_shape[0] == in_shapes[0][0]):
                # One label per sample: its length follows the batch.
                zero = F.zeros_like(x0.reshape((0, -1)).slice_axis(axis=1, begin=0, end=1))
                lab = zero.reshape((-1,))
            else:
                lab = F.zeros(label_shape, ctx=x0.context)
            return self.inner(*xs, lab)

    return _FeedLabel(block), inputs


def export_model(sym, params, in_shapes=None, in_types=np.float32,
                 onnx_file_path="model.onnx", verbose=False, dynamic=False,
                 dynamic_input_shapes=None, run_shape_inference=False, input_type=None,
                 input_shape=None):
    """Export an MXNet model (symbol and parameters) to ONNX; returns ``onnx_file_path``.

    Parameters
    ----------
    sym : str or Symbol
        A ``-symbol.json`` path, or a Symbol.
    params : str, dict or list of two dicts
        A ``.params`` path (``arg:``/``aux:`` keys), a dict of all parameters, or
        ``[arg_params, aux_params]`` (with a Symbol).
    in_shapes : list of tuple
        The shape of each input (the symbol's free variables that are not parameters, in
        ``list_inputs()`` order, without the loss's ``*_label``).
    in_types : dtype or list of dtypes, default float32
    onnx_file_path : str
        Where to write the model (atomically).
    verbose : bool
        Print the torch.export program.
    dynamic : bool
        Let input dimensions vary: every dimension torch.export can leave free (the others,
        such as channels a convolution fixes, stay fixed), or those given as None in
        ``dynamic_input_shapes``.
    dynamic_input_shapes : list of tuple, optional
        Per input, its shape with None for each dimension that varies (needs dynamic=True).
    run_shape_inference : bool
        Run ONNX shape inference on the result (its failure keeps the model as it is).
    input_type, input_shape
        Old names of ``in_types`` and ``in_shapes``.
    """
    from .. import symbol as _sym
    from .. import export as _export
    from .. import ndarray as nd
    if input_type is not None:
        in_types = input_type
    if input_shape is not None:
        in_shapes = input_shape
    if in_shapes is None:
        raise ValueError("export_model: give in_shapes, the shape of each input, e.g. "
                         "[(1, 3, 224, 224)]")
    in_shapes = [tuple(s) for s in in_shapes]
    if not isinstance(in_types, (list, tuple)):
        in_types = [in_types] * len(in_shapes)
    if isinstance(sym, (str, os.PathLike)) and isinstance(params, (str, os.PathLike)):
        from .._loaderr import named
        try:
            symbol = _sym.load(os.fspath(sym))
        except Exception as err:  # noqa: BLE001 - the contract: an MXNetError naming it
            raise named(err, os.fspath(sym), "symbol file", "export_model") from err
        try:
            pdict = _load_params(params)
        except Exception as err:  # noqa: BLE001 - the contract: an MXNetError naming it
            raise named(err, os.fspath(params), "params file", "export_model") from err
    elif isinstance(sym, _sym.Symbol) and isinstance(params, dict):
        symbol, pdict = sym, dict(params)
    elif isinstance(sym, _sym.Symbol) and isinstance(params, (list, tuple)) and len(params) == 2:
        symbol, pdict = sym, {}
        pdict.update(params[0])
        pdict.update(params[1])
    else:
        raise ValueError("export_model: sym and params must both be file paths, or a Symbol "
                         f"and a dict (or [arg_params, aux_params]); got {type(sym).__name__} "
                         f"and {type(params).__name__}")
    if not dynamic and dynamic_input_shapes is not None:
        raise ValueError("export_model: dynamic_input_shapes needs dynamic=True")
    if dynamic_input_shapes is not None:
        if len(dynamic_input_shapes) != len(in_shapes):
            raise ValueError(f"export_model: dynamic_input_shapes has "
                             f"{len(dynamic_input_shapes)} entries, in_shapes {len(in_shapes)}")
        for s, d in zip(in_shapes, dynamic_input_shapes):
            if len(s) != len(d):
                raise ValueError(f"export_model: dynamic shape {tuple(d)} and shape {s} differ "
                                 "in rank")
    what = "export_model"
    try:
        block, names = _build_block(symbol, pdict, in_shapes, in_types)
        examples = [nd.zeros(s, dtype=np.dtype(t)) for s, t in zip(in_shapes, in_types)]
        module, tensors = _export._prepare(block, examples, what)
    except Exception as err:  # noqa: BLE001 - a model read from files: name them
        if not isinstance(sym, (str, os.PathLike)):
            raise
        from .._loaderr import named
        raise named(err, os.fspath(sym), f"the model of this symbol file and "
                                         f"{os.fspath(params)}", what) from err
    axes = []
    for i, t in enumerate(tensors):
        if not dynamic:
            axes.append(None)
        elif dynamic_input_shapes is None:
            axes.append(set(range(t.dim())))
        else:
            axes.append({a for a, d in enumerate(dynamic_input_shapes[i]) if d is None})
    strict = dynamic_input_shapes is not None
    tensors = [(_twice(t) if ax and 0 in ax and t.shape[0] == 1 else t)
               for t, ax in zip(tensors, axes)]
    _export._need_onnx(what)
    prog = _export._export(module, tensors, axes, block, what, strict_axes=strict)
    if verbose:
        print(prog)
    out_names = [n[:-len("_output")] if n.endswith("_output") else n
                 for n in symbol.list_outputs()]
    if len(out_names) != _export._count_outputs(prog):
        out_names = None
    data = _export._onnx_bytes(prog, tensors, names, out_names, None, block, what)
    if run_shape_inference:
        import onnx
        try:
            data = onnx.shape_inference.infer_shapes(
                onnx.load_from_string(data)).SerializeToString()
        except Exception:  # noqa: BLE001 - as MXNet: keep the model as exported
            pass
    _fileio.write_bytes(onnx_file_path, data)
    return onnx_file_path


def _twice(t):
    import torch
    return torch.cat([t, t], 0)


def get_operator_support(opset_version=None):
    """The MXNet operator names ``export_model`` can write (see
    :func:`neogluon.onnx.mx2onnx.get_operator_support`)."""
    from .mx2onnx import get_operator_support as _get
    return _get(opset_version)


from . import mx2onnx  # noqa: E402,F401  (MXNet's mx.onnx exposes it)
