"""Gradients of maximum/minimum on ties, from MXNet 1.9.1 (run with /tmp/mxref/bin/python).

Writes tests/fixtures/minmax/ties.json: for nd, sym and np front-ends, array-array,
array-scalar, scalar-array and broadcast calls whose operands tie somewhere, the forward
values and each operand's gradient (MXNet gives a tie's whole gradient to the left operand,
or to the array when the other operand is a number)."""
import json
import os

import mxnet as mx

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "minmax", "ties.json")
A = [1.0, 2.0, 3.0, -1.0]
B = [1.0, 5.0, 3.0, -2.0]
C = [[1.0, 2.0], [3.0, 3.0]]
D = [1.0, 3.0]


def nd_case(fn, lhs, rhs):
    arrs = [mx.nd.array(v) if isinstance(v, list) else v for v in (lhs, rhs)]
    for a in arrs:
        if isinstance(a, mx.nd.NDArray):
            a.attach_grad()
    with mx.autograd.record():
        out = getattr(mx.nd, fn)(*arrs)
    out.backward(mx.nd.ones(out.shape) * 3)
    return {"out": out.asnumpy().tolist(),
            "grads": [a.grad.asnumpy().tolist() if isinstance(a, mx.nd.NDArray) else None
                      for a in arrs]}


def np_case(fn, lhs, rhs):
    arrs = [mx.np.array(v) if isinstance(v, list) else v for v in (lhs, rhs)]
    for a in arrs:
        if isinstance(a, mx.np.ndarray):
            a.attach_grad()
    with mx.autograd.record():
        out = getattr(mx.np, fn)(*arrs)
    out.backward()
    return {"out": out.asnumpy().tolist(),
            "grads": [a.grad.asnumpy().tolist() if isinstance(a, mx.np.ndarray) else None
                      for a in arrs]}


def sym_case(fn, lhs, rhs):
    x, y = mx.sym.var("x"), mx.sym.var("y")
    s = getattr(mx.sym, fn)(x, y)
    args = {"x": mx.nd.array(lhs), "y": mx.nd.array(rhs)}
    grads = {k: mx.nd.zeros(v.shape) for k, v in args.items()}
    ex = s.bind(mx.cpu(), args, args_grad=grads)
    out = ex.forward(is_train=True)[0]
    ex.backward(mx.nd.ones(out.shape))
    return {"out": out.asnumpy().tolist(),
            "grads": [grads["x"].asnumpy().tolist(), grads["y"].asnumpy().tolist()]}


def main():
    cases = []
    for fn in ("maximum", "minimum"):
        for lhs, rhs in ((A, B), (A, 2.0), (2.0, A)):
            cases.append({"front": "nd", "fn": fn, "lhs": lhs, "rhs": rhs,
                          **nd_case(fn, lhs, rhs)})
            cases.append({"front": "np", "fn": fn, "lhs": lhs, "rhs": rhs,
                          **np_case(fn, lhs, rhs)})
        cases.append({"front": "nd", "fn": "broadcast_" + fn, "lhs": C, "rhs": D,
                      **nd_case("broadcast_" + fn, C, D)})
        cases.append({"front": "sym", "fn": fn, "lhs": A, "rhs": B, **sym_case(fn, A, B)})
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"mxnet": mx.__version__, "cases": cases}, f, indent=1)
    print(f"{len(cases)} cases -> {OUT}")


if __name__ == "__main__":
    main()
