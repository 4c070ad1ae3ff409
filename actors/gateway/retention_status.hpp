#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "actors/domain/retention_rules.hpp"
#include "actors/ports/retention_store.hpp"

namespace tgw::actors::gateway {

/// What the last retention pass saw, for the metrics endpoint.
class retention_status {
 public:
  void update(ports::retention_view view, std::int64_t trimmed);
  /// Counts entries trimmed by a pass that could not read every stream (and so leaves
  /// the last full view standing).
  void add_trimmed(std::int64_t trimmed);
  [[nodiscard]] ports::retention_view view() const;
  [[nodiscard]] std::int64_t trimmed_total() const;

 private:
  mutable std::mutex mutex_;
  ports::retention_view view_;
  std::int64_t trimmed_total_ = 0;
};

/// Settings of the retention actor (retention_actor.hpp).
struct retention_config {
  bool trim = true;  ///< --telemetry-retention groups; off only observes.
  std::chrono::milliseconds interval{10'000};
  /// With `trim`: how far a stream with no consumer group may grow
  /// (--telemetry-ungrouped-maxlen, and the store's memory limit).
  domain::ungrouped_floor ungrouped;
  /// A stream without a group nearing its floor is said at warn at most this often.
  std::chrono::milliseconds warn_interval{30'000};
  /// The telemetry streams: one on a single node, one per key shard on a cluster.
  std::vector<std::string> streams{"telemetry:records"};
};

}  // namespace tgw::actors::gateway
