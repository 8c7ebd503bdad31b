"""The GPU-vs-CPU judge (tests/device_compare.py) on CPU, so CI tests the harness honestly:
CPU float32 judged against itself passes, a candidate through other CPU code paths (the
optimizers' CUDA dispatch, a hybridized graph) passes, and a perturbed copy is flagged with
the right name."""
import numpy as np
import pytest

import neogluon as mx
from neogluon.optimizer import fused

import device_compare as dc


@pytest.fixture(scope="module", params=["mlp", "lstm"])
def runs(request):
    return request.param, dc.run_case(request.param, mx.cpu())


def test_cases_cover_params_and_aux_states(runs):
    name, (ref, cpu, cand) = runs
    assert set(ref) == set(cpu) == set(cand)
    if name == "mlp":
        assert {"batchnorm0_running_mean", "batchnorm0_running_var"} <= set(ref)
        # the step moved the moving statistics (BatchNorm ran in training mode)
        assert np.abs(ref["batchnorm0_running_var"] - 1).max() > 1e-4
    else:
        assert any("h2h_weight" in k for k in ref)
    # float32 is not float64: the yardstick sees the CPU's own error
    assert max(np.abs(cpu[k] - ref[k]).max() for k in ref) > 0


def test_cpu_float32_passes_against_itself(runs):
    _, (ref, cpu, cand) = runs
    rep = dc.judge(ref, cpu, cand)
    assert not rep["offenders"], dc.describe(rep)
    assert rep["worst_ratio"] <= 0.5 + 1e-12   # identical runs: err <= (2*err + floor)/1


@pytest.mark.parametrize("field", ["param", "aux"])
def test_perturbed_copy_is_flagged_by_name(runs, field):
    name, (ref, cpu, cand) = runs
    bad = dict(cand)
    if field == "aux" and name == "mlp":
        key = "batchnorm1_running_mean"
    else:
        key = sorted(k for k in ref if k.endswith("weight"))[0]
    t = bad[key].copy()
    flat = t.reshape(-1)
    flat[3] += 1e-4 * max(np.abs(flat).max(), 1.0)   # far beyond float32 round-off
    bad[key] = t
    rep = dc.judge(ref, cpu, bad)
    assert rep["offenders"] == {key: 1}, dc.describe(rep)
    assert rep["worst"] == key and rep["worst_ratio"] > 10
    assert key in dc.describe(rep)


def test_nan_is_flagged(runs):
    _, (ref, cpu, cand) = runs
    key = sorted(ref)[0]
    bad = dict(cand)
    bad[key] = cand[key].copy()
    bad[key].reshape(-1)[0] = np.nan
    rep = dc.judge(ref, cpu, bad)
    assert key in rep["offenders"]


def test_optimizer_cuda_dispatch_and_hybridized_graph_pass():
    """The optimizer's CUDA code (fused/_foreach on CPU tensors) and a hybridized graph are
    other float32 paths: they must stay within twice the CPU's error."""
    make, inputs, labels, _ = dc.case("mlp")
    init = dc.initial_values(make, inputs)
    ref = dc.train_step(make, inputs, labels, init, mx.cpu(), "float64")
    cpu = dc.train_step(make, inputs, labels, init, mx.cpu(), "float32")
    for kw in (dict(context_manager=fused.device_path), dict(hybridize=True)):
        cand = dc.train_step(make, inputs, labels, init, mx.cpu(), "float32", **kw)
        rep = dc.judge(ref, cpu, cand)
        assert not rep["offenders"], f"{kw}: {dc.describe(rep)}"


def test_resnet18_step_cpu_paths():
    """ResNet-18 v1 (the GPU test's largest case) runs through the harness on CPU, the
    optimizer's CUDA dispatch as the candidate."""
    ref, cpu, cand = dc.run_case("resnet18", mx.cpu(),
                                 dict(context_manager=fused.device_path))
    assert len(ref) == 102   # every parameter and BatchNorm moving statistic is judged
    assert sum(k.endswith("running_mean") for k in ref) == 20
    rep = dc.judge(ref, cpu, cand)
    assert not rep["offenders"], dc.describe(rep)


def test_judge_refuses_mismatched_runs():
    a = {"x": np.zeros(3)}
    with pytest.raises(ValueError):
        dc.judge(a, a, {"y": np.zeros(3)})
    with pytest.raises(ValueError):
        dc.judge(a, a, {"x": np.zeros(4)})
