"""scripts/bench-compare: two gateways side by side, each with its own redis-server and
simulator, in the same minutes; CPU microseconds per ACKed packet of each."""

import json
import os
import sys
import tempfile
import time

from .. import metrics
from ..cli import fail
from ..servers import make_tls_files, tls_server_args
from ..processes import TICK, Group, cpu_ticks, log_tail, raise_file_limit
from . import common

PROG = "scripts/bench-compare"


class Side:
    """One gateway with its simulator. Its Redis is a private redis-server, or
    redis_url (started by the caller, whose server pids redis_pids name for the CPU
    figure)."""

    def __init__(self, name, binary, flags, imei_base, redis_url=None, redis_pids=(),
                 redis_tls=None):
        self.name, self.binary, self.flags, self.imei_base = name, binary, flags, imei_base
        self.redis_url, self.redis_pids = redis_url, list(redis_pids)
        # The directory of scripts/redis-tls-files' certificates: its private
        # redis-server speaks TLS only, and its gateway rediss://.
        self.redis_tls = redis_tls


def ticks(proc, log):
    """CPU ticks of a process; exits when it is gone, with the end of its log."""
    t = cpu_ticks(proc.pid)
    if t is None:
        print(f"{PROG}: process {proc.pid} is gone; the end of {os.path.basename(log)}:",
              file=sys.stderr)
        print("\n".join(log_tail(log, 5)), file=sys.stderr)
        sys.exit(1)
    return t


def acks(port):
    return metrics.metric(metrics.scrape(port, timeout=5), "teltonika_acks_total") or 0


def redis_ticks(s):
    if s.redis is not None:
        return ticks(s.redis, s.logs["redis"])
    return sum(cpu_ticks(pid) or 0 for pid in s.redis_pids)


def measure(a, sides, procs, tmp, simulator, gw_tls=(), sim_tls=()):
    """Starts every side, waits 10 s (ramp-up and warm-up), and measures a.seconds; for
    each side that finished, a dict of packets_per_s and the CPU microseconds a packet
    of its gateway, redis and simulator, printed as a line too. a: devices, period,
    records, seconds."""
    for s in sides:
        rport, gport, s.metrics_port = common.fresh_ports(3)
        s.logs = {k: os.path.join(tmp, f"{k}-{s.name}.log") for k in ("redis", "gateway", "sim")}
        s.redis = None
        url = s.redis_url
        redis_tls = []
        if url is None:
            tls = tls_server_args(s.redis_tls, rport) if s.redis_tls else []
            s.redis = procs.start(["redis-server", "--port", str(rport), "--bind", "127.0.0.1",
                                   "--save", "", "--appendonly", "no", "--dir", tmp,
                                   "--logfile", s.logs["redis"], *tls])
            url = f"{'rediss' if s.redis_tls else 'redis'}://127.0.0.1:{rport}"
            if s.redis_tls:
                redis_tls = ["--redis-tls-ca", os.path.join(s.redis_tls, "ca.crt")]
            time.sleep(0.5)
        with open(s.logs["gateway"], "wb") as err:
            s.gateway = procs.start(
                [s.binary, "serve", "--redis", url, *redis_tls, "--port", str(gport),
                 "--bind", "127.0.0.1", "--metrics-addr", f"127.0.0.1:{s.metrics_port}",
                 "--log-level", "warn", *gw_tls, *s.flags.split()], stderr=err)
        time.sleep(1)
        s.sim_json = os.path.join(tmp, f"sim-{s.name}.json")
        with open(s.sim_json, "wb") as out, open(s.logs["sim"], "wb") as err:
            s.sim = procs.start(
                [simulator, "simulate", "--target", f"127.0.0.1:{gport}", *sim_tls,
                 "--count", str(a.devices), "--records-per-packet", str(a.records),
                 "--send-period", a.period, "--ramp-up", "5s", "--duration",
                 f"{a.seconds + 20}s", "--source-spread", str(common.source_spread(a.devices, 8)),
                 "--imei-base", str(s.imei_base),
                 "--json", "--log-level", "warn"], stdout=out, stderr=err)
    time.sleep(10)

    def sample(s):
        return (ticks(s.gateway, s.logs["gateway"]), redis_ticks(s), ticks(s.sim, s.logs["sim"]),
                acks(s.metrics_port))
    before = {s.name: sample(s) for s in sides}
    time.sleep(a.seconds)
    after = {s.name: sample(s) for s in sides}
    results = {}
    for s in sides:
        if s.sim.wait() != 0:
            print(f"{PROG}: side {s.name}'s simulator failed:", file=sys.stderr)
            print("\n".join(log_tail(s.logs["sim"], 3)), file=sys.stderr)
            continue
        procs.stop(s.gateway)
        if s.redis is not None:
            procs.stop(s.redis)
        g, r, sim, packets = (x1 - x0 for x1, x0 in zip(after[s.name], before[s.name]))
        us = (lambda t: 1e6 * t / TICK / packets) if packets > 0 else (lambda t: float("nan"))
        with open(s.sim_json) as f:
            j = json.load(f)
        results[s.name] = {"packets_per_s": packets / a.seconds, "gateway_us": us(g),
                           "redis_us": us(r), "simulator_us": us(sim),
                           "ack_p50_ms": j["ack_p50_ms"], "ack_p99_ms": j["ack_p99_ms"]}
        print(f"{s.name}: {packets / a.seconds:,.0f} packets/s; CPU us a packet: gateway "
              f"{us(g):.1f}, redis {us(r):.1f}, simulator {us(sim):.1f}; whole-run ACK p50 "
              f"{j['ack_p50_ms']:.1f} ms, p99 {j['ack_p99_ms']:.1f} ms", flush=True)
    return results


def main(a):
    """Runs scripts/bench-compare with its parsed arguments; the exit code."""
    simulator = a.simulator or a.b_tgw
    common.executables(PROG, (a.a_tgw, a.b_tgw, simulator))
    raise_file_limit()
    tmp = tempfile.mkdtemp(prefix="tgw-bench-compare-")
    procs = Group(tmp)
    with common.stopping(procs, tmp, grace=5):
        gw_tls, sim_tls = [], []
        if a.tls:
            made = common.self_signed(tmp)
            if made is None:
                fail(PROG, "openssl could not make a certificate")
            gw_tls, sim_tls = ["--tls-cert", made[0], "--tls-key", made[1]], ["--tls"]
        redis_tls = None
        if a.redis_tls:
            redis_tls = os.path.join(tmp, "redis-tls")
            make_tls_files(redis_tls)
        sides = [Side("A", a.a_tgw, a.a_flags, 350000000000000,
                      redis_tls=redis_tls if a.redis_tls in ("a", "both") else None),
                 Side("B", a.b_tgw, a.b_flags, 351000000000000,
                      redis_tls=redis_tls if a.redis_tls in ("b", "both") else None)]
        measure(a, sides, procs, tmp, simulator, gw_tls, sim_tls)
    return 0
