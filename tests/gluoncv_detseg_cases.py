"""GluonCV detection and segmentation models on fixed inputs and parameters, run the same way
on MXNet 1.9.1 (tools/gen_gluoncv_detseg_fixtures.py) and on neogluon through the mxnet alias
(tests/test_gluoncv_detseg.py runs this file with ``python -m neogluon.run``).

    python gluoncv_detseg_cases.py OUT.npz [case ...]

Parameters are drawn from their position in ``collect_params()`` with a fixed seed (both
frameworks build the same structure in the same order), so no parameter file is stored. The
scales are chosen so that activations stay O(1) through the ResNets (gain 0.7) and the
detection scores are well apart: random weights otherwise give saturated, tied or near-equal
scores (YOLOv3's and CenterNet's heads get their own scale, CenterNet's heatmap filters zero
mean), and the order of the kept detections would then be decided by float32 rounding.
Dropout is set to rate 0 (its masks come from each framework's own generator). Small inputs
(128x128 detection, 48x48 segmentation) and fewer proposals/samples for the R-CNNs keep the
cases fast. Each case records:

- ``<case>/names``: the parameter names and shapes (the structure the seeds were drawn for);
- ``<case>/infer*``: the hybridized network's inference outputs (after NMS for detection:
  ids, scores, boxes; logits for segmentation);
- ``<case>/train*`` and ``<case>/loss*``: training-mode outputs, GluonCV's training targets
  and the losses the GluonCV training scripts compute from them;
- ``<case>/grad*``: gradients of two parameters (the first layer's and a head's) after
  backward of the summed losses.

Arrays of more than SAMPLE values are stored as a fixed sample of their values plus their
sum / sum of |x| / 2-norm (``@stats``), so the fixtures stay small.

Where GluonCV draws random numbers inside the network (the R-CNNs' RCNNTargetSampler shuffles
proposals with ``F.random.uniform``), the case draws them from numpy instead, in both
frameworks (MXNet's and neogluon's generators give different streams); the R-CNN training
forward therefore runs imperatively, its inference hybridized. A hybridized MXNet block keeps
the graph of its first call whatever the training mode, so the cases call ``hybridize()``
again (which drops it) before the training-mode calls, as GluonCV's scripts do.
"""
import os
import re
import sys
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")
NOISE = float(os.environ.get("DETSEG_INPUT_NOISE", 0))


def _np_compat():
    # GluonCV 0.10.5 uses np.float / np.int, removed in numpy 1.24 (neogluon's venv has
    # numpy 2; MXNet 1.9.1 needs numpy < 1.24, where this changes nothing).
    for alias, typ in (("float", float), ("int", int), ("bool", bool)):
        if alias not in np.__dict__:
            setattr(np, alias, typ)


def _fill(mx, net, scales=(), seed=3000, centered=None):
    """Seeded values for every parameter by position; ``scales`` is ((regex, factor), ...)
    applied to the names that match (first match wins); weights whose name matches
    ``centered`` get filters of zero mean (a feature map's common offset then gives no score,
    so scores differ from place to place). Returns the names/shapes record."""
    names = []
    for i, (name, p) in enumerate(net.collect_params().items()):
        shape = p.shape
        names.append(f"{name}:{'x'.join(str(s) for s in shape)}")
        if type(p).__name__ == "Constant":      # SSD's anchors, fixed by the network
            continue
        rng = np.random.RandomState(seed + i)
        if name.endswith(("running_var", "moving_var")):
            v = rng.uniform(0.5, 1.5, shape)
        elif name.endswith("running_mean") or name.endswith("moving_mean"):
            v = rng.uniform(-0.1, 0.1, shape)
        elif name.endswith("gamma"):
            v = 1.0 + rng.uniform(-0.1, 0.1, shape)
        elif len(shape) <= 1:
            v = rng.uniform(-0.1, 0.1, shape)
        else:
            fan_in = int(np.prod(shape[1:]))
            v = rng.uniform(-1, 1, shape) * np.sqrt(6.0 / max(fan_in, 1))
            if centered and re.search(centered, name):
                v = v - v.reshape(shape[0], -1).mean(1).reshape((-1,) + (1,) * (len(shape) - 1))
        for pat, factor in scales:
            if re.search(pat, name):
                v = v * factor
                break
        p.set_data(mx.nd.array(v.astype("float32")))
    return np.array(names)


def _no_dropout(mx, net):
    """Dropout off (rate 0): its random masks come from each framework's own generator."""
    def walk(block):
        if isinstance(block, mx.gluon.nn.Dropout):
            block._rate = 0.0
        for child in block._children.values():
            walk(child)
    walk(net)


def _image(seed, shape):
    """A fixed input; with NOISE set, plus Gaussian noise of that scale (the generator's
    second run measures how much MXNet's own results move under it)."""
    v = np.random.RandomState(seed).uniform(-1, 1, shape)
    if NOISE:
        v = v + NOISE * np.random.RandomState(seed + 1).normal(size=shape)
    return v.astype("float32")


SAMPLE = 4096


def _store(res, key, value):
    """``res[key] = value``; an array of more than SAMPLE values is kept as SAMPLE values at
    evenly spaced flat positions, with ``key@stats`` = (sum, sum of |x|, 2-norm) of all of it
    and ``key@shape`` (the fixtures stay small)."""
    a = value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)
    if a.size <= SAMPLE:
        res[key] = a
        return
    flat = a.reshape(-1)
    res[key] = flat[np.linspace(0, flat.size - 1, SAMPLE).astype(np.int64)]
    f64 = flat.astype(np.float64)
    res[key + "@stats"] = np.array([f64.sum(), np.abs(f64).sum(), np.sqrt((f64 ** 2).sum())])
    res[key + "@shape"] = np.array(a.shape)


def _put(res, prefix, outs):
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    for j, o in enumerate(outs):
        _store(res, f"{prefix}{j}", o)


def _grads(res, case, net, patterns):
    params = net.collect_params()
    for k, pat in enumerate(patterns):
        name = [n for n in params if re.search(pat, n) and params[n].grad_req != "null"][0]
        _store(res, f"{case}/grad{k}", params[name].grad())


# ------------------------------------------------------------------------------ SSD

def ssd(mx, res, case="ssd"):
    from gluoncv import model_zoo, loss as gloss
    from gluoncv.model_zoo.ssd.target import SSDTargetGenerator
    net = model_zoo.get_model("ssd_300_mobilenet0.25_voc", pretrained=False,
                              pretrained_base=False)
    net.initialize()
    x = mx.nd.array(_image(10, (1, 3, 128, 128)))
    net(x)
    res[f"{case}/names"] = _fill(mx, net)
    net.set_nms(nms_thresh=0.45, nms_topk=200, post_nms=50)
    net.hybridize()
    _put(res, f"{case}/infer", net(x))
    net.hybridize()   # a new graph for training mode (MXNet keeps the first call's graph)
    gt_boxes = mx.nd.array([[[10, 12, 70, 90], [60, 40, 120, 110]]])
    gt_ids = mx.nd.array([[[3], [11]]])
    with mx.autograd.train_mode():
        cls_preds, box_preds, anchors = net(x)
    cls_t, box_t, _ = SSDTargetGenerator(negative_mining_ratio=3)(anchors, cls_preds,
                                                                   gt_boxes, gt_ids)
    _store(res, f"{case}/target0", cls_t)
    _store(res, f"{case}/target1", box_t)
    mbox = gloss.SSDMultiBoxLoss()
    with mx.autograd.record():
        cls_preds, box_preds, anchors = net(x)
        sum_l, cls_l, box_l = mbox(cls_preds, box_preds, cls_t, box_t)
        total = sum(sum_l)
    total.backward()
    _put(res, f"{case}/train", [cls_preds, box_preds, anchors])
    _put(res, f"{case}/loss", [sum_l[0], cls_l[0], box_l[0]])
    _grads(res, case, net, [r"conv0_weight$", r"convpredictor0_conv0_weight$"])


# ------------------------------------------------------------------------------ YOLOv3

def yolo3(mx, res, case="yolo3"):
    from gluoncv import model_zoo
    from gluoncv.model_zoo.yolo.yolo_target import YOLOV3PrefetchTargetGenerator
    net = model_zoo.get_model("yolo3_mobilenet0.25_voc", pretrained=False,
                              pretrained_base=False)
    net.initialize()
    x = mx.nd.array(_image(11, (1, 3, 128, 128)))
    net(x)
    res[f"{case}/names"] = _fill(mx, net)
    net.set_nms(nms_thresh=0.45, nms_topk=200, post_nms=50)
    # YOLO3DefaultTrainTransform's recipe: anchors/offsets/feature maps from a training-mode
    # forward before hybridize(), then the prefetch target generator per image
    with mx.autograd.train_mode():
        _, anchors, offsets, feat_maps, _, _, _, _ = net(mx.nd.zeros((1, 3, 128, 128)))
    gt_boxes = mx.nd.array([[[10, 12, 70, 90], [60, 40, 120, 110]]])
    gt_ids = mx.nd.array([[[3], [11]]])
    targets = YOLOV3PrefetchTargetGenerator(num_class=len(net.classes))(
        x, feat_maps, anchors, offsets, gt_boxes, gt_ids, None)
    for j, t in enumerate(targets):
        _store(res, f"{case}/target{j}", t)
    net.hybridize()
    _put(res, f"{case}/infer", net(x))
    net.hybridize()   # a new graph for training mode (MXNet keeps the first call's graph)
    with mx.autograd.record():
        losses = net(x, gt_boxes, *targets)
        total = sum(l.sum() for l in losses)
    total.backward()
    _put(res, f"{case}/loss", losses)
    _grads(res, case, net, [r"conv0_weight$", r"yolooutputv30_conv0_weight$"])


# ------------------------------------------------------------------------------ R-CNN

class _NumpyUniform:
    """``nd.random.uniform`` replaced by numpy draws (seeded) while active."""

    def __init__(self, mx, seed):
        self.mx, self.rng = mx, np.random.RandomState(seed)

    def __enter__(self):
        self.orig = self.mx.nd.random.uniform

        def uniform(low=0, high=1, shape=None, **kw):
            return self.mx.nd.array(self.rng.uniform(low, high, shape).astype("float32"))
        self.mx.nd.random.uniform = uniform
        return self

    def __exit__(self, *exc):
        self.mx.nd.random.uniform = self.orig


def _rcnn_training(mx, res, case, net, img, label, masks=None):
    """GluonCV's train_faster_rcnn.py / train_mask_rcnn.py losses for one image: RPN targets
    as FasterRCNNDefaultTrainTransform makes them, RCNN (and mask) targets from the network's
    own target generators."""
    from gluoncv.model_zoo.rcnn.rpn.rpn_target import RPNTargetGenerator
    # FasterRCNNDefaultTrainTransform's recipe (flip off): the anchors of a 128x128 map cut to
    # the feature map's size, RPN targets from RPNTargetGenerator (its sampling draws from
    # numpy, seeded)
    x = _normalized(mx, img)
    fh, fw = net.features(x).shape[2:]
    ashape = net.ashape
    anchors = net.rpn.anchor_generator(mx.nd.zeros((1, 3, ashape, ashape)))
    anchors = anchors.reshape((1, 1, ashape, ashape, -1))[:, :, :fh, :fw, :].reshape((-1, 4))
    gt_box = mx.nd.array(label[None, :, :4])
    gt_label = mx.nd.array(label[None, :, 4:5])
    gen = RPNTargetGenerator(num_sample=64, pos_iou_thresh=0.7, neg_iou_thresh=0.3,
                             pos_ratio=0.5, stds=(1., 1., 1., 1.))
    rpn_cls_t, rpn_box_t, rpn_box_m = gen(gt_box[0], anchors, img.shape[1], img.shape[0])
    rpn_cls_t = mx.nd.array(rpn_cls_t).reshape((1, -1))
    rpn_box_t = mx.nd.array(rpn_box_t).reshape((1, -1, 4))
    rpn_box_m = mx.nd.array(rpn_box_m).reshape((1, -1, 4))
    _store(res, f"{case}/target0", rpn_cls_t)
    _store(res, f"{case}/target1", rpn_box_t)
    rpn_cls_loss = mx.gluon.loss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=False)
    rpn_box_loss = mx.gluon.loss.HuberLoss(rho=1. / 9)
    rcnn_cls_loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    rcnn_box_loss = mx.gluon.loss.HuberLoss()
    with _NumpyUniform(mx, 21), mx.autograd.record():
        outs = list(net(x, gt_box, gt_label))
        mask_pred = outs.pop(2) if masks is not None else None
        cls_pred, box_pred, roi, samples, matches, rpn_score, rpn_box = outs[:7]
        cls_t, box_t, box_m = outs[8:11]
        rpn_score = rpn_score.squeeze(axis=-1)
        num_rpn_pos = (rpn_cls_t >= 0).sum()
        l1 = rpn_cls_loss(rpn_score, rpn_cls_t, rpn_cls_t >= 0) * rpn_cls_t.size / num_rpn_pos
        l2 = rpn_box_loss(rpn_box, rpn_box_t, rpn_box_m) * rpn_box.size / num_rpn_pos
        num_rcnn_pos = (cls_t >= 0).sum()
        l3 = rcnn_cls_loss(cls_pred, cls_t, cls_t.expand_dims(-1) >= 0) * cls_t.size / \
            num_rcnn_pos
        l4 = rcnn_box_loss(box_pred, box_t, box_m) * box_pred.size / num_rcnn_pos
        losses = [l1.sum(), l2.sum(), l3.sum(), l4.sum()]
        train = [cls_pred, box_pred, roi, samples, matches, rpn_score, rpn_box, cls_t, box_t]
        if masks is not None:
            # train_mask_rcnn.py: the mask head sees the sampled positives (``indices``)
            idx = outs[-1][0]
            mask_t, mask_m = net.mask_target(
                roi[0].take(idx).expand_dims(0), mx.nd.array(masks[None]),
                matches[0].take(idx).expand_dims(0), cls_t[0].take(idx).expand_dims(0))
            l5 = mx.gluon.loss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=False)(
                mask_pred, mask_t, mask_m) * mask_t.size / mask_m.sum()
            losses.append(l5.sum())
            train += [mask_pred, mask_t]
        total = sum(losses)
    total.backward()
    _put(res, f"{case}/train", train)
    _put(res, f"{case}/loss", losses)


def _det_image(seed, size):
    """A random 8-bit image (height, width, 3) and two labelled boxes."""
    rng = np.random.RandomState(seed)
    img = rng.randint(0, 256, (size, size, 3)).astype("float32")
    label = np.array([[10, 12, 70, 90, 3], [60, 40, 120, 110, 11]], dtype="float32")
    return img, label


def _normalized(mx, img):
    """The image as the R-CNN transforms hand it to the network (to_tensor, ImageNet mean and
    std), computed with numpy; with NOISE set, plus Gaussian noise of that scale."""
    x = (img / 255.0 - np.array([0.485, 0.456, 0.406])) / np.array([0.229, 0.224, 0.225])
    x = x.transpose(2, 0, 1)[None]
    if NOISE:
        x = x + NOISE * np.random.RandomState(1).normal(size=x.shape)
    return mx.nd.array(x.astype("float32"))


def faster_rcnn(mx, res, case="faster_rcnn"):
    """faster_rcnn_resnet50_v1b_voc's network with fewer proposals and samples (its ResNet
    layer4 runs once per region, which dominates on a CPU)."""
    from gluoncv.model_zoo.resnetv1b import resnet50_v1b
    from gluoncv.model_zoo.rcnn.faster_rcnn import get_faster_rcnn
    from gluoncv.data import VOCDetection
    base = resnet50_v1b(pretrained=False, dilated=False, use_global_stats=True)
    features = mx.gluon.nn.HybridSequential()
    top = mx.gluon.nn.HybridSequential()
    for layer in ["conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3"]:
        features.add(getattr(base, layer))
    top.add(base.layer4)
    net = get_faster_rcnn(
        name="resnet50_v1b", dataset="voc", pretrained=False, features=features,
        top_features=top, classes=VOCDetection.CLASSES, short=600, max_size=1000,
        train_patterns="|".join([".*dense", ".*rpn", ".*down(2|3|4)_conv",
                                 ".*layers(2|3|4)_conv"]),
        nms_thresh=0.3, nms_topk=400, post_nms=100, roi_mode="align", roi_size=(14, 14),
        strides=16, clip=None, rpn_channel=1024, base_size=16, scales=(2, 4, 8, 16, 32),
        ratios=(0.5, 1, 2), alloc_size=(128, 128), rpn_nms_thresh=0.7,
        rpn_train_pre_nms=12000, rpn_train_post_nms=64, rpn_test_pre_nms=6000,
        rpn_test_post_nms=12, rpn_min_size=16, num_sample=16, pos_iou_thresh=0.5,
        pos_ratio=0.25, max_num_gt=4)
    net.initialize()
    img, label = _det_image(12, 128)
    x = _normalized(mx, img)
    net(x)
    res[f"{case}/names"] = _fill(mx, net, [(r"dense\d+_weight", 1.0), (r"weight$", 0.7)])
    net.hybridize()
    _put(res, f"{case}/infer", net(x))
    net.hybridize(active=False)   # training imperatively: the sampler's draws are numpy's
    _rcnn_training(mx, res, case, net, img, label)
    _grads(res, case, net, [r"rpn.*conv0_weight$", r"dense0_weight$"])


def mask_rcnn(mx, res, case="mask_rcnn"):
    """mask_rcnn_resnet18_v1b_coco's network with fewer proposals, samples and detections."""
    from gluoncv.model_zoo.resnetv1b import resnet18_v1b
    from gluoncv.model_zoo.rcnn.mask_rcnn import get_mask_rcnn
    from gluoncv.data import COCODetection
    base = resnet18_v1b(pretrained=False, dilated=False, use_global_stats=True)
    features = mx.gluon.nn.HybridSequential()
    top = mx.gluon.nn.HybridSequential()
    for layer in ["conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3"]:
        features.add(getattr(base, layer))
    top.add(base.layer4)
    net = get_mask_rcnn(
        name="resnet18_v1b", dataset="coco", pretrained=False, features=features,
        top_features=top, classes=COCODetection.CLASSES, mask_channels=256, rcnn_max_dets=8,
        short=800, max_size=1333,
        train_patterns="|".join([".*dense", ".*rpn", ".*mask", ".*down(2|3|4)_conv",
                                 ".*layers(2|3|4)_conv"]),
        nms_thresh=0.5, nms_topk=-1, post_nms=-1, roi_mode="align", roi_size=(14, 14),
        strides=16, clip=4.42, rpn_channel=1024, base_size=16, scales=(2, 4, 8, 16, 32),
        ratios=(0.5, 1, 2), alloc_size=(128, 128), rpn_nms_thresh=0.7,
        rpn_train_pre_nms=12000, rpn_train_post_nms=64, rpn_test_pre_nms=6000,
        rpn_test_post_nms=8, rpn_min_size=1, num_sample=16, pos_iou_thresh=0.5,
        pos_ratio=0.25, max_num_gt=4)
    net.initialize()
    img, label = _det_image(13, 128)
    x = _normalized(mx, img)
    net(x)
    res[f"{case}/names"] = _fill(mx, net, [(r"dense\d+_weight", 1.0), (r"weight$", 0.7)])
    net.hybridize()
    _put(res, f"{case}/infer", net(x))
    net.hybridize(active=False)
    masks = np.zeros((2, 128, 128), "float32")
    for j, (x0, y0, x1, y1, _) in enumerate(label.astype(int)):
        masks[j, y0:y1, x0:x1] = 1
    _rcnn_training(mx, res, case, net, img, label, masks)
    _grads(res, case, net, [r"rpn.*conv0_weight$", r"mask0_conv0_weight$"])


# ------------------------------------------------------------------------------ CenterNet

def center_net(mx, res, case="center_net"):
    from gluoncv import model_zoo, loss as gloss
    from gluoncv.model_zoo.center_net.target_generator import CenterNetTargetGenerator
    net = model_zoo.get_model("center_net_resnet18_v1b_voc", pretrained=False,
                              pretrained_base=False)
    net.initialize()
    x = mx.nd.array(_image(14, (1, 3, 128, 128)))
    net(x)
    res[f"{case}/names"] = _fill(mx, net, [(r"centernet0_conv1_weight", 5.0),
                                           (r"weight$", 0.7)], centered=r"centernet0_conv1_")
    net.hybridize()
    _put(res, f"{case}/infer", net(x))
    net.hybridize()
    # boxes in the 32x32 output map's coordinates (CenterNetDefaultTrainTransform scales them)
    gt = np.array([[2.5, 3.0, 17.5, 22.5], [15.0, 10.0, 30.0, 27.5]], "float32")
    targets = CenterNetTargetGenerator(len(net.classes), 32, 32)(gt, np.array([3., 11.]))
    for j, t in enumerate(targets):
        _store(res, f"{case}/target{j}", t)
    hm_t, wh_t, wh_m, reg_t, reg_m = [t.expand_dims(0) for t in targets]
    hm_loss = gloss.HeatmapFocalLoss(from_logits=True)
    wh_loss = gloss.MaskedL1Loss(weight=0.1)
    reg_loss = gloss.MaskedL1Loss(weight=1.0)
    with mx.autograd.record():
        hm, wh, reg = net(x)
        losses = [hm_loss(hm, hm_t), wh_loss(wh, wh_t, wh_m), reg_loss(reg, reg_t, reg_m)]
        total = sum(losses)
    total.backward()
    _put(res, f"{case}/train", [hm, wh, reg])
    _put(res, f"{case}/loss", losses)
    _grads(res, case, net, [r"conv0_weight$", r"centernet0_conv1_weight$"])


# ------------------------------------------------------------------------------ segmentation

def _segmentation(mx, res, case, name, seed):
    from gluoncv import model_zoo, loss as gloss
    net = model_zoo.get_model(name, pretrained=False, pretrained_base=False, crop_size=48,
                              base_size=60)
    net.initialize()
    x = mx.nd.array(_image(seed, (1, 3, 48, 48)))
    net(x)
    res[f"{case}/names"] = _fill(mx, net, [(r"weight$", 0.7)])
    _no_dropout(mx, net)
    net.hybridize()
    _put(res, f"{case}/infer", net(x))
    net.hybridize()
    label = mx.nd.array(np.random.RandomState(seed + 1).randint(-1, net.nclass, (1, 48, 48)))
    loss_fn = gloss.MixSoftmaxCrossEntropyLoss(aux=True, aux_weight=0.2)
    with mx.autograd.record():
        outs = net(x)
        loss = loss_fn(*outs, label)
    loss.backward()
    _put(res, f"{case}/train", outs)
    _put(res, f"{case}/loss", [loss])
    _grads(res, case, net, [r"conv0_weight$", r"head.*conv\d*_weight$"])


def fcn(mx, res):
    _segmentation(mx, res, "fcn", "fcn_resnet50_voc", 15)


def psp(mx, res):
    _segmentation(mx, res, "psp", "psp_resnet50_ade", 16)


def deeplab(mx, res):
    _segmentation(mx, res, "deeplab", "deeplab_resnet50_ade", 17)


CASES = {"ssd": ssd, "yolo3": yolo3, "faster_rcnn": faster_rcnn, "mask_rcnn": mask_rcnn,
         "center_net": center_net, "fcn": fcn, "psp": psp, "deeplab": deeplab}


def main(argv):
    _np_compat()
    import mxnet as mx
    out, names = argv[0], argv[1:] or sorted(CASES)
    res = {}
    for name in names:
        mx.random.seed(0)
        np.random.seed(0)
        t0 = time.time()
        try:
            CASES[name](mx, res)
        except Exception as e:  # noqa: BLE001 - reported, the comparison then fails
            import traceback
            traceback.print_exc()
            res[f"{name}/error"] = np.array(f"{type(e).__name__}: {e}")
        res[f"{name}/seconds"] = np.array(time.time() - t0)
        print(f"{name}: {time.time() - t0:.1f} s", file=sys.stderr)
    np.savez_compressed(out, **res)


if __name__ == "__main__":
    main(sys.argv[1:])
