"""Partial shape inference of slice / slice_axis with unknown dimensions (MXNet 1.9.1:
a sliced dimension whose size is unknown stays unknown; np_shape's -1 in a declared
variable shape is an unknown dimension)."""
import pytest

import neogluon as mx


@pytest.mark.parametrize("begin,end,step,expected", [
    ((None, None), (None, 10), [], (0, 10)),
    ((None, None), (None, 10), (None, 2), (0, 5)),
    ((None, 3), (5, 10), [], (0, 7)),
    ((2, 3), (None, 10), (None, 1), (0, 7)),
    ((2, 3), (None, 10), (3, 3), (0, 3)),
    ((2,), (None,), [], (0, 20)),
    ((None, None), (None, None), (None, -3), (0, 7)),
])
def test_slice_unknown_dims(begin, end, step, expected):
    data = mx.sym.var("data", shape=(0, 20))
    out = mx.sym.slice(data, begin=begin, end=end, step=step)
    args, outs, _ = out.infer_shape_partial()
    assert args == [(0, 20)]
    assert outs == [expected]


def test_slice_known_dims_after_partial_become_full():
    data = mx.sym.var("data")
    out = mx.sym.slice(data, begin=(1, 3), end=(4, 10)) * 2
    assert out.infer_shape_partial(data=(0, 20))[1] == [(0, 7)]
    assert out.infer_shape(data=(6, 20))[1] == [(3, 7)]


def test_slice_axis_unknown_dims():
    data = mx.sym.var("data", shape=(10, 0))
    assert mx.sym.slice_axis(data, axis=0, begin=0, end=5).infer_shape_partial()[1] == \
        [(5, 0)]
    assert mx.sym.slice_axis(data, axis=1, begin=0, end=5).infer_shape_partial()[1] == \
        [(10, 0)]


def test_np_shape_declared_minus_one_is_unknown():
    with mx.np_shape():
        data = mx.sym.var("data", shape=(-1, 20))
        out = mx.sym.slice(data, begin=(2, 3), end=(None, 10), step=(3, 3))
        assert out.infer_shape_partial() == ([(-1, 20)], [(-1, 3)], [])
        out = mx.sym.slice_axis(data, axis=1, begin=0, end=5)
        assert out.infer_shape_partial() == ([(-1, 20)], [(-1, 5)], [])


def test_transpose_infers_its_data_back_from_the_output():
    o1 = mx.sym.ones(shape=[2, 3])
    t = mx.sym.transpose(mx.sym.ones(shape=[-1, -1]))
    exe = (o1 + t).bind(mx.cpu(), args={})
    out = exe.forward()[0]
    assert out.shape == (2, 3) and float(out.sum().asscalar()) == 12.0
    # partly known on both sides
    o1 = mx.sym.ones(shape=[2, -1])
    t = mx.sym.transpose(mx.sym.ones(shape=[3, -1]))
    assert (o1 + t).infer_shape_partial()[1] == [(2, 3)]
    assert (o1 + t).eval()[0].shape == (2, 3)
    # explicit axes
    x = mx.sym.var("x")
    y = mx.sym.transpose(x, axes=(1, 2, 0)) + mx.sym.zeros((4, 5, 3))
    assert y.infer_shape_partial()[0] == [(3, 4, 5)]


def test_arange_infer_range_takes_its_length_from_the_graph():
    s = mx.sym.arange(start=2, stop=None, step=3, repeat=2, infer_range=True)
    assert s.infer_shape_partial() == ([], [()], [])
    t = s + mx.sym.zeros((6,))
    assert t.infer_shape() == ([], [(6,)], [])
    exe = mx.sym.elemwise_add(s, mx.sym.zeros(shape=[6])).bind(mx.cpu(), args={})
    assert exe.forward()[0].asnumpy().tolist() == [2, 2, 5, 5, 8, 8]
    # without infer_range, a lone bound is the stop
    assert mx.sym.arange(5).eval()[0].asnumpy().tolist() == [0, 1, 2, 3, 4]
    assert "infer_range" in mx.sym.arange(5).tojson()


def test_integer_arange_converts_start_and_step_first():
    # (MXNet 1.9.1: the length from the real range, the values from int(start), int(step))
    assert mx.nd.arange(1.3, 20.6, 1.7, dtype="int32").asnumpy().tolist() == \
        list(range(1, 13))
    assert mx.nd.arange(-1.3, 20.6, 1.7, dtype="int32").asnumpy().tolist() == \
        list(range(-1, 12))
    out = mx.nd.arange(50, -50, -2, dtype="uint8").asnumpy()
    assert out.tolist()[24:28] == [2, 0, 254, 252] and len(out) == 50
    assert mx.nd.arange(0.5, 2.5, 0.5).asnumpy().tolist() == [0.5, 1.0, 1.5, 2.0]


def test_numpy1_arange_wraps_out_of_range_ints():
    """The runner's NumPy 1 layer: np.arange(-100, 100, dtype=uint8) wrapped in NumPy 1
    (MXNet's test_init compares against it); NumPy 2 raises OverflowError."""
    import numpy as np
    from neogluon._numpy1 import _arange
    arange = _arange(np.arange)
    out = arange(-100, 100, 1, dtype=np.uint8)
    assert out.dtype == np.uint8 and out[:3].tolist() == [156, 157, 158] and len(out) == 200
    assert arange(-3, 3, dtype=np.int8).tolist() == [-3, -2, -1, 0, 1, 2]
    assert arange(5).tolist() == [0, 1, 2, 3, 4]
