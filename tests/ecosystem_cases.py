"""GluonCV/GluonNLP models on fixed inputs and parameters, run the same way on MXNet 1.9.1
(tools/gen_ecosystem_fixtures.py) and on neogluon through the mxnet alias
(tests/test_gluoncv_nlp.py runs this file with ``python -m neogluon.run``).

    python ecosystem_cases.py OUT.npz [case ...]

Every parameter gets values drawn from its position in ``collect_params()`` (both frameworks
build the same structure in the same order), so no parameter file is needed. Each case records
the outputs in inference mode, and after one recorded forward (training mode) and backward of
``sum(mean(output_i))``, the gradient of the first trainable parameter and the first output.
"""
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")


def _fill(mx, net):
    for i, (name, p) in enumerate(net.collect_params().items()):
        shape = p.shape
        rng = np.random.RandomState(1000 + i)
        if name.endswith(("running_var", "moving_var")):
            v = rng.uniform(0.5, 1.5, shape)
        elif name.endswith("gamma"):
            v = 1.0 + rng.uniform(-0.1, 0.1, shape)
        elif len(shape) <= 1:
            v = rng.uniform(-0.1, 0.1, shape)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
            v = rng.uniform(-1, 1, shape) * np.sqrt(3.0 / max(fan_in, 1))
        p.set_data(mx.nd.array(v.astype(p.dtype if p.dtype is not None else "float32")))


def _record(mx, net, inputs, res, prefix):
    autograd = mx.autograd
    outs = net(*inputs)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    for j, o in enumerate(outs):
        if isinstance(o, mx.nd.NDArray):
            res[f"{prefix}/infer{j}"] = o.asnumpy()
    with autograd.record():
        outs = net(*inputs)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        outs = [o for o in outs if isinstance(o, mx.nd.NDArray)]
        loss = outs[0].mean()
        for o in outs[1:]:
            loss = loss + o.mean()
    loss.backward()
    res[f"{prefix}/train0"] = outs[0].asnumpy()
    first = [p for p in net.collect_params().values() if p.grad_req != "null"][0]
    res[f"{prefix}/grad_first"] = first.grad().asnumpy()


def _vision(name, seed, shape, mx, res, prefix, **kwargs):
    """A GluonCV model on fixed weights, hybridized, recorded under ``prefix``."""
    from gluoncv import model_zoo
    net = model_zoo.get_model(name, pretrained=False, **kwargs)
    net.initialize()
    x = mx.nd.array(np.random.RandomState(seed).uniform(-1, 1, shape))
    net(x)
    _fill(mx, net)
    net.hybridize()
    _record(mx, net, [x], res, prefix)


# Input seeds. A gradient is discontinuous where a ReLU/clip input sits at its kink or a max
# pool's two largest values tie; through training-mode BatchNorm at batch 1-2 one such flip
# moves the whole first-layer gradient by percents. A value within float32 rounding of a kink
# flips or not with the CPU's summation order (MXNet's as much as neogluon's: on an AVX2 host
# MXNet's own resnet18_v1b gradient moved 0.6% from the one recorded on an AVX-512 host). So each
# model's input is a seed whose closest kink, found with the model in float64, is >= ~1e-5
# away: cifar_resnet20 seed 3 (ReLU 1.4e-5; seed 0 had 7.8e-7 and flipped), mobilenetv2 seed 0
# (clip 1.1e-5), resnet18_v1b seed 7 (ReLU 1.6e-5, pool 7.9e-5), simple_pose seed 3 (ReLU
# 9.3e-6, pool 2.9e-5).
def cifar_resnet20(mx, res):
    _vision("cifar_resnet20_v1", 3, (2, 3, 32, 32), mx, res, "cifar_resnet20")


def mobilenetv2(mx, res):
    _vision("mobilenetv2_0.25", 0, (2, 3, 64, 64), mx, res, "mobilenetv2")


def resnet18_v1b(mx, res):
    _vision("resnet18_v1b", 7, (1, 3, 64, 64), mx, res, "resnet18_v1b")


def simple_pose(mx, res):
    _vision("simple_pose_resnet18_v1b", 3, (1, 3, 64, 48), mx, res, "simple_pose",
            pretrained_base=False)


def bert_small(mx, res):
    import gluonnlp as nlp
    enc = nlp.model.BERTEncoder(num_layers=2, units=32, hidden_size=64, max_length=16,
                                num_heads=4, dropout=0.0)
    net = nlp.model.BERTModel(enc, vocab_size=30, token_type_vocab_size=2, units=32,
                              embed_size=32, word_embed=None, use_pooler=True,
                              use_decoder=True, use_classifier=True)
    net.initialize()
    rng = np.random.RandomState(4)
    tok = mx.nd.array(rng.randint(0, 30, (2, 7)))
    seg = mx.nd.array(rng.randint(0, 2, (2, 7)))
    vl = mx.nd.array([7, 4])
    pos = mx.nd.array([[1, 2], [0, 3]])
    net(tok, seg, vl, pos)
    _fill(mx, net)
    net.hybridize()
    _record(mx, net, [tok, seg, vl, pos], res, "bert_small")


def lstm_lm(mx, res):
    import gluonnlp as nlp
    net = nlp.model.StandardRNN("lstm", vocab_size=20, embed_size=16, hidden_size=24,
                                num_layers=2, dropout=0.0, tie_weights=False)
    net.initialize()
    x = mx.nd.array(np.random.RandomState(5).randint(0, 20, (6, 2)))
    h = net.begin_state(batch_size=2, func=mx.nd.zeros)
    net(x, h)
    _fill(mx, net)

    class Wrap(mx.gluon.Block):
        def __init__(self, inner, **kw):
            super().__init__(**kw)
            self.inner = inner

        def forward(self, x):
            out, _ = self.inner(x, self.inner.begin_state(batch_size=2, func=mx.nd.zeros))
            return out
    w = Wrap(net)
    _record(mx, w, [x], res, "lstm_lm")


def transformer(mx, res):
    import gluonnlp as nlp
    enc, dec, one_step = nlp.model.transformer.get_transformer_encoder_decoder(
        num_layers=2, units=16, hidden_size=32, num_heads=4, max_src_length=12,
        max_tgt_length=12, dropout=0.0)
    vocab = nlp.Vocab(nlp.data.count_tokens("a b c d e f".split()))
    net = nlp.model.translation.NMTModel(
        src_vocab=vocab, tgt_vocab=vocab, encoder=enc, decoder=dec,
        one_step_ahead_decoder=one_step, share_embed=True, embed_size=16, tie_weights=True,
        embed_initializer=None, prefix="transformer_")
    net.initialize()
    rng = np.random.RandomState(6)
    src = mx.nd.array(rng.randint(0, len(vocab), (2, 6)))
    tgt = mx.nd.array(rng.randint(0, len(vocab), (2, 5)))
    sl, tl = mx.nd.array([6, 4]), mx.nd.array([5, 3])
    net(src, tgt, sl, tl)
    _fill(mx, net)
    net.hybridize()

    class Wrap(mx.gluon.Block):
        def __init__(self, inner, **kw):
            super().__init__(**kw)
            self.inner = inner

        def forward(self, *a):
            return self.inner(*a)[0]
    _record(mx, Wrap(net), [src, tgt, sl, tl], res, "transformer")


def bilm(mx, res):
    """GluonNLP's ELMo BiLM encoder (LSTMPCellWithClip through contrib.foreach)."""
    import gluonnlp as nlp
    net = nlp.model.BiLMEncoder(mode="lstmpc", num_layers=2, input_size=8, hidden_size=12,
                                dropout=0.0, skip_connection=True, proj_size=8, cell_clip=3,
                                proj_clip=3)
    net.initialize()
    x = mx.nd.array(np.random.RandomState(8).uniform(-1, 1, (5, 2, 8)))
    net(x, net.begin_state(mx.nd.zeros, batch_size=2))
    _fill(mx, net)
    net.hybridize()

    class Wrap(mx.gluon.Block):
        def __init__(self, inner, **kw):
            super().__init__(**kw)
            self.inner = inner

        def forward(self, x):
            return self.inner(x, self.inner.begin_state(mx.nd.zeros, batch_size=2))[0]
    _record(mx, Wrap(net), [x], res, "bilm")


def beam_search(mx, res):
    """GluonNLP's BeamSearchSampler over a fixed scoring function."""
    import gluonnlp as nlp
    nd = mx.nd
    table = nd.array(np.random.RandomState(9).uniform(-2, 2, (7, 7)))

    def decoder(inputs, states):
        return nd.log_softmax(nd.take(table, inputs) + states.expand_dims(1)), states

    sampler = nlp.model.BeamSearchSampler(beam_size=3, decoder=decoder, eos_id=6,
                                          scorer=nlp.model.BeamSearchScorer(alpha=0.5),
                                          max_length=6)
    samples, scores, lens = sampler(nd.array([1, 2]), nd.zeros((2,)))
    res["beam_search/samples"] = samples.asnumpy()
    res["beam_search/scores"] = scores.asnumpy()
    res["beam_search/lens"] = lens.asnumpy()


CASES = {"cifar_resnet20": cifar_resnet20, "mobilenetv2": mobilenetv2,
         "resnet18_v1b": resnet18_v1b, "simple_pose": simple_pose, "bert_small": bert_small,
         "lstm_lm": lstm_lm, "transformer": transformer, "bilm": bilm,
         "beam_search": beam_search}


def main(argv):
    import mxnet as mx
    out, names = argv[0], argv[1:] or sorted(CASES)
    res = {}
    for name in names:
        mx.random.seed(0)
        np.random.seed(0)
        try:
            CASES[name](mx, res)
        except Exception as e:  # noqa: BLE001 - reported, the comparison then fails
            import traceback
            traceback.print_exc()
            res[f"{name}/error"] = np.array(f"{type(e).__name__}: {e}")
    np.savez_compressed(out, **res)



def learn(mx, res):
    """A few Trainer steps of CIFAR ResNet-20 and BERT-small on separable synthetic data: the
    losses (not compared with MXNet, checked to go down)."""
    from gluoncv import model_zoo
    rng = np.random.RandomState(7)
    y = rng.randint(0, 2, 16)
    x = rng.normal(0, 0.5, (16, 3, 32, 32)) + (y * 2.0 - 1.0)[:, None, None, None]
    X, Y = mx.nd.array(x), mx.nd.array(y)
    net = model_zoo.get_model("cifar_resnet20_v1", classes=2, pretrained=False)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.05, "momentum": 0.9})
    losses = []
    for _ in range(8):
        with mx.autograd.record():
            loss = loss_fn(net(X), Y)
        loss.backward()
        trainer.step(16)
        losses.append(float(loss.mean().asscalar()))
    res["learn/cifar_losses"] = np.array(losses)


CASES["learn"] = learn


if __name__ == "__main__":
    main(sys.argv[1:])
