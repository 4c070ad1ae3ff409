"""The gateway instances of a chaos run."""

import os
import subprocess
import time

from ..processes import free_port, spawn


class Instance:
    """One slot of the cluster: a fixed device and metrics port, and the process that
    currently serves them. A restart keeps the ports (the balancer's backend) and takes
    a new instance id, as a restarted process does."""

    def __init__(self, slot, args, redis, workdir):
        self.slot, self.args, self.redis, self.workdir = slot, args, redis, workdir
        self.port, self.metrics_port = free_port(), free_port()
        self.restarts = 0
        self.id = None
        self.proc = None
        self.paused_until = 0.0
        self.restart_at = 0.0
        self.lives = []  # one dict per process: id, pid, started, rss samples, end

    def start(self):
        self.id = f"chaos-{self.slot}" + (f"-r{self.restarts}" if self.restarts else "")
        a = self.args
        log = os.path.join(self.workdir, f"{self.id}.log")
        self.proc = spawn(
            [a.tgw, "serve", "--redis", self.redis.url(), *self.redis.tls_flags(), "--bind", "127.0.0.1",
             "--port", str(self.port), "--metrics-addr", f"127.0.0.1:{self.metrics_port}",
             "--instance-id", self.id,
             "--heartbeat-interval-ms", str(a.heartbeat_interval_ms),
             "--heartbeat-ttl-s", str(a.heartbeat_ttl_s),
             "--janitor-interval-ms", str(a.janitor_interval_ms),
             "--command-timeout-ms", str(a.command_timeout_ms),
             "--handshake-timeout-ms", "10000", "--drain-timeout-ms", "3000",
             "--io-threads", "1", "--actor-threads", "2", "--writer-shards", "1",
             "--ack-replicas", str(a.ack_replicas),
             "--readiness-window-ms", str(a.readiness_window_ms), "--log-level", "warn"],
            stdout=open(log, "ab"), stderr=subprocess.STDOUT)
        self.lives.append({"id": self.id, "pid": self.proc.pid, "log": log,
                           "started": time.monotonic(), "rss": [], "end": None,
                           "readiness": []})
        self.paused_until = 0.0
        self.restart_at = 0.0

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def paused(self):
        return self.paused_until > 0

    def usable(self):
        return self.alive() and not self.paused()

    def end_life(self, how, code=None):
        life = self.lives[-1]
        life["end"] = {"how": how, "code": code}
