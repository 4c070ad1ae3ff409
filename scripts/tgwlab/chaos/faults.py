"""The faults of a chaos run: when they come, injecting each, and ending them (restarts,
resumes, the end of a split or drip window); also noticing what died uninvited."""

import collections
import signal
import threading
import time

from .. import redis_client
from ..processes import log_tail
from .devices import BAD_IMEI_BASE, bad_crc_device, oversize_device

FAULT_KINDS = ["kill", "pause", "redis_restart", "redis_pause", "split", "drip", "bad_crc",
               "oversize"]
HA_FAULT_KINDS = ["kill", "pause", "master_kill", "master_pause", "sentinel_kill", "split",
                  "drip", "bad_crc", "oversize"]
CLUSTER_FAULT_KINDS = ["kill", "pause", "reshard", "cluster_master_kill", "split", "drip",
                       "bad_crc", "oversize"]


class Faults:
    """The fault half of Chaos (run.py), which holds the state both halves use."""

    def schedule(self):
        a = self.args
        last = max(a.duration * 0.85, 6.0)
        times = sorted(self.rng.uniform(5.0, last) for _ in range(a.faults))
        kinds = [k for k in a.kinds]
        self.rng.shuffle(kinds)
        # Every enabled kind once (when there are enough faults), the rest at random.
        seq = kinds[:a.faults] + [self.rng.choice(a.kinds) for _ in range(a.faults - len(kinds))]
        return collections.deque(zip(times, seq))

    def inject(self, kind, now, t0):
        usable = [i for i in self.instances if i.usable()]
        victim = None
        if kind in ("kill", "pause"):
            # Keep one instance serving, as a real incident would leave some.
            if len(usable) < 2:
                return False
            victim = self.rng.choice(usable)
            if kind == "kill":
                victim.proc.kill()
                victim.proc.wait()
                victim.end_life("killed", -9)
                victim.restart_at = now + self.rng.uniform(0.5, 3.0)
                detail = victim.id
            else:
                victim.proc.send_signal(signal.SIGSTOP)
                victim.paused_until = now + self.rng.uniform(self.args.heartbeat_ttl_s + 1.0,
                                                             self.args.heartbeat_ttl_s + 3.0)
                detail = f"{victim.id} for {victim.paused_until - now:.1f} s"
        elif kind in ("redis_restart", "redis_pause"):
            if now < self.redis_pause_until or self.redis.expected_down:
                return False
            if kind == "redis_restart":
                self.redis.kill()
                self.redis_down_until = now + self.rng.uniform(0.5, 2.0)
                detail = f"down {self.redis_down_until - now:.1f} s"
            else:
                ms = self.rng.randint(500, 2500)
                mode = self.rng.choice(["WRITE", "ALL"])
                if redis_client.attempt(self.r.execute_command, "CLIENT", "PAUSE", ms, mode) != "OK":
                    return False
                self.redis_pause_until = now + ms / 1000
                detail = f"{mode} {ms} ms"
        elif kind in ("master_kill", "master_pause", "sentinel_kill"):
            ha = self.ha
            # One Redis fault at a time: a second failover before the first settled
            # tests the sentinels' timers, not the gateway.
            if self.ha_pending or any(c["deadline"] > now and not c["done"] for c in self.ha_checks):
                return False
            if kind == "sentinel_kill":
                up = [p for p in ha.sentinels if p not in ha.expected_down]
                port = self.rng.choice(up)
                ha.kill(port)
                back = now + self.rng.uniform(3.0, 8.0)
                self.ha_pending.append({"action": "restart", "port": port, "at": back,
                                        "after_failover": False})
                detail = f"sentinel {port} for {back - now:.1f} s"
            else:
                master = ha.note_master()
                if master in ha.expected_down or ha.role(master) != "master":
                    return False
                if kind == "master_kill":
                    ha.kill(master)
                    self.ha_pending.append({"action": "restart", "port": master,
                                            "at": now + self.rng.uniform(2.0, 5.0),
                                            "after_failover": True, "old_master": master})
                    detail = f"master {master}"
                else:
                    ha.pause(master)
                    back = now + self.rng.uniform(2.5, 4.0)
                    self.ha_pending.append({"action": "resume", "port": master, "at": back,
                                            "after_failover": False, "old_master": master})
                    detail = f"master {master} for {back - now:.1f} s"
        elif kind in ("reshard", "cluster_master_kill"):
            cl = self.cluster
            # One cluster fault at a time, on a healthy cluster.
            if self.cluster_pending or not cl.healthy():
                return False
            owners = cl.masters_with_slots()
            masters = [p for p in owners if p not in cl.expected_down]
            if len(masters) < 2:
                return False
            if kind == "reshard":
                source = self.rng.choice([p for p in masters if owners[p] > 1500] or masters)
                target = self.rng.choice([p for p in masters if p != source])
                slots = self.rng.randint(200, min(1500, max(200, owners[source] - 1)))
                out = {"at_s": round(now - t0, 1), "from": source, "to": target, "slots": slots}
                t = threading.Thread(target=cl.reshard, args=(source, target, slots, out),
                                     daemon=True)
                t.start()
                cl.reshards.append(out)
                self.cluster_pending.append({"action": "reshard", "thread": t, "out": out})
                detail = f"{slots} slots {source} -> {target}"
            else:
                victim = self.rng.choice(masters)
                cl.kill(victim)
                self.cluster_pending.append({"action": "restart", "port": victim,
                                             "at": now + self.rng.uniform(2.0, 5.0)})
                detail = f"master {victim}"
        elif kind in ("split", "drip"):
            if self.balancer.mode is not None:
                return False
            self.balancer.mode = kind
            self.window_until = now + self.rng.uniform(5.0, 12.0)
            detail = f"{self.window_until - now:.1f} s"
        else:
            if not usable:
                return False
            inst = self.rng.choice(usable)
            imei = str(BAD_IMEI_BASE + len(self.device_checks))
            self.bad_imeis.add(imei)
            result = {"at_s": round(now - t0, 1)}
            self.device_checks.append(result)
            fn = bad_crc_device if kind == "bad_crc" else oversize_device
            t = threading.Thread(target=fn, args=(imei, inst, result), daemon=True)
            t.start()
            self.device_threads.append(t)
            detail = f"{imei} on {inst.id}"
        self.faults[kind] += 1
        ends = {"kill": victim.restart_at if kind == "kill" else 0,
                "pause": victim.paused_until if kind == "pause" else 0,
                "redis_restart": getattr(self, "redis_down_until", 0),
                "redis_pause": self.redis_pause_until, "split": self.window_until,
                "drip": self.window_until}
        # The device checks take up to about 15 s; their own IMEIs are left out of the
        # registry comparison while they run.
        self.last_effect_end = max(self.last_effect_end, ends.get(kind, now + 15.0))
        self.fault_log.append({"at_s": round(now - t0, 1), "kind": kind, "detail": detail})
        print(f"  {now - t0:6.1f}s {kind:13s} {detail}", flush=True)
        return True

    def housekeeping(self, now, t0, end_faults=False):
        """Ends faults whose time is up, restarts what was killed, notices deaths."""
        # Redis first, so an instance restarted in the same step finds it.
        if self.ha:
            self.ha_housekeeping(now, t0, end_faults)
        elif self.cluster:
            self.cluster_housekeeping(now, t0, end_faults)
        elif self.redis.expected_down and (end_faults or now >= self.redis_down_until):
            if not self.redis.start():
                self.violations.append("redis-server did not restart")
            self.last_effect_end = max(self.last_effect_end, time.monotonic())
        elif not self.redis.expected_down and self.redis.proc.poll() is not None:
            self.crashes.append({"instance": "redis-server", "exit": self.redis.proc.returncode,
                                 "at_s": round(now - t0, 1), "log": log_tail(self.redis.log)})
            self.redis.start()
        for inst in self.instances:
            if inst.paused() and (end_faults or now >= inst.paused_until):
                if inst.alive():
                    inst.proc.send_signal(signal.SIGCONT)
                inst.paused_until = 0.0
            if inst.restart_at and (end_faults or now >= inst.restart_at):
                inst.restarts += 1
                inst.start()
                self.last_effect_end = max(self.last_effect_end, time.monotonic())
            elif not inst.restart_at and inst.proc.poll() is not None:
                code = inst.proc.returncode
                life = inst.lives[-1]
                if code == 1 and any("cannot use Redis" in l for l in log_tail(life["log"], 3)):
                    # `tgw serve` refuses to start while Redis is unreachable (a restart
                    # that fell into a Redis fault); a supervisor retries, and so do we.
                    inst.end_life("refused to start: Redis unreachable", code)
                    self.start_refusals += 1
                    inst.restart_at = now + 1.0
                    continue
                # Nobody killed it: a crash. Restart it so the run goes on.
                inst.end_life("crashed", code)
                self.crashes.append({"instance": inst.id, "exit": code, "at_s": round(now - t0, 1),
                                     "log": log_tail(inst.lives[-1]["log"])})
                inst.restarts += 1
                inst.start()
        if self.balancer.mode and (end_faults or now >= self.window_until):
            self.balancer.mode = None
        if self.sim.poll() is not None and not self.sim_stopping:
            self.crashes.append({"instance": "tgw simulate", "exit": self.sim.returncode,
                                 "at_s": round(now - t0, 1)})
            self.sim_stopping = True

    def cluster_housekeeping(self, now, t0, end_faults):
        cl = self.cluster
        still = []
        for p in self.cluster_pending:
            if p["action"] == "reshard":
                if p["thread"].is_alive():
                    still.append(p)
                    continue
                if p["out"].get("exit") != 0:
                    self.violations.append(f"reshard {p['out']} failed")
                self.last_effect_end = max(self.last_effect_end, time.monotonic())
                continue
            # A killed master comes back once its replica took over: as a replica.
            failed_over = cl.healthy()
            if not end_faults and (now < p["at"] or not failed_over):
                still.append(p)
                continue
            if failed_over:
                cl.failovers += 1
            if not cl.restart(p["port"]):
                self.violations.append(f"redis node {p['port']} did not restart")
            self.last_effect_end = max(self.last_effect_end, time.monotonic())
        if end_faults:
            for p in still:
                if p["action"] == "reshard":
                    p["thread"].join(120)
            still = [p for p in still if p["action"] == "restart"]
        self.cluster_pending = still
        for port, code in cl.dead():
            cl.expected_down.add(port)
            self.crashes.append({"instance": f"redis node {port}", "exit": code,
                                 "at_s": round(now - t0, 1)})

    def ha_housekeeping(self, now, t0, end_faults):
        ha = self.ha
        ha.note_master()
        still = []
        for p in self.ha_pending:
            failed_over = ha.last_master != p.get("old_master")
            due = now >= p["at"] and (failed_over or not p["after_failover"])
            if not (due or end_faults):
                still.append(p)
                continue
            if p["action"] == "restart":
                if not ha.restart(p["port"]):
                    self.violations.append(f"redis node {p['port']} did not restart")
            else:
                ha.resume(p["port"])
            if "old_master" in p:
                self.ha_checks.append({"port": p["port"], "deadline": now + 30.0, "done": False,
                                       "at_s": round(now - t0, 1)})
            self.last_effect_end = max(self.last_effect_end, time.monotonic())
        self.ha_pending = still
        for c in self.ha_checks:
            if c["done"]:
                continue
            # Back means resynchronised, not only reconfigured: a replica in the middle
            # of its full resync holds nothing yet, and a master lost then would be a
            # second failure before the first was repaired, which no --ack-replicas
            # covers (the sentinels may promote the empty replica).
            if ha.in_sync(c["port"]) and ha.last_master != c["port"]:
                c["done"] = True
                c["replica_after_s"] = round(now - t0 - c["at_s"], 1)
            elif now > c["deadline"]:
                c["done"] = True
                self.violations.append(f"old master {c['port']} back at {c['at_s']} s did not "
                                       f"become a replica within 30 s (role {ha.role(c['port'])})")
        for port, code in ha.dead():
            ha.expected_down.add(port)
            self.crashes.append({"instance": f"redis node {port}", "exit": code,
                                 "at_s": round(now - t0, 1)})
