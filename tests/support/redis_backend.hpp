#pragma once

#include <memory>
#include <string>
#include <vector>

#include "infra/redis/connection.hpp"
#include "infra/redis/key_shards.hpp"
#include "tests/support/redis_cluster.hpp"
#include "tests/support/redis_server.hpp"

namespace tgw::test {

/// The Redis an integration suite runs against. A suite written against this runs
/// twice: in infra_test on a fresh redis-server per test (single-node key names), and,
/// compiled into cluster_test with TGW_TEST_ON_CLUSTER, on a 3+3 Redis Cluster that
/// the binary's tests share (emptied before each test), with hash-tagged key shards.
/// Compiled with TGW_TEST_OVER_TLS (the *_tls_test binaries), the server speaks TLS
/// only: url() is rediss://, and every tgw process the suite starts finds the CA in
/// TGW_REDIS_TLS_CA (redis_tls.hpp).
class redis_backend {
 public:
  /// Shards the cluster variant splits keys into: 4 per master.
  static constexpr std::uint32_t cluster_shards = 12;

  /// `durable`: the single node fsyncs every write (see redis_server).
  explicit redis_backend(bool durable = false) {
#ifdef TGW_TEST_ON_CLUSTER
    (void)durable;
    shared_cluster().flush();
    shards_ = infra::redis::key_shards::cluster(cluster_shards);
#else
    server_ = std::make_unique<redis_server>(durable);
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
  /// The --redis URL of a tgw process.
  [[nodiscard]] std::string url() const {
    return server_ ? server_->url() : shared_cluster().url();
  }
  [[nodiscard]] infra::redis::connection connect() const {
    return infra::redis::connection({endpoint(), std::chrono::milliseconds{1000},
                                     std::chrono::milliseconds{5000}, "test-check"});
  }
  /// How the stores under test split their keys. A gateway started on the cluster with
  /// no --telemetry-shards stores the same count (4 per master).
  [[nodiscard]] const infra::redis::key_shards& shards() const noexcept {
    return shards_;
  }
  /// The prefix of the shard `imei`'s keys are in ("" on a single node).
  [[nodiscard]] const std::string& prefix(const std::string& imei) const {
    return shards_.prefix_of(imei);
  }
  /// `name` in every shard: {"name"} on a single node, {"{0.n}name", ...} on a cluster.
  [[nodiscard]] std::vector<std::string> in_every_shard(const std::string& name) const {
    std::vector<std::string> keys;
    for (std::uint32_t s = 0; s < shards_.count(); ++s) keys.push_back(shards_.prefix(s) + name);
    return keys;
  }
  /// The single-node server (nullptr on a cluster): for outage tests.
  [[nodiscard]] redis_server* server() const noexcept {
    return server_.get();
  }
  /// The cluster (on a cluster only): for tests that change its slots.
  [[nodiscard]] static redis_cluster& cluster() {
    return shared_cluster();
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
