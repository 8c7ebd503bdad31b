"""The optimizers on real CUDA tensors (skips without CUDA; the same properties are tested on
CPU tensors through ``fused.device_path()`` in tests/test_optimizer_device_path.py).

* numbers: step by step from the same weights and states, a CUDA update equals the compiled
  CPU kernels' within 2 float32 ulps of each tensor's largest magnitude (the GPU's kernels may
  contract a multiply and an add into one rounding where the CPU kernel rounds twice);
* multi-tensor: the CUDA kernels one update launches (counted with torch.profiler) do not grow
  with the number of tensors.
"""
import numpy as np
import pytest
import torch
from torch.profiler import ProfilerActivity, profile

import neogluon as mx

import test_optimizer_device_path as dp

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _to_gpu(upd, ws, gs):
    gpu = mx.gpu(0)
    return upd, [w.as_in_context(gpu) for w in ws], [g.as_in_context(gpu) for g in gs]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name,kw", dp.CONFIGS, ids=dp.IDS)
def test_cuda_update_equals_cpu_kernels(name, kw, dtype):
    ua, wa, ga, rs = dp.make_run(name, kw, dtype)
    ub, wb, gb = _to_gpu(*dp.make_run(name, kw, dtype)[:3])
    idx = list(range(len(wa)))
    for step in range(4):
        dp.fill(ga, rs)
        for x, y in zip(gb, ga):
            x[:] = y.as_in_context(x.context)
        with dp.kernels_path():
            ua(idx, ga, wa)
        ub(idx, gb, wb)
        for i in idx:
            la, lb = dp.leaves(ua.states[i]), dp.leaves(ub.states[i])
            for j, (x, y) in enumerate(zip(la, lb)):
                err = dp.ulp_err(y.asnumpy(), x.asnumpy())
                assert err <= 2 * dp.STATE_ULPS.get(name, 2.0), \
                    f"step {step}: state {i}.{j} is {err:.2f} ulps off"
                y[:] = x.as_in_context(y.context)
        for i, (x, y) in enumerate(zip(wa, wb)):
            if dtype == "float16":
                np.testing.assert_allclose(y.asnumpy(), x.asnumpy(), rtol=1e-3, atol=1e-3)
            else:
                err = dp.ulp_err(y.asnumpy(), x.asnumpy())
                assert err <= 2.0, f"step {step}: weight {i} is {err:.2f} ulps off"
            y[:] = x.as_in_context(y.context)


def _kernels_per_step(name, kw, dtype, n):
    upd, ws, gs = _to_gpu(*dp.make_run(name, kw, dtype, n=n)[:3])
    idx = list(range(n))
    for _ in range(2):
        upd(idx, gs, ws)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        upd(idx, gs, ws)
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name,kw", dp.CONFIGS, ids=dp.IDS)
def test_cuda_kernel_launches_do_not_grow_with_tensors(name, kw, dtype):
    small = _kernels_per_step(name, kw, dtype, 10)
    large = _kernels_per_step(name, kw, dtype, 40)
    assert small > 0
    # torch's multi-tensor launches take at most 30-110 tensors each (by list depth), so 40
    # small tensors may need two launches per op where 10 need one: at most twice the
    # kernels for four times the tensors (a per-tensor loop would need four times)
    assert large <= 2 * small, f"{name}: {small} kernels for 10 tensors, {large} for 40"
