#include "infra/sink/copy_binary.hpp"

#include <bit>
#include <cstring>
#include <optional>
#include <string_view>

namespace tgw::infra::sink {
namespace {

// Network byte order, as every binary COPY field is.
template <class T>
void append_be(std::string& out, T value) {
  using U = std::make_unsigned_t<T>;
  auto bits = static_cast<U>(value);
  char buf[sizeof(T)];
  for (std::size_t i = sizeof(T); i-- > 0;) {
    buf[i] = static_cast<char>(bits & 0xFF);
    bits = static_cast<U>(bits >> 8);
  }
  out.append(buf, sizeof(T));
}

void append_null(std::string& out) {
  append_be<std::int32_t>(out, -1);
}

void append_text(std::string& out, std::string_view text) {
  append_be(out, static_cast<std::int32_t>(text.size()));
  out.append(text);
}

// jsonb's binary form: a version byte (1), then the JSON text.
void append_jsonb(std::string& out, std::string_view json) {
  append_be(out, static_cast<std::int32_t>(json.size() + 1));
  out += '\1';
  out.append(json);
}

void append_timestamp(std::string& out, std::int64_t unix_ms) {
  append_be<std::int32_t>(out, 8);
  append_be(out, pg_timestamp(unix_ms));
}

void append_int2(std::string& out, std::int32_t v) {
  append_be<std::int32_t>(out, 2);
  append_be(out, static_cast<std::int16_t>(v));
}

void append_int4(std::string& out, std::int32_t v) {
  append_be<std::int32_t>(out, 4);
  append_be(out, v);
}

// Degrees from degrees x 10^7, as an IEEE double (float8's binary form).
void append_degrees(std::string& out, std::int64_t e7) {
  append_be<std::int32_t>(out, 8);
  append_be(out, std::bit_cast<std::int64_t>(static_cast<double>(e7) / 1e7));
}

// A nullable column: the field's value, or NULL when there is none.
template <class T, class Append>
void append_or_null(std::string& out, const std::optional<T>& value, Append append) {
  if (value)
    append(out, *value);
  else
    append_null(out);
}

constexpr std::int16_t column_count = 17;

}  // namespace

const char* position_columns() {
  return "stream_id, stored_at, imei, codec, ts, priority, latitude, longitude, altitude, angle, "
         "satellites, speed, event_io, generation, io, io_named, extra";
}

std::string copy_binary(const std::vector<position_row>& rows) {
  std::string out;
  out.reserve(19 + rows.size() * 380 + 2);
  // Signature, flags (no OIDs), header extension length.
  out.append("PGCOPY\n\377\r\n\0", 11);
  append_be<std::int32_t>(out, 0);
  append_be<std::int32_t>(out, 0);
  for (const position_row& r : rows) {
    append_be(out, column_count);
    append_text(out, r.stream_id);
    append_timestamp(out, r.stored_ms);
    append_text(out, r.imei);
    append_or_null(out, r.codec, append_text);
    append_timestamp(out, r.ts_ms);
    append_int2(out, r.priority);
    append_degrees(out, r.latitude_e7);
    append_degrees(out, r.longitude_e7);
    append_int4(out, r.altitude);
    append_int4(out, r.angle);
    append_int2(out, r.satellites);
    append_int4(out, r.speed);
    append_int4(out, r.event_io);
    append_or_null(out, r.generation, append_int2);
    append_jsonb(out, r.io);
    append_jsonb(out, r.io_named);
    // No unknown fields is NULL, not an empty object.
    append_or_null(out, r.extra.empty() ? std::nullopt : std::optional<std::string_view>(r.extra),
                   append_jsonb);
  }
  append_be<std::int16_t>(out, -1);  // Trailer.
  return out;
}

}  // namespace tgw::infra::sink
