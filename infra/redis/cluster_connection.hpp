#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infra/redis/cluster_slots.hpp"
#include "infra/redis/connection.hpp"

namespace tgw::infra::redis {

/// A connection to a Redis Cluster: a connection to each master, the slot map, and
/// the routing of each command to the master of its key's slot.
///
/// Why not a library: hiredis 0.14 has no cluster support, and no maintained C or C++
/// cluster client is packaged for this Debian. What tgw needs is small: the slot of a
/// key, the map from CLUSTER SHARDS, MOVED and ASK, and finding the new master after a
/// failover. It lives here, on top of `connection`, with its own tests against a real
/// cluster.
///
/// Like `connection`, it belongs to one thread and never throws. A command is sent at
/// most once: after an IO error on an established connection the map is reloaded, so
/// that the next command finds a promoted replica, but the failed command is not
/// repeated, since it may have run. A command that could not be sent at all (the
/// master does not accept connections) is sent again to the master the reloaded map
/// names. MOVED updates the slot's owner and follows; ASK is followed once with ASKING.
class cluster_connection {
 public:
  /// How long a master that refused a connection is left alone.
  static constexpr std::chrono::milliseconds rest_after_refusal{250};

  explicit cluster_connection(connection::options opts);
  ~cluster_connection();
  cluster_connection(const cluster_connection&) = delete;
  cluster_connection& operator=(const cluster_connection&) = delete;

  /// Loads the slot map unless loaded. False with `error` set when no seed answers,
  /// a seed is not a cluster node, or the map has slots without a master.
  bool ensure_connected(std::string& error);
  [[nodiscard]] bool connected() const noexcept { return table_.has_value(); }
  void disconnect() noexcept;

  value command(std::span<const std::string_view> argv);
  /// Each command goes to its master; commands for one master travel in one round trip.
  std::vector<value> pipeline(const std::vector<std::vector<std::string>>& commands);

  [[nodiscard]] std::string server() const;
  /// The masters of the current map (empty before the first load).
  [[nodiscard]] std::vector<host_port> masters() const;
  /// Runs `argv` on master `index` of the current map, for commands whose state is a
  /// node's own (a SCAN cursor). An error when there is no such master.
  value command_on_master(std::size_t index, std::span<const std::string_view> argv);

  /// For a caller that builds each master's pipeline itself (the telemetry writer): the
  /// master that serves `slot` in the current map (loading it first), or nullopt when
  /// none does.
  std::optional<std::size_t> master_of(std::uint16_t slot);
  /// The address of master `index` of the current map (for logs).
  [[nodiscard]] std::string master_address(std::size_t index) const;
  /// Sends `count` commands already in the wire protocol to master `index` in one
  /// round trip, and reads their replies. `sent` is false when nothing could be sent
  /// (the master refused the connection or is resting after a refusal): the replies
  /// are IO errors then, and the map has been reloaded. The caller reads MOVED and ASK
  /// in the replies itself, and tells the map with learn().
  std::vector<value> pipeline_encoded_to(std::size_t index, std::string_view commands,
                                         std::size_t count, bool& sent);
  /// pipeline_encoded_to() in two halves, so that every master works on its pipeline
  /// at once: write each master its commands, then read each one's replies. False with
  /// `error` set ("IO ...") when they could not be written (`sent` as above); there is
  /// nothing to receive from that master then. Neither half reloads the map, so the
  /// indices of one round hold until its replies are read: the caller gives the
  /// errors to learn() afterwards.
  bool send_encoded_to(std::size_t index, std::string_view commands, std::string& error,
                       bool& sent);
  /// Reads the `count` replies of what send_encoded_to() wrote to master `index`.
  std::vector<value> receive_from(std::size_t index, std::size_t count);
  /// After a reply from pipeline_encoded_to(): a MOVED updates the slot's owner; an IO
  /// error reloads the map, so that a promoted replica is found.
  void learn(const value& reply);
  /// Grows each time the map is reloaded, which renumbers the masters: an index taken
  /// from master_of() holds only while it stays the same.
  [[nodiscard]] std::uint64_t map_generation() const noexcept { return generation_; }

 private:
  bool refresh(std::string& error);
  connection& node(std::size_t index);
  std::optional<std::size_t> target_of(std::span<const std::string_view> argv, std::uint16_t& slot,
                                       bool& keyed);
  value send_to_slot(std::uint16_t slot, std::span<const std::string_view> argv);
  value send_to(std::size_t index, std::span<const std::string_view> argv, bool& sent);
  value follow_ask(const redirect& r, std::span<const std::string_view> argv);
  value to_every_master(std::span<const std::string_view> argv);

  connection::options opts_;
  std::optional<slot_table> table_;
  /// Connects to master `index` unless it refused a connection less than
  /// `rest_after_refusal` ago; false with `error` then or when the connect fails.
  bool reach(std::size_t index, std::string& error);

  std::uint64_t generation_ = 0;
  std::vector<std::unique_ptr<connection>> nodes_;  ///< Parallel to table_->masters.
  std::size_t last_ = 0;                            ///< Master of the last keyed command.
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
