#include "infra/json/frame_json.hpp"

#include <chrono>
#include <cstdio>

#include "codecs/codec_id.hpp"
#include "infra/text/hex.hpp"

namespace tgw::infra {
namespace {

constexpr double e7 = 1e7;

std::string_view message_type_name(std::uint8_t codec, std::uint8_t type) {
  using namespace codecs::message_type;
  switch (type) {
    case command:
      return "command";
    case response:
      return codec == 0x0E ? "ack" : "response";
    case camera:
      return "camera";
    case message:
      return "message";
    case nack:
      return "nack";
    default:
      return "unknown";
  }
}

}  // namespace

std::string iso8601_utc_ms(std::uint64_t ms) {
  using namespace std::chrono;
  const sys_time<milliseconds> t{milliseconds{ms}};
  const auto day = floor<days>(t);
  const year_month_day ymd{day};
  const hh_mm_ss hms{t - day};
  char buf[40];
  (void)std::snprintf(
      buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", static_cast<int>(ymd.year()),
      static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
      static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
      static_cast<int>(hms.seconds().count()), static_cast<int>(hms.subseconds().count()));
  return buf;
}

json io_json(const codecs::avl_packet& packet, const codecs::avl_record& r) {
  json io = json::array();
  for (const codecs::io_element& e : packet.io_of(r)) {
    json element = {{"id", e.id}, {"size", e.size}};
    if (e.variable)
      element["hex"] = to_hex(packet.value_bytes(e));
    else
      element["value"] = e.value;
    io.push_back(std::move(element));
  }
  return io;
}

json record_json(const codecs::avl_packet& packet, const codecs::avl_record& r) {
  json j = {
      {"timestamp_ms", r.timestamp_ms},
      {"timestamp", iso8601_utc_ms(r.timestamp_ms)},
      {"priority", r.priority},
      {"longitude", static_cast<double>(r.longitude) / e7},
      {"latitude", static_cast<double>(r.latitude) / e7},
      {"longitude_e7", r.longitude},
      {"latitude_e7", r.latitude},
      {"altitude", r.altitude},
      {"angle", r.angle},
      {"satellites", r.satellites},
      {"speed", r.speed},
      {"event_io_id", r.event_io_id},
  };
  if (packet.codec == static_cast<std::uint8_t>(codecs::codec_id::codec16))
    j["generation_type"] = r.generation_type;
  j["io_total"] = r.declared_io_total;
  j["io"] = io_json(packet, r);
  return j;
}

json crc_json(std::uint32_t field, std::uint16_t computed) {
  char field_hex[9];
  char computed_hex[5];
  (void)std::snprintf(field_hex, sizeof field_hex, "%08X", field);
  (void)std::snprintf(computed_hex, sizeof computed_hex, "%04X", computed);
  return {{"ok", field == computed}, {"field", field_hex}, {"computed", computed_hex}};
}

json command_json(const codecs::command_message& m) {
  json j = {{"codec", codecs::codec_name(m.codec)},
            {"type", m.type},
            {"type_name", message_type_name(m.codec, m.type)},
            {"quantity", m.quantity}};
  if (m.has_timestamp) {
    j["timestamp_s"] = m.timestamp_s;
    j["timestamp"] = iso8601_utc_ms(std::uint64_t{m.timestamp_s} * 1000);
  }
  if (m.has_imei) j["imei"] = m.device.str();
  if (m.payload_is_text()) j["payload_text"] = m.payload_text();
  j["payload_hex"] = to_hex(m.payload);
  j["crc"] = crc_json(m.crc_field, m.crc_computed);
  return j;
}

}  // namespace tgw::infra
