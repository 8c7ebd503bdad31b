"""The demo (python -m neogluon.examples.digits): options, a short run, resume."""
import os
import subprocess
import sys

import numpy as np
import pytest

import neogluon as mx
from neogluon.examples import digits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUICK = ["--no-progress", "--no-plot"]


def params_of(path):
    return {k: v.asnumpy() for k, v in mx.nd.load(path).items()}


def test_help_lists_every_option():
    out = subprocess.run([sys.executable, "-m", "neogluon.examples.digits", "--help"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0
    for opt in ("--epochs", "--batch-size", "--optimizer", "--lr", "--ctx", "--out",
                "--no-resume", "--seed", "--model"):
        assert opt in out.stdout, opt
    assert "demo_out" in out.stdout and "cpu:0,cpu:1" in out.stdout


@pytest.mark.parametrize("argv, culprit", [
    (["--epochs", "0"], "--epochs: must be at least 1"),
    (["--epochs", "two"], "--epochs: expected a whole number"),
    (["--batch-size", "-3"], "--batch-size: must be at least 1"),
    (["--optimizer", "rmsprop"], "--optimizer: invalid choice"),
    (["--lr", "0"], "--lr: must be a number in (0, 10]"),
    (["--lr", "nan"], "--lr: must be a number"),
    (["--lr", "fast"], "--lr: expected a number"),
    (["--ctx", "gpu:7"], "--ctx: gpu:7 is not available"),
    (["--ctx", "tpu"], "--ctx: 'tpu' is not a context"),
    (["--ctx", "cpu:0,cpu:0"], "--ctx: context cpu:0 is listed twice"),
    (["--ctx", "cpu:0,"], "--ctx: expected a comma-separated list"),
    (["--seed", "-1"], "--seed: must be between 0"),
    (["--model", "resnet"], "--model: invalid choice"),
    (["--batch-size", "1", "--ctx", "cpu:0,cpu:1"], "--batch-size: 1 is smaller than the number"),
])
def test_bad_options_get_clear_errors(argv, culprit, capsys):
    with pytest.raises(SystemExit) as exc:
        digits.parse_args(argv)
    assert exc.value.code == 2
    assert culprit in capsys.readouterr().err


def test_out_must_be_a_folder(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(SystemExit):
        digits.parse_args(["--out", str(f)])
    assert "is not a folder" in capsys.readouterr().err


def test_defaults():
    args = digits.parse_args([])
    assert args.ctx == ["cpu:0"] and args.optimizer == "adam" and args.lr == 0.005
    assert args.out == os.path.abspath("demo_out") and not args.no_resume
    assert digits.parse_args(["--optimizer", "SGD"]).lr == 0.1


def test_short_run_writes_checkpoints_and_plot(tmp_path, capsys):
    out = tmp_path / "run"
    summary = digits.main(["--epochs", "2", "--out", str(out), "--no-progress"])
    text = capsys.readouterr().out
    assert "Summary" in text and "test accuracy" in text and "parameters" in text
    # conv 1->32 (3x3), conv 32->64 (3x3), dense 256->128, dense 128->10, with biases
    assert summary["parameters"] == (32 * 9 + 32) + (64 * 32 * 9 + 64) + (128 * 256 + 128) \
        + (10 * 128 + 10)
    assert summary["test_accuracy"] > 0.85      # two epochs already learn most digits
    files = sorted(os.listdir(out / "checkpoints"))
    assert files == ["epoch-0001.params", "epoch-0001.states", "epoch-0002.params",
                     "epoch-0002.states"]
    assert not [f for f in os.listdir(out) if ".tmp" in f]
    with open(out / "training.png", "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert len(summary["history"]) == 2 and summary["seconds_per_epoch"] > 0


def test_resume_equals_uninterrupted(tmp_path, capsys):
    common = QUICK + ["--model", "mlp", "--optimizer", "sgd"]
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    digits.main(["--epochs", "3", "--out", a] + common)
    digits.main(["--epochs", "2", "--out", b] + common)
    capsys.readouterr()
    summary = digits.main(["--epochs", "3", "--out", b] + common)
    text = capsys.readouterr().out
    assert "Resuming from checkpoint" in text and "2 epoch(s) done" in text
    assert summary["resumed_from"] == 2 and summary["epochs_trained_now"] == 1
    pa = params_of(os.path.join(a, "checkpoints", "epoch-0003.params"))
    pb = params_of(os.path.join(b, "checkpoints", "epoch-0003.params"))
    assert sorted(pa) == sorted(pb)
    for k in pa:
        np.testing.assert_array_equal(pa[k], pb[k], err_msg=k)
    # the history is carried over, so the plot covers every epoch
    assert [h["epoch"] for h in summary["history"]] == [1, 2, 3]


def test_rerun_when_done_only_evaluates_and_no_resume_starts_over(tmp_path, capsys):
    out = str(tmp_path / "c")
    common = QUICK + ["--model", "mlp", "--out", out]
    first = digits.main(["--epochs", "1"] + common)
    capsys.readouterr()
    again = digits.main(["--epochs", "1"] + common)
    assert "only evaluates" in capsys.readouterr().out
    assert again["epochs_trained_now"] == 0
    assert again["test_accuracy"] == pytest.approx(first["test_accuracy"])
    fresh = digits.main(["--epochs", "1", "--no-resume"] + common)
    assert fresh["resumed_from"] is None and fresh["epochs_trained_now"] == 1


def test_resume_with_other_options_is_refused(tmp_path):
    out = str(tmp_path / "d")
    digits.main(["--epochs", "1", "--model", "mlp", "--out", out] + QUICK)
    with pytest.raises(SystemExit, match="--optimizer adam"):
        digits.main(["--epochs", "2", "--model", "mlp", "--optimizer", "sgd", "--out", out]
                    + QUICK)


def test_corrupt_state_file_is_reported(tmp_path):
    out = tmp_path / "e"
    out.mkdir()
    (out / digits.STATE_FILE).write_text("{not json")
    with pytest.raises(SystemExit, match="cannot read"):
        digits.main(["--epochs", "1", "--model", "mlp", "--out", str(out)] + QUICK)


def test_data_parallel_two_contexts(tmp_path):
    summary = digits.main(["--epochs", "1", "--model", "mlp", "--ctx", "cpu:0,cpu:1",
                           "--out", str(tmp_path / "f")] + QUICK)
    assert summary["test_accuracy"] > 0.5


def test_default_run_reaches_95_percent(tmp_path):
    # what `make demo` runs, without the bar and the plot
    summary = digits.main(["--out", str(tmp_path / "full")] + QUICK)
    assert summary["test_accuracy"] >= 0.95
    assert summary["epochs_trained_now"] == 12


def test_interrupt_says_how_to_resume(tmp_path, monkeypatch, capsys):
    out = str(tmp_path / "g")
    digits.main(["--epochs", "1", "--model", "mlp", "--out", out] + QUICK)

    def boom(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(digits, "_evaluate", boom)
    with pytest.raises(SystemExit) as exc:
        digits.main(["--epochs", "2", "--model", "mlp", "--out", out] + QUICK)
    assert exc.value.code == 130
    assert "last complete checkpoint is epoch 1" in capsys.readouterr().err


def test_resume_equals_uninterrupted_data_parallel(tmp_path):
    # with two contexts the optimizer runs in the kvstore: its states must round-trip too
    common = QUICK + ["--model", "mlp", "--ctx", "cpu:0,cpu:1"]
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    digits.main(["--epochs", "2", "--out", a] + common)
    digits.main(["--epochs", "1", "--out", b] + common)
    digits.main(["--epochs", "2", "--out", b] + common)
    pa = params_of(os.path.join(a, "checkpoints", "epoch-0002.params"))
    pb = params_of(os.path.join(b, "checkpoints", "epoch-0002.params"))
    for k in pa:
        np.testing.assert_array_equal(pa[k], pb[k], err_msg=k)


def test_last_batch_smaller_than_context_count(tmp_path):
    # 1437 training digits in batches of 359 leave one sample: too few for two contexts
    summary = digits.main(["--epochs", "1", "--model", "mlp", "--batch-size", "359", "--ctx",
                           "cpu:0,cpu:1", "--out", str(tmp_path / "h")] + QUICK)
    assert summary["epochs_trained_now"] == 1 and not np.isnan(summary["history"][0]["train_loss"])
