"""Context semantics (the MXNet-compared cases are in the 'context' snippets)."""
import pytest

import neogluon as mx
from neogluon import nd


def test_cpu_contexts_are_distinct_but_share_the_device():
    a = nd.ones((2,), ctx=mx.cpu(1))
    b = a.as_in_context(mx.cpu(2))
    assert a.context == mx.cpu(1) and b.context == mx.cpu(2)
    assert mx.cpu(1) != mx.cpu(2)
    assert nd.to_torch(a).device.type == "cpu"
    b[:] = 5
    assert a.asnumpy().tolist() == [1, 1]  # a copy, not a view


def test_with_context_nests_and_restores():
    assert mx.current_context() == mx.cpu(0)
    with mx.cpu(3):
        assert nd.zeros(1).context == mx.cpu(3)
        with mx.Context("cpu", 4):
            assert mx.current_context() == mx.cpu(4)
        assert mx.current_context() == mx.cpu(3)
    assert mx.current_context() == mx.cpu(0)


@pytest.mark.skipif(mx.context.num_gpus() > 0, reason="needs a machine without GPUs")
def test_gpu_without_gpu_is_a_clear_error():
    ctx = mx.gpu(0)  # creating the context is fine, as in MXNet
    assert str(ctx) == "gpu(0)"
    for make in (lambda: nd.ones((2,), ctx=ctx), lambda: nd.array([1, 2], ctx=ctx),
                 lambda: nd.ones(2).as_in_context(ctx), lambda: nd.random.uniform(ctx=ctx)):
        with pytest.raises(mx.MXNetError, match=r"gpu\(0\)"):
            make()
    with pytest.raises(mx.MXNetError, match="GPU"):
        mx.context.gpu_memory_info(0)


def test_unknown_device_type():
    with pytest.raises(KeyError):
        mx.Context("tpu", 0)
    with pytest.raises(mx.MXNetError, match="tpu"):
        mx.Context("tpu", 0)


def test_context_copy_constructor_and_attrs():
    c = mx.Context(mx.gpu(2))
    assert c.device_type == "gpu" and c.device_id == 2 and c.device_typeid == 2
    assert mx.cpu_pinned(0).device_type == "cpu_pinned"
    assert repr(mx.cpu(1)) == "cpu(1)"


def test_same_context_object_entered_twice_restores():
    c = mx.cpu(1)
    with c:
        with c:
            assert mx.current_context() == mx.cpu(1)
        assert mx.current_context() == mx.cpu(1)
    assert mx.current_context() == mx.cpu(0)
    a = nd.ones(2, ctx=mx.cpu(2))
    with a.context:
        with a.context:
            pass
    assert mx.current_context() == mx.cpu(0)
