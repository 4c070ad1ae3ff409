"""scripts/bench-commands: the command round trip (publish, device, response) of a
gateway holding many simulated devices, beside XADD-to-XREAD on the same Redis."""

import json
import os
import subprocess
import sys
import tempfile
import time

from .. import redis_client
from ..cli import fail
from ..processes import Group, raise_file_limit, wait_until
from . import common
from .common import log

PROG = "scripts/bench-commands"
IMEI_BASE = 350000000000000


def summary(r, date, ncpu, cpu):
    """The lines of the summary of command_bench's result r."""
    g, b = r["gateway"], r["baseline_xadd_xread"]
    out = [f"Command round trip, {date}: {ncpu} cores ({cpu})",
           f"{r['devices']:,} connected simulated devices, {r['rate_per_s']:,.0f} commands/s for "
           f"{r['seconds']} s, {r['threads']} publishers",
           f"publish -> device -> response: {g['count']:,} responded, p50 {g['p50_ms']:.2f} ms, "
           f"p99 {g['p99_ms']:.2f} ms, max {g['max_ms']:.2f} ms",
           f"outcomes: {json.dumps(g['outcomes'], sort_keys=True)}",
           f"baseline XADD -> XREAD BLOCK on the same Redis, same rate: {b['count']:,} entries, "
           f"p50 {b['p50_ms']:.2f} ms, p99 {b['p99_ms']:.2f} ms, max {b['max_ms']:.2f} ms"]
    if b["p99_ms"] > 0:
        out.append(f"ratio p99 gateway / baseline: {g['p99_ms'] / b['p99_ms']:.1f}")
    ok = g["p99_ms"] < 5 and g["count"] > 0
    out.append(f"bar (DESIGN.md §8: p99 under 5 ms at 1,000 commands/s): {'PASS' if ok else 'FAIL'}")
    return out


def main(a):
    """Runs scripts/bench-commands with its parsed arguments; the exit code."""
    common.need(PROG, ["redis-server", "redis-cli", "cmake"])
    tgw, out = common.prepare(PROG, a.build, "bench-commands", targets=("tgw", "command_bench"))
    bench = common.release_binary(PROG, "build/release/tests/bench/command_bench")
    files = raise_file_limit()
    if a.devices > files - 200:
        fail(PROG, f"a process may open {files} files, too few for {a.devices} devices")

    redis_port, gw_port = common.fresh_ports(2)
    tmp = tempfile.mkdtemp(prefix="tgw-bench-commands-")
    procs = Group(out)
    with common.stopping(procs, tmp, grace=1):
        procs.start(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                     "--appendonly", "no", "--dir", tmp], log="redis.log")
        wait_until(lambda: redis_client.ping(redis_port), 5)
        gateway = procs.start([tgw, "serve", "--port", str(gw_port), "--bind", "127.0.0.1",
                               "--redis", f"redis://127.0.0.1:{redis_port}", "--metrics-addr", "",
                               "--instance-id", "bench-commands", "--log-level", "warn"],
                              log="gateway.log")
        with open(os.path.join(out, "simulate.out"), "wb") as sout, \
                open(os.path.join(out, "simulate.log"), "wb") as serr:
            procs.start([tgw, "simulate", "--count", str(a.devices), "--target",
                         f"127.0.0.1:{gw_port}", "--send-interval", "30s", "--ramp-up", "10s",
                         "--imei-base", str(IMEI_BASE), "--reply-text", "OK {command}"],
                        stdout=sout, stderr=serr)

        log(f"waiting for {a.devices} devices in the registry")
        r = redis_client.client(redis_port)

        def registered():
            return redis_client.attempt(r.hlen, "connections:registry") or 0
        wait_until(lambda: registered() >= a.devices, 120, step=1.0)
        n = registered()
        if n < a.devices:
            fail(PROG, f"only {n} of {a.devices} devices connected", 1)
        time.sleep(2)

        log(f"publishing {a.rate} commands/s for {a.seconds} s with {a.threads} publishers "
            f"(baseline first)")
        result = os.path.join(out, "result.json")
        with open(result, "wb") as f:
            subprocess.run([bench, str(redis_port), str(IMEI_BASE), str(a.devices), str(a.rate),
                            str(a.seconds), str(a.threads)], stdout=f, check=True)
        if gateway.poll() is not None:
            fail(PROG, "the gateway died", 1)
        with open(result) as f:
            lines = summary(json.load(f), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                            common.nproc(), common.cpu_model())
        print("\n".join(lines), flush=True)
        sys.stdout.flush()
    return 0
