#include "tests/codecs/official_vector_checks.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "codecs/avl_encode.hpp"
#include "codecs/byte_order.hpp"
#include "codecs/imei.hpp"
#include "codecs/udp.hpp"
#include "tests/codecs/test_support.hpp"

namespace tgw::codecs::official {
namespace {

/// The degrees of the documents as the wire's degrees times 10^7.
std::int64_t wire_degrees(double degrees) {
  return std::llround(degrees * 1e7);
}

void check_record(const avl_packet& p, const avl_record& r, const json& expected,
                  const std::string& where) {
  expected_fields f(expected, where);
  if (f.has("timestamp_ms")) {
    EXPECT_EQ(r.timestamp_ms, f.natural("timestamp_ms")) << where;
  }
  if (f.has("timestamp_utc")) {
    EXPECT_EQ(utc_text(r.timestamp_ms), f.text("timestamp_utc")) << where;
  }
  if (f.has("priority")) {
    EXPECT_EQ(r.priority, f.integer("priority")) << where;
  }
  if (f.has("longitude")) {
    EXPECT_EQ(r.longitude, wire_degrees(f.use("longitude").get<double>())) << where;
  }
  if (f.has("latitude")) {
    EXPECT_EQ(r.latitude, wire_degrees(f.use("latitude").get<double>())) << where;
  }
  if (f.has("altitude")) {
    EXPECT_EQ(r.altitude, f.integer("altitude")) << where;
  }
  if (f.has("angle")) {
    EXPECT_EQ(r.angle, f.integer("angle")) << where;
  }
  if (f.has("satellites")) {
    EXPECT_EQ(r.satellites, f.integer("satellites")) << where;
  }
  if (f.has("speed")) {
    EXPECT_EQ(r.speed, f.integer("speed")) << where;
  }
  if (f.has("event_io_id")) {
    EXPECT_EQ(r.event_io_id, f.integer("event_io_id")) << where;
  }
  if (f.has("generation_type")) {
    EXPECT_EQ(r.generation_type, f.integer("generation_type")) << where;
  } else {
    EXPECT_EQ(r.generation_type, 0) << where;
  }

  const auto io = p.io_of(r);
  std::size_t fixed = 0, variable = 0;
  for (const io_element& e : io) (e.variable ? variable : fixed) += 1;
  if (f.has("n_total_io")) {
    const std::int64_t n = f.integer("n_total_io");
    EXPECT_EQ(r.declared_io_total, n) << where;
    EXPECT_EQ(io.size(), static_cast<std::size_t>(n)) << where;
  }
  auto find_fixed = [&](std::uint16_t id) -> const io_element* {
    const io_element* found = nullptr;
    for (const io_element& e : io) {
      if (e.variable || e.id != id) continue;
      EXPECT_EQ(found, nullptr) << where << ": io " << id << " appears twice";
      found = &e;
    }
    return found;
  };
  if (f.has("io")) {
    const json& values = f.use("io");
    EXPECT_EQ(fixed, values.size()) << where << ": fixed-width io count";
    for (const auto& item : values.items()) {
      const auto id = static_cast<std::uint16_t>(std::stoul(item.key()));
      const io_element* e = find_fixed(id);
      ASSERT_NE(e, nullptr) << where << ": io " << id << " missing";
      EXPECT_EQ(e->value, item.value().get<std::uint64_t>()) << where << ": io " << id;
    }
  }
  if (f.has("io_by_size")) {
    for (const auto& group : f.use("io_by_size").items()) {
      const std::string& width = group.key();
      std::size_t in_group = 0;
      for (const io_element& e : io)
        in_group += width == "X" ? e.variable : !e.variable && std::to_string(e.size) == width;
      EXPECT_EQ(in_group, group.value().size()) << where << ": io of size " << width;
      for (const auto& item : group.value().items()) {
        const auto id = static_cast<std::uint16_t>(std::stoul(item.key()));
        const io_element* e = find_fixed(id);
        ASSERT_NE(e, nullptr) << where << ": io " << id << " missing";
        EXPECT_EQ(std::to_string(e->size), width) << where << ": io " << id;
        EXPECT_EQ(test::to_hex(p.value_bytes(*e)), test::upper_hex(item.value().get<std::string>()))
            << where << ": io " << id;
      }
    }
  }
  for (const char* key : {"n1", "n2", "n4", "n8"}) {
    if (!f.has(key)) continue;
    const std::string width = std::string(key).substr(1);
    std::size_t n = 0;
    for (const io_element& e : io) n += !e.variable && std::to_string(e.size) == width;
    EXPECT_EQ(n, f.natural(key)) << where << ": " << key;
  }
  if (f.has("nx")) {
    const json& nx = f.use("nx");
    if (nx.is_number()) {
      EXPECT_EQ(variable, nx.get<std::size_t>()) << where;
    } else {
      ASSERT_EQ(variable, nx.size()) << where;
      std::size_t k = 0;
      for (const io_element& e : io) {
        if (!e.variable) continue;
        const json& want = nx.at(k++);
        EXPECT_EQ(e.id, want.at("id").get<std::uint16_t>()) << where;
        EXPECT_EQ(e.size, want.at("length").get<std::uint16_t>()) << where;
        EXPECT_EQ(test::to_hex(p.value_bytes(e)),
                  test::upper_hex(want.at("value_hex").get<std::string>()))
            << where;
      }
    }
  }
  f.expect_all_checked();
}

void check_udp_documented_fields(const bytes& datagram, const udp_header& h, const avl_record& r,
                                 expected_fields& outer) {
  expected_fields f(outer.use("documented_fields"), outer.where() + " documented_fields");
  EXPECT_EQ(test::upper_hex(f.text("data_length").substr(0, 4)),
            test::to_hex(std::span(datagram).first(2)));
  EXPECT_EQ(h.packet_id, f.hex_number("packet_identification"));
  EXPECT_EQ(h.packet_type, f.hex_number("packet_type"));
  EXPECT_EQ(h.avl_packet_id, f.hex_number("packet_id"));
  EXPECT_EQ(h.device.str().size(), f.hex_number("imei_length"));
  std::uint8_t field[15];
  store_be64(field, r.timestamp_ms);
  EXPECT_EQ(test::to_hex(std::span(field, 8)), f.hex_bytes("timestamp_hex"));
  EXPECT_EQ(r.priority, f.hex_number("priority"));
  store_be32(field, static_cast<std::uint32_t>(r.longitude));
  store_be32(field + 4, static_cast<std::uint32_t>(r.latitude));
  store_be16(field + 8, static_cast<std::uint16_t>(r.altitude));
  store_be16(field + 10, r.angle);
  field[12] = r.satellites;
  store_be16(field + 13, r.speed);
  EXPECT_EQ(test::to_hex(field), f.hex_bytes("gps_data_hex"));
  f.expect_all_checked();
}

}  // namespace

std::string utc_text(std::uint64_t ms) {
  using namespace std::chrono;
  const sys_time<milliseconds> t{milliseconds{static_cast<std::int64_t>(ms)}};
  const sys_days day = floor<days>(t);
  const year_month_day ymd{day};
  const hh_mm_ss<milliseconds> hms{t - day};
  char text[40];
  std::snprintf(text, sizeof text, "%04d-%02u-%02uT%02d:%02d:%02d", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()));
  std::string out = text;
  if (const auto sub = hms.subseconds().count(); sub != 0) {
    std::snprintf(text, sizeof text, ".%03d", static_cast<int>(sub));
    out += text;
  }
  return out + "Z";
}

void check_records(const avl_packet& p, expected_fields& f) {
  const json& records = f.use("records");
  ASSERT_LE(records.size(), p.records.size()) << f.where();
  for (std::size_t i = 0; i < records.size(); ++i)
    check_record(p, p.records[i], records.at(i), f.where() + " record " + std::to_string(i));
}

void expect_framed_as(std::span<const std::uint8_t> frame_bytes, frame_kind kind) {
  tcp_framer framer(default_max_frame_size, kind == frame_kind::imei);
  framer.append(frame_bytes);
  const frame_result r = framer.next();
  ASSERT_EQ(r.status.code, errc::ok) << describe(r.status);
  EXPECT_EQ(r.value.kind, kind);
  EXPECT_EQ(r.value.bytes.size(), frame_bytes.size());
}

void check_imei_handshake(const bytes& packet, expected_fields& f) {
  imei id;
  const decode_status s = parse_imei_packet(packet, id);
  ASSERT_EQ(s.code, errc::ok) << describe(s);
  EXPECT_EQ(s.offset, packet.size());
  EXPECT_EQ(static_cast<std::int64_t>(id.str().size()), f.integer("imei_length"));
  EXPECT_EQ(load_be16(packet.data()), f.integer("imei_length"));
  EXPECT_EQ(id.str(), f.text("imei"));
  EXPECT_EQ(test::to_hex(std::span(&imei_accepted, 1)), f.hex_bytes("server_reply_accept_hex"));
  if (f.has("server_reply_reject_hex")) {
    EXPECT_EQ(test::to_hex(std::span(&imei_rejected, 1)), f.hex_bytes("server_reply_reject_hex"));
  }
  bytes again;
  encode_imei_packet(id, again);
  EXPECT_EQ(test::to_hex(again), test::to_hex(packet));
  expect_framed_as(packet, frame_kind::imei);
}

void check_avl_tcp(const bytes& frame, std::uint8_t codec, expected_fields& f) {
  avl_packet p;
  const decode_status s = decode_avl_frame(frame, p);
  ASSERT_EQ(s.code, errc::ok) << describe(s);
  EXPECT_EQ(s.offset, frame.size());
  EXPECT_EQ(p.codec, codec);
  EXPECT_TRUE(p.crc_ok());
  if (f.has("total_bytes")) {
    EXPECT_EQ(frame.size(), f.natural("total_bytes"));
  }
  if (f.has("data_field_length")) {
    const std::uint64_t length = f.natural("data_field_length");
    EXPECT_EQ(load_be32(frame.data() + 4), length);
    EXPECT_EQ(frame.size(), length + 12);
  }
  EXPECT_EQ(p.records.size(), f.natural("number_of_data"));
  EXPECT_EQ(frame[9], p.records.size());
  EXPECT_EQ(frame[frame.size() - 5], p.records.size());
  const std::uint64_t crc = f.hex_number("crc16");
  EXPECT_EQ(p.crc_computed, crc);
  EXPECT_EQ(p.crc_field, crc);
  EXPECT_EQ(test::to_hex(avl_ack(static_cast<std::uint32_t>(p.records.size()))),
            f.hex_bytes("server_ack_hex"));
  check_records(p, f);
  expect_framed_as(frame, frame_kind::avl);

  // The official frames are canonical (values grouped by width), so the encoder must
  // reproduce them byte for byte.
  bytes again;
  ASSERT_EQ(encode_avl_frame(static_cast<codec_id>(codec), to_record_data(p), again), errc::ok);
  EXPECT_EQ(test::to_hex(again), test::to_hex(frame));
}

void check_avl_udp(const bytes& datagram, std::uint8_t codec, expected_fields& f) {
  udp_header h;
  avl_packet p;
  const decode_status s = decode_udp_datagram(datagram, h, p);
  ASSERT_EQ(s.code, errc::ok) << describe(s);
  EXPECT_EQ(s.offset, datagram.size());
  EXPECT_EQ(p.codec, codec);
  EXPECT_FALSE(p.has_crc);
  EXPECT_EQ(h.length, f.natural("udp_length"));
  EXPECT_EQ(h.packet_id, f.hex_number("packet_id"));
  if (f.has("not_usable_byte")) {
    EXPECT_EQ(h.packet_type, f.hex_number("not_usable_byte"));
  }
  if (f.has("packet_type")) {
    EXPECT_EQ(h.packet_type, f.hex_number("packet_type"));
  }
  EXPECT_EQ(h.avl_packet_id, f.hex_number("avl_packet_id"));
  EXPECT_EQ(h.device.str(), f.text("imei"));
  EXPECT_EQ(p.records.size(), f.natural("number_of_data"));
  EXPECT_EQ(test::to_hex(udp_response(h.packet_id, h.avl_packet_id,
                                      static_cast<std::uint8_t>(p.records.size()))),
            f.hex_bytes("server_ack_hex"));
  check_records(p, f);
  if (f.has("documented_fields")) check_udp_documented_fields(datagram, h, p.records.front(), f);

  bytes again;
  ASSERT_EQ(encode_udp_datagram(h.packet_id, h.avl_packet_id, h.device,
                                static_cast<codec_id>(codec), to_record_data(p), again),
            errc::ok);
  EXPECT_EQ(test::to_hex(again), test::to_hex(datagram));
}

command_message check_command(const bytes& frame, std::uint8_t codec, expected_fields& f,
                              crc_policy policy) {
  command_message m;
  const decode_status s = decode_command_frame(frame, m, policy);
  EXPECT_EQ(s.code, errc::ok) << describe(s);
  if (!s.ok()) return m;
  EXPECT_EQ(s.offset, frame.size());
  EXPECT_EQ(m.codec, codec);
  const std::size_t size = load_be32(frame.data() + 11);
  EXPECT_EQ(load_be32(frame.data() + 4), f.natural("data_size"));
  EXPECT_EQ(frame.size(), f.natural("data_size") + 12);
  for (const char* key : {"command_quantity", "response_quantity", "quantity"})
    if (f.has(key)) {
      EXPECT_EQ(m.quantity, f.natural(key)) << key;
    }
  EXPECT_EQ(m.type, f.hex_number("type"));
  for (const char* key : {"command_size", "response_size"}) {
    if (!f.has(key)) continue;
    EXPECT_EQ(size, f.natural(key)) << key;
    EXPECT_EQ(size, m.payload.size() + (m.has_timestamp ? 4 : 0) + (m.has_imei ? 8 : 0)) << key;
  }
  for (const char* key : {"command_text", "response_text", "payload_text"}) {
    if (!f.has(key)) continue;
    EXPECT_EQ(m.payload_text(), f.text(key)) << key;
    EXPECT_TRUE(m.payload_is_text()) << key;
  }
  EXPECT_EQ(m.has_timestamp, codec == 0x0D || codec == 0x0F);
  if (f.has("timestamp_s")) {
    EXPECT_EQ(m.timestamp_s, f.natural("timestamp_s"));
    if (f.has("timestamp_utc")) {
      EXPECT_EQ(utc_text(std::uint64_t{m.timestamp_s} * 1000), f.text("timestamp_utc"));
    }
  }
  EXPECT_EQ(m.has_imei, codec == 0x0E || codec == 0x0F);
  if (f.has("imei")) {
    EXPECT_EQ(m.device.str(), f.text("imei"));
  }
  if (f.has("imei_field_hex")) {
    std::array<std::uint8_t, 8> bcd{};
    imei_to_bcd(m.device, bcd);
    EXPECT_EQ(test::to_hex(bcd), f.hex_bytes("imei_field_hex"));
    const std::size_t imei_at = 15 + (m.has_timestamp ? 4 : 0);
    EXPECT_EQ(test::to_hex(std::span(frame).subspan(imei_at, 8)), test::to_hex(bcd));
  }
  if (f.has("crc16")) {
    EXPECT_EQ(m.crc_computed, f.hex_number("crc16"));
    EXPECT_EQ(m.crc_field, f.hex_number("crc16"));
  }
  if (f.has("server_must_not_ack")) {
    // The session answers AVL frames only; a command frame gets no 4-byte ACK.
    EXPECT_TRUE(f.use("server_must_not_ack").get<bool>());
    expect_framed_as(frame, frame_kind::command);
  }

  // Every official command frame carries quantity 1, as the encoder writes.
  command_fields fields;
  fields.codec = static_cast<codec_id>(codec);
  fields.type = m.type;
  fields.timestamp_s = m.timestamp_s;
  fields.device = m.device;
  fields.payload = m.payload;
  bytes again;
  EXPECT_EQ(encode_command_frame(fields, again), errc::ok);
  if (m.crc_ok()) {
    EXPECT_EQ(test::to_hex(again), test::to_hex(frame));
  } else {
    // Only the CRC may differ, and the encoder writes the right one.
    EXPECT_EQ(again.size(), frame.size());
    if (again.size() == frame.size()) {
      EXPECT_EQ(test::to_hex(std::span(again).first(again.size() - 4)),
                test::to_hex(std::span(frame).first(frame.size() - 4)));
      EXPECT_EQ(load_be32(again.data() + again.size() - 4), m.crc_computed);
    }
  }
  return m;
}

}  // namespace tgw::codecs::official
