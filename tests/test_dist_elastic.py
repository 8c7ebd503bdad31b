"""Distributed jobs that survive a lost worker (issue 34 C): ``neogluon.launch --max-restarts``
with the checkpoint recipe of neogluon.contrib.checkpoint, a kill -9 in the middle of a
distributed save, signals to a restarting launcher, and the dist_async remote refusal.

The multi-process tests each have a hard timeout; they are few and small (a 2-worker MLP)."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from dist_util import ROOT, WORKERS, run_workers

PY = sys.executable
SCRIPT = os.path.join(WORKERS, "elastic_train.py")


def _env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TORCHELASTIC", "OMPI_", "PMI_", "DMLC_"))
           and k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                         "MASTER_PORT")}
    env.update({"OMP_NUM_THREADS": "1", "NEOGLUON_KVSTORE_TIMEOUT": "30",
                "PYTHONPATH": ROOT + os.pathsep + env.get("PYTHONPATH", "")})
    env.update(extra)
    return env


def _results(stdout):
    dec = json.JSONDecoder()
    return [dec.raw_decode(part)[0] for part in stdout.split("RESULT ")[1:]]


def _npz(path):
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


# ------------------------------------------------------------------- restart and resume
@pytest.mark.timeout(240)
def test_killed_worker_is_restarted_and_the_job_ends_with_the_resumed_numbers(tmp_path):
    ck, out = str(tmp_path / "ck"), str(tmp_path / "w")
    cmd = [PY, "-m", "neogluon.launch", "-n", "2", "--max-restarts", "1", "--kill-timeout", "2",
           PY, SCRIPT, ck, out, "--steps", "8", "--save-every", "2", "--kill-rank", "1",
           "--kill-step", "4", "--check"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=200, env=_env(),
                           cwd=ROOT)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the job did not end: {e.stderr!r}"[-4000:])
    assert p.returncode == 0, p.stderr[-4000:]
    assert "rank 1 failed (killed by SIGKILL)" in p.stderr, p.stderr[-3000:]
    assert "restarting the group (restart 1 of at most 1)" in p.stderr
    res = _results(p.stdout)
    assert sorted(r["rank"] for r in res) == [0, 1], p.stdout
    for r in res:
        # the restarted group (attempt 1) resumed after the set of step 4, where rank 1 died
        assert r["attempt"] == 1 and r["resumed_after"] == 4 and r["ranks_agree"], r
    final = _npz(out + ".npz")
    resumed = _npz(out + ".resumed.npz")     # uninterrupted run resumed from the same set
    scratch = _npz(out + ".scratch.npz")     # uninterrupted run from step 0
    assert final.keys() == resumed.keys() == scratch.keys() and final
    for k in final:
        np.testing.assert_array_equal(final[k], resumed[k])
        np.testing.assert_array_equal(final[k], scratch[k])


# ------------------------------------------------------------- kill -9 during a dist save
@pytest.mark.timeout(150)
def test_kill_during_a_distributed_save_leaves_the_previous_set_loadable(tmp_path):
    from neogluon import gluon
    from neogluon.contrib import checkpoint
    ck, out = str(tmp_path / "ck"), str(tmp_path / "w")
    # rank 0 (the one that publishes) dies in the save of step 4, after writing the states
    # file and before the manifest; rank 1 then fails in the barrier.
    res = run_workers("elastic_train.py", 2, ck, out, "--steps", "8", "--save-every", "2",
                      "--kill-rank", "0", "--kill-save-step", "4", timeout=120,
                      env={"NEOGLUON_KVSTORE_TIMEOUT": "20"}, expect_ok=False)
    assert res[0][0] == -signal.SIGKILL, res[0][2][-2000:]
    assert res[1][0] != 0
    names = sorted(os.listdir(ck))
    assert any(n.startswith("step-00000004-") and n.endswith(".states") for n in names), names
    assert "step-00000004.json" not in names, names
    latest = checkpoint.latest_checkpoint(ck)
    assert latest is not None and latest.step == 2, names
    assert latest.world_size == 2 and latest.extra == {"attempt": 0}
    # the set loads (here in one process: a set saved by 2 workers loads on any number)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(16, activation="tanh", in_units=6), gluon.nn.Dense(3, in_units=16))
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.05})
    assert checkpoint.load_checkpoint(ck, net, trainer) == 2
    assert trainer._updaters[0].optimizer.num_update > 0


# ------------------------------------------------------------------- signals, no orphans
@pytest.mark.timeout(90)
def test_sigterm_to_a_restarting_launcher_leaves_no_worker_behind(tmp_path):
    script = tmp_path / "w.py"
    script.write_text(textwrap.dedent(f"""
        import os, subprocess, sys, time
        attempt = os.environ["TORCHELASTIC_RESTART_COUNT"]
        rank = os.environ["RANK"]
        child = subprocess.Popen(["sleep", "120"])   # a grandchild of the launcher
        with open(os.path.join({str(tmp_path)!r}, f"pid{{attempt}}-{{rank}}.tmp"), "w") as f:
            f.write(f"{{os.getpid()}} {{child.pid}}")
        os.rename(os.path.join({str(tmp_path)!r}, f"pid{{attempt}}-{{rank}}.tmp"),
                  os.path.join({str(tmp_path)!r}, f"pid{{attempt}}-{{rank}}"))
        if attempt == "0" and rank == "1":
            sys.exit(3)                               # the first group fails
        time.sleep(120)
    """))
    proc = subprocess.Popen([PY, "-m", "neogluon.launch", "-n", "2", "--max-restarts", "3",
                             "--kill-timeout", "2", PY, str(script)], env=_env(), cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        files = [tmp_path / f"pid{a}-{r}" for a in (0, 1) for r in (0, 1)]
        end = time.monotonic() + 60
        while not all(f.exists() for f in files):
            assert time.monotonic() < end, "the restarted group did not start"
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        pids = [int(x) for f in files for x in f.read_text().split()]
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert err.count("restarting the group") == 1, err
    assert "got SIGTERM: stopping 2 worker(s)" in err
    assert not (tmp_path / "pid2-0").exists()        # no restart after the signal
    end = time.monotonic() + 10
    alive = pids
    while alive and time.monotonic() < end:
        alive = [p for p in pids if _exists(p)]
        time.sleep(0.1)
    assert not alive, f"processes left behind: {alive}"


def _exists(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie not yet reaped by its (dead) parent's reaper counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
    return True


def test_max_restarts_needs_a_local_or_torchrun_launcher(tmp_path, capsys):
    from neogluon import launch
    hosts = tmp_path / "hosts"
    hosts.write_text("a\nb\n")
    assert launch.main(["-n", "2", "-H", str(hosts), "--max-restarts", "1", "--dry-run",
                        "python", "x.py"]) == 2
    assert "--max-restarts works with the local and torchrun launchers" in \
        capsys.readouterr().err
    assert launch.main(["-n", "2", "--launcher", "torchrun", "--max-restarts", "2", "--dry-run",
                        "python", "x.py"]) == 0
    line = capsys.readouterr().out
    assert "--max-restarts 2 --no-python python x.py" in line, line
    with pytest.raises(SystemExit):
        launch.main(["-n", "2", "--max-restarts", "-1", "python", "x.py"])


# ------------------------------------------------------------------ dist_async, remote
def test_dist_async_across_hosts_needs_the_acknowledging_setting():
    from neogluon.base import MXNetError
    from neogluon.kvstore._dist_env import check_remote_async
    for addr in ("127.0.0.1", "127.0.1.1", "localhost", "::1", "[::1]"):
        check_remote_async({"MASTER_ADDR": addr})
    check_remote_async({})                                      # one process: no address
    for env in ({"MASTER_ADDR": "10.1.2.3"}, {"DMLC_PS_ROOT_URI": "192.168.7.7"},
                {"MASTER_ADDR": "10.1.2.3", "NEOGLUON_ALLOW_REMOTE_ASYNC": "0"}):
        with pytest.raises(MXNetError, match="NEOGLUON_ALLOW_REMOTE_ASYNC=1"):
            check_remote_async(env)
    check_remote_async({"MASTER_ADDR": "10.1.2.3", "NEOGLUON_ALLOW_REMOTE_ASYNC": "1"})


@pytest.mark.timeout(60)
def test_dist_async_store_refuses_a_remote_rendezvous_before_any_network():
    code = ("import neogluon as mx\n"
            "try:\n"
            "    mx.kv.create('dist_async')\n"
            "except mx.base.MXNetError as e:\n"
            "    print('REFUSED', e)\n")
    env = _env(RANK="1", WORLD_SIZE="2", MASTER_ADDR="10.255.1.2", MASTER_PORT="1",
               NEOGLUON_KVSTORE_TIMEOUT="600")
    t0 = time.monotonic()
    p = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=50, env=env,
                       cwd=ROOT)
    assert p.stdout.startswith("REFUSED dist_async:"), p.stdout + p.stderr[-2000:]
    assert "MASTER_ADDR='10.255.1.2'" in p.stdout and "NEOGLUON_ALLOW_REMOTE_ASYNC=1" in p.stdout
    assert time.monotonic() - t0 < 45      # not the 600 s rendezvous timeout


# ------------------------------------------------------------- checkpoint sets, one process
def _net_and_trainer():
    from neogluon import gluon
    import neogluon as mx
    mx.random.seed(3)
    net = gluon.nn.Dense(3, in_units=4)
    net.initialize()
    return net, gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1,
                                                            "momentum": 0.9})


def _train(net, trainer, n=1):
    import neogluon as mx
    from neogluon import autograd
    for _ in range(n):
        with autograd.record():
            loss = (net(mx.nd.ones((2, 4))) ** 2).sum()
        loss.backward()
        trainer.step(2)


def test_checkpoint_sets_latest_complete_one_wins_and_old_ones_are_pruned(tmp_path):
    from neogluon.base import MXNetError
    from neogluon.contrib import checkpoint
    d = str(tmp_path / "ck")
    assert checkpoint.latest_checkpoint(d) is None
    net, tr = _net_and_trainer()
    assert checkpoint.load_checkpoint(d, net, tr) is None
    saved = {}
    for step in range(1, 5):
        _train(net, tr)
        checkpoint.save_checkpoint(d, step, net, tr, keep=3, extra={"epoch": step})
        saved[step] = net.weight.data().asnumpy()
    names = sorted(os.listdir(d))
    assert [n for n in names if n.endswith(".json")] == \
        ["step-00000002.json", "step-00000003.json", "step-00000004.json"]
    assert len(names) == 9, names                        # 3 sets of 3 files, nothing else
    ck = checkpoint.latest_checkpoint(d)
    assert ck.step == 4 and ck.extra == {"epoch": 4} and ck.world_size == 1
    # a damaged newest set (a file of another size, or other bytes) is skipped
    with open(ck.params, "ab") as f:
        f.write(b"x")
    assert checkpoint.latest_checkpoint(d).step == 3
    c3 = checkpoint.latest_checkpoint(d)
    with open(c3.states, "r+b") as f:
        first = f.read(1)
        f.seek(0)
        f.write(bytes([first[0] ^ 1]))
    assert checkpoint.latest_checkpoint(d).step == 2
    assert checkpoint.latest_checkpoint(d, verify=False).step == 3
    # an unreadable manifest is skipped too
    with open(os.path.join(d, "step-00000009.json"), "w") as f:
        f.write('{"format": "neogluon-checkpoint", "files": ')
    net2, tr2 = _net_and_trainer()
    assert checkpoint.load_checkpoint(d, net2, tr2) == 2
    np.testing.assert_array_equal(net2.weight.data().asnumpy(), saved[2])
    # the resumed run continues with the uninterrupted run's numbers
    net3, tr3 = _net_and_trainer()
    _train(net3, tr3, 2)                                 # net3 is where the set was taken
    _train(net2, tr2, 2)
    _train(net3, tr3, 2)
    np.testing.assert_array_equal(net2.weight.data().asnumpy(), net3.weight.data().asnumpy())
    # a leftover temporary file of a killed writer is removed at the next save
    dead = subprocess.Popen([PY, "-c", "pass"])
    dead.wait()
    junk = os.path.join(d, f".tmp-step-00000011-abcd.params.{dead.pid}.x1y2")
    open(junk, "w").close()
    checkpoint.save_checkpoint(d, 11, net2, tr2, keep=1)
    assert sorted(os.listdir(d)) == sorted(
        ["step-00000011.json"] + [os.path.basename(p) for p in
                                  (checkpoint.latest_checkpoint(d).params,
                                   checkpoint.latest_checkpoint(d).states)])
    with pytest.raises(MXNetError, match="keep must be at least 1"):
        checkpoint.save_checkpoint(d, 12, net2, tr2, keep=0)
    with pytest.raises(MXNetError, match="step must be >= 0"):
        checkpoint.save_checkpoint(d, -1, net2, tr2)
