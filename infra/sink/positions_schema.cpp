#include "infra/sink/positions_schema.hpp"

#include <chrono>
#include <cstdio>

#include "infra/sink/last_positions.hpp"

namespace tgw::infra::sink {

const char* positions_schema_sql() {
  // The primary key is the idempotency key: a record is its stream entry (stream_id),
  // and imei and ts come first so that it is also the index "one device's positions by
  // time" needs. A partitioned table's unique key must hold the partition column (ts).
  return R"sql(CREATE TABLE IF NOT EXISTS positions (
  imei        text             NOT NULL,
  ts          timestamptz      NOT NULL,
  stream_id   text             NOT NULL,
  stored_at   timestamptz      NOT NULL,
  codec       text,
  priority    smallint         NOT NULL,
  latitude    double precision NOT NULL,
  longitude   double precision NOT NULL,
  altitude    integer          NOT NULL,
  angle       integer          NOT NULL,
  satellites  smallint         NOT NULL,
  speed       integer          NOT NULL,
  event_io    integer          NOT NULL,
  generation  smallint,
  io          jsonb            NOT NULL,
  io_named    jsonb            NOT NULL,
  extra       jsonb,
  PRIMARY KEY (imei, ts, stream_id)
) PARTITION BY RANGE (ts);
CREATE TABLE IF NOT EXISTS rejected_entries (
  stream      text        NOT NULL,
  stream_id   text        NOT NULL,
  fields      jsonb       NOT NULL,
  reason      text        NOT NULL,
  rejected_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (stream, stream_id)
);)sql";
}

bool create_positions_schema(pg_connection& pg, std::string& error) {
  auto r = pg.exec(positions_schema_sql());
  if (r.ok) r = pg.exec("SELECT to_regclass('position_devices') IS NOT NULL");
  const bool had_devices = r.ok && !r.rows.empty() && r.rows[0].at(0) == "t";
  if (r.ok) r = pg.exec(last_positions_schema_sql());
  // Filled once, when it is made: positions may hold rows from before it existed. A
  // scan of positions, so not on every --init.
  if (r.ok && !had_devices) r = pg.exec(position_devices_backfill_sql());
  if (!r.ok) error = r.message;
  return r.ok;
}

std::string check_positions_schema(pg_connection& pg) {
  const auto r = pg.exec(
      "SELECT to_regclass('positions') IS NOT NULL, to_regclass('rejected_entries') IS NOT NULL, "
      "EXISTS (SELECT 1 FROM pg_partitioned_table p WHERE p.partrelid = "
      "to_regclass('positions')), to_regclass('last_positions') IS NOT NULL AND "
      "to_regclass('position_devices') IS NOT NULL");
  if (!r.ok) return "cannot read the schema: " + r.message;
  const auto& row = r.rows.at(0);
  const auto yes = [](const std::optional<std::string>& v) { return v && *v == "t"; };
  if (!yes(row.at(0)) || !yes(row.at(1)))
    return "the tables positions and rejected_entries are missing in this database; create them "
           "with: tgw sink postgres --dsn DSN --init";
  if (!yes(row.at(2)))
    return "the table positions exists but is not partitioned by time; it was not made by "
           "tgw sink postgres --init (rename it, then run --init)";
  if (!yes(row.at(3)))
    return "the view last_positions or the table position_devices is missing in this "
           "database (the schema is from an older tgw); create them, filled from positions, "
           "with: tgw sink postgres --dsn DSN --init";
  return {};
}

std::int64_t day_partitions::day_of(std::int64_t ts_ms) noexcept {
  constexpr std::int64_t ms_per_day = 86'400'000;
  return ts_ms >= 0 ? ts_ms / ms_per_day : (ts_ms - ms_per_day + 1) / ms_per_day;
}

namespace {

std::string date_text(std::int64_t day, const char* format) {
  using namespace std::chrono;
  const year_month_day ymd{sys_days{days{day}}};
  char buf[16];
  (void)std::snprintf(buf, sizeof buf, format, static_cast<int>(ymd.year()),
                      static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
  return buf;
}

}  // namespace

std::string day_partitions::table_of(std::int64_t day) {
  return "positions_" + date_text(day, "%04d%02u%02u");
}

bool day_partitions::ensure(pg_connection& pg, std::int64_t day, std::string& error) {
  if (known_.contains(day)) return true;
  const std::string sql = "CREATE TABLE IF NOT EXISTS " + table_of(day) +
                          " PARTITION OF positions FOR VALUES FROM ('" +
                          date_text(day, "%04d-%02u-%02u") + " 00:00:00+00') TO ('" +
                          date_text(day + 1, "%04d-%02u-%02u") + " 00:00:00+00')";
  const auto r = pg.exec(sql);
  // 42P07/23505: another sink made it between our check and our create. 42P17: a
  // partition of the operator's own already covers the day.
  if (r.ok || r.sqlstate == "42P07" || r.sqlstate == "23505" || r.sqlstate == "42P17") {
    known_.insert(day);
    return true;
  }
  error = "cannot create partition " + table_of(day) + ": " + r.message;
  return false;
}

}  // namespace tgw::infra::sink
