"""MXNet 1.x training programs run unmodified through `python -m neogluon.run`.

Each test writes a small script in the shape of MXNet's own Gluon programs (the
example/gluon/image_classification.py training loop and its data helpers, the
tests/python/train Gluon tests): `from mxnet import profiler`, an `mx.io.DataIter` subclass,
`mx.test_utils.get_mnist_iterator` over local idx files, `mx.io.MNISTIter` feeding a Gluon net
and Trainer, `mx.io.ImageRecordIter` over a `.rec` file with split_and_load, metrics and
save_parameters. The data are small, learnable fakes written in MXNet's file formats (nothing is
downloaded)."""
import os
import struct
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run_script(tmp_path, source, *args):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(source))
    env = dict(os.environ, PYTHONPATH=REPO, OMP_NUM_THREADS="1")
    env.pop("NEOGLUON_SHADOW_MXNET", None)
    out = subprocess.run([sys.executable, "-m", "neogluon.run", str(script)] + list(args),
                         cwd=str(tmp_path), capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout


def _fake_digits(n, seed):
    """Images of 28x28 where the class is a bright bar whose place depends on the label."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, n).astype(np.uint8)
    images = rng.randint(0, 50, (n, 28, 28)).astype(np.uint8)
    for img, k in zip(images, labels):
        top, left = 3 + (k // 5) * 12, 2 + (k % 5) * 5
        img[top:top + 9, left:left + 4] = 250
    return images, labels


def _write_mnist(folder, n_train=600, n_test=200):
    folder.mkdir(parents=True, exist_ok=True)
    for prefix, n, seed in (("train", n_train, 1), ("t10k", n_test, 2)):
        images, labels = _fake_digits(n, seed)
        with open(folder / f"{prefix}-images-idx3-ubyte", "wb") as f:
            f.write(struct.pack(">IIII", 0x803, n, 28, 28) + images.tobytes())
        with open(folder / f"{prefix}-labels-idx1-ubyte", "wb") as f:
            f.write(struct.pack(">II", 0x801, n) + labels.tobytes())


@pytest.mark.timeout(60)
def test_profiler_and_dataiter_subclass(tmp_path):
    """A DataIter subclass (as example/gluon/data.py's DummyIter) trains a hybridized net while
    the built-in profiler runs; dumps() gives the aggregate table."""
    out = _run_script(tmp_path, """
        import mxnet as mx
        from mxnet import gluon, autograd, profiler
        from mxnet.gluon import nn

        class ConstantBatches(mx.io.DataIter):
            def __init__(self, batch_size, shape, count=3):
                super(ConstantBatches, self).__init__(batch_size)
                self.provide_data = [('data', (batch_size,) + shape)]
                self.provide_label = [('softmax_label', (batch_size,))]
                self.batch = mx.io.DataBatch(data=[mx.nd.ones((batch_size,) + shape)],
                                             label=[mx.nd.zeros((batch_size,))])
                self.count, self.seen = count, 0
            def next(self):
                if self.seen == self.count:
                    self.seen = 0
                    raise StopIteration
                self.seen += 1
                return self.batch

        it = ConstantBatches(4, (3, 8, 8))
        assert it.batch_size == 4 and it.provide_data[0][1] == (4, 3, 8, 8)
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Conv2D(4, 3), nn.Flatten(), nn.Dense(10))
        net.initialize(mx.init.Xavier(magnitude=2))
        net.hybridize()
        trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        profiler.set_config(profile_all=True, aggregate_stats=True)
        profiler.set_state('run')
        for epoch in range(2):
            it.reset()
            n = 0
            for batch in it:
                with autograd.record():
                    L = loss_fn(net(batch.data[0]), batch.label[0])
                L.backward()
                trainer.step(batch.data[0].shape[0])
                n += 1
            assert n == 3, n
        profiler.set_state('stop')
        table = profiler.dumps()
        assert isinstance(table, str) and table.strip()
        print('OK', len(table))
        """)
    assert "OK" in out


@pytest.mark.timeout(60)
def test_get_mnist_iterator_on_local_files(tmp_path):
    """get_mnist_iterator (image_classification.py --dataset mnist) on local data/ files, with
    num_parts/part_index as the script passes kv.num_workers/kv.rank."""
    _write_mnist(tmp_path / "data", n_train=400, n_test=100)
    out = _run_script(tmp_path, """
        import mxnet as mx
        from mxnet.test_utils import get_mnist_iterator, get_mnist_ubyte

        get_mnist_ubyte()          # files present: nothing is downloaded
        kv = mx.kv.create('device')
        train, val = get_mnist_iterator(50, (1, 28, 28), num_parts=kv.num_workers,
                                        part_index=kv.rank)
        assert train.provide_data[0][1] == (50, 1, 28, 28), train.provide_data
        assert sum(1 for _ in train) == 8
        train.reset()
        batch = next(iter(train))
        x = batch.data[0].asnumpy()
        assert x.shape == (50, 1, 28, 28) and 0 <= x.min() and x.max() < 1
        assert sum(1 for _ in val) == 2
        half, other = get_mnist_iterator(50, (1, 28, 28), num_parts=2, part_index=1)
        assert sum(1 for _ in half) == 4
        flat, _ = get_mnist_iterator(10, (784,))
        assert flat.provide_data[0][1] == (10, 784)
        print('OK')
        """)
    assert "OK" in out


@pytest.mark.timeout(90)
def test_mnistiter_gluon_trainer_two_contexts(tmp_path):
    """tests/python/train/test_autograd.py's shape: MNISTIter (with the data_shape= and
    label_name= arguments that script passes), split_and_load over two cpu contexts, Trainer,
    metric, and collect_params().save/load giving the same score."""
    _write_mnist(tmp_path / "data", n_train=1000, n_test=200)
    out = _run_script(tmp_path, """
        import mxnet as mx
        from mxnet import gluon, autograd
        from mxnet.gluon import nn
        from mxnet.test_utils import get_mnist_ubyte

        get_mnist_ubyte()
        train_it = mx.io.MNISTIter(image='data/train-images-idx3-ubyte',
                                   label='data/train-labels-idx1-ubyte', data_shape=(784,),
                                   label_name='sm_label', batch_size=50, shuffle=True,
                                   flat=True, silent=False, seed=7)
        val_it = mx.io.MNISTIter(image='data/t10k-images-idx3-ubyte',
                                 label='data/t10k-labels-idx1-ubyte', data_shape=(784,),
                                 batch_size=50, shuffle=False, flat=True)
        assert train_it.provide_label[0][0] == 'sm_label'

        def make():
            net = nn.Sequential()
            net.add(nn.Dense(64, activation='relu', prefix='h1_'))
            net.add(nn.Dense(10, prefix='out_'))
            return net

        def accuracy(net, ctxs):
            acc = mx.metric.Accuracy()
            val_it.reset()
            for batch in val_it:
                xs = gluon.utils.split_and_load(batch.data[0], ctxs, batch_axis=0)
                ys = gluon.utils.split_and_load(batch.label[0], ctxs, batch_axis=0)
                acc.update(ys, [net(x) for x in xs])
            return acc.get()[1]

        ctxs = [mx.cpu(0), mx.cpu(1)]
        net = make()
        net.collect_params().initialize(mx.init.Xavier(magnitude=2.24), ctx=ctxs)
        trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.5})
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        metric = mx.metric.Accuracy()
        for epoch in range(3):
            train_it.reset()
            for batch in train_it:
                xs = gluon.utils.split_and_load(batch.data[0], ctxs, batch_axis=0)
                ys = gluon.utils.split_and_load(batch.label[0], ctxs, batch_axis=0)
                outs = []
                with autograd.record():
                    for x, y in zip(xs, ys):
                        z = net(x)
                        loss_fn(z, y).backward()
                        outs.append(z)
                trainer.step(batch.data[0].shape[0])
                metric.update(ys, outs)
            metric.reset()
        acc1 = accuracy(net, [mx.cpu(0)])
        acc2 = accuracy(net, ctxs)
        assert acc1 > 0.9 and abs(acc1 - acc2) < 0.01, (acc1, acc2)
        net.collect_params().save('digits.params')
        again = make()
        again.collect_params().load('digits.params', ctx=[mx.cpu(0)])
        assert abs(accuracy(again, [mx.cpu(0)]) - acc1) < 1e-4
        print('OK', acc1)
        """)
    assert "OK" in out


@pytest.mark.timeout(90)
def test_image_classification_loop_on_rec_file(tmp_path):
    """image_classification.py's training loop over get_cifar10_iterator-style ImageRecordIters
    (rand_crop/rand_mirror, num_parts/part_index from the kvstore): split_and_load, a composite
    Accuracy/TopK metric, Trainer with momentum and multi_precision on a kvstore object,
    set_learning_rate, autograd.backward on a list, save_parameters/load_parameters."""
    import neogluon as mx
    os.makedirs(tmp_path / "data" / "cifar")
    rng = np.random.RandomState(0)
    for name, n in (("train", 64), ("test", 32)):
        rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / "data" / "cifar" / f"{name}.idx"),
                                            str(tmp_path / "data" / "cifar" / f"{name}.rec"), "w")
        for i in range(n):
            k = i % 10
            img = rng.randint(0, 256, (36, 36, 3)).astype(np.uint8)
            img[:, :, k % 3] = 20 * k
            header = mx.recordio.IRHeader(0, float(k), i, 0)
            rec.write_idx(i, mx.recordio.pack_img(header, img, quality=95, img_fmt=".png"))
        rec.close()
    out = _run_script(tmp_path, """
        import argparse, os, time
        import numpy as np
        import mxnet as mx
        from mxnet import gluon, profiler
        from mxnet import autograd as ag
        from mxnet.gluon import nn
        from mxnet.metric import Accuracy, TopKAccuracy, CompositeEvalMetric

        parser = argparse.ArgumentParser()
        parser.add_argument('--epochs', type=int, default=1)
        parser.add_argument('--dtype', default='float32')
        opt = parser.parse_args()

        kv = mx.kv.create('device')
        def rec_iter(split, train):
            return mx.io.ImageRecordIter(path_imgrec='data/cifar/%s.rec' % split, resize=-1,
                                         data_shape=(3, 32, 32), batch_size=16,
                                         rand_crop=train, rand_mirror=train,
                                         num_parts=kv.num_workers, part_index=kv.rank)
        train_data, val_data = rec_iter('train', True), rec_iter('test', False)

        ctx = [mx.cpu(0), mx.cpu(1)]
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Conv2D(8, 3, strides=2, activation='relu'), nn.BatchNorm(),
                    nn.GlobalAvgPool2D(), nn.Dense(10))
        net.initialize(mx.init.Xavier(magnitude=2))
        net.cast(opt.dtype)
        net.hybridize()
        net.collect_params().reset_ctx(ctx)
        trainer = gluon.Trainer(net.collect_params(), 'sgd',
                                optimizer_params={'learning_rate': 0.1, 'wd': 1e-4,
                                                  'momentum': 0.9, 'multi_precision': True},
                                kvstore=kv)
        loss = gluon.loss.SoftmaxCrossEntropyLoss()
        metric = CompositeEvalMetric([Accuracy(), TopKAccuracy(5)])

        def test(ctx, val_data):
            metric.reset()
            val_data.reset()
            for batch in val_data:
                data = gluon.utils.split_and_load(batch.data[0].astype(opt.dtype, copy=False),
                                                  ctx_list=ctx, batch_axis=0)
                label = gluon.utils.split_and_load(batch.label[0].astype(opt.dtype, copy=False),
                                                   ctx_list=ctx, batch_axis=0)
                metric.update(label, [net(X) for X in data])
            return metric.get()

        profiler.set_config(profile_all=True, aggregate_stats=True)
        profiler.set_state('run')
        for epoch in range(opt.epochs):
            trainer.set_learning_rate(0.1 * (0.1 ** int(np.sum(np.array([30]) < epoch))))
            train_data.reset()
            metric.reset()
            nbatch = 0
            for i, batch in enumerate(train_data):
                data = gluon.utils.split_and_load(batch.data[0].astype(opt.dtype),
                                                  ctx_list=ctx, batch_axis=0)
                label = gluon.utils.split_and_load(batch.label[0].astype(opt.dtype),
                                                   ctx_list=ctx, batch_axis=0)
                assert len(data) == 2 and data[0].shape == (8, 3, 32, 32)
                outputs, Ls = [], []
                with ag.record():
                    for x, y in zip(data, label):
                        z = net(x)
                        Ls.append(loss(z, y))
                        outputs.append(z)
                    ag.backward(Ls)
                trainer.step(batch.data[0].shape[0])
                metric.update(label, outputs)
                nbatch += 1
            assert nbatch == 4, nbatch
            name, acc = metric.get()
            assert name == ['accuracy', 'top_k_accuracy_5'], name
            name, val_acc = test(ctx, val_data)
            assert 0 <= val_acc[0] <= val_acc[1] <= 1, val_acc
            fname = os.path.join('', 'tiny_%d_acc_%.4f.params' % (epoch, val_acc[0]))
            net.save_parameters(fname)
        profiler.set_state('stop')
        assert profiler.dumps().strip()
        # save_parameters writes each parameter's mean over its contexts (the BatchNorm
        # running statistics differ from one context to the other), as MXNet 1.x does.
        saved = mx.nd.load(fname)
        for key, param in net._collect_params_with_prefix().items():
            copies = [d.asnumpy() for d in param.list_data()]
            assert np.allclose(saved[key].asnumpy(), sum(copies) / len(copies), atol=1e-6), key
        again = nn.HybridSequential()
        with again.name_scope():
            again.add(nn.Conv2D(8, 3, strides=2, activation='relu'), nn.BatchNorm(),
                      nn.GlobalAvgPool2D(), nn.Dense(10))
        again.load_parameters(fname, ctx=mx.cpu())
        val_data.reset()
        out = again(next(iter(val_data)).data[0])
        assert out.shape == (16, 10) and np.isfinite(out.asnumpy()).all()
        print('OK', fname)
        """, "--epochs", "2")
    assert "OK" in out


def test_mnistiter_ignores_arguments_as_mxnet(tmp_path):
    """MXNet's MNISTIter accepts arguments it does not use (input_shape= from its own
    get_mnist_iterator, data_shape= from tests/python/train); neogluon too, with a warning for
    names no MXNet iterator takes."""
    import neogluon as mx
    _write_mnist(tmp_path, n_train=20, n_test=10)
    common = dict(image=str(tmp_path / "train-images-idx3-ubyte"),
                  label=str(tmp_path / "train-labels-idx1-ubyte"), batch_size=10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        it = mx.io.MNISTIter(data_shape=(784,), input_shape=(1, 28, 28), flat=True, **common)
    assert it.provide_data[0].shape == (10, 784)
    with pytest.warns(UserWarning, match="not_an_argument"):
        mx.io.MNISTIter(not_an_argument=1, **common)
