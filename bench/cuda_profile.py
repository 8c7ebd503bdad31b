"""Where a training step's time goes on a CUDA GPU, and whether Trainer.step synchronizes.

Usage: python bench/cuda_profile.py [--model resnet18] [--steps 20] [--json out.json]
           [--table out.txt]

For each configuration (neogluon imperative, neogluon replay, neogluon cudagraph, torch
eager; the models and data of bench/cuda_train.py):
  * phases: ms of host time per step in forward+loss, backward and the optimizer step, each
    phase closed by _sync(dev) (so a phase's figure includes its GPU work);
  * syncs: how many host-device synchronizations torch reports (set_sync_debug_mode) inside
    the forward, the backward and the optimizer step of one steady-state step;
  * kernels / ops: CUDA kernel launches and aten ops per step (torch.profiler), and the
    aten ops with the most self host time (--table).
"""
import argparse
import json
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from cuda_train import _sync, gluon_step, torch_step  # noqa: E402

CONFIGS = ["neogluon imperative", "neogluon replay", "neogluon cudagraph", "torch eager"]


def _syncs(fn):
    import torch
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            fn()
        finally:
            torch.cuda.set_sync_debug_mode(0)
    return [str(w.message)[:160] for w in caught if "synchroniz" in str(w.message)]


def profile(name, config, steps, rows, tables, dev):
    make = torch_step if config.startswith("torch") else gluon_step
    step, _ = make(name, config, dev)
    phases = step.phases
    for _ in range(5):
        step()
    _sync(dev)
    row = rows[config] = {}
    acc = [0.0, 0.0, 0.0]
    for _ in range(steps):
        for i, ph in enumerate(phases):
            t0 = time.perf_counter()
            ph()
            _sync(dev)
            acc[i] += time.perf_counter() - t0
    row["ms_forward"], row["ms_backward"], row["ms_update"] = (
        round(a * 1000 / steps, 3) for a in acc)
    _sync(dev)
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    _sync(dev)
    row["ms_step"] = round((time.perf_counter() - t0) * 1000 / steps, 3)
    sy = [_syncs(ph) if dev.startswith("cuda") else [] for ph in phases]
    row["syncs_forward"], row["syncs_backward"], row["syncs_update"] = map(len, sy)
    row["sync_messages"] = sorted({m for s in sy for m in s})[:6]
    from torch.profiler import ProfilerActivity, profile as tprof
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.startswith("cuda") else [])
    with tprof(activities=acts) as prof:
        for _ in range(3):
            step()
        _sync(dev)
    ev = prof.key_averages()
    row["cuda_kernels_per_step"] = round(sum(
        e.count for e in ev if getattr(e, "device_type", None) is not None
        and "CUDA" in str(e.device_type)) / 3, 1)
    row["aten_ops_per_step"] = round(sum(e.count for e in ev if e.key.startswith("aten::"))
                                     / 3, 1)
    launches = [e for e in ev if e.key in ("cudaLaunchKernel", "cudaGraphLaunch",
                                           "cuLaunchKernel", "cudaLaunchKernelExC")]
    row["launch_calls_per_step"] = {e.key: round(e.count / 3, 1) for e in launches}
    tables[config] = ev.table(sort_by="self_cpu_time_total", row_limit=25)
    print(name, config, json.dumps(row), file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--configs", default="")
    ap.add_argument("--device", default="cuda", help="cpu: a smoke test of this script")
    ap.add_argument("--json", default="")
    ap.add_argument("--table", default="")
    args = ap.parse_args()
    configs = [c.strip() for c in args.configs.split(",") if c.strip()] or CONFIGS
    rows, tables = {}, {}
    for config in configs:
        try:
            profile(args.model, config, args.steps, rows, tables, args.device)
        except Exception as err:  # noqa: BLE001 - report and go on
            rows[config] = {"error": f"{type(err).__name__}: {str(err)[:400]}"}
    out = {"model": args.model, "steps": args.steps, "results": rows}
    text = json.dumps(out, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text)
    if args.table:
        with open(args.table, "w") as f:
            for config, t in tables.items():
                f.write(f"==== {config}\n{t}\n")
    os.environ.pop("NEOGLUON_CUDA_GRAPHS", None)


if __name__ == "__main__":
    main()
