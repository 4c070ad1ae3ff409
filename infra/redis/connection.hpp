#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infra/redis/redis_url.hpp"
#include "infra/redis/redis_value.hpp"

struct redisContext;

namespace tgw::infra::redis {

class sentinel_watch;
class cluster_connection;

/// A blocking connection to one Redis server over hiredis. It belongs to one thread:
/// a detached actor or a dedicated worker, never a scheduler or io thread.
///
/// Failures never throw: a command on a broken connection returns an error value
/// whose text starts with "IO", and the next command connects afresh. Each connect
/// makes a new context rather than calling redisReconnect, because hiredis 0.14
/// drops the socket timeouts on reconnect; timeouts, AUTH, SELECT and the client name
/// are applied every time.
///
/// With a redis+sentinel:// endpoint every connect asks the sentinels for the master
/// and checks with ROLE that the server found is a master: a connection never writes
/// to a replica, and it reconnects when the sentinels announce a failover of its master
/// (`+switch-master`, see sentinel_watch). In every mode a `-READONLY` reply (the server was
/// demoted under us) drops the connection like an IO error, so the next command finds the new
/// master.
///
/// With a redis+cluster:// endpoint it is a cluster_connection underneath: each command
/// goes to the master of its key's slot (see cluster_connection.hpp).
class connection {
 public:
  struct options {
    endpoint where;
    std::chrono::milliseconds connect_timeout{2000};
    /// Socket read/write timeout. A blocking command (BLMOVE, XREADGROUP BLOCK) must
    /// use a block time shorter than this.
    std::chrono::milliseconds io_timeout{2000};
    std::string client_name;
  };

  explicit connection(options opts);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// Connects unless connected. False with `error` set when the server is unreachable
  /// or refuses the login.
  bool ensure_connected(std::string& error);
  [[nodiscard]] bool connected() const noexcept;
  void disconnect() noexcept;

  /// Runs one command. Connects first if needed.
  value command(std::span<const std::string_view> argv);
  value command(std::initializer_list<std::string_view> argv) {
    return command(std::span<const std::string_view>(argv.begin(), argv.size()));
  }
  value command(const std::vector<std::string>& argv);

  /// Sends all commands in one write and reads all replies: one round trip.
  std::vector<value> pipeline(const std::vector<std::vector<std::string>>& commands);
  /// The same for `count` commands already in the wire protocol (see resp_writer).
  std::vector<value> pipeline_encoded(std::string_view commands, std::size_t count);
  /// pipeline_encoded() in two halves, so that one thread can have several servers work
  /// at once: write every server its commands, then read each one's replies. False with
  /// `error` set ("IO ...") when the commands could not be written; the connection is
  /// dropped then, and there is nothing to receive.
  bool send_encoded(std::string_view commands, std::string& error);
  /// Reads the `count` replies of the commands send_encoded() wrote.
  std::vector<value> receive_replies(std::size_t count) { return read_replies(count); }

  /// Masters to visit for a command whose state is a node's own (SCAN): 1, or on a
  /// cluster its masters (loading the map first; 0 when it cannot be loaded).
  std::size_t master_count();
  /// Runs `argv` on master `index` (0 on a single node: the server itself).
  value command_on_master(std::size_t index, std::span<const std::string_view> argv);
  value command_on_master(std::size_t index, std::initializer_list<std::string_view> argv) {
    return command_on_master(index, std::span<const std::string_view>(argv.begin(), argv.size()));
  }

  /// The cluster client underneath a redis+cluster:// connection, for a caller that
  /// routes its own pipelines by master; nullptr in the other modes.
  [[nodiscard]] cluster_connection* cluster() noexcept { return cluster_.get(); }

  [[nodiscard]] const options& settings() const noexcept { return opts_; }
  /// The server this connection talks to, or last talked to: the endpoint itself, or
  /// in sentinel mode the master the sentinels named.
  [[nodiscard]] std::string server() const;

 private:
  bool connect_to(const endpoint& target, std::string& error);
  bool find_master(endpoint& target, std::string& error);
  void drop_if_demoted(const value& reply) noexcept;
  void drop_if_switched() noexcept;
  value run(int argc, const char** argv, const std::size_t* lengths);
  value io_failure();
  std::vector<value> read_replies(std::size_t count);

  options opts_;
  redisContext* ctx_ = nullptr;
  host_port master_;                             ///< Sentinel mode: the master of the last connect.
  std::shared_ptr<sentinel_watch> watch_;        ///< Sentinel mode: failovers announced.
  std::uint64_t epoch_ = 0;                      ///< watch_'s count when this one connected.
  std::unique_ptr<cluster_connection> cluster_;  ///< Cluster mode: does all the work.
};

}  // namespace tgw::infra::redis
