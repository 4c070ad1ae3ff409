"""A chaos run: the cluster started, the faults over --duration, the settling, the
checks, and the report's numbers."""

import collections
import json
import os
import random
import signal
import subprocess
import tempfile
import threading
import time

from .. import metrics, redis_client
from ..balancer import Balancer
from ..processes import log_tail, rss_kib, spawn, wait_for_port
from ..servers import RedisCluster, RedisHA, RedisServer
from . import checks
from .devices import FLEET_IMEI_BASE
from .faults import Faults
from .instances import Instance
from .publisher import Publisher
from .registry import RegistryReader


class Chaos(Faults):
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.workdir = tempfile.mkdtemp(prefix="tgw-chaos-")
        self.ha = RedisHA(self.workdir, args.replicas, tls=args.tls) if args.redis_ha else None
        self.cluster = RedisCluster(self.workdir, args.cluster_port_base, tls=args.tls) \
            if args.redis_cluster else None
        if not (self.ha or self.cluster):
            os.makedirs(os.path.join(self.workdir, "redis"))
        self.redis = self.ha or self.cluster or RedisServer(
            os.path.join(self.workdir, "redis"), os.path.join(self.workdir, "redis.log"),
            durable=True, extra=["--maxclients", "2000"])
        self.registry = RegistryReader(clustered=self.cluster is not None)
        self.cluster_pending = []  # killed cluster nodes to start again, reshards running
        self.ha_pending = []  # node actions of --redis-ha faults still to come
        self.ha_checks = []   # old masters that must come back as replicas
        self.instances = []
        self.balancer = None
        self.sim = None
        self.sim_out = os.path.join(self.workdir, "simulate.json")
        self.acked_log = os.path.join(self.workdir, "acked.log")
        self.publisher = Publisher(args, self.redis, random.Random(args.seed + 1))
        self.faults = collections.Counter()
        self.skipped = collections.Counter()
        self.fault_log = []
        self.device_checks = []
        self.device_threads = []
        self.bad_imeis = set()
        self.crashes = []
        self.redis_pause_until = 0.0
        self.window_until = 0.0
        self.violations = []
        self.report = {}
        self.sim_stopping = False
        self.sim_report = {}
        self.last_effect_end = 0.0
        self.start_refusals = 0
        self.registry_samples = []  # (monotonic time, mismatches) once a second
        self.monitoring = threading.Event()

    # -- setup and teardown --

    def start(self):
        if not self.redis.start():
            raise SystemExit("chaos: redis-server did not start (see " + self.redis.log + ")")
        self.r = self.redis.client()
        for slot in range(1, self.args.instances + 1):
            inst = Instance(slot, self.args, self.redis, self.workdir)
            inst.start()
            self.instances.append(inst)
        self.balancer = Balancer(self.instances, self.args.seed + 2)
        self.balancer.start()
        # The instances must listen before the fleet arrives, or the first devices
        # all land on whichever came up first.
        deadline = time.monotonic() + 20
        for inst in self.instances:
            wait_for_port(inst.port, deadline - time.monotonic())
        a = self.args
        self.sim = spawn(
            [a.tgw, "simulate", "--target", f"127.0.0.1:{self.balancer.port}",
             "--count", str(a.devices), "--imei-base", str(FLEET_IMEI_BASE),
             "--records-per-packet", str(a.records_per_packet), "--io-per-record", "4",
             "--send-interval", a.send_interval, "--ramp-up", "3s", "--ack-timeout", "5s",
             "--reconnect-delay", "300ms", "--reconnect-max-delay", "2s",
             "--bad-crc-share", str(a.bad_crc_share), "--seed", str(a.seed),
             "--acked-log", self.acked_log, "--json", "--quiet"],
            stdout=open(self.sim_out, "wb"),
            stderr=open(os.path.join(self.workdir, "simulate.log"), "wb"))

    def cleanup(self):
        for inst in self.instances:
            if inst.alive():
                inst.proc.send_signal(signal.SIGCONT)
                inst.proc.kill()
                inst.proc.wait()
        for c in self.publisher.running:
            c["proc"].kill()
        if self.sim and self.sim.poll() is None:
            self.sim.kill()
            self.sim.wait()
        if self.balancer:
            self.balancer.stop()
        self.redis.stop_all()

    # -- the fault loop --

    def sample_rss(self, now):
        for inst in self.instances:
            if inst.alive():
                kib = rss_kib(inst.proc.pid)
                if kib:
                    inst.lives[-1]["rss"].append((round(now, 1), kib))

    def run(self):
        a = self.args
        t0 = self.t0 = time.monotonic()
        plan = self.schedule()
        print(f"chaos: {a.instances} instances, {a.devices} devices, {a.faults} faults over "
              f"{a.duration:.0f} s, seed {a.seed}; logs in {self.workdir}", flush=True)
        last_rss = 0.0
        self.monitoring.set()
        monitor = threading.Thread(target=self.monitor_registry, daemon=True)
        monitor.start()
        self.monitor_thread = monitor
        readiness = threading.Thread(target=self.monitor_readiness, daemon=True)
        readiness.start()
        self.readiness_thread = readiness
        while True:
            now = time.monotonic()
            if now - t0 >= a.duration:
                break
            while plan and now - t0 >= plan[0][0]:
                at, kind = plan[0]
                if self.inject(kind, now, t0):
                    plan.popleft()
                elif now - t0 - at > 10:  # no opportunity for 10 s: give it up
                    self.skipped[kind] += 1
                    plan.popleft()
                else:
                    break
            self.housekeeping(now, t0)
            self.publisher.tick(now, True)
            if now - last_rss >= 1.0:
                last_rss = now
                self.sample_rss(now - t0)
            time.sleep(0.05)
        for kind in (k for _, k in plan):
            self.skipped[kind] += 1
        self.housekeeping(time.monotonic(), t0, end_faults=True)
        self.faults_end = time.monotonic()
        self.last_effect_end = min(max(self.last_effect_end, 0.0), self.faults_end) or self.faults_end
        self.elapsed_faults = self.faults_end - t0
        for t in self.device_threads:
            t.join(15)
        self.settle(t0)

    # -- after the faults --

    def settle(self, t0):
        a = self.args
        # A device of a dead or paused instance is evicted within the TTL plus a janitor
        # tick; it reconnects within its backoff (2 s at most) or, stuck on an instance
        # that was paused, its 5 s handshake wait; plus 3 s of slack for a loaded box.
        bound = a.heartbeat_ttl_s + a.janitor_interval_ms / 1000 + 2.0 + 5.0 + 3.0
        self.report["registry_bound_s"] = round(bound, 1)
        last_rss = 0.0
        for t in self.device_threads:
            t.join(20)
        while True:
            now = time.monotonic()
            self.housekeeping(now, t0)
            self.publisher.tick(now, False)
            if now - last_rss >= 1.0:
                last_rss = now
                self.sample_rss(now - t0)
            settled = checks.settled_since(self.registry_samples)
            # Equal and staying equal for 3 s after the faults ended: settled.
            if settled is not None and now - max(settled, self.faults_end) >= 3.0:
                break
            if now - self.last_effect_end > bound + 5.0 and now - self.faults_end > 5.0:
                break
            time.sleep(0.5)
        self.monitoring.clear()
        self.monitor_thread.join(10)
        self.readiness_thread.join(10)
        self.check(checks.readiness([l for i in self.instances for l in i.lives],
                                    a.readiness_window_ms / 1000.0, self.t0), "readiness")
        samples = list(self.registry_samples)
        found, self.report["registry"], diff = checks.registry_convergence(
            samples, self.last_effect_end, self.faults_end, self.t0, bound)
        self.violations += found
        # Overlapping faults can stretch a difference past the bound, hence twice it.
        self.violations += checks.stuck_mismatches(samples, 2 * bound, self.t0)
        self.check_metrics()
        # Commands: let the sends in flight finish, then wait for the outstanding responses.
        self.publisher.wait(20)
        self.check_commands(wait_s=a.command_timeout_ms / 1000 + a.heartbeat_ttl_s
                            + a.janitor_interval_ms / 1000 + 10)
        self.stop_fleet()
        self.check_records()
        self.stop_instances()
        self.check_projections()
        self.check(checks.memory([l for i in self.instances for l in i.lives],
                                 self.elapsed_faults), "rss")

    def check(self, found, section):
        """A check's violations into the run's, its numbers into report[section]."""
        violations, self.report[section] = found
        self.violations += violations

    def monitor_readiness(self):
        """Once a second, each running instance's /readyz and the counters that say
        whether it ACKs while its devices send. A paused instance is not sampled: it
        answers nothing, and no balancer would send it a device either."""
        while self.monitoring.is_set():
            started = time.monotonic()
            for inst in self.instances:
                if not inst.alive() or inst.paused():
                    continue
                life = inst.lives[-1]
                code = metrics.readyz(inst.metrics_port)
                m = metrics.scrape(inst.metrics_port)
                if m is None or code is None:
                    continue
                acks = metrics.metric(m, "teltonika_acks_total")
                sent = (m.get(f'teltonika_frames_total{{instance_id="{inst.id}",kind="avl"}}', 0.0)
                        - (metrics.metric(m, "teltonika_frames_rejected_total") or 0.0))
                life["readiness"].append((time.monotonic(), acks, sent, code))
            time.sleep(max(0.0, 1.0 - (time.monotonic() - started)))

    def monitor_registry(self):
        """Compares the registry with the connected devices once a second, on its own
        connection so a paused Redis stalls only this thread."""
        r = self.redis.client()
        while self.monitoring.is_set():
            started = time.monotonic()
            diff = self.registry_diff(r)
            if diff is not None:
                self.registry_samples.append((time.monotonic(), diff))
            time.sleep(max(0.0, 1.0 - (time.monotonic() - started)))
        r.close()

    def registry_diff(self, r):
        # This script's own devices connect straight to an instance, not through the
        # balancer; while one runs its entry is right but the balancer cannot see it.
        return self.registry.diff(
            r, self.balancer.connected(),
            leave_out=lambda: self.bad_imeis if any(t.is_alive() for t in self.device_threads)
            else set(),
            live_ids=lambda: {i.id for i in self.instances if i.alive()})

    def check_metrics(self):
        """Each live instance's own view agrees with the registry's count of its devices."""
        reg = self.registry.entries(self.r) or {}
        counts = collections.Counter(reg.values())
        per = {}
        for inst in self.instances:
            m = metrics.scrape(inst.metrics_port)
            if m is None:
                self.violations.append(f"{inst.id}: metrics endpoint unreachable")
                continue
            held = metrics.metric(m, "teltonika_registry_devices")
            per[inst.id] = {"registry_devices": held,
                            "sessions": metrics.metric(m, "teltonika_sessions"),
                            "registry_entries": counts.get(inst.id, 0)}
            if held is not None and int(held) != counts.get(inst.id, 0):
                self.violations.append(f"{inst.id}: teltonika_registry_devices {int(held)} but "
                                       f"{counts.get(inst.id, 0)} registry entries")
        self.report["instances_at_end"] = per

    def check_commands(self, wait_s):
        expected = checks.published(self.publisher.done)
        deadline = time.monotonic() + wait_s
        while True:
            responses = collections.defaultdict(list)
            for prefix in self.registry.prefixes(self.r):
                for _, f in redis_client.xrange_all(self.r, prefix + "commands:responses"):
                    responses[f.get("command_id")].append(f)
            missing = [cid for cid in expected if cid not in responses]
            if not missing or time.monotonic() > deadline:
                break
            time.sleep(1.0)
        self.check(checks.commands(self.publisher.done, responses, self.t0), "commands")

    def stop_fleet(self):
        self.sim_stopping = True
        if self.sim.poll() is None:
            self.sim.send_signal(signal.SIGINT)
        try:
            self.sim.wait(30)
        except subprocess.TimeoutExpired:
            self.sim.kill()
            self.sim.wait()
            self.violations.append("tgw simulate did not stop on SIGINT")
        try:
            with open(self.sim_out) as f:
                self.sim_report = json.loads(f.read().strip().splitlines()[-1])
        except (OSError, ValueError, IndexError):
            self.sim_report = {}
            self.violations.append("tgw simulate printed no summary")
        if self.sim_report.get("bad_crc_acked"):
            self.violations.append(f"the gateway ACKed {self.sim_report['bad_crc_acked']} "
                                   f"packets with a corrupted CRC")
        # The devices' sessions close now; give the instances a moment to write it down.
        time.sleep(2.0)

    def check_records(self):
        acked = []  # (imei, first_ts, last_ts, count)
        with open(self.acked_log) as f:
            for line in f:
                imei, first, last, n = line.split()
                acked.append((imei, int(first), int(last), int(n)))
        for d in self.device_checks:
            if d.get("acked"):
                acked.append(tuple(d["acked"]))
        stored = collections.defaultdict(collections.Counter)
        total = 0
        for prefix in self.registry.prefixes(self.r):
            for _, f in redis_client.xrange_all(self.r, prefix + "telemetry:records", page=10000):
                stored[f.get("imei")][int(f.get("ts", -1))] += 1
                total += 1
        # With --redis-ha and --ack-replicas 0 an ACK promises only the master's memory,
        # and asynchronous replication loses the last writes of a failed master: that
        # loss is what this mode measures, not a violation.
        lost_by_design = self.ha is not None and self.args.ack_replicas == 0
        self.check(checks.records(acked, stored, total, self.device_checks, self.bad_imeis,
                                  lost_by_design), "records")

    def stop_instances(self):
        results = {}
        for inst in self.instances:
            if inst.alive():
                inst.proc.send_signal(signal.SIGTERM)
        for inst in self.instances:
            try:
                code = inst.proc.wait(20)
            except subprocess.TimeoutExpired:
                inst.proc.kill()
                code = inst.proc.wait()
                self.violations.append(f"{inst.id} did not exit within 20 s of SIGTERM")
            if inst.lives[-1]["end"] is None:
                inst.end_life("sigterm", code)
                results[inst.id] = code
                if code != 0:
                    self.violations.append(f"{inst.id} exited {code} on SIGTERM; log: "
                                           + " | ".join(log_tail(inst.lives[-1]["log"], 3)))
        self.report["sigterm_exit_codes"] = results

    def check_projections(self):
        """Every device's projection, folded again from its journal alone, equals the one
        stored: the journal explains everything that was made visible, across the faults
        (`tgw projections rebuild --dry-run`, after the fleet and the instances stopped)."""
        r = subprocess.run([self.args.tgw, "projections", "rebuild", "--dry-run", "--json",
                            "--redis", self.redis.url(), *self.redis.tls_flags()],
                           capture_output=True, text=True, timeout=300)
        self.report["projections_rebuild_dry_run_exit"] = r.returncode
        if r.returncode != 0:
            self.violations.append(
                f"tgw projections rebuild --dry-run exited {r.returncode}: "
                + (r.stdout.strip() or r.stderr.strip())[-600:])

    def finish(self):
        for c in self.crashes:
            self.violations.append(f"{c['instance']} died without injection (exit {c['exit']}) "
                                   f"at {c['at_s']} s; log: " + " | ".join(c.get("log", [])))
        a = self.args
        self.report.update({
            "seed": a.seed, "duration_s": a.duration, "instances": a.instances,
            "devices": a.devices, "records_per_packet": a.records_per_packet,
            "faults_planned": a.faults, "faults": dict(self.faults),
            "faults_skipped": dict(self.skipped), "fault_log": self.fault_log,
            "device_checks": self.device_checks,
            "balancer": dict(self.balancer.stats),
            "simulator": {k: self.sim_report.get(k) for k in (
                "connects", "disconnects", "packets_sent", "packets_acked", "records_acked",
                "resends", "timeouts", "bad_crc_sent", "bad_crc_unacked", "bad_crc_acked",
                "commands_received", "commands_replied", "ack_p99_ms", "ack_max_ms")}
            if getattr(self, "sim_report", None) else {},
            "instance_lives": [{"id": l["id"], "end": l["end"]}
                               for i in self.instances for l in i.lives],
            "crashes": self.crashes,
            "starts_refused_redis_unreachable": self.start_refusals,
            "redis_cluster": None if not self.cluster else {
                "ack_replicas": a.ack_replicas, "failovers": self.cluster.failovers,
                "reshards": self.cluster.reshards,
                "slots_per_master_at_end": {str(k): v for k, v in
                                            self.cluster.masters_with_slots().items()}},
            "redis_ha": None if not self.ha else {
                "replicas": a.replicas, "ack_replicas": a.ack_replicas,
                "failovers": self.ha.failovers, "masters": self.ha.masters_seen,
                "old_masters_back_as_replicas": [c for c in self.ha_checks]},
            "violations": self.violations, "workdir": self.workdir,
        })
        return self.report
