"""A well-behaved device beside the attacks: it connects, sends its IMEI and then a
one-record packet at a steady pace, and notes how long the handshake and each ACK
took. What the attacks must not touch is what it measures."""

import socket
import threading
import time

from .. import device


def percentile(values, p):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


class Probe(threading.Thread):
    def __init__(self, connect, imei, period=0.05, ack_timeout=5.0):
        """connect: a function that returns a connected socket (plain or TLS)."""
        super().__init__(daemon=True)
        self.connect, self.imei = connect, imei
        self.period, self.ack_timeout = period, ack_timeout
        self.stop_event = threading.Event()
        self.handshake_s = None
        self.acks = []  # seconds from a packet's last byte to its ACK
        self.sent = 0
        self.error = None

    def run(self):
        try:
            started = time.monotonic()
            sock = self.connect()
            if not device.handshake(sock, self.imei):
                self.error = "the gateway refused the IMEI"
                return
            self.handshake_s = time.monotonic() - started
            sock.settimeout(self.ack_timeout)
            ts = int(time.time() * 1000)
            while not self.stop_event.is_set():
                ts += 1
                packet = device.codec8_packet(ts)
                sent_at = time.monotonic()
                sock.sendall(packet)
                self.sent += 1
                reply = b""
                while len(reply) < 4:
                    chunk = sock.recv(4 - len(reply))
                    if not chunk:
                        self.error = "the gateway closed the connection"
                        return
                    reply += chunk
                self.acks.append(time.monotonic() - sent_at)
                if device.acked_count(reply) != 1:
                    self.error = f"unexpected ACK {reply.hex()}"
                    return
                self.stop_event.wait(self.period)
            sock.close()
        except (OSError, socket.timeout) as e:
            self.error = f"{type(e).__name__}: {e}"

    def finish(self):
        self.stop_event.set()
        self.join(30)
        return self

    def p99(self):
        return percentile(self.acks, 99)
