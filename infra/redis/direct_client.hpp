#pragma once

#include "infra/redis/single_server_client.hpp"

namespace tgw::infra::redis {

/// A client of one server at a fixed address (redis://, unix://). A server demoted to
/// replica under it (a managed Redis whose primary name moved) is left on its first
/// -READONLY, and the next command connects to the name again.
class direct_client final : public single_server_client {
 public:
  explicit direct_client(client_options opts)
      : single_server_client(opts), where_(std::move(opts.where)) {}

  bool ensure_connected(std::string& error) override {
    return link_.is_open() || link_.open(where_, where_.describe(), error);
  }
  [[nodiscard]] std::string server() const override { return where_.describe(); }

 private:
  endpoint where_;
};

}  // namespace tgw::infra::redis
