"""scripts/bench-idle: a gateway's memory per idle device, for one or more builds in
turn, each on a throwaway redis-server."""

import os
import tempfile
import time

from .. import metrics
from ..cli import fail
from ..processes import Group, raise_file_limit, rss_kib
from . import common

PROG = "scripts/bench-idle"
MODES = ("plain", "tls", "tls-unbounded")


def measure(procs, tmp, binary, simulator, mode, devices, cert):
    """One build in one mode: RSS before devices and once every session exists."""
    gw_flags, sim_flags = [], []
    if mode != "plain":
        gw_flags, sim_flags = ["--tls-cert", cert[0], "--tls-key", cert[1]], ["--tls"]
    if mode == "tls-unbounded":
        gw_flags += ["--tls-handshakes", "0"]
    rport, gport, mport = common.fresh_ports(3)
    redis = procs.start(["redis-server", "--port", str(rport), "--bind", "127.0.0.1", "--save", "",
                         "--appendonly", "no", "--dir", tmp,
                         "--logfile", os.path.join(tmp, "redis.log")])
    time.sleep(0.5)
    with open(os.path.join(tmp, "gateway.log"), "wb") as err:
        gateway = procs.start([binary, "serve", "--redis", f"redis://127.0.0.1:{rport}", "--port",
                               str(gport), "--bind", "127.0.0.1", "--metrics-addr",
                               f"127.0.0.1:{mport}", "--log-level", "warn", *gw_flags], stderr=err)
    time.sleep(2)
    before = rss_kib(gateway.pid)
    with open(os.devnull, "wb") as out, open(os.path.join(tmp, "sim.log"), "wb") as err:
        sim = procs.start([simulator, "simulate", "--target", f"127.0.0.1:{gport}", "--count",
                           str(devices), "--records-per-packet", "1", "--send-interval", "1h",
                           "--ramp-up", "5s", "--source-spread", str(common.source_spread(devices, 4)),
                           "--ack-timeout", "30s",
                           "--quiet", "--duration", "300s", *sim_flags], stdout=out, stderr=err)
    n = 0
    for _ in range(240):
        n = int(metrics.metric(metrics.scrape(mport, timeout=5), "teltonika_sessions") or 0)
        if n >= devices:
            break
        time.sleep(0.5)
    time.sleep(4)  # the last ACKs, and the allocator settles
    after = rss_kib(gateway.pid)
    per = round((after - before) / devices, 2) if before and after else float("nan")
    print(f"{binary} {mode}: {n} sessions, RSS {before} -> {after} KiB, {per} KiB per idle device",
          flush=True)
    if n < devices:
        print(f"{PROG}: only {n} of {devices} devices held a session: the figure is not per "
              f"device; see the gateway's teltonika_refused_total (log: {tmp}/gateway.log)", flush=True)
    for p in (sim, gateway, redis):
        procs.stop(p)


def main(a):
    """Runs scripts/bench-idle with its parsed arguments; the exit code."""
    modes = a.modes.split(",")
    for m in modes:
        if m not in MODES:
            fail(PROG, f"--modes: '{m}' is not plain, tls or tls-unbounded")
    simulator = a.simulator or a.binaries[-1]
    common.executables(PROG, a.binaries + [simulator])
    raise_file_limit()
    tmp = tempfile.mkdtemp(prefix="tgw-bench-idle-")
    procs = Group(tmp)
    with common.stopping(procs, tmp, grace=5):
        cert = common.self_signed(tmp) if any(m.startswith("tls") for m in modes) else None
        for round in range(1, a.rounds + 1):
            print(f"round {round}", flush=True)
            for b in a.binaries:
                for m in modes:
                    measure(procs, tmp, b, simulator, m, a.devices, cert)
    return 0
