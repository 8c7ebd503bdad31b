"""The fused recurrent operator the RNN layers call through ``F``.

It lives in ``neogluon.ndarray.rnn_op`` (``nd.RNN``, ``nd._gluon_rnn``,
``nd._rnn_param_concat``); this module keeps the names the layers, AMP and the symbol shape
rules import from here.
"""
from ...ndarray.rnn_op import (_FNS, _GATES, _cell_step, _gluon_rnn, _loop_rnn,  # noqa: F401
                               _reverse_index, _rnn_param_concat, RNN)
