"""Autograd scenarios shared by tools/gen_autograd_fixtures.py (run in MXNet 1.9.1) and
tests/test_autograd.py (run in neogluon). ``mx`` is the library under test."""
import itertools

SPARSE_INPUTS = {
    "empty": [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
    "row1": [[0.0, 0.0], [1.0, 2.0], [0.0, 0.0]],
}

_DENSE = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]

SPARSE_GRAD_OPS = {
    "mul_scalar": lambda mx, x: x * 2,
    "add_self": lambda mx, x: x + x,
    "sub": lambda mx, x: x - x * 3,
    "div_scalar": lambda mx, x: x / 2,
    "neg": lambda mx, x: -x,
    "square": lambda mx, x: mx.nd.square(x),
    "relu": lambda mx, x: mx.nd.relu(x),
    "sin": lambda mx, x: mx.nd.sin(x),
    "tanh": lambda mx, x: mx.nd.tanh(x),
    "mul_self": lambda mx, x: x * x,
    "chain": lambda mx, x: (x * 2) * 3,
    "sum_of_sparse": lambda mx, x: mx.nd.sum(x * 2),
    "densemul": lambda mx, x: x * mx.nd.array(_DENSE),
    "plus_dense": lambda mx, x: x * 2 + mx.nd.array(_DENSE),
}


def sparse_grad_cases():
    """(variable stype, input name, head-gradient stype or None, gradient stype or None, op)."""
    for stype, og, gst in itertools.product(["row_sparse", "csr"],
                                            [None, "default", "same"], [None, "default"]):
        for xname, opname in itertools.product(SPARSE_INPUTS, SPARSE_GRAD_OPS):
            if og == "same":
                if opname in ("sum_of_sparse", "densemul", "plus_dense") or \
                        (stype == "csr" and opname == "relu"):
                    # dense heads; MXNet 1.9.1 crashes on relu's csr backward with a csr head
                    continue
                yield (stype, xname, stype, gst, opname)
            else:
                yield (stype, xname, og, gst, opname)
