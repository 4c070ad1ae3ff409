#pragma once

#include <memory>
#include <string>

#include "infra/redis/connection.hpp"
#include "infra/redis/key_shards.hpp"
#include "tests/support/redis_cluster.hpp"
#include "tests/support/redis_server.hpp"

namespace tgw::test {

/// The Redis an integration suite runs against. A suite written against this runs
/// twice: in infra_test on a fresh redis-server per test (single-node key names), and,
/// compiled into cluster_test with TGW_TEST_ON_CLUSTER, on a 3+3 Redis Cluster that
/// the binary's tests share (emptied before each test), with hash-tagged key shards.
class redis_backend {
 public:
  /// Shards the cluster variant splits keys into: 4 per master.
  static constexpr std::uint32_t cluster_shards = 12;

  redis_backend() {
#ifdef TGW_TEST_ON_CLUSTER
    shared_cluster().flush();
    shards_ = infra::redis::key_shards::cluster(cluster_shards);
#else
    server_ = std::make_unique<redis_server>();
#endif
  }

  [[nodiscard]] static constexpr bool on_cluster() noexcept {
#ifdef TGW_TEST_ON_CLUSTER
    return true;
#else
    return false;
#endif
  }
  [[nodiscard]] infra::redis::endpoint endpoint() const {
    return server_ ? server_->endpoint() : shared_cluster().endpoint();
  }
  [[nodiscard]] infra::redis::connection connect() const {
    return infra::redis::connection({endpoint(), std::chrono::milliseconds{1000},
                                     std::chrono::milliseconds{5000}, "test-check"});
  }
  /// How the stores under test split their keys.
  [[nodiscard]] const infra::redis::key_shards& shards() const noexcept {
    return shards_;
  }
  /// The single-node server (nullptr on a cluster): for outage tests.
  [[nodiscard]] redis_server* server() const noexcept {
    return server_.get();
  }

 private:
  static redis_cluster& shared_cluster() {
    static redis_cluster cluster;
    return cluster;
  }

  std::unique_ptr<redis_server> server_;
  infra::redis::key_shards shards_;
};

}  // namespace tgw::test
