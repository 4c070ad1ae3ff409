#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "infra/redis/connection.hpp"
#include "infra/telemetry/retention.hpp"

namespace tgw::actors::gateway {

/// What the last retention pass saw, for the metrics endpoint.
class retention_status {
 public:
  void update(infra::telemetry::retention_view view, std::int64_t trimmed);
  /// Counts entries trimmed by a pass that could not read every stream (and so leaves
  /// the last full view standing).
  void add_trimmed(std::int64_t trimmed);
  [[nodiscard]] infra::telemetry::retention_view view() const;
  [[nodiscard]] std::int64_t trimmed_total() const;

 private:
  mutable std::mutex mutex_;
  infra::telemetry::retention_view view_;
  std::int64_t trimmed_total_ = 0;
};

struct retention_config {
  bool trim = true;  ///< --telemetry-retention groups; off only observes.
  std::chrono::milliseconds interval{10'000};
  /// The telemetry streams: one on a single node, one per key shard on a cluster.
  std::vector<std::string> streams{"telemetry:records"};
};

/// Every interval, reads each telemetry stream's consumer groups and, with trimming on,
/// trims the stream below what every group acknowledged. Every instance runs one; the
/// trims agree, since each removes only what all groups are done with. Detached: it
/// blocks on its own Redis connection.
caf::behavior retention_actor(caf::event_based_actor* self, const retention_config& config,
                              const std::shared_ptr<infra::redis::connection>& conn,
                              const std::shared_ptr<retention_status>& status);

}  // namespace tgw::actors::gateway
