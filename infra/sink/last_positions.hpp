#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "infra/sink/telemetry_entry.hpp"

namespace tgw::infra::sink {

/// `last_positions`: one row per device, its newest row of `positions` (by record time
/// `ts`, then by `stream_id` for two records of one time), with the same columns and
/// imei as the primary key. The sink keeps it current in each batch's transaction, so
/// a device's last position is one primary-key lookup, and the fleet's one scan of a
/// table as large as the fleet (docs/TELEMETRY.md, "Last positions").
///
/// The SQL that creates it; idempotent.
[[nodiscard]] const char* last_positions_schema_sql();

/// The SQL that fills it from `positions` as it is: for `--init` on a database whose
/// `positions` was loaded before `last_positions` existed. A row already newer stays.
[[nodiscard]] const std::string& last_positions_backfill_sql();

/// The rows of a batch at their device's newest record time (one each, but for two
/// records of the same time), as the parameters of last_positions_upsert_sql():
/// PostgreSQL array literals of the IMEIs ($1), record times in ms ($2) and stream ids
/// ($3), sorted by IMEI so that two transactions that update the same devices take
/// their row locks in one order and never deadlock.
struct newest_rows {
  std::string imeis;
  std::string times_ms;
  std::string stream_ids;
  std::size_t count = 0;

  [[nodiscard]] static newest_rows of(const std::vector<position_row>& rows);
  [[nodiscard]] std::vector<std::string> params() const { return {imeis, times_ms, stream_ids}; }
};

/// The SQL that brings last_positions up to the newest rows of a batch, read back from
/// `positions` (written earlier in the same transaction, or before by a batch delivered
/// again): an upsert that changes a device's row only for a newer one.
[[nodiscard]] const std::string& last_positions_upsert_sql();

}  // namespace tgw::infra::sink
