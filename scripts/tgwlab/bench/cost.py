"""scripts/bench-cost: where a packet's CPU goes: a gateway, its Redis and its
simulator over a window, per process, per gateway thread kind, user and kernel."""

import collections
import glob
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from .. import metrics
from ..cli import fail
from ..processes import Group, cpu_times, raise_file_limit, wait_for_port
from . import common

PROG = "bench-cost"
KINDS = {"tgw.io": "io threads (tgw.io)", "caf.multiplexer": "sessions (caf.multiplexer)",
         "caf.actor": "writers (caf.actor)"}


def thread_kind(thread, process_name):
    """The row label of a gateway thread. A build from before the io threads were
    named `tgw.io` leaves them the process's own name (`tgw`, or whatever the binary
    under test is called)."""
    if thread == process_name:
        return f"io threads ({thread})"
    return KINDS.get(thread, thread)


def switches(status_path):
    total = 0
    for line in Path(status_path).read_text().splitlines():
        if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
            total += int(line.split()[1])
    return total


def sample(pid):
    """Per thread name: [user s, kernel s, context switches], summed over the threads."""
    out = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for task in glob.glob(f"/proc/{pid}/task/*"):
        try:
            name = Path(task, "comm").read_text().strip()
            user, kernel = cpu_times(Path(task, "stat"))
            cs = switches(Path(task, "status"))
        except OSError:
            continue  # a thread that ended meanwhile
        row = out[name]
        row[0] += user
        row[1] += kernel
        row[2] += cs
    return out


def acks(metrics_port):
    got = metrics.metric(metrics.scrape(metrics_port, timeout=5), "teltonika_acks_total")
    if got is None:
        raise OSError(f"no metrics from 127.0.0.1:{metrics_port}")
    return got


def main(args):
    """Runs scripts/bench-cost with its parsed arguments."""
    if not os.access(args.tgw, os.X_OK):
        fail(PROG, f"{args.tgw} is not an executable (cmake --build --preset release --target tgw)")
    if shutil.which("redis-server") is None:
        fail(PROG, "redis-server not found (scripts/setup installs it)")
    if args.devices < 1 or args.records < 1 or args.seconds <= 0 or args.warmup < 0:
        fail(PROG, "--devices and --records take a number above 0, --seconds a positive time")

    raise_file_limit()
    workdir = Path(tempfile.mkdtemp(prefix="tgw-bench-cost-"))
    rport, gport, mport = common.fresh_ports(3)
    procs = Group(str(workdir))
    with common.stopping(procs, str(workdir)):
        redis = procs.start(["redis-server", "--port", str(rport), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(workdir)], log="redis.log")
        wait_for_port(rport, 5)
        gateway = procs.start([str(args.tgw), "serve", "--redis", f"redis://127.0.0.1:{rport}", "--port",
                               str(gport), "--bind", "127.0.0.1", "--metrics-addr", f"127.0.0.1:{mport}",
                               "--log-level", "warn"] + args.flags.split(), log="gateway.log")
        for _ in range(100):
            try:
                acks(mport)
                break
            except OSError:
                if gateway.poll() is not None:
                    fail(PROG, f"tgw serve exited: {(workdir / 'gateway.log').read_text()[-500:]}")
                time.sleep(0.1)
        pace = ["--send-interval", "0s"] if args.saturated else ["--send-period", args.period]
        simulator = procs.start([str(args.tgw), "simulate", "--target", f"127.0.0.1:{gport}", "--count",
                                 str(args.devices), "--records-per-packet", str(args.records),
                                 "--ramp-up", "3s"] + pace, log="simulator.log")
        time.sleep(args.warmup)
        pids = {"gateway": gateway.pid, "redis-server": redis.pid, "simulator": simulator.pid}
        a0, s0 = acks(mport), {name: sample(pid) for name, pid in pids.items()}
        time.sleep(args.seconds)
        a1, s1 = acks(mport), {name: sample(pid) for name, pid in pids.items()}
        packets = a1 - a0
        if packets <= 0:
            fail(PROG, "no packet was ACKed in the window")
        load = "saturated" if args.saturated else f"a packet every {args.period} a device"
        print(f"{args.devices} devices, {load}, {args.records} record(s) a packet: "
              f"{packets / args.seconds:,.0f} packets/s over {args.seconds:g} s")
        print("per packet:                     user µs  kernel µs  total µs  context switches")

        def row(label, before, after):
            d = [after[i] - before[i] for i in range(3)]
            print(f"  {label:28} {d[0] * 1e6 / packets:8.1f} {d[1] * 1e6 / packets:10.1f} "
                  f"{(d[0] + d[1]) * 1e6 / packets:9.1f} {d[2] / packets:17.2f}")

        def total(sampled):
            return [sum(v[i] for v in sampled.values()) for i in range(3)]

        for name in pids:
            row(name, total(s0[name]), total(s1[name]))
            if name == "gateway":
                try:
                    process_name = Path(f"/proc/{pids[name]}/comm").read_text().strip()
                except OSError:
                    process_name = "tgw"
                for thread in sorted(s1[name]):
                    before = s0[name].get(thread, [0.0, 0.0, 0])
                    if (sum(s1[name][thread][:2]) - sum(before[:2])) * 1e6 / packets >= 0.1:
                        row(f"  {thread_kind(thread, process_name)}", before, s1[name][thread])
        sys.stdout.flush()
    return 0
