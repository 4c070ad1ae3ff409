#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "infra/redis/connection.hpp"

namespace tgw::infra::telemetry {

/// One consumer group's progress on the telemetry stream.
struct group_progress {
  std::string name;
  /// Entries not yet delivered to the group (Redis' own `lag`; -1 when Redis cannot
  /// tell, after a trim below what the group read).
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

/// The stream's consumer groups and where the stream may be trimmed.
struct retention_view {
  std::vector<group_progress> groups;
  std::int64_t length = 0;
  /// Redis memory the stream takes (MEMORY USAGE, Redis' sampled estimate); 0 when it
  /// does not exist.
  std::int64_t bytes = 0;
  /// XTRIM MINID bound that keeps every entry some group has not acknowledged; nullopt
  /// when nothing may be trimmed (no group at all: no one has said what it has read).
  std::optional<std::string> trim_below;
};

/// Reads the length and size of `stream` and its groups (XINFO GROUPS, XPENDING, and
/// XRANGE for the first entry a group has not been delivered). nullopt with `error` set when Redis
/// refuses.
std::optional<retention_view> read_retention(redis::connection& conn, const std::string& stream,
                                             std::string& error);

/// Trims `stream` below what every group has acknowledged (XTRIM MINID, exact).
/// Returns the entries removed, or nullopt with `error` set.
std::optional<std::int64_t> trim_acknowledged(redis::connection& conn, const std::string& stream,
                                              const retention_view& view, std::string& error);

/// Redis' memory as INFO reports it.
struct memory_use {
  std::int64_t used = 0;  ///< used_memory
  std::int64_t max = 0;   ///< maxmemory; 0: no limit
};

/// INFO memory; nullopt when Redis refuses it (an ACL without +info).
std::optional<memory_use> read_memory(redis::connection& conn);

/// A stream with no consumer group promises its entries to no one, and nothing trims it
/// by groups. The floor: it keeps at most `maxlen` entries (0: no bound), and while
/// Redis uses over 90 % of its maxmemory the oldest entries go until it would use 80 %
/// (estimated from the stream's bytes per entry), so that writes and the XGROUP CREATE
/// of a consumer that comes later still find room.
struct ungrouped_floor {
  std::int64_t maxlen = 1'000'000;
  static constexpr double full = 0.9;    ///< Share of maxmemory that is full.
  static constexpr double relief = 0.8;  ///< Share of maxmemory trimmed down to.
};

/// How many entries the ungrouped stream of `view` keeps under `floor`, given Redis'
/// `memory` (nullopt: unknown, the length bound alone). `view.length` when nothing goes.
[[nodiscard]] std::int64_t ungrouped_keep(const retention_view& view, const ungrouped_floor& floor,
                                          const std::optional<memory_use>& memory);

/// Whether the ungrouped stream of `view` is past half its way to the floor: half of
/// `maxlen` entries, or Redis past `relief` of its maxmemory. Worth a warning.
[[nodiscard]] bool ungrouped_nearing_floor(const retention_view& view, const ungrouped_floor& floor,
                                           const std::optional<memory_use>& memory);

/// Trims `stream` to its newest `keep` entries (XTRIM MAXLEN, exact). Returns the
/// entries removed, or nullopt with `error` set.
std::optional<std::int64_t> trim_to_length(redis::connection& conn, const std::string& stream,
                                           std::int64_t keep, std::string& error);

/// The views of a cluster's telemetry shards as one: lengths and sizes added, each
/// group's lag and pending added over the shards, its oldest needed entry the oldest
/// of any shard. `trim_below` is left empty: each shard is trimmed by its own view.
[[nodiscard]] retention_view combine(const std::vector<retention_view>& shards);

/// Smaller of two stream ids ("ms-seq").
[[nodiscard]] bool stream_id_less(const std::string& a, const std::string& b);

}  // namespace tgw::infra::telemetry
