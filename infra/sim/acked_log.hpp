#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "codecs/imei.hpp"

namespace tgw::infra::sim {

/// A file with one line per packet the gateway ACKed with the right count:
/// `IMEI FIRST_TS LAST_TS RECORDS` (record timestamps in ms). A device's timestamps
/// increase strictly across its packets, so the range names exactly the records the
/// gateway confirmed; fault-injection runs (scripts/chaos) check each of them against
/// the telemetry stream. Shared by every device of a fleet; write() is thread-safe.
class acked_log {
 public:
  /// Opens (truncates) `path`; throws std::runtime_error when it cannot.
  explicit acked_log(const std::string& path);
  acked_log(const acked_log&) = delete;
  acked_log& operator=(const acked_log&) = delete;
  /// Flushes and closes the file.
  ~acked_log();

  /// Appends one line. Lines are buffered: the file is complete once the fleet is done.
  void write(const codecs::imei& device, std::uint64_t first_ts, std::uint64_t last_ts,
             std::uint32_t records);

 private:
  std::mutex mutex_;
  std::FILE* file_;  // Guarded by mutex_.
};

}  // namespace tgw::infra::sim
