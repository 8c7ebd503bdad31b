"""GPU diagnostic: a fused GRU's float32 error against float64, through torch (cuDNN, torch's
own CUDA kernels, CPU) and through neogluon's gluon.rnn.GRU (imperative, hybridized, unrolled
cells). Prints one JSON line. Run with and without NVIDIA_TF32_OVERRIDE=0."""
import copy
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def err(a, ref):
    a, ref = a.detach().cpu().double(), ref.detach().cpu().double()
    return float((a - ref).abs().max() / ref.abs().max())


def torch_side():
    out = {}
    for (i, h, layers, bid) in [(8, 8, 1, False), (8, 16, 3, False), (8, 16, 2, True),
                                (128, 512, 1, False)]:
        torch.manual_seed(0)
        gru = torch.nn.GRU(i, h, layers, bidirectional=bid)
        for p in gru.parameters():
            torch.nn.init.normal_(p)
        x = torch.randn(5, 1, i)
        ref = copy.deepcopy(gru).double()(x.double())[0]
        g = copy.deepcopy(gru).cuda()
        row = {"cpu32": err(copy.deepcopy(gru)(x)[0], ref)}
        for tf32 in (True, False):
            torch.backends.cudnn.allow_tf32 = tf32
            row[f"cudnn_tf32={tf32}"] = err(g(x.cuda())[0], ref)
            with torch.backends.cudnn.flags(enabled=False):
                row[f"native_tf32={tf32}"] = err(g(x.cuda())[0], ref)
        out[f"{i},{h},{layers},{'bi' if bid else 'uni'}"] = row
    torch.backends.cudnn.allow_tf32 = True
    return out


def gluon_side():
    import neogluon as mx
    out = {}
    for mode in ("gru", "lstm"):
        make = mx.gluon.rnn.GRU if mode == "gru" else mx.gluon.rnn.LSTM
        mx.random.seed(1)
        layer = make(16, num_layers=3, input_size=8, prefix=mode + "_")
        layer.initialize(ctx=mx.gpu(0))
        ref = make(16, num_layers=3, input_size=8, prefix=mode + "_")
        ref.initialize(ctx=mx.cpu())
        for (k, p), q in zip(layer.collect_params().items(), ref.collect_params().values()):
            w = mx.nd.random.normal(shape=p.shape)
            p.set_data(w.as_in_context(mx.gpu(0)))
            q.set_data(w)
        ref.cast("float64")
        x = mx.nd.random.normal(shape=(5, 1, 8))
        want = torch.from_numpy(ref(x.astype("float64")).asnumpy())
        imp = torch.from_numpy(layer(x.as_in_context(mx.gpu(0))).asnumpy())
        layer.hybridize()
        hyb = torch.from_numpy(layer(x.as_in_context(mx.gpu(0))).asnumpy())
        out[mode] = {"imperative": err(imp, want), "hybridized": err(hyb, want),
                     "imp_vs_hyb": err(imp, hyb)}
    return out


if __name__ == "__main__":
    print(json.dumps({"tf32_override": os.environ.get("NVIDIA_TF32_OVERRIDE"),
                      "torch": torch_side(), "gluon": gluon_side()}))
