"""Command-line tools (``python -m neogluon.tools.<name>``): ``im2rec``."""
