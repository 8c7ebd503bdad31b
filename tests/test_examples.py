"""The scripts in examples/ run and their own checks hold; bench/run_all.py runs benchmarks."""
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_trainer_tutorial(capsys):
    load("examples/trainer_tutorial.py", "ex_tutorial").main()
    assert "trainer tutorial: OK" in capsys.readouterr().out


@pytest.mark.parametrize("ctx", ["cpu:0", "cpu:0,cpu:1"])
def test_gradient_clipping(ctx, capsys):
    final = load("examples/gradient_clipping.py", "ex_clip").main(["--ctx", ctx, "--epochs",
                                                                   "3"])
    out = capsys.readouterr().out
    assert "step(s) clipped" in out and final < 0.5
    # with a large learning rate the early steps must have been clipped
    assert not out.splitlines()[-1].startswith("0 step(s)")


def test_data_parallel(capsys):
    load("examples/data_parallel.py", "ex_dp").main(["--epochs", "2"])
    assert "every context holds the same weights" in capsys.readouterr().out


def test_custom_optimizer(capsys):
    load("examples/custom_optimizer.py", "ex_opt").main()
    assert "same weights as the built-in SGD" in capsys.readouterr().out


def test_save_and_resume(tmp_path, capsys):
    load("examples/save_and_resume.py", "ex_resume").main(["--dir", str(tmp_path)])
    assert "resumed run == uninterrupted run" in capsys.readouterr().out
    assert sorted(os.listdir(tmp_path)) == ["model.params", "trainer.states"]


# ---------------------------------------------------------------------------- bench/run_all.py
@pytest.fixture
def run_all(tmp_path, monkeypatch):
    mod = load("bench/run_all.py", "bench_run_all")
    monkeypatch.setattr(mod, "HERE", str(tmp_path))
    monkeypatch.setattr(mod, "RESULTS", str(tmp_path / "RESULTS.md"))
    (tmp_path / "run_all.py").write_text("")
    (tmp_path / "_helper.py").write_text("raise SystemExit(3)\n")
    (tmp_path / "good.py").write_text("print('good ran')\n")
    (tmp_path / "bad.py").write_text("import sys\nprint('bad ran')\nsys.exit(4)\n")
    monkeypatch.setattr(mod, "__file__", str(tmp_path / "run_all.py"))
    return mod


def test_run_all_discovers_and_reports(run_all, tmp_path, capsys):
    assert run_all.discover() == ["bad", "good"]
    (tmp_path / "RESULTS.md").write_text("# Benchmark results\n\n## good\n\nkeep me\n")
    rc = run_all.main([])
    out = capsys.readouterr().out
    assert rc == 1
    assert "good ran" in out and "bad ran" in out
    assert "bad" in out.split("did not finish cleanly:")[1]
    text = (tmp_path / "RESULTS.md").read_text()
    assert "## run_all" in text and "| good | ok |" in text
    assert "| bad | failed (exit 4) |" in text
    assert "## good\n\nkeep me\n" in text          # other sections are left alone
    # a second run replaces its own section instead of adding another
    run_all.main(["good"])
    text = (tmp_path / "RESULTS.md").read_text()
    assert text.count("## run_all") == 1 and "| bad |" not in text
    assert "## good\n\nkeep me\n" in text


def test_run_all_rejects_unknown_names(run_all, capsys):
    with pytest.raises(SystemExit):
        run_all.main(["nosuch"])
    assert "unknown benchmark(s) nosuch" in capsys.readouterr().err


def test_run_all_timeout(run_all, tmp_path, capsys):
    (tmp_path / "slow.py").write_text("import time\ntime.sleep(30)\n")
    assert run_all.main(["slow", "--timeout", "1", "--no-write"]) == 1
    assert "timed out" in capsys.readouterr().out


def test_quickstart_code_runs(tmp_path, monkeypatch, capsys):
    # The Python blocks of docs/quickstart.md, in order, in one namespace.
    import re
    with open(os.path.join(ROOT, "docs", "quickstart.md")) as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), flags=re.S)
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    ns = {}
    for block in blocks:
        exec(compile(block, "quickstart.md", "exec"), ns)  # noqa: S102 - our own docs
    assert (tmp_path / "model.params").exists() and (tmp_path / "trainer.states").exists()
    assert any(f.endswith(".params") for f in os.listdir(tmp_path / "ckpt"))
    assert "accuracy" in capsys.readouterr().out


def test_estimator_fit_example_resumes(tmp_path, capsys):
    mod = load("examples/estimator_fit.py", "ex_est")
    first = mod.main(["--dir", str(tmp_path), "--epochs", "2", "--no-progress"])
    assert first > 0.85
    mod.main(["--dir", str(tmp_path), "--epochs", "3", "--no-progress"])
    out = capsys.readouterr().out
    assert "Checkpoint resumed from epoch 1" in out and "continue to train for 1 epochs" in out
    assert "mlp-best.params" in os.listdir(tmp_path)


def test_paired_benchmark_takes_turns(tmp_path):
    # bench/paired.py: live processes answering 'run K' in turn; a per-round ratio for each
    # configuration after the first
    import json
    import subprocess
    import sys
    out = tmp_path / "paired.json"
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "paired.py"), "--model", "mlp",
                    "--rounds", "3", "--steps", "2", "--warmup", "1",
                    "--configs", "neogluon/replay,torch/eager", "--json", str(out)],
                   check=True, cwd=ROOT, timeout=240, capture_output=True)
    rep = json.loads(out.read_text())
    assert set(rep["ms_per_step"]) == {"neogluon/replay", "torch/eager"}
    for v in rep["ms_per_step"].values():
        assert 0 < v["wall_min"] <= v["wall_median"]
    ratio = rep["neogluon/replay speed-up"]["torch/eager"]
    assert ratio["quartiles"][0] <= ratio["per_round_median"] <= ratio["quartiles"][1]
    assert ratio["min_over_min"] > 0
