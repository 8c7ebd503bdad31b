"""MXNet 1.9.1's symbolic example scripts (examples/mxnet_symbolic/, unmodified) run through
``python -m neogluon.run`` on locally made data, for a tiny budget each, and learn; and the data
generator (tools/make_example_data.py) writes the formats the scripts read.

The full-size runs, against MXNet 1.9.1, are bench/module_examples.py's."""
import gzip
import importlib.util
import math
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable
MAKE_DATA = os.path.join(ROOT, "tools", "make_example_data.py")
EXAMPLES = os.path.join(ROOT, "examples", "mxnet_symbolic")
TRAIN_MNIST = os.path.join(EXAMPLES, "image-classification", "train_mnist.py")
TRAIN_CIFAR = os.path.join(EXAMPLES, "image-classification", "train_cifar10.py")
LSTM = os.path.join(EXAMPLES, "rnn", "bucketing", "lstm_bucketing.py")
SIZES = ["--mnist-train", "1280", "--mnist-test", "640", "--cifar-train", "256",
         "--cifar-test", "128", "--text-train", "1000", "--text-test", "64"]


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_module_examples", os.path.join(ROOT, "bench", "module_examples.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """Tiny data in every format, made once for this module; skips when the generator's source
    (scikit-learn's bundled digits) is not available."""
    pytest.importorskip("sklearn", reason="tools/make_example_data.py draws on scikit-learn's "
                                          "bundled digits")
    out = tmp_path_factory.mktemp("example_data")
    proc = subprocess.run([PY, MAKE_DATA, str(out)] + SIZES, capture_output=True, text=True,
                          timeout=300)
    if proc.returncode == 3:
        pytest.skip(proc.stderr.strip())
    assert proc.returncode == 0, proc.stderr
    return out


def _run_script(script, args, cwd, timeout=600, launcher=()):
    bench = _bench()
    env = bench.script_env(threads=1)
    cmd = list(launcher) + [PY, "-m", "neogluon.run", script] + list(args)
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as err:
        out = err.stdout.decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
        pytest.fail(f"{os.path.basename(script)} did not finish in {timeout} s:\n{out[-3000:]}")
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-4000:]
    return bench.parse_log(log), log


# ------------------------------------------------------------------------------ the data


def test_mnist_idx_files_hold_every_digit(data_dir):
    d = data_dir / "data"
    raw = (d / "train-images-idx3-ubyte").read_bytes()
    magic, n, rows, cols = struct.unpack(">IIII", raw[:16])
    assert (magic, n, rows, cols) == (0x0803, 1280, 28, 28)
    assert len(raw) == 16 + n * rows * cols
    lab = (d / "train-labels-idx1-ubyte").read_bytes()
    assert struct.unpack(">II", lab[:8]) == (0x0801, 1280)
    labels = np.frombuffer(lab[8:], np.uint8)
    assert set(labels.tolist()) == set(range(10))
    # The .gz files train_mnist.py reads hold the same bytes.
    assert gzip.decompress((d / "train-images-idx3-ubyte.gz").read_bytes()) == raw
    assert gzip.decompress((d / "t10k-labels-idx1-ubyte.gz").read_bytes())[:8] == \
        struct.pack(">II", 0x0801, 640)
    images = np.frombuffer(raw[16:], np.uint8).reshape(n, 28, 28)
    # MNIST-like statistics: dark background, about a fifth of the pixels lit.
    assert 0.1 < (images > 12).mean() < 0.3
    assert images[:, :3, :].max() == 0 or (images[:, :3, :] > 0).mean() < 0.01


def test_cifar_records_decode_through_image_record_iter(data_dir):
    import neogluon as mx
    it = mx.io.ImageRecordIter(path_imgrec=str(data_dir / "data" / "cifar10_val.rec"),
                               data_shape=(3, 28, 28), batch_size=32)
    batch = next(iter(it))
    assert batch.data[0].shape == (32, 3, 28, 28)
    labels = batch.label[0].asnumpy()
    assert labels.min() >= 0 and labels.max() <= 9
    for name in ("train.rec", "test.rec", "train.lst", "test.lst"):
        assert (data_dir / "data" / "cifar" / name).exists(), name


def test_text_corpus_test_words_are_in_the_training_vocabulary(data_dir):
    d = data_dir / "data"
    train = (d / "sherlockholmes.train.txt").read_text().splitlines()
    test = (d / "sherlockholmes.test.txt").read_text().splitlines()
    assert len(train) == 1000 and len(test) == 64
    vocab = {w for line in train for w in line.split()}
    assert {w for line in test for w in line.split()} <= vocab
    assert (d / "ptb.train.txt").read_text() == (d / "sherlockholmes.train.txt").read_text()


def test_generator_is_repeatable_and_reuses_its_output(tmp_path, data_dir):
    out = tmp_path / "again"
    args = [PY, MAKE_DATA, str(out), "--what", "text"] + SIZES
    first = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0 and "wrote text" in first.stdout
    assert (out / "data" / "ptb.valid.txt").read_bytes() == \
        (data_dir / "data" / "ptb.valid.txt").read_bytes()
    second = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0 and second.stdout == ""


def test_generator_refuses_an_unknown_kind(tmp_path):
    proc = subprocess.run([PY, MAKE_DATA, str(tmp_path), "--what", "mnist,imagenet"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "imagenet" in proc.stderr


# ------------------------------------------------------------------------------ the log parser


def test_parse_log_reads_epoch_times_and_validation_values():
    bench = _bench()
    log = ("INFO:root:Epoch[0] Batch [0-100]\tSpeed: 1.0 samples/sec\taccuracy=0.5\n"
           "INFO:root:Epoch[0] Train-accuracy=0.95\nINFO:root:Epoch[0] Time cost=2.863\n"
           "INFO:root:Epoch[0] Validation-accuracy=0.961982\n"
           "2026-11-28 18:43:40,404 Epoch[1] Time cost=52.416\n"
           "2026-11-28 18:43:43,029 Epoch[1] Validation-perplexity=77.478904\n")
    parsed = bench.parse_log(log)
    assert parsed["epoch_s"] == [2.863, 52.416]
    assert parsed["val"] == {"accuracy": [0.961982], "perplexity": [77.478904]}
    assert bench.steady_epoch_s([5.0, 2.0, 4.0]) == 3.0
    assert bench.steady_epoch_s([5.0]) == 5.0 and bench.steady_epoch_s([]) is None


# ------------------------------------------------------------------------------ the scripts


def test_train_mnist_mlp_learns(data_dir):
    parsed, _ = _run_script(TRAIN_MNIST, ["--network", "mlp", "--num-epochs", "3",
                                          "--disp-batches", "5"], data_dir)
    assert len(parsed["epoch_s"]) == 3
    acc = parsed["val"]["accuracy"]
    # 10 classes: chance is 0.1; three passes over 1,280 images reach well above it.
    assert acc[-1] > 0.6, acc


def test_train_mnist_lenet_runs(data_dir):
    parsed, _ = _run_script(TRAIN_MNIST, ["--network", "lenet", "--num-epochs", "1",
                                          "--disp-batches", "5"], data_dir)
    acc = parsed["val"]["accuracy"]
    assert len(acc) == 1 and 0.0 <= acc[0] <= 1.0 and acc[0] > 0.1, acc


def test_train_cifar10_resnet_runs(data_dir):
    parsed, log = _run_script(TRAIN_CIFAR, ["--network", "resnet", "--num-layers", "8",
                                            "--batch-size", "32", "--num-epochs", "1",
                                            "--disp-batches", "2"], data_dir)
    acc = parsed["val"]["accuracy"]
    assert len(parsed["epoch_s"]) == 1 and len(acc) == 1 and 0.0 <= acc[0] <= 1.0, log[-2000:]
    assert "Speed:" in log


def test_lstm_bucketing_lowers_perplexity(data_dir):
    train = (data_dir / "data" / "sherlockholmes.train.txt").read_text().split(" ")
    vocab_size = len(set(train) - {""}) + 1   # the script's vocabulary also holds the padding
    parsed, _ = _run_script(LSTM, ["--num-epochs", "3", "--num-hidden", "32", "--num-embed",
                                   "32", "--batch-size", "8", "--lr", "0.03", "--mom", "0.9",
                                   "--disp-batches", "50"], data_dir)
    ppl = parsed["val"]["perplexity"]
    assert len(ppl) == 3 and all(math.isfinite(p) for p in ppl), ppl
    # A model that learned nothing predicts uniformly: perplexity = the vocabulary's size (121).
    # MXNet 1.9.1, same data and arguments, three runs: 60-74, 34-44, 20-27 after each epoch.
    assert ppl[-1] < 0.4 * vocab_size and ppl[-1] < ppl[0], (ppl, vocab_size)


def test_train_mnist_dist_sync_two_workers(data_dir):
    """``--kv-store dist_sync`` under ``python -m neogluon.launch -n 2``: both workers train
    the same weights (same validation accuracy) and learn."""
    launcher = [PY, "-m", "neogluon.launch", "-n", "2"]
    parsed, log = _run_script(TRAIN_MNIST, ["--network", "mlp", "--kv-store", "dist_sync",
                                            "--num-epochs", "2", "--num-examples", "1280",
                                            "--disp-batches", "5"], data_dir, timeout=600,
                              launcher=launcher)
    assert log.count("Resizing training data to 10 batches per machine") == 2, log[-3000:]
    acc = parsed["val"]["accuracy"]
    # parse_log keeps one value per epoch: check that both workers logged the same ones.
    import re
    finals = re.findall(r"Epoch\[1\] Validation-accuracy=([0-9.]+)", log)
    assert len(finals) == 2 and finals[0] == finals[1], finals
    assert acc[-1] > 0.5, acc
