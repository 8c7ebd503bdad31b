"""Record MXNet 1.9.1's mx.np behaviour for tests/test_numpy_interface.py.

Run with the MXNet reference venv: /tmp/mxref/bin/python tools/gen_numpy_fixtures.py
Writes tests/fixtures/numpy/basics.json: for each expression, MXNet's value, dtype and shape
(or the error type). The expressions use ``i`` (int32 [1, 4]), ``f`` (float32 [1, 4]),
``bo`` (bool [True, False]), ``x`` (arange(6) reshaped to (2, 3)) and ``h`` (five float16
values).
"""
import json
import os
import warnings

warnings.filterwarnings("ignore")
import mxnet as mx  # noqa: E402
from mxnet import np, npx  # noqa: E402
import numpy as onp  # noqa: E402

EXPRS = [
    "np.array([1, 2])", "np.array(onp.arange(3))", "np.array(onp.arange(3.))",
    "np.array([True, False])", "np.array(3.5)", "np.arange(3)", "np.arange(3, dtype=int)",
    "np.zeros((2, 3), dtype=int)", "np.zeros((2, 3), dtype=float)", "np.full((2,), 3)",
    "np.full((2,), 3.5)", "np.linspace(0, 1, 5)", "np.eye(2)", "np.ones((2, 0))",
    "i / i", "i % i", "i == i", "np.true_divide(i, 2)", "f / i", "np.add(i, f)",
    "np.power(i, 2)", "np.power(f, i)", "i * 1.5", "i + 1.5", "i ** 2", "i + bo", "f + True",
    "bo + 1", "bo * 1.5", "i > 1.5", "-x", "abs(-x)", "x.T",
    "np.sqrt(i)", "np.exp(i)", "np.abs(i)", "np.negative(i)", "np.floor(i)", "np.square(i)",
    "np.log(i)", "np.sin(i)", "np.logical_not(i)", "np.isnan(f)",
    "np.sqrt(bo)", "np.exp(bo)",
    "np.sum(i)", "np.sum(bo)", "np.prod(i)", "np.mean(i)", "np.mean(bo)", "np.max(i)",
    "np.argmax(i)", "np.cumsum(i)", "np.all(i)", "np.any(bo)",
    "x[0, 0]", "x[1]", "x[-1, ::-1]", "x[x > 2]", "x[[0, 1], [1, 2]]", "x[:, None]",
    "x[np.array([0, 1])]", "x.reshape(-1)[3]",
    "x.sum(axis=0, keepdims=True)", "x.mean(1)", "np.concatenate([x, x])",
    "np.stack([x, x], axis=1)", "np.dot(x, x.T)", "np.matmul(x, x.T)",
    "np.array([[1, 2], [3, 4]]) @ np.array([[1, 2], [3, 4]])", "x.astype('int32')",
    "np.where(x > 2, x, 0)", "np.clip(x, 1, 3)", "np.sort(np.array([3., 1., 2.]))",
    "np.argsort(np.array([3., 1., 2.]))", "np.unique(np.array([1., 2., 2.]))", "x.flatten()",
    "np.expand_dims(x, 0)", "np.transpose(x)", "x.transpose(1, 0)", "np.swapaxes(x, 0, 1)",
    "np.tile(x, (2, 1))", "np.repeat(x, 2)", "np.repeat(x, 2, axis=0)", "x.max()",
    "x.argmax(axis=1)", "np.maximum(x, 2.)", "np.minimum(f, 2.)", "np.split(x, 3, axis=1)[1]",
    "np.linalg.norm(x)", "np.std(x)", "np.var(x, axis=0)", "np.tril(np.ones((3, 3)))",
    "np.broadcast_to(f, (2, 2))", "np.squeeze(np.ones((1, 2, 1)))", "np.flip(x, 1)",
    "npx.relu(np.array([-1., 2.]))", "npx.sigmoid(np.array([0.]))",
    "npx.softmax(x)", "npx.reshape(np.ones((2, 3, 4)), (-2, -1))",
    "npx.reshape(np.ones((2, 3, 4)), (-5, -4))", "npx.reshape(np.ones((6, 4)), (-6, 2, -1, -2))",
    "npx.one_hot(np.array([0., 2.]), 3)", "npx.pick(x, np.array([0., 2.]), axis=1)",
    "np.einsum('ij,kj->ik', x, x)", "np.cov(x)", "x.item(0)", "x.tolist()", "repr(x)",
    "repr(np.array([1, 2], dtype='int64'))", "repr(np.array([True]))", "repr(x[0, 0])",
    "float(np.array(2.5))", "int(np.array(3.))", "bool(np.array(1.))", "len(x)", "x.ndim",
    "x.size", "str(x.dtype)",
    # quantile/percentile: MXNet's kernel (float32 result unless the data is float64; the
    # float16 interpolation terms rounded to float16, their sum in float32)
    "np.quantile(h, 0.2837129235267639, interpolation='midpoint')",
    "np.quantile(h, np.array([0.1, 0.5, 0.9]))", "np.quantile(h, 0.37, interpolation='lower')",
    "np.quantile(i, 0.3)", "np.quantile(x, 0.5, axis=1, interpolation='nearest')",
    "np.quantile(f, np.array([0.25], dtype='float64'))", "np.percentile(x, 37.5)",
    "np.percentile(x, 37.5, interpolation='lower')", "np.percentile(x.astype('float64'), 40)",
    "np.quantile(x, np.array([0.2, 0.7]), axis=(0, 1), keepdims=True, interpolation='higher')",
    "np.quantile(x.astype('float16'), np.array([0.3, 0.55]), axis=0, interpolation='midpoint')",
    # npx operators
    "npx.batch_flatten(np.ones((2, 3, 4)))", "npx.shape_array(x)", "npx.arange_like(x, axis=1)",
    "npx.nonzero(x)", "npx.gammaln(f)", "npx.erfinv(np.array([0.5]))", "npx.topk(x, k=2)",
    "npx.slice(x, begin=(0, 1), end=(2, 3))", "npx.reshape_like(x, np.ones((3, 2)))",
    "npx.batch_dot(np.ones((2, 2, 3)), np.ones((2, 3, 2)))",
    "npx.gather_nd(x, np.array([[0, 1], [1, 2]]))", "npx.smooth_l1(f, 1.0)",
    "npx.cast(x, dtype='float16')", "npx.leaky_relu(np.array([-1., 2.]))", "npx.log_softmax(x)",
    "npx.sequence_mask(np.ones((3, 2, 2)), np.array([1., 2.]), use_sequence_length=True)",
    "npx.embedding(np.array([0., 1.]), np.eye(3), input_dim=3, output_dim=3)",
    "npx.pooling(np.ones((1, 1, 4, 4)), kernel=(2, 2), pool_type='max')",
    "npx.layer_norm(np.ones((2, 3)), np.ones(3), np.zeros(3))",
    "npx.constraint_check(np.ones(2) > 0)", "npx.constraint_check(np.ones(2))",
    "npx.constraint_check(np.array([1, 0]) > 0)",
    "npx.image.normalize(np.ones((3, 2, 2)), mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))",
]


def record(r):
    if isinstance(r, np.ndarray):
        a = r.asnumpy()
        return {"kind": "array", "dtype": str(a.dtype), "shape": list(a.shape),
                "value": a.astype("float64").tolist()}
    if isinstance(r, (list, tuple)):
        return {"kind": "pyseq", "value": r if not r or not isinstance(r[0], np.ndarray)
                else None}
    return {"kind": type(r).__name__, "value": r}


def main():
    npx.set_np()
    i = np.array([1, 4], dtype="int32")  # noqa: F841 - used by the expressions
    f = np.array([1., 4.])  # noqa: F841
    bo = np.array([True, False])  # noqa: F841
    x = np.arange(6).reshape(2, 3)  # noqa: F841
    h = np.array([2.209, -2.223, -4.61, 3.012, 8.14], dtype="float16")  # noqa: F841
    out = {}
    for e in EXPRS:
        try:
            out[e] = record(eval(e))
        except Exception as err:  # noqa: BLE001 - the error type is the record
            out[e] = {"kind": "error", "error": type(err).__name__}
    path = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "numpy",
                        "basics.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)
    print(f"wrote {len(out)} cases to {path}")


if __name__ == "__main__":
    main()
