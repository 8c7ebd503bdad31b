"""MXNet 1.9.1's float16 AMP lists (``mxnet.contrib.amp.lists.symbol_fp16``)."""
from .._lists_data import module_lists

globals().update(module_lists("float16", "FP16"))
