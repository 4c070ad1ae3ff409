#pragma once

#include <string>
#include <vector>

#include "infra/sink/telemetry_entry.hpp"

namespace tgw::infra::sink {

/// The column list of copy_binary's tuples, in positions' order.
[[nodiscard]] const char* position_columns();

/// The rows as one PostgreSQL COPY stream in binary format (COPY ... FROM STDIN WITH
/// (FORMAT binary)): the signature and header, a tuple a row with its columns as
/// position_columns() names them, and the trailer.
///
/// Binary rather than text: PostgreSQL then parses no timestamps, floats or integers
/// (the larger part of its work per row after the index), and values need no escaping.
[[nodiscard]] std::string copy_binary(const std::vector<position_row>& rows);

/// PostgreSQL's timestamp: microseconds since 2000-01-01 UTC, for a time in ms since the
/// Unix epoch.
[[nodiscard]] constexpr std::int64_t pg_timestamp(std::int64_t unix_ms) noexcept {
  return (unix_ms - 946'684'800'000) * 1000;
}

}  // namespace tgw::infra::sink
