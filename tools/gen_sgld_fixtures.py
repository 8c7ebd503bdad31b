"""Write MXNet 1.9.1 SGLD fixtures for tests/test_sgld_kernel.py (run with /tmp/mxref/bin/python).

SGLD adds N(0, sqrt(lr)) noise that no other implementation can reproduce, so the fixtures hold
MXNet's update with the noise taken out: after ``mx.random.seed(s)`` the update draws its
noise tensor by tensor; drawing the same shapes again after the same seed gives that noise,
and ``w_after - noise`` is MXNet's deterministic part ``w - lr/2*(clip(rescale*g) + wd*w)``
(to within one rounding of ``w_after``). Each step starts from MXNet's own noisy weights.

Output: tests/fixtures/sgld/sgld.json (scenarios) and sgld.npz (arrays).
"""
import json
import math
import os

import numpy as np
import mxnet as mx

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures",
                   "sgld")


class Param:
    def __init__(self, lr_mult, wd_mult):
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult


SCENARIOS = [
    dict(key="clip_f32", dtype="float32", steps=3,
         kwargs=dict(learning_rate=0.01, wd=0.1, rescale_grad=0.5, clip_gradient=0.3),
         mults=[(1.0, 1.0)] * 3, sched=None),
    dict(key="noclip_f32", dtype="float32", steps=2,
         kwargs=dict(learning_rate=0.004, rescale_grad=1.0 / 64),
         mults=[(1.0, 1.0)] * 3, sched=None),
    dict(key="clip_f64", dtype="float64", steps=2,
         kwargs=dict(learning_rate=0.01, wd=0.05, rescale_grad=2.0, clip_gradient=1.0),
         mults=[(1.0, 1.0)] * 3, sched=None),
    # two (lr, wd) groups and a schedule that halves lr each update
    dict(key="mult_sched_f32", dtype="float32", steps=3,
         kwargs=dict(learning_rate=0.02, wd=0.01, rescale_grad=0.25),
         mults=[(1.0, 1.0), (0.5, 0.0), (1.0, 1.0)],
         sched=dict(kind="FactorScheduler", kwargs=dict(step=1, factor=0.5))),
]
SHAPES = [(7, 5), (300,), (2, 3, 4)]


def main():
    os.makedirs(OUT, exist_ok=True)
    arrays, metas = {}, []
    rng = np.random.default_rng(2024)
    for sc in SCENARIOS:
        key, dt = sc["key"], sc["dtype"]
        kw = dict(sc["kwargs"])
        if sc["sched"]:
            kw["lr_scheduler"] = getattr(mx.lr_scheduler, sc["sched"]["kind"])(
                **sc["sched"]["kwargs"])
        params = {i: Param(*m) for i, m in enumerate(sc["mults"])}
        opt = mx.optimizer.create("sgld", param_dict=params, **kw)
        upd = mx.optimizer.get_updater(opt)
        ws = [mx.nd.array(rng.standard_normal(s), dtype=dt) for s in SHAPES]
        for step in range(sc["steps"]):
            gs = [mx.nd.array(rng.standard_normal(s) * 2, dtype=dt) for s in SHAPES]
            for i in range(len(SHAPES)):
                arrays[f"{key}/w{step}_{i}"] = ws[i].asnumpy()
                arrays[f"{key}/g{step}_{i}"] = gs[i].asnumpy()
            seed = 1000 + step
            mx.random.seed(seed)
            upd(list(range(len(SHAPES))), gs, ws)
            lrs = [opt._get_lr(i) for i in range(len(SHAPES))]
            mx.random.seed(seed)
            for i, s in enumerate(SHAPES):
                noise = mx.nd.random.normal(0, math.sqrt(lrs[i]), shape=s, dtype=dt).asnumpy()
                det = ws[i].asnumpy() - noise
                arrays[f"{key}/det{step}_{i}"] = det
                # the documented maths, as a check that the noise really came out
                w0 = arrays[f"{key}/w{step}_{i}"].astype("float64")
                g = arrays[f"{key}/g{step}_{i}"].astype("float64") * kw["rescale_grad"]
                if kw.get("clip_gradient") is not None:
                    g = np.clip(g, -kw["clip_gradient"], kw["clip_gradient"])
                wd = kw.get("wd", 0.0) * sc["mults"][i][1]
                want = w0 - lrs[i] / 2 * (g + wd * w0)
                assert np.allclose(det, want, rtol=1e-5, atol=1e-5), (key, step, i)
        metas.append(dict(key=key, dtype=dt, steps=sc["steps"], kwargs=sc["kwargs"],
                          mults=sc["mults"], sched=sc["sched"], shapes=SHAPES,
                          num_update=opt.num_update))
    np.savez_compressed(os.path.join(OUT, "sgld.npz"), **arrays)
    with open(os.path.join(OUT, "sgld.json"), "w") as f:
        json.dump(metas, f, indent=1)


if __name__ == "__main__":
    main()
