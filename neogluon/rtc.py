"""``mx.rtc``: CUDA C source compiled at run time (NVRTC) and launched on NDArrays.

MXNet compiled the source with NVRTC inside libmxnet. neogluon does the same through NVIDIA's
``cuda-python`` package (an optional dependency: ``pip install cuda-python``, or the ``rtc``
extra), imported only when a module is built: ``cuda.bindings.nvrtc`` compiles the source to
code for the GPU's compute capability, ``cuda.bindings.driver`` loads it into torch's (primary)
CUDA context of that GPU and launches the kernel on torch's current stream, so it is ordered
with the torch work on the same arrays. Older cuda-python releases name the modules
``cuda.nvrtc``/``cuda.cuda``; both are accepted.

The signature parsing (:func:`parse_signature`) and the argument checks
(:func:`check_launch_args`) are plain Python and do not need CUDA.

Differences from MXNet: bad signatures and bad launch arguments raise MXNetError (subclasses
that are also ``ValueError``/``TypeError`` where MXNet raised those; MXNet's launch checks were
``assert`` statements); without CUDA, ``CudaModule`` raises MXNetError at construction, as an
MXNet built without CUDA did.
"""
import ctypes
import re

import numpy as np

from .base import MXNetError, MXNetValueError, numeric_types, string_types
from .ndarray import NDArray

__all__ = ["CudaModule", "CudaKernel"]


class MXNetTypeError(MXNetError, TypeError):
    """An mx.rtc error MXNet reported as ``TypeError``; catchable as either."""


# The C types a kernel parameter may have (MXNet 1.9.1's list) and their numpy dtypes.
_DTYPE_CPP_TO_NP = {
    "float": np.dtype(np.float32),
    "double": np.dtype(np.float64),
    "__half": np.dtype(np.float16),
    "uint8_t": np.dtype(np.uint8),
    "int": np.dtype(np.int32),
    "int32_t": np.dtype(np.int32),
    "int8_t": np.dtype(np.int8),
    "char": np.dtype(np.int8),
    "int64_t": np.dtype(np.int64),
}

_PARAM_RE = re.compile(r"^(const\s+)?([A-Za-z_]\w*)\s*(\*)?\s*([A-Za-z_]\w*)?$")


def parse_signature(signature):
    """The parameters of a kernel signature such as ``"const float *x, float *y, int n"``.

    Returns a list of ``(name, dtype, is_pointer, is_const)``, one per parameter (``name`` is
    None where the signature leaves it out, as in ``"const float *, int"``). ``*`` marks an
    array parameter (an NDArray at launch), no ``*`` a scalar (a Python number).
    Raises MXNetError naming the parameter that is not ``[const] type [*] [name]`` or whose
    type is not one of MXNet's kernel types.
    """
    if not isinstance(signature, string_types):
        raise MXNetTypeError(f"mx.rtc: a kernel signature must be a string, got "
                             f"{type(signature).__name__}")
    params = []
    for i, raw in enumerate(signature.split(",")):
        text = " ".join(raw.split())
        match = _PARAM_RE.match(text)
        if not text or match is None or match.group(2) == "const":
            raise MXNetValueError(
                f"mx.rtc: kernel parameter {i} {text!r} of signature {signature!r} is not of "
                f"the form '[const] type [*] [name]'")
        const, ctype, star, name = match.groups()
        if ctype not in _DTYPE_CPP_TO_NP:
            raise MXNetTypeError(
                f"mx.rtc: kernel parameter {i} {text!r} has the unsupported type {ctype!r}; "
                f"supported types are {', '.join(_DTYPE_CPP_TO_NP)}")
        if name is not None and name in ("const", *_DTYPE_CPP_TO_NP):
            raise MXNetValueError(
                f"mx.rtc: kernel parameter {i} {text!r} of signature {signature!r} is not of "
                f"the form '[const] type [*] [name]'")
        params.append((name, _DTYPE_CPP_TO_NP[ctype], star is not None, const is not None))
    return params


def _param_label(i, name):
    return f"argument {i}" + (f" ({name!r})" if name else "")


def check_launch_args(kernel_name, params, args, ctx, grid_dims, block_dims, shared_mem=0):
    """Check a launch's arguments against the parsed signature ``params``.

    Returns the argument values to pass: for an array parameter the NDArray, for a scalar a
    0-d numpy array of the parameter's dtype. Raises MXNetError naming the argument (index and
    name) whose kind, dtype or context is wrong, or the launch setting that is wrong.
    """
    from .context import Context
    if not isinstance(ctx, Context) or ctx.device_type != "gpu":
        raise MXNetValueError(f"mx.rtc: CudaKernel({kernel_name}) can only be launched on a "
                              f"GPU context, got ctx={ctx!r}")
    for what, dims in (("grid_dims", grid_dims), ("block_dims", block_dims)):
        if (not isinstance(dims, (tuple, list)) or len(dims) != 3
                or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                           and d >= 1 for d in dims)):
            raise MXNetValueError(f"mx.rtc: {what} must be a tuple of 3 positive integers, "
                                  f"got {dims!r}")
    if (not isinstance(shared_mem, (int, np.integer)) or isinstance(shared_mem, bool)
            or shared_mem < 0):
        raise MXNetValueError(f"mx.rtc: shared_mem must be a non-negative integer, got "
                              f"{shared_mem!r}")
    if not isinstance(args, (tuple, list)):
        raise MXNetTypeError(f"mx.rtc: CudaKernel({kernel_name}).launch takes a list of "
                             f"arguments, got {type(args).__name__}")
    if len(args) != len(params):
        raise MXNetValueError(f"mx.rtc: CudaKernel({kernel_name}) expects {len(params)} "
                              f"arguments but got {len(args)}")
    values = []
    for i, (arg, (name, dtype, is_ptr, _)) in enumerate(zip(args, params)):
        label = _param_label(i, name)
        if is_ptr:
            if not isinstance(arg, NDArray):
                raise MXNetTypeError(f"mx.rtc: CudaKernel({kernel_name}) {label} is a "
                                     f"{dtype.name} pointer and expects an NDArray, got "
                                     f"{type(arg).__name__}")
            if arg.stype != "default":
                raise MXNetTypeError(f"mx.rtc: CudaKernel({kernel_name}) {label} must be a "
                                     f"dense NDArray, got stype {arg.stype!r}")
            if np.dtype(arg.dtype) != dtype:
                raise MXNetTypeError(f"mx.rtc: CudaKernel({kernel_name}) {label} expects an "
                                     f"NDArray of dtype {dtype.name}, got "
                                     f"{np.dtype(arg.dtype).name}")
            if arg.context != ctx:
                raise MXNetValueError(f"mx.rtc: CudaKernel({kernel_name}) {label} is on "
                                      f"{arg.context}, but the kernel is launched on {ctx}")
            values.append(arg)
        else:
            if isinstance(arg, NDArray) or not isinstance(arg, numeric_types):
                raise MXNetTypeError(f"mx.rtc: CudaKernel({kernel_name}) {label} is a "
                                     f"{dtype.name} scalar and expects a number, got "
                                     f"{type(arg).__name__}")
            try:
                values.append(np.array(arg, dtype=dtype))
            except (OverflowError, ValueError, TypeError) as err:
                raise MXNetValueError(f"mx.rtc: CudaKernel({kernel_name}) {label}: {arg!r} "
                                      f"does not fit the {dtype.name} parameter ({err})") from err
    return values


# ---- cuda-python, loaded on first use ---------------------------------------------------------

_BINDINGS = None


def _bindings():
    """(driver, nvrtc) modules of cuda-python; MXNetError saying how to install it."""
    global _BINDINGS
    if _BINDINGS is None:
        try:
            from cuda.bindings import driver, nvrtc
        except ImportError:
            try:
                from cuda import cuda as driver, nvrtc
            except ImportError as err:
                raise MXNetError(
                    "mx.rtc needs NVIDIA's cuda-python package for NVRTC and the CUDA driver "
                    "API: pip install cuda-python (or neogluon[rtc])") from err
        _BINDINGS = (driver, nvrtc)
    return _BINDINGS


def _ok(result, what, extra=""):
    """The values of a cuda-python call's (status, *values) result; MXNetError on failure."""
    status, values = result[0], result[1:]
    if int(status) != 0:
        raise MXNetError(f"mx.rtc: {what} failed: {getattr(status, 'name', status)}{extra}")
    return values[0] if len(values) == 1 else values


def _require_cuda():
    import torch
    if not torch.cuda.is_available():
        raise MXNetError(
            "mx.rtc.CudaModule needs CUDA (it compiles with NVRTC and launches on a GPU), but "
            "CUDA is not available: torch was built without CUDA or finds no GPU/driver")


def _has_arch_option(options):
    return any(o.startswith(("-arch", "--gpu-architecture", "--gpu-name")) for o in options)


class CudaModule:
    r"""CUDA C source compiled at run time with NVRTC.

    Parameters
    ----------
    source : str
        Complete CUDA C source. Declare kernels ``extern "C"`` to launch them by name, or
        list their C++ names (e.g. template instances ``"axpy<float>"``) in ``exports``.
    options : str or tuple of str
        NVRTC options, e.g. ``"-I/usr/local/cuda/include"``. Unless one sets the architecture,
        neogluon compiles for the compute capability of the GPU (``--gpu-architecture``).
    exports : str or tuple of str
        C++ names of kernels to export (NVRTC name expressions).
    """

    def __init__(self, source, options=(), exports=()):
        if isinstance(options, string_types):
            options = (options,)
        if isinstance(exports, string_types):
            exports = (exports,)
        if not isinstance(source, string_types):
            raise MXNetTypeError(f"mx.rtc.CudaModule: source must be a string, got "
                                 f"{type(source).__name__}")
        for what, items in (("options", options), ("exports", exports)):
            if not all(isinstance(o, string_types) for o in items):
                raise MXNetTypeError(f"mx.rtc.CudaModule: {what} must be strings, got "
                                     f"{list(items)!r}")
        _require_cuda()
        _bindings()
        import torch
        self._source = source
        self._options = tuple(options)
        self._exports = tuple(exports)
        self._ptx = {}          # compute capability -> (code image, {export: lowered})
        self._modules = {}      # device id -> CUmodule
        # Compile now, as MXNet did, so that a compile error is raised here.
        self._compiled(torch.cuda.get_device_capability(torch.cuda.current_device()))

    def _compiled(self, capability):
        """(code image, lowered export names) for a compute capability, compiled on first use.

        The image is a CUBIN for the GPU's own architecture where NVRTC knows it (a CUBIN loads
        on a driver older than the NVRTC, a PTX newer than the driver does not), else PTX.
        """
        hit = self._ptx.get(capability)
        if hit is not None:
            return hit
        _, nvrtc = _bindings()
        try:
            hit = self._compile(nvrtc, capability)
        except MXNetError:
            raise
        except RuntimeError as err:   # cuda-python did not find libnvrtc, ...
            raise MXNetError(f"mx.rtc: cuda-python could not run NVRTC ({err}); install NVRTC "
                             f"with pip install 'cuda-python[all]' or a CUDA toolkit") from err
        self._ptx[capability] = hit
        return hit

    def _compile(self, nvrtc, capability):
        options = list(self._options)
        if not _has_arch_option(options):
            arch = capability[0] * 10 + capability[1]
            try:
                supported = list(_ok(nvrtc.nvrtcGetSupportedArchs(), "nvrtcGetSupportedArchs"))
            except (MXNetError, AttributeError):
                supported = [arch]
            if arch in supported:
                options.append(f"--gpu-architecture=sm_{arch}")
            else:   # a GPU newer than this NVRTC: PTX of the newest architecture it knows
                older = [a for a in supported if a <= arch]
                options.append(f"--gpu-architecture=compute_{max(older) if older else arch}")
        prog = _ok(nvrtc.nvrtcCreateProgram(self._source.encode(), b"neogluon_rtc.cu", 0, [],
                                            []), "nvrtcCreateProgram")
        try:
            for name in self._exports:
                _ok(nvrtc.nvrtcAddNameExpression(prog, name.encode()),
                    f"nvrtcAddNameExpression({name!r})")
            status = nvrtc.nvrtcCompileProgram(prog, len(options),
                                               [o.encode() for o in options])[0]
            if int(status) != 0:
                size = _ok(nvrtc.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
                log = b" " * size
                _ok(nvrtc.nvrtcGetProgramLog(prog, log), "nvrtcGetProgramLog")
                log = log.rstrip(b"\x00 \n").decode(errors="replace")
                raise MXNetError(f"mx.rtc.CudaModule: NVRTC could not compile the source "
                                 f"(options {options}): {getattr(status, 'name', status)}\n"
                                 f"{log}")
            image = b""
            result = nvrtc.nvrtcGetCUBINSize(prog)
            if int(result[0]) == 0 and result[1]:
                image = b" " * result[1]
                _ok(nvrtc.nvrtcGetCUBIN(prog, image), "nvrtcGetCUBIN")
            else:
                size = _ok(nvrtc.nvrtcGetPTXSize(prog), "nvrtcGetPTXSize")
                image = b" " * size
                _ok(nvrtc.nvrtcGetPTX(prog, image), "nvrtcGetPTX")
            lowered = {}
            for name in self._exports:
                low = _ok(nvrtc.nvrtcGetLoweredName(prog, name.encode()),
                          f"nvrtcGetLoweredName({name!r})")
                lowered[name] = low.decode() if isinstance(low, bytes) else str(low)
        finally:
            nvrtc.nvrtcDestroyProgram(prog)
        return image, lowered

    def _function(self, name, device_id):
        """The CUfunction of kernel ``name`` in this module loaded on GPU ``device_id``."""
        import torch
        driver, _ = _bindings()
        image, lowered = self._compiled(torch.cuda.get_device_capability(device_id))
        with _context(device_id):
            module = self._modules.get(device_id)
            if module is None:
                buf = ctypes.create_string_buffer(image, len(image) + 1)
                module = _ok(driver.cuModuleLoadData(ctypes.addressof(buf)),
                             f"cuModuleLoadData on gpu({device_id})",
                             " (CUDA_ERROR_UNSUPPORTED_PTX_VERSION means cuda-python's NVRTC "
                             "is newer than the GPU driver: install a cuda-python of the "
                             "driver's CUDA version)")
                self._modules[device_id] = module
            symbol = lowered.get(name, name)
            return _ok(driver.cuModuleGetFunction(module, symbol.encode()),
                       f"cuModuleGetFunction({name!r})",
                       f" (is there a kernel named {name!r}? declare it extern \"C\" or list "
                       f"it in exports; exports: {list(self._exports)})")

    def get_kernel(self, name, signature):
        """The kernel ``name`` of this module, launched with arguments of ``signature``.

        ``signature`` is the kernel's C parameter list, e.g. ``"const float *x, float *y,
        int n"`` (names may be left out): ``*`` marks an array parameter (an NDArray of that
        dtype at launch), ``const`` an input array; other parameters take Python numbers.
        """
        if not isinstance(name, string_types):
            raise MXNetTypeError(f"mx.rtc: a kernel name must be a string, got "
                                 f"{type(name).__name__}")
        return CudaKernel(self, name, parse_signature(signature))


class _context:
    """Makes torch's (primary) CUDA context of a GPU the driver's current one for a block."""

    def __init__(self, device_id):
        self.device_id = device_id

    def __enter__(self):
        import torch
        driver, _ = _bindings()
        torch.cuda.init()
        # torch's CUDA runtime works in each device's primary context; retaining it here
        # returns that same context (and creates it if torch has not touched the GPU yet).
        _ok(driver.cuInit(0), "cuInit")
        dev = _ok(driver.cuDeviceGet(self.device_id), f"cuDeviceGet({self.device_id})")
        ctx = _PRIMARY.get(self.device_id)
        if ctx is None:
            ctx = _ok(driver.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
            _PRIMARY[self.device_id] = ctx     # held for the life of the process
        _ok(driver.cuCtxPushCurrent(ctx), "cuCtxPushCurrent")
        return ctx

    def __exit__(self, *exc):
        driver, _ = _bindings()
        driver.cuCtxPopCurrent()
        return False


_PRIMARY = {}


class CudaKernel:
    """A kernel of a :class:`CudaModule`; made by :meth:`CudaModule.get_kernel`."""

    def __init__(self, module, name, params):
        self._module = module
        self._name = name
        self._params = params
        self._is_ndarray = [p[2] for p in params]
        self._dtypes = [p[1].type for p in params]

    def launch(self, args, ctx, grid_dims, block_dims, shared_mem=0):
        """Launch the kernel on GPU ``ctx``.

        Parameters
        ----------
        args : list of NDArray or numbers
            One per signature parameter: NDArrays (on ``ctx``, of the parameter's dtype) for
            pointer parameters, numbers for the others.
        ctx : Context
            The GPU to launch on.
        grid_dims, block_dims : tuple of 3 ints
            Grid and block dimensions.
        shared_mem : int
            Bytes of dynamic shared memory per block.
        """
        values = check_launch_args(self._name, self._params, args, ctx, grid_dims, block_dims,
                                   shared_mem)
        try:
            self._launch(values, ctx.device_id, grid_dims, block_dims, shared_mem)
        except MXNetError:
            raise
        except RuntimeError as err:   # cuda-python did not find the driver library, ...
            raise MXNetError(f"mx.rtc: CudaKernel({self._name}) could not be launched on "
                             f"{ctx}: {err}") from err

    def _launch(self, values, device_id, grid_dims, block_dims, shared_mem):
        import torch
        driver, _ = _bindings()
        function = self._module._function(self._name, device_id)
        holders = []
        for i, ((name, _, is_ptr, _), value) in enumerate(zip(self._params, values)):
            if is_ptr:
                tensor = value._t
                if not tensor.is_contiguous():
                    raise MXNetValueError(f"mx.rtc: CudaKernel({self._name}) "
                                          f"{_param_label(i, name)} is not contiguous in "
                                          f"memory; pass a copy")
                holders.append(ctypes.c_uint64(tensor.data_ptr()))
            else:
                holders.append(value)
        pointers = (ctypes.c_void_p * max(1, len(holders)))(
            *[ctypes.addressof(h) if isinstance(h, ctypes.c_uint64) else h.ctypes.data
              for h in holders])
        stream = torch.cuda.current_stream(torch.device("cuda", device_id)).cuda_stream
        with _context(device_id):
            _ok(driver.cuLaunchKernel(function, *[int(d) for d in grid_dims],
                                      *[int(d) for d in block_dims], int(shared_mem),
                                      driver.CUstream(stream), ctypes.addressof(pointers), 0),
                f"cuLaunchKernel({self._name})")
