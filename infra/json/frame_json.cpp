#include "infra/json/frame_json.hpp"

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
  // The civil date of a day count in 64-bit arithmetic (H. Hinnant, "chrono-Compatible
  // Low-Level Date Algorithms"): std::chrono's year is 16 bits and wraps past 32767,
  // and a device may stamp any 64-bit value.
  const std::uint64_t day_ms = 86400000;
  const auto days = static_cast<std::int64_t>(ms / day_ms);
  const std::uint64_t in_day = ms % day_ms;
  const std::int64_t z = days + 719468;
  const std::int64_t era = z / 146097;
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const std::int64_t day = doy - (153 * mp + 2) / 5 + 1;
  const std::int64_t month = mp < 10 ? mp + 3 : mp - 9;
  const std::int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  // Years past 9999 in ISO 8601's expanded form, as JavaScript's toISOString writes
  // them: a sign and at least six digits.
  char buf[64];
  (void)std::snprintf(
      buf, sizeof buf,
      year <= 9999 ? "%04lld-%02lld-%02lldT%02u:%02u:%02u.%03uZ"
                   : "+%06lld-%02lld-%02lldT%02u:%02u:%02u.%03uZ",
      static_cast<long long>(year), static_cast<long long>(month), static_cast<long long>(day),
      static_cast<unsigned>(in_day / 3600000), static_cast<unsigned>(in_day / 60000 % 60),
      static_cast<unsigned>(in_day / 1000 % 60), static_cast<unsigned>(in_day % 1000));
  return buf;
}

json io_json(const codecs::avl_packet& packet, const codecs::avl_record& r) {
  json io = json::array();
  for (const codecs::io_element& e : packet.io_of(r)) {
    json element = {{"id", e.id}, {"size", e.size}};
    if (e.variable)
      element["hex"] = to_hex(packet.value_bytes(e));
    else
      element["value"] = std::to_string(e.value);
    io.push_back(std::move(element));
  }
  return io;
}

json record_json(const codecs::avl_packet& packet, const codecs::avl_record& r) {
  json j = {
      {"timestamp_ms", std::to_string(r.timestamp_ms)},
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
