#pragma once

#include <functional>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "infra/redis/connection.hpp"
#include "infra/redis/key_shards.hpp"
#include "infra/telemetry/projection.hpp"

namespace tgw::infra::telemetry {

/// What to rebuild and how.
struct rebuild_settings {
  std::string imei;      ///< Empty: every device that has a journal.
  bool dry_run = false;  ///< Compare only; write nothing.
  std::size_t page = 1000;
  int max_attempts = 50;  ///< Per device, when live writes keep changing its journal.
  /// Called after each device with the counts so far (for progress output).
  std::function<void(const struct rebuild_report&)> progress;
};

/// The differences found on one device.
struct device_differences {
  std::string imei;
  std::vector<field_difference> fields;
};

/// What a rebuild did.
struct rebuild_report {
  std::uint64_t devices = 0;
  std::uint64_t events_read = 0;
  std::uint64_t projections_written = 0;
  std::uint64_t differences = 0;  ///< Fields that differed, over all devices.
  std::uint64_t retries = 0;      ///< Folds redone because the journal changed meanwhile.
  std::vector<device_differences> differing;
};

/// Rebuilds `device:{imei}` from `journal:{imei}` alone over its own blocking
/// connection; one instance per thread.
///
/// A device is folded under WATCH journal:{imei} and its hash replaced with
/// MULTI/DEL/HSET/EXEC. Every live write of the projection appends to the journal in
/// the same atomic step, so an EXEC that succeeds proves no live update happened since
/// the fold read the journal; after a failed EXEC the events appended meanwhile are
/// folded and the write is tried again.
///
/// On a Redis Cluster a device's journal and projection are in its key shard (one
/// slot, so the WATCH and the transaction run on its master), and the devices are found
/// by a SCAN of every master.
class projection_rebuilder {
 public:
  explicit projection_rebuilder(redis::connection::options where, redis::key_shards shards = {});

  /// nullopt with `error` when Redis fails or a device kept changing.
  std::optional<rebuild_report> run(const rebuild_settings& s, std::string& error);

 private:
  /// One device; false with `error` on failure.
  bool rebuild_device(const std::string& imei, const rebuild_settings& s, rebuild_report& report,
                      std::string& error);
  /// XRANGE's start for the entries after `last_id` (all when empty).
  static std::string range_start(const std::string& last_id);
  /// Folds one XRANGE reply into `p`, advancing `last_id`; true when it was the last page.
  static bool fold_page(const redis::value& entries, std::size_t page, device_projection& p,
                        std::string& last_id, std::uint64_t& events);
  std::optional<std::vector<std::string>> journaled_devices(std::size_t count, std::string& error);

  redis::connection conn_;
  redis::key_shards shards_;
};

}  // namespace tgw::infra::telemetry
