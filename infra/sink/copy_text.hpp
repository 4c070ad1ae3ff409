#pragma once

#include <string>
#include <vector>

#include "infra/sink/telemetry_entry.hpp"

namespace tgw::infra::sink {

/// The column list of copy_text's lines, in positions' order.
[[nodiscard]] const char* position_columns();

/// The rows as PostgreSQL COPY text format: a line a row, columns as position_columns()
/// names them, tab-separated, with \\N for NULL and backslash, tab, newline and carriage
/// return escaped inside values.
[[nodiscard]] std::string copy_text(const std::vector<position_row>& rows);

}  // namespace tgw::infra::sink
