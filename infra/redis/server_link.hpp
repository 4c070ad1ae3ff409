#pragma once

#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infra/redis/redis_url.hpp"
#include "infra/redis/redis_value.hpp"

struct redisContext;

namespace tgw::infra::redis {

/// One hiredis context to one server: what every client is made of. It connects only
/// when told to (open), to the address it is given, so finding the server (a fixed
/// address, the sentinels' answer, a cluster's slot map) stays with the client.
///
/// Each open makes a new context rather than calling redisReconnect, because hiredis
/// 0.14 drops the socket timeouts on reconnect; timeouts, AUTH, SELECT and the client
/// name are applied every time. A `-READONLY` reply (the server was demoted under us)
/// closes the link like an IO error, so that the client looks for the master again.
class server_link {
 public:
  struct settings {
    std::chrono::milliseconds connect_timeout{2000};
    std::chrono::milliseconds io_timeout{2000};
    std::string client_name;
  };

  explicit server_link(settings s) : settings_(std::move(s)) {}
  ~server_link() { close(); }
  server_link(const server_link&) = delete;
  server_link& operator=(const server_link&) = delete;

  /// Connects to `target` (its host and port or socket, login and database), closing
  /// any previous context. `label` names the server in `error`.
  bool open(const endpoint& target, std::string_view label, std::string& error);
  [[nodiscard]] bool is_open() const noexcept { return ctx_ != nullptr; }
  void close() noexcept;

  /// On an open link only; a closed one answers "IO not connected".
  value command(std::span<const std::string_view> argv);
  value command(std::initializer_list<std::string_view> argv) {
    return command(std::span<const std::string_view>(argv.begin(), argv.size()));
  }
  std::vector<value> pipeline(const std::vector<std::vector<std::string>>& commands);
  bool send_encoded(std::string_view commands, std::string& error);
  std::vector<value> receive_replies(std::size_t count);

 private:
  value io_failure();
  void close_if_demoted(const value& reply) noexcept;

  settings settings_;
  redisContext* ctx_ = nullptr;
};

}  // namespace tgw::infra::redis
