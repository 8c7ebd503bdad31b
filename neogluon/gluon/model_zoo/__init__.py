"""``gluon.model_zoo``: predefined network architectures with MXNet 1.x's parameter names."""
from . import vision  # noqa: F401
from .vision import get_model  # noqa: F401
