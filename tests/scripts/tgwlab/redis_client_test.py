"""tgwlab.redis_client against redis-servers this test starts on loopback."""

import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from tgwlab import redis_client
from tgwlab.processes import SCRIPTS, free_cluster_port, free_port, spawn, wait_until

HAVE_REDIS = shutil.which("redis-server") is not None and shutil.which("redis-cli") is not None


def start_server(test, *extra):
    """A throwaway redis-server on a free port, stopped after the test; its port."""
    port = free_cluster_port() if "--cluster-enabled" in extra else free_port()
    d = tempfile.mkdtemp(prefix="tgwlab-test-")
    p = spawn(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--dir", d, *extra],
              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    test.addCleanup(shutil.rmtree, d, True)
    test.addCleanup(p.wait)
    test.addCleanup(p.kill)
    test.assertTrue(wait_until(lambda: redis_client.ping(port), 10))
    return port


KEYS = ["foo", "", "{user1000}.following", "{user1000}.followers", "a{}b", "{}x{y}", "x{y}z",
        "{0.1}connections:registry", "journal:{356307042441013}", "instance:devices:chaos-1-r2",
        "{{nested}}", "}{", "tgw:telemetry-shards"] + [str(356000000000000 + i) for i in range(64)]


@unittest.skipUnless(HAVE_REDIS, "redis-server not installed (scripts/setup)")
class OneServerTest(unittest.TestCase):
    def test_key_slots_agree_with_cluster_keyslot(self):
        port = start_server(self, "--cluster-enabled", "yes", "--cluster-config-file",
                            f"nodes-{free_port()}.conf")
        r = redis_client.client(port)
        for key in KEYS:
            self.assertEqual(redis_client.key_slot(key.encode()),
                             r.execute_command("CLUSTER", "KEYSLOT", key), key)

    def test_shard_prefixes_are_the_first_tags_in_each_shards_slots(self):
        port = start_server(self, "--cluster-enabled", "yes", "--cluster-config-file",
                            f"nodes-{free_port()}.conf")
        r = redis_client.client(port)

        def slot(tag):
            return r.execute_command("CLUSTER", "KEYSLOT", tag + "connections:registry")
        for count in (1, 2, 3, 5, 7, 16):
            prefixes = redis_client.shard_prefixes(count)
            self.assertEqual(len(prefixes), count)
            for shard, prefix in enumerate(prefixes):
                low, high = 16384 * shard // count, 16384 * (shard + 1) // count
                self.assertTrue(low <= slot(prefix) < high, (count, prefix))
                n = int(prefix[1:-1].split(".")[1])
                for earlier in range(n):
                    self.assertFalse(low <= slot(f"{{{shard}.{earlier}}}") < high)
        # As infra/redis/key_shards.cpp names them (pinned from scripts/chaos).
        self.assertEqual(redis_client.shard_prefixes(3), ["{0.1}", "{1.0}", "{2.0}"])

    def test_xrange_all_pages_through_a_stream_in_order(self):
        r = redis_client.client(start_server(self))
        ids = [r.xadd("s", {"n": str(i), "bytes": b"\xff"}) for i in range(23)]
        got = list(redis_client.xrange_all(r, "s", page=5))
        self.assertEqual([i for i, _ in got], ids)
        self.assertEqual([f["n"] for _, f in got], [str(i) for i in range(23)])
        self.assertEqual(got[0][1]["bytes"], "\ufffd")  # invalid UTF-8 replaced, not fatal

    def test_a_client_survives_a_restart_of_its_server(self):
        port = free_port()
        d = tempfile.mkdtemp(prefix="tgwlab-test-")
        self.addCleanup(shutil.rmtree, d, True)
        argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", d]
        p = spawn(argv, stdout=subprocess.DEVNULL)
        self.assertTrue(wait_until(lambda: redis_client.ping(port), 10))
        r = redis_client.client(port)
        self.assertTrue(r.set("k", "1"))
        p.kill()
        p.wait()
        self.assertIsNone(redis_client.attempt(r.get, "k"))
        p = spawn(argv, stdout=subprocess.DEVNULL)
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        self.assertTrue(wait_until(lambda: redis_client.ping(port), 10))
        self.assertIsNone(r.get("k"))  # the server lost it; the client reconnected

    def test_attempt_and_ask_give_none_for_a_server_that_is_not_there(self):
        port = free_port()
        self.assertIsNone(redis_client.attempt(redis_client.client(port, 0.5).get, "k"))
        self.assertIsNone(redis_client.ask(port, "PING"))
        self.assertFalse(redis_client.ping(port))


class Cluster:
    """scripts/redis-cluster's 3 masters with a replica each, on ports of their own
    below the ephemeral range (their bus ports too)."""

    def __init__(self, base):
        self.dir = tempfile.mkdtemp(prefix="tgwlab-cluster-")
        self.script = os.path.join(SCRIPTS, "redis-cluster")
        self.up = subprocess.run([self.script, "up", "--dir", self.dir, "--port-base", str(base)],
                                 capture_output=True, text=True)
        self.ports = list(range(base, base + 6))
        self.down = set()

    def client(self):
        return redis_client.cluster(lambda: [p for p in self.ports if p not in self.down])

    def kill(self, port):
        with open(os.path.join(self.dir, f"redis-{port}.pid")) as f:
            os.kill(int(f.read()), signal.SIGKILL)
        self.down.add(port)

    def stop(self):
        subprocess.run([self.script, "down", "--dir", self.dir], capture_output=True)
        shutil.rmtree(self.dir, True)


@unittest.skipUnless(HAVE_REDIS, "redis-server not installed (scripts/setup)")
class ClusterClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = Cluster(22700)
        if cls.cluster.up.returncode != 0:
            cls.cluster.stop()
            raise AssertionError(cls.cluster.up.stdout + cls.cluster.up.stderr)

    @classmethod
    def tearDownClass(cls):
        cls.cluster.stop()

    def test_commands_reach_the_master_of_their_slot_and_keys_every_master(self):
        r = self.cluster.client()
        for i in range(60):
            r.hset(f"h{i}", "f", str(i))
        self.assertEqual(len(r.masters()), 3)
        self.assertEqual(sorted(r.keys("h*")), sorted(f"h{i}" for i in range(60)))
        self.assertEqual(r.hgetall("h7"), {"f": "7"})

    def test_a_stale_slot_map_is_corrected_by_moved(self):
        r = self.cluster.client()
        r.set("k", "v")
        slot = redis_client.key_slot(b"k")
        lo, hi, owner = next(x for x in r.ranges if x[0] <= slot <= x[1])
        other = next(p for p in r.masters() if p != owner)
        # Make the client believe another master serves the slot.
        r.ranges = [(lo, hi, other) if x[2] == owner else x for x in r.ranges]
        self.assertEqual(r.get("k"), "v")
        self.assertEqual(next(x[2] for x in r.ranges if x[0] <= slot <= x[1]), owner)


@unittest.skipUnless(HAVE_REDIS, "redis-server not installed (scripts/setup)")
class ClusterFailoverTest(unittest.TestCase):
    def test_keys_covers_the_promoted_replica_after_a_master_dies(self):
        cluster = Cluster(22710)
        self.addCleanup(cluster.stop)
        self.assertEqual(cluster.up.returncode, 0, cluster.up.stdout + cluster.up.stderr)
        r = cluster.client()
        for i in range(60):
            r.set(f"k{i}", str(i))
        victim = r.masters()[0]
        # Replication is asynchronous: a master killed right after the writes can die
        # before its replica has them (seen under CI load: the promoted replica lacked
        # all 18 of its keys). The test is about KEYS finding the promoted replica, not
        # about that loss, so the replica confirms the writes first.
        self.assertEqual(redis_client.ask(victim, "WAIT", "1", "10000", timeout=12), 1)
        cluster.kill(victim)
        deadline = time.monotonic() + 20
        got = None
        while time.monotonic() < deadline:
            got = redis_client.attempt(r.keys, "k*")
            if got is not None and len(got) == 60:
                break
            time.sleep(0.2)
        self.assertEqual(sorted(got or []), sorted(f"k{i}" for i in range(60)))
        self.assertNotIn(victim, r.masters())
        self.assertEqual(r.get("k5"), "5")


if __name__ == "__main__":
    unittest.main()


@unittest.skipUnless(HAVE_REDIS and shutil.which("openssl"), "redis-server or openssl missing")
class TlsTest(unittest.TestCase):
    def test_a_tls_only_server_answers_once_the_clients_use_tls(self):
        from tgwlab.servers import make_tls_files, tls_server_args
        d = tempfile.mkdtemp(prefix="tgwlab-tls-")
        self.addCleanup(shutil.rmtree, d, True)
        self.addCleanup(redis_client.TLS.clear)
        tls_dir = os.path.join(d, "tls")
        port = free_port()
        ca = make_tls_files(tls_dir)  # every client of the process speaks TLS from here
        p = spawn(["redis-server", "--bind", "127.0.0.1", "--save", "", "--dir", d,
                   *tls_server_args(tls_dir, port)],
                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        self.assertTrue(wait_until(lambda: redis_client.ping(port), 10))
        self.assertEqual(redis_client.ask(port, "SET", "k", "v"), True)
        # The same server refuses a plain client: the TLS is real.
        redis_client.TLS.clear()
        self.assertFalse(redis_client.ping(port))
        self.assertTrue(os.path.exists(ca))
