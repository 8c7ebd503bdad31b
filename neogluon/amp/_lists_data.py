"""The operator lists of MXNet 1.9.1's AMP, as tools/gen_amp_fixtures.py wrote them."""
import json
import os

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lists.json")) as _f:
    LISTS = json.load(_f)


def module_lists(target, key):
    """The names MXNet's ``lists/symbol_<x>.py`` module defines, as fresh lists."""
    d = LISTS[target]
    out = {f"{key}_FUNCS": list(d["lp16"]), f"{key}_FP32_FUNCS": list(d["lp16_fp32"]),
           "FP32_FUNCS": list(d["fp32"]),
           "CONDITIONAL_FP32_FUNCS": [(op, arg, list(vals))
                                      for op, arg, vals in d["conditional_fp32"]],
           "WIDEST_TYPE_CASTS": list(d["widest"]),
           "LOSS_OUTPUT_FUNCTIONS": list(d["loss_output"])}
    if d["lp16_use_fp32_params"]:
        out[f"{key}_USE_FP32_PARAMS"] = {k: list(v) for k, v in
                                         d["lp16_use_fp32_params"].items()}
    return out
