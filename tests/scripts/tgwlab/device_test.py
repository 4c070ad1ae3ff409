"""tgwlab.device against the official Teltonika vectors (tests/data/teltonika_official.json)."""

import json
import os
import unittest

from tgwlab import device

VECTORS = os.path.join(os.path.dirname(__file__), "..", "..", "data", "teltonika_official.json")


def vectors():
    with open(VECTORS) as f:
        return {v["name"]: v for v in json.load(f)}


def record_of(r, codec):
    """A vector's expected record, encoded."""
    io = {int(size): group for size, group in r.get("io_by_size", {}).items() if size != "X"}
    io = {size: {ident: bytes.fromhex(value) for ident, value in group.items()}
          for size, group in io.items()}
    nx = {ident: bytes.fromhex(value) for ident, value in r.get("io_by_size", {}).get("X", {}).items()}
    return device.avl_record(r["timestamp_ms"], r["priority"], r.get("longitude", 0),
                             r.get("latitude", 0), r.get("altitude", 0), r.get("angle", 0),
                             r.get("satellites", 0), r.get("speed", 0), r["event_io_id"], io, nx,
                             codec)


class DeviceTest(unittest.TestCase):
    def setUp(self):
        self.v = vectors()

    def test_crc16_ibm_of_every_official_tcp_avl_packet(self):
        checked = 0
        for v in self.v.values():
            e = v.get("expected", {})
            if v["transport"] != "tcp" or v["codec"] not in ("0x08", "0x8E", "0x10") \
                    or "crc16" not in e:
                continue
            data = bytes.fromhex(v["hex"])[8:-4]
            self.assertEqual(device.crc16_ibm(data), int(e["crc16"], 16), v["name"])
            checked += 1
        self.assertGreaterEqual(checked, 5)

    def test_crc16_ibm_check_value(self):
        # CRC-16/ARC's catalogue check value.
        self.assertEqual(device.crc16_ibm(b"123456789"), 0xBB3D)

    def test_encodes_the_official_codec8_and_8e_packets_byte_for_byte(self):
        for name, codec in (("codec8_tcp_wiki_example_1", device.CODEC8),
                            ("codec8e_tcp_wiki_example", device.CODEC8E)):
            v = self.v[name]
            records = [record_of(r, codec) for r in v["expected"]["records"]]
            self.assertEqual(device.avl_packet(records, codec).hex().upper(), v["hex"], name)

    def test_encodes_two_records_in_one_packet(self):
        v = self.v["codec8_tcp_wiki_example_3_two_records"]
        # Each record's one element, DIN1 (id 1), is a 1-byte element.
        records = [device.avl_record(r["timestamp_ms"], r["priority"], event_io_id=r["event_io_id"],
                                     io={1: {int(k): val for k, val in r["io"].items()}})
                   for r in v["expected"]["records"]]
        self.assertEqual(device.avl_packet(records).hex().upper(), v["hex"])

    def test_the_chaos_packet_is_what_it_always_was(self):
        # Pinned from scripts/chaos before it became a package: the bad_crc device's
        # packets, and thus what its checks read back, stay the same.
        self.assertEqual(device.codec8_packet(1700000000123).hex(),
                         "000000000000002108010000018bcfe5687b000f11604820989ac00078005a09"
                         "002800000000000001000048ac")
        self.assertEqual(device.codec8_packet(1700000000123, corrupt=True).hex()[-8:], "00004853")

    def test_handshake_bytes_match_the_official_ones(self):
        for name in ("imei_handshake_356307042441013", "imei_handshake_123456789012345_fmxxxx_doc"):
            v = self.v[name]
            self.assertEqual(device.imei_packet(v["expected"]["imei"]).hex().upper(), v["hex"])

    def test_acked_count(self):
        self.assertEqual(device.acked_count(bytes.fromhex("00000002")), 2)
        self.assertIsNone(device.acked_count(b"\x01"))
        self.assertIsNone(device.acked_count(None))
        self.assertIsNone(device.acked_count(b""))

    def test_oversize_header_announces_the_length(self):
        head = device.oversize_header(0x7FFF_FFF0)
        self.assertEqual(head[:8].hex(), "000000007ffffff0")


if __name__ == "__main__":
    unittest.main()
