#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "infra/redis/connection.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/redis_tls.hpp"

namespace tgw::test {

/// A replicated Redis on loopback: one master, `replicas` replicas and three sentinels
/// (quorum 2, down-after 1000 ms), each a real process on a free port, started in the
/// constructor (which returns once the sentinels see every replica and each other) and
/// killed in the destructor. Data nodes keep no files: what a failover keeps is what
/// replication carried.
class redis_ha {
 public:
  static constexpr const char* master_name = "tgw";

  /// `tls`: every node and sentinel speaks TLS only (redis_tls_files), replication too.
  explicit redis_ha(int replicas = 1, bool tls = over_tls);
  ~redis_ha();
  redis_ha(const redis_ha&) = delete;
  redis_ha& operator=(const redis_ha&) = delete;

  /// redis+sentinel://127.0.0.1:S1,127.0.0.1:S2,127.0.0.1:S3/tgw (rediss+sentinel with
  /// TLS; the --redis-tls-* flags are redis_tls_files::shared().flags()).
  [[nodiscard]] std::string url() const;
  [[nodiscard]] infra::redis::endpoint endpoint() const;
  /// The data node ports, the first one the initial master.
  [[nodiscard]] const std::vector<std::uint16_t>& data_ports() const noexcept {
    return data_ports_;
  }
  [[nodiscard]] const std::vector<std::uint16_t>& sentinel_ports() const noexcept {
    return sentinel_ports_;
  }
  /// The master's port as the sentinels say now; 0 if none answers.
  [[nodiscard]] std::uint16_t master_port() const;
  /// Waits until the sentinels name a master other than `old_port` and that server
  /// says it is a master. False at the deadline.
  bool wait_for_new_master(std::uint16_t old_port, std::chrono::milliseconds deadline);
  /// Waits until the server on `port` is a replica whose link to its master is up.
  bool wait_for_replica(std::uint16_t port, std::chrono::milliseconds deadline);

  /// SIGKILL, SIGSTOP and SIGCONT of the node on `port` (data node or sentinel);
  /// restart() starts a killed node again on its port: a data node as a master with
  /// empty data (the sentinels turn it into a replica of the current master), a
  /// sentinel with the configuration it last wrote.
  void kill(std::uint16_t port);
  void pause(std::uint16_t port);
  void resume(std::uint16_t port);
  void restart(std::uint16_t port);

  /// A direct connection to one node (no sentinel).
  [[nodiscard]] infra::redis::connection connect(std::uint16_t port) const;

 private:
  struct node;
  node& find(std::uint16_t port);
  void start_data_node(node& n, std::uint16_t replica_of);
  void start_sentinel(node& n);

  std::string dir_;
  bool tls_ = false;
  std::vector<std::uint16_t> data_ports_;
  std::vector<std::uint16_t> sentinel_ports_;
  std::vector<std::unique_ptr<node>> nodes_;
};

}  // namespace tgw::test
