"""Bytes a hostile peer sends: UDP datagrams under any IMEI, TLS ClientHellos, HTTP
requests cut short."""

import random
import struct

from .. import device


def udp_datagram(imei, packet_id=1, avl_packet_id=1, ts_ms=1_700_000_000_000):
    """A well-formed UDP AVL datagram of one Codec 8 record:
    length | packet id | 01 | AVL packet id | IMEI length | IMEI | AVL data."""
    record = device.avl_record(ts_ms, longitude=252_797_000, latitude=546_872_000, satellites=9)
    data = bytes([device.CODEC8, 1]) + record + bytes([1])
    body = (struct.pack(">HBBH", packet_id, 0x01, avl_packet_id, len(imei)) + imei.encode()
            + data)
    return struct.pack(">H", len(body)) + body


def random_imei(rng):
    return "".join(rng.choice("0123456789") for _ in range(15))


def garbage(rng, size):
    return bytes(rng.getrandbits(8) for _ in range(size))


def half_http_request(path="/metrics"):
    """An HTTP request head that never ends: the request line and one header, no blank
    line."""
    return f"GET {path} HTTP/1.1\r\nHost: gateway\r\n".encode()


def random_loopback(rng):
    """A loopback address other than 127.0.0.1, for a peer that looks like many."""
    return f"127.{rng.randrange(1, 255)}.{rng.randrange(0, 256)}.{rng.randrange(1, 255)}"


