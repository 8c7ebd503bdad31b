"""d2l book chapters, real MXNet 1.9.1 vs neogluon: seconds per training epoch and final losses.

Runs a representative subset of the book's MXNet sections (extracted from d2l-en v1.0.3 by
tools/d2l_chapters.py, on the stand-in data of tools/make_d2l_data.py) with both frameworks,
one section at a time and alternating which framework goes first, each script in its own
process (the two need different NumPy versions). The d2l shim times every
``d2l.Trainer.fit_epoch`` (a training pass plus the validation pass) and records the losses the
book plots; interpreter start-up and data loading are not in the epoch times.

Usage::

    python bench/d2l_chapters.py --mx-python /tmp/d2l-ref/bin/python \\
        --ng-python /tmp/d2l-ng/bin/python [--rounds 1] [--root /tmp/d2l-run] [SECTION ...]

Reported per section: median epoch seconds for each framework (over all epochs of all rounds),
the ratio neogluon/MXNet (below 1 = neogluon faster) and each run's last-epoch losses.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import d2l_chapters  # noqa: E402

DEFAULT = ["softmax-concise", "mlp-impl", "lenet", "resnet", "rnn-concise", "transformer"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mx-python", default="/tmp/d2l-ref/bin/python")
    ap.add_argument("--ng-python", default="/tmp/d2l-ng/bin/python")
    ap.add_argument("--root", default="/tmp/d2l-run")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("sections", nargs="*")
    args = ap.parse_args()
    names = args.sections or DEFAULT
    runs = {n: {"mxnet": [], "neogluon": []} for n in names}
    for r in range(args.rounds):
        for i, name in enumerate(names):
            order = ["mxnet", "neogluon"] if (r + i) % 2 == 0 else ["neogluon", "mxnet"]
            for impl in order:
                ns = argparse.Namespace(
                    impl=impl, python=args.mx_python if impl == "mxnet" else args.ng_python,
                    root=args.root, timeout=args.timeout, threads=args.threads)
                res = d2l_chapters.run_one(ns, name)
                runs[name][impl].append(res)
                if res["rc"] != 0:
                    print(f"{name} {impl}: rc={res['rc']}\n{res['tail'][-1500:]}", flush=True)
    print("| section | MXNet s/epoch | neogluon s/epoch | ratio ng/mx | MXNet last epoch "
          "| neogluon last epoch |")
    print("|---|---|---|---|---|---|")
    out = {}
    for name in names:
        med, loss = {}, {}
        for impl in ("mxnet", "neogluon"):
            ep = [s for res in runs[name][impl] for s in res.get("result", {}).get("epoch_s", [])]
            med[impl] = statistics.median(ep) if ep else float("nan")
            last = runs[name][impl][-1].get("result", {})
            loss[impl] = ", ".join(f"{k} {last[k]:.3f}" for k in d2l_chapters.KEYS
                                   if k in last) or "-"
        ratio = med["neogluon"] / med["mxnet"]
        out[name] = {"mx_s": med["mxnet"], "ng_s": med["neogluon"], "ratio": ratio,
                     "epochs": {impl: [[round(s, 2) for s in res.get("result", {})
                                        .get("epoch_s", [])] for res in runs[name][impl]]
                                for impl in ("mxnet", "neogluon")}}
        print(f"| {name} | {med['mxnet']:.2f} | {med['neogluon']:.2f} | {ratio:.2f} | "
              f"{loss['mxnet']} | {loss['neogluon']} |", flush=True)
    print("JSON " + json.dumps(out))


if __name__ == "__main__":
    main()
