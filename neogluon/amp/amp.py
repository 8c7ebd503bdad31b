"""``mx.contrib.amp.amp``: in MXNet the module that holds AMP's functions and its state
(``_amp_initialized``, read by GluonNLP's attention cells). Here a view of :mod:`neogluon.amp`:
every name is looked up there, so both spellings share one state."""
from . import _state as _amp_state


def __getattr__(name):
    if name == "_amp_initialized":
        return bool(_amp_state.initialized)
    from .. import amp as _amp
    return getattr(_amp, name)
