"""``mx.rnn``: MXNet 1.x's legacy symbolic RNN package.

Cells that build ``mx.sym`` graphs step by step (:mod:`.rnn_cell`), the sentence bucketing
iterator (:mod:`.io`) and checkpoints that unpack the cells' weights (:mod:`.rnn`). The
names ``mx.rnn`` exports are MXNet 1.9.1's: the three modules' public names, and
``save_checkpoint``/``load_checkpoint``, ``DataIter``/``DataBatch``/``DataDesc`` that MXNet's
package passes on. Gluon's recurrent layers and cells are ``mx.gluon.rnn``.
"""
from . import rnn_cell
from .rnn_cell import *  # noqa: F401,F403

from . import rnn
from .rnn import *  # noqa: F401,F403

from . import io
from .io import *  # noqa: F401,F403
from .io import DataBatch, DataDesc, DataIter  # noqa: F401

__all__ = (rnn_cell.__all__ + rnn.__all__ + io.__all__
           + ["DataIter", "DataBatch", "DataDesc", "rnn_cell", "rnn", "io"])


# Names MXNet 1.9.1's module of the same path exposes (programs import them from here).
from .. import initializer as init, ndarray, symbol  # noqa: E402,F401
from ..base import numeric_types, string_types  # noqa: E402,F401
