"""Patterns from the d2l book's MXNet code (d2l 1.0.3, ``npx.set_np()``) that neogluon must
handle as MXNet 1.9.1 does; each case was checked against real MXNet. These tests do not need
the d2l package (tools/d2l_chapters.py runs the book itself)."""
import pytest

import neogluon as mx
from neogluon import np, npx
from neogluon.gluon import nn, rnn


@pytest.fixture
def np_mode():
    npx.set_np()
    yield
    npx.reset_np()


def test_deferred_shapes_read_minus_one_in_numpy_mode(np_mode):
    # d2l's lazy-init section prints the net and its parameters before the first batch
    net = nn.Sequential()
    net.add(nn.Dense(4, activation="relu"), nn.BatchNorm(), nn.LayerNorm())
    net.add(nn.Conv2D(3, 2))
    assert net[0].weight.shape == (4, -1)
    assert net[0].bias.shape == (4,)
    assert net[1].gamma.shape == (-1,)
    assert net[3].weight.shape == (3, -1, 2, 2)
    assert repr(net) == (
        "Sequential(\n"
        "  (0): Dense(-1 -> 4, Activation(relu))\n"
        "  (1): BatchNorm(axis=1, eps=1e-05, momentum=0.9, fix_gamma=False, "
        "use_global_stats=False, in_channels=-1)\n"
        "  (2): LayerNorm(eps=1e-05, axis=-1, center=True, scale=True, in_channels=-1)\n"
        "  (3): Conv2D(-1 -> 3, kernel_size=(2, 2), stride=(1, 1))\n"
        ")")
    assert repr(net[0].weight).endswith("(shape=(4, -1), dtype=float32)")
    lstm = rnn.LSTM(5)
    assert repr(lstm).startswith("LSTM(-1 -> 5, TNC")
    assert [p.shape for p in lstm.collect_params().values()] == [
        (20, -1), (20, 5), (20,), (20,)]
    # the stored shape is unchanged: outside NumPy mode the same parameter reads 0 again
    npx.reset_np()
    assert net[0].weight.shape == (4, 0)
    assert repr(net[0]) == "Dense(None -> 4, Activation(relu))"
    npx.set_np()
    net.initialize()
    net[:3](np.ones((2, 3)))
    assert net[0].weight.shape == (4, 3)
    assert net[1].gamma.shape == (4,)


def test_deferred_parameter_loads_in_numpy_mode(np_mode, tmp_path):
    src = nn.Dense(3, in_units=5)
    src.initialize()
    f = str(tmp_path / "d.params")
    src.save_parameters(f)
    dst = nn.Dense(3)
    dst.load_parameters(f)
    assert dst.weight.shape == (3, 5)
    assert (dst.weight.data().asnumpy() == src.weight.data().asnumpy()).all()
