"""The fleet's IMEIs, and the devices a chaos run plays itself (bad_crc, oversize),
straight to an instance."""

import socket
import time

from ..device import acked_count, codec8_packet, handshake, oversize_header, read_some

FLEET_IMEI_BASE = 356_000_000_000_000
BAD_IMEI_BASE = 357_000_000_000_000


def play(kind, imei, inst, result, after_handshake):
    """Connects as `imei` to instance `inst` and, once accepted, runs
    after_handshake(socket); the outcome goes into result ("inconclusive" until the
    device decides)."""
    result.update(kind=kind, imei=imei, instance=inst.id, outcome="inconclusive")
    try:
        with socket.create_connection(("127.0.0.1", inst.port), 3) as s:
            s.settimeout(5)
            if not handshake(s, imei):
                result["detail"] = "no 01 verdict"
                return
            after_handshake(s)
    except OSError as e:
        result["detail"] = str(e)


def bad_crc_device(imei, inst, result):
    """No ACK for a bad CRC; then the intact copy gets one (its record must be stored)."""
    def check(s):
        ts = int(time.time() * 1000)
        s.sendall(codec8_packet(ts, corrupt=True))
        got = read_some(s, 2.0)
        if got:
            result["outcome"] = "violation"
            result["detail"] = f"answered a bad-CRC packet with {got.hex()}"
            return
        if got == b"":  # closing on a bad frame is allowed; the check is done
            result["outcome"] = "ok"
            return
        s.sendall(codec8_packet(ts))
        # The intact copy may be stored and still not ACKed (with --ack-replicas, when
        # no replica confirms it): its records are then no sign of the bad one.
        result["intact_sent"] = True
        got = read_some(s, 8.0)
        if acked_count(got) == 1:
            result["outcome"] = "ok"
            result["acked"] = [imei, ts, ts, 1]
        else:
            result["detail"] = f"intact copy not ACKed ({got!r})"
    play("bad_crc", imei, inst, result, check)


def oversize_device(imei, inst, result):
    """A frame header announcing 2 GB must make the instance close the connection."""
    def check(s):
        s.sendall(oversize_header())
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            got = read_some(s, deadline - time.monotonic())
            if got == b"":
                result["outcome"] = "ok"
                return
            if got:
                result["outcome"] = "violation"
                result["detail"] = f"answered an oversize frame with {got.hex()}"
                return
        result["outcome"] = "violation"
        result["detail"] = "connection still open 3 s after a 2 GB length"
    play("oversize", imei, inst, result, check)
