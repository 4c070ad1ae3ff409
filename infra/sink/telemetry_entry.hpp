#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "infra/telemetry/entry_schema.hpp"
#include "infra/telemetry/io_dictionary.hpp"
#include "infra/telemetry/named_io.hpp"

namespace tgw::infra::sink {

/// One record of the telemetry stream, checked and ready for a `positions` row.
struct position_row {
  std::string stream_id;       ///< The entry id, "<ms>-<seq>": the idempotency key.
  std::int64_t stored_ms = 0;  ///< When the gateway stored it (the id's time).
  std::string imei;
  std::optional<std::string> codec;  ///< "8", "8E", "16"; none in format 1 entries.
  std::int64_t ts_ms = 0;            ///< The record's own time.
  std::int32_t priority = 0;
  std::int64_t longitude_e7 = 0;
  std::int64_t latitude_e7 = 0;
  std::int32_t altitude = 0;
  std::int32_t angle = 0;
  std::int32_t satellites = 0;
  std::int32_t speed = 0;
  std::int32_t event_io = 0;
  std::optional<std::int32_t> generation;  ///< Codec 16 only.
  std::string io;                          ///< The format 4 io array, whatever the entry's format.
  std::string io_named;  ///< JSON object, name -> physical value, for the known ids.
  /// Values whose size on the wire is not the one the IO dictionary gives.
  std::vector<telemetry::io_size_mismatch> io_size_mismatches;
  /// Fields this sink does not know, as a JSON object; empty when there are none. A
  /// newer gateway may add fields without a new format version: they are kept, not lost.
  std::string extra;
};

/// An entry the sink cannot turn into a row: kept whole, with the reason.
struct rejected_entry {
  std::string stream_id;
  std::string fields;  ///< JSON object of every field, as stored.
  std::string reason;
};

using entry_fields = std::vector<std::pair<std::string, std::string>>;

/// The highest entry format (`v`) this sink reads.
using telemetry::newest_entry_format;

/// Checks one stream entry against the entry format (docs/TELEMETRY.md) and makes its
/// row, or says precisely why it cannot: a missing or malformed field, a value out of
/// its column's range, or a format newer than this sink reads. `names` fills io_named.
[[nodiscard]] std::variant<position_row, rejected_entry> parse_entry(
    const std::string& stream_id, const entry_fields& fields,
    const telemetry::io_dictionary& names);

/// The record times that go into `positions`, around when the gateway stored the
/// record (its entry id's time, so that a batch delivered again is judged the same).
/// Each day a record names gets a partition: a device clock that wanders over decades
/// would make thousands, and these bounds keep it to a few hundred whatever the clocks.
struct record_window {
  std::int64_t max_age_days = 366;  ///< At most this long before it was stored.
  std::int64_t max_ahead_days = 1;  ///< At most this long after (a clock running ahead).
};

/// Why `row`'s time is outside `window`, or nullopt when it is inside.
[[nodiscard]] std::optional<std::string> outside_window(const position_row& row,
                                                        const record_window& window);

/// An entry kept whole in rejected_entries, for `reason`.
[[nodiscard]] rejected_entry reject_entry(const std::string& stream_id, const entry_fields& fields,
                                          std::string reason);

/// The ms part of a stream entry id, or nullopt if it is not one.
[[nodiscard]] std::optional<std::int64_t> entry_id_ms(const std::string& stream_id);

}  // namespace tgw::infra::sink
