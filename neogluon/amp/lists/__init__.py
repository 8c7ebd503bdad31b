"""``amp.lists``: MXNet 1.9.1's AMP operator lists as its modules name them
(``symbol_fp16.FP16_FUNCS``, ``symbol_bf16.FP32_FUNCS``...), read from ``_lists.json``."""
from . import symbol_bf16, symbol_fp16  # noqa: F401
