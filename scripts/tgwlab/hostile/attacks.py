"""The attacks of docs/OPERATIONS.md, "Hostile input": each one a thread that runs
until stopped (or a burst that returns when done), counting what it sent and what
the gateway did about it."""

import random
import socket
import ssl
import threading
import time

from .. import device
from . import wire
from .gateway import insecure_client_context


class Attack(threading.Thread):
    """A loop of attempts until stop(); errors of one attempt end only that attempt."""

    def __init__(self, name):
        super().__init__(daemon=True, name=name)
        self.stop_event = threading.Event()
        self.attempts = 0
        self.bytes_sent = 0
        self.closed_by_gateway = 0

    def run(self):
        while not self.stop_event.is_set():
            self.attempts += 1
            try:
                self.attempt()
            except (OSError, ssl.SSLError, socket.timeout):
                # Refused, reset, closed mid-write: what the gateway's budgets do.
                self.closed_by_gateway += 1
                self.stop_event.wait(0.001)

    def attempt(self):
        raise NotImplementedError

    def stop(self):
        self.stop_event.set()
        self.join(30)
        return self


class KeepaliveFlood(Attack):
    """0xFF bytes before any IMEI, as fast as TCP takes them, over plain TCP or TLS;
    a new connection whenever the gateway closes one."""

    def __init__(self, gateway, source, tls=False):
        super().__init__("keepalive-flood")
        self.gateway, self.source, self.tls = gateway, source, tls
        self.chunk = b"\xff" * 65536

    def attempt(self):
        s = (self.gateway.connect_tls if self.tls else self.gateway.connect)(self.source, 2)
        with s:
            while not self.stop_event.is_set():
                s.sendall(self.chunk)
                self.bytes_sent += len(self.chunk)


class BadCrcFlood(Attack):
    """After an accepted IMEI, frames with a wrong CRC, as fast as the gateway reads
    them; counts how many each connection got to send before it was closed."""

    def __init__(self, gateway, source, imei):
        super().__init__("bad-crc-flood")
        self.gateway, self.source, self.imei = gateway, source, imei
        self.frames_per_connection = []

    def attempt(self):
        s = self.gateway.connect(self.source, 2)
        frames = 0
        try:
            with s:
                if not device.handshake(s, self.imei):
                    self.stop_event.wait(0.05)
                    return
                ts = int(time.time() * 1000)
                while not self.stop_event.is_set():
                    ts += 1
                    packet = device.codec8_packet(ts, corrupt=True)
                    s.sendall(packet)
                    frames += 1
                    self.bytes_sent += len(packet)
        finally:
            self.frames_per_connection.append(frames)


class RefusedConnections(Attack):
    """Connections that send no device's bytes (an HTTP request on the device port):
    each ends in a framing error."""

    def __init__(self, gateway, source):
        super().__init__("refused-connections")
        self.gateway, self.source = gateway, source

    def attempt(self):
        with self.gateway.connect(self.source, 2) as s:
            request = b"GET / HTTP/1.1\r\nHost: gateway\r\n\r\n"
            s.sendall(request)
            self.bytes_sent += len(request)
            s.recv(16)


class UdpFlood(Attack):
    """Datagrams from many loopback sources (a spoofer's view): well-formed under random
    IMEIs, or garbage."""

    def __init__(self, gateway, garbage=False, sources=64, seed=7, limit=None, name="udp-flood",
                 pause=0.0):
        """pause: seconds between rounds over the sources (0: as fast as Python sends)."""
        super().__init__(name)
        self.gateway, self.garbage, self.limit, self.pause = gateway, garbage, limit, pause
        self.rng = random.Random(seed)
        self.sockets = []
        for _ in range(sources):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((wire.random_loopback(self.rng), 0))
            self.sockets.append(s)
        self.sent = 0

    def attempt(self):
        for s in self.sockets:
            if self.stop_event.is_set() or (self.limit is not None and self.sent >= self.limit):
                self.stop_event.set()
                return
            datagram = (wire.garbage(self.rng, self.rng.randrange(8, 200)) if self.garbage
                        else wire.udp_datagram(wire.random_imei(self.rng),
                                               packet_id=self.sent & 0xFFFF))
            s.sendto(datagram, ("127.0.0.1", self.gateway.port))
            self.sent += 1
            self.bytes_sent += len(datagram)
        if self.pause:
            self.stop_event.wait(self.pause)


def half_sent_http(port, count, source="127.0.0.1"):
    """`count` connections to an HTTP port, each holding a request head that never
    ends. The caller closes them."""
    held = []
    for _ in range(count):
        s = socket.socket()
        s.bind((source, 0))
        s.connect(("127.0.0.1", port))
        s.sendall(wire.half_http_request())
        held.append(s)
    return held


def client_hello():
    """The first flight of a TLS client: a whole ClientHello record, as bytes."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = insecure_client_context().wrap_bio(incoming, outgoing, server_hostname="gateway")
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


def stalled_client_hellos(gateway, addresses, per_address):
    """From each address, `per_address` connections that send a whole ClientHello and
    then nothing. Returns the sockets (the caller closes them)."""
    hello = client_hello()
    held = []
    for address in addresses:
        for _ in range(per_address):
            try:
                s = gateway.connect(address, 5)
                s.sendall(hello)
                held.append(s)
            except OSError:
                pass  # refused by the per-address limits: counted by the gateway
    return held


def sessions(gateway, source, imeis, hold=True):
    """A session per IMEI from one address: (accepted sockets, refused count)."""
    accepted, refused = [], 0
    for imei in imeis:
        try:
            s = gateway.connect(source, 5)
            if device.handshake(s, imei):
                accepted.append(s)
                if not hold:
                    s.close()
            else:
                refused += 1
                s.close()
        except OSError:
            refused += 1
    return accepted, refused
