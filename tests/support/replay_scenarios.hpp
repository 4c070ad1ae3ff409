#pragma once

// The captures committed under tests/data/captures, built from known bytes. Tests
// check the committed files against these builders byte for byte, so the data and
// the code that explains it cannot drift apart.
#include <cstdint>
#include <string>
#include <vector>

#include "codecs/avl_encode.hpp"
#include "codecs/imei.hpp"
#include "tests/support/capture_builder.hpp"

namespace tgw::test::scenarios {

using bytes = std::vector<std::uint8_t>;
inline constexpr std::int64_t t0_us = 1'700'000'000'000'000;

inline bytes handshake(const char* digits) {
  codecs::imei id;
  (void)codecs::imei::parse(digits, id);
  bytes out;
  codecs::encode_imei_packet(id, out);
  return out;
}

inline bytes avl(codecs::codec_id codec, int records, std::uint64_t first_ts,
                 bool bad_crc = false) {
  std::vector<codecs::avl_record_data> r;
  for (int i = 0; i < records; ++i) {
    codecs::avl_record_data d;
    d.timestamp_ms = first_ts + static_cast<std::uint64_t>(i) * 1000;
    d.priority = 1;
    d.longitude = 252616688 + i;
    d.latitude = 546992512 - i;
    d.altitude = 105;
    d.angle = 90;
    d.satellites = 12;
    d.speed = static_cast<std::uint16_t>(40 + i);
    d.event_io_id = 239;
    d.io = {{239, 1, 1, {}}, {66, 2, 12345, {}}};
    r.push_back(d);
  }
  bytes out;
  (void)codecs::encode_avl_frame(codec, r, out);
  if (bad_crc) out.back() ^= 0x5A;
  return out;
}

inline bytes ack(std::uint32_t n) {
  return {static_cast<std::uint8_t>(n >> 24), static_cast<std::uint8_t>(n >> 16),
          static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)};
}

inline std::int64_t ms(std::int64_t n) {
  return t0_us + n * 1000;
}

/// Two devices interleaved over IPv4. Device A's first packet arrives in three
/// segments out of order plus an overlapping retransmission, then A resends the
/// packet (its ACK "lost") and sends a keep-alive; device B sends a bad CRC, then a
/// good packet. Both close.
inline capture_builder two_devices() {
  capture_builder b;
  const auto gw = capture_builder::at("10.0.0.9", 5027);
  const auto a = b.open(capture_builder::at("10.0.0.1", 40001), gw, ms(0));
  const auto c = b.open(capture_builder::at("10.0.0.2", 40002), gw, ms(1));
  b.send(a, true, ms(2), handshake("356307042441013"));
  b.send(c, true, ms(3), handshake("356307042441021"));
  b.send(a, false, ms(4), {0x01});
  b.send(c, false, ms(5), {0x01});
  const bytes p = avl(codecs::codec_id::codec8e, 3, 1'699'999'000'000);
  const auto part = [&p](std::size_t from, std::size_t to) {
    return bytes(p.begin() + static_cast<std::ptrdiff_t>(from),
                 p.begin() + static_cast<std::ptrdiff_t>(to));
  };
  b.send_at(a, true, ms(10), 10, part(10, 40));
  b.send_at(a, true, ms(11), 40, part(40, p.size()));
  b.send_at(a, true, ms(12), 0, part(0, 10));
  b.send_at(a, true, ms(13), 0, part(0, 50));  // retransmission overlapping two segments
  b.advance(a, true, p.size());
  b.send(a, false, ms(14), ack(3));
  b.send(c, true, ms(15), avl(codecs::codec_id::codec8, 1, 1'699'999'100'000, true));
  b.send(c, true, ms(16), avl(codecs::codec_id::codec8, 2, 1'699'999'200'000));
  b.send(c, false, ms(17), ack(2));
  b.send(a, true, ms(20), p);  // the same packet again: a resend after a lost ACK
  b.send(a, false, ms(21), ack(3));
  b.send(a, true, ms(22), {0xFF});
  b.close(a, ms(30));
  b.close(c, ms(31));
  return b;
}

/// One device over IPv6: a Codec 8E and a Codec 16 packet.
inline capture_builder ipv6_device() {
  capture_builder b;
  const auto d = b.open(capture_builder::at("2001:db8::1", 40003),
                        capture_builder::at("2001:db8::9", 5027), ms(0));
  b.send(d, true, ms(1), handshake("356307042441039"));
  b.send(d, false, ms(2), {0x01});
  b.send(d, true, ms(3), avl(codecs::codec_id::codec8e, 1, 1'699'999'300'000));
  b.send(d, false, ms(4), ack(1));
  b.send(d, true, ms(5), avl(codecs::codec_id::codec16, 2, 1'699'999'400'000));
  b.send(d, false, ms(6), ack(2));
  b.close(d, ms(9));
  return b;
}

/// One device that completes, then one whose capture breaks off: the caller cuts
/// the written file inside its last packet.
inline capture_builder complete_then_cut() {
  capture_builder b;
  const auto gw = capture_builder::at("10.0.0.9", 5027);
  const auto a = b.open(capture_builder::at("10.0.0.1", 40001), gw, ms(0));
  b.send(a, true, ms(1), handshake("356307042441013"));
  b.send(a, false, ms(2), {0x01});
  b.send(a, true, ms(3), avl(codecs::codec_id::codec8, 1, 1'699'999'000'000));
  b.send(a, false, ms(4), ack(1));
  b.close(a, ms(5));
  const auto c = b.open(capture_builder::at("10.0.0.2", 40002), gw, ms(6));
  b.send(c, true, ms(7), handshake("356307042441021"));
  b.send(c, false, ms(8), {0x01});
  b.send(c, true, ms(9), avl(codecs::codec_id::codec8, 4, 1'699'999'100'000));
  return b;
}

}  // namespace tgw::test::scenarios
