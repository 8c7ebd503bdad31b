"""``mx.rtc``: MXNet's run-time compiled CUDA kernels (NVRTC).

``CudaModule(source)`` compiled CUDA C source with NVRTC inside libmxnet and launched its
kernels on MXNet arrays. neogluon has no such compiler bridge; the classes exist so that
programs import, and constructing one raises MXNetError saying why (on torch, write the kernel
with ``torch.cuda`` tooling, e.g. Triton or ``torch.utils.cpp_extension.load_inline``, and
wrap it with ``mx.nd.from_torch``/``to_torch``).
"""
from .base import MXNetError, numeric_types, string_types  # noqa: F401  (MXNet's names)
from .ndarray import NDArray  # noqa: F401

__all__ = ["CudaModule", "CudaKernel"]

_WHY = ("mx.rtc is not provided by neogluon: MXNet compiled CUDA source with NVRTC inside "
        "libmxnet, and neogluon runs on PyTorch without that bridge")


class CudaModule:
    """A CUDA source module compiled at run time (not provided: raises MXNetError)."""

    def __init__(self, source, options=(), exports=()):
        raise MXNetError(_WHY)

    def get_kernel(self, name, signature):
        raise MXNetError(_WHY)


class CudaKernel:
    """A kernel of a :class:`CudaModule` (not provided: raises MXNetError)."""

    def __init__(self, handle, name, is_ndarray, dtypes):
        raise MXNetError(_WHY)

    def launch(self, args, ctx, grid_dims, block_dims, shared_mem=0):
        raise MXNetError(_WHY)
