"""bench/cuda_train.py's CPU smoke run (one step, one round), so that the CUDA benchmark
(issue 32's table, run on a lent GPU by tools/gpu_check.sh) can't rot on machines without a
GPU: one model, the two AMP configurations it compares, and their ratio columns."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_cuda_train_cpu_smoke(tmp_path):
    out = tmp_path / "bench.json"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS="1")
    r = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "cuda_train.py"), "--device", "cpu",
         "--steps", "1", "--rounds", "1", "--warmup", "0", "--models", "lenet", "--configs",
         "neogluon amp fp16,torch autocast fp16", "--json", str(out)],
        capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = json.loads(out.read_text())["results"]["lenet"]
    assert set(rows) == {"neogluon amp fp16", "torch autocast fp16"}
    for config, row in rows.items():
        assert "error" not in row, (config, row)
        assert row["ms_per_step"] > 0
    assert rows["neogluon amp fp16"]["vs_torch_autocast"] > 0
    assert "vs_torch_autocast" not in rows["torch autocast fp16"]
    assert "neogluon amp fp16" in r.stdout.splitlines()[-2]  # the text table at the end


def test_cuda_train_rejects_unknown_names():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "cuda_train.py"),
                        "--device", "cpu", "--models", "lenet", "--configs", "torch eagre"],
                       capture_output=True, text=True, timeout=60, check=False,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and "unknown configurations" in r.stderr
