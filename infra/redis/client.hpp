#pragma once

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infra/redis/redis_url.hpp"
#include "infra/redis/redis_value.hpp"

namespace tgw::infra::redis {

class cluster_client;

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
/// an error value whose text starts with "IO", and the next command connects afresh.
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
  /// The same for `count` commands already in the wire protocol (see resp_writer), to
  /// one server.
  virtual std::vector<value> pipeline_encoded(std::string_view commands, std::size_t count) = 0;
  /// pipeline_encoded() in two halves, so that one thread can have several servers work
  /// at once: write every server its commands, then read each one's replies. False with
  /// `error` set ("IO ...") when the commands could not be written; the connection is
  /// dropped then, and there is nothing to receive.
  virtual bool send_encoded(std::string_view commands, std::string& error) = 0;
  /// Reads the `count` replies of the commands send_encoded() wrote.
  virtual std::vector<value> receive_replies(std::size_t count) = 0;

  /// Masters to visit for a command whose state is a node's own (SCAN): 1, or on a
  /// cluster its masters (loading the map first; 0 when it cannot be loaded).
  virtual std::size_t master_count() = 0;
  /// Runs `argv` on master `index` (0 on a single server: the server itself).
  virtual value command_on_master(std::size_t index, std::span<const std::string_view> argv) = 0;

  /// The server this client talks to, or last talked to, for messages.
  [[nodiscard]] virtual std::string server() const = 0;
  /// The cluster client, for a caller that routes its own pipelines by master;
  /// nullptr for the others.
  [[nodiscard]] virtual cluster_client* cluster() noexcept { return nullptr; }
};

}  // namespace tgw::infra::redis
