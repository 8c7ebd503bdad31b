"""``gluon.contrib.data``: extra samplers and the text datasets."""
from .sampler import *  # noqa: F401,F403
from .sampler import __all__  # noqa: F401
from . import text  # noqa: F401
