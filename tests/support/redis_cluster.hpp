#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "infra/redis/connection.hpp"
#include "tests/support/redis_tls.hpp"

namespace tgw::test {

/// A throw-away Redis Cluster on loopback: `masters` masters with one replica each,
/// each a redis-server on a free port (and its bus port, +10000), joined with
/// `redis-cli --cluster create`, started in the constructor and stopped (SIGKILL) in
/// the destructor. cluster-node-timeout is short, so a killed master's replica takes
/// over within a few seconds.
class redis_cluster {
 public:
  /// `tls`: every node speaks TLS only, its bus (tls-cluster) and replication too.
  explicit redis_cluster(std::size_t masters = 3, bool tls = over_tls);
  ~redis_cluster();
  redis_cluster(const redis_cluster&) = delete;
  redis_cluster& operator=(const redis_cluster&) = delete;

  /// redis+cluster://127.0.0.1:P1,... naming the nodes that started as masters.
  [[nodiscard]] std::string url() const;
  [[nodiscard]] infra::redis::endpoint endpoint() const;
  /// Every node's port, masters first (as created; a failover changes roles).
  [[nodiscard]] const std::vector<std::uint16_t>& ports() const noexcept { return ports_; }
  /// A direct connection to the node on `port` (no cluster routing).
  [[nodiscard]] infra::redis::connection node(std::uint16_t port) const;
  /// The --redis-tls-* flags a tgw process needs for url(); empty for a plain cluster.
  [[nodiscard]] std::string tls_flags() const;
  /// The port of the master that serves `slot` now, as the first live node says.
  [[nodiscard]] std::uint16_t master_of(std::uint16_t slot) const;
  /// Kills the node on `port` (SIGKILL).
  void kill(std::uint16_t port);
  /// Empties every master (FLUSHALL; the Function libraries stay) and waits until
  /// the replicas have followed, so that one cluster can serve test after test.
  void flush() const;
  /// True when every live node says cluster_state:ok.
  [[nodiscard]] bool healthy() const;

 private:
  /// Starts the nodes and joins them; false with `why` when a step failed.
  bool start(std::string& why);
  void stop_all() noexcept;

  std::vector<std::uint16_t> ports_;
  std::vector<int> pids_;
  std::string dir_;
  std::size_t masters_;
  bool tls_ = false;
};

/// While it lives, `slot` has no master: its master gives it up (CLUSTER DELSLOTS), and
/// commands for it get CLUSTERDOWN. Destroyed (or serve_again()), the master takes it
/// back, so that a shared cluster serves the next test whole.
class unserved_slot {
 public:
  unserved_slot(const redis_cluster& cluster, std::uint16_t slot);
  ~unserved_slot() { serve_again(); }
  unserved_slot(const unserved_slot&) = delete;
  unserved_slot& operator=(const unserved_slot&) = delete;

  /// Whether the master gave the slot up.
  [[nodiscard]] bool taken() const noexcept { return taken_; }
  /// Its master takes the slot back; true when it did (or had it).
  bool serve_again();

 private:
  const redis_cluster& cluster_;
  std::uint16_t owner_ = 0;
  std::uint16_t slot_ = 0;
  bool taken_ = false;
};

}  // namespace tgw::test
