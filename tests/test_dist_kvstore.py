"""The distributed stores (dist_sync, dist_async) in real multi-process jobs on localhost.

Each test starts 2 or 3 worker processes (tests/dist_workers/) with torchrun's variables;
every job has a hard timeout. The workers check MXNet 1.9.1's semantics against values
they can compute themselves; the Trainer runs against a one-process Trainer on the same
global batch.
"""
import json
import os
import subprocess
import sys

import pytest

from dist_util import ROOT, WORKERS, free_port, run_workers

pytestmark = pytest.mark.timeout(180)


def _json_lines(results):
    rows = []
    for _, out, _ in results:
        rows.extend(json.loads(line) for line in out.splitlines() if line.startswith("{"))
    return rows


@pytest.mark.parametrize("n", [2, 3])
def test_store_semantics(n):
    results = run_workers("kv_semantics.py", n, "dist_sync", timeout=120)
    for rank, (_, out, _) in enumerate(results):
        assert f"rank {rank} of {n} ok" in out


def test_device_store_kind_on_cpu():
    # dist_device_sync keeps values on the values' devices; on CPU it behaves as dist_sync.
    run_workers("kv_semantics.py", 2, "dist_device_sync", timeout=120)


TRAINER_CASES = ["sgd:T:1", "nag:T:1", "adam:T:1", "adagrad:T:1", "rmsprop:T:1", "ftrl:T:1",
                 "signum:T:1", "lamb:T:1", "adadelta:T:1", "sgd:F:1", "adam:F:2", "sgd:T:2",
                 "sgd:T:1:2bit", "adam:F:1:2bit"]


def _check_trainer_rows(rows, n, cases):
    by_case = {}
    for row in rows:
        by_case.setdefault(row["case"], []).append(row)
    assert sorted(by_case) == sorted(cases)
    for case, rs in by_case.items():
        assert len(rs) == n, case
        # every worker ends with the same weights
        assert len({r["checksum"] for r in rs}) == 1, (case, rs)
        compressed = case.endswith("2bit")
        if not compressed:
            # the one-process Trainer on the global batch, up to the order of the sums
            assert max(r["diff"] for r in rs) < 2e-6, (case, rs)
            # a run resumed from save_states/load_states continues with the same numbers
            assert all(r["resume_diff"] == 0.0 for r in rs), (case, rs)
        uok = case.split(":")[1] == "T"
        held = [r["held"] for r in rs]
        if uok and not compressed:
            # sharded optimizer states: each rank holds a part, together exactly one copy
            assert max(held) < sum(held), (case, held)
        else:
            assert len(set(held)) == 1, (case, held)
        # collectives per step, whatever the number of Parameters (4 here): when the store
        # updates (on gloo), one reduce to and one broadcast from each owner (every rank owns
        # a key here); else one all-reduce (or one all-gather of packed words)
        expected = 2 * n if uok and not compressed else 1
        assert all(r["calls_per_step"] == expected for r in rs), (case, rs)


def test_trainer_two_workers(tmp_path):
    results = run_workers("trainer_equiv.py", 2, tmp_path, *TRAINER_CASES, timeout=150)
    rows = _json_lines(results)
    _check_trainer_rows(rows, 2, TRAINER_CASES)
    # adam keeps two state arrays per weight: exactly one copy of them over the two ranks
    adam = [r for r in rows if r["case"] == "adam:T:1"]
    assert sum(r["held"] for r in adam) == 2 * adam[0]["total"]


def test_trainer_three_workers(tmp_path):
    cases = ["adam:T:1", "sgd:F:2"]
    results = run_workers("trainer_equiv.py", 3, tmp_path, *cases, timeout=150)
    _check_trainer_rows(_json_lines(results), 3, cases)


def test_async_store(tmp_path):
    rows = _json_lines(run_workers("async_store.py", 2, str(tmp_path / "ck"), timeout=120))
    assert [r["final"] for r in rows] == [61.0, 61.0]
    assert [r["resumed"] for r in rows] == [3, 3]      # a checkpoint set saved and resumed
    # six SGD steps of -0.1 from 0.5 in all; each worker saw at least its own three
    ws = sorted(r["w_first"] for r in rows)
    assert ws[0] == pytest.approx(-0.1, abs=1e-6)
    assert all(w <= 0.2 + 1e-6 for w in ws)


def test_mxnet_job_layout_scheduler_server_workers():
    """DMLC_* variables only, as MXNet's launch scripts set them: the scheduler hosts the
    rendezvous and exits when the workers are done, the server exits at once."""
    port = free_port()
    base = dict(os.environ, DMLC_PS_ROOT_URI="127.0.0.1", DMLC_PS_ROOT_PORT=str(port),
                DMLC_NUM_WORKER="2", DMLC_NUM_SERVER="1", DMLC_INTERFACE="lo",
                NEOGLUON_KVSTORE_TIMEOUT="60", OMP_NUM_THREADS="1",
                PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_USE_AGENT_STORE"):
        base.pop(k, None)
    cmd = [sys.executable, "-m", "neogluon.run", os.path.join(WORKERS, "roles.py")]
    procs = {role: subprocess.Popen(cmd, env=dict(base, DMLC_ROLE=role.rstrip("12")),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    cwd=ROOT)
             for role in ("scheduler", "server", "worker1", "worker2")}
    outs = {}
    try:
        for role, p in procs.items():
            outs[role] = p.communicate(timeout=90) + (p.returncode,)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
    for role, (out, err, rc) in outs.items():
        assert rc == 0, (role, out, err[-3000:])
    assert "needs no server processes" in outs["server"][1]
    assert "hosting the rendezvous" in outs["scheduler"][1]
    rows = [json.loads(outs[w][0].strip().splitlines()[-1]) for w in ("worker1", "worker2")]
    assert sorted(r["rank"] for r in rows) == [0, 1]
    assert all(r["n"] == 2 and r["sum"] == 1 + 2 for r in rows)  # the sum replaces the value


def test_workers_making_different_calls_get_a_clear_error():
    rows = _json_lines(run_workers("mismatch.py", 2, timeout=90))
    assert len(rows) == 2
    for row in rows:
        assert row["error"] and "different calls" in row["error"], row
        assert "rank(s) [1]" in row["error"]


def test_overlapped_buckets_give_the_same_numbers():
    """NEOGLUON_DIST_OVERLAP=1 reduces gradient buckets during backward; the weights equal the
    plain run's bit for bit, including a step whose gradients were changed after backward
    (the overlapped sums are then dropped on every worker) and an unused Parameter."""
    rows = _json_lines(run_workers("overlap.py", 2, timeout=150,
                                   env={"NEOGLUON_DIST_BUCKET_MB": "0.0005"}))
    assert len(rows) == 2
    for row in rows:
        for uok in ("True", "False"):
            assert row[f"diff_{uok}"] == 0.0, row
            # 6 steps: the first arms the overlap, the 4th had modified gradients
            assert row[f"used_{uok}"] == 4, row


def test_nccl_style_sharded_path_on_gloo(tmp_path):
    """The reduce-scatter + all-gather update (what CUDA/NCCL stores use), forced on gloo, gives
    the same results, with and without the overlap."""
    env = {"NEOGLUON_DIST_SCATTER": "1"}
    cases = ["adam:T:1", "sgd:T:2"]
    rows = _json_lines(run_workers("trainer_equiv.py", 2, tmp_path, *cases, timeout=150,
                                   env=env))
    for row in rows:
        assert row["diff"] < 2e-6 and row["resume_diff"] == 0.0, row
        assert row["calls_per_step"] == 2, row  # one reduce-scatter, one all-gather
    rows = _json_lines(run_workers("overlap.py", 2, timeout=150,
                                   env=dict(env, NEOGLUON_DIST_BUCKET_MB="0.0005")))
    for row in rows:
        assert row["diff_True"] == 0.0 and row["used_True"] == 4, row
