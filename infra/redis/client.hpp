#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infra/redis/redis_url.hpp"
#include "infra/redis/redis_value.hpp"

namespace tgw::infra::redis {

/// How a client reaches its servers: the same for every kind of deployment.
struct client_options {
  endpoint where;
  std::chrono::milliseconds connect_timeout{2000};
  /// Socket read/write timeout. A blocking command (BLMOVE, XREADGROUP BLOCK) must use
  /// a block time shorter than this.
  std::chrono::milliseconds io_timeout{2000};
  std::string client_name;
};

/// A blocking Redis client, whatever stands behind the endpoint: one server
/// (direct_client), a master that sentinels name (sentinel_client) or a cluster
/// (cluster_client). The three sit side by side on top of server_link, one hiredis
/// context each; `connection` picks one by the URL's scheme.
///
/// A client belongs to one thread: a detached actor or a dedicated worker, never a
/// scheduler or io thread. Failures never throw: a command that could not run returns
/// an error value whose `failure` says so (unreachable, timeout), and the next command
/// connects afresh.
///
/// Every client serves every call here. A single server is a deployment of one master
/// (index 0) that owns every slot, so a caller that routes its own pipelines by master
/// (the telemetry store) runs the same code on both.
class client {
 public:
  virtual ~client() = default;

  /// Connects unless connected (on a cluster: loads the slot map). False with `error`
  /// set when the server is unreachable or refuses the login.
  virtual bool ensure_connected(std::string& error) = 0;
  [[nodiscard]] virtual bool connected() const noexcept = 0;
  virtual void disconnect() noexcept = 0;

  /// Runs one command. Connects first if needed.
  virtual value command(std::span<const std::string_view> argv) = 0;
  /// Sends all commands and reads all replies, one round trip per server.
  virtual std::vector<value> pipeline(const std::vector<std::vector<std::string>>& commands) = 0;

  /// Masters to visit for a command whose state is a node's own (SCAN): 1, or on a
  /// cluster its masters (loading the map first; 0 when it cannot be loaded).
  virtual std::size_t master_count() = 0;
  /// Runs `argv` on master `index` (0 on a single server: the server itself).
  virtual value command_on_master(std::size_t index, std::span<const std::string_view> argv) = 0;

  /// For a caller that builds each master's pipeline itself: the master that serves
  /// `slot` in the current map (loading it first), or nullopt when none does. A single
  /// server: 0.
  virtual std::optional<std::size_t> master_of(std::uint16_t slot) = 0;
  /// Writes `commands`, already in the wire protocol (see resp_writer), to master
  /// `index`, without reading the replies: a thread writes every master its commands,
  /// then reads each one's replies (receive_from), and the masters work at once. False
  /// with `failed` set (a transport failure) when they could not be written; the
  /// connection is dropped then, and there is nothing to receive. `sent` is false when
  /// nothing at all left (the master refused the connection, or rests after a refusal),
  /// so sending again is safe; a single server reports every attempt as sent, as a
  /// partial write may have run. No call here reloads a cluster's map, so the indices of
  /// one round hold until its replies are read: the caller gives the errors to learn()
  /// afterwards.
  virtual bool send_encoded_to(std::size_t index, std::string_view commands, value& failed,
                               bool& sent) = 0;
  /// Reads the `count` replies of what send_encoded_to() wrote to master `index`.
  virtual std::vector<value> receive_from(std::size_t index, std::size_t count) = 0;
  /// After a reply of a routed pipeline: on a cluster a MOVED updates the slot's owner
  /// and a transport failure reloads the map, so that a promoted replica is found.
  /// Nothing to learn for a single server.
  virtual void learn(const value& reply) = 0;
  /// Grows each time a cluster's map is reloaded, which renumbers the masters: an index
  /// taken from master_of() holds only while it stays the same. 0 for a single server.
  [[nodiscard]] virtual std::uint64_t map_generation() const noexcept = 0;

  /// The server this client talks to, or last talked to, for messages.
  [[nodiscard]] virtual std::string server() const = 0;
};

}  // namespace tgw::infra::redis
