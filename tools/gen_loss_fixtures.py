"""Write tests/fixtures/loss/* from MXNet 1.9.1 (run with /tmp/mxref/bin/python).

Each case builds one gluon.loss class with some constructor arguments, feeds it inputs (some
of which are None), records the output and, with a random head gradient, the gradient of
every float input marked differentiable. tests/test_gluon_loss.py replays the cases.
"""
import json
import os

import numpy as np
from mxnet import autograd, gluon, nd

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "loss")
rng = np.random.RandomState(1234)


def f32(*shape, scale=1.0):
    return (rng.randn(*shape) * scale).astype(np.float32)


def labels(n, c, *extra):
    return rng.randint(0, c, size=(n,) + extra).astype(np.float32)


def signs(*shape):
    return np.where(rng.rand(*shape) > 0.5, 1.0, -1.0).astype(np.float32)


def probs(*shape, axis=-1):
    x = np.exp(rng.randn(*shape))
    return (x / x.sum(axis=axis, keepdims=True)).astype(np.float32)


def log_probs(*shape, axis=-1):
    return np.log(probs(*shape, axis=axis)).astype(np.float32)


def uniform(*shape, lo=0.05, hi=0.95):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


G = True    # differentiable input
N = False   # input without gradient


def cases():
    c = []

    def add(name, cls, kwargs, inputs):
        c.append({"name": name, "cls": cls, "kwargs": kwargs, "inputs": inputs})

    for cls in ("L2Loss", "L1Loss"):
        add(f"{cls}_basic", cls, {}, [(f32(4, 5), G), (f32(4, 5), G)])
        add(f"{cls}_weighted", cls, {"weight": 2.0},
            [(f32(4, 5), G), (f32(4, 5), G), (np.abs(f32(4, 1)), G)])
        add(f"{cls}_reshape_label", cls, {}, [(f32(6, 1), G), (f32(6), G)])
        add(f"{cls}_batch_axis1", cls, {"batch_axis": 1}, [(f32(3, 4, 2), G), (f32(3, 4, 2), G)])
        add(f"{cls}_3d", cls, {}, [(f32(2, 3, 4), G), (f32(2, 3, 4), G), (f32(2, 1, 1), N)])

    S = "SoftmaxCrossEntropyLoss"
    add("sce_basic", S, {}, [(f32(5, 7, scale=2), G), (labels(5, 7), N)])
    add("sce_label_n1", S, {}, [(f32(5, 7), G), (labels(5, 7, 1), N)])
    add("sce_weight", S, {"weight": 0.3, "axis": 1}, [(f32(6, 4), G), (labels(6, 4), N)])
    add("sce_logits_weight", S, {"weight": 2.0, "from_logits": True},
        [(log_probs(3, 4), G), (labels(3, 4), N)])
    add("sce_out_of_range", S, {}, [(f32(4, 3), G), (np.array([0, 5, -2, 2], np.float32), N)])
    add("sce_dense", S, {"sparse_label": False}, [(f32(4, 6), G), (probs(4, 6), G)])
    add("sce_from_logits", S, {"from_logits": True}, [(log_probs(4, 6), G), (labels(4, 6), N)])
    add("sce_axis1", S, {"axis": 1}, [(f32(2, 5, 3), G), (labels(2, 5, 3), N)])
    add("sce_3d_weighted", S, {"weight": 0.5},
        [(f32(2, 3, 4), G), (labels(2, 4, 3).reshape(2, 3), N), (np.abs(f32(2, 3, 1)), G)])
    add("sce_batch_axis1", S, {"batch_axis": 1}, [(f32(3, 2, 4), G), (labels(3, 4, 2), N)])
    add("sce_dense_from_logits_axis0", S, {"sparse_label": False, "from_logits": True,
                                           "axis": 0},
        [(log_probs(5, 3, axis=0), G), (probs(5, 3, axis=0), G)])

    B = "SigmoidBinaryCrossEntropyLoss"
    add("bce_logits", B, {}, [(f32(4, 5, scale=3), G), (uniform(4, 5, lo=0, hi=1).round(), N)])
    add("bce_soft_labels", B, {}, [(f32(4, 5, scale=3), G), (uniform(4, 5, lo=0, hi=1), G)])
    add("bce_sigmoid", B, {"from_sigmoid": True}, [(uniform(4, 5), G), (uniform(4, 5), G)])
    add("bce_pos_weight", B, {}, [(f32(4, 5, scale=3), G), (uniform(4, 5).round(), N), None,
                                  (np.abs(f32(5)) + 0.5, G)])
    add("bce_pos_weight_sw", B, {"weight": 1.5},
        [(f32(4, 5, scale=3), G), (uniform(4, 5).round(), N), (np.abs(f32(4, 1)), G),
         (np.abs(f32(4, 5)) + 0.5, G)])
    add("bce_sigmoid_pos_weight", B, {"from_sigmoid": True},
        [(uniform(4, 5), G), (uniform(4, 5).round(), N), None, (np.abs(f32(1, 5)) + 0.5, G)])
    add("bce_label_reshape", B, {}, [(f32(6, 1), G), (uniform(6).round(), N)])

    K = "KLDivLoss"
    add("kl_basic", K, {}, [(log_probs(4, 6), G), (probs(4, 6), G)])
    add("kl_not_logits", K, {"from_logits": False}, [(f32(4, 6), G), (probs(4, 6), G)])
    add("kl_axis1", K, {"from_logits": False, "axis": 1, "weight": 2.0},
        [(f32(2, 5, 3), G), (probs(2, 5, 3, axis=1), G), (np.abs(f32(2, 1, 1)), G)])

    H = "HuberLoss"
    add("huber_basic", H, {}, [(f32(4, 6, scale=2), G), (f32(4, 6, scale=2), G)])
    add("huber_rho", H, {"rho": 0.5, "weight": 3.0},
        [(f32(4, 6), G), (f32(4, 6), G), (np.abs(f32(4, 1)), G)])

    for cls, tag in (("HingeLoss", "hinge"), ("SquaredHingeLoss", "sqhinge")):
        add(f"{tag}_basic", cls, {}, [(f32(5, 3), G), (signs(5, 3), N)])
        add(f"{tag}_margin", cls, {"margin": 2.0, "weight": 0.5},
            [(f32(5, 3), G), (signs(5, 3), N), (np.abs(f32(5, 1)), G)])

    Lg = "LogisticLoss"
    add("logistic_signed", Lg, {}, [(f32(5, 3, scale=2), G), (signs(5, 3), N)])
    add("logistic_binary", Lg, {"label_format": "binary"},
        [(f32(5, 3, scale=2), G), (uniform(5, 3).round(), N), (np.abs(f32(5, 1)), G)])

    T = "TripletLoss"
    add("triplet_basic", T, {}, [(f32(4, 5), G), (f32(4, 5), G), (f32(4, 5), G)])
    add("triplet_margin", T, {"margin": 3.0, "weight": 0.7},
        [(f32(4, 5, scale=0.5), G), (f32(4, 5), G), (f32(20), G)])

    C = "CTCLoss"
    ctc_label = np.array([[0, 1, 2, -1], [3, 3, -1, -1], [1, 0, 1, 0]], np.float32)
    add("ctc_ntc", C, {}, [(f32(3, 8, 5), G), (ctc_label, N)])
    add("ctc_tnc", C, {"layout": "TNC", "weight": 2.0},
        [(f32(8, 3, 5), G), (np.array([[0, 1, 2, -1], [3, -1, -1, -1], [2, 2, 2, 2]],
                                      np.float32), N)])
    add("ctc_lengths", C, {},
        [(f32(2, 7, 4), G), (np.array([[0, 1, 2], [2, 1, 0]], np.float32), N),
         (np.array([7, 5], np.float32), N), (np.array([3, 2], np.float32), N),
         (np.abs(f32(2)), G)])
    add("ctc_label_tn", C, {"label_layout": "TN"},
        [(f32(2, 6, 4), G), (np.array([[0, 1], [1, 2], [-1, 0]], np.float32), N)])

    P = "PoissonNLLLoss"
    add("poisson_logits", P, {}, [(f32(4, 3), G), (rng.poisson(2, (4, 3)).astype(np.float32), G)])
    add("poisson_rate", P, {"from_logits": False},
        [(uniform(4, 3, lo=0.2, hi=3), G), (rng.poisson(2, (4, 3)).astype(np.float32), N),
         (np.abs(f32(4, 1)), G)])
    # MXNet 1.9.1's compute_full updates an array in place, which autograd.record() refuses:
    # only the forward value can be recorded.
    add("poisson_full", P, {"compute_full": True, "weight": 2.0},
        [(f32(4, 3), N), (rng.poisson(3, (4, 3)).astype(np.float32) + 0.5, N)])

    Co = "CosineEmbeddingLoss"
    add("cos_basic", Co, {}, [(f32(5, 4), G), (f32(5, 4), G), (signs(5), N)])
    add("cos_margin", Co, {"margin": 0.2, "weight": 2.0},
        [(f32(5, 4), G), (f32(5, 4), G), (signs(5), N), (np.abs(f32(5, 1)), G)])

    Sd = "SDMLLoss"
    add("sdml_basic", Sd, {}, [(f32(5, 4), G), (f32(5, 4), G)])
    add("sdml_smooth", Sd, {"smoothing_parameter": 0.1}, [(f32(3, 6), G), (f32(3, 6), G)])
    f64 = lambda a: a.astype(np.float64)  # noqa: E731 - a tiny local cast
    add("L2Loss_f64", "L2Loss", {}, [(f64(f32(3, 4)), G), (f64(f32(3, 4)), G)])
    add("sce_f64", S, {}, [(f64(f32(4, 5)), G), (f64(labels(4, 5)), N)])
    add("bce_f64", B, {}, [(f64(f32(3, 4, scale=3)), G), (f64(uniform(3, 4)), G)])
    add("huber_f64", H, {"rho": 0.3}, [(f64(f32(3, 4)), G), (f64(f32(3, 4)), G)])
    return c


def run(case):
    cls = getattr(gluon.loss, case["cls"])
    loss = cls(**case["kwargs"])
    arrays = []
    for item in case["inputs"]:
        if item is None:
            arrays.append(None)
            continue
        a = nd.array(item[0], dtype=item[0].dtype)
        if item[1]:
            a.attach_grad()
        arrays.append(a)
    if any(item is not None and item[1] for item in case["inputs"]):
        with autograd.record():
            out = loss(*arrays)
        head = rng.uniform(0.5, 1.5, size=out.shape).astype(out.dtype)
        out.backward(nd.array(head, dtype=head.dtype))
    else:
        out = loss(*arrays)
        head = np.ones(out.shape, out.dtype)
    grads = [a.grad.asnumpy() if (a is not None and item[1]) else None
             for a, item in zip(arrays, case["inputs"])]
    return loss, out.asnumpy(), head, grads


def main():
    os.makedirs(OUT, exist_ok=True)
    arrays, meta = {}, {"cases": [], "repr": {}, "errors": {}}
    for case in cases():
        loss, out, head, grads = run(case)
        name = case["name"]
        spec = {"name": name, "cls": case["cls"], "kwargs": case["kwargs"], "inputs": []}
        for i, item in enumerate(case["inputs"]):
            if item is None:
                spec["inputs"].append(None)
                continue
            arrays[f"{name}/in{i}"] = item[0]
            spec["inputs"].append({"grad": bool(item[1])})
            if item[1]:
                arrays[f"{name}/grad{i}"] = grads[i]
        arrays[f"{name}/out"] = out
        arrays[f"{name}/head"] = head
        meta["cases"].append(spec)
    for cls in gluon.loss.__all__:
        if cls in ("Loss",):
            continue
        meta["repr"][cls] = repr(getattr(gluon.loss, cls)())
    meta["repr"]["L1Loss_w"] = repr(gluon.loss.L1Loss(weight=0.5, batch_axis=1))
    meta["repr"]["CTCLoss_TN"] = repr(gluon.loss.CTCLoss(label_layout="TN"))

    def err(key, fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - record what MXNet raises
            meta["errors"][key] = {"error": type(e).__name__,
                                   "message": str(e).strip().split("\n")[-1]}

    err("logistic_format", lambda: gluon.loss.LogisticLoss(label_format="x"))
    err("ctc_layout", lambda: gluon.loss.CTCLoss(layout="NCT"))
    err("ctc_label_layout", lambda: gluon.loss.CTCLoss(label_layout="NN"))
    err("weight_not_number", lambda: gluon.loss.L1Loss(weight="a")(nd.ones((2, 2)),
                                                                  nd.ones((2, 2))))
    err("reshape_mismatch", lambda: gluon.loss.L2Loss()(nd.ones((3, 4)), nd.ones((4, 4))))
    err("ctc_too_long", lambda: gluon.loss.CTCLoss()(nd.ones((2, 3, 4)), nd.ones((2, 5))))
    np.savez_compressed(os.path.join(OUT, "loss.npz"), **arrays)
    with open(os.path.join(OUT, "loss.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
