"""Processes the scripts start and watch: children that die with the script, free
loopback ports, RSS and CPU from /proc, log tails, and the tgw binary to run."""

import ctypes
import os
import resource
import random
import signal
import socket
import subprocess
import time

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(SCRIPTS)
TICK = os.sysconf("SC_CLK_TCK")


def die_with_parent():
    # Children get SIGKILL when this script dies, however it dies (a test runner's
    # SIGKILL included), so no gateway or redis-server outlives a run.
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def spawn(argv, **kw):
    """subprocess.Popen of a child that dies with this process."""
    return subprocess.Popen(argv, preexec_fn=die_with_parent, **kw)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_cluster_port():
    """A free port for a Redis Cluster node: its cluster bus port (+10000) must be free
    too and below 65536, and an ephemeral port (32768 and up) may be neither."""
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(20000, 22768)
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("127.0.0.1", port))
                b.bind(("127.0.0.1", port + 10000))
            return port
        except OSError:
            continue
    raise RuntimeError("no free port pair for a cluster node in 20000-22767")


def wait_until(done, seconds, step=0.05):
    """True as soon as done() is; done()'s last answer after `seconds`."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if done():
            return True
        time.sleep(step)
    return done()


def wait_for_port(port, seconds, alive=None):
    """True once 127.0.0.1:port accepts a connection; False after `seconds` or as soon
    as alive() says the process that should listen there is gone."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return True
        except OSError:
            if alive is not None and not alive():
                return False
            time.sleep(0.05)
    return False


def rss_kib(pid):
    """VmRSS of a process in KiB; None when it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def open_files(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def cpu_ticks(pid_or_task):
    """utime + stime of /proc/<pid_or_task>/stat in clock ticks; None when it is gone.
    pid_or_task is a pid or "pid/task/tid"."""
    try:
        with open(f"/proc/{pid_or_task}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) + int(fields[12])


def cpu_times(stat_path):
    """(user, kernel) seconds from a /proc stat file; OSError when it is gone."""
    with open(stat_path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / TICK, int(fields[12]) / TICK


def log_tail(path, lines=5):
    try:
        with open(path, "rb") as f:
            return [l.decode(errors="replace").rstrip() for l in f.readlines()[-lines:]]
    except OSError:
        return []


def find_tgw(given):
    """The tgw binary: `given`, else build/release's, else build/debug's; None when
    there is none."""
    if given is None:
        for build in ("build/release/tgw", "build/debug/tgw"):
            candidate = os.path.join(ROOT, build)
            if os.path.exists(candidate):
                return candidate
    return given if given and os.path.exists(given) else None


def raise_file_limit():
    """The soft limit on open files raised to the hard one (each device is a socket on
    both sides; the soft limit is often 1,024). Returns the new limit."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = 1048576
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError):
        pass
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def stop(proc, grace=10.0):
    """SIGTERM, then SIGKILL after `grace` seconds; reaps. The exit status."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGCONT)
        proc.terminate()
        try:
            return proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
    return proc.wait()


class Group:
    """The processes one script started, stopped in reverse order on the way out."""

    def __init__(self, logdir):
        self.logdir = logdir
        self.procs = []

    def start(self, argv, log=None, stdout=None, stderr=None, **kw):
        """argv with its output in logdir/log (both streams) unless stdout/stderr say
        otherwise."""
        out = None
        if log is not None:
            out = open(os.path.join(self.logdir, log), "ab")
            stdout = out if stdout is None else stdout
            stderr = subprocess.STDOUT if stderr is None else stderr
        try:
            p = spawn(argv, stdout=stdout, stderr=stderr, **kw)
        finally:
            if out is not None:
                out.close()  # the child has its own copy
        self.procs.append(p)
        return p

    def stop(self, proc, grace=10.0):
        code = stop(proc, grace)
        if proc in self.procs:
            self.procs.remove(proc)
        return code

    def stop_all(self, grace=10.0):
        for p in reversed(self.procs):
            stop(p, grace)
        self.procs = []
