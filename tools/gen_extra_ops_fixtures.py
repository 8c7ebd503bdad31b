"""Fixtures for tests/extra_ops_cases.py (loss heads, Crop, im2col/col2im, GridGenerator,
BilinearSampler, SpatialTransformer, Correlation, Convolution_v1/Pooling_v1, nd.RNN,
PSROIPooling, DeformablePSROIPooling, hawkesll & co) from MXNet 1.9.1.

    /tmp/mxref/bin/python tools/gen_extra_ops_fixtures.py     # tests/fixtures/extra_ops/

For each case: the imperative call's outputs and the gradients of its inputs for fixed head
gradients (autograd), and the case as an MXNet symbol: its JSON (what ``mx.sym`` writes, as an
exported graph holds it) and the executor's outputs, gradients and auxiliary states after the
backward pass (``bind`` / ``forward(is_train=True)`` / ``backward``), which must equal the
imperative ones. ``IdentityAttachKLSparseReg`` runs through the symbol only (MXNet's nd call
cannot pass its auxiliary state). For the bad calls of ``ERRORS``: the exception MXNet raises,
``None`` where MXNet accepts the call, or ``"crash: ..."`` where it kills the process.

Some MXNet 1.9.1 CPU kernels index memory without bounds checks (a PSROIPooling roi whose batch
index is outside the data: garbage forward, heap corruption in backward; Correlation with
different channel counts: ``double free or corruption``). So the cases run in worker
processes (``--worker``): one worker takes the cases in order and leaves one result file per
case; when it dies, the case it was on is retried alone in forward-only mode (``"mxnet":
"backward crashed: ..."`` in the fixture) or recorded as crashed, and a new worker goes on
with the next case. The bad calls each run in their own process.
"""
import json
import os
import pickle
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import mxnet as mx  # noqa: E402
import extra_ops_cases as C  # noqa: E402
from fixture_record import Recorder  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "fixtures", "extra_ops")
AUX = {"IdentityAttachKLSparseReg": ("moving_avg",)}


def _sym_fn(op):
    target = mx.sym
    for part in op.split("."):
        target = getattr(target, part)
    return target


def run_sym(c, heads):
    """The case as a symbol through MXNet's executor."""
    aux_names = AUX.get(c["op"], ())
    vals = dict(c["inputs"])
    args = [(n, a) for n, a in c["inputs"] if n not in aux_names]
    sym_vars = [mx.sym.var(n) for n, _ in args]
    fn = _sym_fn(c["op"])
    if c["op"] == "Crop":
        y = fn(*sym_vars, name="op", **c["kwargs"])
    else:
        y = fn(**{n: v for (n, _), v in zip(args, sym_vars)}, name="op", **c["kwargs"])
    arg_names = y.list_arguments()
    aux_list = y.list_auxiliary_states()
    assert set(arg_names) == {n for n, _ in args}, (c["name"], arg_names)
    assert aux_list == [f"op_{n}" for n in aux_names], (c["name"], aux_list)
    ctx = mx.cpu()
    arrays = {n: mx.nd.array(vals[n], dtype=vals[n].dtype) for n in arg_names}
    grads = {n: mx.nd.zeros(vals[n].shape, dtype=vals[n].dtype) for n in arg_names
             if n in c["grad"]}
    req = {n: "write" if n in grads else "null" for n in arg_names}
    aux = {f"op_{n}": mx.nd.array(vals[n]) for n in aux_names}
    exe = y.bind(ctx, args=arrays, args_grad=grads, grad_req=req, aux_states=aux)
    outs = [o.asnumpy() for o in exe.forward(is_train=c.get("train", True))]
    if heads is None:
        heads = C.heads_for([o.shape for o in outs])
    if grads:
        exe.backward([mx.nd.array(h) for h in heads])
    return {"json": y.tojson(), "out": outs, "heads": heads,
            "grad": {n: g.asnumpy() for n, g in grads.items()},
            "aux_after": {n: a.asnumpy() for n, a in zip(aux_names, exe.aux_arrays)}}


def _close(a, b, rtol, what):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    assert a.shape == b.shape, (what, a.shape, b.shape)
    scale = max(1.0, float(np.nanmax(np.abs(b)))) if b.size else 1.0
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale, err_msg=what,
                               equal_nan=True)


SEQ_NOTE = ("MXNet 1.9.1's CPU RNN ignores sequence_length (the oneDNN path computes the whole "
            "padded sequence; without oneDNN it refuses: cuDNN only): reference from one call "
            "per sequence on its first sequence_length steps, as cuDNN computes it")


def run_nd_per_sequence(c):
    """``RNN`` with ``use_sequence_length`` as cuDNN computes it, from MXNet's own CPU RNN: one
    call per sequence on its valid steps. Outputs past a sequence's end are 0; the final
    states are those at its last step; the parameters' gradient sums over the sequences."""
    ins = dict(c["inputs"])
    kw = {k: v for k, v in c["kwargs"].items() if k != "use_sequence_length"}
    plain = [(n, a) for n, a in c["inputs"] if n != "sequence_length"]
    outs, heads, _ = C.run_nd(mx, dict(c, inputs=plain, kwargs=kw, grad=[]))
    outs = [np.zeros_like(o) for o in outs]
    grads = {n: np.zeros_like(ins[n]) for n in c["grad"]}
    for i, n_steps in enumerate(ins["sequence_length"].astype(int)):
        def part(name, a):     # the i-th sequence: axis 1 of data and the states
            if name == "parameters":
                return a
            return a[:n_steps, i:i + 1] if name == "data" else a[:, i:i + 1]
        sub = dict(c, kwargs=kw, inputs=[(n, part(n, a)) for n, a in plain])
        sub_heads = [h[:n_steps, i:i + 1] if j == 0 else h[:, i:i + 1]
                     for j, h in enumerate(heads)]
        o, _, g = C.run_nd(mx, sub, heads=sub_heads)
        outs[0][:n_steps, i] = o[0][:, 0]
        for j in range(1, len(outs)):
            outs[j][:, i] = o[j][:, 0]
        for n in grads:
            if n == "parameters":
                grads[n] += g[n]
            elif n == "data":
                grads[n][:n_steps, i] = g[n][:, 0]
            else:
                grads[n][:, i] = g[n][:, 0]
    return outs, heads, grads


def run_case(c, forward_only=False):
    """One case under MXNet: the fixture entry (arrays and JSON-able values)."""
    if forward_only:
        c = dict(c, grad=[])
    res = {"inputs": {n: a for n, a in c["inputs"]}}
    heads = None
    if c["op"] == "RNN" and c["kwargs"].get("use_sequence_length"):
        outs, heads, grads = run_nd_per_sequence(c)
        res.update(out=outs, heads=heads, grad=grads, mxnet=SEQ_NOTE)
        s = run_sym(c, heads)                  # (its executor ignores the lengths too)
        res.update(json=s["json"], aux_after=s["aux_after"])
        return res
    if c["nd"]:
        outs, heads, grads = C.run_nd(mx, c)
        res.update(out=outs, heads=heads, grad=grads)
    if c["sym"]:
        try:
            s = run_sym(c, heads)
        except mx.MXNetError as err:
            print("symbol refused:", c["name"], str(err).splitlines()[0][:200])
            s = None
        if s is not None:
            if c["nd"]:
                for i, (a, b) in enumerate(zip(s["out"], res["out"])):
                    _close(a, b, c["rtol"], f"{c['name']} symbol output {i}")
                for n, g in s["grad"].items():
                    _close(g, res["grad"][n], c["rtol"], f"{c['name']} symbol d{n}")
            else:
                res.update(out=s["out"], heads=s["heads"], grad=s["grad"])
            res["json"] = s["json"]
            res["aux_after"] = s["aux_after"]
    return res


def run_error(op, shapes, kwargs):
    """MXNet's answer to a bad call: the exception's type name, or None when it runs."""
    try:
        fn = mx.nd
        for part in op.split("."):
            fn = getattr(fn, part)
        r = fn(*[mx.nd.ones(s) for s in shapes], **kwargs)
        for o in (r if isinstance(r, (list, tuple)) else [r]):
            o.wait_to_read()
        return None
    except Exception as e:  # noqa: BLE001 - recorded
        return type(e).__name__


def worker(argv):
    """``--worker DIR KIND START [forward]``: KIND 'case' runs CASES[START:] (one file each,
    written when the case is done); 'one' runs CASES[START] only; 'error' runs ERRORS[START]."""
    out_dir, kind, start = argv[0], argv[1], int(argv[2])
    forward_only = len(argv) > 3 and argv[3] == "forward"
    if kind == "error":
        name, op, shapes, kwargs = C.ERRORS[start]
        res = run_error(op, shapes, kwargs)
        with open(os.path.join(out_dir, f"error_{start}.pkl"), "wb") as f:
            pickle.dump(res, f)
        return
    stop = start + 1 if kind == "one" else len(C.CASES)
    for i in range(start, stop):
        if forward_only:       # after a crash: keep the forward pass only if it is sound
            try:
                res = run_case(C.CASES[i], forward_only)
                res["mxnet"] = "backward crashed: forward only"
            except AssertionError as err:
                res = {"inputs": {n: a for n, a in C.CASES[i]["inputs"]},
                       "mxnet": "backward crashed; forward differs between nd and symbol: "
                                + str(err).strip().splitlines()[0][:80]}
        else:
            res = run_case(C.CASES[i])
        with open(os.path.join(out_dir, f"case_{i}.tmp"), "wb") as f:
            pickle.dump(res, f)
        os.replace(os.path.join(out_dir, f"case_{i}.tmp"), os.path.join(out_dir, f"case_{i}.pkl"))
        print("case", C.CASES[i]["name"], flush=True)


def _spawn(tmp, *args):
    """Runs a worker; returns None when it finished, else how it died (a crash's last line)."""
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", tmp,
                        *map(str, args)], capture_output=True, text=True)
    sys.stdout.write(p.stdout)
    if p.returncode == 0:
        return None
    lines = [ln for ln in p.stderr.splitlines() if ln.strip() and not ln.startswith("[")]
    if "Traceback (most recent call last)" in p.stderr:     # a Python error: a bug, stop
        sys.stderr.write(p.stderr)
        raise SystemExit(f"worker {args} failed")
    return (lines[-1] if lines else f"exit status {p.returncode}")[:120]


def _load(path):
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return pickle.load(f)


def main():
    os.makedirs(OUT, exist_ok=True)
    rec = Recorder()
    crashes = {}
    with tempfile.TemporaryDirectory() as tmp:
        i = 0
        while i < len(C.CASES):
            died = _spawn(tmp, "case", i)
            if died is None:
                break
            while os.path.exists(os.path.join(tmp, f"case_{i}.pkl")):
                i += 1
            name = C.CASES[i]["name"]
            print(f"MXNet crashed on case {name}: {died}; retrying forward only", flush=True)
            crashes[name] = died
            again = _spawn(tmp, "one", i, "forward")
            if again is not None:
                print(f"MXNet crashed on case {name} forward too: {again}", flush=True)
                with open(os.path.join(tmp, f"case_{i}.pkl"), "wb") as f:
                    pickle.dump({"inputs": {n: a for n, a in C.CASES[i]["inputs"]},
                                 "mxnet": f"crashed: {again}"}, f)
            i += 1
        for i, c in enumerate(C.CASES):
            rec.put(c["name"], _load(os.path.join(tmp, f"case_{i}.pkl")))
        errors = {}
        for i, (name, *_rest) in enumerate(C.ERRORS):
            died = _spawn(tmp, "error", i)
            errors[name] = f"crash: {died}" if died else _load(
                os.path.join(tmp, f"error_{i}.pkl"))
    np.savez_compressed(os.path.join(OUT, "extra_ops.npz"), **rec.arrays)
    with open(os.path.join(OUT, "extra_ops.json"), "w") as f:
        json.dump({"cases": rec.meta, "errors": errors}, f, indent=0, sort_keys=True)
    print("crashes:", crashes)
    print("errors:", errors)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2:])
    else:
        main()
