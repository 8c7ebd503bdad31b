"""``gluon.contrib.rnn``: extra recurrent cells (variational dropout, projected LSTM,
convolutional RNN/LSTM/GRU cells). ``dynamic_unroll`` is in ``contrib.rnn.rnn_cell``, as in
MXNet."""
from . import conv_rnn_cell, rnn_cell  # noqa: F401
from .conv_rnn_cell import *  # noqa: F401,F403
from .rnn_cell import *  # noqa: F401,F403

__all__ = conv_rnn_cell.__all__ + rnn_cell.__all__
