"""Sweep GluonCV's and GluonNLP's model zoos on neogluon (issue 20).

Two parts:

1. ``sweep``: under neogluon's ``mxnet`` alias, every name in
   ``gluoncv.model_zoo.get_model_list()`` (and GluonNLP's BERT / Transformer / language-model
   names) is built with ``pretrained=False`` (``pretrained_base=False``), initialised, run
   forward and backward on a small input suited to its family, and given one ``Trainer`` step.
   Each stage's outcome (ok, or the exception type and the first line of its message) and the
   time are recorded. Models run in worker subprocesses; a model that runs past ``--timeout``
   seconds is killed and the sweep goes on with the next one in a fresh worker.

2. ``params``: for a sample of models, real MXNet 1.9.1 (``--mxref``, with GluonCV/GluonNLP
   installed there with ``--no-deps``) builds the model, initialises it with a fixed seed, runs a
   fixed input in inference mode, writes ``save_parameters`` to a temporary ``.params`` file and
   its outputs to a ``.npz``; neogluon then builds the same model, ``load_parameters`` that
   MXNet-written file and compares its outputs (rtol 1e-4).

    python tools/gluoncv_zoo_sweep.py sweep --jobs 2 --timeout 300 --out sweep.json
    python tools/gluoncv_zoo_sweep.py params --out params.json [names ...]
    python tools/gluoncv_zoo_sweep.py table sweep.json [rerun.json] --params params.json

Run it with neogluon's venv python; it starts the workers itself (``python -m neogluon.run``
for neogluon, ``/tmp/mxref/bin/python`` for MXNet).
"""
import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

NLP_MODELS = [
    "standard_lstm_lm_200", "standard_lstm_lm_650", "standard_lstm_lm_1500",
    "awd_lstm_lm_600", "awd_lstm_lm_1150", "big_rnn_lm_2048_512",
    "transformer_en_de_512",
    "bert_12_768_12", "bert_24_1024_16", "roberta_12_768_12", "roberta_24_1024_16",
    "ernie_12_768_12",
]

PARAMS_SAMPLE = [
    "cifar_resnet20_v1", "cifar_wideresnet16_10", "resnet18_v1", "resnet50_v1b",
    "mobilenetv2_0.25", "mobilenet1.0", "squeezenet1.0", "densenet121", "vgg11_bn",
    "ssd_300_vgg16_atrous_voc", "ssd_512_mobilenet1.0_voc",
    "yolo3_mobilenet1.0_voc", "yolo3_darknet53_voc",
    "faster_rcnn_resnet50_v1b_voc",
    "center_net_resnet18_v1b_voc",
    "fcn_resnet50_voc", "psp_resnet50_ade", "deeplab_resnet50_ade",
    "simple_pose_resnet18_v1b",
    "nlp:bert_12_768_12", "nlp:standard_lstm_lm_200", "nlp:transformer_en_de_512",
]

# ---------------------------------------------------------------------------------------------
# Model families: how to build, what input, how to run a training forward.


def family(name):
    n = name.split(":", 1)[-1]
    if name.startswith("nlp:"):
        if "bert" in n or "roberta" in n or "ernie" in n:
            return "bert"
        if n.startswith("transformer"):
            return "transformer"
        return "lm"
    if n.startswith("cifar"):
        return "cifar"
    if n.startswith("ssd"):
        return "ssd"
    if n.startswith("yolo3"):
        return "yolo3"
    if n.startswith(("faster_rcnn", "mask_rcnn", "cascade", "custom_faster", "custom_mask",
                     "doublehead_rcnn")):
        return "rcnn"
    if n.startswith("center_net"):
        return "centernet"
    if n.startswith(("fcn", "psp", "deeplab", "danet", "icnet", "fastscnn", "atten",
                     "deeplabv3b", "monodepth")):
        return "seg"
    if n.startswith(("simple_pose", "alpha_pose", "mobile_pose")):
        return "pose"
    if any(k in n for k in ("kinetics", "ucf101", "hmdb51", "sthsthv2", "slowfast", "i3d",
                            "c3d", "p3d", "r2plus1d", "tsn")):
        return "video"
    if n.startswith(("inceptionv3", "inception")):
        return "imagenet299"
    return "imagenet"


def _np_compat():
    import numpy as np
    # GluonCV 0.10.5 uses np.float / np.int (removed in numpy 1.24) in Faster R-CNN & co.
    for alias, typ in (("float", float), ("int", int), ("bool", bool)):
        if alias not in np.__dict__:
            setattr(np, alias, typ)


def _nlp_vocab():
    import gluonnlp as nlp
    words = ["w%d" % i for i in range(60)]
    return nlp.Vocab(nlp.data.count_tokens(words))


def build(name):
    """The model, built with pretrained=False; returns (net, family)."""
    fam = family(name)
    n = name.split(":", 1)[-1]
    if name.startswith("nlp:"):
        import gluonnlp as nlp
        vocab = _nlp_vocab()
        if fam == "bert":
            kw = dict(dataset_name=None, vocab=vocab, pretrained=False, use_pooler=True,
                      use_decoder=True, use_classifier=True)
            if "roberta" in n:
                kw.pop("use_classifier")
                kw.pop("use_pooler")
            net, _ = nlp.model.get_model(n, **kw)
        elif fam == "transformer":
            # transformer_en_de_512 only takes a vocab through a dataset name (which it would
            # download); the harness hands it the local one instead.
            from gluonnlp.model import transformer as _tr
            _tr._load_vocab = lambda dataset_name, vocab, root, cls=None: vocab
            net, _, _ = nlp.model.get_model(n, src_vocab=vocab, tgt_vocab=vocab,
                                            dataset_name="local", pretrained=False)
        else:
            net, _ = nlp.model.get_model(n, vocab=vocab, dataset_name=None, pretrained=False)
        return net, fam
    from gluoncv import model_zoo
    if n.endswith("_int8"):
        return int8_model(n), fam
    kw = dict(pretrained=False)
    tries = [dict(kw, pretrained_base=False)]
    if fam == "seg":
        tries.insert(0, dict(kw, pretrained_base=False, crop_size=128, base_size=160))
    tries.append(kw)
    if "custom" in n:   # the *_custom / custom_* models take the classes to detect
        tries = [dict(k, classes=["a", "b"]) for k in tries]
    err = None
    for k in tries:
        try:
            return model_zoo.get_model(n, **k), fam
        except Exception as e:  # noqa: BLE001  (a keyword this model does not take: next try)
            # (MXNet 1.9.1 refuses pretrained_base for darknet53 with the same Warning)
            err = e
    raise err


def int8_model(name):
    """GluonCV's quantized ``*_int8`` model, built with ``pretrained=False``. It builds the
    float model of the same name only to read its class names; that one gets
    ``pretrained_base=False`` where it takes it (else its pretrained base would be
    downloaded, in MXNet 1.9.1 as here)."""
    from gluoncv.model_zoo import model_zoo as mz
    orig = mz.get_model

    def inner(n, **kw):
        if not n.endswith("_int8"):
            try:
                return orig(n, pretrained_base=False, **kw)
            except TypeError:
                pass
        return orig(n, **kw)
    mz.get_model = inner
    try:
        return orig(name, pretrained=False)
    finally:
        mz.get_model = orig


def inputs_for(name, fam, net):
    """Candidate input shapes, smallest first."""
    n = name.split(":", 1)[-1]
    if fam == "cifar":
        return [(1, 3, 32, 32)]
    if fam == "imagenet299":
        return [(1, 3, 299, 299)]
    if fam == "imagenet":
        return [(1, 3, 224, 224)]
    if fam == "ssd":
        s = 512 if "_512_" in n else 300
        return [(1, 3, s, s)]
    if fam == "yolo3":
        return [(1, 3, 320, 320)]
    if fam == "rcnn":
        return [(1, 3, 256, 256)]
    if fam == "centernet":
        return [(1, 3, 256, 256)]
    if fam == "seg":
        return [(1, 3, 128, 128), (1, 3, 480, 480)]
    if fam == "pose":
        return [(1, 3, 128, 96), (1, 3, 256, 192)]
    if fam == "video" and n.endswith("_int8"):
        # the int8 graphs fold their segments back with a fixed Reshape(-1, segments, C)
        seg = 7 if n.startswith("resnet") and "kinetics400" in n else 3
        size = 299 if n.startswith("inceptionv3") else 224
        return [(seg, 3, size, size)]
    if fam == "video":
        return [(1, 3, 224, 224), (1, 3, 8, 112, 112), (1, 3, 16, 112, 112),
                (1, 3, 32, 224, 224), (8, 3, 224, 224)]
    if fam in ("bert", "transformer", "lm"):
        return [(2, 8)]
    return [(1, 3, 224, 224)]


def _flat(out):
    if isinstance(out, (list, tuple)):
        res = []
        for o in out:
            res.extend(_flat(o))
        return res
    return [out]


def forward_infer(net, name, fam, x):
    """Inference-mode forward on x (NDArray); returns a flat list of NDArray outputs."""
    import mxnet as mx
    nd = mx.nd
    if fam == "bert":
        tok = x
        types = nd.zeros_like(tok)
        valid = nd.array([tok.shape[1]] * tok.shape[0])
        n = name.split(":", 1)[-1]
        masked = nd.array([[0, 1]] * tok.shape[0])
        if "roberta" in n:
            return _flat(net(tok, valid, masked))
        return _flat(net(tok, types, valid, masked))
    if fam == "transformer":
        valid = nd.array([x.shape[1]] * x.shape[0])
        return _flat(net(x, x, valid, valid))
    if fam == "lm":
        batch = x.shape[0]
        hidden = net.begin_state(batch_size=batch, func=nd.zeros)
        return _flat(net(x.T, hidden))
    return _flat(net(x))


def forward_train(net, name, fam, x):
    """Training-mode forward inside autograd.record(); returns the outputs to backward."""
    import mxnet as mx
    nd, autograd = mx.nd, mx.autograd
    if fam == "yolo3":
        with autograd.train_mode():
            raw = net(x)
        objness, centers, scales, cls = raw[6], raw[4], raw[5], raw[7]
        gt = nd.array([[[10, 10, 100, 100]]])
        targets = [gt, nd.zeros_like(objness), nd.zeros_like(centers), nd.zeros_like(scales),
                   nd.zeros_like(centers), nd.zeros_like(cls) - 1]
        with autograd.record():
            return _flat(net(x, *targets))
    if fam == "rcnn":
        gt = nd.array([[[10, 10, 100, 100]]])
        lab = nd.array([[[1]]])
        with autograd.record():
            return _flat(net(x, gt, lab))
    with autograd.record():
        return forward_infer(net, name, fam, x)


def _fallback_init(net):
    """Where Xavier alone refuses 1-D parameters that carry no init of their own (GluonCV's
    symbol-built FPN/SSD layers): ones/zeros for those by name, Xavier for the rest."""
    import re
    import mxnet as mx
    for name, p in net.collect_params().items():
        if re.search("(gamma|running_var|moving_var)$", name):
            p.init = mx.init.One()
        elif re.search("(beta|bias|running_mean|moving_mean)$", name):
            p.init = mx.init.Zero()
    net.initialize(mx.init.Xavier(magnitude=2), force_reinit=True)


def _make_x(shape, fam, seed=0):
    import numpy as np
    import mxnet as mx
    rs = np.random.RandomState(seed)
    if fam in ("bert", "transformer", "lm"):
        return mx.nd.array(rs.randint(4, 60, size=shape).astype("float32"))
    return mx.nd.array(rs.uniform(-1, 1, size=shape).astype("float32"))


def _err(e):
    msg = str(e).strip().splitlines()
    if msg and msg[0].startswith("Traceback"):   # MXNet's C++ errors: the message is last
        msg = [ln for ln in msg if "Error" in ln][-1:] or msg
    return "%s: %s" % (type(e).__name__, (msg[0] if msg else "")[:200])


def run_one(name):
    """Build / forward / backward / Trainer step for one model; returns a result dict."""
    import mxnet as mx
    import numpy as np
    res = {"model": name, "build": None, "forward": None, "backward": None, "step": None}
    t0 = time.time()
    stage = "build"
    try:
        net, fam = build(name)
        res["family"] = fam
        net.initialize(mx.init.Xavier(), force_reinit=True)
        res["build"] = "ok"
        stage = "forward"
        errs = []
        x = None
        for shape in inputs_for(name, fam, net):
            xi = _make_x(shape, fam)
            try:
                try:
                    forward_infer(net, name, fam, xi)
                except ValueError as e:
                    # Xavier refuses 1-D parameters whose names it cannot place (the FPN
                    # layers GluonCV builds from symbols: MXNet 1.9.1 raises the same)
                    if "cannot be applied to vector" not in str(e):
                        raise
                    _fallback_init(net)
                    res["init"] = "Mixed"
                    forward_infer(net, name, fam, xi)
                x = xi
                res["input"] = list(shape)
                break
            except Exception as e:  # try the next candidate input
                errs.append(_err(e))
        if x is None:
            raise RuntimeError(errs[0] if len(errs) == 1 else " | ".join(errs))
        outs = forward_train(net, name, fam, x)
        res["forward"] = "ok"
        stage = "backward"
        heads = [o for o in outs if hasattr(o, "dtype") and np.issubdtype(np.dtype(o.dtype),
                                                                          np.floating)]
        # backward from the sum of every floating output recorded in forward_train
        # (outputs outside the graph, such as SSD's anchors, are skipped, as MXNet refuses them)
        used = 0
        for h in heads:
            try:
                mx.autograd.backward(h, retain_graph=True)
                used += 1
            except mx.base.MXNetError as e:
                if "computational graph" not in str(e):
                    raise
        if not used:
            raise RuntimeError("no output is in the autograd graph")
        res["heads"] = "%d/%d" % (used, len(heads))
        params = [p for p in net.collect_params().values() if p.grad_req != "null"]
        with_grad = sum(1 for p in params
                        if float(np.abs(p.grad().asnumpy()).sum()) > 0)
        res["grads_nonzero"] = "%d/%d" % (with_grad, len(params))
        res["backward"] = "ok"
        stage = "step"
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
        trainer.step(x.shape[0], ignore_stale_grad=True)
        res["step"] = "ok"
    except Exception as e:
        res[stage] = _err(e)
        res["where"] = traceback.format_exc().strip().splitlines()[-3][:200]
        if os.environ.get("ZOO_TRACEBACK"):
            traceback.print_exc()
    res["seconds"] = round(time.time() - t0, 1)
    return res


def worker(names):
    _np_compat()
    import mxnet  # noqa: F401  (the alias under neogluon.run)
    import gluoncv  # noqa: F401
    import gluonnlp  # noqa: F401
    for name in names:
        print("@@START " + name, flush=True)
        try:
            r = run_one(name)
        except BaseException as e:  # noqa: BLE001  (record, go on)
            r = {"model": name, "build": _err(e)}
        print("@@RESULT " + json.dumps(r), flush=True)


def list_models():
    _np_compat()
    import mxnet  # noqa: F401
    from gluoncv import model_zoo
    print(json.dumps(sorted(model_zoo.get_model_list()) + ["nlp:" + n for n in NLP_MODELS]))


def _ng_cmd(*args):
    return [sys.executable, "-m", "neogluon.run", os.path.abspath(__file__)] + list(args)


def _env(threads):
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    env["OMP_NUM_THREADS"] = str(threads)
    env["MKL_NUM_THREADS"] = str(threads)
    env.pop("NEOGLUON_SHADOW_MXNET", None)
    return env


def _run_chunk(names, timeout, threads, results, log, mxref=None):
    """Run names through workers, restarting after a timeout or a crash. With ``mxref``
    (MXNet 1.9.1's python) every model gets a worker process of its own: MXNet reports some
    failures asynchronously, at a later read, which would land on the next model."""
    pending = list(names)
    while pending:
        launched = pending[0]
        if mxref:
            cmd = [mxref, os.path.abspath(__file__), "_worker", launched]
            env = _env(threads)
            env["PYTHONPATH"] = ""
        else:
            cmd, env = _ng_cmd("_worker", *pending), _env(threads)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, cwd=REPO, env=env)
        q = queue.Queue()

        def reader():
            for line in proc.stdout:
                q.put(line)
            q.put(None)
        threading.Thread(target=reader, daemon=True).start()
        current, started, tail = None, time.time(), []
        while True:
            try:
                line = q.get(timeout=5)
            except queue.Empty:
                line = ""
            if line is None:
                proc.wait()
                if current is not None:   # died mid-model
                    results[current] = {"model": current, "build": "worker died (rc %s): %s"
                                        % (proc.returncode, " ".join(tail[-2:])[:200])}
                    pending.remove(current)
                    log(results[current])
                break
            if line.startswith("@@START "):
                current, started, tail = line.split(" ", 1)[1].strip(), time.time(), []
            elif line.startswith("@@RESULT "):
                r = json.loads(line.split(" ", 1)[1])
                results[r["model"]] = r
                if r["model"] in pending:
                    pending.remove(r["model"])
                log(r)
                current = None
            elif line:
                tail.append(line.strip())
            if current is not None and time.time() - started > timeout:
                proc.kill()
                proc.wait()
                results[current] = {"model": current, "family": family(current),
                                    "build": "timeout after %ds" % timeout,
                                    "seconds": round(time.time() - started, 1)}
                log(results[current])
                pending.remove(current)
                break
            if line == "" and proc.poll() is not None and q.empty():
                break
        if mxref and launched in pending:   # exited before reporting
            pending.remove(launched)
            results[launched] = {"model": launched, "build": "worker exited (rc %s): %s"
                                 % (proc.poll(), " ".join(tail[-2:])[:200])}
            log(results[launched])
        if not pending:
            break


def sweep(args):
    if args.names:
        names = args.names
    else:
        out = subprocess.run(_ng_cmd("_list"), capture_output=True, text=True, cwd=REPO,
                             env=_env(1))
        names = json.loads(out.stdout.strip().splitlines()[-1])
    results = {}
    if args.out and os.path.exists(args.out) and args.resume:
        with open(args.out) as f:
            results = {r["model"]: r for r in json.load(f)}
        names = [n for n in names if n not in results]
    lock = threading.Lock()

    def log(r):
        with lock:
            stages = [r.get(k) or "-" for k in ("build", "forward", "backward", "step")]
            ok = all(s == "ok" for s in stages)
            print("%-40s %s %ss %s" % (r["model"], "OK  " if ok else "FAIL",
                                       r.get("seconds", "?"),
                                       "" if ok else next(s for s in stages if s != "ok")),
                  flush=True)
            if args.out:
                tmp = args.out + ".tmp"
                with open(tmp, "w") as f:
                    json.dump(sorted(results.values(), key=lambda d: d["model"]), f, indent=1)
                os.replace(tmp, args.out)
    chunks = [names[i::args.jobs] for i in range(args.jobs)]
    threads = [threading.Thread(target=_run_chunk, args=(c, args.timeout, args.threads,
                                                         results, log, args.mxref))
               for c in chunks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


# ---------------------------------------------------------------------------------------------
# MXNet-written .params files


def mx_ref(name, outdir):
    """Under MXNet 1.9.1: build, seed, initialise, fixed-input inference, save .params/.npz."""
    import numpy as np
    _np_compat()
    import mxnet as mx
    mx.random.seed(42)
    np.random.seed(42)
    net, fam = build(name)
    net.initialize(mx.init.Xavier(magnitude=2.0))
    x = _make_x(inputs_for(name, fam, net)[0], fam, seed=7)
    try:
        outs = forward_infer(net, name, fam, x)
    except ValueError as e:   # Xavier refuses 1-D parameters it cannot place (see run_one)
        if "cannot be applied to vector" not in str(e):
            raise
        _fallback_init(net)
        outs = forward_infer(net, name, fam, x)
    base = os.path.join(outdir, name.replace(":", "_"))
    net.save_parameters(base + ".params")
    np.savez(base + ".npz", *[o.asnumpy() for o in outs])
    print("@@DONE", flush=True)


def ng_check(name, outdir):
    """Under neogluon: build, load MXNet's .params, compare outputs with MXNet's."""
    import numpy as np
    _np_compat()
    net, fam = build(name)
    base = os.path.join(outdir, name.replace(":", "_"))
    net.load_parameters(base + ".params")
    x = _make_x(inputs_for(name, fam, net)[0], fam, seed=7)
    outs = [o.asnumpy() for o in forward_infer(net, name, fam, x)]
    ref = np.load(base + ".npz")
    refs = [ref["arr_%d" % i] for i in range(len(ref.files))]
    if len(refs) != len(outs):
        print("@@CMP " + json.dumps({"match": False, "why": "%d outputs vs MXNet's %d"
                                     % (len(outs), len(refs))}))
        return
    worst, ok, per = 0.0, True, []
    for a, b in zip(outs, refs):
        if a.shape != b.shape:
            print("@@CMP " + json.dumps({"match": False, "why": "shape %s vs MXNet's %s"
                                         % (a.shape, b.shape)}))
            return
        a64, b64 = a.astype("float64"), b.astype("float64")
        scale = max(1.0, float(np.abs(b64).max())) if b64.size else 1.0
        ok &= bool(np.allclose(a64, b64, rtol=1e-4, atol=1e-5 * scale))
        if b64.size:
            rel = float((np.abs(a64 - b64) / (np.abs(b64) + 1e-5 * scale)).max())
            per.append("%s %.1e" % ("x".join(map(str, b.shape)), rel))
            worst = max(worst, rel)
    print("@@CMP " + json.dumps({"match": ok, "max_rel": worst, "outputs": len(outs),
                                 "per_output": per}))


def params(args):
    names = args.names or PARAMS_SAMPLE
    results = []
    tmpdir = tempfile.mkdtemp(prefix="zoo_params_")
    for name in names:
        t0 = time.time()
        r = {"model": name}
        env = _env(args.threads)
        env["PYTHONPATH"] = ""
        try:
            p = subprocess.run([args.mxref, os.path.abspath(__file__), "_mxref", name, tmpdir],
                               capture_output=True, text=True, timeout=args.timeout, env=env,
                               cwd=tmpdir)
            if "@@DONE" not in p.stdout:
                r["match"] = None
                r["why"] = "MXNet: " + (p.stderr.strip().splitlines() or ["?"])[-1][:200]
            else:
                q = subprocess.run(_ng_cmd("_ngcheck", name, tmpdir), capture_output=True,
                                   text=True, timeout=args.timeout, env=_env(args.threads),
                                   cwd=REPO)
                line = [ln for ln in q.stdout.splitlines() if ln.startswith("@@CMP ")]
                if line:
                    r.update(json.loads(line[-1][6:]))
                else:
                    r["match"] = False
                    r["why"] = "neogluon: " + (q.stderr.strip().splitlines() or ["?"])[-1][:200]
        except subprocess.TimeoutExpired:
            r["match"] = None
            r["why"] = "timeout after %ds" % args.timeout
        for ext in (".params", ".npz"):
            f = os.path.join(tmpdir, name.replace(":", "_") + ext)
            if os.path.exists(f):
                os.remove(f)
        r["seconds"] = round(time.time() - t0, 1)
        results.append(r)
        print(json.dumps(r), flush=True)
        if args.out:
            with open(args.out + ".tmp", "w") as f:
                json.dump(results, f, indent=1)
            os.replace(args.out + ".tmp", args.out)


def _cell(v):
    if v == "ok":
        return "ok"
    return "-" if v is None else "`%s`" % v.replace("|", "/").replace("`", "'")[:110]


def table(args):
    """Markdown: a per-family summary, every model that did not pass every stage, the models
    that did (by family), and the MXNet .params comparisons."""
    res = {}
    for path in args.sweep:   # later files (reruns) win
        with open(path) as f:
            res.update({r["model"]: r for r in json.load(f)})
    stages = ("build", "forward", "backward", "step")
    fams = {}
    for name, r in res.items():
        fams.setdefault(r.get("family") or family(name), []).append(name)
    print("| family | models | all four stages ok |")
    print("| --- | --- | --- |")
    for fam in sorted(fams):
        ok = sum(all(res[n].get(k) == "ok" for k in stages) for n in fams[fam])
        print("| %s | %d | %d |" % (fam, len(fams[fam]), ok))
    total_ok = sum(all(r.get(k) == "ok" for k in stages) for r in res.values())
    print("| **all** | %d | %d |" % (len(res), total_ok))
    print()
    print("Models that did not pass every stage:")
    print()
    print("| model | build | forward | backward | step |")
    print("| --- | --- | --- | --- | --- |")
    for name in sorted(res):
        r = res[name]
        if not all(r.get(k) == "ok" for k in stages):
            print("| `%s` | %s |" % (name, " | ".join(_cell(r.get(k)) for k in stages)))
    print()
    print("Models that built, ran forward and backward and took a Trainer step, by family:")
    print()
    for fam in sorted(fams):
        oks = sorted(n for n in fams[fam] if all(res[n].get(k) == "ok" for k in stages))
        if oks:
            print("- **%s** (%d): %s" % (fam, len(oks), ", ".join("`%s`" % n for n in oks)))
    if args.params and os.path.exists(args.params):
        with open(args.params) as f:
            par = json.load(f)
        print()
        print("| model | MXNet-written .params loaded, outputs (rtol 1e-4) | per output: shape, "
              "max relative difference |")
        print("| --- | --- | --- |")
        for p in par:
            if p.get("match"):
                verdict = "match"
            elif p.get("why"):
                verdict = "`%s`" % p["why"].replace("|", "/")[:110]
            else:
                verdict = "differs"
            print("| `%s` | %s | %s |" % (p["model"], verdict, "; ".join(p.get("per_output", []))))


def main(argv):
    if argv and argv[0] == "_worker":
        return worker(argv[1:])
    if argv and argv[0] == "_list":
        return list_models()
    if argv and argv[0] == "_mxref":
        return mx_ref(argv[1], argv[2])
    if argv and argv[0] == "_ngcheck":
        return ng_check(argv[1], argv[2])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sweep")
    s.add_argument("names", nargs="*")
    s.add_argument("--jobs", type=int, default=1)
    s.add_argument("--threads", type=int, default=1)
    s.add_argument("--timeout", type=int, default=300)
    s.add_argument("--out")
    s.add_argument("--resume", action="store_true")
    s.add_argument("--mxref", help="run the models under this MXNet 1.9.1 python instead "
                   "(one process per model), e.g. /tmp/mxref/bin/python")
    p = sub.add_parser("params")
    p.add_argument("names", nargs="*")
    p.add_argument("--mxref", default="/tmp/mxref/bin/python")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--timeout", type=int, default=600)
    p.add_argument("--out")
    t = sub.add_parser("table")
    t.add_argument("sweep", nargs="+", help="sweep results; later files (reruns) win")
    t.add_argument("--params", help="results of the params command")
    a = ap.parse_args(argv)
    {"sweep": sweep, "params": params, "table": table}[a.cmd](a)


if __name__ == "__main__":
    main(sys.argv[1:])
