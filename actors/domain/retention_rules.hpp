#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "actors/ports/retention_store.hpp"

namespace tgw::domain {

/// A stream with no consumer group promises its entries to no one, and nothing trims it
/// by groups. The floor: it keeps at most `maxlen` entries (0: no bound), and while the
/// store uses over 90 % of its memory limit the oldest entries go until it would use
/// 80 % (estimated from the stream's bytes per entry), so that writes and a consumer
/// that comes later still find room.
struct ungrouped_floor {
  std::int64_t maxlen = 1'000'000;
  static constexpr double full = 0.9;    ///< Share of the memory limit that is full.
  static constexpr double relief = 0.8;  ///< Share of the memory limit trimmed down to.
};

/// How many entries the ungrouped stream of `view` keeps under `floor`, given the
/// store's `memory` (nullopt: unknown, the length bound alone). `view.length` when
/// nothing goes.
[[nodiscard]] std::int64_t ungrouped_keep(const ports::retention_view& view,
                                          const ungrouped_floor& floor,
                                          const std::optional<ports::memory_use>& memory);

/// Whether the ungrouped stream of `view` is past half its way to the floor: half of
/// `maxlen` entries, or the store past `relief` of its memory limit. Worth a warning.
[[nodiscard]] bool ungrouped_nearing_floor(const ports::retention_view& view,
                                           const ungrouped_floor& floor,
                                           const std::optional<ports::memory_use>& memory);

/// The views of a cluster's telemetry shards as one: lengths and sizes added, each
/// group's lag and pending added over the shards, its oldest needed entry the oldest
/// of any shard. `trim_below` is left empty: each shard is trimmed by its own view.
[[nodiscard]] ports::retention_view combine(const std::vector<ports::retention_view>& shards);

}  // namespace tgw::domain
