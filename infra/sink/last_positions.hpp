#pragma once

#include <string>
#include <vector>

#include "infra/sink/telemetry_entry.hpp"

namespace tgw::infra::sink {

/// `last_positions`: one row per device, its newest row of `positions` (by record time
/// `ts`, then by `stream_id` for two records of one time), with the same columns. A
/// view: for each IMEI of `position_devices` (the sink adds a device there in the
/// transaction of its first rows), one backward step of each day partition's primary
/// key. So a device's last position is a few index lookups, and keeping it current
/// writes nothing per record (docs/TELEMETRY.md, "Last positions").
///
/// The SQL that creates `position_devices` and the view; idempotent.
[[nodiscard]] const char* last_positions_schema_sql();

/// The SQL that fills `position_devices` from `positions` as it is: for `--init` on a
/// database whose `positions` was loaded before the table existed.
[[nodiscard]] const char* position_devices_backfill_sql();

/// The IMEIs of `rows`, each once, sorted (so that two committers adding the same new
/// devices take their locks in one order and never deadlock).
[[nodiscard]] std::vector<std::string> devices_of(const std::vector<position_row>& rows);

/// The SQL that adds devices to `position_devices`, $1 an array literal of IMEIs
/// (imei_array); a device there already is left alone.
[[nodiscard]] const char* add_position_devices_sql();

/// A PostgreSQL array literal of `values`, each quoted.
[[nodiscard]] std::string imei_array(const std::vector<std::string>& values);

}  // namespace tgw::infra::sink
