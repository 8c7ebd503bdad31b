"""``mx.runtime``: which features this build has, answered for neogluon.

MXNet reports the switches its native library was compiled with. neogluon has no native build
of its own, so each feature says whether neogluon (through torch, on this machine) provides
what MXNet's feature of that name provides::

    features = mx.runtime.Features()
    features.is_enabled('CUDA')      # torch.cuda.is_available()
    features.is_enabled('MKLDNN')    # False: MXNet's MKLDNN operators are not provided
"""
from __future__ import annotations

import collections
import importlib.util

__all__ = ["Feature", "feature_list", "Features"]

# MXNet 1.9.1's feature names, in its order.
_FEATURE_NAMES = (
    "CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
    "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE", "F16C",
    "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK", "MKLDNN",
    "OPENCV", "CAFFE", "PROFILER", "DIST_KVSTORE", "CXX14", "INT64_TENSOR_SIZE",
    "SIGNAL_HANDLER", "DEBUG", "TVM_OP")

# /proc/cpuinfo flag of each CPU feature (torch dispatches its kernels on these at run time).
_CPU_FLAGS = {"CPU_SSE": "sse", "CPU_SSE2": "sse2", "CPU_SSE3": "pni", "CPU_SSE4_1": "sse4_1",
              "CPU_SSE4_2": "sse4_2", "CPU_SSE4A": "sse4a", "CPU_AVX": "avx", "CPU_AVX2": "avx2",
              "SSE": "sse2", "F16C": "f16c"}


class Feature:
    """One feature: its ``name`` and whether it is ``enabled``."""

    __slots__ = ("_name", "_enabled")

    def __init__(self, name: str, enabled: bool):
        self._name = name
        self._enabled = bool(enabled)

    @property
    def name(self) -> str:
        """Feature name, e.g. ``'CUDA'``."""
        return self._name

    @property
    def enabled(self) -> bool:
        """Whether the feature is available."""
        return self._enabled

    def __repr__(self):
        return ("✔ " if self._enabled else "✖ ") + self._name


def _cpu_flags() -> set:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _torch_config() -> str:
    import torch
    try:
        return torch.__config__.show()
    except Exception:  # pragma: no cover - an unusual torch build
        return ""


def _detect() -> dict:
    import torch
    cuda = torch.cuda.is_available()
    config = _torch_config()
    flags = _cpu_flags()
    try:
        import torch.distributed as dist
        nccl = cuda and dist.is_available() and dist.is_nccl_available()
    except Exception:
        nccl = False
    found = {
        "CUDA": cuda,
        "CUDNN": cuda and torch.backends.cudnn.is_available(),
        "NCCL": nccl,
        "OPENMP": torch.backends.openmp.is_available(),
        "BLAS_OPEN": "BLAS_INFO=open" in config,
        "BLAS_MKL": torch.backends.mkl.is_available(),
        "BLAS_APPLE": "BLAS_INFO=accelerate" in config,
        "BLAS_ATLAS": "BLAS_INFO=atlas" in config,
        "LAPACK": bool(getattr(torch._C, "has_lapack", False)),
        "OPENCV": importlib.util.find_spec("cv2") is not None,
    }
    for name, flag in _CPU_FLAGS.items():
        found[name] = flag in flags
    # Everything else is off: neogluon has no TensorRT, CUDA RTC, MXNet MKLDNN operators,
    # TVM operators, Caffe plugin, profiler, distributed KVStore, jemalloc or native signal
    # handler. INT64_TENSOR_SIZE is off because operators keep the index dtypes of MXNet's
    # default build (which has it off), although torch itself indexes with 64 bits.
    return {name: bool(found.get(name, False)) for name in _FEATURE_NAMES}


def feature_list() -> list:
    """All features, as a list of :class:`Feature` in MXNet's order.

    Returns
    -------
    list of Feature
    """
    return [Feature(name, enabled) for name, enabled in _detect().items()]


class Features(collections.OrderedDict):
    """The features by name (an ordered dict of name to :class:`Feature`); one shared instance."""

    instance = None

    def __new__(cls):
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            collections.OrderedDict.__init__(cls.instance, [(f.name, f) for f in feature_list()])
        return cls.instance

    def __init__(self):
        # Filled once in __new__; OrderedDict.__init__ would otherwise run again per call.
        pass

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name: str) -> bool:
        """Whether the feature ``feature_name`` (case-insensitive) is enabled.

        Raises
        ------
        RuntimeError
            For a name that is not a known feature.
        """
        key = feature_name.upper()
        if key not in self:
            raise RuntimeError(f"Feature '{key}' is unknown, known features are: {list(self.keys())}")
        return self[key].enabled
