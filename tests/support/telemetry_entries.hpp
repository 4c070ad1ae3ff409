#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tgw::test {

/// XADD of one format 2 telemetry entry as `tgw serve` writes it (docs/TELEMETRY.md):
/// a Codec 8E record at a fixed position, with the given time, speed and io object.
inline std::vector<std::string> telemetry_entry_xadd(const std::string& imei, std::int64_t ts,
                                                     const std::string& io, int speed = 41) {
  return {"XADD",
          "telemetry:records",
          "*",
          "v",
          "2",
          "imei",
          imei,
          "codec",
          "8E",
          "ts",
          std::to_string(ts),
          "pri",
          "1",
          "lon",
          "252616688",
          "lat",
          "546992512",
          "alt",
          "105",
          "ang",
          "90",
          "sat",
          "12",
          "spd",
          std::to_string(speed),
          "evt",
          "239",
          "io",
          io,
          "gen",
          ""};
}

}  // namespace tgw::test
