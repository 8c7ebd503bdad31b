"""``mx.rnn.rnn``: checkpoints of models built with the legacy RNN cells.

The files hold the cells' weights unpacked (one array per gate, and a ``FusedRNNCell``'s
vector split per layer and direction), so a checkpoint saved from a fused model loads into
its ``unfuse()``-d twin and back; loading packs them again for the cells given.
"""
from __future__ import annotations

import warnings

from ..model import load_checkpoint, save_checkpoint
from .rnn_cell import BaseRNNCell

__all__ = ["rnn_unroll", "save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint",
           "save_checkpoint", "load_checkpoint"]


def _cell_list(cells):
    return [cells] if isinstance(cells, BaseRNNCell) else list(cells)


def rnn_unroll(cell, length, inputs=None, begin_state=None, input_prefix="", layout="NTC"):
    """Deprecated: call ``cell.unroll(length, inputs, begin_state, layout)``.

    ``input_prefix`` is ignored: ``unroll`` no longer makes input variables. (MXNet 1.9.1
    passed it on to ``unroll``, which does not take it, so its ``rnn_unroll`` always raised
    TypeError.)
    """
    warnings.warn("rnn_unroll is deprecated. Please call cell.unroll directly.")
    return cell.unroll(length=length, inputs=inputs, begin_state=begin_state, layout=layout)


def save_rnn_checkpoint(cells, prefix, epoch, symbol, arg_params, aux_params):
    """``mx.model.save_checkpoint`` with the cells' weights unpacked first.

    Parameters
    ----------
    cells : BaseRNNCell or list of BaseRNNCell
        The cells whose (packed) weights ``arg_params`` holds.
    prefix : str
        Writes ``prefix-symbol.json`` and ``prefix-%04d.params``.
    epoch : int
    symbol : Symbol or None
    arg_params, aux_params : dict of str to NDArray
        Not changed.
    """
    for cell in _cell_list(cells):
        arg_params = cell.unpack_weights(arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells, prefix, epoch):
    """``mx.model.load_checkpoint`` with the cells' weights packed after loading.

    Parameters
    ----------
    cells : BaseRNNCell or list of BaseRNNCell
    prefix : str
    epoch : int

    Returns
    -------
    symbol : Symbol
    arg_params : dict of str to NDArray
        With the cells' packed weights.
    aux_params : dict of str to NDArray
    """
    sym, arg_params, aux_params = load_checkpoint(prefix, epoch)
    for cell in _cell_list(cells):
        arg_params = cell.pack_weights(arg_params)
    return sym, arg_params, aux_params


def do_rnn_checkpoint(cells, prefix, period=1):
    """An epoch-end callback (for ``Module.fit``'s ``epoch_end_callback``) that saves a
    :func:`save_rnn_checkpoint` every ``period`` epochs.

    Parameters
    ----------
    cells : BaseRNNCell or list of BaseRNNCell
    prefix : str
    period : int, default 1
        Values below 1 count as 1.

    Returns
    -------
    callable
        ``callback(iter_no, sym, arg, aux)``; it saves epoch ``iter_no + 1``.
    """
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)
    return _callback
