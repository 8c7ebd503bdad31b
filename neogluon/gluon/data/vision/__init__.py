"""``gluon.data.vision``: vision datasets and image transforms."""
from .datasets import *  # noqa: F401,F403
from . import transforms  # noqa: F401
