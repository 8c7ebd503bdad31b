"""mx.rtc: CUDA source compiled with NVRTC (cuda-python) and launched on NDArrays.

The signature parsing and the launch argument checks are plain Python and run everywhere; the
error paths without CUDA / without cuda-python run on a CPU machine. The NVRTC tests need
cuda-python with its NVRTC library (no GPU: they fake the compute capability); the launch
tests need a CUDA GPU as well (tools/gpu_check.sh runs this file on a lent GPU machine).
"""
import sys

import numpy as np
import pytest
import torch

import neogluon as mx
from neogluon import rtc
from neogluon.base import MXNetError


def _nvrtc_usable():
    try:
        _, nvrtc = rtc._bindings()
        return int(nvrtc.nvrtcVersion()[0]) == 0
    except Exception:  # noqa: BLE001  (no cuda-python, or no libnvrtc)
        return False


HAVE_NVRTC = _nvrtc_usable()
HAVE_GPU = torch.cuda.is_available() and HAVE_NVRTC
needs_nvrtc = pytest.mark.skipif(not HAVE_NVRTC, reason="needs cuda-python with NVRTC")
needs_gpu = pytest.mark.skipif(not HAVE_GPU, reason="needs a CUDA GPU and cuda-python")


# ---- signatures ------------------------------------------------------------------------------

@pytest.mark.parametrize("ctype,dtype", [
    ("float", np.float32), ("double", np.float64), ("__half", np.float16),
    ("uint8_t", np.uint8), ("int", np.int32), ("int32_t", np.int32), ("int8_t", np.int8),
    ("char", np.int8), ("int64_t", np.int64)])
def test_signature_types(ctype, dtype):
    params = rtc.parse_signature(f"const {ctype} *x, {ctype}* y, {ctype} s")
    assert params == [("x", np.dtype(dtype), True, True), ("y", np.dtype(dtype), True, False),
                      ("s", np.dtype(dtype), False, False)]


def test_signature_spacing_and_unnamed():
    params = rtc.parse_signature("  const   float*x ,\n\tdouble  *  ,int64_t")
    assert params == [("x", np.dtype(np.float32), True, True),
                      (None, np.dtype(np.float64), True, False),
                      (None, np.dtype(np.int64), False, False)]
    assert rtc.parse_signature("const float *, float *, float") == [
        (None, np.dtype(np.float32), True, True), (None, np.dtype(np.float32), True, False),
        (None, np.dtype(np.float32), False, False)]


@pytest.mark.parametrize("sig,culprit", [
    ("float *x, foo *y", "'foo'"),
    ("float *x, unsigned int n", "parameter 1"),
    ("const float *x, float **y", "parameter 1"),
    ("const *x", "parameter 0"),
    ("float *x,", "parameter 1"),
    ("float *x, , int n", "parameter 1"),
    ("int int", "parameter 0"),
    ("float x y", "parameter 0"),
    ("", "parameter 0"),
])
def test_signature_errors_name_the_parameter(sig, culprit):
    with pytest.raises(MXNetError, match=culprit.replace("*", r"\*")):
        rtc.parse_signature(sig)


def test_signature_error_types_match_mxnet():
    # MXNet raised TypeError for an unknown type and ValueError for a malformed parameter
    with pytest.raises(TypeError, match="unsupported type 'long'"):
        rtc.parse_signature("long *x")
    with pytest.raises(ValueError, match="form"):
        rtc.parse_signature("float * * x")
    with pytest.raises(TypeError):
        rtc.parse_signature(None)


# ---- launch argument checks ------------------------------------------------------------------

def _on_gpu(arr):
    """A CPU array that reports gpu(0): the checks are pure Python and need no GPU."""
    arr._ctx = mx.gpu(0)
    assert arr.context == mx.gpu(0)
    return arr


PARAMS = rtc.parse_signature("const float *x, float *y, int n, __half a")


def _check(args, ctx=None, grid=(1, 1, 1), block=(32, 1, 1), shared=0):
    return rtc.check_launch_args("axpy", PARAMS, args, mx.gpu(0) if ctx is None else ctx,
                                 grid, block, shared)


def test_check_args_ok():
    x = _on_gpu(mx.nd.ones((4,)))
    y = _on_gpu(mx.nd.zeros((4,)))
    values = _check([x, y, 4, 2.5])
    assert values[0] is x and values[1] is y
    assert values[2].dtype == np.int32 and values[2] == 4
    assert values[3].dtype == np.float16 and values[3] == 2.5
    values = _check((x, y, np.int64(3), np.float32(1)))
    assert values[2].dtype == np.int32 and values[3].dtype == np.float16


def test_check_args_count():
    x = _on_gpu(mx.nd.ones((4,)))
    with pytest.raises(MXNetError, match=r"CudaKernel\(axpy\) expects 4 arguments but got 2"):
        _check([x, x])


def test_check_args_dtype_names_argument():
    x = _on_gpu(mx.nd.ones((4,), dtype="float64"))
    y = _on_gpu(mx.nd.zeros((4,)))
    with pytest.raises(MXNetError, match=r"argument 0 \('x'\).*dtype float32, got float64"):
        _check([x, y, 4, 1.0])


def test_check_args_kind_names_argument():
    x = _on_gpu(mx.nd.ones((4,)))
    with pytest.raises(MXNetError, match=r"argument 1 \('y'\).*expects an NDArray, got "
                                         r"ndarray"):
        _check([x, np.zeros(4, np.float32), 4, 1.0])
    with pytest.raises(MXNetError, match=r"argument 2 \('n'\).*expects a number, got str"):
        _check([x, x, "4", 1.0])
    with pytest.raises(MXNetError, match=r"argument 2 \('n'\).*expects a number"):
        _check([x, x, x, 1.0])
    with pytest.raises(MXNetError, match=r"argument 2 \('n'\)"):
        _check([x, x, 2 ** 40, 1.0])      # does not fit an int


def test_check_args_context_names_argument():
    x = _on_gpu(mx.nd.ones((4,)))
    y = mx.nd.zeros((4,))                  # really on cpu(0)
    with pytest.raises(MXNetError, match=r"argument 1 \('y'\) is on cpu\(0\).*gpu\(0\)"):
        _check([x, y, 4, 1.0])
    with pytest.raises(MXNetError, match=r"argument 0 \('x'\) is on gpu\(0\).*gpu\(1\)"):
        _check([x, x, 4, 1.0], ctx=mx.gpu(1))


def test_check_args_cpu_ctx_and_dims():
    x = _on_gpu(mx.nd.ones((4,)))
    with pytest.raises(MXNetError, match=r"only be launched on a GPU context.*cpu\(0\)"):
        _check([x, x, 4, 1.0], ctx=mx.cpu())
    with pytest.raises(MXNetError, match="grid_dims must be a tuple of 3"):
        _check([x, x, 4, 1.0], grid=(1, 1))
    with pytest.raises(MXNetError, match="block_dims must be a tuple of 3"):
        _check([x, x, 4, 1.0], block=(0, 1, 1))
    with pytest.raises(MXNetError, match="shared_mem"):
        _check([x, x, 4, 1.0], shared=-1)


# ---- CPU machine errors ----------------------------------------------------------------------

@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_module_without_cuda_raises():
    with pytest.raises(MXNetError, match="CUDA is not available"):
        mx.rtc.CudaModule('extern "C" __global__ void k() {}')
    with pytest.raises(MXNetError, match="NVRTC"):
        mx.rtc.CudaModule("__global__ void k() {}", exports="k")


def test_module_without_cuda_python_says_how_to_install(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(rtc, "_BINDINGS", None)
    for mod in ("cuda", "cuda.bindings", "cuda.bindings.driver", "cuda.bindings.nvrtc",
                "cuda.cuda", "cuda.nvrtc"):
        monkeypatch.setitem(sys.modules, mod, None)
    with pytest.raises(MXNetError, match="pip install cuda-python"):
        mx.rtc.CudaModule('extern "C" __global__ void k() {}')


def test_module_argument_types():
    with pytest.raises(TypeError, match="source must be a string"):
        mx.rtc.CudaModule(b"__global__ void k() {}")
    with pytest.raises(TypeError, match="exports must be strings"):
        mx.rtc.CudaModule("", exports=[1])


# ---- NVRTC (cuda-python, no GPU needed) ------------------------------------------------------

TEMPLATE_SRC = r"""
template<typename DType>
__global__ void axpy(const DType *x, DType *y, DType alpha, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n) y[i] += alpha * x[i];
}
"""


@pytest.fixture
def fake_gpu(monkeypatch):
    """Pretend torch has a GPU of compute capability 8.0 (compiling needs no GPU)."""
    if not torch.cuda.is_available():
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (8, 0))


@needs_nvrtc
def test_nvrtc_exports_are_lowered(fake_gpu):
    mod = mx.rtc.CudaModule(TEMPLATE_SRC, exports=["axpy<float>", "axpy<double>"])
    (image, lowered), = mod._ptx.values()
    assert lowered == {"axpy<float>": "_Z4axpyIfEvPKT_PS0_S0_i",
                       "axpy<double>": "_Z4axpyIdEvPKT_PS0_S0_i"}
    assert image
    kernel = mod.get_kernel("axpy<float>", "const float *x, float *y, float alpha, int n")
    assert kernel._is_ndarray == [True, True, False, False]


@needs_nvrtc
def test_nvrtc_compile_error_includes_log(fake_gpu):
    with pytest.raises(MXNetError, match=r"(?s)NVRTC could not compile.*undefined_thing"):
        mx.rtc.CudaModule('extern "C" __global__ void k(float *y) { y[0] = undefined_thing; }')
    with pytest.raises(MXNetError, match="--no-such-option"):
        mx.rtc.CudaModule('extern "C" __global__ void k() {}', options="--no-such-option")


# ---- GPU -------------------------------------------------------------------------------------

@needs_gpu
def test_gpu_axpy_extern_c():
    src = r"""
    extern "C" __global__ void axpy(const float *x, float *y, float alpha, int n) {
        int i = threadIdx.x + blockIdx.x * blockDim.x;
        if (i < n) y[i] += alpha * x[i];
    }
    """
    ctx = mx.gpu(0)
    kernel = mx.rtc.CudaModule(src).get_kernel("axpy", "const float *x, float *y, float alpha, "
                                                        "int n")
    xs = np.random.RandomState(0).randn(1000).astype(np.float32)
    x = mx.nd.array(xs, ctx=ctx)
    y = mx.nd.ones((1000,), ctx=ctx)
    kernel.launch([x, y, 3.0, 1000], ctx, (4, 1, 1), (256, 1, 1))
    ref = torch.ones(1000) + 3.0 * torch.from_numpy(xs)
    np.testing.assert_allclose(y.asnumpy(), ref.numpy(), rtol=1e-6, atol=1e-6)
    # ordered with torch's work on the same stream: a torch op right after sees the result
    np.testing.assert_allclose((y * 2).asnumpy(), 2 * ref.numpy(), rtol=1e-6, atol=1e-6)
    with pytest.raises(MXNetError, match=r"argument 0 \('x'\).*float32, got float64"):
        kernel.launch([x.astype("float64"), y, 3.0, 1000], ctx, (4, 1, 1), (256, 1, 1))
    with pytest.raises(MXNetError, match="GPU context"):
        kernel.launch([x, y, 3.0, 1000], mx.cpu(), (4, 1, 1), (256, 1, 1))


@needs_gpu
def test_gpu_half_kernel():
    # __half declared here (NVRTC finds no cuda_fp16.h without -I): its bits are copied, and
    # a scalar __half argument is passed as 2 bytes
    src = r"""
    struct __half { unsigned short bits; };
    extern "C" __global__ void fill_last(const __half *x, __half *y, __half last, int n) {
        int i = threadIdx.x;
        if (i < n) y[i] = (i == n - 1) ? last : x[i];
    }
    """
    ctx = mx.gpu(0)
    kernel = mx.rtc.CudaModule(src).get_kernel(
        "fill_last", "const __half *x, __half *y, __half last, int n")
    x = mx.nd.array(np.arange(8), dtype="float16", ctx=ctx)
    y = mx.nd.zeros((8,), dtype="float16", ctx=ctx)
    kernel.launch([x, y, -2.5, 8], ctx, (1, 1, 1), (8, 1, 1))
    np.testing.assert_array_equal(y.asnumpy(),
                                  np.array([0, 1, 2, 3, 4, 5, 6, -2.5], dtype=np.float16))


@needs_gpu
def test_gpu_templated_kernel_via_exports():
    ctx = mx.gpu(0)
    mod = mx.rtc.CudaModule(TEMPLATE_SRC, exports=("axpy<float>", "axpy<double>"))
    for dtype, ctype in (("float32", "float"), ("float64", "double")):
        kernel = mod.get_kernel(f"axpy<{ctype}>",
                                f"const {ctype} *x, {ctype} *y, {ctype} alpha, int n")
        x = mx.nd.arange(10, dtype=dtype, ctx=ctx)
        y = mx.nd.ones((10,), dtype=dtype, ctx=ctx)
        kernel.launch([x, y, 0.5, 10], ctx, (1, 1, 1), (10, 1, 1))
        expect = torch.ones(10, dtype=getattr(torch, dtype)) + 0.5 * torch.arange(
            10, dtype=getattr(torch, dtype))
        np.testing.assert_allclose(y.asnumpy(), expect.numpy())
    with pytest.raises(MXNetError, match="axpy<int>"):
        mod.get_kernel("axpy<int>", "const int *x, int *y, int alpha, int n").launch(
            [x.astype("int32"), y.astype("int32"), 1, 10], ctx, (1, 1, 1), (10, 1, 1))


# ---- the launch's driver calls, with a stand-in driver (no GPU) ------------------------------

class _FakeDriver:
    """Records the driver calls of a launch and reads back the packed kernel arguments."""

    def __init__(self, ctypes_of_params):
        self.calls = []
        self.ctypes_of_params = ctypes_of_params

    def cuInit(self, flags):
        return (0,)

    def cuDeviceGet(self, ordinal):
        self.calls.append(("cuDeviceGet", ordinal))
        return (0, ordinal)

    def cuDevicePrimaryCtxRetain(self, dev):
        self.calls.append(("retain", dev))
        return (0, "primary-ctx")

    def cuCtxPushCurrent(self, ctx):
        self.calls.append(("push", ctx))
        return (0,)

    def cuCtxPopCurrent(self):
        self.calls.append(("pop",))
        return (0, "primary-ctx")

    def CUstream(self, handle):
        return ("stream", handle)

    def cuLaunchKernel(self, function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        import ctypes
        n = len(self.ctypes_of_params)
        addresses = (ctypes.c_void_p * n).from_address(params)
        values = [ct.from_address(a).value for ct, a in zip(self.ctypes_of_params, addresses)]
        self.calls.append(("launch", function, (gx, gy, gz), (bx, by, bz), shared, stream,
                           values, extra))
        return (0,)


def test_launch_packs_arguments_for_the_driver(monkeypatch):
    import ctypes
    driver = _FakeDriver([ctypes.c_uint64, ctypes.c_uint64, ctypes.c_float, ctypes.c_int32,
                          ctypes.c_uint16, ctypes.c_int64])
    monkeypatch.setattr(rtc, "_BINDINGS", (driver, None))
    monkeypatch.setattr(rtc, "_PRIMARY", {})
    monkeypatch.setattr(torch.cuda, "init", lambda: None)

    class _Stream:
        cuda_stream = 1234

    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: _Stream())

    class _Module:
        def _function(self, name, device_id):
            driver.calls.append(("function", name, device_id))
            return "fn"

    kernel = rtc.CudaKernel(_Module(), "k", rtc.parse_signature(
        "const float *x, float *y, float a, int n, __half h, int64_t m"))
    x = _on_gpu(mx.nd.ones((4,)))
    y = _on_gpu(mx.nd.zeros((4,)))
    kernel.launch([x, y, 2.5, 7, 1.5, 2 ** 40], mx.gpu(0), (2, 1, 1), (64, 1, 1), 16)
    launch = [c for c in driver.calls if c[0] == "launch"]
    assert launch == [("launch", "fn", (2, 1, 1), (64, 1, 1), 16, ("stream", 1234),
                       [mx.nd.to_torch(x).data_ptr(), mx.nd.to_torch(y).data_ptr(), 2.5, 7,
                        int(np.float16(1.5).view(np.uint16)), 2 ** 40], 0)]
    # in torch's primary context of gpu(0), pushed and popped around the launch
    assert ("retain", 0) in driver.calls
    i = driver.calls.index(launch[0])
    assert driver.calls[i - 1] == ("push", "primary-ctx") and driver.calls[i + 1] == ("pop",)
    # a non-contiguous array is refused, naming it
    t = _on_gpu(mx.nd.ones((4, 4)))
    t._t = t._t.t()
    if not t._t.is_contiguous():
        with pytest.raises(MXNetError, match=r"argument 1 \('y'\) is not contiguous"):
            kernel.launch([x, t, 1.0, 1, 1.0, 1], mx.gpu(0), (1, 1, 1), (1, 1, 1))
