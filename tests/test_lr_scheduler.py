"""Learning-rate schedules against MXNet 1.9.1 (tests/fixtures/optimizer/lr_scheduler.json)."""
import json
import os

import pytest

import neogluon as mx

with open(os.path.join(os.path.dirname(__file__), "fixtures", "optimizer",
                       "lr_scheduler.json")) as f:
    CASES = json.load(f)
IDS = [f"{c['kind']}-{i}" for i, c in enumerate(CASES)]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_at_every_num_update(case):
    s = getattr(mx.lr_scheduler, case["kind"])(**case["kwargs"])
    got = [s(n) for n in range(len(case["values"]))]
    assert got == case["values"]  # the same doubles: MXNet's order of operations


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_out_of_order(case):
    # the factor schedules keep state: MXNet's values depend on the order of the calls
    s = getattr(mx.lr_scheduler, case["kind"])(**case["kwargs"])
    got = [s(n) for n in case["order"]]
    assert got == case["values_order"]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_state_dict_resumes(case):
    s = getattr(mx.lr_scheduler, case["kind"])(**case["kwargs"])
    n_half = len(case["values"]) // 2
    for n in range(n_half):
        s(n)
    cls = getattr(mx.lr_scheduler, case["kind"])
    s2 = cls.__new__(cls)
    s2.load_state_dict(json.loads(json.dumps(s.state_dict())))
    got = [s2(n) for n in range(n_half, len(case["values"]))]
    assert got == case["values"][n_half:]


def test_load_state_dict_rejects_other_class():
    s = mx.lr_scheduler.FactorScheduler(step=2)
    with pytest.raises(ValueError, match="CosineScheduler"):
        s.load_state_dict(mx.lr_scheduler.CosineScheduler(max_update=3).state_dict())
    with pytest.raises(ValueError):
        s.load_state_dict({"class": "FactorScheduler"})


@pytest.mark.parametrize("make, exc", [
    (lambda: mx.lr_scheduler.FactorScheduler(step=0), ValueError),
    (lambda: mx.lr_scheduler.FactorScheduler(step=2, factor=1.5), ValueError),
    (lambda: mx.lr_scheduler.FactorScheduler(step=2, base_lr=0.1, warmup_begin_lr=0.5),
     ValueError),
    (lambda: mx.lr_scheduler.FactorScheduler(step=2, warmup_mode="cubic"), ValueError),
    (lambda: mx.lr_scheduler.FactorScheduler(step=2, warmup_steps=-1), ValueError),
    (lambda: mx.lr_scheduler.FactorScheduler(step=2, warmup_steps=2.5), AssertionError),
    (lambda: mx.lr_scheduler.MultiFactorScheduler(step=[3, 3]), ValueError),
    (lambda: mx.lr_scheduler.MultiFactorScheduler(step=[0, 3]), ValueError),
    (lambda: mx.lr_scheduler.MultiFactorScheduler(step=3), AssertionError),
    (lambda: mx.lr_scheduler.PolyScheduler(max_update=0), ValueError),
    (lambda: mx.lr_scheduler.PolyScheduler(max_update=2.0), AssertionError),
    (lambda: mx.lr_scheduler.CosineScheduler(max_update=0), ValueError),
])
def test_bad_arguments(make, exc):
    # MXNet 1.9.1 raises the same types (ValueError, or AssertionError from its asserts)
    with pytest.raises(exc):
        make()


def test_base_class_is_abstract():
    with pytest.raises(NotImplementedError):
        mx.lr_scheduler.LRScheduler()(3)
