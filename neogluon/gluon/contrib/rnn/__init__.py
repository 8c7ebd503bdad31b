"""``gluon.contrib.rnn``: extra recurrent cells (variational dropout, projected LSTM)."""
from .rnn_cell import *  # noqa: F401,F403
from .rnn_cell import __all__  # noqa: F401
