"""The Redis a run talks to, started on this machine: one redis-server, a master with
replicas and three sentinels, or a Redis Cluster of 3 masters with a replica each.
All three show the same face to a run (start(), url(), client(), log, stop_all(),
expected_down), plus the faults each can suffer."""

import collections
import os
import signal
import subprocess
import sys
import time

from . import redis_client
from .processes import SCRIPTS, free_port, spawn, wait_until

MASTER_NAME = "tgw"


def make_tls_files(dir):
    """A throwaway CA and server and client certificates in dir (scripts/redis-tls-files);
    from now on this process's Redis clients speak TLS. The CA's path."""
    subprocess.run([os.path.join(SCRIPTS, "redis-tls-files"), dir], check=True)
    ca = os.path.join(dir, "ca.crt")
    redis_client.use_tls(ca)
    return ca


def tls_server_args(tls_dir, port):
    """redis-server arguments for TLS only on port: clients, replication, cluster bus."""
    return ["--port", "0", "--tls-port", str(port),
            "--tls-cert-file", os.path.join(tls_dir, "redis.crt"),
            "--tls-key-file", os.path.join(tls_dir, "redis.key"),
            "--tls-ca-cert-file", os.path.join(tls_dir, "ca.crt"),
            "--tls-auth-clients", "optional", "--tls-replication", "yes"]


class RedisServer:
    """One redis-server on a free loopback port. durable: AOF with appendfsync always,
    so a restart loses no write it acknowledged; else no persistence at all."""

    def __init__(self, dir, log, durable=False, extra=()):
        self.port = free_port()
        self.dir, self.log = dir, log
        self.durable, self.extra = durable, list(extra)
        self.proc = None
        self.starts = 0
        self.expected_down = False

    def argv(self):
        persistence = ["--appendonly", "yes", "--appendfsync", "always"] if self.durable \
            else ["--appendonly", "no"]
        return (["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
                + persistence + ["--dir", self.dir] + self.extra)

    def start(self):
        """Starts it (again, on the same port and directory); True once it answers."""
        self.starts += 1
        self.proc = spawn(self.argv(), stdout=open(self.log, "ab"), stderr=subprocess.STDOUT)
        self.expected_down = False
        for _ in range(400):
            if redis_client.ping(self.port, timeout=1.0):
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.025)
        return False

    def kill(self):
        self.expected_down = True
        self.proc.kill()
        self.proc.wait()

    def url(self):
        return f"redis://127.0.0.1:{self.port}/0"

    def tls_flags(self):
        return []

    def client(self):
        return redis_client.client(self.port)

    def stop_all(self):
        if self.proc and self.proc.poll() is None:
            self.kill()


class RedisHA:
    """A master, replicas and three sentinels (quorum 2, down-after 1000 ms), no files:
    what survives a failover is what replication carried. Faults: kill, pause and
    restart any node. tls: every node and sentinel speaks TLS only (a throwaway CA),
    replication and the sentinels' links too."""

    def __init__(self, workdir, replicas, tls=False):
        self.dir = os.path.join(workdir, "redis-ha")
        os.makedirs(self.dir)
        self.tls_dir = os.path.join(self.dir, "tls") if tls else None
        self.ca = make_tls_files(self.tls_dir) if tls else None
        self.log = os.path.join(self.dir, "*.log")
        self.data = {free_port(): None for _ in range(replicas + 1)}  # port -> Popen
        self.sentinels = {free_port(): None for _ in range(3)}
        self.first_master = next(iter(self.data))
        self.expected_down = set()
        self.failovers = 0
        self.last_master = self.first_master
        self.masters_seen = [self.first_master]

    def _start_data(self, port, replica_of):
        argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", self.dir, "--dbfilename", f"dump-{port}.rdb",
                "--maxclients", "2000"]
        if replica_of:
            argv += ["--replicaof", "127.0.0.1", str(replica_of)]
        if self.tls_dir:
            argv += tls_server_args(self.tls_dir, port)
        self.data[port] = spawn(argv, stdout=open(os.path.join(self.dir, f"redis-{port}.log"), "ab"),
                                stderr=subprocess.STDOUT)
        self.expected_down.discard(port)
        return wait_until(lambda: redis_client.ping(port), 10)

    def _start_sentinel(self, port):
        conf = os.path.join(self.dir, f"sentinel-{port}.conf")
        if not os.path.exists(conf):
            with open(conf, "w") as f:
                f.write(f"port {port}\nbind 127.0.0.1\ndir {self.dir}\n"
                        f"sentinel monitor {MASTER_NAME} 127.0.0.1 {self.first_master} 2\n"
                        f"sentinel down-after-milliseconds {MASTER_NAME} 1000\n"
                        f"sentinel failover-timeout {MASTER_NAME} 3000\n"
                        f"sentinel parallel-syncs {MASTER_NAME} 1\n")
        tls = tls_server_args(self.tls_dir, port) if self.tls_dir else []
        self.sentinels[port] = spawn(["redis-server", conf, "--sentinel"] + tls,
                                     stdout=open(os.path.join(self.dir, f"sentinel-{port}.log"), "ab"),
                                     stderr=subprocess.STDOUT)
        self.expected_down.discard(port)

    def start(self):
        for port in self.data:
            if not self._start_data(port, None if port == self.first_master else self.first_master):
                return False
        for port in self.sentinels:
            self._start_sentinel(port)

        def ready():
            for port in self.sentinels:
                reps = redis_client.ask(port, "SENTINEL", "REPLICAS", MASTER_NAME)
                sens = redis_client.ask(port, "SENTINEL", "SENTINELS", MASTER_NAME)
                if reps is None or sens is None or len(reps) != len(self.data) - 1 or len(sens) != 2:
                    return False
            return True
        return wait_until(ready, 30)

    def url(self):
        scheme = "rediss+sentinel://" if self.ca else "redis+sentinel://"
        return scheme + ",".join(f"127.0.0.1:{p}" for p in self.sentinels) + f"/{MASTER_NAME}"

    def tls_flags(self):
        """What a tgw process needs beside url()."""
        return ["--redis-tls-ca", self.ca] if self.ca else []

    def master_port(self):
        """The master's port as the first sentinel still up names it; None when none
        answers."""
        for port in self.sentinels:
            if port in self.expected_down:
                continue
            got = redis_client.ask(port, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)
            if got:
                return int(got[1])
        return None

    def role(self, port):
        got = redis_client.ask(port, "ROLE")
        return got[0] if got else None

    def in_sync(self, port):
        """A replica whose full resynchronisation is done (master_link_status:up)."""
        info = redis_client.ask(port, "INFO", "replication") or {}
        return info.get("role") == "slave" and info.get("master_link_status") == "up"

    def client(self):
        """A client that talks to whichever node the sentinels name master, and moves
        when that changes."""
        return redis_client.sentinel_master(list(self.sentinels), MASTER_NAME)

    def note_master(self):
        """Counts a failover when the sentinels name a new master that says it is one."""
        now = self.master_port()
        if now and now != self.last_master and self.role(now) == "master":
            self.failovers += 1
            self.last_master = now
            self.masters_seen.append(now)
        return self.last_master

    def kill(self, port):
        procs = self.data if port in self.data else self.sentinels
        self.expected_down.add(port)
        procs[port].kill()
        procs[port].wait()

    def pause(self, port):
        self.data[port].send_signal(signal.SIGSTOP)

    def resume(self, port):
        self.data[port].send_signal(signal.SIGCONT)

    def restart(self, port):
        # As a master with no data: the sentinels must turn it into a replica.
        if port in self.data:
            return self._start_data(port, None)
        self._start_sentinel(port)
        return True

    def dead(self):
        """Nodes that ended without being killed here."""
        out = []
        for port, p in list(self.data.items()) + list(self.sentinels.items()):
            if port not in self.expected_down and p is not None and p.poll() is not None:
                out.append((port, p.returncode))
        return out

    def stop_all(self):
        for p in list(self.data.values()) + list(self.sentinels.values()):
            if p is not None and p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.kill()
                p.wait()


class RedisCluster:
    """scripts/redis-cluster's 3 masters with a replica each (AOF on every node).
    Faults: kill a node, restart it, reshard slots between masters. tls: TLS only, the
    cluster bus and replication too (scripts/redis-cluster --tls)."""

    def __init__(self, workdir, port_base, tls=False):
        self.dir = os.path.join(workdir, "redis-cluster")
        self.log = os.path.join(self.dir, "redis-*.log")
        self.base = port_base
        self.ports = list(range(port_base, port_base + 6))
        self.script = os.path.join(SCRIPTS, "redis-cluster")
        self.expected_down = set()
        self.failovers = 0
        self.reshards = []
        self._url = None
        self.tls = tls
        self.ca = os.path.join(self.dir, "tls", "ca.crt") if tls else None

    def start(self):
        done = subprocess.run([self.script, "up", "--dir", self.dir, "--port-base", str(self.base)]
                              + (["--tls"] if self.tls else []),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if done.returncode != 0:
            print(done.stdout, file=sys.stderr)
            return False
        self._url = done.stdout.strip().splitlines()[-1]
        if self.ca:
            redis_client.use_tls(self.ca)
        return True

    def url(self):
        return self._url

    def tls_flags(self):
        return ["--redis-tls-ca", self.ca] if self.ca else []

    def client(self):
        return redis_client.cluster(self.live_ports)

    def live_ports(self):
        return [p for p in self.ports if p not in self.expected_down]

    def pid(self, port):
        try:
            with open(os.path.join(self.dir, f"redis-{port}.pid")) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return None

    def role(self, port):
        got = redis_client.ask(port, "ROLE")
        return got[0] if got else None

    def node_id(self, port):
        return redis_client.ask(port, "CLUSTER", "MYID")

    def masters_with_slots(self):
        """Slots held per master port, as the first live node that answers sees it."""
        got = None
        for port in self.live_ports():
            got = redis_client.ask(port, "CLUSTER", "SLOTS", timeout=1.0)
            if got:
                break
        counts = collections.Counter()
        for r in got or []:
            counts[int(r[2][1])] += int(r[1]) - int(r[0]) + 1
        return counts

    def healthy(self):
        for port in self.live_ports():
            info = redis_client.ask(port, "CLUSTER", "INFO") or ""
            if "cluster_state:ok" not in info:
                return False
        return True

    def kill(self, port):
        pid = self.pid(port)
        self.expected_down.add(port)
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        wait_until(lambda: redis_client.ask(port, "PING", timeout=0.2) is None, 5)

    def restart(self, port):
        """With its nodes.conf and AOF: it rejoins the cluster, as a replica of the
        master that replaced it."""
        restart_cluster_node(self.dir, port, self.tls)
        self.expected_down.discard(port)
        return wait_until(lambda: redis_client.ping(port), 10)

    def reshard(self, source, target, slots, out):
        """Moves `slots` slots from master `source` to `target` (run in a thread)."""
        started = time.monotonic()
        tls = ["--tls", "--cacert", self.ca] if self.ca else []
        done = subprocess.run(
            ["redis-cli", *tls, "--cluster", "reshard", f"127.0.0.1:{target}",
             "--cluster-from", self.node_id(source), "--cluster-to", self.node_id(target),
             "--cluster-slots", str(slots), "--cluster-yes", "--cluster-pipeline", "100"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out.update({"exit": done.returncode, "seconds": round(time.monotonic() - started, 1),
                    "tail": done.stdout.strip().splitlines()[-3:]})

    def dead(self):
        out = []
        for port in self.live_ports():
            pid = self.pid(port)
            if pid is None:
                continue
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                out.append((port, None))
        return out

    def stop_all(self):
        subprocess.run([self.script, "down", "--dir", self.dir], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def restart_cluster_node(dir, port, tls=False):
    """Starts a node of scripts/redis-cluster's cluster in `dir` again, daemonized, with
    the settings that script gives it (its nodes.conf, AOF and pid file included)."""
    tls_args = tls_server_args(os.path.join(dir, "tls"), port) + ["--tls-cluster", "yes"] \
        if tls else []
    subprocess.run(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", dir,
         "--cluster-enabled", "yes", "--cluster-config-file", f"nodes-{port}.conf",
         "--cluster-node-timeout", "1000", "--cluster-replica-validity-factor", "0",
         "--cluster-require-full-coverage", "no", "--repl-diskless-sync-delay", "0",
         "--appendonly", "yes", "--appendfilename", f"appendonly-{port}.aof",
         "--appenddirname", f"aof-{port}", "--dbfilename", f"dump-{port}.rdb", "--save", "",
         "--daemonize", "yes", "--pidfile", os.path.join(dir, f"redis-{port}.pid"),
         "--logfile", os.path.join(dir, f"redis-{port}.log"), *tls_args], check=False)
