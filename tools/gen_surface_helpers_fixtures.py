"""Record MXNet 1.9.1's results for the private helpers and module-level names that
tests/test_surface_helpers.py checks neogluon against.

    /tmp/mxref/bin/python tools/gen_surface_helpers_fixtures.py

Writes tests/fixtures/surface/helpers.json: the formats ``gluon.block._flatten`` gives and
what ``_regroup`` rebuilds for nested inputs; ``nd._internal``'s scalar and same-shape
operators on a small array; ``sym.eye``/``sym.linspace`` values and shapes; the legacy
``misc.FactorScheduler``; ``base.build_param_doc``; ``rnn_cell._cells_state_info``; the
storage/grad-req codes of ``ndarray.ndarray``. The same script body runs on neogluon (through
the alias) in the test, so both sides compute exactly the same things.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "tests", "fixtures", "surface", "helpers.json")

SCALAR_OPS = ["_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar",
              "_rdiv_scalar", "_mod_scalar", "_rmod_scalar", "_power_scalar", "_rpower_scalar",
              "_equal_scalar", "_not_equal_scalar", "_greater_scalar", "_greater_equal_scalar",
              "_lesser_scalar", "_lesser_equal_scalar", "_maximum_scalar", "_minimum_scalar",
              "_hypot_scalar", "_logical_and_scalar", "_logical_or_scalar",
              "_logical_xor_scalar", "_PlusScalar", "_RDivScalar", "_MinimumScalar"]
BINARY_OPS = ["_equal", "_not_equal", "_greater", "_greater_equal", "_lesser", "_lesser_equal",
              "_logical_and", "_logical_or", "_logical_xor", "_maximum", "_minimum", "_power",
              "_hypot", "_mod", "_Plus", "_Minus", "_Mul", "_Div", "_Greater", "_Mod", "_sub"]


def describe(x, mx):
    """A JSON-able picture of a (nested) structure of NDArray / Symbol / None."""
    if x is None:
        return None
    if isinstance(x, mx.nd.NDArray):
        return {"nd": x.asnumpy().tolist()}
    if isinstance(x, mx.sym.Symbol):
        return {"sym": x.list_outputs()}
    return [describe(i, mx) for i in x]


def compute(mx):
    from mxnet.gluon.block import _flatten, _regroup
    out = {}
    a, b = mx.nd.array([1, 2]), mx.nd.array([3])
    s1 = mx.sym.var("s1")
    s2 = mx.sym.split(mx.sym.var("s2"), num_outputs=3)
    cases = {"single": a, "flat": [a, b], "nested": [a, [None, b], (a,)],
             "symbols": [s1, [s2, a]], "none": None, "empty": []}
    out["flatten"] = {}
    for key, value in cases.items():
        flat, fmt = _flatten(value, "case")
        # _regroup takes the outputs: a multi-output Symbol's outputs one by one
        outputs = [o for f in flat for o in
                   ([f[i] for i in range(len(f.list_outputs()))]
                    if isinstance(f, mx.sym.Symbol) and len(f.list_outputs()) > 1 else [f])]
        out["flatten"][key] = {"flat": describe(flat, mx), "fmt": fmt,
                               "regroup": describe(_regroup(outputs, fmt), mx)}
    try:
        _flatten(3, "case")
        out["flatten_error"] = None
    except ValueError:
        out["flatten_error"] = "ValueError"
    try:
        _regroup([a], -2)
        out["regroup_error"] = None
    except ValueError:
        out["regroup_error"] = "ValueError"

    x = mx.nd.array([[1.5, -2, 3], [4, 0.5, -6]])
    y = mx.nd.array([[2, 2, 3], [4, 1, 0.25]])
    out["scalar"] = {n: getattr(mx.nd._internal, n)(x, scalar=2.0).asnumpy().tolist()
                     for n in SCALAR_OPS}
    out["binary"] = {n: getattr(mx.nd._internal, n)(x, y).asnumpy().tolist()
                     for n in BINARY_OPS}
    sv = mx.sym.var("x")
    out["sym_scalar"] = mx.sym._internal._rminus_scalar(sv, scalar=3).eval(x=x)[0] \
        .asnumpy().tolist()
    out["copy"] = mx.nd._internal._copy(x).asnumpy().tolist()

    e = mx.sym.eye(3, 4, 1)
    out["eye"] = {"shape": e.infer_shape()[1], "value": e.eval()[0].asnumpy().tolist()}
    ls = mx.sym.linspace(0, 1, 5, endpoint=False)
    out["linspace"] = {"shape": ls.infer_shape()[1], "value": ls.eval()[0].asnumpy().tolist()}

    from mxnet.misc import FactorScheduler
    sched = FactorScheduler(step=3, factor=0.5)
    out["factor_scheduler"] = [sched(i) for i in range(0, 10)]

    from mxnet.base import build_param_doc
    out["param_doc"] = build_param_doc(["a", "b", "a", "num_args"], ["int", "str", "int", "int"],
                                       ["first", "", "again", "n"])

    from mxnet.gluon.rnn.rnn_cell import _cells_state_info
    cells = [mx.gluon.rnn.LSTMCell(4, input_size=2), mx.gluon.rnn.GRUCell(3, input_size=2)]
    out["state_info"] = [{k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()}
                         for d in _cells_state_info(cells, 5)]

    import mxnet.ndarray.ndarray as ndm
    out["codes"] = {"default": ndm._STORAGE_TYPE_DEFAULT, "row_sparse": ndm._STORAGE_TYPE_ROW_SPARSE,
                    "csr": ndm._STORAGE_TYPE_CSR, "grad_req": ndm._GRAD_REQ_MAP}
    return out


def main():
    import mxnet as mx
    result = compute(mx)
    with open(OUT, "w") as f:
        json.dump({"mxnet_version": mx.__version__, "results": result}, f,
                  sort_keys=True)
        f.write("\n")
    print("->", OUT)


if __name__ == "__main__":
    sys.exit(main())
