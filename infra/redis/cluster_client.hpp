#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infra/redis/client.hpp"
#include "infra/redis/cluster_slots.hpp"
#include "infra/redis/server_link.hpp"

namespace tgw::infra::redis {

/// A client of a Redis Cluster (redis+cluster://): a link to each master, the slot map,
/// and the routing of each command to the master of its key's slot.
///
/// Why not a library: hiredis 0.14 has no cluster support, and no maintained C or C++
/// cluster client is packaged for this Debian. What tgw needs is small: the slot of a
/// key, the map from CLUSTER SHARDS, MOVED and ASK, and finding the new master after a
/// failover. It lives here, on server_link like the other clients, with its own tests
/// against a real cluster.
///
/// Like every client, it belongs to one thread and never throws. A command is sent at
/// most once: after a transport failure on an established connection the map is reloaded, so
/// that the next command finds a promoted replica, but the failed command is not
/// repeated, since it may have run. A command that could not be sent at all (the
/// master does not accept connections) is sent again to the master the reloaded map
/// names. MOVED updates the slot's owner and follows; ASK is followed once with ASKING.
class cluster_client final : public client {
 public:
  /// How long a master that refused a connection is left alone.
  static constexpr std::chrono::milliseconds rest_after_refusal{250};

  explicit cluster_client(client_options opts);
  ~cluster_client() override;
  cluster_client(const cluster_client&) = delete;
  cluster_client& operator=(const cluster_client&) = delete;

  /// Loads the slot map unless loaded. False with `error` set when no seed answers,
  /// a seed is not a cluster node, or the map has slots without a master.
  bool ensure_connected(std::string& error) override;
  [[nodiscard]] bool connected() const noexcept override { return table_.has_value(); }
  void disconnect() noexcept override;

  value command(std::span<const std::string_view> argv) override;
  /// Each command goes to its master; commands for one master travel in one round trip.
  std::vector<value> pipeline(const std::vector<std::vector<std::string>>& commands) override;

  [[nodiscard]] std::string server() const override;
  /// The masters of the current map (loading it first; 0 when it cannot be loaded).
  std::size_t master_count() override;
  /// The masters of the current map (empty before the first load).
  [[nodiscard]] std::vector<host_port> masters() const;
  /// Runs `argv` on master `index` of the current map, for commands whose state is a
  /// node's own (a SCAN cursor). An error when there is no such master.
  value command_on_master(std::size_t index, std::span<const std::string_view> argv) override;

  /// Encoded pipelines go to the master a caller chose (client::master_of): bytes for
  /// several masters cannot be routed without reading them back. A master that refused
  /// a connection, or rests after a refusal, takes nothing (`sent` false).
  std::optional<std::size_t> master_of(std::uint16_t slot) override;
  bool send_encoded_to(std::size_t index, std::string_view commands, value& failed,
                       bool& sent) override;
  std::vector<value> receive_from(std::size_t index, std::size_t count) override;
  /// A MOVED updates the slot's owner; a transport failure reloads the map.
  void learn(const value& reply) override;
  [[nodiscard]] std::uint64_t map_generation() const noexcept override { return generation_; }
  /// The address of master `index` of the current map (for logs).
  [[nodiscard]] std::string master_address(std::size_t index) const;

 private:
  bool refresh(std::string& error);
  server_link& node(std::size_t index);
  /// Opens master `index`'s link unless open.
  bool open_node(std::size_t index, std::string& error);
  std::optional<std::size_t> target_of(std::span<const std::string_view> argv, std::uint16_t& slot,
                                       bool& keyed);
  value send_to_slot(std::uint16_t slot, std::span<const std::string_view> argv);
  value send_to(std::size_t index, std::span<const std::string_view> argv, bool& sent);
  value follow_ask(const redirect& r, std::span<const std::string_view> argv);
  value to_every_master(std::span<const std::string_view> argv);

  client_options opts_;
  std::optional<slot_table> table_;
  /// Connects to master `index` unless it refused a connection less than
  /// `rest_after_refusal` ago; false with `error` then or when the connect fails.
  bool reach(std::size_t index, std::string& error);

  std::uint64_t generation_ = 0;
  std::vector<std::unique_ptr<server_link>> nodes_;  ///< Parallel to table_->masters.
  std::size_t last_ = 0;                             ///< Master of the last keyed command.
  /// Masters that refused a connection, when, and why. Until a replica replaces a dead
  /// master, each command for its slots would try again; while it rests they fail at
  /// once, so the commands for the other masters are not held up by connect attempts.
  struct refusal {
    host_port at;
    std::chrono::steady_clock::time_point when;
    std::string why;
  };
  std::vector<refusal> refused_;
};

}  // namespace tgw::infra::redis
