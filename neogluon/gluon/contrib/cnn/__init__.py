"""``gluon.contrib.cnn``: deformable convolution layers."""
from .conv_layers import *  # noqa: F401,F403
from .conv_layers import __all__  # noqa: F401
