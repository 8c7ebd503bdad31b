"""Faults in distributed jobs: ``neogluon.kvstore._faults`` against a real in-process TCPStore
(timeout setting, heartbeats, the errors that name a missing rank, bounded reads even when the
store's host is gone or stopped), and whole jobs through ``python -m neogluon.launch``: a worker
killed with SIGKILL mid-training, and one that stops answering (SIGSTOP)."""
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from datetime import timedelta

import pytest
import torch.distributed as dist

from neogluon.base import MXNetError
from neogluon.kvstore import _faults

PY = sys.executable
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

GLOO_CLOSED = ("[../third_party/gloo/gloo/transport/tcp/pair.cc:537] Read error "
               "[127.0.0.1]:42715: Connection reset by peer")
GLOO_TIMEOUT = ("[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out "
                "waiting 10000ms for recv operation to complete")


# --------------------------------------------------------------------------- timeout setting
@pytest.mark.parametrize("raw, value", [(None, 300.0), ("", 300.0), ("10", 10.0), (" 2.5 ", 2.5),
                                        ("1e3", 1000.0)])
def test_timeout_seconds(raw, value):
    env = {} if raw is None else {"NEOGLUON_KVSTORE_TIMEOUT": raw}
    assert _faults.timeout_seconds(env) == value


@pytest.mark.parametrize("raw", ["abc", "0", "-3", "inf", "nan", "10s"])
def test_timeout_seconds_rejects(raw, monkeypatch):
    monkeypatch.setenv("NEOGLUON_KVSTORE_TIMEOUT", raw)
    with pytest.raises(MXNetError, match=rf"NEOGLUON_KVSTORE_TIMEOUT must be a positive number "
                                         rf".*got '{re.escape(raw)}'"):
        _faults.timeout_seconds()


# ---------------------------------------------------------------------------------- heartbeats
@pytest.fixture
def store():
    s = dist.TCPStore("127.0.0.1", 0, None, True, timeout=timedelta(seconds=5),
                      wait_for_workers=False)
    yield s
    del s


def _value(store, key):
    return store.get(key).decode()


@pytest.mark.timeout(30)
def test_heartbeat_writes_wall_time_and_marks_exit(store):
    hb = _faults.start_heartbeat(dist.PrefixStore("pg", store), 1, 3, interval=0.05)
    try:
        assert hb.running and hb.error is None
        first = float(_value(store, "neogluon/hb/1"))   # written before start_heartbeat returns
        assert abs(first - time.time()) < 5
        assert _value(store, "neogluon/hb/1/who") == f"{os.getpid()} {os.uname().nodename}"
        time.sleep(0.3)
        assert float(_value(store, "neogluon/hb/1")) > first
        assert not store.check(["neogluon/hb/1/exited"])
    finally:
        hb.stop()
    assert not hb.running
    assert store.check(["neogluon/hb/1/exited"])
    beat = _value(store, "neogluon/hb/1")
    time.sleep(0.2)
    assert _value(store, "neogluon/hb/1") == beat       # no more beats
    hb.stop()                                          # twice is fine
    ages = _faults.heartbeat_ages(store, 3)
    assert ages == {0: None, 2: None}                  # rank 1 ended, 0 and 2 never beat


@pytest.mark.timeout(30)
def test_heartbeat_stops_quietly_when_the_store_goes_away(capfd):
    host = dist.TCPStore("127.0.0.1", 0, None, True, timeout=timedelta(seconds=5),
                         wait_for_workers=False)
    client = dist.TCPStore("127.0.0.1", host.port, None, False, timeout=timedelta(seconds=5))
    hb = _faults.start_heartbeat(client, 0, 2, interval=0.05)
    assert hb.running
    del host                                           # the rendezvous host is gone
    end = time.monotonic() + 15
    while hb.running and time.monotonic() < end:
        time.sleep(0.05)
    assert not hb.running and hb.error is not None
    hb.stop()                                          # cannot mark the exit: no error either
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.timeout(30)
def test_heartbeat_that_cannot_connect_does_not_raise():
    port = _free_port()
    fake = dist.HashStore()
    hb = _faults.start_heartbeat(fake, 0, 2, interval=0.05)  # a local store works directly
    assert hb.running
    hb.stop()

    class Broken:
        def set(self, *a):
            raise RuntimeError("store down")

        def check(self, *a):
            raise RuntimeError("store down")
    hb = _faults.start_heartbeat(Broken(), 0, 2, interval=0.05)
    assert not hb.running and "store down" in str(hb.error)
    with pytest.raises(MXNetError, match="interval"):
        _faults.start_heartbeat(fake, 0, 2, interval=0)
    assert port > 0


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------- describe_failure
def _beats(store, ranks, interval=0.05):
    return {r: _faults.start_heartbeat(store, r, 3, interval=interval) for r in ranks}


@pytest.mark.timeout(30)
def test_a_dead_rank_is_named(store):
    hbs = _beats(store, [0, 1, 2])
    try:
        hbs[2].stop(mark_exit=False)                   # as if SIGKILLed: beats just stop
        time.sleep(0.3)
        exc = RuntimeError(GLOO_CLOSED)
        t0 = time.monotonic()
        err = _faults.describe_failure(exc, "push", [3], store, 0, 3, 10.0, interval=0.05)
        assert time.monotonic() - t0 < 3
    finally:
        for hb in hbs.values():
            hb.stop()
    assert isinstance(err, MXNetError) and err.__cause__ is exc
    msg = str(err)
    assert msg.startswith("kvstore push (key 3) failed on rank 0 of 3: rank 2 stopped answering "
                          "(last heartbeat ")
    assert re.search(rf"last heartbeat \d+\.\d s ago; pid {os.getpid()} on ", msg)
    assert "timed out" not in msg
    assert GLOO_CLOSED in msg                           # the original message stays


@pytest.mark.timeout(30)
def test_a_timeout_names_stopped_and_ended_ranks(store):
    hbs = _beats(store, [0, 1, 2, 3][:3])
    try:
        hbs[1].stop(mark_exit=True)                    # its program ended
        hbs[2].stop(mark_exit=False)                   # stopped answering
        err = _faults.describe_failure(TimeoutError(GLOO_TIMEOUT), "pushpull", ["w", "b"], store,
                                       0, 3, 10, interval=0.05)
    finally:
        for hb in hbs.values():
            hb.stop()
    msg = str(err)
    assert msg.startswith("kvstore pushpull (keys 'w', 'b') failed on rank 0 of 3: timed out "
                          "after 10 s waiting for ranks [1, 2]: rank 2 stopped answering")
    assert "rank 1 already ended its program" in msg


@pytest.mark.timeout(30)
def test_a_timeout_with_every_rank_alive(store):
    hbs = _beats(store, [0, 1, 2])
    try:
        err = _faults.describe_failure(RuntimeError(GLOO_TIMEOUT), "barrier", None, store, 1, 3,
                                       2.5, interval=0.05)
    finally:
        for hb in hbs.values():
            hb.stop()
    msg = str(err)
    assert msg.startswith("kvstore barrier failed on rank 1 of 3: timed out after 2.5 s waiting "
                          "for the other ranks; all 3 ranks are still alive")
    assert "NEOGLUON_KVSTORE_TIMEOUT" in msg


@pytest.mark.timeout(30)
def test_never_started_ranks_and_many_keys(store):
    hbs = _beats(store, [0])
    try:
        err = _faults.describe_failure(ConnectionResetError("peer gone"), "init", list(range(9)),
                                       store, 0, 3, 10, interval=0.05)
    finally:
        hbs[0].stop()
    msg = str(err)
    assert "(keys 0, 1, 2, 3, 4, 5, ... (9 keys))" in msg
    assert "ranks [1, 2] never sent a heartbeat" in msg


@pytest.mark.timeout(30)
def test_no_store():
    exc = RuntimeError(GLOO_TIMEOUT)
    err = _faults.describe_failure(exc, "pull", 5, None, 2, 4, 30)
    assert str(err).startswith("kvstore pull (key 5) failed on rank 2 of 4: timed out after 30 s "
                               "waiting for the other ranks (no heartbeat store")
    assert err.__cause__ is exc


@pytest.mark.timeout(40)
def test_the_rendezvous_host_is_gone():
    host = dist.TCPStore("127.0.0.1", 0, None, True, timeout=timedelta(seconds=5),
                         wait_for_workers=False)
    client = dist.TCPStore("127.0.0.1", host.port, None, False, timeout=timedelta(seconds=5))
    del host
    t0 = time.monotonic()
    err = _faults.describe_failure(RuntimeError(GLOO_CLOSED), "push", [0], client, 1, 2, 10,
                                   interval=0.05)
    assert time.monotonic() - t0 < 12
    assert re.match(r"kvstore push \(key 0\) failed on rank 1 of 2: the rendezvous host \(rank 0, "
                    r"store at 127\.0\.0\.1:\d+\) is unreachable", str(err)), str(err)


@pytest.mark.timeout(40)
def test_the_rendezvous_host_goes_away_during_the_diagnosis():
    import threading
    box = {"host": dist.TCPStore("127.0.0.1", 0, None, True, timeout=timedelta(seconds=5),
                                 wait_for_workers=False)}
    client = dist.TCPStore("127.0.0.1", box["host"].port, None, False,
                           timeout=timedelta(seconds=5))
    client.set("neogluon/hb/0", "%f" % time.time())
    client.set("neogluon/hb/2", "%f" % (time.time() - 12))     # long silent
    threading.Timer(0.3, box.clear).start()                     # rank 0's store goes away
    err = _faults.describe_failure(RuntimeError(GLOO_CLOSED), "push", [1], client, 1, 3, 10,
                                   observe=1.0)
    msg = str(err)
    assert msg.startswith("kvstore push (key 1) failed on rank 1 of 3: rank 2 stopped answering "
                          "(last heartbeat 1"), msg
    assert "the rendezvous host (rank 0) went away while this error was being diagnosed" in msg


@pytest.mark.timeout(60)
def test_a_stopped_rendezvous_host_does_not_hang(tmp_path):
    # the store's host process is SIGSTOPped: it accepts no requests, answers nothing
    code = textwrap.dedent("""
        import sys, time
        from datetime import timedelta
        import torch.distributed as dist
        s = dist.TCPStore("127.0.0.1", 0, None, True, timeout=timedelta(seconds=30),
                          wait_for_workers=False)
        s.set("neogluon/hb/0", "%f" % time.time())
        sys.stdout.write("%d\\n" % s.port); sys.stdout.flush()
        time.sleep(120)
    """)
    proc = subprocess.Popen([PY, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline())
        client = dist.TCPStore("127.0.0.1", port, None, False, timeout=timedelta(seconds=5))
        hb = _faults.start_heartbeat(client, 1, 2, interval=0.05)
        os.kill(proc.pid, signal.SIGSTOP)
        t0 = time.monotonic()
        err = _faults.describe_failure(RuntimeError(GLOO_TIMEOUT), "push", [0], client, 1, 2, 10,
                                       interval=0.05)
        took = time.monotonic() - t0
        t1 = time.monotonic()
        hb.stop()                                      # bounded too
        assert time.monotonic() - t1 < 12
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert took < 15
    # usually the first heartbeat read already gets no answer ("timed out after 10 s; the
    # rendezvous host (rank 0, store at ...) is unreachable"); on a loaded machine that read
    # was once answered before the stop took hold, and the second one was not ("timed out
    # after 10 s waiting for rank 0: rank 0 stopped answering ...; the rendezvous host
    # (rank 0) went away while this error was being diagnosed"): either names the host
    msg = str(err)
    assert "timed out after 10 s" in msg and "the rendezvous host (rank 0" in msg, msg


@pytest.mark.timeout(30)
def test_fault_monitor_guard(store):
    mon = _faults.FaultMonitor(store, 0, 2, timeout=7, interval=0.05)
    other = _faults.start_heartbeat(store, 1, 2, interval=0.05)
    try:
        other.stop(mark_exit=False)
        time.sleep(0.2)
        with pytest.raises(MXNetError, match=r"kvstore push \(key 'w'\) failed on rank 0 of 2: "
                                             r"rank 1 stopped answering") as info:
            with mon.guard("push", ["w"]):
                raise RuntimeError(GLOO_CLOSED)
        assert isinstance(info.value.__cause__, RuntimeError)
        with pytest.raises(MXNetError, match="^already clear$"):
            with mon.guard("push", ["w"]):
                raise MXNetError("already clear")
    finally:
        mon.stop()


# ------------------------------------------------------------------------- whole jobs: faults
TRAIN = """
    import os, signal, sys, time
    import neogluon as mx
    from neogluon import autograd, gluon, nd
    from neogluon.base import MXNetError

    mode, victim = sys.argv[1], int(sys.argv[2])
    kv = mx.kv.create("dist_sync")
    rank = kv.rank
    net = gluon.nn.Dense(4, in_units=8)
    net.initialize(mx.init.Xavier())
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1}, kvstore=kv)
    x = nd.ones((2, 8)) * (rank + 1)

    def say(text):                        # one write per line: the workers share a pipe
        sys.stdout.write(f"rank {rank} {text}\\n")
        sys.stdout.flush()

    t0 = time.monotonic()
    try:
        for step in range(30):
            if step == 5 and rank == victim and mode != "none":
                say(f"goes away ({mode}) at step {step}")
                os.kill(os.getpid(), signal.SIGKILL if mode == "kill" else signal.SIGSTOP)
            with autograd.record():
                loss = net(x).sum()
            loss.backward()
            trainer.step(2)
            time.sleep(0.02)
    except MXNetError as err:
        say(f"MXNetError after {time.monotonic() - t0:.1f} s: {err}")
        sys.exit(1)
    say(f"done {net.weight.data().asnumpy().sum():.6f}")
"""


def _dist_store_available():
    try:
        from neogluon.kvstore import dist as _dist  # noqa: F401
    except ImportError:
        return False
    return True


needs_store = pytest.mark.skipif(not _dist_store_available(),
                                 reason="the dist_sync store (neogluon/kvstore/dist.py) is absent")


def _job(tmp_path, mode, victim, timeout_s, grace=None, n=3, limit=150):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(TRAIN))
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                        "MASTER_PORT") and not k.startswith("DMLC_")}
    env.update(OMP_NUM_THREADS="1", NEOGLUON_KVSTORE_TIMEOUT=str(timeout_s),
               PYTHONPATH=ROOT + os.pathsep + env.get("PYTHONPATH", ""))
    args = [PY, "-m", "neogluon.launch", "-n", str(n)]
    if grace is not None:
        args += ["--grace", str(grace)]
    t0 = time.monotonic()
    p = subprocess.run(args + [PY, str(script), mode, str(victim)], capture_output=True,
                       text=True, timeout=limit, env=env, cwd=ROOT)
    p.elapsed = time.monotonic() - t0
    return p


def _errors(out):
    return {int(m.group(1)): (float(m.group(2)), m.group(3)) for m in
            re.finditer(r"^rank (\d+) MXNetError after ([\d.]+) s: (.*)$", out, re.M)}


@needs_store
@pytest.mark.timeout(180)
def test_training_job_when_a_worker_is_killed(tmp_path):
    p = _job(tmp_path, "kill", 1, timeout_s=10, grace=20)
    errors = _errors(p.stdout)
    assert "rank 1 goes away (kill) at step 5" in p.stdout
    assert sorted(errors) == [0, 2], p.stdout + p.stderr
    for r, (after, msg) in errors.items():
        # named, and well within the timeout: a dead peer closes its connections
        assert re.match(rf"kvstore \w+ .*failed on rank {r} of 3: .*rank 1\b", msg), msg
        assert "rank 1 stopped answering" in msg, msg
        assert after < 10, msg
    assert p.returncode == 128 + signal.SIGKILL, p.stderr
    assert "job failed: rank 1 failed first (killed by SIGKILL)" in p.stderr
    assert "stopped by the launcher" not in p.stderr    # the others ended by themselves
    assert p.elapsed < 90


@needs_store
@pytest.mark.timeout(180)
@pytest.mark.parametrize("victim", [2, 0])
def test_training_job_with_a_worker_that_stops_answering(tmp_path, victim):
    # victim 0 hosts the rendezvous store: the others must neither hang in the collective nor
    # in their exit (a store call to a stopped host blocks forever unless bounded)
    p = _job(tmp_path, "stop", victim, timeout_s=6, grace=30)
    errors = _errors(p.stdout)
    others = sorted(set(range(3)) - {victim})
    assert f"rank {victim} goes away (stop) at step 5" in p.stdout
    assert sorted(errors) == others, p.stdout + p.stderr
    for r, (after, msg) in errors.items():
        if victim == 0:
            assert re.match(rf"kvstore \w+ .*failed on rank {r} of 3: timed out after 6 s; the "
                            rf"rendezvous host \(rank 0, store at 127.0.0.1:\d+\) is unreachable",
                            msg), msg
        else:
            assert re.match(rf"kvstore \w+ .*failed on rank {r} of 3: timed out after 6 s "
                            rf"waiting for rank {victim}: rank {victim} stopped answering",
                            msg), msg
        assert after < 6 + 15, msg
    assert p.returncode != 0
    assert f"stopping rank {victim}: stopped (not running)" in p.stderr
    assert re.search(rf"rank {victim}: killed by SIG(TERM|KILL) \(stopped by the launcher\)",
                     p.stderr), p.stderr
    assert p.elapsed < 90


# ----------------------------------------------- the same, on plain torch.distributed + _faults
PLAIN = """
    import os, signal, sys, time
    from datetime import timedelta
    import torch, torch.distributed as dist
    from neogluon.base import MXNetError
    from neogluon.kvstore import _faults

    timeout = _faults.timeout_seconds()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world,
                          rank == 0, timeout=timedelta(seconds=timeout))
    dist.init_process_group("gloo", store=dist.PrefixStore("pg", store), rank=rank,
                            world_size=world, timeout=timedelta(seconds=timeout))
    mon = _faults.FaultMonitor(store, rank, world, timeout)
    t = torch.ones(4)
    t0 = time.monotonic()
    try:
        for step in range(50):
            if step == 5 and rank == int(sys.argv[2]):
                os.kill(os.getpid(), signal.SIGKILL if sys.argv[1] == "kill" else signal.SIGSTOP)
            with mon.guard("pushpull", [step]):
                dist.all_reduce(t)
            time.sleep(0.02)
    except MXNetError as err:
        sys.stdout.write(f"rank {rank} MXNetError after {time.monotonic() - t0:.1f} s: {err}\\n")
        sys.stdout.flush()
        # As the dist store does at exit: rank 0 hosts the store, so it waits (bounded) until
        # the others have told what they saw.
        try:
            _faults.bounded_call(lambda: store.add("reported", 1), 2)
            end = time.monotonic() + 20
            while rank == 0 and time.monotonic() < end:
                if _faults.bounded_call(lambda: store.add("reported", 0), 5) >= world - 1:
                    break
                time.sleep(0.1)
        except Exception:
            pass
        os._exit(1)
    sys.stdout.write(f"rank {rank} done\\n")
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode, victim", [("kill", 2), ("stop", 1), ("kill", 0), ("stop", 0)])
def test_plain_torch_job_with_fault_monitor(tmp_path, mode, victim):
    script = tmp_path / "plain.py"
    script.write_text(textwrap.dedent(PLAIN))
    env = dict(os.environ, OMP_NUM_THREADS="1", NEOGLUON_KVSTORE_TIMEOUT="5",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.monotonic()
    p = subprocess.run([PY, "-m", "neogluon.launch", "-n", "3", "--grace", "20", PY, str(script),
                        mode, str(victim)], capture_output=True, text=True, timeout=100,
                       env=env, cwd=ROOT)
    elapsed = time.monotonic() - t0
    errors = _errors(p.stdout)
    others = sorted(set(range(3)) - {victim})
    assert sorted(errors) == others, p.stdout + p.stderr
    for r, (after, msg) in errors.items():
        assert f"failed on rank {r} of 3: " in msg
        if victim == 0:       # rank 0 hosts the store: nobody can read heartbeats any more
            assert "the rendezvous host (rank 0, store at 127.0.0.1:" in msg
            assert " is unreachable: rank 0 has probably died or stopped answering" in msg
        else:
            assert f"rank {victim} stopped answering" in msg
        if mode == "stop":
            assert f"timed out after 5 s" in msg
        assert after < 5 + 15
    assert p.returncode != 0
    assert elapsed < 60
