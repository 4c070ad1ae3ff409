#include "infra/sink/last_positions.hpp"

#include <algorithm>

namespace tgw::infra::sink {

const char* last_positions_schema_sql() {
  // The view names d.imei, not p.imei: a query's `WHERE imei = ...` then selects the
  // device before the lateral step, which a LIMIT inside it keeps the filter out of.
  return R"sql(CREATE TABLE IF NOT EXISTS position_devices (
  imei text PRIMARY KEY
);
CREATE OR REPLACE VIEW last_positions AS
SELECT d.imei, p.ts, p.stream_id, p.stored_at, p.codec, p.priority, p.latitude, p.longitude,
       p.altitude, p.angle, p.satellites, p.speed, p.event_io, p.generation, p.io, p.io_named,
       p.extra
  FROM position_devices d
  CROSS JOIN LATERAL (
    SELECT * FROM positions
     WHERE positions.imei = d.imei
     ORDER BY positions.ts DESC, positions.stream_id DESC
     LIMIT 1) p;)sql";
}

const char* position_devices_backfill_sql() {
  return "INSERT INTO position_devices (imei) SELECT DISTINCT imei FROM positions ON CONFLICT DO "
         "NOTHING";
}

const char* add_position_devices_sql() {
  return "INSERT INTO position_devices (imei) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING";
}

std::vector<std::string> devices_of(const std::vector<position_row>& rows) {
  std::vector<std::string> out;
  out.reserve(rows.size());
  for (const position_row& r : rows) out.push_back(r.imei);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string imei_array(const std::vector<std::string>& values) {
  std::string out = "{";
  for (const std::string& v : values) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (const char c : v) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

}  // namespace tgw::infra::sink
