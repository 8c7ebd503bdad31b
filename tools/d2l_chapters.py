"""Run the d2l book's (d2l-en v1.0.3) MXNet code on real MXNet 1.9.1 and on neogluon.

The book's text is not kept in this repository: the scripts are extracted at run time from a
checkout (or bare mirror) of github.com/d2l-ai/d2l-en, tag v1.0.3 (sample code under
LICENSE-SAMPLECODE, MIT-0-style). A section's script is every ``.python .input`` cell whose
``%%tab`` line names ``mxnet`` or ``all``, in order; IPython magics (``%...``) are dropped and
``tab.selected(...)`` / ``tab.interact_select(...)`` (d2lbook's multi-framework switch) get a
tiny stand-in that answers for ``mxnet``. Untagged cells are left out, as d2lbook does for a
non-default tab. Each script starts with ``d2l_shim.install()`` (tools/d2l_shim.py: offline
data, loss/epoch-time recording).

Size overrides, applied by the same literal substitutions for both frameworks and nothing
else (no model, loss or optimiser code is touched):

* ``max_epochs=N`` -> ``max_epochs=min(N, E)``, E = ``--epochs`` (default 2);
* ``resize=(224, 224)`` -> ``resize=(R, R)``, R = ``--resize`` (default 96; 96 is the book's own
  size for GoogLeNet/ResNet/DenseNet and the smallest AlexNet/NiN's stride-4 stems accept);
* the modern-CNN sections read the small Fashion-MNIST stand-in
  (``mxhome-small``: 512 train / 256 val images), the rest the full one (4096 / 1024).

Usage::

    python tools/make_d2l_data.py /tmp/d2l-run
    python tools/d2l_chapters.py extract --repo MIRROR_GIT_DIR --out /tmp/d2l-run/scripts
    python tools/d2l_chapters.py run --impl mxnet    --python /tmp/d2l-ref/bin/python [SECTION ...]
    python tools/d2l_chapters.py run --impl neogluon --python /tmp/d2l-ng/bin/python  [SECTION ...]
    python tools/d2l_chapters.py report            # table of both runs' results

Results go to ROOT/results-<impl>.json (section -> rc, seconds, D2L_RESULT summary, tail of
the output). neogluon runs ``python -m neogluon.run script.py`` with PYTHONPATH set to this
checkout.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

TAG = "v1.0.3"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)

SECTIONS = [
    ("lr-synthetic", "chapter_linear-regression/synthetic-regression-data.md"),
    ("lr-scratch", "chapter_linear-regression/linear-regression-scratch.md"),
    ("lr-concise", "chapter_linear-regression/linear-regression-concise.md"),
    ("weight-decay", "chapter_linear-regression/weight-decay.md"),
    ("fashion-mnist", "chapter_linear-classification/image-classification-dataset.md"),
    ("softmax-scratch", "chapter_linear-classification/softmax-regression-scratch.md"),
    ("softmax-concise", "chapter_linear-classification/softmax-regression-concise.md"),
    ("mlp", "chapter_multilayer-perceptrons/mlp.md"),
    ("mlp-impl", "chapter_multilayer-perceptrons/mlp-implementation.md"),
    ("numerical-stability", "chapter_multilayer-perceptrons/numerical-stability-and-init.md"),
    ("dropout", "chapter_multilayer-perceptrons/dropout.md"),
    ("model-construction", "chapter_builders-guide/model-construction.md"),
    ("parameters", "chapter_builders-guide/parameters.md"),
    ("init-param", "chapter_builders-guide/init-param.md"),
    ("lazy-init", "chapter_builders-guide/lazy-init.md"),
    ("custom-layer", "chapter_builders-guide/custom-layer.md"),
    ("read-write", "chapter_builders-guide/read-write.md"),
    ("use-gpu", "chapter_builders-guide/use-gpu.md"),
    ("conv-layer", "chapter_convolutional-neural-networks/conv-layer.md"),
    ("padding-strides", "chapter_convolutional-neural-networks/padding-and-strides.md"),
    ("channels", "chapter_convolutional-neural-networks/channels.md"),
    ("pooling", "chapter_convolutional-neural-networks/pooling.md"),
    ("lenet", "chapter_convolutional-neural-networks/lenet.md"),
    ("alexnet", "chapter_convolutional-modern/alexnet.md"),
    ("vgg", "chapter_convolutional-modern/vgg.md"),
    ("nin", "chapter_convolutional-modern/nin.md"),
    ("googlenet", "chapter_convolutional-modern/googlenet.md"),
    ("batch-norm", "chapter_convolutional-modern/batch-norm.md"),
    ("resnet", "chapter_convolutional-modern/resnet.md"),
    ("densenet", "chapter_convolutional-modern/densenet.md"),
    ("cnn-design", "chapter_convolutional-modern/cnn-design.md"),
    ("sequence", "chapter_recurrent-neural-networks/sequence.md"),
    ("text-sequence", "chapter_recurrent-neural-networks/text-sequence.md"),
    ("language-model", "chapter_recurrent-neural-networks/language-model.md"),
    ("rnn-scratch", "chapter_recurrent-neural-networks/rnn-scratch.md"),
    ("rnn-concise", "chapter_recurrent-neural-networks/rnn-concise.md"),
    ("queries-keys-values", "chapter_attention-mechanisms-and-transformers/queries-keys-values.md"),
    ("attention-pooling", "chapter_attention-mechanisms-and-transformers/attention-pooling.md"),
    ("attention-scoring", "chapter_attention-mechanisms-and-transformers/attention-scoring-functions.md"),
    ("bahdanau", "chapter_attention-mechanisms-and-transformers/bahdanau-attention.md"),
    ("multihead", "chapter_attention-mechanisms-and-transformers/multihead-attention.md"),
    ("self-attention", "chapter_attention-mechanisms-and-transformers/self-attention-and-positional-encoding.md"),
    ("transformer", "chapter_attention-mechanisms-and-transformers/transformer.md"),
]
KEYS = ("train_loss", "val_loss", "val_acc", "train_ppl", "val_ppl")
SMALL_DATA = {"alexnet", "vgg", "nin", "googlenet", "batch-norm", "resnet", "densenet",
              "cnn-design"}

HEADER = '''# Extracted by tools/d2l_chapters.py from d2l-en {tag}: {path} (MXNet tab).
import os as _os, sys as _sys
_sys.path.insert(0, _os.environ.get('D2L_SHIM_DIR') or {tools!r})
import d2l_shim as _d2l_shim
_d2l_shim.install()


class tab:  # d2lbook's framework switch, answering for the MXNet tab
    @staticmethod
    def selected(*names):
        return "mxnet" in names or "all" in names

    @staticmethod
    def interact_select(*args, **kwargs):
        pass


'''

_CELL = re.compile(r"^```\{\.python \.input[^}]*\}\n(.*?)^```$", re.S | re.M)


def cells(markdown):
    for m in _CELL.finditer(markdown):
        body = m.group(1)
        first, _, rest = body.partition("\n")
        if not first.startswith("%%tab"):
            continue  # untagged: d2lbook's default tab only (and the %load_ext cell)
        tabs = [t.strip() for t in first[len("%%tab"):].split(",")]
        if "mxnet" in tabs or "all" in tabs:
            yield rest


def script_for(markdown, path, epochs, resize):
    out = [HEADER.format(tag=TAG, path=path, tools=HERE)]
    for body in cells(markdown):
        lines = [l for l in body.split("\n") if not l.lstrip().startswith(("%", "!"))]
        code = "\n".join(lines)
        code = re.sub(r"\bmax_epochs=(\d+)", lambda m: f"max_epochs=min({m.group(1)}, {epochs})",
                      code)
        code = code.replace("resize=(224, 224)", f"resize=({resize}, {resize})")
        out.append(code.rstrip() + "\n\n")
    return "".join(out)


def git_show(repo, path):
    return subprocess.run(["git", "--git-dir", repo, "show", f"{TAG}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def extract(args):
    os.makedirs(args.out, exist_ok=True)
    for name, path in SECTIONS:
        src = script_for(git_show(args.repo, path), path, args.epochs, args.resize)
        with open(os.path.join(args.out, name + ".py"), "w") as f:
            f.write(src)
    print(f"{len(SECTIONS)} scripts in {args.out}")


def run_one(args, name):
    script = os.path.join(args.root, "scripts", name + ".py")
    work = os.path.join(args.root, "work")  # d2l's default data folder is ../data
    os.makedirs(work, exist_ok=True)
    # the scripts find tools/d2l_shim.py through D2L_SHIM_DIR (this checkout's tools/), so
    # scripts extracted by another checkout still run
    env = dict(os.environ, MPLBACKEND="Agg", OMP_NUM_THREADS=str(args.threads),
               D2L_SHIM_DIR=HERE,
               MXNET_HOME=os.path.join(args.root, "mxhome-small" if name in SMALL_DATA
                                       else "mxhome-full"))
    if args.impl == "neogluon":
        env["PYTHONPATH"] = REPO_ROOT
        cmd = [args.python, "-m", "neogluon.run", script]
    else:
        env.pop("PYTHONPATH", None)
        cmd = [args.python, script]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True,
                           timeout=args.timeout)
        rc, text = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        rc, text = "timeout", (e.stdout or b"").decode() + (e.stderr or b"").decode()
    res = {"rc": rc, "seconds": round(time.time() - t0, 1), "tail": text[-3000:]}
    for line in text.splitlines():
        if line.startswith("D2L_RESULT "):
            res["result"] = json.loads(line[len("D2L_RESULT "):])
    return res


def run(args):
    path = os.path.join(args.root, f"results-{args.impl}.json")
    results = json.load(open(path)) if os.path.exists(path) else {}
    names = args.sections or [n for n, _ in SECTIONS]
    for name in names:
        res = run_one(args, name)
        results[name] = res
        summary = {k: (round(v, 4) if isinstance(v, float) else v)
                   for k, v in res.get("result", {}).items() if k != "epoch_s"}
        print(f"{name:22s} rc={res['rc']} {res['seconds']:7.1f}s {summary}", flush=True)
        with open(path, "w") as f:
            json.dump(results, f, indent=1)


def report(args):
    load = lambda impl: json.load(open(os.path.join(args.root, f"results-{impl}.json")))
    mx, ng = load("mxnet"), load("neogluon")
    print("| section | MXNet rc | neogluon rc | MXNet last epoch | neogluon last epoch |")
    print("|---|---|---|---|---|")
    fmt = lambda r: ", ".join(f"{k} {r[k]:.3f}" for k in KEYS if k in r) or "-"
    for name, _ in SECTIONS:
        a, b = mx.get(name, {}), ng.get(name, {})
        print(f"| {name} | {a.get('rc', '-')} | {b.get('rc', '-')} | "
              f"{fmt(a.get('result', {}))} | {fmt(b.get('result', {}))} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("extract")
    e.add_argument("--repo", required=True, help="git dir of a d2l-en clone or mirror")
    e.add_argument("--out", default="/tmp/d2l-run/scripts")
    e.add_argument("--epochs", type=int, default=2)
    e.add_argument("--resize", type=int, default=96)
    r = sub.add_parser("run")
    r.add_argument("--impl", choices=["mxnet", "neogluon"], required=True)
    r.add_argument("--python", required=True)
    r.add_argument("--root", default="/tmp/d2l-run")
    r.add_argument("--timeout", type=int, default=900)
    r.add_argument("--threads", type=int, default=1)
    r.add_argument("sections", nargs="*")
    p = sub.add_parser("report")
    p.add_argument("--root", default="/tmp/d2l-run")
    args = ap.parse_args()
    {"extract": extract, "run": run, "report": report}[args.cmd](args)


if __name__ == "__main__":
    main()
