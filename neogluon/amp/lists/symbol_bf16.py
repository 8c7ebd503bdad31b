"""MXNet 1.9.1's bfloat16 AMP lists (``mxnet.contrib.amp.lists.symbol_bf16``)."""
from .._lists_data import module_lists

globals().update(module_lists("bfloat16", "BF16"))
