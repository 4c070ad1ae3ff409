#pragma once

#include <chrono>
#include <cstdint>
#include <set>
#include <string>

#include "infra/sink/pg_connection.hpp"

namespace tgw::infra::sink {

/// The SQL that creates the sink's tables: `positions`, partitioned by day of the record
/// time, and `rejected_entries`. Idempotent (IF NOT EXISTS); docs/TELEMETRY.md shows it.
[[nodiscard]] const char* positions_schema_sql();

/// Creates the schema: those tables, and the view `last_positions` with its device list
/// (last_positions.hpp), which is filled from `positions` when it is made. False with
/// `error` set when PostgreSQL refuses it.
bool create_positions_schema(pg_connection& pg, std::string& error);

/// Empty when the tables the sink writes exist with `positions` partitioned; otherwise
/// what is missing and what to run.
[[nodiscard]] std::string check_positions_schema(pg_connection& pg);

/// The days (UTC) of the record times the sink has made sure have a partition. A day's
/// partition `positions_YYYYMMDD` is created the first time a record of that day comes.
class day_partitions {
 public:
  /// The day number (days since 1970-01-01) of a record time in ms.
  [[nodiscard]] static std::int64_t day_of(std::int64_t ts_ms) noexcept;
  /// The partition's table name for a day: "positions_20231114".
  [[nodiscard]] static std::string table_of(std::int64_t day);

  /// Makes sure the day has a partition. A partition someone else created first, or one
  /// of the operator's own that covers the day (a monthly one, say), is as good.
  bool ensure(pg_connection& pg, std::int64_t day, std::string& error);
  /// Forgets what was made: after PostgreSQL said a row had no partition.
  void forget() noexcept { known_.clear(); }

 private:
  std::set<std::int64_t> known_;
};

}  // namespace tgw::infra::sink
