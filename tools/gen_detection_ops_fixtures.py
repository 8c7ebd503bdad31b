"""Record the detection operators of nd.contrib (and nd.ROIPooling) from real MXNet 1.9.1.

    /tmp/mxref/bin/python tools/gen_detection_ops_fixtures.py
    # writes tests/fixtures/detection_ops/cases.npz and cases.json

Every case is one operator call: its inputs (stored once per distinct array), keyword
arguments, outputs, and for the
differentiable operators the input gradients for a recorded random head gradient. Inputs come
from fixed seeds; scores are continuous random values (no ties, so MXNet's sort order is the
only one possible) and boxes are drawn in clusters so that suppression and matching happen.
"""
import hashlib
import json
import os

import mxnet as mx
import numpy as np

rng = np.random.RandomState(20)
arrays = {}
cases = []


def boxes(n, lead=(), spread=1.0, size=0.35):
    """Corner boxes in clusters: (lead..., n, 4)."""
    shape = tuple(lead) + (n,)
    c = rng.rand(*shape, 2) * spread
    wh = rng.rand(*shape, 2) * size + 0.02
    c = np.round(c * 4) / 4 * 0.8 + c * 0.2  # pull centres together into clusters
    return np.concatenate([c - wh / 2, c + wh / 2], -1).astype("f")


def center(b):
    return np.concatenate([(b[..., :2] + b[..., 2:]) / 2, b[..., 2:] - b[..., :2]], -1)


def record(name, op, inputs, kwargs, grad=False, sym_ok=True):
    fn = mx.nd
    for p in op.split("."):
        fn = getattr(fn, p)
    nd_in = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
    if grad:
        for a in nd_in:
            a.attach_grad()
        with mx.autograd.record():
            res = fn(*nd_in, **kwargs)
        outs = res if isinstance(res, (list, tuple)) else [res]
        heads = [mx.nd.array(rng.randn(*o.shape), dtype=o.dtype) for o in outs]
        mx.autograd.backward(outs, heads)
    else:
        res = fn(*nd_in, **kwargs)
        outs = res if isinstance(res, (list, tuple)) else [res]
    keys = []
    for a in inputs:  # an input shared by several cases is stored once
        a = np.ascontiguousarray(a)
        digest = hashlib.sha1(a.tobytes() + str((a.dtype, a.shape)).encode()).hexdigest()
        key = "input/" + digest[:16]
        arrays[key] = a
        keys.append(key)
    for j, o in enumerate(outs):
        arrays[f"{name}/out{j}"] = o.asnumpy()
    if grad:
        for j, h in enumerate(heads):
            arrays[f"{name}/head{j}"] = h.asnumpy()
        for i, a in enumerate(nd_in):
            arrays[f"{name}/grad{i}"] = a.grad.asnumpy()
    cases.append(dict(name=name, op=op, kwargs=kwargs, inputs=keys, n_out=len(outs),
                      grad=grad))


# ------------------------------------------------------------------ box_nms
def nms_data(lead, n, ncls=3, width=6, dtype="f"):
    b = boxes(n, lead)
    ids = rng.randint(0, ncls, size=tuple(lead) + (n, 1)).astype("f")
    sc = rng.rand(*(tuple(lead) + (n, 1))).astype("f")
    d = np.concatenate([ids, sc, b], -1)
    if width > 6:
        extra = rng.randn(*(tuple(lead) + (n, width - 6))).astype("f")
        d = np.concatenate([d, extra], -1)
    return d.astype(dtype)


d = nms_data((2,), 40)
record("nms_default", "contrib.box_nms", [d], {}, grad=True)
record("nms_ids", "contrib.box_nms", [d], dict(id_index=0), grad=True)
record("nms_ids_force", "contrib.box_nms", [d], dict(id_index=0, force_suppress=True,
                                                      overlap_thresh=0.3), grad=True)
record("nms_valid_topk", "contrib.box_nms", [d], dict(id_index=0, valid_thresh=0.3, topk=12,
                                                       overlap_thresh=0.4), grad=True)
record("nms_topk0", "contrib.box_nms", [d], dict(topk=0), grad=True)
record("nms_background", "contrib.box_nms", [d], dict(id_index=0, background_id=1,
                                                       overlap_thresh=0.6))
record("nms_out_center", "contrib.box_nms", [d], dict(id_index=0, out_format="center"),
       grad=True)
dc = d.copy()
dc[..., 2:6] = center(d[..., 2:6])
record("nms_in_center", "contrib.box_nms", [dc], dict(id_index=0, in_format="center"))
record("nms_center_center", "contrib.box_nms", [dc], dict(in_format="center",
                                                          out_format="center", topk=20))
d8 = nms_data((3,), 25, width=8)
# layout: [extra, extra, x1, y1, x2, y2, id, score] -> coord_start=2, id_index=6, score_index=7
lay = np.concatenate([d8[..., 6:8], d8[..., 2:6], d8[..., 0:1], d8[..., 1:2]], -1)
record("nms_layout", "contrib.box_nms", [lay], dict(coord_start=2, score_index=7, id_index=6,
                                                    overlap_thresh=0.45), grad=True)
lay2 = np.concatenate([d8[..., 1:2], d8[..., 2:6], d8[..., 0:1], d8[..., 6:8]], -1)
record("nms_layout2", "contrib.box_nms", [lay2], dict(coord_start=1, score_index=0,
                                                      id_index=5, valid_thresh=0.2))
d4 = nms_data((2, 2), 15)
record("nms_4d", "contrib.box_nms", [d4], dict(id_index=0, topk=8), grad=True)
record("nms_2d", "contrib.box_nms", [d[0]], dict(overlap_thresh=0.2))
record("nms_f64", "contrib.box_nms", [d.astype("float64")], dict(id_index=0))
record("nms_alias", "contrib.box_non_maximum_suppression", [d], dict(overlap_thresh=0.7))
neg = d.copy()
neg[0, :5, 2] -= 1.0  # negative xmin: MXNet leaves such rows unconverted
record("nms_negx_center", "contrib.box_nms", [neg], dict(out_format="center"))
allbad = d.copy()
allbad[..., 1] = -0.5
record("nms_none_valid", "contrib.box_nms", [allbad], {}, grad=True)

# ------------------------------------------------------------------ box_iou
a = boxes(7)
b = boxes(5, (2,))
record("iou_corner", "contrib.box_iou", [a, b], {})
record("iou_center", "contrib.box_iou", [center(a), center(b)], dict(format="center"))
record("iou_f64", "contrib.box_iou", [a.astype("float64"), b[0].astype("float64")], {})
ab = boxes(4, (2, 3))
ab[0, 0, 0] = [0.5, 0.5, 0.4, 0.7]  # negative width
record("iou_nd", "contrib.box_iou", [ab, a], {})

# ------------------------------------------------------------------ bipartite_matching
s = rng.rand(2, 7, 5).astype("f")
record("bm_desc", "contrib.bipartite_matching", [s], dict(threshold=0.3))
record("bm_desc_low", "contrib.bipartite_matching", [s], dict(threshold=1e-12))
record("bm_asc", "contrib.bipartite_matching", [s], dict(threshold=0.8, is_ascend=True))
for k in (1, 2, 3):
    record(f"bm_topk{k}", "contrib.bipartite_matching", [s], dict(threshold=0.1, topk=k))
record("bm_2d", "contrib.bipartite_matching", [s[0].T.copy()], dict(threshold=0.5))
record("bm_3lead", "contrib.bipartite_matching", [rng.rand(2, 2, 4, 6).astype("f")],
       dict(threshold=0.2))

# ------------------------------------------------------------------ box_encode / decode
B, N, M = 2, 12, 4
anc = boxes(N, (B,))
refs = boxes(M, (B,))
samples = (rng.rand(B, N) > 0.4).astype("f")
samples[0, 0] = 0.5  # not positive (needs > 0.5)
matches = rng.randint(0, M, size=(B, N)).astype("f")
means = np.array([0.1, -0.1, 0.05, 0.0], "f")
stds = np.array([0.1, 0.1, 0.2, 0.2], "f")
record("encode", "contrib.box_encode", [samples, matches, anc, refs, means, stds], {})
pred = (rng.randn(B, N, 4) * 0.5).astype("f")
record("decode_center", "contrib.box_decode", [pred, center(anc[:1])], {})
record("decode_corner", "contrib.box_decode", [pred, anc[:1]],
       dict(format="corner", std0=0.1, std1=0.1, std2=0.2, std3=0.2))
record("decode_clip", "contrib.box_decode", [pred * 8, anc[:1]],
       dict(format="corner", clip=1.5, std2=0.5))

# ------------------------------------------------------------------ MultiBoxPrior
fm = np.zeros((2, 3, 4, 5), "f")
record("prior_default", "contrib.MultiBoxPrior", [fm], {})
record("prior_sizes_ratios", "contrib.MultiBoxPrior", [fm],
       dict(sizes=(0.5, 0.25, 0.1), ratios=(1, 2, 0.5, 3)))
record("prior_clip_steps", "contrib.MultiBoxPrior", [fm],
       dict(sizes=(0.9, 0.4), ratios=(2, 0.3), clip=True, steps=(0.3, 0.2), offsets=(0.2, 0.7)))
record("prior_square", "contrib.MultiBoxPrior", [np.zeros((1, 1, 3, 3), "f")],
       dict(sizes=(0.7,), ratios=(1, 2)))

# ------------------------------------------------------------------ MultiBoxTarget
fm2 = mx.nd.zeros((1, 1, 4, 4))
anchors = mx.nd.contrib.MultiBoxPrior(fm2, sizes=(0.4, 0.2), ratios=(1, 2, 0.5)).asnumpy()
NA = anchors.shape[1]
lab = np.full((3, 5, 5), -1, "f")
for bi, ng in enumerate((3, 1, 0)):
    g = boxes(ng, spread=0.8, size=0.4) + 0.05
    lab[bi, :ng, 0] = rng.randint(0, 4, size=ng)
    lab[bi, :ng, 1:] = g
clsp = rng.randn(3, 5, NA).astype("f")
record("mbt_default", "contrib.MultiBoxTarget", [anchors, lab, clsp], {})
record("mbt_mining", "contrib.MultiBoxTarget", [anchors, lab, clsp],
       dict(negative_mining_ratio=3, negative_mining_thresh=0.5, overlap_threshold=0.4))
record("mbt_mining_min", "contrib.MultiBoxTarget", [anchors, lab, clsp],
       dict(negative_mining_ratio=2, negative_mining_thresh=0.3, minimum_negative_samples=5,
            ignore_label=-2, variances=(0.2, 0.2, 0.1, 0.1)))
record("mbt_nothresh", "contrib.MultiBoxTarget", [anchors, lab, clsp],
       dict(overlap_threshold=0))
lab6 = np.concatenate([lab, rng.rand(3, 5, 1).astype("f")], -1)
lab6[lab[..., 0] == -1] = -1
record("mbt_width6", "contrib.MultiBoxTarget", [anchors, lab6, clsp],
       dict(overlap_threshold=0.3))

# ------------------------------------------------------------------ MultiBoxDetection
logits = rng.randn(2, 4, NA).astype("f") * 2
prob = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
loc = (rng.randn(2, NA * 4) * 0.3).astype("f")
record("mbd_default", "contrib.MultiBoxDetection", [prob, loc, anchors], {})
record("mbd_noclip_force", "contrib.MultiBoxDetection", [prob, loc, anchors],
       dict(clip=False, force_suppress=True, nms_threshold=0.3, threshold=0.2))
record("mbd_topk", "contrib.MultiBoxDetection", [prob, loc, anchors],
       dict(nms_topk=10, threshold=0.1, variances=(0.2, 0.2, 0.1, 0.1)))
record("mbd_no_nms", "contrib.MultiBoxDetection", [prob, loc, anchors],
       dict(nms_threshold=0, threshold=0.3))
record("mbd_background", "contrib.MultiBoxDetection", [prob, loc, anchors],
       dict(background_id=2, nms_threshold=0.45))

# ------------------------------------------------------------------ ROIAlign / ROIPooling
x = rng.randn(2, 8, 10, 12).astype("f")
R = 7
r_b = rng.randint(0, 2, size=(R, 1)).astype("f")
r_xy = rng.rand(R, 2) * np.array([20, 16])
r_wh = rng.rand(R, 2) * np.array([14, 12]) + 0.5
rois = np.concatenate([r_b, r_xy, r_xy + r_wh], 1).astype("f")
rois[0, 1:] = [-3.0, -2.0, 6.0, 4.0]  # partly outside
rois[1, 1:] = [18.0, 15.0, 30.0, 26.0]  # past the far edges
rois[2, 1:] = [4.0, 4.0, 4.6, 4.3]  # tiny
for nm, kw in (("ra_default", dict(pooled_size=(3, 3), spatial_scale=0.5)),
               ("ra_sr2", dict(pooled_size=(2, 4), spatial_scale=0.5, sample_ratio=2)),
               ("ra_aligned", dict(pooled_size=(3, 2), spatial_scale=0.5, aligned=True)),
               ("ra_aligned_sr", dict(pooled_size=(4, 4), spatial_scale=0.6, aligned=True,
                                      sample_ratio=3)),
               ("ra_ps", dict(pooled_size=(2, 2), spatial_scale=0.5, position_sensitive=True,
                              sample_ratio=2)),
               ("ra_scale1", dict(pooled_size=(2, 2), spatial_scale=1.0))):
    record(nm, "contrib.ROIAlign", [x, rois], kw, grad=True)
for nm, kw in (("rp_default", dict(pooled_size=(3, 3), spatial_scale=0.5)),
               ("rp_rect", dict(pooled_size=(2, 4), spatial_scale=0.5)),
               ("rp_scale", dict(pooled_size=(4, 3), spatial_scale=0.3)),
               ("rp_scale1", dict(pooled_size=(2, 2), spatial_scale=1.0))):
    record(nm, "ROIPooling", [x, rois], kw, grad=True)

# ------------------------------------------------------------------ Proposal / MultiProposal
def rpn_inputs(B, A, H, W, dscale=0.3):
    logit = rng.randn(B, 2 * A, H, W).astype("f")
    prob = np.concatenate([1 / (1 + np.exp(logit[:, A:])), 1 / (1 + np.exp(-logit[:, A:]))], 1)
    return prob.astype("f"), (rng.randn(B, 4 * A, H, W) * dscale).astype("f")


cp, bp = rpn_inputs(1, 12, 6, 7)
info = np.array([[90, 100, 1.0]], "f")  # positions past 90/16, 100/16 are padding
record("prop_default", "contrib.Proposal", [cp, bp, info],
       dict(rpn_pre_nms_top_n=100, rpn_post_nms_top_n=20, output_score=True))
record("prop_rois_only", "contrib.Proposal", [cp, bp, info],
       dict(rpn_pre_nms_top_n=200, rpn_post_nms_top_n=30, threshold=0.5, rpn_min_size=8))
record("prop_cycle", "contrib.Proposal", [cp, bp, info],
       dict(rpn_pre_nms_top_n=12, rpn_post_nms_top_n=40, threshold=0.3, output_score=True))
cp6, bp6 = rpn_inputs(1, 6, 8, 8, 0.2)
info6 = np.array([[64, 60, 1.5]], "f")
record("prop_small", "contrib.Proposal", [cp6, bp6, info6],
       dict(scales=(2, 4), ratios=(0.5, 1, 2), feature_stride=8, rpn_pre_nms_top_n=150,
            rpn_post_nms_top_n=25, threshold=0.6, rpn_min_size=4, output_score=True))
record("prop_iou_loss", "contrib.Proposal", [cp6, bp6 * 10, info6],
       dict(scales=(2, 4), ratios=(0.5, 1, 2), feature_stride=8, rpn_pre_nms_top_n=150,
            rpn_post_nms_top_n=25, threshold=0.6, rpn_min_size=4, output_score=True,
            iou_loss=True))
cpm, bpm = rpn_inputs(2, 6, 8, 8, 0.2)
infom = np.array([[64, 60, 1.5], [50, 64, 1.0]], "f")
record("mprop", "contrib.MultiProposal", [cpm, bpm, infom],
       dict(scales=(2, 4), ratios=(0.5, 1, 2), feature_stride=8, rpn_pre_nms_top_n=120,
            rpn_post_nms_top_n=20, threshold=0.6, rpn_min_size=4, output_score=True))
record("mprop_rois", "contrib.MultiProposal", [cpm, bpm, infom],
       dict(scales=(2, 4), ratios=(0.5, 1, 2), feature_stride=8, rpn_pre_nms_top_n=60,
            rpn_post_nms_top_n=15, threshold=0.7, rpn_min_size=2))

# ------------------------------------------------------------------ larger NMS (several blocks)
dbig = nms_data((2,), 300)
record("nms_big", "contrib.box_nms", [dbig], dict(overlap_thresh=0.3), grad=True)
record("nms_big_ids", "contrib.box_nms", [dbig], dict(id_index=0, overlap_thresh=0.2,
                                                      valid_thresh=0.05))
fm3 = mx.nd.zeros((1, 1, 8, 8))
anc3 = mx.nd.contrib.MultiBoxPrior(fm3, sizes=(0.3, 0.15), ratios=(1, 2, 0.5)).asnumpy()
lg3 = rng.randn(2, 3, anc3.shape[1]).astype("f")
prob3 = np.exp(lg3) / np.exp(lg3).sum(1, keepdims=True)
loc3 = (rng.randn(2, anc3.shape[1] * 4) * 0.3).astype("f")
record("mbd_big", "contrib.MultiBoxDetection", [prob3, loc3, anc3], dict(threshold=0.2))
record("mbd_big_force", "contrib.MultiBoxDetection", [prob3, loc3, anc3],
       dict(threshold=0.2, force_suppress=True, nms_threshold=0.3))

# ------------------------------------------------------------------ an MXNet symbol file using them
sd, sx, sr = mx.sym.var("data"), mx.sym.var("x"), mx.sym.var("rois")
sgraph = mx.sym.Group([
    mx.sym.contrib.box_nms(sd, overlap_thresh=0.45, topk=20, id_index=0, out_format="center"),
    mx.sym.contrib.ROIAlign(sx, sr, pooled_size=(3, 2), spatial_scale=0.5, sample_ratio=2),
    mx.sym.ROIPooling(sx, sr, pooled_size=(2, 2), spatial_scale=0.5),
    mx.sym.contrib.MultiBoxPrior(sx, sizes=(0.5, 0.25), ratios=(1, 2), clip=True),
    mx.sym.contrib.bipartite_matching(mx.sym.contrib.box_iou(
        mx.sym.slice_axis(sd, axis=-1, begin=2, end=6),
        mx.sym.slice_axis(sd, axis=-1, begin=2, end=6)), threshold=0.2)[1]])
sym_in = dict(data=d, x=x, rois=rois)
sym_out = sgraph.eval(ctx=mx.cpu(), **{k: mx.nd.array(v) for k, v in sym_in.items()})
for k, v in sym_in.items():
    arrays[f"symbol/in/{k}"] = v
for j, o in enumerate(sym_out):
    arrays[f"symbol/out{j}"] = o.asnumpy()

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures",
                   "detection_ops")
os.makedirs(out, exist_ok=True)
np.savez_compressed(os.path.join(out, "cases.npz"), **arrays)
with open(os.path.join(out, "cases.json"), "w") as f:
    json.dump(cases, f, indent=0, sort_keys=True)
with open(os.path.join(out, "symbol.json"), "w") as f:
    f.write(sgraph.tojson())
print(len(cases), "cases")
