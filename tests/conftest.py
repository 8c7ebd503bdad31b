import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


@pytest.fixture
def fixture_path():
    def get(*parts):
        return os.path.join(FIXTURES, *parts)
    return get


@pytest.fixture(autouse=True)
def _seed():
    import neogluon as mx
    mx.random.seed(0)
    np.random.seed(0)
    yield
