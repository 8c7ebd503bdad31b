"""The shape of GluonCV's scripts/classification/cifar/train_cifar10.py (GluonCV transforms, LR
schedulers, TrainingHistory, NAG, a 2-worker DataLoader) on separable synthetic data, run by
tests/test_gluoncv_nlp.py under `python -m neogluon.run`."""
import warnings; warnings.filterwarnings("ignore")
import numpy as np
import mxnet as mx
from mxnet import gluon, nd, autograd
from mxnet.gluon.data.vision import transforms
from gluoncv.model_zoo import get_model
from gluoncv.utils import makedirs, LRSequential, LRScheduler, TrainingHistory
from gluoncv.data import transforms as gcv_transforms
rng = np.random.RandomState(0)
y = rng.randint(0, 2, 64).astype("int32")
imgs = (rng.uniform(0, 120, (64, 32, 32, 3)) + y[:, None, None, None] * 100).astype("uint8")
ds = gluon.data.ArrayDataset(nd.array(imgs, dtype="uint8"), nd.array(y))
transform_train = transforms.Compose([gcv_transforms.RandomCrop(32, pad=4), transforms.RandomFlipLeftRight(),
    transforms.ToTensor(), transforms.Normalize([0.4914, 0.4822, 0.4465], [0.2023, 0.1994, 0.2010])])
train_data = gluon.data.DataLoader(ds.transform_first(transform_train), batch_size=16, shuffle=True, last_batch="discard", num_workers=2)
net = get_model("cifar_resnet20_v1", classes=2)
net.initialize(mx.init.Xavier(), ctx=[mx.cpu()])
net.hybridize()
lr_scheduler = LRSequential([LRScheduler("linear", base_lr=0, target_lr=0.1, nepochs=1, iters_per_epoch=4),
                             LRScheduler("cosine", base_lr=0.1, target_lr=0, nepochs=3, iters_per_epoch=4)])
trainer = gluon.Trainer(net.collect_params(), "nag", {"lr_scheduler": lr_scheduler, "wd": 1e-4, "momentum": 0.9})
metric = mx.metric.Accuracy()
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
hist = TrainingHistory(["training-error"])
for epoch in range(4):
    metric.reset()
    for data, label in train_data:
        with autograd.record():
            out = net(data)
            loss = loss_fn(out, label)
        loss.backward()
        trainer.step(16)
        metric.update([label], [out])
    name, acc = metric.get()
    hist.update([1 - acc])
    print("epoch", epoch, name, acc, "lr", trainer.learning_rate, flush=True)
print("final", acc)
