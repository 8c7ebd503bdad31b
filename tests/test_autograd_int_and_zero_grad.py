"""Integer autograd variables through reductions and boolean_mask (MXNet 1.9.1 gives them
integer gradients), index_array of a 0-d array in np_shape mode, and zero-gradient
operators whose head gradient MXNet never reads."""
import numpy as np

import neogluon as mx


def test_sum_of_int_variable_is_differentiable():
    a = mx.nd.array([[1, 2, 3], [4, 5, 6]], dtype="int32")
    a.attach_grad()
    with mx.autograd.record():
        s = a.sum()
    s.backward()
    assert a.grad.dtype == np.int32 and a.grad.asnumpy().tolist() == [[1, 1, 1], [1, 1, 1]]


def test_boolean_mask_of_int_variable_accumulates():
    a = mx.nd.array(np.arange(12).reshape(4, 3), dtype="int32")
    a.attach_grad()
    bi = mx.nd.array([1, 0, 1, 0]) > 0.5
    ci = mx.nd.array([0, 0, 1, 1]) > 0.5
    g = mx.nd.zeros_like(a)
    mx.autograd.mark_variables([a], [g], grad_reqs="add")
    for _ in range(2):
        with mx.autograd.record():
            su = mx.nd.contrib.boolean_mask(a, bi).sum() + \
                mx.nd.contrib.boolean_mask(a, ci).sum()
            su.backward()
    # (checked against MXNet 1.9.1)
    assert g.asnumpy().tolist() == [[2, 2, 2], [0, 0, 0], [4, 4, 4], [2, 2, 2]]


def test_int_to_float_cast_keeps_the_gradient():
    a = mx.nd.array([1, 2], dtype="int32")
    a.attach_grad()
    with mx.autograd.record():
        y = (a.astype("float32") * 3).sum()
    y.backward()
    assert a.grad.asnumpy().tolist() == [3, 3]


def test_index_array_of_a_scalar():
    with mx.np_shape():
        data = mx.sym.var("data")
        out = mx.sym.contrib.index_array(data)
        res = out.eval(data=mx.nd.ones(()))[0]
        assert res.shape == (0,) and res.dtype == np.int64


def _proposal_inputs(batch):
    rng = np.random.RandomState(0)
    A, H, W = 3, 4, 4
    cls = mx.nd.array(rng.uniform(size=(batch, 2 * A, H, W)))
    bbox = mx.nd.array(rng.uniform(-0.1, 0.1, size=(batch, 4 * A, H, W)))
    info = mx.nd.array([[64, 64, 1.0]] * batch)
    return cls, bbox, info


def test_zero_gradient_operator_ignores_head_gradient_shape():
    # MXNet's MultiProposal backward is zeros: the head gradient is never read, so MXNet's
    # executor accepts one of another shape (test_operator.py::test_multi_proposal_op)
    cls, bbox, info = _proposal_inputs(2)
    kw = dict(feature_stride=16, scales=(2,), ratios=(0.5, 1, 2), rpn_pre_nms_top_n=12,
              rpn_post_nms_top_n=5, threshold=0.7, rpn_min_size=1)
    for a in (cls, bbox, info):
        a.attach_grad()
    with mx.autograd.record():
        rois = mx.nd.contrib.MultiProposal(cls, bbox, info, **kw)
    assert rois.shape == (10, 5)
    rois.backward(mx.nd.ones((5, 5)))
    assert float(cls.grad.abs().sum().asscalar()) == 0.0
    s = mx.sym.contrib.MultiProposal(mx.sym.var("c"), mx.sym.var("b"), mx.sym.var("i"), **kw)
    grads = {"c": mx.nd.ones(cls.shape), "b": mx.nd.ones(bbox.shape)}
    exe = s.bind(mx.cpu(), args={"c": cls, "b": bbox, "i": info}, args_grad=grads)
    exe.forward(is_train=True)
    exe.backward([mx.nd.ones((5, 5))])
    assert float(grads["c"].abs().sum().asscalar()) == 0.0


def test_other_operators_read_a_head_gradient_of_another_shape_row_major():
    # MXNet 1.9.1 does not check the head gradient's shape: it reads the head's number of
    # elements from the buffer in row-major order (tests/test_autograd.py has the details)
    import numpy as np
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = x * 2
    y.backward(mx.nd.arange(6).reshape((3, 2)))
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * np.arange(6).reshape(2, 3))
