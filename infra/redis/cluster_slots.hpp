#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "infra/redis/redis_url.hpp"
#include "infra/redis/redis_value.hpp"

namespace tgw::infra::redis {

/// Which master serves each of the 16,384 slots, as one node's CLUSTER SHARDS says.
struct slot_table {
  static constexpr std::int32_t uncovered = -1;

  std::vector<host_port> masters;   ///< Masters that serve at least one slot.
  std::vector<std::int32_t> owner;  ///< Per slot: an index into masters, or uncovered.
  std::size_t covered = 0;          ///< Slots with an owner.

  [[nodiscard]] bool complete() const noexcept { return covered == owner.size(); }
  /// The master that serves `slot`, or nullptr.
  [[nodiscard]] const host_port* master_of(std::uint16_t slot) const noexcept {
    const std::int32_t i = owner[slot];
    return i == uncovered ? nullptr : &masters[static_cast<std::size_t>(i)];
  }
  /// The index of `address` in masters; adds it when it is new (a MOVED reply names
  /// a master the table did not know).
  std::size_t index_of(const host_port& address);
};

/// Reads a CLUSTER SHARDS reply (Redis 7): every shard's slot ranges and the node
/// whose role is master. With `tls` a node's address is its `tls-port` (its `port` when
/// it has none, as a node with `tls-cluster` and no plain port lists it). nullopt with
/// `error` set on a reply of another shape.
[[nodiscard]] std::optional<slot_table> parse_cluster_shards(const value& reply, std::string& error,
                                                             bool tls = false);

/// Reads the address of a -MOVED or -ASK error: "MOVED 3999 127.0.0.1:6381".
struct redirect {
  bool ask = false;  ///< ASK: this one command, after ASKING; MOVED: the slot moved.
  std::uint16_t slot = 0;
  host_port to;
};
[[nodiscard]] std::optional<redirect> parse_redirect(const value& reply);

}  // namespace tgw::infra::redis
