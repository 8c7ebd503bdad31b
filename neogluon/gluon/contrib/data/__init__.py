"""``gluon.contrib.data``: extra samplers."""
from .sampler import *  # noqa: F401,F403
from .sampler import __all__  # noqa: F401
