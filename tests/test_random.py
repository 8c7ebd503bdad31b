"""mx.random.seed makes the samplers (and Dropout) repeat; seeds and contexts are separate."""
import numpy as np
import pytest

import neogluon as mx
from neogluon import autograd, nd

SAMPLERS = [
    lambda: nd.random.uniform(-1, 2, shape=(3, 4)),
    lambda: nd.random.normal(1, 3, shape=(5,)),
    lambda: nd.random.randn(2, 2),
    lambda: nd.random.randint(0, 100, shape=(6,)),
    lambda: nd.random.exponential(2.0, shape=(4,)),
    lambda: nd.random.gamma(2.0, 1.5, shape=(4,)),
    lambda: nd.random.poisson(3.0, shape=(4,)),
    lambda: nd.random.negative_binomial(3, 0.4, shape=(4,)),
    lambda: nd.random.generalized_negative_binomial(2.0, 0.5, shape=(4,)),
    lambda: nd.random.multinomial(nd.array([[0.2, 0.3, 0.5]]), shape=5),
    lambda: nd.random.shuffle(nd.arange(10)),
    lambda: nd.random.uniform(nd.zeros(2), nd.ones(2), shape=(3,)),
    lambda: mx.random.uniform(shape=(3,)),
    lambda: mx.random.normal(shape=(3,)),
]


@pytest.mark.parametrize("draw", SAMPLERS)
def test_seed_repeats(draw):
    mx.random.seed(123)
    a = draw().asnumpy()
    b = draw().asnumpy()
    mx.random.seed(123)
    a2 = draw().asnumpy()
    b2 = draw().asnumpy()
    np.testing.assert_array_equal(a, a2)
    np.testing.assert_array_equal(b, b2)


def test_different_seeds_differ():
    mx.random.seed(1)
    a = nd.random.uniform(shape=(100,)).asnumpy()
    mx.random.seed(2)
    b = nd.random.uniform(shape=(100,)).asnumpy()
    assert not np.array_equal(a, b)


def test_dropout_repeats_with_seed():
    x = nd.ones((50, 40))
    outs = []
    for _ in range(2):
        mx.random.seed(7)
        with autograd.train_mode():
            outs.append((nd.Dropout(x, p=0.3).asnumpy(), nd.Dropout(x, p=0.3, axes=(1,)).asnumpy()))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_array_equal(outs[0][1], outs[1][1])


def test_seed_per_context():
    mx.random.seed(5, ctx=mx.cpu())
    a = nd.random.uniform(shape=(4,)).asnumpy()
    mx.random.seed(5, ctx=mx.cpu())
    b = nd.random.uniform(shape=(4,)).asnumpy()
    np.testing.assert_array_equal(a, b)


def test_seed_rejects_non_int():
    with pytest.raises(ValueError):
        mx.random.seed("a")


def test_distribution_moments():
    mx.random.seed(0)
    u = nd.random.uniform(2, 4, shape=(20000,)).asnumpy()
    assert u.min() >= 2 and u.max() < 4 and abs(u.mean() - 3) < 0.03
    n = nd.random.normal(1, 2, shape=(20000,)).asnumpy()
    assert abs(n.mean() - 1) < 0.05 and abs(n.std() - 2) < 0.05
    r = nd.random.randint(3, 7, shape=(5000,)).asnumpy()
    assert set(np.unique(r)) == {3, 4, 5, 6}
    nb = nd.random.negative_binomial(4, 0.5, shape=(20000,)).asnumpy()
    assert abs(nb.mean() - 4.0) < 0.15  # k (1 - p) / p
    m = nd.random.multinomial(nd.array([0.0, 0.25, 0.75]), shape=20000).asnumpy()
    assert abs((m == 2).mean() - 0.75) < 0.02 and (m == 0).sum() == 0


def test_seed_all_reaches_a_generator_made_later():
    """mx.random.seed(s) covers devices whose generator does not exist yet (a GPU first used
    after the seed): the generator made at first use starts from s."""
    from neogluon import random as ng_random
    mx.random.seed(11)
    want = nd.random.uniform(shape=(50,)).asnumpy()
    mx.random.seed(11)
    ng_random._generators.pop(("cpu", None))     # as if the device were first used now
    got = nd.random.uniform(shape=(50,)).asnumpy()
    np.testing.assert_array_equal(got, want)
