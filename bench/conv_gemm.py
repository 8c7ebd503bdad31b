"""Convolutions of small images with many channels: oneDNN against matrix products (issue 17).

Usage: OMP_NUM_THREADS=1 python bench/conv_gemm.py [--threads 1] [--rounds 9]

Per layer (ResNet-18's 3x3 layers on 64x64 inputs, batch 16, and a few other shapes): the
forward, the weight gradient and the input gradient through torch's oneDNN path and as the products of
neogluon/ndarray/_conv_gemm.py, ms per call (best of --rounds, wall), and what neogluon's
per-shape measurement picks on this machine.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from neogluon.ndarray import _conv_gemm as G  # noqa: E402

sys.path.insert(0, HERE)
from _timing import best_ms as _best  # noqa: E402


def best_ms(fn, rounds):
    return _best(fn, rounds, warmup=2)

# (label, batch, in channels, out channels, image, kernel, stride, pad)
LAYERS = [
    ("ResNet-18 layer1 3x3", 16, 64, 64, 16, 3, 1, 1),
    ("ResNet-18 layer2 3x3", 16, 128, 128, 8, 3, 1, 1),
    ("ResNet-18 layer2 3x3/2", 16, 64, 128, 16, 3, 2, 1),
    ("ResNet-18 layer3 3x3", 16, 256, 256, 4, 3, 1, 1),
    ("ResNet-18 layer3 3x3/2", 16, 128, 256, 8, 3, 2, 1),
    ("ResNet-18 layer4 3x3", 16, 512, 512, 2, 3, 1, 1),
    ("ResNet-18 layer4 3x3/2", 16, 256, 512, 4, 3, 2, 1),
    ("ResNet-18 layer4, 32x32 input", 16, 512, 512, 1, 3, 1, 1),
    ("ResNet-18 layer4, batch 64", 64, 512, 512, 2, 3, 1, 1),
    ("ResNet-50 layer4 1x1", 16, 2048, 512, 2, 1, 1, 0),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"threads {args.threads}, ms per call, best of {args.rounds}\n")
    print("| layer | shape | fwd oneDNN | fwd product | wgrad oneDNN | wgrad product | "
          "dgrad oneDNN | dgrad product | picked (fwd / wgrad / dgrad) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for label, n, c, o, hw, k, s, p in LAYERS:
        g = torch.Generator().manual_seed(0)
        x = torch.randn(n, c, hw, hw, generator=g)
        w = torch.randn(o, c, k, k, generator=g)
        st, pd = (s, s), (p, p)
        gy = torch.randn(F.conv2d(x, w, None, st, pd).shape, generator=g)
        fwd_dnn = best_ms(lambda: F.conv2d(x, w, None, st, pd), args.rounds)
        fwd_mm = best_ms(lambda: G.product_forward(x, w, None, st, pd), args.rounds)
        wg_dnn = best_ms(lambda: G._onednn_wgrad(gy, x, w, st, pd), args.rounds)
        wg_mm = best_ms(lambda: G.product_wgrad(gy, x, w.shape, st, pd), args.rounds)
        dg_dnn = best_ms(lambda: G._onednn_dgrad(gy, x, w, st, pd), args.rounds)
        dg_mm = best_ms(lambda: G.product_dgrad(gy, x.shape, w, st, pd), args.rounds)
        if G.usable(x, w, st, pd, (1, 1), 1):
            G._choice.clear()
            G._ConvProduct.apply(x.requires_grad_(), w.requires_grad_(), None, st,
                                 pd).backward(gy)
            x.requires_grad_(False)
            w.requires_grad_(False)
            picks = {key[0]: v for key, v in G._choice.items()}
            pf = "product" if picks.get("forward") else "oneDNN"
            pw = ("product (im2col kept)" if picks.get("forward") else
                  "product" if picks.get("wgrad") else "oneDNN")
            pdg = "product" if picks.get("dgrad") else "oneDNN"
            picked = f"{pf} / {pw} / {pdg}"
        else:
            picked = "not tried"
        print(f"| {label} | {n}x{c}x{hw}x{hw} k{k} s{s} -> {o} | {fwd_dnn:.2f} | {fwd_mm:.2f} "
              f"| {wg_dnn:.2f} | {wg_mm:.2f} | {dg_dnn:.2f} | {dg_mm:.2f} | {picked} |")


if __name__ == "__main__":
    main()
