"""Save a training run and resume it: ``save_parameters`` + ``Trainer.save_states``.

Parameters alone are not enough to resume: the optimizer's state (momentum, Adam's moments,
update counts that drive the lr schedule) lives in the Trainer. Saving both and loading both
into a freshly built model and Trainer continues the run exactly where it stopped. The script
proves it: 2 + 2 epochs with a restart in between end with the same weights as 4 epochs in one
go.

neogluon writes both files atomically (a temporary file, then a rename), so an interrupted save
never leaves a truncated checkpoint; the formats contain no pickle.

Run: ``python examples/save_and_resume.py [--dir ckpt_dir]``
"""
import argparse
import os
import tempfile

import numpy as np

import neogluon as mx
from neogluon import autograd, gluon


def data():
    rng = np.random.RandomState(3)
    x = rng.randn(200, 6).astype("float32")
    y = (x[:, 0] * x[:, 1] > 0).astype("float32")
    return x, y


def build():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(16, activation="relu"), gluon.nn.Dense(2))
    return net


def make_trainer(net):
    schedule = mx.lr_scheduler.FactorScheduler(step=5, factor=0.9, base_lr=0.01)
    return gluon.Trainer(net.collect_params(), "adam",
                         {"learning_rate": 0.01, "lr_scheduler": schedule})


def run_epochs(net, trainer, first, last):
    x, y = data()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for epoch in range(first, last):
        # A fixed order per epoch, so that a resumed run sees the same batches.
        order = np.random.RandomState(epoch).permutation(len(x))
        loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x[order], y[order]),
                                       batch_size=20)
        for xb, yb in loader:
            with autograd.record():
                loss = loss_fn(net(xb), yb)
            loss.backward()
            trainer.step(xb.shape[0])
        print(f"  epoch {epoch + 1}: last batch loss {float(loss.mean().asscalar()):.4f}, "
              f"lr {trainer.learning_rate:.5f}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", default=None, help="where to write the checkpoint (default: a "
                                               "temporary folder)")
    args = p.parse_args(argv)
    folder = args.dir or tempfile.mkdtemp(prefix="neogluon_resume_")
    os.makedirs(folder, exist_ok=True)
    params_file = os.path.join(folder, "model.params")
    states_file = os.path.join(folder, "trainer.states")

    print("uninterrupted: 4 epochs")
    mx.random.seed(0)
    ref = build()
    ref.initialize(mx.init.Xavier())
    run_epochs(ref, make_trainer(ref), 0, 4)

    print("interrupted: 2 epochs, save, rebuild, load, 2 more epochs")
    mx.random.seed(0)
    net = build()
    net.initialize(mx.init.Xavier())
    trainer = make_trainer(net)
    run_epochs(net, trainer, 0, 2)
    net.save_parameters(params_file)
    trainer.save_states(states_file)
    del net, trainer

    net = build()                       # a new process would do exactly this
    net.load_parameters(params_file)
    trainer = make_trainer(net)
    trainer.load_states(states_file)
    run_epochs(net, trainer, 2, 4)

    for (name, a), b in zip(ref.collect_params().items(), net.collect_params().values()):
        np.testing.assert_array_equal(a.data().asnumpy(), b.data().asnumpy(), err_msg=name)
    print(f"resumed run == uninterrupted run (checkpoint in {folder}). OK")


if __name__ == "__main__":
    main()
