"""Write tests/fixtures/onnx_import/ from MXNet 1.9.1's ONNX importer.

Run with /tmp/mxref/bin/python (MXNet 1.9.1 with ``pip install 'onnx<1.15' 'protobuf<4'``:
MXNet's importer uses ``onnx.mapping``, which later onnx releases dropped).

For each model of tests/onnx_import_cases.py: the model file (<case>.onnx), and what
``mx.contrib.onnx.import_model`` gives for it -- the names of the arguments, auxiliary
states and outputs, the parameters' shapes and dtypes (cases.json) -- and the outputs of the
imported symbol bound to the parameters on the case's inputs (<case>.npz; out0, out1...).
A case MXNet cannot import records MXNet's error instead.
"""
import contextlib
import io
import json
import os
import sys

import numpy as np
import mxnet as mx
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import onnx_import_cases as C  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "fixtures", "onnx_import")


def run_case(name, build):
    model, feeds = build()
    onnx.checker.check_model(model)
    path = os.path.join(OUT, f"{name}.onnx")
    onnx.save(model, path)
    rec = {"inputs": sorted(feeds)}
    try:
        with contextlib.redirect_stdout(io.StringIO()):   # MXNet's deprecation notice
            sym, arg, aux = mx.contrib.onnx.import_model(path)
            meta = mx.contrib.onnx.get_model_metadata(path)
    except Exception as err:  # noqa: BLE001 - recorded
        rec["error"] = f"{type(err).__name__}: {err}"
        return rec, None
    rec["metadata"] = {k: [list(map(lambda x: list(x) if isinstance(x, tuple) else x, t))
                           for t in v] for k, v in meta.items()}
    rec["arguments"] = sym.list_arguments()
    rec["auxiliary_states"] = sym.list_auxiliary_states()
    rec["outputs"] = sym.list_outputs()
    rec["arg_params"] = {k: [list(v.shape), np.dtype(v.dtype).name] for k, v in sorted(arg.items())}
    rec["aux_params"] = {k: [list(v.shape), np.dtype(v.dtype).name] for k, v in sorted(aux.items())}
    args = dict(arg)
    args.update({k: mx.nd.array(v) for k, v in feeds.items()})
    try:
        exe = sym.bind(mx.cpu(), args=args, aux_states=dict(aux), grad_req="null")
        outs = [o.asnumpy() for o in exe.forward(is_train=False)]
    except Exception as err:  # noqa: BLE001 - recorded
        rec["error"] = f"{type(err).__name__}: {str(err).strip().splitlines()[-1]}"
        return rec, None
    arrays = {f"in_{k}": v for k, v in feeds.items()}
    arrays.update({f"out{i}": o for i, o in enumerate(outs)})
    return rec, arrays


def main():
    os.makedirs(OUT, exist_ok=True)
    record = {"mxnet": mx.__version__, "onnx": onnx.__version__}
    for name, build in C.CASES.items():
        rec, arrays = run_case(name, build)
        record[name] = rec
        if arrays is not None:
            np.savez(os.path.join(OUT, f"{name}.npz"), **arrays)
        print(name, "error" if "error" in rec else "ok", rec.get("error", ""))
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
