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
  std::vector<value> pipeline_encoded(std::string_view commands, std::size_t count) override;
  bool send_encoded(std::string_view commands, std::string& error) override;
  std::vector<value> receive_replies(std::size_t count) override {
    return link_.receive_replies(count);
  }

  std::size_t master_count() override { return 1; }
  value command_on_master(std::size_t, std::span<const std::string_view> argv) override {
    return command(argv);
  }

 protected:
  explicit single_server_client(const client_options& opts)
      : link_({opts.connect_timeout, opts.io_timeout, opts.client_name}) {}

  server_link link_;
};

}  // namespace tgw::infra::redis
