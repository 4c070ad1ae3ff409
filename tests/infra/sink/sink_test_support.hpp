#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "infra/redis/connection.hpp"
#include "infra/redis/key_shards.hpp"
#include "tests/support/postgres_server.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/run_tgw.hpp"
#include "tests/support/telemetry_entries.hpp"

namespace tgw::test {

/// Appends `n` format 2 entries to telemetry:records, as a gateway would, numbered from
/// `first`: record i has ts 1700000000000 + i * 1000, one of seven devices, and its
/// number in io id 199 (trip_odometer).
/// With `shards` (a cluster), each entry goes to its device's shard's stream.
inline void add_entries(infra::redis::connection& redis, int first, int n,
                        const infra::redis::key_shards* shards = nullptr) {
  constexpr int chunk = 500;
  for (int at = first; at < first + n; at += chunk) {
    std::vector<std::vector<std::string>> commands;
    for (int i = at; i < std::min(first + n, at + chunk); ++i) {
      const std::string imei = "35630704244" + std::to_string(1000 + i % 7);
      commands.push_back(telemetry_entry_xadd(imei, 1700000000000LL + i * 1000LL,
                                              "{\"239\":1,\"199\":" + std::to_string(i) + "}",
                                              i % 120));
      if (shards != nullptr) commands.back()[1] = shards->prefix_of(imei) + "telemetry:records";
    }
    for (const auto& reply : redis.pipeline(commands))
      if (reply.is_error()) throw std::runtime_error("XADD: " + reply.text);
  }
}

/// `tgw sink postgres` for these servers, with `extra` arguments. The entries of these
/// tests hold records of November 2023 stored today, so the window of record times
/// reaches back 100 years unless `extra` narrows it (its tests do).
inline std::vector<std::string> sink_argv(const postgres_server& pg, const redis_server& redis,
                                          const std::vector<std::string>& extra,
                                          const std::string& failpoint = {}) {
  std::vector<std::string> argv;
  if (!failpoint.empty()) argv = {"env", "TGW_SINK_FAILPOINT=" + failpoint};
  for (const std::string& a :
       {std::string(TGW_BINARY), std::string("sink"), std::string("postgres"), std::string("--dsn"),
        pg.dsn(), std::string("--redis"), redis.url(), std::string("--progress-s"),
        std::string("1")})
    argv.push_back(a);
  if (std::find(extra.begin(), extra.end(), "--max-record-age-days") == extra.end())
    argv.insert(argv.end(), {"--max-record-age-days", "36500"});
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

/// The argv as one shell command line (single-quoted words).
inline std::string shell_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& a : argv) {
    line += line.empty() ? "'" : " '";
    for (const char c : a) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += "'";
  }
  return line;
}

}  // namespace tgw::test
