"""``python -m neogluon.launch``: local workers of plain torch.distributed scripts (env contract,
output, exit codes, a failing worker, the grace period and the kill path, signals), the -s note,
and the ssh / mpi / torchrun command lines (``--dry-run``; ssh and mpi cannot run here)."""
import os
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from neogluon import launch

PY = sys.executable
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONTRACT = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
            "DMLC_ROLE", "DMLC_NUM_WORKER", "DMLC_NUM_SERVER", "DMLC_PS_ROOT_URI",
            "DMLC_PS_ROOT_PORT")


def _env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in CONTRACT and not k.startswith(("TORCHELASTIC", "OMPI_", "PMI_"))}
    env["OMP_NUM_THREADS"] = "1"
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("NEOGLUON_KVSTORE_TIMEOUT", None)
    env.update(extra)
    return env


def _launch(args, timeout=60, env=None, cwd=None):
    t0 = time.monotonic()
    try:
        p = subprocess.run([PY, "-m", "neogluon.launch"] + list(args), capture_output=True,
                           text=True, timeout=timeout, env=env or _env(), cwd=cwd or ROOT)
    except subprocess.TimeoutExpired as e:
        # a launcher that does not end is the failure under test: show what it had said
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) \
            else (e.stdout or "")
        err = (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) \
            else (e.stderr or "")
        pytest.fail(f"the launcher had not ended after {timeout} s\nstdout:\n{out[-3000:]}"
                    f"\nstderr:\n{err[-3000:]}")
    p.elapsed = time.monotonic() - t0
    return p


def _script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


ALLREDUCE = """
    import os, sys
    from datetime import timedelta
    import torch, torch.distributed as dist
    dist.init_process_group("gloo", timeout=timedelta(seconds=30))
    t = torch.tensor([float(dist.get_rank() + 1)])
    dist.all_reduce(t)
    env = " ".join(f"{k}={os.environ[k]}" for k in sys.argv[1].split(","))
    # one write per line: several workers share the launcher's stdout
    sys.stdout.write(f"OK rank={dist.get_rank()} world={dist.get_world_size()} sum={t.item():g} "
                     f"{env} args={sys.argv[2:]}\\n")
    sys.stdout.flush()
    dist.destroy_process_group()
"""


def _ok_lines(out):
    lines = [ln for ln in out.splitlines() if "OK rank=" in ln]
    return {int(re.search(r"OK rank=(\d+)", ln).group(1)): ln for ln in lines}


def _fields(line):
    return dict(w.split("=", 1) for w in line.split() if "=" in w and not w.startswith("args="))


@pytest.mark.timeout(90)
@pytest.mark.parametrize("n", [2, 3])
def test_local_workers_get_the_env_contract_and_all_reduce(tmp_path, n):
    script = _script(tmp_path, "w.py", ALLREDUCE)
    p = _launch(["-n", str(n), "--launcher", "local", PY, script, ",".join(CONTRACT),
                 "-n", "7", "--flag"])
    assert p.returncode == 0, p.stderr
    lines = _ok_lines(p.stdout)
    assert sorted(lines) == list(range(n)), p.stdout
    ports = set()
    for r, line in lines.items():
        f = _fields(line)
        assert f["world"] == str(n) and f["sum"] == str(n * (n + 1) // 2)
        assert f["RANK"] == str(r) and f["LOCAL_RANK"] == str(r)
        assert f["WORLD_SIZE"] == f["LOCAL_WORLD_SIZE"] == f["DMLC_NUM_WORKER"] == str(n)
        assert f["DMLC_NUM_SERVER"] == str(n)          # MXNet's default: as many as workers
        assert f["DMLC_ROLE"] == "worker"
        assert f["MASTER_ADDR"] == f["DMLC_PS_ROOT_URI"] == "127.0.0.1"
        assert f["MASTER_PORT"] == f["DMLC_PS_ROOT_PORT"]
        ports.add(f["MASTER_PORT"])
        # the command's own options stay the command's
        assert "args=['-n', '7', '--flag']" in line
    assert len(ports) == 1
    assert "neogluon.launch" not in p.stderr


@pytest.mark.timeout(60)
def test_tag_output_prefixes_lines_and_one_word_command_runs_in_the_shell(tmp_path):
    script = _script(tmp_path, "w.py", ALLREDUCE)
    cmd = f"{shlex.quote(PY)} {shlex.quote(script)} RANK,DMLC_PS_ROOT_PORT 'a b' && echo shell-ran"
    p = _launch(["-n", "2", "--tag-output", cmd])
    assert p.returncode == 0, p.stderr
    for r in range(2):
        assert re.search(rf"^\[{r}\] OK rank={r} .*args=\['a b'\]$", p.stdout, re.M), p.stdout
        assert f"[{r}] shell-ran" in p.stdout


@pytest.mark.timeout(60)
def test_servers_note_and_num_server(tmp_path):
    script = _script(tmp_path, "w.py", ALLREDUCE)
    p = _launch(["-n", "2", "-s", "3", PY, script, "DMLC_NUM_SERVER"])
    assert p.returncode == 0, p.stderr
    notes = [ln for ln in p.stderr.splitlines() if "server" in ln]
    assert len(notes) == 1 and "-s 3" in notes[0] and "no server processes" in notes[0]
    assert all(_fields(ln)["DMLC_NUM_SERVER"] == "3" for ln in _ok_lines(p.stdout).values())


@pytest.mark.timeout(60)
def test_env_options_reach_the_workers(tmp_path):
    script = _script(tmp_path, "e.py", """
        import os, sys
        sys.stdout.write(" ".join(["ENV", os.environ["RANK"], os.environ.get("FOO"),
                                   os.environ.get("BAR"), os.environ.get("BAZ")]) + "\\n")
    """)
    p = _launch(["-n", "2", "--env-worker", "FOO:1,BAR:x:y", "--env", "BAZ", PY, script],
                env=_env(BAZ="from-here"))
    assert p.returncode == 0, p.stderr
    assert sorted(ln for ln in p.stdout.splitlines() if ln.startswith("ENV")) == [
        "ENV 0 1 x:y from-here", "ENV 1 1 x:y from-here"]


@pytest.mark.timeout(60)
def test_failing_worker_is_named_and_its_code_returned(tmp_path):
    # rank 1 fails; the others notice on their own (as a store's collective would) and exit 1
    script = _script(tmp_path, "fail.py", """
        import os, sys, time
        r = int(os.environ["RANK"])
        if r == 1:
            time.sleep(0.3)
            print("rank 1 is failing", flush=True)
            sys.exit(3)
        time.sleep(1.5)
        sys.exit(1)
    """)
    p = _launch(["-n", "3", "--grace", "20", PY, script])
    assert p.returncode == 3, p.stderr
    assert "rank 1 failed (exit code 3); giving the other 2 worker(s) 20 s" in p.stderr
    assert "job failed: rank 1 failed first (exit code 3)" in p.stderr
    assert "stopped by the launcher" not in p.stderr      # they exited within the grace period
    assert p.elapsed < 20


@pytest.mark.timeout(150)
def test_killed_worker_ends_the_job_and_hanging_workers_are_killed(tmp_path):
    # rank 0 kills itself with SIGKILL after an all_reduce; rank 1 ignores SIGTERM and sleeps
    # forever: after the grace period the launcher SIGTERMs, then SIGKILLs it
    script = _script(tmp_path, "hang.py", """
        import os, signal, time
        from datetime import timedelta
        import torch, torch.distributed as dist
        dist.init_process_group("gloo", timeout=timedelta(seconds=30))
        t = torch.ones(1)
        dist.all_reduce(t)
        print("after all_reduce", dist.get_rank(), flush=True)
        if dist.get_rank() == 0:
            time.sleep(0.2)
            os.kill(os.getpid(), signal.SIGKILL)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(1)
    """)
    p = _launch(["-n", "2", "--grace", "1", "--kill-timeout", "1", PY, script], timeout=120)
    assert p.returncode == 128 + signal.SIGKILL, p.stderr
    assert "rank 0 failed (killed by SIGKILL)" in p.stderr
    assert "stopping rank 1: still running 1 s after rank 0 failed" in p.stderr
    assert "rank 1: killed by SIGKILL (stopped by the launcher)" in p.stderr
    assert "job failed: rank 0 failed first (killed by SIGKILL)" in p.stderr
    assert p.stdout.count("after all_reduce") == 2
    assert p.elapsed < 30


@pytest.mark.timeout(60)
def test_a_stopped_worker_is_killed_too(tmp_path):
    # rank 1 fails; rank 0 has SIGSTOPped itself (a hung process): SIGTERM alone would not end
    # it, and waiting for it to report is pointless
    script = _script(tmp_path, "stop.py", """
        import os, signal, sys, time
        if os.environ["RANK"] == "0":
            os.kill(os.getpid(), signal.SIGSTOP)
            time.sleep(60)
        time.sleep(0.5)
        sys.exit(5)
    """)
    p = _launch(["-n", "2", "--grace", "30", "--kill-timeout", "2", PY, script])
    assert p.returncode == 5, p.stderr
    assert "job failed: rank 1 failed first (exit code 5)" in p.stderr
    # a stopped process cannot report anything: no use waiting out the grace period
    assert "stopping rank 0: stopped (not running) after rank 1 failed" in p.stderr
    assert re.search(r"rank 0: (killed by SIG\w+|exit code -?\d+) \(stopped by the launcher\)",
                     p.stderr), p.stderr
    assert p.elapsed < 30


@pytest.mark.timeout(60)
def test_a_stopped_worker_left_alone_ends_the_job(tmp_path):
    # nobody failed, but rank 0 is stopped and the others have ended: no silent hang
    script = _script(tmp_path, "alone.py", """
        import os, signal, time
        if os.environ["RANK"] == "0":
            os.kill(os.getpid(), signal.SIGSTOP)
            time.sleep(60)
    """)
    p = _launch(["-n", "2", "--grace", "1", "--kill-timeout", "2", PY, script])
    assert p.returncode == 128 + signal.SIGTERM, p.stderr
    assert "rank 0 stopped (not running) while the other workers have ended" in p.stderr
    assert "rank 0: killed by SIGTERM (stopped by the launcher), rank 1: exit code 0" in p.stderr
    assert p.elapsed < 30


@pytest.mark.timeout(60)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_to_the_launcher_ends_the_workers(tmp_path, sig):
    script = _script(tmp_path, "sleep.py", f"""
        import os, time
        with open(os.path.join({str(tmp_path)!r}, "pid" + os.environ["RANK"]), "w") as f:
            f.write(str(os.getpid()))
        time.sleep(120)
    """)
    proc = subprocess.Popen([PY, "-m", "neogluon.launch", "-n", "2", "--kill-timeout", "2", PY,
                             script], env=_env(), cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        pidfiles = [tmp_path / "pid0", tmp_path / "pid1"]
        end = time.monotonic() + 40
        while not all(f.exists() and f.read_text() for f in pidfiles):
            assert time.monotonic() < end, "workers did not start"
            assert proc.poll() is None
            time.sleep(0.1)
        pids = [int(f.read_text()) for f in pidfiles]
        t0 = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + sig, err
    assert f"got {signal.Signals(sig).name}: stopping 2 worker(s)" in err
    assert time.monotonic() - t0 < 10
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.timeout(60)
def test_torchrun_launcher(tmp_path):
    script = _script(tmp_path, "w.py", ALLREDUCE)
    p = _launch(["-n", "2", "--launcher", "torchrun", PY, script, ",".join(CONTRACT)])
    assert p.returncode == 0, p.stderr
    lines = _ok_lines(p.stdout)
    assert sorted(lines) == [0, 1], p.stdout + p.stderr
    for r, line in lines.items():
        f = _fields(line)
        assert f["RANK"] == str(r) and f["DMLC_ROLE"] == "worker" and f["DMLC_NUM_WORKER"] == "2"
        assert f["DMLC_PS_ROOT_PORT"] == f["MASTER_PORT"]


# ------------------------------------------------------------------------- command lines only
@pytest.fixture
def run_main(capsys, monkeypatch):
    """``launch.main`` in this process (for what starts no worker): (rc, stdout, stderr)."""
    monkeypatch.chdir(ROOT)
    for k in CONTRACT + ("NEOGLUON_KVSTORE_TIMEOUT",):
        monkeypatch.delenv(k, raising=False)

    def run(args, **env):
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        capsys.readouterr()
        try:
            rc = launch.main(list(args))
        except SystemExit as exc:         # argparse
            rc = exc.code
        out, err = capsys.readouterr()
        return rc, out, err
    return run


@pytest.fixture
def dry(run_main):
    def run(args, **env):
        rc, out, err = run_main(["--dry-run"] + list(args), **env)
        assert rc == 0, err
        return out.splitlines()
    return run


def _ssh_parts(line):
    argv = shlex.split(line)
    assert argv[:3] == ["ssh", "-o", "StrictHostKeyChecking=no"] and argv[3] == "-p"
    port, host, remote = argv[4], argv[5], argv[6]
    exports, _, rest = remote.partition("; ")
    assert exports.startswith("export ")
    env = dict(w.split("=", 1) for w in shlex.split(exports[len("export "):]))
    return host, port, env, rest


@pytest.mark.timeout(30)
def test_ssh_dry_run(tmp_path, dry):
    hosts = tmp_path / "hosts"
    hosts.write_text("# workers\nnode-a\n\nnode-b:2222   # second\n")
    lines = dry(["-n", "3", "-H", str(hosts), "--env-worker", "FOO:a b", "python", "train.py",
                 "--lr", "0.1"], OMP_NUM_THREADS="2", NEOGLUON_KVSTORE_TIMEOUT="30")
    assert len(lines) == 3                       # ssh is the default launcher with -H
    placed = []
    for r, line in enumerate(lines):
        host, port, env, rest = _ssh_parts(line)
        placed.append((host, port))
        assert env["RANK"] == str(r) and env["WORLD_SIZE"] == "3"
        assert env["MASTER_ADDR"] == env["DMLC_PS_ROOT_URI"] == "node-a"
        assert env["MASTER_PORT"] == env["DMLC_PS_ROOT_PORT"] == "29500"
        assert env["DMLC_ROLE"] == "worker" and env["DMLC_NUM_WORKER"] == "3"
        assert env["DMLC_NODE_HOST"] == host
        assert env["FOO"] == "a b" and env["OMP_NUM_THREADS"] == "2"
        assert env["NEOGLUON_KVSTORE_TIMEOUT"] == "30"
        assert rest == f"cd {shlex.quote(ROOT)} && python train.py --lr 0.1"
        if r == 0:
            assert env["LOCAL_RANK"] == "0" and env["LOCAL_WORLD_SIZE"] == "2"
        if r == 2:
            assert env["LOCAL_RANK"] == "1" and env["LOCAL_WORLD_SIZE"] == "2"
        if r == 1:
            assert env["LOCAL_RANK"] == "0" and env["LOCAL_WORLD_SIZE"] == "1"
    assert placed == [("node-a", "22"), ("node-b", "2222"), ("node-a", "22")]


@pytest.mark.timeout(60)
def test_ssh_dry_run_with_sync_dir_and_master_port(tmp_path, dry):
    hosts = tmp_path / "hosts"
    hosts.write_text("10.0.0.1\n10.0.0.2:2200\n")
    lines = dry(["-n", "2", "--launcher", "ssh", "-H", str(hosts), "--sync-dst-dir", "/tmp/job",
                 "--master-port", "4000", "python train.py > log.txt"])
    assert [shlex.split(ln)[:4] for ln in lines[:2]] == [
        ["rsync", "-az", "-e", "ssh -o StrictHostKeyChecking=no -p 22"],
        ["rsync", "-az", "-e", "ssh -o StrictHostKeyChecking=no -p 2200"]]
    assert shlex.split(lines[0])[4:] == [ROOT + "/", "10.0.0.1:/tmp/job"]
    assert shlex.split(lines[1])[4:] == [ROOT + "/", "10.0.0.2:/tmp/job"]
    host, port, env, rest = _ssh_parts(lines[3])
    assert (host, port) == ("10.0.0.2", "2200")
    assert env["MASTER_ADDR"] == "10.0.0.1" and env["MASTER_PORT"] == "4000"
    assert rest == "cd /tmp/job && python train.py > log.txt"   # one word: shell text


@pytest.mark.timeout(60)
def test_ssh_needs_a_hostfile(tmp_path, run_main):
    rc, _, err = run_main(["-n", "2", "--launcher", "ssh", "python", "x.py"])
    assert rc == 2 and "needs a hostfile" in err
    empty = tmp_path / "hosts"
    empty.write_text("\n# nothing\n")
    rc, _, err = run_main(["-n", "2", "-H", str(empty), "python", "x.py"])
    assert rc == 2 and "lists no hosts" in err


@pytest.mark.timeout(60)
def test_mpi_dry_run(tmp_path, dry):
    hosts = tmp_path / "hosts"
    hosts.write_text("gpu1 slots=8\ngpu2 slots=8\n")
    (line,) = dry(["-n", "4", "--launcher", "mpi", "-H", str(hosts), "--env-worker", "X:1",
                   "python", "train.py", "--kv-store", "dist_sync"])
    argv = shlex.split(line)
    assert argv[:5] == ["mpirun", "-n", "4", "--hostfile", str(hosts)]
    assert argv[5] == "env"
    i = argv.index(PY)
    env = dict(a.split("=", 1) for a in argv[6:i])
    assert env["X"] == "1" and env["WORLD_SIZE"] == "4" and env["DMLC_NUM_WORKER"] == "4"
    assert env["MASTER_ADDR"] == env["DMLC_PS_ROOT_URI"] == "gpu1"
    assert env["MASTER_PORT"] == "29500" and env["DMLC_ROLE"] == "worker"
    assert "RANK" not in env and "LOCAL_RANK" not in env       # set per rank by the shim
    assert argv[i:] == [PY, "-m", "neogluon.launch", "--from-mpi-env", "--", "python", "train.py",
                        "--kv-store", "dist_sync"]
    (line,) = dry(["-n", "2", "--launcher", "mpi", "python", "t.py"])
    argv = shlex.split(line)
    assert argv[:4] == ["mpirun", "-n", "2", "env"] and "MASTER_ADDR=127.0.0.1" in argv


@pytest.mark.timeout(60)
def test_from_mpi_env_shim_sets_ranks_and_runs_the_command(run_main):
    code = ("import os; print(*(os.environ[k] for k in "
            "('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'LOCAL_WORLD_SIZE')))")
    p = _launch(["--from-mpi-env", "--", PY, "-c", code],
                env=_env(OMPI_COMM_WORLD_RANK="3", OMPI_COMM_WORLD_SIZE="4",
                         OMPI_COMM_WORLD_LOCAL_RANK="1", OMPI_COMM_WORLD_LOCAL_SIZE="2"))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "3 4 1 2"
    rc, _, err = run_main(["--from-mpi-env", PY, "-c", "pass"])
    assert rc == 2 and "OMPI_COMM_WORLD_RANK" in err


@pytest.mark.parametrize("mpi_env, expect", [
    ({"PMI_RANK": "2", "PMI_SIZE": "3", "MPI_LOCALRANKID": "0", "MPI_LOCALNRANKS": "1"},
     {"RANK": "2", "WORLD_SIZE": "3", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1"}),
    ({"PMI_RANK": "1", "DMLC_NUM_WORKER": "2"},
     {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1"}),
    ({"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1"},
     {"RANK": "5", "WORLD_SIZE": "8", "LOCAL_RANK": "1"}),
    ({}, {}),
])
def test_mpi_rank_env(mpi_env, expect):
    assert launch.mpi_rank_env(mpi_env) == expect


@pytest.mark.timeout(60)
def test_torchrun_and_local_dry_run(dry):
    (line,) = dry(["-n", "2", "--launcher", "torchrun", "--master-port", "4567", "python", "t.py"])
    assert "DMLC_ROLE=worker" in line and "DMLC_PS_ROOT_PORT=4567" in line
    assert shlex.join([PY, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc-per-node",
                       "2", "--master-addr", "127.0.0.1", "--master-port", "4567", "--no-python",
                       "python", "t.py"]) in line
    lines = dry(["-n", "2", "python", "t.py"])
    assert len(lines) == 2 and "RANK=1" in lines[1] and lines[1].endswith("python t.py")


@pytest.mark.timeout(60)
def test_refusals(run_main):
    rc, _, err = run_main(["-n", "2", "--launcher", "yarn", "python", "t.py"])
    assert rc == 2 and "yarn launcher is not provided" in err
    rc, _, err = run_main(["-n", "2", "--p3", "python", "t.py"])
    assert rc == 2 and "--p3" in err
    rc, _, err = run_main(["-n", "0", "python", "t.py"])
    assert rc == 2 and "at least 1" in err
    rc, _, err = run_main(["-n", "2", "python", "t.py"], NEOGLUON_KVSTORE_TIMEOUT="soon")
    assert rc == 2 and "NEOGLUON_KVSTORE_TIMEOUT" in err and "'soon'" in err
    rc, _, err = run_main(["-n", "2", "--env-worker", "FOO", "python", "t.py"])
    assert rc == 2 and "VARIABLE:VALUE" in err
    rc, _, err = run_main(["-n", "2", "--env", "NOT_SET_ANYWHERE_42", "python", "t.py"])
    assert rc == 2 and "NOT_SET_ANYWHERE_42" in err


def test_split_keeps_the_commands_options():
    parser = launch.build_parser()
    assert launch._split(parser, ["-n", "2", "python", "a.py", "-n", "5"]) == (
        ["-n", "2"], ["python", "a.py", "-n", "5"])
    assert launch._split(parser, ["-n2", "--launch", "local", "--tag-output", "--", "-x"]) == (
        ["-n2", "--launch", "local", "--tag-output"], ["-x"])
    assert launch._split(parser, ["--num-workers=2", "--env", "A:1", "cmd"]) == (
        ["--num-workers=2", "--env", "A:1"], ["cmd"])
    a = launch._parse(["-n", "2", "python", "a.py", "--launcher", "ssh"])
    assert a.launcher == "local" and a.command == ["python", "a.py", "--launcher", "ssh"]


def test_parse_hostfile(tmp_path):
    f = tmp_path / "h"
    f.write_text("a\n b:23 \n[::1]:2022\n# c\nd slots=2\n")
    assert launch.parse_hostfile(str(f)) == [("a", "22"), ("b", "23"), ("::1", "2022"),
                                            ("d", "22")]
    f.write_text("a:b\n")
    with pytest.raises(launch._UsageError, match="line 1"):
        launch.parse_hostfile(str(f))


@pytest.mark.timeout(60)
def test_python_in_the_command_is_the_launchers_interpreter():
    # Run from a venv without activating it: `python` in the command must be that venv's
    # interpreter (with neogluon), not the first `python` on PATH.
    env = _env(PATH=os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                                    if os.path.dirname(PY) != p))
    p = _launch(["-n", "2", "python", "-c",
                 "import sys, neogluon; print('exe', sys.executable, flush=True)"], env=env)
    assert p.returncode == 0, p.stderr
    exes = [line.split()[1] for line in p.stdout.splitlines() if line.startswith("exe ")]
    assert len(exes) == 2
    assert all(os.path.dirname(e) == os.path.dirname(PY) for e in exes), exes
