"""tgwlab.balancer: the handshake it reads, how it cuts bytes, and a balancer in front
of two stand-in instances on loopback."""

import random
import socket
import threading
import time
import unittest

from tgwlab import balancer, device
from tgwlab.processes import wait_until


class CuttingTest(unittest.TestCase):
    def test_imei_of_a_handshake_once_it_is_complete(self):
        packet = device.imei_packet("356307042441013")
        self.assertIsNone(balancer.imei_of(packet[:1]))
        self.assertIsNone(balancer.imei_of(packet[:-1]))
        self.assertEqual(balancer.imei_of(packet), "356307042441013")
        self.assertEqual(balancer.imei_of(packet + b"\x00\x00"), "356307042441013")

    def test_split_cuts_pieces_of_1_to_12_bytes_that_add_up(self):
        data = bytes(range(256)) * 4
        pieces = list(balancer.segments(data, "split", random.Random(3)))
        self.assertEqual(b"".join(pieces), data)
        self.assertTrue(all(1 <= len(p) <= 12 for p in pieces))
        self.assertGreater(len({len(p) for p in pieces}), 6)

    def test_drip_sends_one_byte_at_a_time(self):
        data = b"0123456789"
        self.assertEqual(list(balancer.segments(data, "drip", random.Random(1))),
                         [bytes([b]) for b in data])

    def test_gaps(self):
        rng = random.Random(5)
        self.assertEqual(balancer.gap("split", rng), 0.001)
        self.assertTrue(all(0.003 <= balancer.gap("drip", rng) <= 0.012 for _ in range(50)))


class Backend:
    """A stand-in instance: accepts every IMEI (01) and keeps the bytes that follow."""

    def __init__(self, slot, ident):
        self.slot, self.id = slot, ident
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.received = {}  # imei -> bytes after the handshake
        self.lock = threading.Lock()
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self.session, args=(conn,), daemon=True).start()

    def session(self, conn):
        with conn:
            head = b""
            while balancer.imei_of(head) is None:
                got = conn.recv(64)
                if not got:
                    return
                head += got
            imei = balancer.imei_of(head)
            rest = head[2 + len(imei):]
            conn.sendall(b"\x01")
            while True:
                with self.lock:
                    self.received[imei] = self.received.get(imei, b"") + rest
                rest = conn.recv(4096)
                if not rest:
                    return

    def close(self):
        # shutdown() wakes the thread blocked in accept(); close() alone would leave
        # the socket listening until it returns.
        try:
            self.server.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.server.close()


class BalancerTest(unittest.TestCase):
    def setUp(self):
        self.backends = [Backend(1, "chaos-1"), Backend(2, "chaos-2")]
        self.b = balancer.Balancer(self.backends, seed=7)
        self.b.start()
        self.addCleanup(self.b.stop)
        for be in self.backends:
            self.addCleanup(be.close)

    def connect(self, imei):
        s = socket.create_connection(("127.0.0.1", self.b.port), 3)
        s.settimeout(3)
        self.assertTrue(device.handshake(s, imei))
        self.addCleanup(s.close)
        return s

    def test_round_robin_and_the_devices_it_holds(self):
        socks = [self.connect(str(356000000000000 + i)) for i in range(4)]
        self.assertTrue(wait_until(lambda: len(self.b.connected()) == 4, 5))
        self.assertEqual(self.b.connected(), {"356000000000000": "chaos-1",
                                              "356000000000001": "chaos-2",
                                              "356000000000002": "chaos-1",
                                              "356000000000003": "chaos-2"})
        socks[1].close()
        self.assertTrue(wait_until(lambda: "356000000000001" not in self.b.connected(), 5))
        self.assertEqual(self.b.stats["connections"], 4)

    def test_a_backend_that_refuses_is_skipped(self):
        self.backends[0].close()
        self.connect("356000000000000")
        self.connect("356000000000001")
        self.assertTrue(wait_until(lambda: len(self.b.connected()) == 2, 5))
        self.assertEqual(set(self.b.connected().values()), {"chaos-2"})
        self.assertGreaterEqual(self.b.stats["backend_refused"], 1)

    def test_split_and_drip_deliver_every_byte_in_order(self):
        for mode in ("split", "drip"):
            self.b.mode = mode
            # Every third connection is re-segmented: the third one made here.
            socks = [self.connect(str(357000000000000 + 10 * len(mode) + i)) for i in range(3)]
            payload = device.codec8_packet(1700000000000) * 3
            socks[2].sendall(payload)
            imei = str(357000000000000 + 10 * len(mode) + 2)
            backend = next(be for be in self.backends if be.id == self.b.connected()[imei])
            self.assertTrue(wait_until(lambda: backend.received.get(imei) == payload, 10), mode)
            self.assertGreater(self.b.stats[f"{mode}_segments"], 3 if mode == "split" else 100)
            self.b.mode = None
            for s in socks:
                s.close()
            time.sleep(0.1)


if __name__ == "__main__":
    unittest.main()
