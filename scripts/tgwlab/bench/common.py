"""What the bench drivers share: their log lines, the release build, the tools they
need, redis-benchmark's rate, the persist Function's call, the machine they ran on, and
stopping what they started however they end."""

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time

from ..cli import fail
from ..processes import ROOT, free_port

# One record's arguments to tgw_persist_batch, shaped like the simulator's (8 IO
# elements): ts priority lon lat alt angle sats speed event_io io generation_type (empty
# outside Codec 16).
PERSIST_RECORD = ["1763770000000", "0", "253456789", "546789012", "120", "180", "12", "56", "0",
                  '{"239":1,"240":1,"66":12843,"21":4,"16":1234567,"24":56,"181":12,"182":8}', ""]
PACKETS_PER_CALL = 16


def log(message):
    """'== HH:MM:SS message', as the bench drivers write their progress."""
    print(f"== {time.strftime('%H:%M:%S', time.gmtime())} {message}", flush=True)


def need(prog, tools, code=2, hint="is missing; run scripts/setup"):
    """Exits with `code` naming the first tool of `tools` not on PATH."""
    for tool in tools:
        if shutil.which(tool) is None:
            fail(prog, f"{tool} {hint}", code)


def build_release(*targets, quiet=False):
    """cmake --preset release, then the targets (their output shown unless quiet)."""
    subprocess.run(["cmake", "--preset", "release"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", "--preset", "release", "--target", *targets], cwd=ROOT,
                   check=True, stdout=subprocess.DEVNULL if quiet else None)


def prepare(prog, build, out_name, stale=None, targets=("tgw",)):
    """From the repository's root: the release build of targets (with build), the tgw
    binary, and build/release/OUT_NAME emptied of the files whose names end in one of
    `stale` (every file without). Returns (tgw, out)."""
    os.chdir(ROOT)
    if build:
        log(f"building {' and '.join(targets)} (release preset)")
        build_release(*targets)
    tgw = release_binary(prog)
    out = os.path.join(ROOT, "build", "release", out_name)
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        if stale is None or name.endswith(stale):
            os.remove(os.path.join(out, name))
    return tgw, out


def executables(prog, paths):
    """Exits when one of paths is not an executable file."""
    for b in paths:
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            fail(prog, f"{b} is not an executable")


def release_binary(prog, path="build/release/tgw", hint="(drop --no-build)", code=2):
    """The binary at ROOT/path; exits with `code` when it is not there."""
    full = os.path.join(ROOT, path)
    if not os.access(full, os.X_OK):
        fail(prog, f"{full} is missing {hint}", code)
    return full


def benchmark_rate(output):
    """The last 'N requests per second' line of redis-benchmark -q's output (it
    rewrites its progress with carriage returns); None without one."""
    lines = [l for l in output.replace("\r", "\n").splitlines() if "requests per second" in l]
    return lines[-1] if lines else None


def requests_per_second(line):
    """The rate of a redis-benchmark line; NaN without one."""
    m = re.search(r"([\d.]+) requests per second", line or "")
    return float(m.group(1)) if m else float("nan")


def persist_call(records, packets=PACKETS_PER_CALL, tag=None):
    """FCALL tgw_persist_batch of `packets` packets of `records` records each, for
    redis-benchmark (__rand_int__ picks the device). tag: every key under {tag}, as a
    cluster client's keys; else each key tagged by its device."""
    keys, args = [], []
    for _ in range(packets):
        if tag:
            keys += [f"{{{tag}}}journal:356307__rand_int__", f"{{{tag}}}device:356307__rand_int__"]
        else:
            keys += ["journal:{356307__rand_int__}", "device:{356307__rand_int__}"]
        args += ["P", "356307040000001", "__rand_int__", str(records), "8E"] + PERSIST_RECORD * records
    stream = f"{{{tag}}}telemetry:records" if tag else "telemetry:records"
    return ["FCALL", "tgw_persist_batch", str(1 + 2 * packets), stream] + keys + \
        ["bench", "1000", "0"] + args


def source_spread(devices, wanted):
    """Loopback source addresses for a simulated fleet of this size: at least `wanted`,
    and enough that no address brings more new devices than a gateway's default
    per-address budget lets in at once (--new-devices-burst 1,000: a benchmark measures
    the fleet it asked for, not that budget)."""
    return max(wanted, -(-devices // 500))


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def nproc():
    return len(os.sched_getaffinity(0))


def self_signed(directory):
    """A throwaway P-256 certificate and key in directory; (cert, key) or None."""
    cert, key = os.path.join(directory, "tls.crt"), os.path.join(directory, "tls.key")
    done = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                           "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj",
                           "/CN=tgw-bench", "-keyout", key, "-out", cert],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (cert, key) if done.returncode == 0 else None


def fresh_ports(count, taken=()):
    """`count` free loopback ports, distinct from each other and from `taken`."""
    out = []
    while len(out) < count:
        p = free_port()
        if p not in out and p not in taken:
            out.append(p)
    return out


@contextlib.contextmanager
def stopping(procs, tmp=None, grace=10.0):
    """Every process of the group `procs` stopped (the last started first: SIGTERM,
    SIGKILL after `grace` seconds) and tmp removed on the way out, however it goes;
    SIGINT exits 130, SIGTERM 143."""
    def terminate(signum, frame):
        raise SystemExit(143)
    before = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    except KeyboardInterrupt:
        raise SystemExit(130)
    finally:
        procs.stop_all(grace)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
        signal.signal(signal.SIGTERM, before)
