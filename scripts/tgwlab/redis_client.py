"""Redis through Debian's python3-redis: one server, a master found through Sentinel,
a Redis Cluster; the key shards' hash tags tgw uses in a cluster.

Replies are decoded as text (invalid UTF-8 replaced), as the checks compare them with
what the scripts wrote."""

import sys
import time

try:
    import redis
except ImportError:
    # Debian's python3-redis (scripts/setup) lives where only Debian's own python3
    # looks; a python3 of pyenv or a venv first on PATH finds it here.
    sys.path.append("/usr/lib/python3/dist-packages")
    import redis
from redis.commands import CoreCommands
from redis.crc import key_slot
from redis.sentinel import Sentinel

ERRORS = (redis.RedisError, OSError)
TEXT = {"decode_responses": True, "encoding_errors": "replace"}
# Set by use_tls(): every client of the run speaks TLS, verified against this CA.
TLS = {}


def use_tls(ca_file):
    """From now on every client of this process speaks TLS to Redis (a run whose
    servers listen on TLS ports only), checking the servers against ca_file."""
    TLS.update(ssl=True, ssl_ca_certs=ca_file)


def client(port, timeout=5.0):
    """A client of the redis-server on 127.0.0.1:port. A connection a restart broke is
    replaced when next used."""
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=timeout,
                       socket_connect_timeout=timeout, **TEXT, **TLS)


def attempt(call, *args, **kw):
    """call(*args, **kw), or None when Redis is down, paused past the timeout or
    answers with an error."""
    try:
        return call(*args, **kw)
    except ERRORS:
        return None


def ask(port, *command, timeout=0.5):
    """One command to the server on port, on a connection of its own; None on failure.
    A command given as separate words ("CLUSTER", "SLOTS") comes back as Redis sends
    it; one redis-py knows by its first word (PING, INFO) comes back parsed."""
    c = client(port, timeout)
    try:
        return attempt(c.execute_command, *command)
    finally:
        c.close()


def ping(port, timeout=0.5):
    return ask(port, "PING", timeout=timeout) is True


def xrange_all(r, key, page=5000):
    """Every entry of a stream as (id, {field: value}), in order."""
    start = "-"
    while True:
        batch = r.xrange(key, start, "+", count=page)
        yield from batch
        if len(batch) < page:
            return
        ms, seq = batch[-1][0].split("-")
        start = f"{ms}-{int(seq) + 1}"


class _FollowingMaster(redis.Redis):
    """A client of the master the sentinels name, asking them again at most once a
    second: a demoted master still answers reads, with data the failover discarded,
    so a connection to it must move even though no command fails."""

    checked_at = 0.0

    def execute_command(self, *args, **options):
        now = time.monotonic()
        if now - self.checked_at > 1.0:
            self.checked_at = now
            try:
                # Drops the idle connections when the address changed.
                self.connection_pool.get_master_address()
            except ERRORS:
                pass
        return super().execute_command(*args, **options)


def sentinel_master(sentinel_ports, name, timeout=5.0):
    """A client of the master `name` as the sentinels on sentinel_ports see it."""
    sentinels = Sentinel([("127.0.0.1", p) for p in sentinel_ports],
                         sentinel_kwargs={"socket_timeout": 0.5, "socket_connect_timeout": 0.5,
                                          **TLS},
                         socket_timeout=timeout, socket_connect_timeout=timeout, **TEXT, **TLS)
    return sentinels.master_for(name, redis_class=_FollowingMaster)


class ClusterClient(CoreCommands):
    """A Redis Cluster client: each command goes to the master of its key's slot,
    following MOVED (the slot map read again) and ASK; KEYS goes to every master.

    Our own, over redis-py's one-server clients, because Debian 12's python3-redis
    (4.3.4) cannot serve a run with failovers: its RedisCluster cannot rebuild its slot
    map once a node died (it deep-copies settings that hold its own lock; redis-py
    #2377, fixed in 4.4), after a failover its list of masters can stay stale, so that
    KEYS on them skips the promoted one without an error, and KEYS goes to one node
    unless told otherwise. Replies are parsed as redis-py parses them (hgetall a dict,
    xrange pairs)."""

    def __init__(self, ports, timeout=5.0):
        self.ports, self.timeout = ports, timeout  # ports(): the nodes to ask for the map
        self.nodes = {}
        self.ranges = []  # (first slot, last slot, master port)

    def close(self):
        for n in self.nodes.values():
            n.close()
        self.nodes = {}

    def node(self, port):
        if port not in self.nodes:
            self.nodes[port] = client(port, self.timeout)
        return self.nodes[port]

    def refresh(self):
        for port in self.ports():
            got = ask(port, "CLUSTER", "SLOTS", timeout=1.0)
            if got:
                self.ranges = [(int(r[0]), int(r[1]), int(r[2][1])) for r in got]
                return

    def masters(self):
        if not self.ranges:
            self.refresh()
        return sorted({port for _, _, port in self.ranges})

    def execute_command(self, *args, **options):
        if str(args[0]).upper() == "KEYS":
            out = []
            for port in self.masters():
                try:
                    out += self.node(port).execute_command(*args, **options)
                except (redis.ConnectionError, redis.TimeoutError, OSError):
                    # A master gone: the next call asks for the map again.
                    self.nodes.pop(port, None)
                    self.ranges = []
                    raise
            return out
        key = args[1] if isinstance(args[1], bytes) else str(args[1]).encode()
        slot = key_slot(key)
        last = None
        for _ in range(6):
            if not self.ranges:
                self.refresh()
            port = next((p for lo, hi, p in self.ranges if lo <= slot <= hi), None)
            if port is None:
                self.refresh()
                time.sleep(0.2)
                continue
            try:
                return self.node(port).execute_command(*args, **options)
            except redis.ResponseError as e:
                text = str(e)
                last = e
                if text.startswith("MOVED"):
                    self.refresh()
                    continue
                if text.startswith("ASK"):
                    # ASKING holds for the next command on the same connection.
                    pipe = self.node(int(text.split(":")[-1])).pipeline(transaction=False)
                    pipe.execute_command("ASKING")
                    pipe.execute_command(*args, **options)
                    return pipe.execute()[1]
                if text.startswith(("TRYAGAIN", "CLUSTERDOWN")):
                    time.sleep(0.2)
                    continue
                raise
            except (redis.ConnectionError, redis.TimeoutError, OSError) as e:
                last = e
                self.nodes.pop(port, None)
                self.refresh()
                time.sleep(0.2)
        raise last if last else redis.ConnectionError(f"no master serves slot {slot}")


def cluster(ports, timeout=5.0):
    """A client of the Redis Cluster whose nodes ports() lists."""
    return ClusterClient(ports, timeout)


def shard_prefixes(count):
    """The hash tags tgw gives its `count` key shards (infra/redis/key_shards.cpp):
    for shard i, the first tag "{i.n}" whose slot lies in the i-th of `count` equal
    ranges of the 16,384 slots."""
    out = []
    for shard in range(count):
        low, high = 16384 * shard // count, 16384 * (shard + 1) // count
        n = 0
        while not low <= key_slot(f"{{{shard}.{n}}}".encode()) < high:
            n += 1
        out.append(f"{{{shard}.{n}}}")
    return out
