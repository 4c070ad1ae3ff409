#pragma once

#include "infra/redis/client.hpp"
#include "infra/redis/server_link.hpp"

namespace tgw::infra::redis {

/// What direct_client and sentinel_client share: one server at a time over one link.
/// They differ only in how they find and check the server when they connect
/// (ensure_connected); every command connects first if needed.
class single_server_client : public client {
 public:
  [[nodiscard]] bool connected() const noexcept override { return link_.is_open(); }
  void disconnect() noexcept override { link_.close(); }

  value command(std::span<const std::string_view> argv) override;
  std::vector<value> pipeline(const std::vector<std::vector<std::string>>& commands) override;

  std::size_t master_count() override { return 1; }
  value command_on_master(std::size_t, std::span<const std::string_view> argv) override {
    return command(argv);
  }

  /// The one server is master 0, of every slot; its map never changes.
  std::optional<std::size_t> master_of(std::uint16_t) override { return 0; }
  bool send_encoded_to(std::size_t index, std::string_view commands, value& failed,
                       bool& sent) override;
  std::vector<value> receive_from(std::size_t, std::size_t count) override {
    return link_.receive_replies(count);
  }
  void learn(const value&) override {}
  [[nodiscard]] std::uint64_t map_generation() const noexcept override { return 0; }

 protected:
  explicit single_server_client(const client_options& opts)
      : link_({opts.connect_timeout, opts.io_timeout, opts.client_name}) {}

  server_link link_;
};

}  // namespace tgw::infra::redis
