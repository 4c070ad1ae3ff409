#pragma once

#include <array>
#include <string_view>

namespace tgw::infra::telemetry {

/// One field of a telemetry stream entry (docs/TELEMETRY.md, "The entry").
struct entry_field {
  std::string_view name;
  int since_format;  ///< The first entry format (`v`) with the field; 1 for the first.
  bool always;       ///< Present in every entry of those formats (gen may be empty).
};

/// Every field the entry format defines, in the order the persist Function writes them
/// (infra/telemetry/gateway_library.lua). docs/TELEMETRY.md's table names the same
/// fields: tests/infra/telemetry/entry_schema_test.cpp holds the three equal.
inline constexpr std::array<entry_field, 14> entry_schema{{
    {"v", 2, true},
    {"imei", 1, true},
    {"codec", 2, true},
    {"ts", 1, true},
    {"pri", 1, true},
    {"lon", 1, true},
    {"lat", 1, true},
    {"alt", 1, true},
    {"ang", 1, true},
    {"sat", 1, true},
    {"spd", 1, true},
    {"evt", 1, true},
    {"io", 1, true},
    {"gen", 2, false},
}};

/// The entry format the gateway writes, and the newest readers of this build read.
inline constexpr int newest_entry_format = 4;

}  // namespace tgw::infra::telemetry
