"""``mxnet.numpy_op_signature``: map MXNet's registered NumPy operator names (``_np_sum``,
``_np_random_uniform``, ``_npx_relu``...) to the mx.np / mx.npx functions that expose them."""
from .base import _np_modules_getattr
from .base import _NP_OP_SUBMODULE_LIST, _NP_EXT_OP_SUBMODULE_LIST  # noqa: F401

__all__ = []


def _get_builtin_op(op_name):
    """The mx.np / mx.npx function for operator ``op_name``, or None when the name is not a
    NumPy operator's; ValueError when the function does not exist."""
    from . import numpy as mx_np, numpy_extension as mx_npx
    if op_name.startswith("_np_"):
        root, prefix, subs = mx_np, "_np_", _NP_OP_SUBMODULE_LIST
    elif op_name.startswith("_npx_"):
        root, prefix, subs = mx_npx, "_npx_", _NP_EXT_OP_SUBMODULE_LIST
    else:
        return None
    rest = op_name[len(prefix):]
    module = root
    for sub in subs:
        if rest.startswith(sub):
            module = getattr(root, sub.strip("_"), None)
            if module is None:
                raise ValueError(f"Cannot find submodule {sub.strip('_')} in module "
                                 f"{root.__name__}")
            rest = rest[len(sub):]
            break
    op = getattr(module, rest, None)
    if op is None:
        raise ValueError(f"Cannot find operator {rest} in module {module.__name__}")
    return op


# MXNet's module imports mx.np (and mx.npx) as mx_np / mx_npx; looked up on first use here
# (this module is imported while mx.np itself loads)
__getattr__ = _np_modules_getattr(__name__)
