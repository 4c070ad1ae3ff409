"""A Teltonika device on the wire: the IMEI handshake, AVL packets of Codec 8 and
Codec 8 Extended in TCP framing, their CRC16/IBM, and reading the gateway's answer."""

import socket
import struct

CODEC8 = 0x08
CODEC8E = 0x8E


def crc16_ibm(data):
    """CRC-16/IBM (ARC): polynomial 0xA001 reflected, initial value 0."""
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def imei_packet(imei):
    """The handshake a device opens with: the IMEI's length (2 bytes) and its digits."""
    return struct.pack(">H", len(imei)) + imei.encode()


def _io_value(value, size):
    return value if isinstance(value, bytes) else int(value).to_bytes(size, "big")


def avl_record(timestamp_ms, priority=0, longitude=0, latitude=0, altitude=0, angle=0,
               satellites=0, speed=0, event_io_id=0, io=None, nx=None, codec=CODEC8):
    """One AVL record. io maps an element's size in bytes (1, 2, 4, 8) to {id: value},
    a value an int or its bytes; nx (Codec 8E only) maps id to a variable-length value.
    Elements keep the order they are given in."""
    io = {int(size): group for size, group in (io or {}).items()}
    nx = nx or {}
    wide = codec == CODEC8E
    count = struct.Struct(">H" if wide else ">B")
    total = sum(len(g) for g in io.values()) + len(nx)
    out = struct.pack(">QBiiHHBH", timestamp_ms, priority, longitude, latitude, altitude, angle,
                      satellites, speed)
    out += count.pack(event_io_id) + count.pack(total)
    for size in (1, 2, 4, 8):
        group = io.get(size, {})
        out += count.pack(len(group))
        for ident, value in group.items():
            out += count.pack(int(ident)) + _io_value(value, size)
    if wide:
        out += count.pack(len(nx))
        for ident, value in nx.items():
            out += count.pack(int(ident)) + struct.pack(">H", len(value)) + value
    return out


def avl_packet(records, codec=CODEC8, corrupt=False):
    """A TCP AVL packet of encoded records: preamble, data field length, the data
    (codec, count, records, count) and its CRC; corrupt flips the CRC's low byte."""
    data = bytes([codec, len(records)]) + b"".join(records) + bytes([len(records)])
    crc = crc16_ibm(data) ^ (0x00FF if corrupt else 0)
    return struct.pack(">II", 0, len(data)) + data + struct.pack(">I", crc)


def codec8_packet(ts_ms, corrupt=False):
    """One Codec 8 AVL packet of one record (position in Vilnius, no IO elements)."""
    return avl_packet([avl_record(ts_ms, longitude=252_797_000, latitude=546_872_000,
                                  altitude=120, angle=90, satellites=9, speed=40)],
                      corrupt=corrupt)


def oversize_header(length=0x7FFF_FFF0):
    """The start of a frame that announces `length` bytes of data."""
    return struct.pack(">II", 0, length) + bytes([CODEC8, 1]) + bytes(64)


def acked_count(reply):
    """The record count a 4-byte AVL ACK carries; None for anything else."""
    if reply and len(reply) >= 4:
        return struct.unpack(">I", reply[:4])[0]
    return None


def handshake(sock, imei):
    """Sends the IMEI; True when the gateway accepts it (01)."""
    sock.sendall(imei_packet(imei))
    return sock.recv(1) == b"\x01"


def read_some(sock, timeout):
    """Bytes that arrive within `timeout`; b"" for a closed connection; None for silence."""
    sock.settimeout(timeout)
    try:
        return sock.recv(64)
    except socket.timeout:
        return None
    except OSError:
        return b""
