"""Launch a distributed neogluon job, with the options of MXNet 1.9.1's ``tools/launch.py``.

    python -m neogluon.launch -n 2 python train.py                  # 2 local workers
    python -m neogluon.launch -n 4 --launcher ssh -H hosts python train.py
    python -m neogluon.launch -n 4 --launcher mpi -H hosts python train.py
    python -m neogluon.launch -n 2 --launcher torchrun python train.py

Every worker gets the environment that ``mx.kv.create('dist_*')`` reads: RANK, WORLD_SIZE,
LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT (torch.distributed's names, as torchrun
sets them) and MXNet's DMLC_ROLE=worker, DMLC_NUM_WORKER, DMLC_NUM_SERVER, DMLC_PS_ROOT_URI,
DMLC_PS_ROOT_PORT (the same rendezvous address as MASTER_ADDR/MASTER_PORT). There is no network
code here: the workers find each other through torch.distributed's rendezvous on rank 0.

No server or scheduler processes are started: neogluon needs none (the optimizer runs sharded on
the workers), so ``-s`` only sets DMLC_NUM_SERVER.

Launchers
---------
local (the default without ``-H``)
    N worker processes on this machine. Their output is passed through (``--tag-output``
    prefixes each line with ``[rank]``). The launcher watches them: when one exits non-zero or
    is killed, the others get ``--grace`` seconds (default: the collective timeout
    NEOGLUON_KVSTORE_TIMEOUT + 5) to report their own errors and exit; then the rest are
    stopped (SIGTERM, then SIGKILL) and the launcher exits non-zero, naming the first rank that
    failed and its exit code. Ctrl-C or SIGTERM on the launcher is passed to the workers, which
    are killed if they have not exited ``--kill-timeout`` seconds later.
ssh (the default with ``-H``)
    Rank ``i`` runs on host ``i % len(hosts)`` of the hostfile (one ``host`` or ``host:sshport``
    per line, as MXNet's), via ``ssh host 'export ...; cd <dir> && <command>'``; MASTER_ADDR is
    the first host. ``--sync-dst-dir DIR`` first copies the current directory to DIR on every
    host with rsync, and the workers start there; otherwise in this directory's path.
mpi
    One ``mpirun -n N [--hostfile H] env VAR=VAL ... python -m neogluon.launch --from-mpi-env
    <command>``: each rank turns MPI's rank variables (OMPI_COMM_WORLD_RANK, PMI_RANK, ...) into
    RANK / LOCAL_RANK / ... and then runs the command.
torchrun
    ``torchrun --nproc-per-node N --no-python <command>`` on this machine, with the DMLC_*
    variables added.

Restarts
--------
``--max-restarts K`` (local and torchrun launchers): when a worker fails, the others are stopped
at once and the whole group is started again, at most K times, on a fresh rendezvous port, with
``TORCHELASTIC_RESTART_COUNT`` (and ``TORCHELASTIC_MAX_RESTARTS``) set as torchrun's agent sets
them; the torchrun launcher passes the option to torchrun. A signal to the launcher stops the
workers and ends the job without a restart. Scripts resume from their last complete checkpoint
(``neogluon.contrib.checkpoint``; docs/distributed.md).

``--dry-run`` prints what would be run (one line per command, environment included) and exits.

A command given as one argument (``launch.py -n 2 "python train.py --lr 0.1"``) runs through the
shell, as MXNet's launcher runs every command; several arguments are run as they are.
"""
from __future__ import annotations

import argparse
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time

__all__ = ["main", "worker_env", "parse_hostfile", "mpi_rank_env", "free_port"]

_NAME = "neogluon.launch"
_DEFAULT_PORT = 29500
# Variables an ssh launcher forwards to the remote workers when they are set here.
_FORWARD = ("OMP_NUM_THREADS", "LD_LIBRARY_PATH", "DMLC_INTERFACE", "NEOGLUON_KVSTORE_TIMEOUT",
            "GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME", "MXNET_ENGINE_TYPE")


def _note(msg):
    print(f"{_NAME}: {msg}", file=sys.stderr, flush=True)


class _UsageError(Exception):
    pass


# ----------------------------------------------------------------------------------- arguments
def build_parser():
    p = argparse.ArgumentParser(
        prog="python -m neogluon.launch",
        description="Launch a distributed neogluon job (the options of MXNet's tools/launch.py).")
    p.add_argument("-n", "--num-workers", required=True, type=int,
                   help="number of worker processes")
    p.add_argument("-s", "--num-servers", type=int,
                   help="number of parameter servers: neogluon starts none (the optimizer runs "
                        "sharded on the workers); only sets DMLC_NUM_SERVER (default: -n)")
    p.add_argument("-H", "--hostfile", type=str,
                   help="file with one host (or host:sshport) per line; needed by ssh, optional "
                        "for mpi (passed to mpirun --hostfile)")
    p.add_argument("-SH", "--server-hostfile", type=str,
                   help="BytePS server hosts: accepted and ignored (no servers)")
    p.add_argument("--sync-dst-dir", type=str,
                   help="ssh: rsync the current directory to this directory on every host and "
                        "run there")
    p.add_argument("--launcher", type=str, default=None,
                   choices=["local", "ssh", "mpi", "torchrun", "sge", "yarn"],
                   help="how to start the workers (default: ssh with -H, else local)")
    p.add_argument("--env-server", action="append", default=[],
                   help="VAR:VALUE for server processes: accepted and ignored (no servers)")
    p.add_argument("--env-worker", action="append", default=[],
                   help="VAR:VALUE (or a comma-separated list of them) set for every worker")
    p.add_argument("--env", action="append", default=[],
                   help="VAR (its value here) or VAR:VALUE passed to every worker; a "
                        "comma-separated list is accepted. The local launcher passes this "
                        "process's whole environment anyway.")
    p.add_argument("--p3", action="store_true", help="MXNet's P3 parameter server: not available")
    p.add_argument("--byteps-launch", action="store_true", help="BytePS: not available")
    p.add_argument("--scheduler-ip", type=str, help="BytePS scheduler: not available")
    p.add_argument("--scheduler-port", type=int, help="BytePS scheduler: not available")
    g = p.add_argument_group("neogluon")
    g.add_argument("--master-addr", type=str, default=None,
                   help="rendezvous address (local: 127.0.0.1, ssh/mpi: the first host)")
    g.add_argument("--master-port", type=int, default=None,
                   help=f"rendezvous port (local: a free port, ssh/mpi: {_DEFAULT_PORT})")
    g.add_argument("--grace", type=float, default=None,
                   help="seconds the other workers get to exit after one failed, before they "
                        "are stopped (default: NEOGLUON_KVSTORE_TIMEOUT + 5)")
    g.add_argument("--kill-timeout", type=float, default=5.0,
                   help="seconds between SIGTERM and SIGKILL when stopping workers (default 5)")
    g.add_argument("--max-restarts", type=int, default=None, metavar="K",
                   help="when a worker fails (non-zero exit, killed), stop the others and start "
                        "the whole group again, at most K times (torchrun's --max-restarts; "
                        "local and torchrun launchers). The workers see "
                        "TORCHELASTIC_RESTART_COUNT; a script resumes from its last checkpoint "
                        "(neogluon.contrib.checkpoint)")
    g.add_argument("--tag-output", action="store_true",
                   help="prefix every output line of a worker with [rank]")
    g.add_argument("--dry-run", action="store_true",
                   help="print the commands (with their environment) and exit")
    p.add_argument("command", nargs="+", help="the command each worker runs")
    return p


def _split(parser, argv):
    """Split the launcher's options from the command: the command starts at the first word
    that is neither an option nor an option's value (or after ``--``), so the command's own
    options (``python train.py -n 5``) stay the command's."""
    takes_value = {}
    for action in parser._actions:
        for opt in action.option_strings:
            takes_value[opt] = action.nargs != 0
    longs = [o for o in takes_value if o.startswith("--")]
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok == "--":
            return argv[:i], argv[i + 1:]
        if not tok.startswith("-") or tok == "-":
            return argv[:i], argv[i:]
        name = tok.split("=", 1)[0]
        if name in takes_value:
            i += 2 if (takes_value[name] and "=" not in tok) else 1
            continue
        if name.startswith("--"):
            matches = [o for o in longs if o.startswith(name)]
            if len(matches) == 1:
                i += 2 if (takes_value[matches[0]] and "=" not in tok) else 1
                continue
        elif name[:2] in takes_value:          # -n2
            i += 1
            continue
        i += 1                                 # unknown: let argparse report it
    return argv, []


def _parse(argv):
    parser = build_parser()
    opts, command = _split(parser, list(argv))
    args = parser.parse_args(opts + ["--"] + command) if command else parser.parse_args(opts)
    if args.num_workers < 1:
        parser.error(f"-n/--num-workers must be at least 1, got {args.num_workers}")
    if args.num_servers is not None and args.num_servers < 0:
        parser.error(f"-s/--num-servers must not be negative, got {args.num_servers}")
    if args.grace is not None and not args.grace >= 0:
        parser.error(f"--grace must be a number of seconds >= 0, got {args.grace}")
    if args.max_restarts is not None and args.max_restarts < 0:
        parser.error(f"--max-restarts must be a number >= 0, got {args.max_restarts}")
    if not args.kill_timeout >= 0:
        parser.error(f"--kill-timeout must be a number of seconds >= 0, got {args.kill_timeout}")
    if args.launcher is None:
        args.launcher = "ssh" if args.hostfile else "local"
    return args


def _pairs(values, what, allow_names=False):
    """``["A:1,B:2", "C:3"]`` -> {"A": "1", ...}; with ``allow_names`` a bare ``NAME`` takes
    its value from this process's environment."""
    out = {}
    for value in values:
        for item in str(value).split(","):
            item = item.strip()
            if not item:
                continue
            if ":" in item:
                k, v = item.split(":", 1)
            elif "=" in item:
                k, v = item.split("=", 1)
            elif allow_names:
                k = item
                if k not in os.environ:
                    raise _UsageError(f"{what} {k}: the variable is not set in this environment")
                v = os.environ[k]
            else:
                raise _UsageError(f"{what} {item!r}: expected VARIABLE:VALUE")
            k = k.strip()
            if not k or not k.replace("_", "a").isalnum() or k[0].isdigit():
                raise _UsageError(f"{what} {item!r}: {k!r} is not a variable name")
            out[k] = v
    return out


# ----------------------------------------------------------------------------------- env contract
def free_port(host="127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def worker_env(rank, world_size, local_rank, local_world_size, master_addr, master_port,
               num_servers=None) -> dict:
    """The variables one worker needs (torch.distributed's and MXNet's DMLC_* names)."""
    return {
        "RANK": str(rank),
        "WORLD_SIZE": str(world_size),
        "LOCAL_RANK": str(local_rank),
        "LOCAL_WORLD_SIZE": str(local_world_size),
        "MASTER_ADDR": str(master_addr),
        "MASTER_PORT": str(master_port),
        "DMLC_ROLE": "worker",
        "DMLC_NUM_WORKER": str(world_size),
        "DMLC_NUM_SERVER": str(world_size if num_servers is None else num_servers),
        "DMLC_PS_ROOT_URI": str(master_addr),
        "DMLC_PS_ROOT_PORT": str(master_port),
    }


def _common_env(world_size, master_addr, master_port, num_servers):
    env = worker_env(0, world_size, 0, 0, master_addr, master_port, num_servers)
    for k in ("RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE"):
        del env[k]
    return env


# MPI implementations' names for a process's place in the job (Open MPI, MPICH/Intel MPI/PMI,
# PMIx, MVAPICH2, Slurm's srun).
_MPI_RANK = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID")
_MPI_SIZE = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_NTASKS")
_MPI_LOCAL_RANK = ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK",
                   "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID")
_MPI_LOCAL_SIZE = ("OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMI_LOCAL_SIZE",
                   "MV2_COMM_WORLD_LOCAL_SIZE")


def mpi_rank_env(environ=None) -> dict:
    """RANK / WORLD_SIZE / LOCAL_RANK / LOCAL_WORLD_SIZE from the variables mpirun sets, or {}
    when none is set. DMLC_NUM_WORKER stands in for the world size when MPI gives none."""
    env = os.environ if environ is None else environ

    def first(names):
        for n in names:
            v = env.get(n)
            if v not in (None, ""):
                return v
        return None

    rank = first(_MPI_RANK)
    if rank is None:
        return {}
    size = first(_MPI_SIZE) or env.get("DMLC_NUM_WORKER") or env.get("WORLD_SIZE")
    out = {"RANK": str(int(rank))}
    if size is not None:
        out["WORLD_SIZE"] = str(int(size))
    local_rank = first(_MPI_LOCAL_RANK)
    local_size = first(_MPI_LOCAL_SIZE)
    out["LOCAL_RANK"] = str(int(local_rank)) if local_rank is not None else "0"
    if local_size is not None:
        out["LOCAL_WORLD_SIZE"] = str(int(local_size))
    elif local_rank is None:
        out["LOCAL_WORLD_SIZE"] = "1"
    return out


# -------------------------------------------------------------------------------------- hosts
def parse_hostfile(path):
    """``[(host, ssh_port), ...]`` from an MXNet hostfile: one ``host`` or ``host:port`` per
    line; blank lines and ``#`` comments are skipped, as is anything after the first word
    (so an MPI hostfile's ``slots=4`` does no harm)."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as exc:
        raise _UsageError(f"cannot read the hostfile {path!r}: {exc.strerror or exc}") from exc
    hosts = []
    for n, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        word = line.split()[0]
        host, port = word, "22"
        if word.startswith("[") and "]" in word:          # [v6::addr]:port
            host, _, rest = word[1:].partition("]")
            port = rest[1:] if rest.startswith(":") else "22"
        elif word.count(":") == 1:
            host, port = word.split(":")
        if not host or not port.isdigit():
            raise _UsageError(f"hostfile {path!r} line {n}: {line!r} is not 'host' or 'host:port'")
        hosts.append((host, port))
    if not hosts:
        raise _UsageError(f"the hostfile {path!r} lists no hosts")
    return hosts


def _shell_command(command):
    """The command as one shell string: a single argument is taken as shell text (as MXNet's
    launcher takes every command), several are quoted."""
    return command[0] if len(command) == 1 else shlex.join(command)


def _argv(command):
    return ["/bin/sh", "-c", command[0]] if len(command) == 1 else list(command)


# ------------------------------------------------------------------------------- command plans
class _Task:
    """One process the launcher starts: a label (its rank) and how to start it."""

    def __init__(self, rank, argv, env_delta, base_env=True):
        self.rank = rank
        self.argv = argv
        self.env_delta = env_delta
        self.base_env = base_env

    def env(self):
        env = dict(os.environ) if self.base_env else {}
        env.update(self.env_delta)
        return env

    def describe(self):
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env_delta.items())
        return (f"{env} " if env else "") + shlex.join(self.argv)


def _user_env(args):
    env = _pairs(args.env, "--env", allow_names=True)
    env.update(_pairs(args.env_worker, "--env-worker"))
    return env


def _restart_env(args, attempt):
    """torchrun's restart variables, set when --max-restarts is given."""
    if args.max_restarts is None:
        return {}
    return {"TORCHELASTIC_RESTART_COUNT": str(attempt),
            "TORCHELASTIC_MAX_RESTARTS": str(args.max_restarts)}


def _plan_local(args, attempt=0):
    n = args.num_workers
    addr = args.master_addr or "127.0.0.1"
    # (a fresh port for every attempt: the previous group's rendezvous may linger in TIME_WAIT)
    port = args.master_port or free_port(addr if addr not in ("localhost",) else "127.0.0.1")
    user = _user_env(args)
    tasks = []
    for r in range(n):
        env = dict(user)
        env.update(worker_env(r, n, r, n, addr, port, args.num_servers))
        env.update(_restart_env(args, attempt))
        if args.tag_output:
            env.setdefault("PYTHONUNBUFFERED", "1")
        if "PATH" not in user:
            # `python ...` in the command means the interpreter running the launcher (its
            # venv), as if that venv were activated, rather than whatever `python` is first
            # on PATH (often one without neogluon).
            here = os.path.dirname(sys.executable)
            path = os.environ.get("PATH", "")
            if here and path.split(os.pathsep)[:1] != [here]:
                env["PATH"] = here + os.pathsep + path
        tasks.append(_Task(r, _argv(args.command), env))
    return [], tasks


def _plan_ssh(args):
    if not args.hostfile:
        raise _UsageError("the ssh launcher needs a hostfile (-H FILE, one host per line)")
    hosts = parse_hostfile(args.hostfile)
    n = args.num_workers
    addr = args.master_addr or hosts[0][0]
    port = args.master_port or _DEFAULT_PORT
    workdir = args.sync_dst_dir or os.getcwd()
    forwarded = {k: os.environ[k] for k in _FORWARD if k in os.environ}
    forwarded.update(_user_env(args))
    prep = []
    if args.sync_dst_dir:
        here = os.getcwd().rstrip("/") + "/"
        seen = set()
        for host, sshport in hosts:
            if (host, sshport) in seen:
                continue
            seen.add((host, sshport))
            prep.append(["rsync", "-az", "-e", f"ssh -o StrictHostKeyChecking=no -p {sshport}",
                         here, f"{host}:{args.sync_dst_dir}"])
    tasks = []
    count = len(hosts)
    for r in range(n):
        host, sshport = hosts[r % count]
        local_rank = r // count
        local_world = len(range(r % count, n, count))
        env = dict(forwarded)
        env.update(worker_env(r, n, local_rank, local_world, addr, port, args.num_servers))
        env["DMLC_NODE_HOST"] = host
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        remote = f"export {exports}; cd {shlex.quote(workdir)} && {_shell_command(args.command)}"
        argv = ["ssh", "-o", "StrictHostKeyChecking=no", "-p", sshport, host, remote]
        tasks.append(_Task(r, argv, {}))
    return prep, tasks


def _mpi_first_host(path):
    try:
        return parse_hostfile(path)[0][0]
    except _UsageError:
        return None


def _plan_mpi(args):
    n = args.num_workers
    addr = args.master_addr or (_mpi_first_host(args.hostfile) if args.hostfile else None) \
        or "127.0.0.1"
    port = args.master_port or _DEFAULT_PORT
    env = {k: os.environ[k] for k in _FORWARD if k in os.environ}
    env.update(_user_env(args))
    env.update(_common_env(n, addr, port, args.num_servers))
    argv = ["mpirun", "-n", str(n)]
    if args.hostfile:
        argv += ["--hostfile", args.hostfile]
    argv += ["env"] + [f"{k}={v}" for k, v in env.items()]
    argv += [sys.executable, "-m", "neogluon.launch", "--from-mpi-env", "--"] + list(args.command)
    return [], [_Task(None, argv, {})]


def _plan_torchrun(args):
    n = args.num_workers
    addr = args.master_addr or "127.0.0.1"
    port = args.master_port or free_port("127.0.0.1")
    env = _user_env(args)
    env.update(_common_env(n, addr, port, args.num_servers))
    argv = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1",
            "--nproc-per-node", str(n), "--master-addr", addr, "--master-port", str(port)]
    if args.max_restarts is not None:
        argv += ["--max-restarts", str(args.max_restarts)]
    argv += ["--no-python"] + _argv(args.command)
    return [], [_Task(None, argv, env)]


# ------------------------------------------------------------------------------------ running
def _exit_text(rc):
    if rc is None:
        return "still running"
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return f"killed by {name}"
    return f"exit code {rc}"


def _launcher_rc(rc):
    return 128 + (-rc) if rc < 0 else rc


def _child_setup():  # pragma: no cover - runs in the child between fork and exec
    # Own process group (so stopping a worker stops what it started), and die with the
    # launcher: if the launcher is killed outright, its workers do not train on unwatched.
    os.setpgid(0, 0)
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _is_stopped(pid) -> bool:
    """Whether the process is stopped (state T/t in /proc; False where unknown)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return stat[stat.rindex(b")") + 2:][:1] in (b"T", b"t")
    except (OSError, ValueError):
        return False


class _Child:
    def __init__(self, task, tag):
        self.task = task
        self.rank = task.rank
        self.label = "launcher command" if task.rank is None else f"rank {task.rank}"
        self.rc = None
        self.stopped_by_us = False
        pipe = subprocess.PIPE if tag else None
        self.proc = subprocess.Popen(task.argv, env=task.env(), stdout=pipe, stderr=pipe,
                                     stdin=subprocess.DEVNULL, preexec_fn=_child_setup)
        self.threads = []
        if tag:
            prefix = (f"[{task.rank}] " if task.rank is not None else "").encode()
            for src, dst in ((self.proc.stdout, sys.stdout), (self.proc.stderr, sys.stderr)):
                t = threading.Thread(target=_copy_lines, args=(src, dst, prefix), daemon=True)
                t.start()
                self.threads.append(t)

    def poll(self):
        if self.rc is None:
            self.rc = self.proc.poll()
        return self.rc

    def signal_leftovers(self, sig):
        """Signal what the worker started and left running in its process group after it
        ended itself (the group outlives its leader while a member lives)."""
        if self.poll() is None:
            return
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def signal(self, sig):
        if self.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            try:
                self.proc.send_signal(sig)
            except ProcessLookupError:
                pass


_OUT_LOCK = threading.Lock()
_RESTART = object()


def _copy_lines(src, dst, prefix):
    out = getattr(dst, "buffer", None)
    for line in iter(src.readline, b""):
        with _OUT_LOCK:
            if out is not None:
                out.write(prefix + line)
                out.flush()
            else:
                dst.write((prefix + line).decode("utf-8", "replace"))
                dst.flush()
    src.close()


class _Job:
    def __init__(self, tasks, grace, kill_timeout, tag, max_restarts=0, replan=None):
        self.tasks = tasks
        self.grace = grace
        self.kill_timeout = kill_timeout
        self.tag = tag
        self.children = []
        self.signal = None
        self.signals = 0
        # --max-restarts: ``replan(attempt)`` gives the tasks of the restarted group
        self.max_restarts = max_restarts if replan is not None else 0
        self.replan = replan
        self.restarts = 0

    def _on_signal(self, signum, frame):
        self.signal = signum
        self.signals += 1
        if self.signals > 1:          # asked twice: no more waiting
            for c in self.children:
                c.signal(signal.SIGKILL)

    def _stop(self, children, first_signal, leftovers=False):
        alive = [c for c in children if c.poll() is None]
        ended = [c for c in children if c.poll() is not None] if leftovers else []
        for c in ended:
            c.signal_leftovers(first_signal)
            c.signal_leftovers(signal.SIGCONT)
        if not alive:
            for c in ended:
                c.signal_leftovers(signal.SIGKILL)
            return
        for c in alive:
            c.stopped_by_us = True
            c.signal(first_signal)
            c.signal(signal.SIGCONT)   # a stopped process only acts on SIGTERM once continued
        end = time.monotonic() + self.kill_timeout
        while time.monotonic() < end and any(c.poll() is None for c in alive):
            time.sleep(0.05)
        for c in alive:
            if c.poll() is None:
                c.signal(signal.SIGKILL)
        for c in ended:
            c.signal_leftovers(signal.SIGKILL)
        for c in alive:
            try:
                c.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - unkillable (D state)
                pass
            c.poll()

    def run(self) -> int:
        handlers = {}
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            try:
                handlers[sig] = signal.signal(sig, self._on_signal)
            except (ValueError, OSError):  # not the main thread
                pass
        try:
            return self._run()
        finally:
            for c in self.children:
                if c.poll() is None:
                    c.signal(signal.SIGKILL)
            for sig, h in handlers.items():
                signal.signal(sig, h)

    def _run(self) -> int:
        while True:
            rc = self._run_group()
            if rc is not _RESTART:
                return rc
            self.restarts += 1
            self.tasks = self.replan(self.restarts)
            self.children = []

    def _run_group(self):
        if self.signal is not None:
            _note(f"got {signal.Signals(self.signal).name}: not restarting")
            return 128 + int(self.signal)
        try:
            for task in self.tasks:
                self.children.append(_Child(task, self.tag))
        except OSError as exc:
            _note(f"cannot start {shlex.join(task.argv[:1])}: {exc.strerror or exc}")
            self._stop(self.children, signal.SIGTERM)
            return 127
        first = None
        deadline = None
        stalled_since = None
        while True:
            if self.signal is not None:
                name = signal.Signals(self.signal).name
                _note(f"got {name}: stopping {len(self.children)} worker(s)")
                fwd = signal.SIGINT if self.signal == signal.SIGINT else signal.SIGTERM
                self._stop(self.children, fwd, leftovers=True)
                self._join_output()
                return 128 + int(self.signal)
            newly = [c for c in self.children if c.rc is None and c.poll() is not None]
            failed = [c for c in newly if c.rc != 0]
            if failed and first is None:
                # Among processes seen ending in the same instant, one killed by a signal is
                # the likelier cause of the others' errors.
                failed.sort(key=lambda c: (c.rc >= 0, c.rank if c.rank is not None else -1))
                first = failed[0]
                others = [c for c in self.children if c.poll() is None]
                if self.restarts < self.max_restarts and self.signal is None:
                    _note(f"{first.label} failed ({_exit_text(first.rc)}); stopping "
                          f"{len(others)} other worker(s) and restarting the group (restart "
                          f"{self.restarts + 1} of at most {self.max_restarts})")
                    self._stop(self.children, signal.SIGTERM, leftovers=True)
                    self._join_output()
                    if self.signal is None:
                        return _RESTART
                    continue
                if others:
                    _note(f"{first.label} failed ({_exit_text(first.rc)}); giving the other "
                          f"{len(others)} worker(s) {self.grace:g} s to exit")
                    deadline = time.monotonic() + self.grace
            if all(c.poll() is not None for c in self.children):
                break
            if first is None:
                # No failure, but the workers still running are all stopped (SIGSTOP) while
                # others have ended: nothing can make progress. Wait out the grace period in
                # case they are continued, then end the job.
                left = [c for c in self.children if c.poll() is None]
                if len(left) < len(self.children) and all(_is_stopped(c.proc.pid) for c in left):
                    if stalled_since is None:
                        stalled_since = time.monotonic()
                        _note(f"{', '.join(c.label for c in left)} stopped (not running) while "
                              f"the other workers have ended; ending the job if still so in "
                              f"{self.grace:g} s")
                    elif time.monotonic() - stalled_since >= self.grace:
                        self._stop(left, signal.SIGTERM)
                        first = left[0]
                        break
                else:
                    stalled_since = None
            if deadline is not None:
                left = [c for c in self.children if c.poll() is None]
                if time.monotonic() >= deadline:
                    _note(f"stopping {', '.join(c.label for c in left)}: still running "
                          f"{self.grace:g} s after {first.label} failed")
                    self._stop(left, signal.SIGTERM)
                    break
                if all(_is_stopped(c.proc.pid) for c in left):
                    # stopped processes (SIGSTOP, a debugger) cannot report anything
                    _note(f"stopping {', '.join(c.label for c in left)}: stopped (not "
                          f"running) after {first.label} failed")
                    self._stop(left, signal.SIGTERM)
                    break
            time.sleep(0.05)
        self._join_output()
        if first is None:
            return 0
        if len(self.children) > 1:
            states = ", ".join(
                f"{c.label}: {_exit_text(c.rc)}" + (" (stopped by the launcher)"
                                                    if c.stopped_by_us else "")
                for c in self.children)
            _note(f"workers: {states}")
        _note(f"job failed: {first.label} failed first ({_exit_text(first.rc)})")
        return _launcher_rc(first.rc) or 1

    def _join_output(self):
        for c in self.children:
            for t in c.threads:
                t.join(timeout=5)


# ------------------------------------------------------------------------------------- entry
def _from_mpi_env(argv):
    """``--from-mpi-env [--] command...``: under mpirun, set RANK & co. from MPI's variables and
    run the command in this process's place."""
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        _note("--from-mpi-env needs a command")
        return 2
    mine = mpi_rank_env()
    if not mine:
        _note("--from-mpi-env: none of MPI's rank variables is set ("
              + ", ".join(_MPI_RANK) + "); run this under mpirun")
        return 2
    os.environ.update(mine)
    if "LOCAL_WORLD_SIZE" not in os.environ:
        os.environ["LOCAL_WORLD_SIZE"] = os.environ.get("WORLD_SIZE", "1")
    cmd = _argv(argv)
    try:
        os.execvp(cmd[0], cmd)
    except OSError as exc:
        _note(f"cannot run {cmd[0]!r}: {exc.strerror or exc}")
        return 127


def _default_grace(extra_env):
    from .kvstore._faults import timeout_seconds
    env = dict(os.environ)
    env.update(extra_env)
    return timeout_seconds(env) + 5.0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "--from-mpi-env":
        return _from_mpi_env(argv[1:])
    args = _parse(argv)
    try:
        if args.p3 or args.byteps_launch:
            raise _UsageError(("--p3" if args.p3 else "--byteps-launch") + " is MXNet's "
                              "parameter-server transport; neogluon trains through "
                              "torch.distributed and has no equivalent")
        if args.launcher in ("sge", "yarn"):
            raise _UsageError(f"the {args.launcher} launcher is not provided; start the workers "
                              f"with torchrun (or your scheduler) with RANK/WORLD_SIZE/"
                              f"MASTER_ADDR/MASTER_PORT set")
        if args.num_servers:
            _note(f"-s {args.num_servers}: neogluon needs no server processes (the optimizer "
                  f"runs sharded on the workers); starting {args.num_workers} worker(s) only")
        if args.max_restarts is not None and args.launcher not in ("local", "torchrun"):
            raise _UsageError(f"--max-restarts works with the local and torchrun launchers, "
                              f"not {args.launcher}: for several machines run torchrun on each "
                              f"(--nnodes, --rdzv-backend c10d, --max-restarts K)")
        if args.launcher in ("local", "torchrun") and args.hostfile:
            _note(f"-H {args.hostfile} is not used by the {args.launcher} launcher")
        plan = {"local": _plan_local, "ssh": _plan_ssh, "mpi": _plan_mpi,
                "torchrun": _plan_torchrun}[args.launcher]
        prep, tasks = plan(args)
        grace = args.grace if args.grace is not None else _default_grace(_user_env(args))
    except _UsageError as exc:
        _note(f"error: {exc}")
        return 2
    except Exception as exc:  # e.g. a bad NEOGLUON_KVSTORE_TIMEOUT
        _note(f"error: {exc}")
        return 2

    if args.dry_run:
        for cmd in prep:
            print(shlex.join(cmd))
        for t in tasks:
            print(t.describe())
        sys.stdout.flush()
        return 0

    for cmd in prep:
        rc = subprocess.call(cmd)
        if rc != 0:
            _note(f"{shlex.join(cmd)} failed ({_exit_text(rc)})")
            return _launcher_rc(rc) or 1
    replan = None
    if args.launcher == "local" and args.max_restarts:
        replan = lambda attempt: _plan_local(args, attempt)[1]  # noqa: E731
    return _Job(tasks, grace, args.kill_timeout, args.tag_output,
                max_restarts=args.max_restarts or 0, replan=replan).run()


if __name__ == "__main__":
    sys.exit(main())
