"""LSTM pointwise fusion (neogluon/gluon/_fuse.py) A/B in one process, alternating:
A = fusion off, B = on (chosen when each graph is captured). Two cases:

  symbolic  lstm_bucketing.py's network (mx.rnn.LSTMCell x2, 200 hidden, 200 embed, batch
            32, one bucket of SEQ steps, vocabulary 1000) through mx.mod.Module:
            forward_backward + update per batch, random tokens.
      PYTHONPATH=. OMP_NUM_THREADS=1 .venv/bin/python bench/lstm_fuse_ab.py symbolic ROUNDS [SEQ]
  deepar    GluonTS 0.14 DeepAR training step (bench/deepar_step_ab.py's set-up):
      GTS_DATA=/tmp/gtsw/data.jsonl PYTHONPATH=. OMP_NUM_THREADS=1 /tmp/gtsng/bin/python \
          -m neogluon.run bench/lstm_fuse_ab.py deepar ROUNDS [prof]

Prints the median per-step time of each side, B/A, whether the two sides' numbers agree
bit for bit (the same initial parameters and data, and for DeepAR the random generator
seeded alike before each step, so the same zoneout masks), and with ``prof`` the
torch.profiler aten op count and cProfile's Python call count per step of each side.
"""
import sys, os, time, itertools, json, hashlib
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import alternate_ab, step_counts  # noqa: E402
import numpy as np

case = sys.argv[1] if len(sys.argv) > 1 else "symbolic"
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 6
if case == "symbolic":
    import neogluon as mx
else:
    import mxnet as mx
from neogluon.gluon import _fuse

nets = {}
if case == "symbolic":
    SEQ = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    V, B, NH = 1000, 32, 200

    def sym():
        stack = mx.rnn.SequentialRNNCell()
        for i in range(2):
            stack.add(mx.rnn.LSTMCell(num_hidden=NH, prefix="lstm_l%d_" % i))
        data = mx.sym.Variable("data")
        label = mx.sym.Variable("softmax_label")
        embed = mx.sym.Embedding(data=data, input_dim=V, output_dim=200, name="embed")
        outputs = stack.unroll(SEQ, inputs=embed, merge_outputs=True)[0]
        pred = mx.sym.Reshape(outputs, shape=(-1, NH))
        pred = mx.sym.FullyConnected(data=pred, num_hidden=V, name="pred")
        label = mx.sym.Reshape(label, shape=(-1,))
        return mx.sym.SoftmaxOutput(data=pred, label=label, name="softmax")

    rs = np.random.RandomState(0)
    batches = [mx.io.DataBatch([mx.nd.array(rs.randint(1, V, (B, SEQ)))],
                               [mx.nd.array(rs.randint(1, V, (B, SEQ)))]) for _ in range(5)]

    def make(fuse):
        _fuse.set_enabled(fuse)
        mod = mx.mod.Module(sym(), context=mx.cpu())
        mod.bind(data_shapes=[("data", (B, SEQ))], label_shapes=[("softmax_label", (B, SEQ))])
        mx.random.seed(1)
        mod.init_params(initializer=mx.init.Xavier(factor_type="in", magnitude=2.34))
        mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.05,
                                                              "momentum": 0.9, "wd": 1e-5})
        mod.forward_backward(batches[0])     # capture now, with this setting
        mod.update()
        _fuse.set_enabled(True)
        return mod

    nets = {"A": make(False), "B": make(True)}

    def step(k, b):
        mod = nets[k]
        t0 = time.perf_counter()
        mod.forward_backward(b)
        mod.update()
        out = mod.get_outputs()[0]
        mx.nd.waitall()
        return time.perf_counter() - t0, hashlib.sha1(out.asnumpy().tobytes()).hexdigest()
else:
    from neogluon import autograd
    import gluonts_models as gm
    from gluonts.dataset.common import ListDataset
    from gluonts.mx.trainer import Trainer
    rows = [json.loads(l) for l in open(os.environ.get("GTS_DATA", "/tmp/gtsw/data.jsonl"))]
    train = ListDataset([{"start": r["start"], "target": r["target"][:-24]} for r in rows],
                        freq="H")
    mx.random.seed(1); np.random.seed(1)
    est = gm.build("deepar", "H", Trainer(epochs=1, num_batches_per_epoch=10))
    tr = est.create_transformation()
    loader = est.create_training_data_loader(tr.apply(train))
    batches = list(itertools.islice(iter(loader), 5))

    def make(fuse):
        _fuse.set_enabled(fuse)
        mx.random.seed(1)
        net = est.create_training_network()
        net.initialize(ctx=mx.cpu(), init="xavier")
        net.hybridize(static_alloc=True, static_shape=True)
        t = mx.gluon.Trainer(net.collect_params(), mx.optimizer.Adam(learning_rate=1e-3),
                             kvstore="device")
        with autograd.record():
            net(*batches[0].values())
        _fuse.set_enabled(True)
        return net, t

    nets = {"A": make(False), "B": make(True)}

    count = {"A": 0, "B": 0}

    def step(k, b):
        net, trainer = nets[k]
        count[k] += 1
        mx.random.seed(count[k])     # the same zoneout masks for the n-th step of A and B
        t0 = time.perf_counter()
        with autograd.record():
            out = net(*b.values())
            loss = out[0] if isinstance(out, (list, tuple)) else out
        loss.backward()
        trainer.step(loss.shape[0])
        mx.nd.waitall()
        return time.perf_counter() - t0, hashlib.sha1(loss.asnumpy().tobytes()).hexdigest()

res, vals = alternate_ab(step, batches[:5], rounds)
print("outputs identical A vs B (every step, bit for bit):", vals["A"] == vals["B"])
if len(sys.argv) > 3 and sys.argv[-1] == "prof":
    for k in "AB":
        print(k, "per step: python calls %d, aten ops (incl. nested) %d, autograd nodes %d"
              % step_counts(step, k, batches[0], batches[1]))
