#pragma once

#include <cstdint>
#include <memory>

#include "infra/redis/single_server_client.hpp"

namespace tgw::infra::redis {

class sentinel_watch;

/// A client of the master that sentinels name (redis+sentinel://). Every connect asks
/// the sentinels for the master and checks with ROLE that the server found is one: it
/// never writes to a replica. It reconnects when the sentinels announce a failover of
/// its master (`+switch-master`, see sentinel_watch), and on a -READONLY reply.
class sentinel_client final : public single_server_client {
 public:
  explicit sentinel_client(client_options opts);
  ~sentinel_client() override;

  bool ensure_connected(std::string& error) override;
  [[nodiscard]] std::string server() const override;

 private:
  bool find_master(endpoint& target, std::string& error);

  client_options opts_;
  host_port master_;                       ///< The master of the last connect.
  std::shared_ptr<sentinel_watch> watch_;  ///< Failovers announced.
  std::uint64_t epoch_ = 0;                ///< watch_'s count when this one connected.
};

}  // namespace tgw::infra::redis
