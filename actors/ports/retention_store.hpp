#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/ports/store_failure.hpp"

namespace tgw::ports {

/// One consumer group's progress on a telemetry stream.
struct group_progress {
  std::string name;
  /// Entries not yet delivered to the group (-1 when the store cannot tell, after a
  /// trim below what the group read).
  std::int64_t lag_entries = 0;
  /// Entries delivered and not acknowledged.
  std::int64_t pending = 0;
  /// The oldest entry the group still needs: its oldest pending entry, or the first
  /// after the last it was delivered. Entries below it are acknowledged.
  std::string oldest_needed;
  /// When that entry was stored (ms, from its id) if it exists: nullopt when the group
  /// has everything delivered and acknowledged.
  std::optional<std::int64_t> oldest_needed_stored_ms;
};

/// A stream's consumer groups and where the stream may be trimmed.
struct retention_view {
  std::vector<group_progress> groups;
  std::int64_t length = 0;
  /// Memory the stream takes in the store (an estimate); 0 when it does not exist.
  std::int64_t bytes = 0;
  /// The bound below which every entry is acknowledged by every group; nullopt when
  /// nothing may be trimmed (no group at all: no one has said what it has read).
  std::optional<std::string> trim_below;
};

/// The store's memory.
struct memory_use {
  std::int64_t used = 0;
  std::int64_t max = 0;  ///< 0: no limit
};

/// The telemetry streams as the retention actor sees them: what each consumer group
/// still needs, and trims. Its adapter is in infra/telemetry (retention.hpp). Every
/// call blocks, so it belongs to one thread (a detached actor's).
class retention_store {
 public:
  virtual ~retention_store() = default;
  /// The length and size of `stream` and its groups; nullopt with `failure` set.
  virtual std::optional<retention_view> read(const std::string& stream, store_failure& failure) = 0;
  /// Trims `stream` below what every group of `view` acknowledged: the entries
  /// removed, or nullopt with `failure` set.
  virtual std::optional<std::int64_t> trim_acknowledged(const std::string& stream,
                                                        const retention_view& view,
                                                        store_failure& failure) = 0;
  /// Trims `stream` to its newest `keep` entries: the entries removed, or nullopt.
  virtual std::optional<std::int64_t> trim_to_length(const std::string& stream, std::int64_t keep,
                                                     store_failure& failure) = 0;
  /// The store's memory; nullopt when it does not say (its user may not ask).
  virtual std::optional<memory_use> memory() = 0;
};

}  // namespace tgw::ports
