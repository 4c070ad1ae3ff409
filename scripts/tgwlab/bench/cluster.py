"""scripts/bench-cluster: how tgw's store scales on a Redis Cluster: the persist
ceiling on 1 and 2 masters, a gateway end to end on one server and on 3 masters (CPU
side by side at one pace, throughput saturated), and what a master's failover costs a
paced fleet."""

import collections
import glob
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import types

from .. import redis_client
from ..cli import fail
from ..processes import (ROOT, SCRIPTS, TICK, Group, cpu_ticks, raise_file_limit, wait_for_port,
                         wait_until)
from ..servers import restart_cluster_node
from . import common, compare

PROG = "bench-cluster"
# Ports below the ephemeral range, with their bus ports (+10000) too.
BASE = 22400
CALLS_PER_MASTER = 20000


def log(message):
    print(f"[{time.strftime('%H:%M:%S', time.gmtime())}] {message}", file=sys.stderr, flush=True)


def report(line, path):
    """A result line to stderr and appended to path (`| tee -a path >&2`)."""
    print(line, file=sys.stderr, flush=True)
    with open(path, "a") as f:
        f.write(line + "\n")


def simulator_summary(path):
    with open(path) as f:
        return json.loads(f.read().strip().splitlines()[-1])


def start_cluster(n, dir, pinned=True):
    """A cluster of n masters and no replicas, each on its own core unless not
    pinned, with the gateway's Function library loaded."""
    os.makedirs(dir, exist_ok=True)
    ports = [BASE + i for i in range(n)]
    for i, port in enumerate(ports):
        pin = ["taskset", "-c", str(i)] if pinned else []
        subprocess.run(pin + ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", dir,
                              "--save", "", "--appendonly", "no", "--cluster-enabled", "yes",
                              "--cluster-config-file", f"nodes-{port}.conf", "--daemonize", "yes",
                              "--pidfile", f"{dir}/{port}.pid", "--logfile", f"{dir}/{port}.log"],
                       check=True)
    for port in ports:
        wait_until(lambda: redis_client.ping(port), 5, step=0.1)
    for port in ports[1:]:
        redis_client.ask(BASE, "CLUSTER", "MEET", "127.0.0.1", port)
    for i, port in enumerate(ports):
        redis_client.ask(port, "CLUSTER", "ADDSLOTSRANGE", 16384 * i // n, 16384 * (i + 1) // n - 1)

    def formed():
        for port in ports:
            info = redis_client.ask(port, "CLUSTER", "INFO") or ""
            if "cluster_state:ok" not in info or f"cluster_known_nodes:{n}\r" not in info:
                return False
        return True
    wait_until(formed, 10, step=0.1)
    with open(os.path.join(ROOT, "infra", "telemetry", "gateway_library.lua")) as f:
        library = f.read()
    for port in ports:
        redis_client.ask(port, "FUNCTION", "LOAD", "REPLACE", library, timeout=5)


def stop_cluster(dir):
    for pidfile in glob.glob(f"{dir}/*.pid"):
        with open(pidfile) as f:
            try:
                os.kill(int(f.read().strip()), signal.SIGKILL)
            except (ValueError, ProcessLookupError):
                pass
    time.sleep(0.3)
    shutil.rmtree(dir, ignore_errors=True)


def fcall_rate(masters):
    """Packets/s of redis-benchmark calling tgw_persist_batch (16 one-record packets a
    call). redis-benchmark's cluster mode needs 2 nodes or more; 1 master holding every
    slot serves the literal tag {tag} itself. Two client threads: one left the
    2-master cluster waiting on the client."""
    mode = ["--cluster"] if masters > 1 else []
    done = subprocess.run(["redis-benchmark", *mode, "--threads", "2", "-p", str(BASE), "-c", "50",
                           "-P", "4", "-n", str(CALLS_PER_MASTER * masters), "-r", "10000", "-q",
                           *common.persist_call(1, tag="tag")],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    calls = common.requests_per_second(common.benchmark_rate(done.stdout))
    return round(calls * common.PACKETS_PER_CALL)


class ClusterBench:
    def __init__(self, a, tgw, out):
        self.a, self.tgw, self.out = a, tgw, out
        self.procs = Group(out)

    def fresh_file(self, name):
        """An empty results file in the output directory; its path."""
        path = os.path.join(self.out, name)
        open(path, "w").close()
        return path

    def gateway(self, name, url, port, instance_id, extra=()):
        with open(os.path.join(self.out, f"{name}-gw.log"), "wb") as f:
            gw = self.procs.start([self.tgw, "serve", "--redis", url, *extra, "--port", str(port),
                                   "--bind", "127.0.0.1", "--metrics-addr", "", "--instance-id",
                                   instance_id, "--log-level", "warn"],
                                  stdout=f, stderr=subprocess.STDOUT)
        wait_for_port(port, 10)
        return gw

    def ceiling(self):
        a = self.a
        log(f"persist ceiling: redis-benchmark --cluster, FCALL tgw_persist_batch of "
            f"{common.PACKETS_PER_CALL} one-record packets, 1 master on core 0 against 2 on cores "
            f"0 and 1, {a.rounds} rounds")
        path = self.fresh_file("ceiling.txt")
        for r in range(1, a.rounds + 1):
            for m in (1, 2):
                dir = os.path.join(self.out, f"c{m}")
                start_cluster(m, dir)
                rate = fcall_rate(m)
                stop_cluster(dir)
                report(f"round {r} masters {m} packets_per_s {rate}", path)

    def ingest(self, name, url):
        """One saturated run: the gateway on its own port, the fleet sending as fast as
        ACKs come; records/s and the gateway's CPU per packet (returned)."""
        gw = self.gateway(name, url, BASE + 50, "tgw-bench-cluster-gw")
        t0 = cpu_ticks(gw.pid)
        sim_json = os.path.join(self.out, f"{name}-sim.json")
        with open(sim_json, "wb") as f:
            subprocess.run([self.tgw, "simulate", "--target", f"127.0.0.1:{BASE + 50}", "--count",
                            str(self.a.devices), "--send-interval", "0s", "--ramp-up", "2s",
                            "--duration", f"{self.a.seconds}s", "--json", "--quiet"],
                           stdout=f, stderr=subprocess.DEVNULL)
        t1 = cpu_ticks(gw.pid)
        self.procs.stop(gw)
        rep = simulator_summary(sim_json)
        packets = rep.get("packets_acked", 0)
        cpu_us = 1e6 * (t1 - t0) / TICK / max(packets, 1)
        report(f"{name}: {rep.get('records_acked', 0) / max(rep.get('elapsed_s', 1), 1e-9):.0f} "
               f"records/s, gateway CPU {cpu_us:.1f} us/packet, "
               f"ACK p99 {rep.get('ack_p99_ms')} ms", os.path.join(self.out, "saturated.txt"))
        return cpu_us

    def ingest_single(self, name):
        single = os.path.join(self.out, "single")
        subprocess.run(["redis-server", "--port", str(BASE + 40), "--bind", "127.0.0.1", "--save", "",
                        "--appendonly", "no", "--daemonize", "yes", "--pidfile", f"{single}.pid",
                        "--logfile", f"{single}.log"], check=True)
        wait_until(lambda: redis_client.ping(BASE + 40), 5, step=0.1)
        try:
            return self.ingest(name, f"redis://127.0.0.1:{BASE + 40}")
        finally:
            with open(f"{single}.pid") as f:
                os.kill(int(f.read().strip()), signal.SIGKILL)
            time.sleep(0.3)

    def ingest_cluster(self, name):
        # As the single node: not pinned (three masters on cores 0, 1 and 2 need 3 cores).
        dir = os.path.join(self.out, "c3")
        shutil.rmtree(dir, ignore_errors=True)
        start_cluster(3, dir, pinned=False)
        try:
            return self.ingest(name, "redis+cluster://" + ",".join(
                f"127.0.0.1:{BASE + i}" for i in range(3)))
        finally:
            stop_cluster(dir)

    def side_by_side(self):
        """The CPU figure: a gateway on one redis-server and one on a 3-master cluster
        at once, each with its own simulator at the same pace, so that both meet the
        same minutes and the same load (bench-compare's way). Saturated runs one after
        the other compare different throughputs, and on this box a gateway's CPU per
        packet follows its throughput (its share of the cores stays about the same)."""
        a = self.a
        log(f"side by side: one node and 3 masters at once, {a.paced_devices} devices a side "
            f"sending a 1-record packet every {a.period}, {a.seconds} s measured, "
            f"{a.e2e_rounds} rounds")
        path = self.fresh_file("e2e.txt")
        ratios = []
        for r in range(1, a.e2e_rounds + 1):
            dir = os.path.join(self.out, "c3")
            shutil.rmtree(dir, ignore_errors=True)
            start_cluster(3, dir, pinned=False)
            tmp = os.path.join(self.out, f"side-by-side-{r}")
            os.makedirs(tmp, exist_ok=True)
            try:
                masters = []
                for pidfile in glob.glob(f"{dir}/*.pid"):
                    with open(pidfile) as f:
                        masters.append(int(f.read().strip()))
                url = "redis+cluster://" + ",".join(f"127.0.0.1:{BASE + i}" for i in range(3))
                single = compare.Side("single", self.tgw, "", 352000000000000)
                cluster = compare.Side("cluster", self.tgw, "", 353000000000000, url, masters)
                # Which side starts first, and so which gets which cores, swaps every round.
                sides = [single, cluster] if r % 2 else [cluster, single]
                got = compare.measure(
                    types.SimpleNamespace(devices=a.paced_devices, period=a.period, records=1,
                                          seconds=a.seconds),
                    sides, self.procs, tmp, self.tgw)
            finally:
                stop_cluster(dir)
            if "single" not in got or "cluster" not in got:
                report(f"round {r}: a side failed (logs in {tmp})", path)
                continue
            one, three = got["single"], got["cluster"]
            ratios.append(three["gateway_us"] / one["gateway_us"])
            report(f"round {r}: gateway CPU us a packet, one node {one['gateway_us']:.1f}, "
                   f"3 masters {three['gateway_us']:.1f} (ratio {ratios[-1]:.3f}); packets/s "
                   f"{one['packets_per_s']:,.0f} and {three['packets_per_s']:,.0f}; ACK p99 "
                   f"{one['ack_p99_ms']:.1f} and {three['ack_p99_ms']:.1f} ms", path)
        if ratios:
            report("gateway CPU per packet, 3 masters / one node, same minutes, per round: "
                   + ", ".join(f"{x:.3f}" for x in ratios)
                   + f"; median {statistics.median(ratios):.3f}", path)

    def saturated(self):
        """Throughput: one node, then 3 masters, each alone and saturated, the order
        swapped every round. The CPU per packet is printed but is not the CPU figure:
        it moves with the throughput (see side_by_side)."""
        a = self.a
        log(f"saturated: {a.devices} devices, 1-record packets, as fast as ACKs come, "
            f"{a.seconds} s each, {a.saturated_rounds} rounds")
        self.fresh_file("saturated.txt")
        for r in range(1, a.saturated_rounds + 1):
            if r % 2:
                self.ingest_single(f"saturated one node round {r}")
                self.ingest_cluster(f"saturated 3 masters round {r}")
            else:
                self.ingest_cluster(f"saturated 3 masters round {r}")
                self.ingest_single(f"saturated one node round {r}")

    def paced(self, name, kill, url, cdir):
        """500 devices sending a packet a second for 30 s to a gateway with
        --ack-replicas (ACK_REPLICAS, default 1); with kill, the master of the first
        slots SIGKILLed 10 s in and started again 3 s later, as a supervisor would: it
        rejoins as the replica of the master that replaced it."""
        port = BASE + 60
        gw = self.gateway(name, url, port, f"tgw-bench-cluster-gw-{name}",
                          ["--ack-replicas", os.environ.get("ACK_REPLICAS", "1")])
        sim_json = os.path.join(self.out, f"{name}-sim.json")
        with open(sim_json, "wb") as f:
            sim = self.procs.start([self.tgw, "simulate", "--target", f"127.0.0.1:{port}", "--count",
                                    "500", "--imei-base", str(356200000000000 + kill * 1000),
                                    "--send-interval", "1s", "--ramp-up", "2s", "--duration", "30s",
                                    "--ack-timeout", "10s", "--json", "--quiet"],
                                   stdout=f, stderr=subprocess.DEVNULL)
        if kill:
            time.sleep(10)
            ports = range(BASE + 100, BASE + 106)
            victim = next((p for p in ports if (redis_client.ask(p, "ROLE") or [None])[0] == "master"),
                          ports[-1])
            with open(os.path.join(cdir, f"redis-{victim}.pid")) as f:
                os.kill(int(f.read().strip()), signal.SIGKILL)
            log(f"SIGKILLed master {victim}")
            time.sleep(3)
            restart_cluster_node(cdir, victim)
            log(f"started {victim} again")
        sim.wait()
        self.procs.stop(sim)
        self.procs.stop(gw)
        r = simulator_summary(sim_json)
        report(f"{name}: {r['packets_acked']} packets ACKed, ACK p50 {r['ack_p50_ms']} ms, "
               f"p99 {r['ack_p99_ms']} ms, max {r['ack_max_ms']} ms, {r['timeouts']} ACK timeouts, "
               f"{r['resends']} resends, {r['packets_unacked']} unACKed at the end",
               os.path.join(self.out, "failover.txt"))

    def failover(self):
        """A 3+3 cluster (scripts/redis-cluster, AOF on): undisturbed, then with a master
        SIGKILLed; the masters' memory after the undisturbed run, over the records
        stored, says what a record costs."""
        cdir = os.path.join(self.out, "c33")
        script = os.path.join(SCRIPTS, "redis-cluster")
        up = subprocess.run([script, "up", "--dir", cdir, "--port-base", str(BASE + 100)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if up.returncode != 0:
            fail(PROG, f"scripts/redis-cluster up failed (exit {up.returncode})", 1)
        url = up.stdout.strip()
        path = self.fresh_file("failover.txt")
        try:
            self.paced("undisturbed", 0, url, cdir)
            used = 0
            for p in range(BASE + 100, BASE + 106):
                if (redis_client.ask(p, "ROLE") or [None])[0] != "master":
                    continue
                used += int((redis_client.ask(p, "INFO", "memory") or {}).get("used_memory", 0))
            records = simulator_summary(os.path.join(self.out, "undisturbed-sim.json"))["records_acked"]
            report(f"memory: {used} bytes used by the masters after {records} one-record packets of "
                   f"500 devices ({used // (records if records > 0 else 1)} bytes a packet, empty "
                   f"cluster included)", path)
            self.paced("master-killed", 1, url, cdir)
        finally:
            subprocess.run([script, "down", "--dir", cdir], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)

    def summary(self):
        rates = collections.defaultdict(list)
        with open(os.path.join(self.out, "ceiling.txt")) as f:
            for line in f:
                x = line.split()
                rates[int(x[3])].append(int(x[5]))
        pairs = [b / a for a, b in zip(rates[1], rates[2])]
        print("persist ceiling, packets/s (1 record each):")
        print("  1 master : " + ", ".join(f"{r:,}" for r in rates[1]))
        print("  2 masters: " + ", ".join(f"{r:,}" for r in rates[2]))
        print("  ratio 2/1 per round: " + ", ".join(f"{p:.2f}" for p in pairs))
        for name, title in (("e2e", "gateway CPU, side by side"), ("saturated", "saturated, one after the other"),
                            ("failover", "failover (3+3, --ack-replicas 1)")):
            try:
                with open(os.path.join(self.out, f"{name}.txt")) as f:
                    print(f"{title}:\n  " + f.read().strip().replace("\n", "\n  "))
            except OSError:
                pass
        print(f"logs in {self.out}", flush=True)


def main(a):
    """Runs scripts/bench-cluster with its parsed arguments; the exit code."""
    common.need(PROG, ["redis-server", "redis-cli", "redis-benchmark", "taskset"], code=1,
                hint="not found (scripts/setup)")
    os.chdir(ROOT)
    raise_file_limit()  # two fleets of --paced-devices side by side
    if a.build:
        common.build_release("tgw", quiet=True)
    tgw = os.path.join(ROOT, "build", "release", "tgw")
    if not os.access(tgw, os.X_OK):
        fail(PROG, "build/release/tgw missing; build first", 1)
    out = a.out or tempfile.mkdtemp(prefix="tgw-bench-cluster-")
    os.makedirs(out, exist_ok=True)
    bench = ClusterBench(a, tgw, out)
    with common.stopping(bench.procs, grace=5):
        try:
            bench.ceiling()
            if a.e2e:
                bench.side_by_side()
                bench.saturated()
            if a.failover:
                bench.failover()
        finally:
            for dir in ("c1", "c2", "c3"):
                if os.path.isdir(os.path.join(out, dir)):
                    stop_cluster(os.path.join(out, dir))
        bench.summary()
    return 0
