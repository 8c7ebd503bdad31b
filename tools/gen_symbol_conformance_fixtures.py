"""Write tests/fixtures/symbol_conformance/infer.json from MXNet 1.9.1 (run with
/tmp/mxref/bin/python): infer_shape_partial and infer_type(_partial) of the graphs in
tests/symbol_conformance_cases.py, by argument name, and MXNet's error where it raises."""
import json
import os
import sys
import warnings

import numpy as np
import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import symbol_conformance_cases as C  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "fixtures", "symbol_conformance")


def _shape(s):
    return None if s is None else list(s)


def shape_record(build, np_shape=False):
    with mx.name.NameManager():
        sym, given = build(mx)
    try:
        with mx.np_shape(np_shape):
            args, outs, aux = sym.infer_shape_partial(**given)
    except mx.MXNetError as err:
        return {"given": given, "error": str(err).splitlines()[0][:200]}
    return {"given": given,
            "args": dict(zip(sym.list_arguments(), [_shape(s) for s in args])),
            "outs": [_shape(s) for s in outs],
            "aux": dict(zip(sym.list_auxiliary_states(), [_shape(s) for s in aux]))}


def _types(ts):
    return [None if t is None else np.dtype(t).name for t in ts]


def type_record(build):
    with mx.name.NameManager():
        sym, given = build(mx)
    rec = {"given": given}
    try:
        args, outs, aux = sym.infer_type_partial(**given)
        rec["partial"] = {"args": dict(zip(sym.list_arguments(), _types(args))),
                          "outs": _types(outs),
                          "aux": dict(zip(sym.list_auxiliary_states(), _types(aux)))}
        args, outs, aux = sym.infer_type(**given)
        rec["complete"] = args is not None
    except mx.MXNetError as err:
        rec["error"] = str(err).splitlines()[0][:200]
    return rec


def main():
    res = {"mxnet": mx.__version__,
           "shape": {n: shape_record(b) for n, b in C.SHAPE_CASES},
           "refined": {n: shape_record(b) for n, b in C.REFINED_CASES},
           "np_shape": {n: shape_record(b, True) for n, b in C.NP_SHAPE_CASES},
           "type": {n: type_record(b) for n, b in C.TYPE_CASES}}
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "infer.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main()
