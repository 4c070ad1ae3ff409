"""scripts/bench-ingest: redis-server, `tgw serve` and `tgw simulate` on this box;
throughput and ACK latency windows, the XADD and FCALL ceilings of the same Redis,
idle memory per device; the summary (ingest_summary.py)."""

import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from .. import metrics, redis_client
from ..cli import fail
from ..processes import ROOT, Group, free_port, log_tail, open_files, raise_file_limit, rss_kib, \
    wait_for_port, wait_until
from . import common
from .common import log
from .ingest_summary import summarize
from .window import Gone, progress, snapshot, window

PROG = "scripts/bench-ingest"
IMEI_A = 356307042440000


class Tee:
    """Writes to the terminal and to a file at once (`| tee FILE`)."""

    def __init__(self, path):
        self.file, self.out = open(path, "w"), sys.stdout

    def write(self, text):
        self.out.write(text)
        self.file.write(text)

    def flush(self):
        self.out.flush()
        self.file.flush()


class Ingest:
    def __init__(self, args, tgw, out, tmp):
        self.a, self.tgw, self.out, self.tmp = args, tgw, out, tmp
        self.procs = Group(tmp)
        self.failed = False
        self.gw_ack = 0
        self.gw_tls = False
        self.redis_port = free_port()
        self.redis = None
        self.gateway = None

    # -- Redis --

    def start_redis(self):
        version = re.search(r"v=([0-9.]+)", subprocess.run(["redis-server", "--version"],
                                                            capture_output=True, text=True).stdout)
        log(f"redis-server {version.group(1) if version else '?'} on 127.0.0.1:{self.redis_port} "
            f"(no persistence, in {self.tmp})")
        self.redis = self.procs.start(
            ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.tmp, "--logfile", os.path.join(self.tmp, "redis.log")])
        replicas = []
        for _ in range(self.a.ack_replicas):
            port = free_port()
            self.procs.start(
                ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", self.tmp, "--dbfilename", f"replica-{port}.rdb",
                 "--replicaof", "127.0.0.1", str(self.redis_port),
                 "--logfile", os.path.join(self.tmp, f"replica-{port}.log")])
            replicas.append(port)
        if not wait_until(lambda: redis_client.ping(self.redis_port), 5):
            fail(PROG, f"redis-server did not start (see {self.tmp}/redis.log)", 1)
        self.r = redis_client.client(self.redis_port)
        for port in replicas:
            wait_until(lambda: (redis_client.ask(port, "INFO", "replication") or {})
                       .get("master_link_status") == "up", 10)
            log(f"replica of the redis-server on 127.0.0.1:{port}")

    def benchmark(self, *command):
        """redis-benchmark -q against the private Redis: its rate line."""
        done = subprocess.run(["redis-benchmark", "-p", str(self.redis_port), *command],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = common.benchmark_rate(done.stdout)
        if line is None:
            fail(PROG, f"redis-benchmark gave no rate: {done.stdout.strip()[-300:]}", 1)
        return line

    def baselines(self):
        log("baseline: redis-benchmark -n 500000 -P 64 -q XADD bench '*' f v")
        self.r.execute_command("FLUSHALL", "SYNC")
        self.write("xadd-baseline.log", self.benchmark("-n", "500000", "-P", "64", "-q", "XADD",
                                                       "bench", "*", "f", "v"))
        self.r.delete("bench")
        # The ceiling of the gateway's own write: redis-benchmark calling tgw_persist_batch,
        # the function the gateway calls, with 16 packets a call for 10,000 devices (keys
        # and fingerprints from __rand_int__), records shaped like the simulator's.
        with open(os.path.join(ROOT, "infra", "telemetry", "gateway_library.lua")) as f:
            self.r.execute_command("FUNCTION", "LOAD", "REPLACE", f.read())
        ppc = common.PACKETS_PER_CALL
        log(f"ceiling of the gateway's write: redis-benchmark -P 4 FCALL tgw_persist_batch of "
            f"{ppc} packets, 1 and 10 records")
        for n, total in ((1, 8000), (10, 2000)):
            line = self.benchmark("-n", str(total), "-P", "4", "-r", "10000", "-q",
                                  *common.persist_call(n))
            line = re.sub(r"^FCALL .*: ([0-9.]* requests per second)",
                          lambda m: f"FCALL tgw_persist_batch x{ppc}, {n} record(s): {m.group(1)}",
                          line)
            self.write(f"fcall{n}-baseline.log", line)

    def write(self, name, line):
        """Prints a line and keeps it in out/name (`| tee`)."""
        print(line, flush=True)
        with open(os.path.join(self.out, name), "w") as f:
            f.write(line + "\n")

    # -- the gateway --

    def start_gateway(self, cpus, threads, log_file):
        """A fresh gateway on an empty Redis, pinned to cpus ("" for none), with
        `threads` io/actor threads and writer shards (0: the gateway's defaults)."""
        self.r.execute_command("FLUSHALL", "SYNC")
        # Fresh ports for each gateway, so a port taken meanwhile by another program is
        # no obstacle; the simulator command follows them.
        self.gw_port, self.metrics_port = common.fresh_ports(2, taken=(self.redis_port,))
        self.sim = [self.tgw, "simulate", "--target", f"127.0.0.1:{self.gw_port}",
                    "--io-threads", str(self.a.sim_threads), "--log-level", "warn"]
        cmd = [self.tgw, "serve", "--redis", f"redis://127.0.0.1:{self.redis_port}",
               "--port", str(self.gw_port), "--bind", "127.0.0.1",
               "--metrics-addr", f"127.0.0.1:{self.metrics_port}",
               "--ack-replicas", str(self.gw_ack), "--log-level", "warn"]
        if self.gw_tls:
            cmd += ["--tls-cert", os.path.join(self.tmp, "tls.crt"),
                    "--tls-key", os.path.join(self.tmp, "tls.key")]
            self.sim.append("--tls")
        if threads > 0:
            cmd += ["--io-threads", str(threads), "--actor-threads", str(threads),
                    "--writer-shards", str(threads)]
        if cpus:
            cmd = ["taskset", "-c", cpus] + cmd
        with open(log_file, "w") as f:
            f.write(" ".join(cmd) + "\n")
        with open(log_file, "ab") as f:
            self.gateway = self.procs.start(cmd, stderr=f)
        for _ in range(200):
            if self.gateway.poll() is not None:
                print("\n".join(log_tail(log_file, 20)), file=sys.stderr)
                fail(PROG, "the gateway exited at start", 1)
            if metrics.scrape(self.metrics_port, timeout=5) is not None and \
                    wait_for_port(self.gw_port, 0.1):
                return
            time.sleep(0.1)
        fail(PROG, f"the gateway did not come up; see {log_file}", 1)

    def finish_gateway(self, name):
        """Stops the gateway after a run. One that died on its own is recorded (exit
        status, end of its log) in NAME.gateway.json and the run goes on."""
        time.sleep(2)
        path = os.path.join(self.out, f"{name}.gateway.json")
        if self.gateway.poll() is None:
            self.procs.stop(self.gateway, 30)
            with open(path, "w") as f:
                f.write('{"died": false}\n')
            return
        status = self.gateway.wait()
        self.procs.stop(self.gateway)
        self.failed = True
        log_file = os.path.join(self.out, f"{name}.gateway.log")
        print(f"{PROG}: {name}: the gateway died on its own (exit status {status}); its log ends:",
              file=sys.stderr)
        print("\n".join(log_tail(log_file, 3)), file=sys.stderr)
        with open(log_file, errors="replace") as f:
            tail = f.read()[-300:]
        with open(path, "w") as f:
            json.dump({"died": True, "status": status, "log_tail": tail}, f)

    # -- the runs --

    def throughput(self, name, rpp, pacing, cpus="", threads=0):
        """A fresh gateway and one simulator run of ramp-up + warm-up + window + 3 s. The
        window's figures are the simulator's per-second lines; the gateway's counters
        and XLEN are read at its ends."""
        a = self.a
        how = "unpinned, default threads" if not cpus else \
            f"pinned to cpus {cpus}, {threads} io/actor threads and writer shards"
        log(f"{name}: gateway {how}; {a.devices} devices, {rpp} record(s) a packet, "
            f"{' '.join(pacing)}; {a.ramp_up}s ramp-up, {a.warmup}s warm-up, {a.seconds}s measured")
        self.start_gateway(cpus, threads, os.path.join(self.out, f"{name}.gateway.log"))
        t0 = a.ramp_up + a.warmup
        t1 = t0 + a.seconds
        started = time.time()
        progress_log = os.path.join(self.out, f"{name}.progress.jsonl")
        with open(os.path.join(self.out, f"{name}.json"), "wb") as out, \
                open(os.path.join(self.out, f"{name}.progress.log"), "wb") as err:
            sim = self.procs.start(
                self.sim + ["--count", str(a.devices), "--records-per-packet", str(rpp), *pacing,
                            "--ramp-up", f"{a.ramp_up}s", "--duration", f"{t1 + 3}s",
                            "--source-spread", str(common.source_spread(a.devices, a.source_spread)),
                            "--json",
                            "--progress-log", progress_log], stdout=out, stderr=err)
        # The snapshots are taken from this process at their moment: no process starts
        # inside the window, where its CPU would show up as latency.
        others = [("redis", self.redis.pid), ("simulator", sim.pid)]
        ends = []
        for at in (t0, t1):
            time.sleep(max(0.0, started + at - time.time()))
            try:
                ends.append(snapshot(self.metrics_port, self.redis_port, self.gateway.pid, others))
            except Gone as e:
                print(e, file=sys.stderr)
        status = sim.wait()
        self.procs.stop(sim)
        if status != 0:
            print(f"{PROG}: {name}: the simulator exited with {status}", file=sys.stderr)
            self.failed = True
        if len(ends) == 2:
            w = window(*ends)
            w["simulator"] = progress(progress_log, float(t0), float(t1))
            with open(os.path.join(self.out, f"{name}.window.json"), "w") as f:
                json.dump(w, f, indent=1)
        else:
            print(f"{PROG}: {name}: the gateway did not last the measured window", file=sys.stderr)
            self.failed = True
        self.finish_gateway(name)

    def both(self, name, rpp, pacing):
        """The run, and its twins: with --ack-replicas replicated, with --tls on TLS; one
        after the other, so they see the same minutes."""
        self.gw_ack = 0
        self.throughput(name, rpp, pacing)
        if self.a.ack_replicas > 0:
            self.gw_ack = self.a.ack_replicas
            self.throughput(f"{name}_ack", rpp, pacing)
            self.gw_ack = 0
        if self.a.tls:
            self.gw_tls = True
            self.throughput(f"{name}_tls", rpp, pacing)
            self.gw_tls = False

    def sessions_and_acks(self):
        m = metrics.scrape(self.metrics_port, timeout=5)
        return int(metrics.metric(m, "teltonika_sessions") or 0), \
            int(metrics.metric(m, "teltonika_acks_total") or 0)

    def wait_sessions(self, n):
        """Until the gateway holds n sessions and has ACKed n packets."""
        s = acks = 0
        for _ in range(1200):
            s, acks = self.sessions_and_acks()
            if s >= n and acks >= n:
                return True
            time.sleep(0.25)
        print(f"{PROG}: memory: {s} sessions and {acks} ACKs of {n} after 300 s", file=sys.stderr)
        return False

    def idle_fleet(self, name, suffix, count, spread, imei_base):
        with open(os.path.join(self.out, f"{name}-sim-{suffix}.json"), "wb") as out, \
                open(os.path.join(self.out, f"{name}-sim-{suffix}.log"), "wb") as err:
            return self.procs.start(
                self.sim + ["--count", str(count), "--records-per-packet", "1",
                            "--send-interval", "1h", "--ramp-up", "10s", "--source-spread",
                            str(common.source_spread(count, spread)), "--imei-base", str(imei_base),
                            "--ack-timeout", "30s",
                            "--quiet", "--json"], stdout=out, stderr=err)

    def idle_memory(self, name="memory"):
        """RSS before devices, with DEVICES idle devices (one simulator), then with
        IDLE_DEVICES (a second simulator), each after every device got its one ACK."""
        a = self.a
        log(f"{name}: gateway RSS before devices, with {a.devices}, then with {a.idle_devices} "
            f"idle devices (one 1-record packet each, then silence)")
        self.start_gateway("", 0, os.path.join(self.out, f"{name}.gateway.log"))
        time.sleep(2)
        pid = self.gateway.pid
        m = {"rss_kib_before": rss_kib(pid), "fds_before": open_files(pid)}
        sim_a = self.idle_fleet(name, "a", a.devices, a.source_spread, IMEI_A)
        ok = self.wait_sessions(a.devices)
        time.sleep(5)
        m.update(devices_1=a.devices, sessions_1=self.sessions_and_acks()[0],
                 rss_kib_1=rss_kib(pid), fds_1=open_files(pid))
        log(f"memory: {m['sessions_1']} idle sessions, gateway RSS {m['rss_kib_1'] // 1024} MiB; "
            f"adding {self.second_fleet}")
        sim_b = self.idle_fleet(name, "b", self.second_fleet, max(1, a.source_spread - 1),
                                IMEI_A + a.devices)
        ok = self.wait_sessions(a.idle_devices) and ok
        time.sleep(5)
        m.update(devices_2=a.idle_devices, sessions_2=self.sessions_and_acks()[0],
                 rss_kib_2=rss_kib(pid), fds_2=open_files(pid),
                 simulators_2=[a.devices, self.second_fleet], all_connected=ok)
        log(f"memory: {m['sessions_2']} idle sessions, gateway RSS {m['rss_kib_2'] // 1024} MiB, "
            f"{m['fds_2']} open files")
        self.failed = self.failed or not ok
        with open(os.path.join(self.out, f"{name}.json"), "w") as f:
            json.dump(m, f)
        self.procs.stop(sim_b, 30)
        self.procs.stop(sim_a, 30)
        self.finish_gateway(name)

    def run(self):
        a = self.a
        date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        with open("/proc/loadavg") as f:
            load = " ".join(f.read().split()[:3])
        self.start_redis()
        self.baselines()
        if a.tls:
            if common.self_signed(self.tmp) is None:
                fail(PROG, "openssl could not make a certificate", 1)
            log("TLS: self-signed P-256 certificate for the _tls runs")
        saturated = ["--send-interval", "0s"]
        self.both("sat1", 1, saturated)
        self.both("sat10", 10, saturated)
        ncpu = common.nproc()
        if a.cores_runs:
            if ncpu >= 2:
                self.throughput("core1", 1, saturated, "0", 1)
                self.throughput("core2", 1, saturated, "0,1", 2)
            else:
                print(f"{PROG}: one core only; no 1-core/2-core runs", file=sys.stderr)
        if a.paced_runs:
            # Each device sends a packet every period, as a tracker's send period does, so
            # the fleet offers the bar's rate (DESIGN.md §8: 25,000 records/s in 1-record
            # packets, 100,000 in 10-record ones) whatever the ACK latency (while it stays
            # under the period).
            self.both("paced1", 1, ["--send-period", f"{a.devices * 1 * 1000 // 25000}ms"])
            self.both("paced10", 10, ["--send-period", f"{a.devices * 10 * 1000 // 100000}ms"])
        if a.memory_runs:
            self.idle_memory("memory")
            if a.tls:
                self.gw_tls = True
                self.idle_memory("memory_tls")
                self.gw_tls = False
        tee = Tee(os.path.join(self.out, "summary.txt"))
        with contextlib.redirect_stdout(tee):
            summarize(self.out, date, ncpu, common.cpu_model(), load, a.devices, a.seconds,
                      a.ack_replicas, int(a.tls))
        tee.file.close()
        if self.failed:
            print(f"{PROG}: some runs did not complete cleanly (see above and {self.out})",
                  file=sys.stderr)
            return 1
        return 0


def main(a):
    """Runs scripts/bench-ingest with its parsed arguments; the exit code."""
    if a.ack_replicas:
        a.cores_runs = a.memory_runs = False
    if a.tls:
        a.cores_runs = False
    if a.seconds < 3:
        fail(PROG, "--seconds must be at least 3")
    if a.devices < 1 or a.sim_threads < 1 or a.source_spread < 1:
        fail(PROG, "--devices, --sim-threads and --source-spread must be at least 1")
    if a.idle_devices <= a.devices:
        fail(PROG, "--idle-devices must exceed --devices")
    if a.ack_replicas and a.tls:
        fail(PROG, "--ack-replicas and --tls compare against plain runs each; give one")
    common.need(PROG, ["redis-server", "redis-cli", "redis-benchmark", "taskset", "cmake", "openssl"])
    tgw, out = common.prepare(PROG, a.build, "bench-ingest", (".json", ".log", ".txt"))

    # A process may open at most `ulimit -Hn` files (20,000 on the project's machines).
    # The gateway holds one per device plus a few for Redis, listeners and the runtime;
    # each simulator one per device plus 64, so the second memory step runs two
    # simulators.
    files = raise_file_limit()
    if a.idle_devices > files - 200:
        print(f"{PROG}: a process may open {files} files; --idle-devices lowered to {files - 200}",
              file=sys.stderr)
        a.idle_devices = files - 200
    second_fleet = a.idle_devices - a.devices
    if a.devices > files - 100 or second_fleet > files - 100 or second_fleet < 1:
        fail(PROG, f"a process may open {files} files, too few for {a.devices} devices")

    tmp = tempfile.mkdtemp(prefix="tgw-bench-ingest-")
    bench = Ingest(a, tgw, out, tmp)
    bench.second_fleet = second_fleet
    with common.stopping(bench.procs, tmp):
        return bench.run()
