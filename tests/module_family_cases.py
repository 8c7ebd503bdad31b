"""BucketingModule / SequentialModule / PythonLossModule scenarios run unchanged by MXNet
1.9.1 (tools/gen_module_family_fixtures.py) and by neogluon (tests/test_module_family.py):
``mx`` is either library."""
from __future__ import annotations

import numpy as np

# --------------------------------------------------------------------------- bucketing LM
VOCAB, EMBED, HIDDEN, LAYERS, BATCH = 11, 4, 5, 2, 3
DEFAULT_KEY = 6
STEP_KEYS = (6, 4, 6)          # the buckets of the three training steps
EVAL_KEY = 4                   # an inference batch after training
LM_OPT = {"learning_rate": 0.5, "momentum": 0.9, "wd": 1e-3}


def lm_sym_gen(mx):
    """``sym_gen`` of a small LSTM language model (stacked legacy mx.rnn cells); the cells
    are made inside, so each call builds a whole graph (the automatic names repeat)."""
    def sym_gen(seq_len):
        data = mx.sym.Variable("data")
        label = mx.sym.Variable("softmax_label")
        embed = mx.sym.Embedding(data=data, input_dim=VOCAB, output_dim=EMBED, name="embed")
        stack = mx.rnn.SequentialRNNCell()
        for i in range(LAYERS):
            stack.add(mx.rnn.LSTMCell(num_hidden=HIDDEN, prefix="lstm_l%d_" % i))
        outputs, _ = stack.unroll(seq_len, inputs=embed, merge_outputs=True)
        pred = mx.sym.Reshape(outputs, shape=(-1, HIDDEN))
        pred = mx.sym.FullyConnected(data=pred, num_hidden=VOCAB, name="pred")
        label = mx.sym.Reshape(label, shape=(-1,))
        return (mx.sym.SoftmaxOutput(data=pred, label=label, name="softmax"), ("data",),
                ("softmax_label",))
    return sym_gen


def lm_batch(mx, key, seed):
    rng = np.random.RandomState(seed)
    data = rng.randint(0, VOCAB, (BATCH, key)).astype(np.float32)
    label = rng.randint(0, VOCAB, (BATCH, key)).astype(np.float32)
    return mx.io.DataBatch(
        data=[mx.nd.array(data)], label=[mx.nd.array(label)], bucket_key=key,
        provide_data=[mx.io.DataDesc("data", (BATCH, key))],
        provide_label=[mx.io.DataDesc("softmax_label", (BATCH, key))])


def lm_initial_params(mx, mod, seed=5):
    """Fixed values for every parameter of a bound module (sorted by name)."""
    rng = np.random.RandomState(seed)
    args, auxs = mod.get_params()
    return ({k: mx.nd.array(rng.uniform(-0.4, 0.4, args[k].shape).astype(np.float32))
             for k in sorted(args)}, {})


def lm_module(mx):
    mod = mx.mod.BucketingModule(lm_sym_gen(mx), default_bucket_key=DEFAULT_KEY,
                                 context=mx.cpu())
    mod.bind(data_shapes=[("data", (BATCH, DEFAULT_KEY))],
             label_shapes=[("softmax_label", (BATCH, DEFAULT_KEY))])
    mod.init_params(initializer=mx.init.Zero())
    args, auxs = lm_initial_params(mx, mod)
    mod.set_params(args, auxs)
    return mod


def lm_eval(mx, mod):
    """Inference outputs of the evaluation batch."""
    mod.forward(lm_batch(mx, EVAL_KEY, 99), is_train=False)
    return mod.get_outputs()[0].asnumpy()


def run_bucketing(mx, mod=None):
    """Three SGD steps over buckets 6, 4, 6; the training outputs of each step, the
    parameters after, and an inference pass on bucket 4."""
    mod = mod or lm_module(mx)
    mod.init_optimizer(optimizer="sgd", optimizer_params=LM_OPT)
    res = {}
    for step, key in enumerate(STEP_KEYS):
        mod.forward(lm_batch(mx, key, step), is_train=True)
        res[f"out{step}"] = mod.get_outputs()[0].asnumpy()
        mod.backward()
        mod.update()
    args, _ = mod.get_params()
    for k, v in args.items():
        res[f"arg:{k}"] = v.asnumpy()
    res["eval"] = lm_eval(mx, mod)
    res["buckets"] = np.array(sorted(mod._buckets), dtype=np.int32)
    return res


# --------------------------------------------------------------------------- sequential
SEQ_X = np.random.RandomState(21).uniform(-1, 1, (4, 6)).astype(np.float32)
SEQ_Y = np.array([0, 2, 1, 2], dtype=np.float32)
SEQ_OPT = {"learning_rate": 0.3, "momentum": 0.5}


def seq_params(mx):
    rng = np.random.RandomState(8)
    shapes = {"fc1_weight": (5, 6), "fc1_bias": (5,), "fc2_weight": (3, 5), "fc2_bias": (3,)}
    return {k: mx.nd.array(rng.uniform(-0.5, 0.5, s).astype(np.float32))
            for k, s in sorted(shapes.items())}


def seq_parts(mx, wired):
    """(first module's symbol, second module's symbol, second module's data name): tanh
    MLP layer, then a softmax classifier; with ``wired`` the second reads a variable named
    'hidden' (auto_wiring renames), else the first module's output name."""
    data = mx.sym.var("data")
    act = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=5, name="fc1"),
                            act_type="tanh", name="act1")
    hidden_name = "hidden" if wired else "act1_output"
    hidden = mx.sym.var(hidden_name)
    out = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(hidden, num_hidden=3, name="fc2"),
                               name="softmax")
    return act, out, hidden_name


def fused_symbol(mx):
    data = mx.sym.var("data")
    act = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=5, name="fc1"),
                            act_type="tanh", name="act1")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(act, num_hidden=3, name="fc2"),
                                name="softmax")


def _seq_batch(mx):
    return mx.io.DataBatch(data=[mx.nd.array(SEQ_X)], label=[mx.nd.array(SEQ_Y)])


def _train_two_steps(mx, mod, first):
    """Two SGD steps; outputs, input gradients (of ``first``) and parameters."""
    mod.bind(data_shapes=[("data", SEQ_X.shape)], label_shapes=[("softmax_label", (4,))],
             inputs_need_grad=True)
    mod.init_params(initializer=mx.init.Zero())
    mod.set_params(seq_params(mx), {})
    mod.init_optimizer(optimizer="sgd", optimizer_params=SEQ_OPT)
    res = {}
    for step in range(2):
        mod.forward(_seq_batch(mx), is_train=True)
        res[f"out{step}"] = mod.get_outputs()[0].asnumpy()
        mod.backward()
        res[f"dgrad{step}"] = first.get_input_grads()[0].asnumpy()
        mod.update()
    args, _ = mod.get_params()
    for k, v in args.items():
        res[f"arg:{k}"] = v.asnumpy()
    return res


def run_sequential(mx, wired):
    act, out, hidden_name = seq_parts(mx, wired)
    mod1 = mx.mod.Module(act, data_names=["data"], label_names=None)
    mod2 = mx.mod.Module(out, data_names=[hidden_name], label_names=["softmax_label"])
    seq = mx.mod.SequentialModule()
    seq.add(mod1)
    if wired:
        seq.add(mod2, take_labels=True, auto_wiring=True)
    else:
        seq.add(mod2, take_labels=True)
    # MXNet 1.9.1's SequentialModule.get_input_grads asserts (bind never records
    # inputs_need_grad), so the first module is asked directly
    return _train_two_steps(mx, seq, mod1)


def run_fused(mx):
    mod = mx.mod.Module(fused_symbol(mx))
    return _train_two_steps(mx, mod, mod)


# --------------------------------------------------------------------------- python loss
def softmax_ce_grad(mx):
    """The gradient of softmax cross-entropy with respect to the scores (numpy)."""
    def grad(scores, labels):
        s = scores.asnumpy()
        p = np.exp(s - s.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        p[np.arange(len(p)), labels.asnumpy().astype(int)] -= 1
        return p
    return grad


def run_python_loss(mx):
    """A FullyConnected Module followed by a PythonLossModule (softmax cross-entropy
    gradient): gradients of the weights and data, parameters after two SGD steps."""
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc2")
    mod1 = mx.mod.Module(fc, data_names=["data"], label_names=None)
    loss = mx.mod.PythonLossModule(grad_func=softmax_ce_grad(mx))
    seq = mx.mod.SequentialModule()
    seq.add(mod1).add(loss, take_labels=True, auto_wiring=True)
    x = SEQ_X[:, :5]
    seq.bind(data_shapes=[("data", x.shape)], label_shapes=[("softmax_label", (4,))],
             inputs_need_grad=True)
    seq.init_params(initializer=mx.init.Zero())
    params = seq_params(mx)
    seq.set_params({k: params[k] for k in ("fc2_weight", "fc2_bias")}, {})
    seq.init_optimizer(optimizer="sgd", optimizer_params=SEQ_OPT)
    batch = mx.io.DataBatch(data=[mx.nd.array(x)], label=[mx.nd.array(SEQ_Y)])
    res = {}
    for step in range(2):
        seq.forward(batch, is_train=True)
        res[f"out{step}"] = seq.get_outputs()[0].asnumpy()
        seq.backward()
        grads = mod1._exec_group.execs[0].grad_dict
        res[f"wgrad{step}"] = grads["fc2_weight"].asnumpy()
        res[f"dgrad{step}"] = mod1.get_input_grads()[0].asnumpy()
        seq.update()
    args, _ = seq.get_params()
    for k, v in args.items():
        res[f"arg:{k}"] = v.asnumpy()
    return res
