#pragma once

#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infra/redis/client.hpp"

namespace tgw::infra::redis {

/// The client an endpoint's scheme calls for, and what every store holds: redis:// and
/// unix:// a direct_client, redis+sentinel:// a sentinel_client, redis+cluster:// a
/// cluster_client (see client.hpp for what they share). It belongs to one thread:
/// a detached actor or a dedicated worker, never a scheduler or io thread.
///
/// Failures never throw: a command on a broken connection returns an error value whose
/// `failure` is unreachable or timeout, and the next command connects afresh. In every
/// mode a `-READONLY` reply (the server was demoted under us) drops the connection like
/// a transport failure, so the next command finds the new master.
class connection {
 public:
  using options = client_options;

  explicit connection(options opts);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// Connects unless connected. False with `error` set when the server is unreachable
  /// or refuses the login.
  bool ensure_connected(std::string& error) { return client_->ensure_connected(error); }
  [[nodiscard]] bool connected() const noexcept { return client_->connected(); }
  void disconnect() noexcept { client_->disconnect(); }

  /// Runs one command. Connects first if needed.
  value command(std::span<const std::string_view> argv) { return client_->command(argv); }
  value command(std::initializer_list<std::string_view> argv) {
    return command(std::span<const std::string_view>(argv.begin(), argv.size()));
  }
  value command(const std::vector<std::string>& argv);

  /// Sends all commands and reads all replies: one round trip (per master).
  std::vector<value> pipeline(const std::vector<std::vector<std::string>>& commands) {
    return client_->pipeline(commands);
  }
  /// Masters to visit for a command whose state is a node's own (SCAN).
  std::size_t master_count() { return client_->master_count(); }
  /// Runs `argv` on master `index` (0 on a single node: the server itself).
  value command_on_master(std::size_t index, std::span<const std::string_view> argv) {
    return client_->command_on_master(index, argv);
  }
  value command_on_master(std::size_t index, std::initializer_list<std::string_view> argv) {
    return command_on_master(index, std::span<const std::string_view>(argv.begin(), argv.size()));
  }

  /// Pipelines routed by master, for a caller that groups its commands by master itself
  /// (client::master_of and what follows it). A single server is master 0 of every slot.
  std::optional<std::size_t> master_of(std::uint16_t slot) { return client_->master_of(slot); }
  bool send_encoded_to(std::size_t index, std::string_view commands, value& failed, bool& sent) {
    return client_->send_encoded_to(index, commands, failed, sent);
  }
  std::vector<value> receive_from(std::size_t index, std::size_t count) {
    return client_->receive_from(index, count);
  }
  void learn(const value& reply) { client_->learn(reply); }
  [[nodiscard]] std::uint64_t map_generation() const noexcept { return client_->map_generation(); }
  /// send_encoded_to() then receive_from(): `count` commands to master `index` in one
  /// round trip. When they could not be written: `count` copies of the failure, and a
  /// cluster whose master took nothing (`sent` false) reloads its map.
  std::vector<value> pipeline_encoded_to(std::size_t index, std::string_view commands,
                                         std::size_t count, bool& sent);

  [[nodiscard]] const options& settings() const noexcept { return opts_; }
  /// The server this connection talks to, or last talked to: the endpoint itself, or
  /// in sentinel mode the master the sentinels named.
  [[nodiscard]] std::string server() const { return client_->server(); }

 private:
  options opts_;
  std::unique_ptr<client> client_;
};

/// The client for `opts.where`'s kind of deployment.
[[nodiscard]] std::unique_ptr<client> make_client(client_options opts);

}  // namespace tgw::infra::redis
